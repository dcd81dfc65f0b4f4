// RUN: tandem-opt %s -split-input-file --tandem-plan-memory -verify-diagnostics | FileCheck %s

// A chain reuses memory: each buffer dies once the next is written. Host
// weights have no arena buffer; a GPU weight is resident for the whole run.
// Greedy by size: the resident weight first at 0, then the 4 KiB buffers in
// program order; %b reuses %xg's slot, dead by then.
// CHECK-LABEL: func.func @main
// CHECK-SAME: tandem.cpu_arena_bytes = 8192 : i64, tandem.gpu_arena_bytes = 16384 : i64
// CHECK: tandem.transfer %arg0 : tensor<1024xf32> to #tandem.device<gpu> {tandem.offset = 8192 : i64}
// CHECK: tandem.weight "w" {tandem.device = #tandem.device<gpu>, tandem.offset = 0 : i64}
// CHECK: tandem.relu {{.*}}tandem.offset = 12288 : i64
// CHECK: tandem.neg {{.*}}tandem.offset = 8192 : i64
// CHECK: tandem.transfer {{.*}} to #tandem.device<cpu> {tandem.offset = 0 : i64}
// CHECK: tandem.weight "h" {tandem.device = #tandem.device<cpu>} :
// CHECK: tandem.add {{.*}}tandem.offset = 4096 : i64
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %xg = tandem.transfer %x : tensor<1024xf32> to #tandem.device<gpu>
  %w = tandem.weight "w" {tandem.device = #tandem.device<gpu>} : tensor<2048xf32>
  %a = tandem.relu %xg {tandem.device = #tandem.device<gpu>} : tensor<1024xf32>
  %b = tandem.neg %a {tandem.device = #tandem.device<gpu>} : tensor<1024xf32>
  %bc = tandem.transfer %b : tensor<1024xf32> to #tandem.device<cpu>
  %h = tandem.weight "h" {tandem.device = #tandem.device<cpu>} : tensor<1024xf32>
  %c = tandem.add %bc, %h {tandem.device = #tandem.device<cpu>} : tensor<1024xf32>
  return %c : tensor<1024xf32>
}

// -----

// Over the budget: the error names the peak point and what is alive there.
func.func @main(%x: tensor<512x512xf32>) -> tensor<512x512xf32> attributes {tandem.gpu_memory_budget = 1000000 : i64} {
  // expected-note @+1 {{alive at the peak: 1048576 bytes (1.00 MiB) written by 'tandem.transfer'}}
  %xg = tandem.transfer %x : tensor<512x512xf32> to #tandem.device<gpu>
  // expected-note @+1 {{alive at the peak: 1048576 bytes (1.00 MiB) written by 'tandem.relu'}}
  %a = tandem.relu %xg {tandem.device = #tandem.device<gpu>} : tensor<512x512xf32>
  // expected-error @+2 {{the GPU arena needs 3145728 bytes, over the budget of 1000000 bytes; at its peak, at this op, 3145728 bytes (3.00 MiB) in 3 buffers are alive}}
  // expected-note @+1 {{alive at the peak: 1048576 bytes (1.00 MiB) written by 'tandem.add'}}
  %b = tandem.add %a, %xg {tandem.device = #tandem.device<gpu>} : tensor<512x512xf32>
  %bc = tandem.transfer %b : tensor<512x512xf32> to #tandem.device<cpu>
  return %bc : tensor<512x512xf32>
}

// -----

// Ops must be placed first.
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{is not placed: run --tandem-place and --tandem-insert-transfers first}}
  %a = tandem.relu %x : tensor<8xf32>
  return %a : tensor<8xf32>
}

// -----

// A reshape owns no buffer (the lowering reads its operand's bytes): it gets
// no offset, and its operand's buffer lives until the reshape's last user,
// through a chain of reshapes. Without that, %n would reuse %a's slot while
// %r2 still reads it; with it the three live buffers take three slots.
// CHECK-LABEL: func.func @main
// CHECK-SAME: tandem.cpu_arena_bytes = 12288 : i64
// CHECK: %[[A:.*]] = tandem.relu %arg0 {tandem.device = #tandem.device<cpu>, tandem.offset = 0 : i64}
// CHECK: tandem.reshape %[[A]] {tandem.device = #tandem.device<cpu>} :
// CHECK: tandem.reshape %{{.*}} {tandem.device = #tandem.device<cpu>} :
// CHECK: tandem.neg %arg0 {tandem.device = #tandem.device<cpu>, tandem.offset = 4096 : i64}
// CHECK: tandem.add {{.*}}tandem.offset = 8192 : i64
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = tandem.relu %x {tandem.device = #tandem.device<cpu>} : tensor<1024xf32>
  %r1 = tandem.reshape %a {tandem.device = #tandem.device<cpu>} : tensor<1024xf32> -> tensor<32x32xf32>
  %r2 = tandem.reshape %r1 {tandem.device = #tandem.device<cpu>} : tensor<32x32xf32> -> tensor<1024xf32>
  %n = tandem.neg %x {tandem.device = #tandem.device<cpu>} : tensor<1024xf32>
  %c = tandem.add %r2, %n {tandem.device = #tandem.device<cpu>} : tensor<1024xf32>
  return %c : tensor<1024xf32>
}

// -----

// A GPU convolution's workspace (up to its im2col matrix: 1·4·3·3·6·6 f32 =
// 5184 bytes) has arena bytes of its own at the convolution's step, at
// tandem.workspace_offset; the arena holds it beside the three buffers live
// there (1024 + 1152 + 1152). A CPU convolution has none.
// CHECK-LABEL: func.func @main
// CHECK-SAME: tandem.gpu_arena_bytes = 8512 : i64
// CHECK: tandem.conv2d {{.*}}tandem.device = #tandem.device<gpu>, tandem.offset = {{[0-9]+}} : i64, tandem.workspace_offset = {{[0-9]+}} : i64}
// CHECK: tandem.conv2d
// CHECK-NOT: tandem.workspace_offset
// CHECK-SAME: tensor<1x8x6x6xf32>
func.func @main(%x: tensor<1x4x8x8xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  %xg = tandem.transfer %x : tensor<1x4x8x8xf32> to #tandem.device<gpu>
  %w = tandem.weight "w" {tandem.device = #tandem.device<gpu>} : tensor<8x4x3x3xf32>
  %y = tandem.conv2d %xg, %w {tandem.device = #tandem.device<gpu>} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  %yc = tandem.transfer %y : tensor<1x8x6x6xf32> to #tandem.device<cpu>
  %wc = tandem.weight "w" {tandem.device = #tandem.device<cpu>} : tensor<8x4x3x3xf32>
  %z = tandem.conv2d %x, %wc {tandem.device = #tandem.device<cpu>} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %yc, %z : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}

// -----

// Over the budget at a convolution: its workspace is named among what is
// alive.
func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x8x6x6xf32> attributes {tandem.gpu_memory_budget = 4000 : i64} {
  // expected-note @+1 {{alive at the peak: 1024 bytes (1.00 KiB) written by 'tandem.transfer'}}
  %xg = tandem.transfer %x : tensor<1x4x8x8xf32> to #tandem.device<gpu>
  // expected-note @+1 {{alive at the peak: 1152 bytes (1.12 KiB) written by 'tandem.weight'}}
  %w = tandem.weight "w" {tandem.device = #tandem.device<gpu>} : tensor<8x4x3x3xf32>
  // expected-error @+3 {{the GPU arena needs 8512 bytes, over the budget of 4000 bytes; at its peak, at this op, 8512 bytes (8.31 KiB) in 4 buffers are alive}}
  // expected-note @+2 {{alive at the peak: 1152 bytes (1.12 KiB) written by 'tandem.conv2d'}}
  // expected-note @+1 {{alive at the peak: 5184 bytes (5.06 KiB) the workspace of 'tandem.conv2d'}}
  %y = tandem.conv2d %xg, %w {tandem.device = #tandem.device<gpu>} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  %yc = tandem.transfer %y : tensor<1x8x6x6xf32> to #tandem.device<cpu>
  return %yc : tensor<1x8x6x6xf32>
}
