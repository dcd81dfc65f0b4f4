// RUN: tandem-opt %s --split-input-file --tandem-fuse \
// RUN:   --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm | FileCheck %s

// A group of views alone that transposes a block (attention's keys, NCHW to
// NHWC): the result's rows read the source 37 apart, while rows next to each
// other are next to each other in it. Whole tiles of 8 rows load 8 source
// rows of 8 elements side by side, transpose them in registers (unpack,
// shufps and vperm2f128 patterns) and store 8 result rows; the 5 columns
// past the last multiple of 8 are copied element by element, and the rows of
// a chunk outside whole tiles go through the per-row loop (the lane-by-lane
// inserts).

// CHECK-LABEL: llvm.func internal @tandem_fused_0(
// CHECK: llvm.insertelement
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-COUNT-7: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [0, 8, 1, 9, 4, 12, 5, 13]
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [2, 10, 3, 11, 6, 14, 7, 15]
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [0, 1, 8, 9, 4, 5, 12, 13]
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [2, 3, 10, 11, 6, 7, 14, 15]
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [4, 5, 6, 7, 12, 13, 14, 15]
// CHECK-COUNT-8: llvm.store %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: llvm.return
func.func @main(%arg0: tensor<3x37x16xf32>) -> tensor<2x16x37xf32> {
  %s = tandem.slice %arg0 {starts = array<i64: 1, 0, 0>, limits = array<i64: 3, 37, 16>, strides = array<i64: 1, 1, 1>} : tensor<3x37x16xf32> -> tensor<2x37x16xf32>
  %t = tandem.transpose %s {perm = array<i64: 0, 2, 1>} : tensor<2x37x16xf32> -> tensor<2x16x37xf32>
  return %t : tensor<2x16x37xf32>
}

// -----

// 12 rows side by side: no whole number of tiles in each block, so the
// group is copied row by row only.

// CHECK-LABEL: llvm.func internal @tandem_fused_0(
// CHECK-NOT: llvm.shufflevector
// CHECK: llvm.return
func.func @main(%arg0: tensor<3x37x12xf32>) -> tensor<2x12x37xf32> {
  %s = tandem.slice %arg0 {starts = array<i64: 1, 0, 0>, limits = array<i64: 3, 37, 12>, strides = array<i64: 1, 1, 1>} : tensor<3x37x12xf32> -> tensor<2x37x12xf32>
  %t = tandem.transpose %s {perm = array<i64: 0, 2, 1>} : tensor<2x37x12xf32> -> tensor<2x12x37xf32>
  return %t : tensor<2x12x37xf32>
}
