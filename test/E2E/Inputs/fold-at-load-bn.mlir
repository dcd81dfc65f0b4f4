// Batch norms after a convolution and after a linear layer, hand-written:
// --tandem-fold-at-load folds each into the weights before it and computes
// the new weights once, at load.
func.func @main(%x: tensor<2x3x6x6xf32>, %r: tensor<5x8xf32>) -> (tensor<2x4x6x6xf32>, tensor<5x6xf32>) {
  %w = tandem.weight "conv.weight" : tensor<4x3x3x3xf32>
  %g = tandem.weight "bn.weight" : tensor<4xf32>
  %b = tandem.weight "bn.bias" : tensor<4xf32>
  %m = tandem.weight "bn.running_mean" : tensor<4xf32>
  %v = tandem.weight "bn.running_var" : tensor<4xf32>
  %c = "tandem.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %y = "tandem.batch_norm"(%c, %g, %b, %m, %v) {epsilon = 1.0e-03 : f32} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %lw = tandem.weight "fc.weight" : tensor<6x8xf32>
  %lb = tandem.weight "fc.bias" : tensor<6xf32>
  %g2 = tandem.weight "bn1d.weight" : tensor<6xf32>
  %b2 = tandem.weight "bn1d.bias" : tensor<6xf32>
  %m2 = tandem.weight "bn1d.running_mean" : tensor<6xf32>
  %v2 = tandem.weight "bn1d.running_var" : tensor<6xf32>
  %l = "tandem.linear"(%r, %lw, %lb) : (tensor<5x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<5x6xf32>
  %z = "tandem.batch_norm"(%l, %g2, %b2, %m2, %v2) {epsilon = 1.0e-05 : f32} : (tensor<5x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<5x6xf32>
  return %y, %z : tensor<2x4x6x6xf32>, tensor<5x6xf32>
}
