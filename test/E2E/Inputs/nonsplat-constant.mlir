func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
  %c = arith.constant dense<[1, 2]> : tensor<2xi64>
  %y = tandem.add %x, %c : tensor<2xi64>
  return %y : tensor<2xi64>
}
