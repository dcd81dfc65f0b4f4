// RUN: tandem-opt %s -split-input-file --tandem-schedule -verify-diagnostics

// An op left unplaced cannot be put on a queue.
func.func @unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is not placed: run --tandem-place and --tandem-insert-transfers first}}
  %c = tandem.relu %a : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// A report that --tandem-place did not write is refused by name.
// RUN: echo '[1, 2]' > %t.notreport.json
// RUN: not tandem-opt %s -split-input-file --tandem-schedule="report=%t.notreport.json" 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not tandem-opt %s -split-input-file --tandem-schedule="report=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tandem-opt %s -split-input-file --tandem-schedule="device-profile=nosuch" 2>&1 | FileCheck %s --check-prefix=PROFILE
// REPORT: cannot add the schedule to the placement report '{{.*}}notreport.json': it is not a placement report (no predicted_us or makespan_lower_bound_us)
// MISSING: cannot add the schedule to the placement report '{{.*}}missing.json': No such file or directory (write it with --tandem-place's report option first)
// PROFILE: nosuch
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = tandem.relu %a {tandem.device = #tandem.device<cpu>} : tensor<4xf32>
  return %c : tensor<4xf32>
}
