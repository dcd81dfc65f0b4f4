// Exported by tandem.export from Sequential (torch 2.15.0+cu132), inputs: (256, 1024) torch.float32
func.func @main(%arg0: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %v0 = "tandem.weight"() {name = "0.weight"} : () -> tensor<1024x1024xf32> loc("0.weight")
  %v1 = "tandem.weight"() {name = "0.bias"} : () -> tensor<1024xf32> loc("0.bias")
  %v2 = "tandem.weight"() {name = "2.weight"} : () -> tensor<1024x1024xf32> loc("2.weight")
  %v3 = "tandem.weight"() {name = "2.bias"} : () -> tensor<1024xf32> loc("2.bias")
  %v4 = "tandem.weight"() {name = "4.weight"} : () -> tensor<1024x1024xf32> loc("4.weight")
  %v5 = "tandem.weight"() {name = "4.bias"} : () -> tensor<1024xf32> loc("4.bias")
  %v6 = "tandem.weight"() {name = "6.weight"} : () -> tensor<1024x1024xf32> loc("6.weight")
  %v7 = "tandem.weight"() {name = "6.bias"} : () -> tensor<1024xf32> loc("6.bias")
  %v9 = "tandem.linear"(%arg0, %v0, %v1) : (tensor<256x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32> loc("0"("torch/nn/modules/linear.py":134:0))
  %v10 = "tandem.relu"(%v9) : (tensor<256x1024xf32>) -> tensor<256x1024xf32> loc("1"("torch/nn/modules/activation.py":143:0))
  %v12 = "tandem.linear"(%v10, %v2, %v3) : (tensor<256x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32> loc("2"("torch/nn/modules/linear.py":134:0))
  %v13 = "tandem.relu"(%v12) : (tensor<256x1024xf32>) -> tensor<256x1024xf32> loc("3"("torch/nn/modules/activation.py":143:0))
  %v15 = "tandem.linear"(%v13, %v4, %v5) : (tensor<256x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32> loc("4"("torch/nn/modules/linear.py":134:0))
  %v16 = "tandem.relu"(%v15) : (tensor<256x1024xf32>) -> tensor<256x1024xf32> loc("5"("torch/nn/modules/activation.py":143:0))
  %v18 = "tandem.linear"(%v16, %v6, %v7) : (tensor<256x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32> loc("6"("torch/nn/modules/linear.py":134:0))
  %v19 = "tandem.relu"(%v18) : (tensor<256x1024xf32>) -> tensor<256x1024xf32> loc("7"("torch/nn/modules/activation.py":143:0))
  func.return %v19 : tensor<256x1024xf32>
}
