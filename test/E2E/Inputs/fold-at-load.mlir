// A hand-written model whose weights go through transforms before the
// activations meet them: a transposed weight, a scale computed from a
// weight and a constant, and a mask built from iotas. --tandem-fold-at-load
// computes all three once, when the weights are loaded.
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x32xf32> {
  %w = tandem.weight "fc.weight" : tensor<32x16xf32>
  %b = tandem.weight "fc.bias" : tensor<32xf32>
  %g = tandem.weight "gate" : tensor<32xf32>
  %p = tandem.weight "pos" : tensor<32x8xf32>
  %wt = tandem.transpose %w {perm = array<i64: 1, 0>} : tensor<32x16xf32> -> tensor<16x32xf32>
  %y = tandem.matmul %x, %wt : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %yb = tandem.add %y, %b : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %half = tandem.fill(0.5 : f32) : tensor<f32>
  %gh = tandem.mul %g, %half : tensor<32xf32>, tensor<f32> -> tensor<32xf32>
  %e = tandem.exp %gh : tensor<32xf32>
  %z = tandem.mul %yb, %e : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %pt = tandem.transpose %p {perm = array<i64: 1, 0>} : tensor<32x8xf32> -> tensor<8x32xf32>
  %zp = tandem.add %z, %pt : tensor<8x32xf32>
  %rows = "tandem.iota"() {axis = 0 : i64} : () -> tensor<8x32xi64>
  %cols = "tandem.iota"() {axis = 1 : i64} : () -> tensor<8x32xi64>
  %keep = "tandem.compare"(%cols, %rows) {predicate = #tandem.predicate<le>} : (tensor<8x32xi64>, tensor<8x32xi64>) -> tensor<8x32xi1>
  %zero = tandem.fill(0.0 : f32) : tensor<f32>
  %out = "tandem.select"(%keep, %zp, %zero) : (tensor<8x32xi1>, tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  return %out : tensor<8x32xf32>
}
