func.func @main(%x: tensor<4xf32>, %y: tensor<5xf32>) -> tensor<4xf32> {
  %0 = tandem.add %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
