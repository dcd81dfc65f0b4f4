// RUN: tandem-opt %s --split-input-file --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm --mlir-print-elementsattrs-with-hex-if-larger=100000 \
// RUN:   | FileCheck %s
// RUN: tandem-opt %s --split-input-file --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm="library=true" | FileCheck %s --check-prefix=LIB
// With a device profile the image records the predicted times.
// RUN: tandem-opt %s --split-input-file --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm="device-profile=host" | FileCheck %s --check-prefix=PREDICTED
// RUN: not tandem-opt %s --split-input-file --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm="device-profile=nosuch" 2>&1 | FileCheck %s --check-prefix=NOPROFILE

// A matmul, a reshape and a softmax: two runtime calls, since a reshape is a
// view of its source's buffer (ViewLikeOpInterface) and runs nothing.
// The image: magic, version 8, 1 input, 1 output, 1 weight, 2 ops, arenas,
// budget, scheduled, the predicted makespan and serial time (0: no profile
// given to the lowering), the generated kernels (none: no fused group) and
// their PTX (-1: none).
// Each op record: word count, kind (OpKinds.def: Matmul = 21, Softmax = 27),
// device, arena offset, name, location, cost family, queue (0: the CPU's), the predicted
// time, the waits (none: one queue), operands (device, producer, tensor),
// result, attributes. The matmul's operands are an input and a weight (producer
// -1); the softmax reads op 0's result through the reshape. Its one
// attribute word is its axis, -1 normalized to 1.

// CHECK-LABEL: llvm.mlir.global internal constant @tandem_model_image
// CHECK-SAME: dense<[6071219827799574861, 11, 1, 1, 1, 2, {{[0-9]+}}, 0, 0, 1, 0, 0, 0, -1, -1,
// CHECK-SAME: 28, 21, 0, 0, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, 0, 0, 2, 0, -1,
// CHECK-SAME: 23, 27, 0, 64, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, 0, 0, 1, 0, 0, 0, 2, 3, 2, 0, 2, 3, 2, 1, 1]>
// PREDICTED-LABEL: llvm.mlir.global internal constant @tandem_model_image
// PREDICTED-SAME: dense<[6071219827799574861, 11, 1, 1, 1, 2, {{[0-9]+}}, 0, 0, 1, [[MAKESPAN:[1-9][0-9]*]], [[MAKESPAN]], 0, -1, -1,
// PREDICTED-SAME: 28, 21, 0, 0, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, {{[1-9][0-9]*}}, 0, 2,
// PREDICTED-SAME: 23, 27, 0, 64, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, {{[1-9][0-9]*}}, 0, 1,
// NOPROFILE: nosuch
// CHECK: @tandem_model_strings("w\00tandem.matmul\00{{[^\\]*}}\00gemm_skinny\00tandem.softmax\00{{[^\\]*}}\00softmax\00")
// CHECK-LABEL: llvm.func internal @tandem_model_run
// CHECK: %[[CPU:.*]] = llvm.call @tandem_rt_arena(%arg0, %{{.*}})
// CHECK: %[[X:.*]] = llvm.call @tandem_rt_input(%arg0,
// CHECK: %[[W:.*]] = llvm.call @tandem_rt_weight(%arg0,
// CHECK: %[[MM:.*]] = llvm.getelementptr %[[CPU]][%{{.*}}]
// CHECK: llvm.store %[[X]]
// CHECK: llvm.store %[[W]]
// CHECK: llvm.call @tandem_rt_execute(%arg0, %{{.*}}, %{{.*}}, %[[MM]])
// The softmax reads the matmul's buffer through the reshape.
// CHECK: %[[SM:.*]] = llvm.getelementptr %[[CPU]][%{{.*}}]
// CHECK: llvm.store %[[MM]]
// CHECK: llvm.call @tandem_rt_execute(%arg0, %{{.*}}, %{{.*}}, %[[SM]])
// CHECK-NOT: @tandem_rt_execute
// CHECK: llvm.call @tandem_rt_output(%arg0, %{{.*}}, %[[SM]])
// CHECK-LABEL: llvm.func @main(%arg0: i32, %arg1: !llvm.ptr) -> i32
// CHECK: llvm.call @tandem_rt_main(%arg0, %arg1,

// LIB-NOT: llvm.func @main(
// LIB: llvm.mlir.global internal @tandem_model_handle()
// LIB: llvm.func @tandem_model_load(
// LIB: llvm.call @tandem_rt_load(
// LIB: llvm.func @tandem_model_infer(
// LIB: llvm.call @tandem_rt_infer(
// LIB: llvm.func @tandem_model_unload()
// LIB: llvm.call @tandem_rt_close(
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %w = tandem.weight "w" : tensor<3x3xf32>
  %y = tandem.matmul %x, %w : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %r = tandem.reshape %y : tensor<2x3xf32> -> tensor<3x2xf32>
  %s = tandem.softmax %r {axis = -1 : i64} : tensor<3x2xf32>
  return %s : tensor<3x2xf32>
}

// -----

// Fixed-layout attributes (ImageAttrs.h): conv2d's Conv2dAttrs (strides,
// padding, dilation, groups, hasBias, and the workspace's offset and bytes:
// none on the CPU) and max_pool2d's Pool2dAttrs (kernel, strides defaulting
// to the kernel, padding).

// CHECK-LABEL: llvm.mlir.global internal constant @tandem_model_image
// CHECK-SAME: 49, 23, 0, 0,
// CHECK-SAME: 10, 2, 2, 1, 1, 2, 2, 2, 1, 0, 0,
// CHECK-SAME: 32, 24, 0, {{[0-9]+}},
// CHECK-SAME: 6, 2, 2, 2, 2, 0, 0]>
func.func @main(%x: tensor<1x4x9x9xf32>) -> tensor<1x6x2x2xf32> {
  %w = tandem.weight "w" : tensor<6x2x3x3xf32>
  %b = tandem.weight "b" : tensor<6xf32>
  %c = tandem.conv2d %x, %w, %b {dilation = array<i64: 2, 2>, groups = 2 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  %p = tandem.max_pool2d %c {kernel = array<i64: 2, 2>} : tensor<1x6x4x4xf32> -> tensor<1x6x2x2xf32>
  return %p : tensor<1x6x2x2xf32>
}

// -----

// Constants: a splat runs as a fill (kind 1; FillAttrs: the value as a
// double's bits, 0.5 is 0x3FE0000000000000), any other dense tensor as a
// constant (kind 47) whose attribute words are its bytes (i32 1 and 2 in one
// word).

// CHECK-LABEL: llvm.mlir.global internal constant @tandem_model_image
// CHECK-SAME: 16, 47, 0, 0, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, 0, 0, 0, 4, 1, 2, 1, 8589934593,
// CHECK-SAME: 25, 2, 0,
// CHECK-SAME: 16, 1, 0, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, 0, 0, 0, 0, 1, 2, 1, 4602678819172646912]>
func.func @main(%x: tensor<2xi32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %h = arith.constant dense<0.5> : tensor<2xf32>
  %c = arith.constant dense<[1, 2]> : tensor<2xi32>
  %s = tandem.add %x, %c : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
  return %h, %s : tensor<2xf32>, tensor<2xi32>
}
