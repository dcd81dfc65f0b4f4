func.func @main(%table: tensor<10x3xf32>, %ids: tensor<4xi64>) -> tensor<4x3xf32> {
  %rows = tandem.embedding %table, %ids : (tensor<10x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %rows : tensor<4x3xf32>
}
