// User story 3: a 13 -> 16 -> 32 -> 1 regression MLP at batch 128 (the
// Boston housing model): launch overhead and copies dominate, so the CPU wins.
func.func @main(%x: tensor<128x13xf32>) -> tensor<128x1xf32> {
  %w0 = tandem.weight "fc0.weight" : tensor<16x13xf32>
  %b0 = tandem.weight "fc0.bias" : tensor<16xf32>
  %h0 = tandem.linear %x, %w0, %b0 : (tensor<128x13xf32>, tensor<16x13xf32>, tensor<16xf32>) -> tensor<128x16xf32>
  %a0 = tandem.relu %h0 : tensor<128x16xf32>
  %w1 = tandem.weight "fc1.weight" : tensor<32x16xf32>
  %b1 = tandem.weight "fc1.bias" : tensor<32xf32>
  %h1 = tandem.linear %a0, %w1, %b1 : (tensor<128x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<128x32xf32>
  %a1 = tandem.relu %h1 : tensor<128x32xf32>
  %w2 = tandem.weight "fc2.weight" : tensor<1x32xf32>
  %b2 = tandem.weight "fc2.bias" : tensor<1xf32>
  %y = tandem.linear %a1, %w2, %b2 : (tensor<128x32xf32>, tensor<1x32xf32>, tensor<1xf32>) -> tensor<128x1xf32>
  return %y : tensor<128x1xf32>
}
