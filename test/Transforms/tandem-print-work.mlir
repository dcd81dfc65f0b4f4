// The work and device contracts as the cost model will see them.
// RUN: tandem-opt %s --tandem-print-work -o /dev/null | FileCheck %s
// The pass leaves the IR unchanged.
// RUN: tandem-opt %s --tandem-print-work | FileCheck %s --check-prefix=IR

// CHECK-LABEL: @main
// CHECK-NEXT: # op location flops bytes_read bytes_written result_bytes devices host_operands
// CHECK-NEXT: 0 tandem.weight {{.*}}tandem-print-work.mlir:[[@LINE+11]]:8 0 0 0 4194304 cpu,gpu -
// CHECK-NEXT: 1 tandem.matmul {{.*}}tandem-print-work.mlir:[[@LINE+11]]:8 268435456 4718592 524288 524288 cpu,gpu -
// CHECK-NEXT: 2 tandem.shape {{.*}} 0 0 16 16 cpu -
// CHECK-NEXT: 3 tandem.fill {{.*}} 0 0 16 16 cpu,gpu -
// CHECK-NEXT: 4 tandem.sub {{.*}} 2 32 16 16 cpu,gpu -
// CHECK-NEXT: 5 tandem.dynamic_slice {{.*}} 0 16400 16384 16384 cpu,gpu 1
// CHECK-NEXT: 6 tandem.relu {{.*}} 4096 16384 16384 16384 cpu,gpu -
// CHECK-NEXT: total: 7 ops, 268439554 flops (0.268 GFLOP), 4751408 bytes read (4.53 MiB), 557104 bytes written (544.05 KiB), weights 4194304 bytes (4.00 MiB)
// IR: tandem.dynamic_slice
func.func @main(%x: tensor<128x1024xf32>) -> tensor<64x64xf32> {
  // User story 2: offsets computed from a shape feed a host operand.
  %w = tandem.weight "w" : tensor<1024x1024xf32>
  %y = tandem.matmul %x, %w : (tensor<128x1024xf32>, tensor<1024x1024xf32>) -> tensor<128x1024xf32>
  %s = tandem.shape %y : tensor<128x1024xf32> -> tensor<2xi64>
  %c = tandem.fill(64 : i64) : tensor<2xi64>
  %o = tandem.sub %s, %c : tensor<2xi64>
  %win = tandem.dynamic_slice %y, %o {sizes = array<i64: 64, 64>} : (tensor<128x1024xf32>, tensor<2xi64>) -> tensor<64x64xf32>
  %r = tandem.relu %win : tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
