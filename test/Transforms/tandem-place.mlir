// The placement pass on small graphs: pins, device support, strategies.
// RUN: tandem-opt %s -split-input-file --tandem-place="device-profile=h200" | FileCheck %s

// A large GEMM goes to the GPU; the tiny op after it follows rather than
// pay a copy back; the argument and result cross the link once each.
// CHECK-LABEL: func.func @main
// CHECK-SAME: tandem.gpu_memory_budget = 150754820096 : i64
// CHECK: tandem.weight "w" {tandem.device = #tandem.device<gpu>}
// CHECK: tandem.matmul {{.*}}tandem.device = #tandem.device<gpu>
// CHECK: tandem.relu {{.*}}tandem.device = #tandem.device<gpu>
func.func @main(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %w = tandem.weight "w" : tensor<1024x1024xf32>
  %y = tandem.matmul %x, %w : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = tandem.relu %y : tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// -----

// Tiny work stays on the CPU: a launch costs more than the op.
// CHECK-LABEL: func.func @main
// CHECK: tandem.add {{.*}}tandem.device = #tandem.device<cpu>
// CHECK: tandem.mul {{.*}}tandem.device = #tandem.device<cpu>
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = tandem.add %x, %x : tensor<16xf32>
  %m = tandem.mul %a, %a : tensor<16xf32>
  return %m : tensor<16xf32>
}

// -----

// A pin is honoured even where the other device is faster.
// CHECK-LABEL: func.func @main
// CHECK: tandem.matmul {{.*}}tandem.device = #tandem.device<cpu>, tandem.pin = #tandem.device<cpu>
func.func @main(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %w = tandem.weight "w" : tensor<1024x1024xf32>
  %y = tandem.matmul %x, %w {tandem.pin = #tandem.device<cpu>} : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}

// -----

// Placement prices the IR it leaves: tandem.shape (CPU-only) of a static
// tensor folds to a constant first, which stays on the host that reads it.
// CHECK-LABEL: func.func @main
// CHECK: tandem.matmul {{.*}}tandem.device = #tandem.device<gpu>
// CHECK-NOT: tandem.shape
// CHECK: arith.constant {tandem.device = #tandem.device<cpu>} dense<1024>
func.func @main(%x: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<2xi64>) {
  %w = tandem.weight "w" : tensor<1024x1024xf32>
  %y = tandem.matmul %x, %w : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %s = tandem.shape %y : tensor<1024x1024xf32> -> tensor<2xi64>
  return %y, %s : tensor<1024x1024xf32>, tensor<2xi64>
}
