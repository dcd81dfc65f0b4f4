// Two weights streamed to the GPU, placed and with their transfers: the
// schedule tests compile it as it is (a placed model keeps its devices).
func.func @main(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %xg = tandem.transfer %x : tensor<4x256xf32> to #tandem.device<gpu>
  %w1 = tandem.weight "w1" {tandem.device = #tandem.device<cpu>} : tensor<256x256xf32>
  %w1g = tandem.transfer %w1 : tensor<256x256xf32> to #tandem.device<gpu>
  %a = tandem.matmul %xg, %w1g {tandem.device = #tandem.device<gpu>} : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %w2 = tandem.weight "w2" {tandem.device = #tandem.device<cpu>} : tensor<256x256xf32>
  %w2g = tandem.transfer %w2 : tensor<256x256xf32> to #tandem.device<gpu>
  %b = tandem.matmul %a, %w2g {tandem.device = #tandem.device<gpu>} : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %bc = tandem.transfer %b : tensor<4x256xf32> to #tandem.device<cpu>
  return %bc : tensor<4x256xf32>
}
