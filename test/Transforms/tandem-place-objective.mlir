// The objective of --tandem-place: the makespan of the schedule (default)
// or the serial sum. Two independent branches on the h200 profile: two
// large GEMMs, fast on the GPU, and a chain of three smaller ones whose GPU
// time plus its copies beats the CPU's. Minimizing the serial sum puts all
// of it on the GPU; minimizing the makespan runs the small chain on the CPU
// beside the GPU's work, which the bound proves optimal.
// RUN: tandem-opt %s --tandem-placement-pipeline="objective=serial report=%t.serial.json" -o /dev/null
// RUN: %python %S/check_report.py %t.serial.json | FileCheck %s --check-prefix=SERIAL
// RUN: tandem-opt %s --tandem-placement-pipeline="report=%t.makespan.json" -o /dev/null
// RUN: %python %S/check_report.py %t.makespan.json | FileCheck %s --check-prefix=MAKESPAN
// RUN: tandem-opt %s --tandem-placement-pipeline="strategy=exact report=%t.exact.json" -o /dev/null
// RUN: %python %S/check_report.py %t.exact.json | FileCheck %s --check-prefix=EXACT
// RUN: %python -c "import json,sys; s, m = (json.load(open(f))['predicted_us'] for f in sys.argv[1:]); assert m['makespan'] < s['makespan'] and m['serial'] > s['serial'], (s, m); b = json.load(open(sys.argv[2]))['lower_bound_us']; assert abs(m['makespan'] - b) <= 1e-6 * b, (m, b)" %t.serial.json %t.makespan.json
// RUN: not tandem-opt %s --tandem-place="objective=fastest" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// SERIAL: op 4 tandem.matmul gpu
// SERIAL: op 5 tandem.matmul gpu
// SERIAL: op 6 tandem.matmul gpu
// MAKESPAN: op 1 tandem.matmul gpu
// MAKESPAN: op 2 tandem.matmul gpu
// MAKESPAN: op 4 tandem.matmul cpu
// MAKESPAN: op 5 tandem.matmul cpu
// MAKESPAN: op 6 tandem.matmul cpu
// MAKESPAN: schedule: ok
// EXACT: strategy exact
// EXACT: op 4 tandem.matmul cpu
// EXACT: optimal_us set
// BAD: error: unknown objective 'fastest': expected makespan or serial
func.func @main(%a: tensor<1024x1024xf32>, %b: tensor<512x512xf32>) -> (tensor<1024x1024xf32>, tensor<512x512xf32>) {
  %w = tandem.weight "w" : tensor<1024x1024xf32>
  %m = tandem.matmul %a, %w : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %m2 = tandem.matmul %m, %w : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %v = tandem.weight "v" : tensor<512x512xf32>
  %n = tandem.matmul %b, %v : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %n2 = tandem.matmul %n, %v : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %n3 = tandem.matmul %n2, %v : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  return %m2, %n3 : tensor<1024x1024xf32>, tensor<512x512xf32>
}
