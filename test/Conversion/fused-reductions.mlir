// RUN: tandem-opt %s --tandem-fuse --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm | FileCheck %s

// Groups that end in reductions over trailing axes (an RMSNorm's mean of
// squares; the largest magnitude in a row). On the CPU the generated kernel
// computes the reduction's input, a chunk of rows at a time, into the
// runtime's scratch (the pointer it is passed), and the runtime folds each
// row with the reduction's own loop: the kernel itself only stores f32 and
// folds nothing. (fused-ptx.test checks their GPU kernels, which fold.)

// CHECK-LABEL: llvm.func internal @tandem_fused_0(
// CHECK: llvm.fmul %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK-NOT: f64
// CHECK-LABEL: llvm.func internal @tandem_fused_1(
// CHECK: llvm.intr.fabs
// CHECK-NOT: f64
// CHECK: llvm.return
func.func @main(%x: tensor<4x100xf32>) -> (tensor<4x1xf32>, tensor<4xf32>) {
  %sq = tandem.mul %x, %x : tensor<4x100xf32>, tensor<4x100xf32> -> tensor<4x100xf32>
  %m = tandem.reduce_mean %sq {axes = array<i64: -1>, keepdims = true} : tensor<4x100xf32> -> tensor<4x1xf32>
  %a = tandem.abs %x : tensor<4x100xf32>
  %mx = tandem.reduce_max %a {axes = array<i64: 1>} : tensor<4x100xf32> -> tensor<4xf32>
  return %m, %mx : tensor<4x1xf32>, tensor<4xf32>
}
