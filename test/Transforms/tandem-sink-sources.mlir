// RUN: tandem-opt %s --tandem-sink-sources | FileCheck %s

// Weights, fills and constants move to just before their first reader (a
// streamed weight is then copied just in time); those of one reader keep
// their order; an op with operands, or one nothing reads, stays.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[R:.*]] = tandem.relu
// CHECK-NEXT: %[[W:.*]] = tandem.weight "w"
// CHECK-NEXT: %[[M:.*]] = tandem.matmul %[[R]], %[[W]]
// CHECK-NEXT: %[[F:.*]] = tandem.fill
// CHECK-NEXT: %[[A:.*]] = tandem.add %[[M]], %[[F]]
// CHECK-NEXT: %[[U:.*]] = tandem.weight "unused"
// CHECK-NEXT: %[[V1:.*]] = tandem.weight "v1"
// CHECK-NEXT: %[[V2:.*]] = tandem.weight "v2"
// CHECK-NEXT: %[[B:.*]] = tandem.add %[[V1]], %[[V2]]
// CHECK-NEXT: %[[C:.*]] = tandem.matmul %[[A]], %[[B]]
// CHECK-NEXT: tandem.add %[[C]], %[[F]]
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = tandem.weight "w" : tensor<4x4xf32>
  %v1 = tandem.weight "v1" : tensor<4x4xf32>
  %f = tandem.fill(1.0 : f32) : tensor<4x4xf32>
  %v2 = tandem.weight "v2" : tensor<4x4xf32>
  %r = tandem.relu %x : tensor<4x4xf32>
  %m = tandem.matmul %r, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = tandem.add %m, %f : tensor<4x4xf32>
  %u = tandem.weight "unused" : tensor<4x4xf32>
  %b = tandem.add %v1, %v2 : tensor<4x4xf32>
  %c = tandem.matmul %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tandem.add %c, %f : tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}
