// The generic form as the Python exporter writes it: attributes in the
// dictionary with the kinds the IR contract fixes, defaults left out. It must
// parse, verify and print in the custom form.
// RUN: tandem-opt %s | FileCheck %s

// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %ids: tensor<2x5xi64>, %off: tensor<2xi64>) -> tensor<1x4x6x6xf32> {
  // CHECK: tandem.weight "table" : tensor<100x8xf32>
  %t = "tandem.weight"() {name = "table"} : () -> tensor<100x8xf32>
  // CHECK: tandem.fill(3 : i64) : tensor<2xi64>
  %f = "tandem.fill"() {value = 3 : i64} : () -> tensor<2xi64>
  // CHECK: tandem.conv2d %{{.*}}, %{{.*}} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %c = "tandem.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  // CHECK: tandem.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>} : tensor<1x4x6x6xf32> -> tensor<1x4x3x3xf32>
  %p = "tandem.max_pool2d"(%c) {kernel = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  // CHECK: tandem.reduce_sum %{{.*}} {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x4x3x3xf32> -> tensor<1x4x1x1xf32>
  %r = "tandem.reduce_sum"(%p) {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  // An epsilon equal to the default is elided.
// CHECK: tandem.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} :
  %g = "tandem.fill"() {value = 1.0 : f32} : () -> tensor<4x1x1xf32>
  %n = "tandem.layer_norm"(%r, %g, %g) {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<1x4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>) -> tensor<1x4x1x1xf32>
  // CHECK: tandem.embedding %{{.*}}, %{{.*}} : (tensor<100x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
  %e = "tandem.embedding"(%t, %ids) : (tensor<100x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
  // CHECK: tandem.compare ge, %{{.*}}, %{{.*}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %m = "tandem.compare"(%off, %f) {predicate = #tandem.predicate<ge>} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  // CHECK: tandem.dynamic_slice %{{.*}}, %{{.*}} {sizes = array<i64: 1, 4, 8>, tandem.pin = #tandem.device<cpu>} : (tensor<2x5x8xf32>
  %o3 = "tandem.fill"() {value = 0 : i64} : () -> tensor<3xi64>
  %d = "tandem.dynamic_slice"(%e, %o3) {sizes = array<i64: 1, 4, 8>, tandem.pin = #tandem.device<cpu>} : (tensor<2x5x8xf32>, tensor<3xi64>) -> tensor<1x4x8xf32>
  // CHECK: tandem.transfer %{{.*}} : tensor<1x4x8xf32> to #tandem.device<gpu, 1>
  %tr = "tandem.transfer"(%d) {to = #tandem.device<gpu, 1>} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %c : tensor<1x4x6x6xf32>
}
