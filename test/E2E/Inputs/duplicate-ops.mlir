// Duplicates that CSE merges: placement must price the merged program.
func.func @main(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %w = tandem.weight "w" : tensor<256x256xf32>
  %a = tandem.matmul %x, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %b = tandem.matmul %x, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %c = tandem.relu %a : tensor<256x256xf32>
  %d = tandem.relu %b : tensor<256x256xf32>
  %e = tandem.add %c, %d : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  %f = tandem.matmul %e, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %g = tandem.matmul %e, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %h = tandem.add %f, %g : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %h : tensor<256x256xf32>
}
