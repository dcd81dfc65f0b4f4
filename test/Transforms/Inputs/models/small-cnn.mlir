// Exported by tandem.export from Sequential (torch 2.15.0+cu132), inputs: (16, 3, 64, 64) torch.float32
func.func @main(%arg0: tensor<16x3x64x64xf32>) -> tensor<16x10xf32> {
  %v0 = "tandem.weight"() {name = "0.weight"} : () -> tensor<32x3x3x3xf32> loc("0.weight")
  %v1 = "tandem.weight"() {name = "0.bias"} : () -> tensor<32xf32> loc("0.bias")
  %v2 = "tandem.weight"() {name = "1.weight"} : () -> tensor<32xf32> loc("1.weight")
  %v3 = "tandem.weight"() {name = "1.bias"} : () -> tensor<32xf32> loc("1.bias")
  %v4 = "tandem.weight"() {name = "4.weight"} : () -> tensor<64x32x3x3xf32> loc("4.weight")
  %v5 = "tandem.weight"() {name = "4.bias"} : () -> tensor<64xf32> loc("4.bias")
  %v6 = "tandem.weight"() {name = "8.weight"} : () -> tensor<10x64xf32> loc("8.weight")
  %v7 = "tandem.weight"() {name = "8.bias"} : () -> tensor<10xf32> loc("8.bias")
  %v8 = "tandem.weight"() {name = "1.running_mean"} : () -> tensor<32xf32> loc("1.running_mean")
  %v9 = "tandem.weight"() {name = "1.running_var"} : () -> tensor<32xf32> loc("1.running_var")
  %v11 = "tandem.conv2d"(%arg0, %v0, %v1) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<16x3x64x64xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<16x32x64x64xf32> loc("0"("torch/nn/modules/conv.py":565:0))
  %v12 = "tandem.batch_norm"(%v11, %v2, %v3, %v8, %v9) {epsilon = 9.999999747e-06 : f32} : (tensor<16x32x64x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32x64x64xf32> loc("1"("torch/nn/modules/batchnorm.py":210:0))
  %v13 = "tandem.relu"(%v12) : (tensor<16x32x64x64xf32>) -> tensor<16x32x64x64xf32> loc("2"("torch/nn/modules/activation.py":143:0))
  %v14 = "tandem.max_pool2d"(%v13) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0>} : (tensor<16x32x64x64xf32>) -> tensor<16x32x32x32xf32> loc("3"("torch/nn/modules/pooling.py":224:0))
  %v15 = "tandem.conv2d"(%v14, %v4, %v5) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<16x32x32x32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>) -> tensor<16x64x32x32xf32> loc("4"("torch/nn/modules/conv.py":565:0))
  %v16 = "tandem.relu"(%v15) : (tensor<16x64x32x32xf32>) -> tensor<16x64x32x32xf32> loc("5"("torch/nn/modules/activation.py":143:0))
  %v17 = "tandem.reduce_mean"(%v16) {axes = array<i64: 2, 3>, keepdims = true} : (tensor<16x64x32x32xf32>) -> tensor<16x64x1x1xf32> loc("6"("torch/nn/modules/pooling.py":1514:0))
  %v18 = "tandem.reshape"(%v17) : (tensor<16x64x1x1xf32>) -> tensor<16x64xf32> loc("7"("torch/nn/modules/flatten.py":55:0))
  %v20 = "tandem.linear"(%v18, %v6, %v7) : (tensor<16x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<16x10xf32> loc("8"("torch/nn/modules/linear.py":134:0))
  func.return %v20 : tensor<16x10xf32>
}
