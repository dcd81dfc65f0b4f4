// The same relu written twice: CSE merges them before placement.
func.func @main(%x: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %a = tandem.relu %x : tensor<1024x1024xf32>
  %b = tandem.relu %x : tensor<1024x1024xf32>
  return %a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>
}
