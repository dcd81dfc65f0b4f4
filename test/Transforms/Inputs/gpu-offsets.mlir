// User story 2, the costly way: the crop's offsets are computed from the
// data by an argmax pinned to the GPU, so they must be copied back to the
// host that reads them. Placement prices that copy like any other.
func.func @main(%x: tensor<2048x2048xf32>) -> tensor<256x256xf32> {
  %w = tandem.weight "proj.weight" : tensor<2048x2048xf32>
  %y = tandem.matmul %x, %w : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %rows = tandem.slice %y {starts = array<i64: 0, 0>, limits = array<i64: 2, 2048>, strides = array<i64: 1, 1>} : tensor<2048x2048xf32> -> tensor<2x2048xf32>
  %offsets = tandem.argmax %rows {axis = 1 : i64, tandem.pin = #tandem.device<gpu>} : tensor<2x2048xf32> -> tensor<2xi64>
  %window = tandem.dynamic_slice %y, %offsets {sizes = array<i64: 256, 256>} : (tensor<2048x2048xf32>, tensor<2xi64>) -> tensor<256x256xf32>
  return %window : tensor<256x256xf32>
}
