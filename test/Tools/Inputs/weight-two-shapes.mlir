func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = tandem.weight "w" : tensor<4xf32>
  %v = tandem.weight "w" : tensor<2x2xf32>
  %r = tandem.reshape %v : tensor<2x2xf32> -> tensor<4xf32>
  %0 = tandem.add %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = tandem.add %0, %r : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
