// big-relu.mlir through a 1x1 convolution of identity weights (exactly the
// input, as two channels of 1024 x 1024): the convolution runs as im2col +
// GEMM and takes the runtime's scratch buffers, which must not keep a
// dlopen'd library mapped (library-unload.test).
func.func @main(%x: tensor<2048x1024xf32>) -> tensor<2048x1024xf32> {
  %w = arith.constant dense<[[[[1.0]], [[0.0]]], [[[0.0]], [[1.0]]]]> : tensor<2x2x1x1xf32>
  %r = tandem.reshape %x : tensor<2048x1024xf32> -> tensor<1x2x1024x1024xf32>
  %c = tandem.conv2d %r, %w : (tensor<1x2x1024x1024xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x1024x1024xf32>
  %y = tandem.relu %c : tensor<1x2x1024x1024xf32>
  %o = tandem.reshape %y : tensor<1x2x1024x1024xf32> -> tensor<2048x1024xf32>
  return %o : tensor<2048x1024xf32>
}
