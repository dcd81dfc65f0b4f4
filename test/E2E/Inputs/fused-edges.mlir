// Fused groups at the edges: tensors without elements, read directly and
// through a transpose; a slice whose step is beyond its dimension.
func.func @main(%a: tensor<0x3xf32>, %b: tensor<3x0xf32>, %x: tensor<4x5xf32>, %y: tensor<2x2xf32>) -> (tensor<0x3xf32>, tensor<2x2xf32>) {
  %t = tandem.transpose %b {perm = array<i64: 1, 0>} : tensor<3x0xf32> -> tensor<0x3xf32>
  %s0 = tandem.add %a, %t : tensor<0x3xf32>, tensor<0x3xf32> -> tensor<0x3xf32>
  %e = tandem.exp %s0 : tensor<0x3xf32>
  %s = tandem.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 5>, strides = array<i64: 1, 9223372036854775807>} : tensor<4x5xf32> -> tensor<4x1xf32>
  %r = tandem.reshape %s : tensor<4x1xf32> -> tensor<2x2xf32>
  %v = tandem.add %r, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %e, %v : tensor<0x3xf32>, tensor<2x2xf32>
}
