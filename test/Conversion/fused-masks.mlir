// RUN: tandem-opt %s --tandem-fuse --tandem-placement-pipeline="device-profile=host" \
// RUN:   --convert-tandem-to-llvm | FileCheck %s

// A group with masks: a compare of floats (C++'s: ordered greater-than,
// false on NaN), a select by it, a cast of it to 0/1, and a mask input
// broadcast along the rows. The mask input is read as the runtime stores a
// bool (bytes, one value per row here) and is a mask where its byte is not
// 0, once per row; the compare's mask stays in registers. No mask is stored: the group
// writes f32.

// CHECK-LABEL: llvm.func internal @tandem_fused_0(
// CHECK: %[[BYTE:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK: %[[ROWMASK:.*]] = llvm.icmp "ne" %[[BYTE]], %{{.*}} : i8
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: %[[LANE:.*]] = llvm.insertelement %[[ROWMASK]], %{{.*}} : vector<8xi1>
// CHECK: %[[SPLAT:.*]] = llvm.shufflevector %[[LANE]], %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xi1>
// CHECK: %[[GT:.*]] = llvm.fcmp "ogt" %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: llvm.select %[[GT]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: llvm.uitofp %[[GT]] : vector<8xi1> to vector<8xf32>
// CHECK: llvm.select %[[SPLAT]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK: llvm.fcmp "ogt" %{{.*}}, %{{.*}} : f32
// CHECK: llvm.select %[[ROWMASK]], %{{.*}}, %{{.*}} : i1, f32
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NOT: llvm.store %{{.*}} : {{.*}}i1,
func.func @main(%x: tensor<4x37xf32>, %t: tensor<37xf32>, %m: tensor<4x1xi1>) -> tensor<4x37xf32> {
  %c = tandem.compare gt, %x, %t : (tensor<4x37xf32>, tensor<37xf32>) -> tensor<4x37xi1>
  %n = tandem.neg %x : tensor<4x37xf32>
  %s = tandem.select %c, %x, %n : (tensor<4x37xi1>, tensor<4x37xf32>, tensor<4x37xf32>) -> tensor<4x37xf32>
  %b = tandem.cast %c : tensor<4x37xi1> -> tensor<4x37xf32>
  %a = tandem.add %s, %b : tensor<4x37xf32>, tensor<4x37xf32> -> tensor<4x37xf32>
  %r = tandem.select %m, %a, %x : (tensor<4x1xi1>, tensor<4x37xf32>, tensor<4x37xf32>) -> tensor<4x37xf32>
  return %r : tensor<4x37xf32>
}
