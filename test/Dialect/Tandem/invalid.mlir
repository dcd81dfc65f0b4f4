// One case per verifier rule: each message names the rule broken.
// RUN: tandem-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Types shared by every op
//===----------------------------------------------------------------------===//

func.func @dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = tandem.relu %a : tensor<?xf32>
  return
}

// -----

func.func @unsupported_element_type(%a: tensor<4xf64>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values}}
  %0 = tandem.add %a, %a : tensor<4xf64>
  return
}

// -----

func.func @scalar_operand(%a: f32) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = "tandem.add"(%a, %a) : (f32, f32) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

func.func @binary_mixed_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tandem.add %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @binary_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{operand shapes [4, 3] and [5] are not broadcast-compatible}}
  %0 = tandem.mul %a, %b : tensor<4x3xf32>, tensor<5xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @binary_wrong_result_shape(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result shape [4, 1] does not match [4, 3] (the broadcast of the operand shapes)}}
  %0 = tandem.sub %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @pow_on_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = tandem.pow %a, %a : tensor<4xi32>
  return
}

// -----

func.func @exp_on_integers(%a: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = tandem.exp %a : tensor<4xi64>
  return
}

// -----

func.func @unary_changes_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "tandem.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @compare_result_not_mask(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = tandem.compare lt, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @compare_mixed_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{requires the same element type for all operands}}
  %0 = tandem.compare eq, %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_unknown_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown comparison predicate 'less': expected eq, ne, lt, le, gt or ge}}
  %0 = tandem.compare less, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes [4, 3] and [4] are not broadcast-compatible}}
  %0 = tandem.compare eq, %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xi1>
  return
}

// -----

func.func @select_condition_not_mask(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = tandem.select %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_branches_differ(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{a and b must share one element type, got 'f32' and 'f16'}}
  %0 = tandem.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @select_result_type(%c: tensor<4xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{a and the result must share one element type, got 'f32' and 'i32'}}
  %0 = tandem.select %c, %a, %a : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return
}

// -----

func.func @select_not_broadcastable(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes [3] and [4] are not broadcast-compatible}}
  %0 = tandem.select %c, %a, %a : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cast_changes_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %0 = tandem.cast %a : tensor<4xf32> -> tensor<2x2xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

func.func @weight_without_name() {
  // expected-error @+1 {{requires attribute 'name'}}
  %0 = "tandem.weight"() : () -> tensor<4xf32>
  return
}

// -----

func.func @weight_empty_name() {
  // expected-error @+1 {{needs a non-empty 'name': the key of the tensor in the weights file}}
  %0 = tandem.weight "" : tensor<4xf32>
  return
}

// -----

func.func @weight_name_not_string() {
  // expected-error @+1 {{attribute 'name' failed to satisfy constraint: string attribute}}
  %0 = "tandem.weight"() {name = 3 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @fill_value_type() {
  // expected-error @+1 {{value is typed 'f64' but the result's element type is 'f32' (they must match)}}
  %0 = tandem.fill(0.5) : tensor<4xf32>
  return
}

// -----

func.func @fill_value_not_number() {
  // expected-error @+1 {{value must be a number, got "one"}}
  %0 = "tandem.fill"() {value = "one"} : () -> tensor<4xf32>
  return
}

// -----

func.func @iota_axis() {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand (expected -2 to 1)}}
  %0 = tandem.iota {axis = 2 : i64} : tensor<4x3xi64>
  return
}

// -----

func.func @iota_axis_not_integer() {
  // expected-error @+1 {{attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = "tandem.iota"() {axis = 1.0 : f32} : () -> tensor<4x3xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{operands must have rank >= 2 ([..., M, K] and [..., K, N]), got shapes [4] and [4, 3]}}
  %0 = tandem.matmul %a, %b : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_contracting(%a: tensor<2x4xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+1 {{contracting dimensions differ: a is [2, 4] (K = 4) but b is [5, 3] (K = 5)}}
  %0 = tandem.matmul %a, %b : (tensor<2x4xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x4xf32>, %b: tensor<3x4x3xf32>) {
  // expected-error @+1 {{batch dimensions [2] and [3] are not broadcast-compatible}}
  %0 = tandem.matmul %a, %b : (tensor<2x2x4xf32>, tensor<3x4x3xf32>) -> tensor<2x2x3xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{result shape [3, 2] does not match [2, 3] (broadcast batch + [M, N])}}
  %0 = tandem.matmul %a, %b : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @matmul_integers(%a: tensor<2x4xi32>, %b: tensor<4x3xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = tandem.matmul %a, %b : (tensor<2x4xi32>, tensor<4x3xi32>) -> tensor<2x3xi32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{w must have rank 2, got rank 1}}
  %0 = tandem.linear %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_in_features(%x: tensor<2x4xf32>, %w: tensor<3x5xf32>) {
  // expected-error @+1 {{w must be [N, K] with K = 4 (x's last dimension), got [3, 5]}}
  %0 = tandem.linear %x, %w : (tensor<2x4xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{b must be [N] = [3], got [4]}}
  %0 = tandem.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{result shape [2, 4] does not match [2, 3] (x's leading dimensions + [N])}}
  %0 = tandem.linear %x, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{x must have rank >= 1 ([..., K])}}
  %0 = tandem.linear %x, %w : (tensor<f32>, tensor<3x4xf32>) -> tensor<3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

func.func @conv_input_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{x (NCHW) must have rank 4, got rank 3}}
  %0 = tandem.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_filter_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{w must have C / groups = 3 input channels (dimension 1), got [4, 2, 3, 3]}}
  %0 = tandem.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_groups_divide(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{groups (4) must divide the input channels (4) and the output channels (6)}}
  %0 = tandem.conv2d %x, %w {groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_groups_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{groups must be at least 1, got 0}}
  %0 = tandem.conv2d %x, %w {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{b must be [O] = [4], got [3]}}
  %0 = tandem.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{attribute 'strides' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = tandem.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_strides_kind(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{attribute 'strides' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = "tandem.conv2d"(%x, %w) {strides = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{strides must be at least 1, got [0, 1]}}
  %0 = tandem.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{padding must be at least 0, got [-1, 0]}}
  %0 = tandem.conv2d %x, %w {padding = array<i64: -1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{dilation must be at least 1, got [1, 0]}}
  %0 = tandem.conv2d %x, %w {dilation = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{the dilated kernel [3, 3] does not fit in the padded input [4, 4]}}
  %0 = tandem.conv2d %x, %w {dilation = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{result shape [1, 4, 8, 8] does not match [1, 4, 4, 4] ([N, O, OH, OW] from the input, kernel, strides, padding and dilation)}}
  %0 = tandem.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @pool_missing_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{requires attribute 'kernel'}}
  %0 = "tandem.max_pool2d"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_padding_over_half(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{padding [2, 2] must be at most half the kernel [3, 3]}}
  %0 = tandem.max_pool2d %x {kernel = array<i64: 3, 3>, padding = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @pool_kernel_too_large(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{the kernel [3, 3] does not fit in the padded input [2, 2]}}
  %0 = tandem.avg_pool2d %x {kernel = array<i64: 3, 3>} : tensor<1x3x2x2xf32> -> tensor<1x3x1x1xf32>
  return
}

// -----

func.func @pool_zero_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{kernel must be at least 1, got [0, 2]}}
  %0 = tandem.avg_pool2d %x {kernel = array<i64: 0, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_result(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{result shape [1, 3, 4, 4] does not match [1, 3, 7, 7] ([N, C, OH, OW] from the input, kernel, strides and padding)}}
  %0 = tandem.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_input_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{x (NCHW) must have rank 4, got rank 3}}
  %0 = tandem.max_pool2d %x {kernel = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  return
}

// -----

func.func @batch_norm_parameter(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{var must be [C] = [3] (x's dimension 1), got [4]}}
  %0 = tandem.batch_norm %x, %c, %c, %c, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{x must have rank >= 2 ([N, C, ...]), got [3]}}
  %0 = tandem.batch_norm %x, %c, %c, %c, %c : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{epsilon must be a non-negative number, got -1.000000e-03}}
  %0 = tandem.batch_norm %x, %c, %c, %c, %c {epsilon = -1.0e-3 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @batch_norm_epsilon_kind(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{attribute 'epsilon' failed to satisfy constraint: 32-bit float attribute}}
  %0 = "tandem.batch_norm"(%x, %c, %c, %c, %c) {epsilon = 1.0e-3 : f64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

func.func @softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -3 is out of range for a rank-2 operand (expected -2 to 1)}}
  %0 = tandem.softmax %x {axis = -3 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @softmax_missing_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{requires attribute 'axis'}}
  %0 = "tandem.softmax"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @log_softmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{axis 0 is out of range for a rank-0 operand}}
  %0 = tandem.log_softmax %x {axis = 0 : i64} : tensor<f32>
  return
}

// -----

func.func @l2_normalize_epsilon(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{epsilon must be a non-negative number, got -1.000000e+00}}
  %0 = tandem.l2_normalize %x {axis = 1 : i64, epsilon = -1.0 : f32} : tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_gamma(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{gamma must have the normalized shape [8] (x's dimensions 2..2), got [4, 8]}}
  %0 = tandem.layer_norm %x, %g, %b {axis = -1 : i64} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @layer_norm_beta(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{beta must have the normalized shape [4, 8] (x's dimensions 1..2), got [8]}}
  %0 = tandem.layer_norm %x, %g, %b {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{axis 3 is out of range for a rank-3 operand (expected -3 to 2)}}
  %0 = tandem.layer_norm %x, %g, %g {axis = 3 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_no_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axes must list at least one dimension}}
  %0 = tandem.reduce_sum %x {axes = array<i64>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reduce_repeated_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axes [1, -1] name dimension 1 more than once}}
  %0 = tandem.reduce_max %x {axes = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand (expected -2 to 1)}}
  %0 = tandem.reduce_min %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_keepdims_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape [2] does not match [2, 1] (x's shape with the reduced axes as 1)}}
  %0 = tandem.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape [2, 1] does not match [2] (x's shape without the reduced axes)}}
  %0 = tandem.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_mean_integers(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = tandem.reduce_mean %x {axes = array<i64: 1>} : tensor<2x3xi32> -> tensor<2xi32>
  return
}

// -----

func.func @reduce_keepdims_kind(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{attribute 'keepdims' failed to satisfy constraint: bool attribute}}
  %0 = "tandem.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @argmax_result_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = tandem.argmax %x {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2xi32>
  return
}

// -----

func.func @argmax_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape [2] does not match [2, 1] (x's shape with the axis as 1)}}
  %0 = tandem.argmax %x {axis = 1 : i64, keepdims = true} : tensor<2x3xf32> -> tensor<2xi64>
  return
}

// -----

func.func @argmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 5 is out of range for a rank-2 operand (expected -2 to 1)}}
  %0 = tandem.argmax %x {axis = 5 : i64} : tensor<2x3xf32> -> tensor<2xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape [2, 3] (6 elements) into [7] (7 elements): the element count must not change}}
  %0 = tandem.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tandem.reshape %x : tensor<2x3xf32> -> tensor<6xi32>
  return
}

// -----

func.func @transpose_perm_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [0] has 1 entries but x has rank 2}}
  %0 = tandem.transpose %x {perm = array<i64: 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [1, 1] is not a permutation of 0..1}}
  %0 = tandem.transpose %x {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape [2, 3] does not match [3, 2] (x's dimensions permuted by perm)}}
  %0 = tandem.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_disagree(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{input 1 has shape [4, 3] but input 0 has [2, 3]: all dimensions but the axis (1) must agree}}
  %0 = tandem.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{input 1 has shape [3] but input 0 has [2, 3]: all dimensions but the axis (0) must agree}}
  %0 = tandem.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) {
  // expected-error @+1 {{result shape [2, 7] does not match [2, 8] (the inputs joined along the axis)}}
  %0 = tandem.concat %a, %b {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x7xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{expected 1 or more operands, but found 0}}
  %0 = "tandem.concat"() {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tandem.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @slice_lengths(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{starts, limits and strides need one entry per dimension of x (rank 2), got 1, 2 and 1}}
  %0 = tandem.slice %x {starts = array<i64: 0>, limits = array<i64: 2, 2>} : tensor<4x4xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{dimension 1: need 0 <= start (1) <= limit (5) <= size (4)}}
  %0 = tandem.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 2, 5>} : tensor<4x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @slice_reversed(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{dimension 0: need 0 <= start (3) <= limit (1) <= size (4)}}
  %0 = tandem.slice %x {starts = array<i64: 3, 0>, limits = array<i64: 1, 4>} : tensor<4x4xf32> -> tensor<0x4xf32>
  return
}

// -----

func.func @slice_stride(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{dimension 0: stride must be at least 1, got 0}}
  %0 = tandem.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 4>, strides = array<i64: 0, 1>} : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @slice_result(%x: tensor<9xf32>) {
  // expected-error @+1 {{result shape [4] does not match [3] (ceil((limit - start) / stride) per dimension)}}
  %0 = tandem.slice %x {starts = array<i64: 1>, limits = array<i64: 9>, strides = array<i64: 3>} : tensor<9xf32> -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{x's shape [3, 2] does not broadcast to [4, 3, 3]}}
  %0 = tandem.broadcast_to %x : tensor<3x2xf32> -> tensor<4x3x3xf32>
  return
}

// -----

func.func @broadcast_to_lower_rank(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{x's shape [1, 3] does not broadcast to [3]}}
  %0 = tandem.broadcast_to %x : tensor<1x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @shape_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result shape [3] does not match [2] (one entry per dimension of x)}}
  %0 = tandem.shape %x : tensor<2x3xf32> -> tensor<3xi64>
  return
}

// -----

func.func @shape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = tandem.shape %x : tensor<2x3xf32> -> tensor<2xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

func.func @embedding_table_rank(%t: tensor<10xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{table ([V, D]) must have rank 2, got rank 1}}
  %0 = tandem.embedding %t, %ids : (tensor<10xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @embedding_float_ids(%t: tensor<10x3xf32>, %ids: tensor<4xf32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tandem.embedding %t, %ids : (tensor<10x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @embedding_result(%t: tensor<10x3xf32>, %ids: tensor<4x2xi64>) {
  // expected-error @+1 {{result shape [4, 3] does not match [4, 2, 3] (ids.shape + [D])}}
  %0 = tandem.embedding %t, %ids : (tensor<10x3xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @embedding_element_type(%t: tensor<10x3xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{table and the result must share one element type, got 'f32' and 'f16'}}
  %0 = tandem.embedding %t, %ids : (tensor<10x3xf32>, tensor<4xi64>) -> tensor<4x3xf16>
  return
}

// -----

func.func @embedding_bag_mode(%t: tensor<10x3xf32>, %ids: tensor<6xi64>, %o: tensor<2xi64>) {
  // expected-error @+1 {{mode must be "sum", "mean" or "max", got "median"}}
  %0 = tandem.embedding_bag %t, %ids, %o {mode = "median"} : (tensor<10x3xf32>, tensor<6xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @embedding_bag_weights_mode(%t: tensor<10x3xf32>, %ids: tensor<6xi64>, %o: tensor<2xi64>, %w: tensor<6xf32>) {
  // expected-error @+1 {{weights go with mode "sum" only, not "max"}}
  %0 = tandem.embedding_bag %t, %ids, %o, %w {mode = "max"} : (tensor<10x3xf32>, tensor<6xi64>, tensor<2xi64>, tensor<6xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @embedding_bag_weights_length(%t: tensor<10x3xf32>, %ids: tensor<6xi64>, %o: tensor<2xi64>, %w: tensor<5xf32>) {
  // expected-error @+1 {{weights has 5 entries for 6 ids}}
  %0 = tandem.embedding_bag %t, %ids, %o, %w {mode = "sum"} : (tensor<10x3xf32>, tensor<6xi64>, tensor<2xi64>, tensor<5xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @embedding_bag_padding(%t: tensor<10x3xf32>, %ids: tensor<6xi64>, %o: tensor<2xi64>) {
  // expected-error @+1 {{padding_idx 10 is not a row of the table (0 to 9) or -1 (none)}}
  %0 = tandem.embedding_bag %t, %ids, %o {mode = "sum", padding_idx = 10 : i64} : (tensor<10x3xf32>, tensor<6xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @embedding_bag_last_offset(%t: tensor<10x3xf32>, %ids: tensor<6xi64>, %o: tensor<3xi64>) {
  // expected-error @+1 {{result shape [3, 3] does not match [2, 3] ([len(offsets) - 1, D])}}
  %0 = tandem.embedding_bag %t, %ids, %o {mode = "mean", include_last_offset = true} : (tensor<10x3xf32>, tensor<6xi64>, tensor<3xi64>) -> tensor<3x3xf32>
  return
}

// -----

func.func @embedding_bag_ids_rank(%t: tensor<10x3xf32>, %ids: tensor<2x3xi64>, %o: tensor<2xi64>) {
  // expected-error @+1 {{ids ([L]) must have rank 1, got rank 2}}
  %0 = tandem.embedding_bag %t, %ids, %o {mode = "sum"} : (tensor<10x3xf32>, tensor<2x3xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand (expected -2 to 1)}}
  %0 = tandem.gather %x, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return
}

// -----

func.func @gather_result(%x: tensor<4x3xf32>, %i: tensor<2x5xi32>) {
  // expected-error @+1 {{result shape [2, 3] does not match [2, 5, 3] (x.shape[:axis] + indices.shape + x.shape[axis+1:])}}
  %0 = tandem.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2x5xi32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dynamic_slice_offsets_shape(%x: tensor<8x8xf32>, %o: tensor<3xi64>) {
  // expected-error @+1 {{offsets must be a 1-D tensor with one entry per dimension of x ([2]), got [3]}}
  %0 = tandem.dynamic_slice %x, %o {sizes = array<i64: 2, 2>} : (tensor<8x8xf32>, tensor<3xi64>) -> tensor<2x2xf32>
  return
}

// -----

func.func @dynamic_slice_offsets_type(%x: tensor<8x8xf32>, %o: tensor<2xi32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = tandem.dynamic_slice %x, %o {sizes = array<i64: 2, 2>} : (tensor<8x8xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @dynamic_slice_sizes_length(%x: tensor<8x8xf32>, %o: tensor<2xi64>) {
  // expected-error @+1 {{sizes [2] needs one entry per dimension of x (rank 2)}}
  %0 = tandem.dynamic_slice %x, %o {sizes = array<i64: 2>} : (tensor<8x8xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @dynamic_slice_too_large(%x: tensor<8x8xf32>, %o: tensor<2xi64>) {
  // expected-error @+1 {{dimension 1: size 9 must be between 0 and 8}}
  %0 = tandem.dynamic_slice %x, %o {sizes = array<i64: 2, 9>} : (tensor<8x8xf32>, tensor<2xi64>) -> tensor<2x9xf32>
  return
}

// -----

func.func @dynamic_slice_result(%x: tensor<8x8xf32>, %o: tensor<2xi64>) {
  // expected-error @+1 {{result shape [2, 3] does not match [2, 2] (sizes)}}
  %0 = tandem.dynamic_slice %x, %o {sizes = array<i64: 2, 2>} : (tensor<8x8xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Placement: the transfer op, #tandem.device, tandem.device and tandem.pin
//===----------------------------------------------------------------------===//

func.func @transfer_changes_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "tandem.transfer"(%x) {to = #tandem.device<gpu>} : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @transfer_to_string(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'to' failed to satisfy constraint: A device an op runs on: the host CPU or a GPU ordinal}}
  %0 = "tandem.transfer"(%x) {to = "gpu"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @transfer_to_not_device(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected a #tandem.device attribute, got "gpu"}}
  %0 = tandem.transfer %x : tensor<4xf32> to "gpu"
  return
}

// -----

func.func @device_attr_string(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tandem.device' must be a #tandem.device attribute, got "gpu"}}
  %0 = tandem.relu %x {tandem.device = "gpu"} : tensor<4xf32>
  return
}

// -----

func.func @pin_attr_integer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tandem.pin' must be a #tandem.device attribute, got 1 : i64}}
  %0 = tandem.relu %x {tandem.pin = 1 : i64} : tensor<4xf32>
  return
}

// -----

func.func @unknown_tandem_attr(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown attribute 'tandem.placement': the tandem dialect understands 'tandem.device', 'tandem.pin', 'tandem.offset', 'tandem.workspace_offset', 'tandem.queue', 'tandem.scheduled', 'tandem.gpu_memory_budget', 'tandem.cpu_arena_bytes', 'tandem.gpu_arena_bytes', 'tandem.kernel', 'tandem.folded' and 'tandem.at_load'}}
  %0 = tandem.relu %x {tandem.placement = #tandem.device<gpu>} : tensor<4xf32>
  return
}

// -----

func.func @impossible_pin(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tandem.pin' asks for #tandem.device<gpu> but 'tandem.shape' cannot run on a gpu}}
  %0 = tandem.shape %x {tandem.pin = #tandem.device<gpu>} : tensor<4xf32> -> tensor<1xi64>
  return
}

// -----

func.func @device_on_unplaceable_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tandem.device' is set on 'func.return', which Tandem does not place}}
  return {tandem.device = #tandem.device<cpu>}
}

// -----

// expected-error @+1 {{unknown device kind 'tpu': expected 'cpu' or 'gpu'}}
func.func @device_kind() attributes {x = #tandem.device<tpu>} {
  return
}

// -----

// expected-error @+1 {{the CPU device takes no ordinal}}
func.func @cpu_ordinal() attributes {x = #tandem.device<cpu, 1>} {
  return
}

// -----

// expected-error @+1 {{GPU ordinal must be non-negative, got -1}}
func.func @negative_ordinal() attributes {x = #tandem.device<gpu, -1>} {
  return
}

// -----

// expected-error @+1 {{expected a device kind: 'cpu' or 'gpu'}}
func.func @empty_device() attributes {x = #tandem.device<>} {
  return
}

// -----

// expected-error @+1 {{expected '>'}}
func.func @extra_device_field() attributes {x = #tandem.device<gpu, 1, 2>} {
  return
}

// -----

func.func @negative_offset(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tandem.offset' must be a non-negative i64, got -64 : i64}}
  %0 = tandem.relu %x {tandem.offset = -64 : i64} : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'tandem.gpu_arena_bytes' must be a non-negative i64, got "big"}}
func.func @arena_not_integer() attributes {tandem.gpu_arena_bytes = "big"} {
  return
}

// -----

// Sizes are bounded: no tensor takes more than 2^48 bytes, so no size or
// offset overflows downstream.
func.func @tensor_too_big(%x: tensor<9223372036854775807xf32>) {
  // expected-error @+1 {{'tandem.relu' op operand #0 ('tensor<9223372036854775807xf32>') takes more than 2^48 bytes (256 TiB), the most a tensor may}}
  %0 = tandem.relu %x : tensor<9223372036854775807xf32>
  return
}

// -----

func.func @tensor_size_overflows() {
  // expected-error @+1 {{'tandem.fill' op result #0 ('tensor<4294967296x4294967296xf32>') takes more than 2^48 bytes}}
  %0 = tandem.fill(1.0 : f32) : tensor<4294967296x4294967296xf32>
  return
}

// -----

func.func @stride_too_large(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tandem.max_pool2d' op strides must be at most 2147483647, got [9223372036854775807, 1]}}
  %0 = tandem.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 9223372036854775807, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x1x3xf32>
  return
}

// -----

func.func @dilation_too_large(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'tandem.conv2d' op dilation must be at most 2147483647, got [4611686018427387904, 1]}}
  %0 = tandem.conv2d %x, %w {dilation = array<i64: 4611686018427387904, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x1x3xf32>
  return
}

// -----

func.func @weight_name_with_nul() {
  // expected-error @+1 {{'tandem.weight' op 'name' contains a NUL character, which no weights file key can hold}}
  %0 = "tandem.weight"() {name = "w\00x"} : () -> tensor<4xf32>
  return
}

// -----

func.func @reduce_max_of_nothing(%x: tensor<0x4xi32>) {
  // expected-error @+1 {{'tandem.reduce_max' op reduces a dimension of size 0: tandem.reduce_max of no elements has no value}}
  %0 = tandem.reduce_max %x {axes = array<i64: 0>} : tensor<0x4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @argmax_of_nothing(%x: tensor<3x0xf32>) {
  // expected-error @+1 {{'tandem.argmax' op reduces a dimension of size 0: tandem.argmax of no elements has no value}}
  %0 = tandem.argmax %x {axis = 1 : i64} : tensor<3x0xf32> -> tensor<3xi64>
  return
}

// -----

// An empty result computes nothing: reducing its zero-length axis is fine.
func.func @reduce_min_of_nothing_into_nothing(%x: tensor<0x0xf32>) -> tensor<0xf32> {
  %0 = tandem.reduce_min %x {axes = array<i64: 0>} : tensor<0x0xf32> -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// The GPU kernels take tensors up to rank 8: a rank-9 op cannot be pinned
// there (placement keeps it on the CPU).
func.func @rank_nine(%x: tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32> {
  // expected-error @+1 {{'tandem.pin' asks for #tandem.device<gpu> but 'tandem.relu' cannot run on a gpu (a tensor of rank above 8, the most the GPU kernels take)}}
  %0 = tandem.relu %x {tandem.pin = #tandem.device<gpu>} : tensor<1x1x1x1x1x1x1x1x2xf32>
  return %0 : tensor<1x1x1x1x1x1x1x1x2xf32>
}

// -----

func.func @fused_body_not_fusible(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tandem.fused(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %e = tandem.exp %a : tensor<4x4xf32>
    // expected-error @+1 {{cannot be part of a fused group: only the float arithmetic and unary functions on f32 are, compares of f32, selects of f32, casts between f32 and i1, fills of f32, view ops on the inputs, a GEMM or convolution as the first op and a softmax, log_softmax, l2_normalize, layer_norm or reduction over trailing axes as the last}}
    %m = tandem.matmul %e, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    tandem.yield %m : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @fused_producer_alone(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{holds a GEMM or convolution alone: a group with a producer has an epilogue}}
  %r = tandem.fused(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %m = tandem.matmul %a, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    tandem.yield %m : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// A mask is computed and read inside a group; the group itself writes f32.
func.func @fused_mask_result(%x: tensor<4x4xf32>) -> tensor<4x4xi1> {
  // expected-error @+1 {{gives 'tensor<4x4xi1>': a fused group's kernel writes f32 (masks and other values stay inside it)}}
  %r = tandem.fused(%x) : (tensor<4x4xf32>) -> tensor<4x4xi1> {
  ^bb0(%a: tensor<4x4xf32>):
    %e = tandem.exp %a : tensor<4x4xf32>
    %m = tandem.compare lt, %e, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
    tandem.yield %m : tensor<4x4xi1>
  }
  return %r : tensor<4x4xi1>
}

// -----

// A compare of integers is not computed by the generated kernels.
func.func @fused_integer_compare(%x: tensor<4xi64>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = tandem.fused(%x, %y) : (tensor<4xi64>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xi64>, %b: tensor<4xf32>):
    // expected-error @+1 {{cannot be part of a fused group}}
    %m = tandem.compare lt, %a, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %s = tandem.select %m, %b, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tandem.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_softmax(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tandem.fused(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    // expected-error @+1 {{cannot be part of a fused group}}
    %s = tandem.softmax %a {axis = 1 : i64} : tensor<4x4xf32>
    %e = tandem.exp %s : tensor<4x4xf32>
    tandem.yield %e : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @fused_body_broadcasts(%x: tensor<4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = tandem.fused(%x, %y) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2x4xf32>):
    // expected-error @+1 {{has shape [4] in a fused group of shape [2, 4]: only the group's inputs may broadcast}}
    %e = tandem.exp %a : tensor<4xf32>
    %s = tandem.add %e, %b : tensor<4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    tandem.yield %s : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

func.func @fused_input_does_not_broadcast(%x: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input #0 of shape [3] does not broadcast to the group's shape [2, 4]}}
  %r = tandem.fused(%x) : (tensor<3xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<3xf32>):
    %e = tandem.exp %a : tensor<3xf32>
    tandem.yield %e : tensor<3xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

func.func @fused_yield_type(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{yields 'tensor<4xf32>' but its result is 'tensor<2x4xf32>'}}
  %r = tandem.fused(%x) : (tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tandem.exp %a : tensor<4xf32>
    tandem.yield %e : tensor<4xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

func.func @fused_argument_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the body's arguments must have the types of the inputs, in order}}
  %r = tandem.fused(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %e = tandem.exp %a : tensor<2x4xf32>
    tandem.yield %e : tensor<2x4xf32>
  }
  return %r : tensor<4xf32>
}


// -----

func.func @fused_producer_shape(%a: tensor<1x3xf32>, %w: tensor<8x3xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tandem.fused(%a, %w, %c) : (tensor<1x3xf32>, tensor<8x3xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<1x3xf32>, %y: tensor<8x3xf32>, %z: tensor<4x8xf32>):
    // expected-error @+1 {{gives 'tensor<1x8xf32>', but the fused group it starts is 'tensor<4x8xf32>': a producer's product is the group's buffer}}
    %m = tandem.linear %x, %y : (tensor<1x3xf32>, tensor<8x3xf32>) -> tensor<1x8xf32>
    %e = tandem.add %m, %z : tensor<1x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    tandem.yield %e : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @fused_yields_input(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yields one of its inputs: a group yields a value its ops compute}}
  %r = tandem.fused(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %e = tandem.exp %y : tensor<4xf32>
    tandem.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_unused_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = tandem.fused(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{is unused in its fused group: every op of a group feeds its result}}
    %e = tandem.exp %x : tensor<4xf32>
    %n = tandem.neg %x : tensor<4xf32>
    tandem.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An input no op reads, even one that would not broadcast.
func.func @fused_unused_input(%a: tensor<4x1xf32>, %b: tensor<4x10xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{input #1 is unused in its fused group: every input is read by the group's ops}}
  %r = tandem.fused(%a, %b) : (tensor<4x1xf32>, tensor<4x10xf32>) -> tensor<4x1xf32> {
  ^bb0(%x: tensor<4x1xf32>, %y: tensor<4x10xf32>):
    %e = tandem.exp %x : tensor<4x1xf32>
    %n = tandem.neg %e : tensor<4x1xf32>
    tandem.yield %n : tensor<4x1xf32>
  }
  return %r : tensor<4x1xf32>
}

// -----

func.func @fused_pinned_inside(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = tandem.fused(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{carries 'tandem.pin' inside a fused group: the group is placed as one, and carries it}}
    %e = tandem.exp %x {tandem.pin = #tandem.device<gpu>} : tensor<4xf32>
    %n = tandem.neg %e : tensor<4xf32>
    tandem.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A view in a group reads an input or another view: the kernel reads
// inputs through views, it does not materialize a computed value.
func.func @fused_view_of_computed(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tandem.fused(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %e = tandem.exp %x : tensor<4x4xf32>
    // expected-error @+1 {{reads a value the group computes: a view in a fused group reads an input or another view}}
    %t = tandem.transpose %e {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
    %n = tandem.neg %t : tensor<4x4xf32>
    tandem.yield %n : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// Transposed, [4, 6] cannot be relabelled [24]: the chain is not one
// strided access of the input.
func.func @fused_view_not_strided(%a: tensor<6x4xf32>) -> tensor<24xf32> {
  %r = tandem.fused(%a) : (tensor<6x4xf32>) -> tensor<24xf32> {
  ^bb0(%x: tensor<6x4xf32>):
    %t = tandem.transpose %x {perm = array<i64: 1, 0>} : tensor<6x4xf32> -> tensor<4x6xf32>
    // expected-error @+1 {{ends a chain of views that is not one strided access of the group's input}}
    %f = tandem.reshape %t : tensor<4x6xf32> -> tensor<24xf32>
    %n = tandem.neg %f : tensor<24xf32>
    tandem.yield %n : tensor<24xf32>
  }
  return %r : tensor<24xf32>
}

// -----

// A producer reads the group's inputs as they are, not through views.
func.func @fused_producer_reads_view(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tandem.fused(%a, %b) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>):
    %t = tandem.transpose %y {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
    // expected-error @+1 {{cannot be part of a fused group}}
    %m = tandem.matmul %x, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %n = tandem.relu %m : tensor<4x4xf32>
    tandem.yield %n : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// A normalization ends a group on a value its elementwise ops compute (a
// GEMM's product alone leaves the kernel nothing to do).
func.func @fused_normalization_of_product(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tandem.fused(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %m = tandem.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    // expected-error @+1 {{ends a fused group: its input must be computed by the group's elementwise ops}}
    %s = tandem.softmax %m {axis = -1 : i64} : tensor<4x4xf32>
    tandem.yield %s : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @fused_normalization_scale_computed(%a: tensor<4x4xf32>, %g: tensor<2x2xf32>, %h: tensor<4xf32>) -> tensor<4x4xf32> {
  %r = tandem.fused(%a, %g, %h) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>, %y: tensor<2x2xf32>, %z: tensor<4xf32>):
    %e = tandem.exp %x : tensor<4x4xf32>
    %n = tandem.reshape %y : tensor<2x2xf32> -> tensor<4xf32>
    // expected-error @+1 {{ends a fused group: its operands other than its input must be the group's inputs}}
    %l = tandem.layer_norm %e, %n, %z {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
    tandem.yield %l : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// A normalization anywhere but last is not fusible.
func.func @fused_normalization_not_last(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tandem.fused(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %e = tandem.exp %x : tensor<4x4xf32>
    // expected-error @+1 {{cannot be part of a fused group}}
    %s = tandem.softmax %e {axis = -1 : i64} : tensor<4x4xf32>
    %n = tandem.neg %s : tensor<4x4xf32>
    tandem.yield %n : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// A folded weight's index is a non-negative i64, and only a weight has one.
func.func @folded_on_an_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tandem.folded' is a non-negative i64 on a tandem.weight}}
  %y = tandem.relu %x {tandem.folded = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @negative_folded() -> tensor<4xf32> {
  // expected-error @+1 {{'tandem.folded' is a non-negative i64 on a tandem.weight}}
  %w = tandem.weight "w" {tandem.folded = -1 : i64} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'tandem.at_load' is a function's symbol, on a function}}
func.func @at_load_not_a_symbol() attributes {tandem.at_load = 1 : i64} {
  return
}


// -----

// A reduction ends a group only after its elementwise ops: a GEMM's product
// is written to the group's buffer, which holds the reduction's outputs.
func.func @fused_product_reduced(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4xf32> {
  %r = tandem.fused(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %p = tandem.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %e = tandem.relu %p : tensor<4x8xf32>
    // expected-error @+1 {{ends a fused group that starts with a GEMM or convolution}}
    %s = tandem.reduce_sum %e {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
    tandem.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A reduction over a leading axis folds no contiguous runs: not in a group.
func.func @fused_leading_reduction(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %r = tandem.fused(%x) : (tensor<4x8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = tandem.exp %a : tensor<4x8xf32>
    // expected-error @+1 {{cannot be part of a fused group}}
    %s = tandem.reduce_sum %e {axes = array<i64: 0>} : tensor<4x8xf32> -> tensor<8xf32>
    tandem.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A reduction's input is what the group's kernel computes, not an input.
func.func @fused_reduction_of_input(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = tandem.fused(%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{its input must be computed by the group's elementwise ops}}
    %s = tandem.reduce_max %a {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
    tandem.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
