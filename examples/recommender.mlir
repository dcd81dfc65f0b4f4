// A DLRM-style recommender: the model of user story 1.
//
// Each of 4096 samples looks up 8 ids in one embedding table of
// 10,000,000 x 150 float32 (5.59 GiB), sums them into a 150-wide bag, and
// joins it with a 150-wide projection of 13 dense features; an MLP tower
// (300 -> 1024 -> 1024 -> 1) scores the pair. On a 32 GiB V100 with a budget
// of a few GiB, the table cannot live on the GPU; the lookup reads only
// 4096 x 8 rows, so it is cheap on the CPU, while the tower's GEMMs are
// where the GPU pays.
func.func @main(%ids: tensor<4096x8xi64>, %dense: tensor<4096x13xf32>) -> tensor<4096x1xf32> {
  // Sparse features: a bag of 8 embeddings per sample.
  %table = tandem.weight "embedding.weight" : tensor<10000000x150xf32>
  %rows = tandem.embedding %table, %ids : (tensor<10000000x150xf32>, tensor<4096x8xi64>) -> tensor<4096x8x150xf32>
  %bag = tandem.reduce_sum %rows {axes = array<i64: 1>} : tensor<4096x8x150xf32> -> tensor<4096x150xf32>

  // Dense features: one linear layer up to the embedding width.
  %w0 = tandem.weight "bottom.weight" : tensor<150x13xf32>
  %b0 = tandem.weight "bottom.bias" : tensor<150xf32>
  %d0 = tandem.linear %dense, %w0, %b0 : (tensor<4096x13xf32>, tensor<150x13xf32>, tensor<150xf32>) -> tensor<4096x150xf32>
  %d1 = tandem.relu %d0 : tensor<4096x150xf32>

  // The tower.
  %x0 = tandem.concat %bag, %d1 {axis = 1 : i64} : (tensor<4096x150xf32>, tensor<4096x150xf32>) -> tensor<4096x300xf32>
  %w1 = tandem.weight "top.0.weight" : tensor<1024x300xf32>
  %b1 = tandem.weight "top.0.bias" : tensor<1024xf32>
  %h1 = tandem.linear %x0, %w1, %b1 : (tensor<4096x300xf32>, tensor<1024x300xf32>, tensor<1024xf32>) -> tensor<4096x1024xf32>
  %a1 = tandem.relu %h1 : tensor<4096x1024xf32>
  %w2 = tandem.weight "top.1.weight" : tensor<1024x1024xf32>
  %b2 = tandem.weight "top.1.bias" : tensor<1024xf32>
  %h2 = tandem.linear %a1, %w2, %b2 : (tensor<4096x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<4096x1024xf32>
  %a2 = tandem.relu %h2 : tensor<4096x1024xf32>
  %w3 = tandem.weight "top.2.weight" : tensor<1x1024xf32>
  %b3 = tandem.weight "top.2.bias" : tensor<1xf32>
  %h3 = tandem.linear %a2, %w3, %b3 : (tensor<4096x1024xf32>, tensor<1x1024xf32>, tensor<1xf32>) -> tensor<4096x1xf32>
  %score = tandem.sigmoid %h3 : tensor<4096x1xf32>
  return %score : tensor<4096x1xf32>
}
