// The recommender of user story 1 at CI size: a 20000 x 64 table (5 MB)
// that a 4 MiB GPU budget cannot hold, 8 lookups per sample, batch 256.
func.func @main(%ids: tensor<256x8xi64>, %dense: tensor<256x13xf32>) -> tensor<256x1xf32> {
  %table = tandem.weight "embedding.weight" : tensor<20000x64xf32>
  %rows = tandem.embedding %table, %ids : (tensor<20000x64xf32>, tensor<256x8xi64>) -> tensor<256x8x64xf32>
  %bag = tandem.reduce_sum %rows {axes = array<i64: 1>} : tensor<256x8x64xf32> -> tensor<256x64xf32>
  %w0 = tandem.weight "bottom.weight" : tensor<64x13xf32>
  %b0 = tandem.weight "bottom.bias" : tensor<64xf32>
  %d0 = tandem.linear %dense, %w0, %b0 : (tensor<256x13xf32>, tensor<64x13xf32>, tensor<64xf32>) -> tensor<256x64xf32>
  %d1 = tandem.relu %d0 : tensor<256x64xf32>
  %x0 = tandem.concat %bag, %d1 {axis = 1 : i64} : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x128xf32>
  %w1 = tandem.weight "top.0.weight" : tensor<512x128xf32>
  %b1 = tandem.weight "top.0.bias" : tensor<512xf32>
  %h1 = tandem.linear %x0, %w1, %b1 : (tensor<256x128xf32>, tensor<512x128xf32>, tensor<512xf32>) -> tensor<256x512xf32>
  %a1 = tandem.relu %h1 : tensor<256x512xf32>
  %w2 = tandem.weight "top.1.weight" : tensor<512x512xf32>
  %b2 = tandem.weight "top.1.bias" : tensor<512xf32>
  %h2 = tandem.linear %a1, %w2, %b2 : (tensor<256x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<256x512xf32>
  %a2 = tandem.relu %h2 : tensor<256x512xf32>
  %w3 = tandem.weight "top.2.weight" : tensor<1x512xf32>
  %b3 = tandem.weight "top.2.bias" : tensor<1xf32>
  %h3 = tandem.linear %a2, %w3, %b3 : (tensor<256x512xf32>, tensor<1x512xf32>, tensor<1xf32>) -> tensor<256x1xf32>
  %score = tandem.sigmoid %h3 : tensor<256x1xf32>
  return %score : tensor<256x1xf32>
}
