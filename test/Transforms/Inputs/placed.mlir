// A placed function with its copies explicit, as --tandem-insert-transfers
// leaves it.
func.func @main(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %xg = tandem.transfer %x : tensor<64x64xf32> to #tandem.device<gpu>
  %a = tandem.relu %xg {tandem.device = #tandem.device<gpu>} : tensor<64x64xf32>
  %ac = tandem.transfer %a : tensor<64x64xf32> to #tandem.device<cpu>
  %b = tandem.neg %a {tandem.device = #tandem.device<gpu>} : tensor<64x64xf32>
  %bc = tandem.transfer %b : tensor<64x64xf32> to #tandem.device<cpu>
  %c = tandem.exp %ac {tandem.device = #tandem.device<cpu>} : tensor<64x64xf32>
  %d = tandem.add %ac, %c {tandem.device = #tandem.device<cpu>} : tensor<64x64xf32>
  return %d, %bc : tensor<64x64xf32>, tensor<64x64xf32>
}
