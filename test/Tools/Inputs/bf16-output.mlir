func.func @main(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %0 = tandem.cast %x : tensor<4xf32> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
