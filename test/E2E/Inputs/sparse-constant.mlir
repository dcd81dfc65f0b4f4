func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant sparse<[[1]], [2.0]> : tensor<4xf32>
  %y = tandem.add %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}
