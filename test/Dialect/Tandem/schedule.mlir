// A scheduled function prints and parses back, in the custom and in the
// generic form; the verifier checks the schedule of each.
// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s

// CHECK-LABEL: func.func @overlap
// CHECK-SAME: tandem.scheduled
// CHECK: %[[X:.*]] = tandem.transfer %arg0 {{.*}}tandem.queue = #tandem.queue<h2d>
// CHECK: %[[C:.*]] = tandem.relu %arg1 {{.*}}tandem.queue = #tandem.queue<cpu>
// CHECK: tandem.wait <gpu> for %[[X]] : tensor<4xf32>
// CHECK: %[[G:.*]] = tandem.exp %[[X]] {{.*}}tandem.queue = #tandem.queue<gpu>
// CHECK: tandem.wait <d2h> for %[[G]] : tensor<4xf32>
// CHECK: %[[B:.*]] = tandem.transfer %[[G]] {{.*}}tandem.queue = #tandem.queue<d2h>
// CHECK: tandem.wait <cpu> for %[[B]] : tensor<4xf32>
// CHECK: tandem.add %[[C]], %[[B]]
func.func @overlap(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  %x = tandem.transfer %a : tensor<4xf32> to #tandem.device<gpu> {tandem.queue = #tandem.queue<h2d>}
  // The CPU works while the copy and the GPU do.
  %c = tandem.relu %b {tandem.device = #tandem.device<cpu>, tandem.queue = #tandem.queue<cpu>} : tensor<4xf32>
  tandem.wait <gpu> for %x : tensor<4xf32>
  %g = tandem.exp %x {tandem.device = #tandem.device<gpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>
  tandem.wait <d2h> for %g : tensor<4xf32>
  %back = tandem.transfer %g : tensor<4xf32> to #tandem.device<cpu> {tandem.queue = #tandem.queue<d2h>}
  tandem.wait <cpu> for %back : tensor<4xf32>
  %sum = tandem.add %c, %back {tandem.device = #tandem.device<cpu>, tandem.queue = #tandem.queue<cpu>} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// A wait is transitive: the CPU waits for the device-to-host copy, which
// waited for the GPU, which waited for the first copy; so the CPU may read
// the first copy's source buffer's neighbour without a wait of its own, and
// the GPU's second op needs none for its own queue's value.
// CHECK-LABEL: func.func @transitive
func.func @transitive(%a: tensor<4xf32>) -> tensor<4xf32> attributes {tandem.scheduled} {
  %x = tandem.transfer %a : tensor<4xf32> to #tandem.device<gpu> {tandem.queue = #tandem.queue<h2d>}
  tandem.wait <gpu> for %x : tensor<4xf32>
  %g = tandem.exp %x {tandem.device = #tandem.device<gpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>
  %h = tandem.mul %g, %x {tandem.device = #tandem.device<gpu>, tandem.queue = #tandem.queue<gpu>} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  tandem.wait <d2h> for %h : tensor<4xf32>
  %back = tandem.transfer %h : tensor<4xf32> to #tandem.device<cpu> {tandem.queue = #tandem.queue<d2h>}
  return %back : tensor<4xf32>
}
