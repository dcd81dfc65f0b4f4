// Every op of the IR contract, printed, reparsed, and reparsed from the
// generic form: the three must agree.
// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @sources
// CHECK: tandem.weight "embedding.weight" : tensor<1000x16xf32>
// CHECK: tandem.fill(5.000000e-01 : f32) : tensor<4x8xf32>
// CHECK: tandem.fill(3 : i64) : tensor<2xi64>
// CHECK: tandem.fill(true) : tensor<3xi1>
// CHECK: tandem.fill(1.500000e+00 : bf16) : tensor<2xbf16>
// CHECK: tandem.iota {axis = 1 : i64} : tensor<2x5xi64>
// CHECK: tandem.iota {axis = -1 : i64} : tensor<7xf32>
// GENERIC: "tandem.weight"() {name = "embedding.weight"} : () -> tensor<1000x16xf32>
// GENERIC: "tandem.fill"() {value = 5.000000e-01 : f32} : () -> tensor<4x8xf32>
// GENERIC: "tandem.iota"() {axis = 1 : i64} : () -> tensor<2x5xi64>
func.func @sources() -> (tensor<1000x16xf32>, tensor<4x8xf32>, tensor<2xi64>, tensor<3xi1>, tensor<2xbf16>, tensor<2x5xi64>, tensor<7xf32>) {
  %w = tandem.weight "embedding.weight" : tensor<1000x16xf32>
  %f = tandem.fill(0.5 : f32) : tensor<4x8xf32>
  %i = tandem.fill(3 : i64) : tensor<2xi64>
  %b = tandem.fill(true) : tensor<3xi1>
  %h = tandem.fill(1.5 : bf16) : tensor<2xbf16>
  %io = tandem.iota {axis = 1 : i64} : tensor<2x5xi64>
  %if = tandem.iota {axis = -1 : i64} : tensor<7xf32>
  return %w, %f, %i, %b, %h, %io, %if : tensor<1000x16xf32>, tensor<4x8xf32>, tensor<2xi64>, tensor<3xi1>, tensor<2xbf16>, tensor<2x5xi64>, tensor<7xf32>
}

// CHECK-LABEL: func.func @binary
// CHECK: tandem.add %{{.*}}, %{{.*}} : tensor<4x3xf32>
// CHECK: tandem.sub %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
// CHECK: tandem.mul %{{.*}}, %{{.*}} : tensor<4x3xf32>
// CHECK: tandem.div %{{.*}}, %{{.*}} : tensor<4x3xf32>
// CHECK: tandem.maximum %{{.*}}, %{{.*}} : tensor<4x3xf32>
// CHECK: tandem.minimum %{{.*}}, %{{.*}} : tensor<4x3xf32>
// CHECK: tandem.pow %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
// CHECK: tandem.add %{{.*}}, %{{.*}} : tensor<6xi32>
// CHECK: tandem.div %{{.*}}, %{{.*}} : tensor<6xi64>
// GENERIC: "tandem.sub"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func @binary(%a: tensor<4x3xf32>, %col: tensor<4x1xf32>, %row: tensor<3xf32>, %s: tensor<f32>, %i: tensor<6xi32>, %l: tensor<6xi64>) -> tensor<4x3xf32> {
  %0 = tandem.add %a, %a : tensor<4x3xf32>
  %1 = tandem.sub %col, %row : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %2 = tandem.mul %0, %1 : tensor<4x3xf32>
  %3 = tandem.div %2, %a : tensor<4x3xf32>
  %4 = tandem.maximum %3, %a : tensor<4x3xf32>
  %5 = tandem.minimum %4, %a : tensor<4x3xf32>
  %6 = tandem.pow %5, %s : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %7 = tandem.add %i, %i : tensor<6xi32>
  %8 = tandem.div %l, %l : tensor<6xi64>
  return %6 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @unary
// CHECK: tandem.neg %{{.*}} : tensor<8xf32>
// CHECK: tandem.abs %{{.*}} : tensor<8xf32>
// CHECK: tandem.exp %{{.*}} : tensor<8xf32>
// CHECK: tandem.log %{{.*}} : tensor<8xf32>
// CHECK: tandem.sqrt %{{.*}} : tensor<8xf32>
// CHECK: tandem.rsqrt %{{.*}} : tensor<8xf32>
// CHECK: tandem.tanh %{{.*}} : tensor<8xf32>
// CHECK: tandem.sigmoid %{{.*}} : tensor<8xf32>
// CHECK: tandem.relu %{{.*}} : tensor<8xf32>
// CHECK: tandem.gelu %{{.*}} : tensor<8xf32>
// CHECK: tandem.silu %{{.*}} : tensor<8xf32>
// CHECK: tandem.gelu %{{.*}} : tensor<8xf16>
// CHECK: tandem.abs %{{.*}} : tensor<8xi64>
// CHECK: tandem.relu %{{.*}} : tensor<8xi32>
// GENERIC: "tandem.silu"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
func.func @unary(%x: tensor<8xf32>, %h: tensor<8xf16>, %l: tensor<8xi64>, %i: tensor<8xi32>) -> tensor<8xf32> {
  %0 = tandem.neg %x : tensor<8xf32>
  %1 = tandem.abs %0 : tensor<8xf32>
  %2 = tandem.exp %1 : tensor<8xf32>
  %3 = tandem.log %2 : tensor<8xf32>
  %4 = tandem.sqrt %3 : tensor<8xf32>
  %5 = tandem.rsqrt %4 : tensor<8xf32>
  %6 = tandem.tanh %5 : tensor<8xf32>
  %7 = tandem.sigmoid %6 : tensor<8xf32>
  %8 = tandem.relu %7 : tensor<8xf32>
  %9 = tandem.gelu %8 : tensor<8xf32>
  %10 = tandem.silu %9 : tensor<8xf32>
  %11 = tandem.gelu %h : tensor<8xf16>
  %12 = tandem.abs %l : tensor<8xi64>
  %13 = tandem.relu %i : tensor<8xi32>
  return %10 : tensor<8xf32>
}

// CHECK-LABEL: func.func @compare_select_cast
// CHECK: tandem.compare eq, %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
// CHECK: tandem.compare ne,
// CHECK: tandem.compare lt,
// CHECK: tandem.compare le,
// CHECK: tandem.compare gt,
// CHECK: tandem.compare ge, %{{.*}}, %{{.*}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
// CHECK: tandem.compare lt, %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xi1>
// CHECK: tandem.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK: tandem.cast %{{.*}} : tensor<4x3xf32> -> tensor<4x3xf16>
// CHECK: tandem.cast %{{.*}} : tensor<4x3xi1> -> tensor<4x3xi64>
// GENERIC: "tandem.compare"(%{{.*}}, %{{.*}}) {predicate = #tandem.predicate<eq>} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
func.func @compare_select_cast(%a: tensor<4x3xf32>, %s: tensor<f32>, %l: tensor<3xi64>) -> tensor<4x3xf32> {
  %eq = tandem.compare eq, %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %ne = tandem.compare ne, %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %lt = tandem.compare lt, %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %le = tandem.compare le, %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %gt = tandem.compare gt, %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %ge = tandem.compare ge, %l, %l : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %bc = tandem.compare lt, %a, %s : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xi1>
  %sel = tandem.select %lt, %a, %s : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %h = tandem.cast %sel : tensor<4x3xf32> -> tensor<4x3xf16>
  %m = tandem.cast %eq : tensor<4x3xi1> -> tensor<4x3xi64>
  return %sel : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @linear_algebra
// CHECK: tandem.matmul %{{.*}}, %{{.*}} : (tensor<2x1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
// CHECK: tandem.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<128x13xf32>, tensor<16x13xf32>, tensor<16xf32>) -> tensor<128x16xf32>
// CHECK: tandem.linear %{{.*}}, %{{.*}} : (tensor<2x7x13xf32>, tensor<16x13xf32>) -> tensor<2x7x16xf32>
// GENERIC: "tandem.linear"(%{{.*}}, %{{.*}}) : (tensor<2x7x13xf32>, tensor<16x13xf32>) -> tensor<2x7x16xf32>
func.func @linear_algebra(%a: tensor<2x1x4x5xf32>, %b: tensor<3x5x6xf32>, %x: tensor<128x13xf32>, %w: tensor<16x13xf32>, %bias: tensor<16xf32>, %x3: tensor<2x7x13xf32>) -> tensor<2x3x4x6xf32> {
  %0 = tandem.matmul %a, %b : (tensor<2x1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  %1 = tandem.linear %x, %w, %bias : (tensor<128x13xf32>, tensor<16x13xf32>, tensor<16xf32>) -> tensor<128x16xf32>
  %2 = tandem.linear %x3, %w : (tensor<2x7x13xf32>, tensor<16x13xf32>) -> tensor<2x7x16xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// CHECK-LABEL: func.func @convolution
// CHECK: tandem.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, groups = 2 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
// CHECK: tandem.conv2d %{{.*}}, %{{.*}} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
// CHECK: tandem.max_pool2d %{{.*}} {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32> -> tensor<1x4x5x5xf32>
// CHECK: tandem.avg_pool2d %{{.*}} {kernel = array<i64: 2, 2>} : tensor<1x4x9x9xf32> -> tensor<1x4x4x4xf32>
// CHECK: tandem.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
// CHECK: tandem.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x4x9x9xf32>
// Defaults are materialized on creation, so the generic form spells them out.
// GENERIC: "tandem.conv2d"(%{{.*}}, %{{.*}}) {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
// GENERIC: "tandem.avg_pool2d"(%{{.*}}) {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
func.func @convolution(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %w8: tensor<8x4x3x3xf32>, %c: tensor<4xf32>) -> tensor<1x6x4x4xf32> {
  %0 = tandem.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 2, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  %1 = tandem.conv2d %x, %w8 {strides = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  %2 = tandem.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x4x9x9xf32> -> tensor<1x4x5x5xf32>
  %3 = tandem.avg_pool2d %x {kernel = array<i64: 2, 2>} : tensor<1x4x9x9xf32> -> tensor<1x4x4x4xf32>
  %4 = tandem.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-3 : f32} : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
  %5 = tandem.batch_norm %x, %c, %c, %c, %c : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// CHECK-LABEL: func.func @normalization
// CHECK: tandem.softmax %{{.*}} {axis = -1 : i64} : tensor<2x4x8xf32>
// CHECK: tandem.log_softmax %{{.*}} {axis = 1 : i64} : tensor<2x4x8xf32>
// CHECK: tandem.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: tandem.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK: tandem.l2_normalize %{{.*}} {axis = 2 : i64} : tensor<2x4x8xf32>
// CHECK: tandem.l2_normalize %{{.*}} {axis = 0 : i64, epsilon = 9.99999997E-7 : f32} : tensor<2x4x8xf32>
func.func @normalization(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %g1: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = tandem.softmax %x {axis = -1 : i64} : tensor<2x4x8xf32>
  %1 = tandem.log_softmax %0 {axis = 1 : i64} : tensor<2x4x8xf32>
  %2 = tandem.layer_norm %1, %g, %g {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  %3 = tandem.layer_norm %2, %g1, %g1 {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %4 = tandem.l2_normalize %3 {axis = 2 : i64} : tensor<2x4x8xf32>
  %5 = tandem.l2_normalize %4 {axis = 0 : i64, epsilon = 1.0e-6 : f32} : tensor<2x4x8xf32>
  return %5 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @reductions
// CHECK: tandem.reduce_sum %{{.*}} {axes = array<i64: 1>} : tensor<2x4x8xf32> -> tensor<2x8xf32>
// CHECK: tandem.reduce_mean %{{.*}} {axes = array<i64: 0, -1>, keepdims = true} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
// CHECK: tandem.reduce_max %{{.*}} {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
// CHECK: tandem.reduce_min %{{.*}} {axes = array<i64: 0, 1, 2>} : tensor<2x4x8xf32> -> tensor<f32>
// CHECK: tandem.reduce_sum %{{.*}} {axes = array<i64: 0>} : tensor<5xi64> -> tensor<i64>
// CHECK: tandem.argmax %{{.*}} {axis = -1 : i64} : tensor<2x4x8xf32> -> tensor<2x4xi64>
// CHECK: tandem.argmax %{{.*}} {axis = 1 : i64, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x1x8xi64>
// GENERIC: "tandem.reduce_mean"(%{{.*}}) {axes = array<i64: 0, -1>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
func.func @reductions(%x: tensor<2x4x8xf32>, %l: tensor<5xi64>) -> tensor<2x8xf32> {
  %0 = tandem.reduce_sum %x {axes = array<i64: 1>} : tensor<2x4x8xf32> -> tensor<2x8xf32>
  %1 = tandem.reduce_mean %x {axes = array<i64: 0, -1>, keepdims = true} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
  %2 = tandem.reduce_max %x {axes = array<i64: 2>, keepdims = false} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %3 = tandem.reduce_min %x {axes = array<i64: 0, 1, 2>} : tensor<2x4x8xf32> -> tensor<f32>
  %4 = tandem.reduce_sum %l {axes = array<i64: 0>} : tensor<5xi64> -> tensor<i64>
  %5 = tandem.argmax %x {axis = -1 : i64} : tensor<2x4x8xf32> -> tensor<2x4xi64>
  %6 = tandem.argmax %x {axis = 1 : i64, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x1x8xi64>
  return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @shape_ops
// CHECK: tandem.reshape %{{.*}} : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK: tandem.transpose %{{.*}} {perm = array<i64: 2, 0, 1>} : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
// CHECK: tandem.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<2x1x8xf32>, tensor<2x4x8xf32>) -> tensor<2x9x8xf32>
// CHECK: tandem.concat %{{.*}} {axis = -1 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: tandem.slice %{{.*}} {limits = array<i64: 2, 4, 7>, starts = array<i64: 1, 0, 1>, strides = array<i64: 1, 2, 3>} : tensor<2x4x8xf32> -> tensor<1x2x2xf32>
// CHECK: tandem.slice %{{.*}} {limits = array<i64: 1, 4, 8>, starts = array<i64: 0, 0, 0>} : tensor<2x4x8xf32> -> tensor<1x4x8xf32>
// CHECK: tandem.broadcast_to %{{.*}} : tensor<4x1xf32> -> tensor<3x4x5xf32>
// CHECK: tandem.shape %{{.*}} : tensor<2x4x8xf32> -> tensor<3xi64>
// GENERIC: "tandem.transpose"(%{{.*}}) {perm = array<i64: 2, 0, 1>} : (tensor<2x4x8xf32>) -> tensor<8x2x4xf32>
// GENERIC: "tandem.shape"(%{{.*}}) : (tensor<2x4x8xf32>) -> tensor<3xi64>
func.func @shape_ops(%x: tensor<2x4x8xf32>, %y: tensor<2x1x8xf32>, %col: tensor<4x1xf32>) -> tensor<3xi64> {
  %0 = tandem.reshape %x : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %1 = tandem.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
  %2 = tandem.concat %x, %y, %x {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<2x1x8xf32>, tensor<2x4x8xf32>) -> tensor<2x9x8xf32>
  %3 = tandem.concat %x {axis = -1 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %4 = tandem.slice %x {starts = array<i64: 1, 0, 1>, limits = array<i64: 2, 4, 7>, strides = array<i64: 1, 2, 3>} : tensor<2x4x8xf32> -> tensor<1x2x2xf32>
  %5 = tandem.slice %x {starts = array<i64: 0, 0, 0>, limits = array<i64: 1, 4, 8>} : tensor<2x4x8xf32> -> tensor<1x4x8xf32>
  %6 = tandem.broadcast_to %col : tensor<4x1xf32> -> tensor<3x4x5xf32>
  %7 = tandem.shape %x : tensor<2x4x8xf32> -> tensor<3xi64>
  return %7 : tensor<3xi64>
}

// CHECK-LABEL: func.func @indexing
// CHECK: tandem.embedding %{{.*}}, %{{.*}} : (tensor<1000x16xf32>, tensor<4x26xi64>) -> tensor<4x26x16xf32>
// CHECK: tandem.embedding %{{.*}}, %{{.*}} : (tensor<1000x16xf32>, tensor<7xi32>) -> tensor<7x16xf32>
// CHECK: tandem.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<3x5xi64>) -> tensor<2x3x5x8xf32>
// CHECK: tandem.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<i32>) -> tensor<2x4xf32>
// CHECK: tandem.dynamic_slice %{{.*}}, %{{.*}} {sizes = array<i64: 1, 2, 8>} : (tensor<2x4x8xf32>, tensor<3xi64>) -> tensor<1x2x8xf32>
// CHECK: tandem.embedding_bag %{{.*}}, %{{.*}}, %{{.*}} {mode = "mean", padding_idx = 0 : i64} : (tensor<1000x16xf32>, tensor<7xi32>, tensor<3xi64>) -> tensor<3x16xf32>
// CHECK: tandem.embedding_bag %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {include_last_offset = true, mode = "sum"} : (tensor<1000x16xf32>, tensor<7xi32>, tensor<3xi64>, tensor<7xf32>) -> tensor<2x16xf32>
// GENERIC: "tandem.dynamic_slice"(%{{.*}}, %{{.*}}) {sizes = array<i64: 1, 2, 8>} : (tensor<2x4x8xf32>, tensor<3xi64>) -> tensor<1x2x8xf32>
// GENERIC: "tandem.embedding_bag"(%{{.*}}, %{{.*}}, %{{.*}}) {include_last_offset = false, mode = "mean", padding_idx = 0 : i64} : (tensor<1000x16xf32>, tensor<7xi32>, tensor<3xi64>) -> tensor<3x16xf32>
func.func @indexing(%ids: tensor<4x26xi64>, %ids32: tensor<7xi32>, %x: tensor<2x4x8xf32>, %idx: tensor<3x5xi64>, %one: tensor<i32>, %off: tensor<3xi64>, %w: tensor<7xf32>) -> tensor<1x2x8xf32> {
  %t = tandem.weight "table" : tensor<1000x16xf32>
  %0 = tandem.embedding %t, %ids : (tensor<1000x16xf32>, tensor<4x26xi64>) -> tensor<4x26x16xf32>
  %1 = tandem.embedding %t, %ids32 : (tensor<1000x16xf32>, tensor<7xi32>) -> tensor<7x16xf32>
  %2 = tandem.gather %x, %idx {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<3x5xi64>) -> tensor<2x3x5x8xf32>
  %3 = tandem.gather %x, %one {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<i32>) -> tensor<2x4xf32>
  %4 = tandem.dynamic_slice %x, %off {sizes = array<i64: 1, 2, 8>} : (tensor<2x4x8xf32>, tensor<3xi64>) -> tensor<1x2x8xf32>
  %5 = tandem.embedding_bag %t, %ids32, %off {mode = "mean", padding_idx = 0 : i64} : (tensor<1000x16xf32>, tensor<7xi32>, tensor<3xi64>) -> tensor<3x16xf32>
  %6 = tandem.embedding_bag %t, %ids32, %off, %w {mode = "sum", include_last_offset = true} : (tensor<1000x16xf32>, tensor<7xi32>, tensor<3xi64>, tensor<7xf32>) -> tensor<2x16xf32>
  return %4 : tensor<1x2x8xf32>
}

// CHECK-LABEL: func.func @placement
// CHECK: tandem.transfer %{{.*}} : tensor<4xf32> to #tandem.device<gpu>
// CHECK: tandem.relu %{{.*}} {tandem.device = #tandem.device<gpu>} : tensor<4xf32>
// CHECK: tandem.transfer %{{.*}} : tensor<4xf32> to #tandem.device<gpu, 1>
// CHECK: tandem.neg %{{.*}} {tandem.device = #tandem.device<gpu, 1>, tandem.pin = #tandem.device<gpu, 1>} : tensor<4xf32>
// CHECK: tandem.transfer %{{.*}} : tensor<4xf32> to #tandem.device<cpu>
// CHECK: tandem.shape %{{.*}} {tandem.pin = #tandem.device<cpu>} : tensor<4xf32> -> tensor<1xi64>
// GENERIC: "tandem.transfer"(%{{.*}}) {to = #tandem.device<gpu>} : (tensor<4xf32>) -> tensor<4xf32>
func.func @placement(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tandem.transfer %x : tensor<4xf32> to #tandem.device<gpu>
  %1 = tandem.relu %0 {tandem.device = #tandem.device<gpu>} : tensor<4xf32>
  %2 = tandem.transfer %1 : tensor<4xf32> to #tandem.device<gpu, 1>
  %3 = tandem.neg %2 {tandem.device = #tandem.device<gpu, 1>, tandem.pin = #tandem.device<gpu, 1>} : tensor<4xf32>
  %4 = tandem.transfer %3 : tensor<4xf32> to #tandem.device<cpu>
  %5 = tandem.shape %4 {tandem.pin = #tandem.device<cpu>} : tensor<4xf32> -> tensor<1xi64>
  return %4 : tensor<4xf32>
}
