// A weight pinned to the GPU whose only reader is pinned to the CPU: it is
// resident on the GPU (what the pin says), and its reader uses the host copy.
func.func @main(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %w = tandem.weight "w" {tandem.pin = #tandem.device<gpu>} : tensor<256x256xf32>
  %y = tandem.matmul %x, %w {tandem.pin = #tandem.device<cpu>} : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}
