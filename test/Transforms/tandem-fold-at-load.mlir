// RUN: tandem-opt %s --split-input-file --tandem-fold-at-load | FileCheck %s
// Folding twice changes nothing: a function with an at-load function has
// been folded.
// RUN: tandem-opt %s --split-input-file --tandem-fold-at-load --tandem-fold-at-load | FileCheck %s

// What the model reads of a chain on weights becomes a folded weight; the
// chain moves to @main_at_load, every op on the CPU; values only the chain
// reads (%s) are not handed back, and sources nothing reads any more go.
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     tandem.transpose
// CHECK:         %[[W:.*]] = tandem.weight "main_at_load.0" {tandem.folded = 0 : i64} : tensor<16x32xf32>
// CHECK-NEXT:    tandem.matmul %arg0, %[[W]]
// CHECK:         %[[E:.*]] = tandem.weight "main_at_load.1" {tandem.folded = 1 : i64} : tensor<32xf32>
// CHECK-NEXT:    tandem.mul %{{.*}}, %[[E]]
// CHECK-NOT:     tandem.exp
// CHECK-NOT:     "gate"
// CHECK:         return
// CHECK:       func.func @main_at_load() -> (tensor<16x32xf32>, tensor<32xf32>) attributes {tandem.at_load = @main}
// CHECK-NEXT:    %[[FW:.*]] = tandem.weight "fc.weight" {tandem.device = #tandem.device<cpu>}
// CHECK-NEXT:    %[[G:.*]] = tandem.weight "gate" {tandem.device = #tandem.device<cpu>}
// CHECK-NEXT:    %[[T:.*]] = tandem.transpose %[[FW]] {perm = array<i64: 1, 0>, tandem.device = #tandem.device<cpu>}
// CHECK-NEXT:    %[[H:.*]] = tandem.fill(5.000000e-01 : f32) {tandem.device = #tandem.device<cpu>}
// CHECK-NEXT:    %[[S:.*]] = tandem.mul %[[G]], %[[H]] {tandem.device = #tandem.device<cpu>}
// CHECK-NEXT:    %[[X:.*]] = tandem.exp %[[S]] {tandem.device = #tandem.device<cpu>}
// CHECK-NEXT:    return %[[T]], %[[X]]
// CHECK-NOT:   func.func @main_at_load
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x32xf32> {
  %w = tandem.weight "fc.weight" : tensor<32x16xf32>
  %g = tandem.weight "gate" : tensor<32xf32>
  %wt = tandem.transpose %w {perm = array<i64: 1, 0>} : tensor<32x16xf32> -> tensor<16x32xf32>
  %y = tandem.matmul %x, %wt : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %half = tandem.fill(0.5 : f32) : tensor<f32>
  %s = tandem.mul %g, %half : tensor<32xf32>, tensor<f32> -> tensor<32xf32>
  %e = tandem.exp %s : tensor<32xf32>
  %z = tandem.mul %y, %e : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  return %z : tensor<8x32xf32>
}

// -----

// Left in the model: an op reading an input, a pinned op (the user chose
// its device), an op on a pinned weight (the user chose where the model
// reads it), and a broadcast of a small weight to 4 MiB (larger than
// 1 MiB and than the weight: cheaper to compute than to keep). An op on a
// value that stays is not folded either; nothing else is, so no at-load
// function is made.
// CHECK-LABEL: func.func @main(
// CHECK:         tandem.neg %{{.*}} {tandem.pin = #tandem.device<gpu>}
// CHECK:         tandem.broadcast_to
// CHECK:         tandem.relu
// CHECK:         tandem.add %arg0
// CHECK:         tandem.weight "pinned" {tandem.pin = #tandem.device<gpu>}
// CHECK-NEXT:    tandem.neg
// CHECK-NOT:   tandem.folded
// CHECK-NOT:   func.func @main_at_load
func.func @main(%x: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024xf32>) {
  %b = tandem.weight "bias" : tensor<1024xf32>
  %n = tandem.neg %b {tandem.pin = #tandem.device<gpu>} : tensor<1024xf32>
  %big = tandem.broadcast_to %b : tensor<1024xf32> -> tensor<1024x1024xf32>
  %r = tandem.relu %big : tensor<1024x1024xf32>
  %y = tandem.add %x, %r : tensor<1024x1024xf32>
  %p = tandem.weight "pinned" {tandem.pin = #tandem.device<gpu>} : tensor<1024xf32>
  %pn = tandem.neg %p : tensor<1024xf32>
  %s = tandem.add %n, %pn : tensor<1024xf32>
  return %y, %s : tensor<1024x1024xf32>, tensor<1024xf32>
}

// -----

// A folded value the model returns, and one it reads through a reshape
// (the reshape stays in the model, reading the folded weight). The at-load
// function's name is free: @main_at_load is taken.
// CHECK-LABEL: func.func @main(
// CHECK-DAG:     %[[A:.*]] = tandem.weight "main_at_load_0.0" {tandem.folded = 0 : i64} : tensor<4x4xf32>
// CHECK-DAG:     tandem.reshape %[[A]]
// CHECK:         return %[[A]],
// CHECK:       func.func @main_at_load_0() -> tensor<4x4xf32> attributes {tandem.at_load = @main}
// CHECK:         tandem.neg
// CHECK:       func.func @main_at_load(%arg0: tensor<2xf32>)
func.func @main(%x: tensor<16xf32>) -> (tensor<4x4xf32>, tensor<16xf32>) {
  %w = tandem.weight "w" : tensor<4x4xf32>
  %n = tandem.neg %w : tensor<4x4xf32>
  %flat = tandem.reshape %n : tensor<4x4xf32> -> tensor<16xf32>
  %y = tandem.add %x, %flat : tensor<16xf32>
  return %n, %y : tensor<4x4xf32>, tensor<16xf32>
}
func.func @main_at_load(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// A batch norm after a convolution folds into its weights: the convolution
// reads a weight and a bias computed at load; the batch norm is gone. One
// after an add (not a convolution or a linear layer) stays.
// CHECK-LABEL: func.func @main(
// CHECK-DAG:     %[[W:.*]] = tandem.weight "main_at_load.0" {tandem.folded = 0 : i64} : tensor<4x3x3x3xf32>
// CHECK-DAG:     %[[B:.*]] = tandem.weight "main_at_load.1" {tandem.folded = 1 : i64} : tensor<4xf32>
// CHECK:         tandem.conv2d %arg0, %[[W]], %[[B]]
// CHECK:         tandem.add
// CHECK-NEXT:    tandem.batch_norm
// CHECK-NOT:     tandem.batch_norm
// CHECK:       func.func @main_at_load() -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
// CHECK:         %[[EPS:.*]] = tandem.fill(1.000000e-03 : f32)
// CHECK:         %[[VE:.*]] = tandem.add %{{.*}}, %[[EPS]]
// CHECK-NEXT:    %[[R:.*]] = tandem.rsqrt %[[VE]]
// CHECK-NEXT:    %[[S:.*]] = tandem.mul %{{.*}}, %[[R]]
// CHECK-NEXT:    %[[COL:.*]] = tandem.reshape %[[S]] {{.*}}-> tensor<4x1x1x1xf32>
// CHECK-NEXT:    %[[NW:.*]] = tandem.mul %{{.*}}, %[[COL]]
// CHECK-NEXT:    %[[NM:.*]] = tandem.neg
// CHECK-NEXT:    %[[SC:.*]] = tandem.mul %[[NM]], %[[S]]
// CHECK-NEXT:    %[[NB:.*]] = tandem.add %[[SC]],
// CHECK-NEXT:    return %[[NW]], %[[NB]]
func.func @main(%x: tensor<2x3x6x6xf32>) -> (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) {
  %w = tandem.weight "conv.weight" : tensor<4x3x3x3xf32>
  %g = tandem.weight "bn.weight" : tensor<4xf32>
  %b = tandem.weight "bn.bias" : tensor<4xf32>
  %m = tandem.weight "bn.running_mean" : tensor<4xf32>
  %v = tandem.weight "bn.running_var" : tensor<4xf32>
  %c = "tandem.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %y = "tandem.batch_norm"(%c, %g, %b, %m, %v) {epsilon = 1.0e-03 : f32} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %a = tandem.add %y, %y : tensor<2x4x6x6xf32>
  %z = "tandem.batch_norm"(%a, %g, %b, %m, %v) {epsilon = 1.0e-03 : f32} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  return %y, %z : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
}
