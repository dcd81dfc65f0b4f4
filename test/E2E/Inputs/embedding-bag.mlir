func.func @main(%table: tensor<10x3xf32>, %ids: tensor<4xi64>, %offsets: tensor<2xi64>) -> tensor<2x3xf32> {
  %bags = tandem.embedding_bag %table, %ids, %offsets {mode = "mean"} : (tensor<10x3xf32>, tensor<4xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  return %bags : tensor<2x3xf32>
}
