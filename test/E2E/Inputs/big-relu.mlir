// Enough elementwise work for the runtime's worker threads to start.
func.func @main(%x: tensor<2048x1024xf32>) -> tensor<2048x1024xf32> {
  %0 = tandem.relu %x : tensor<2048x1024xf32>
  return %0 : tensor<2048x1024xf32>
}
