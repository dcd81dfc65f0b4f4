// RUN: tandem-opt %s --tandem-fuse --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm | FileCheck %s
// RUN: tandem-compile %s --emit=llvm -o - | FileCheck %s --check-prefix=LLVM
// RUN: tandem-opt %s --tandem-fuse --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm="vector-math=libmvec-avx2" | FileCheck %s --check-prefix=MVEC
// RUN: not tandem-opt %s --tandem-fuse --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm="vector-math=sse" 2>&1 | FileCheck %s --check-prefix=BAD

// A fused group (bias add, gelu, a row scale) becomes one op of the image,
// of kind Fused (55) with its FusedAttrs (kernel 0; 42 operations per
// element: gelu's libm call and two arithmetic ops; no producer), and one
// generated
// kernel: per row, the inputs' offsets (the bias repeats per row, the scale
// is one value per row), then a loop of 8-float vectors and a scalar tail.
// The header counts one kernel; the table goes to the runtime with the
// image.

// CHECK-LABEL: llvm.func internal @tandem_fused_0(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: llvm.call @erff
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-LABEL: llvm.mlir.global internal constant @tandem_model_image
// CHECK-SAME: dense<[6071219827799574861, 11, 3, 1, 0, 1, {{[0-9]+}}, 0, 0, 1, 0, 0, 1, -1, -1,
// CHECK-SAME: 55, 0,
// CHECK-SAME: 6, 0, 42, -1, 0, -1, 0]>
// CHECK: llvm.func internal @tandem_model_run
// CHECK: llvm.call @tandem_rt_execute
// CHECK: llvm.mlir.global internal constant @tandem_model_kernels() {{.*}} : !llvm.array<1 x ptr>
// CHECK: llvm.mlir.addressof @tandem_fused_0
// CHECK: llvm.call @tandem_rt_main(%arg0, %arg1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})

// LLVM: @tandem_model_kernels = internal constant [1 x ptr] [ptr @tandem_fused_0]
// LLVM: define internal void @tandem_fused_0(ptr %0, ptr %1, i64 %2, i64 %3)
// LLVM: load <8 x float>
// LLVM: call i32 @tandem_rt_main(i32 %0, ptr %1, ptr @tandem_model_image, ptr @tandem_model_strings, ptr @tandem_model_kernels, ptr @tandem_model_run)
// With glibc's vector math library (what tandem-compile asks for on a CPU
// with AVX2), the vector loop calls its 8-lane erf once; the scalar tail
// keeps libm's.
// MVEC: llvm.func @_ZGVdN8v_erff(vector<8xf32>) -> vector<8xf32>
// MVEC-LABEL: llvm.func internal @tandem_fused_0(
// MVEC: llvm.call @_ZGVdN8v_erff(%{{.*}}) : (vector<8xf32>) -> vector<8xf32>
// MVEC: llvm.call @erff(%{{.*}}) : (f32) -> f32
// BAD: error: unknown --vector-math 'sse': 'libmvec-avx2' or '' (libm per lane)

func.func @main(%x: tensor<4x37xf32>, %b: tensor<37xf32>, %c: tensor<4x1xf32>) -> tensor<4x37xf32> {
  %0 = tandem.add %x, %b : tensor<4x37xf32>, tensor<37xf32> -> tensor<4x37xf32>
  %1 = tandem.gelu %0 : tensor<4x37xf32>
  %2 = tandem.mul %1, %c : tensor<4x37xf32>, tensor<4x1xf32> -> tensor<4x37xf32>
  return %2 : tensor<4x37xf32>
}
