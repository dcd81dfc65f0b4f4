// Two results, so that a run can fail between writing them.
func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %q = tandem.div %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %s = tandem.add %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %q, %s : tensor<4xi32>, tensor<4xi32>
}
