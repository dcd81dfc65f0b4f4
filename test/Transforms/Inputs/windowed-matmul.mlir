// User story 2: a large matmul whose output is cropped by dynamic_slice,
// with offsets computed from the output's shape by a small integer op. The
// offsets are read on the host: computed on the CPU they need no copy.
func.func @main(%x: tensor<2048x2048xf32>) -> tensor<256x256xf32> {
  %w = tandem.weight "proj.weight" : tensor<2048x2048xf32>
  %y = tandem.matmul %x, %w : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %shape = tandem.shape %y : tensor<2048x2048xf32> -> tensor<2xi64>
  %crop = tandem.fill(256 : i64) : tensor<2xi64>
  %offsets = tandem.sub %shape, %crop : tensor<2xi64>
  %window = tandem.dynamic_slice %y, %offsets {sizes = array<i64: 256, 256>} : (tensor<2048x2048xf32>, tensor<2xi64>) -> tensor<256x256xf32>
  return %window : tensor<256x256xf32>
}
