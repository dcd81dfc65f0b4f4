// RUN: tandem-opt %s -split-input-file --tandem-insert-transfers -verify-diagnostics | FileCheck %s

// One transfer per value per destination, right after the producer; the
// arguments' at the top; results and host operands read on the CPU.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>)
// CHECK-NEXT: %[[XG:.*]] = tandem.transfer %[[X]] : tensor<64x64xf32> to #tandem.device<gpu>
// CHECK-NEXT: %[[A:.*]] = tandem.relu %[[XG]] {tandem.device = #tandem.device<gpu>}
// CHECK-NEXT: %[[AC:.*]] = tandem.transfer %[[A]] : tensor<64x64xf32> to #tandem.device<cpu>
// CHECK-NEXT: %[[B:.*]] = tandem.neg %[[A]] {tandem.device = #tandem.device<gpu>}
// CHECK-NEXT: %[[BC:.*]] = tandem.transfer %[[B]] : tensor<64x64xf32> to #tandem.device<cpu>
// CHECK-NEXT: %[[C:.*]] = tandem.exp %[[AC]] {tandem.device = #tandem.device<cpu>}
// CHECK-NEXT: %[[D:.*]] = tandem.add %[[AC]], %[[C]] {tandem.device = #tandem.device<cpu>}
// CHECK-NEXT: return %[[D]], %[[BC]]
func.func @main(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = tandem.relu %x {tandem.device = #tandem.device<gpu>} : tensor<64x64xf32>
  %b = tandem.neg %a {tandem.device = #tandem.device<gpu>} : tensor<64x64xf32>
  %c = tandem.exp %a {tandem.device = #tandem.device<cpu>} : tensor<64x64xf32>
  %d = tandem.add %a, %c {tandem.device = #tandem.device<cpu>} : tensor<64x64xf32>
  return %d, %b : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A host operand is read on the CPU even by a GPU op.
// CHECK-LABEL: func.func @main
// CHECK: %[[O:.*]] = tandem.sub {{.*}}tandem.device = #tandem.device<gpu>
// CHECK-NEXT: %[[OC:.*]] = tandem.transfer %[[O]] : tensor<2xi64> to #tandem.device<cpu>
// CHECK-NEXT: tandem.dynamic_slice %{{.*}}, %[[OC]] {sizes = array<i64: 4, 4>, tandem.device = #tandem.device<gpu>}
func.func @main(%x: tensor<16x16xf32>, %a: tensor<2xi64>) -> tensor<4x4xf32> {
  %xg = tandem.transfer %x : tensor<16x16xf32> to #tandem.device<gpu>
  %o = tandem.sub %a, %a {tandem.device = #tandem.device<gpu>} : tensor<2xi64>
  %w = tandem.dynamic_slice %xg, %o {sizes = array<i64: 4, 4>, tandem.device = #tandem.device<gpu>} : (tensor<16x16xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  %r = tandem.relu %w {tandem.device = #tandem.device<gpu>} : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A weight resident on the GPU is read by CPU ops from the host's copy of
// the weights file: a CPU clone of the weight, not a transfer.
// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = tandem.weight "w" {tandem.device = #tandem.device<gpu>}
// CHECK-NEXT: %[[WC:.*]] = tandem.weight "w" {tandem.device = #tandem.device<cpu>}
// CHECK: tandem.add %[[WC]], %{{.*}} {tandem.device = #tandem.device<cpu>}
// CHECK-NOT: tandem.transfer {{.*}} to #tandem.device<cpu>
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %w = tandem.weight "w" {tandem.device = #tandem.device<gpu>} : tensor<8xf32>
  %g = tandem.mul %w, %w {tandem.device = #tandem.device<gpu>} : tensor<8xf32>
  %c = tandem.add %w, %x {tandem.device = #tandem.device<cpu>} : tensor<8xf32>
  return %c : tensor<8xf32>
}

// -----

// Unplaced IR is an error, not a guess.
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{is not placed: run --tandem-place first}}
  %a = tandem.relu %x : tensor<8xf32>
  return %a : tensor<8xf32>
}
