// RUN: tandem-opt %s --tandem-fuse --split-input-file | FileCheck %s
// RUN: tandem-opt %s --tandem-fuse --split-input-file | tandem-opt --split-input-file | FileCheck %s

// A GEMM and the chain after it form one group: the GEMM is the group's
// producer (its operands are the group's first inputs), the chain its
// epilogue, with the bias broadcast when read.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0, %arg1, %arg2) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<8xf32>):
// CHECK-NEXT:   %[[M:.*]] = tandem.matmul %[[X]], %[[W]]
// CHECK-NEXT:   %[[S:.*]] = tandem.add %[[M]], %[[B]]
// CHECK-NEXT:   %[[G:.*]] = tandem.gelu %[[S]]
// CHECK-NEXT:   %[[T:.*]] = tandem.mul %[[G]], %[[M]]
// CHECK-NEXT:   tandem.yield %[[T]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @chain(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = tandem.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %s = tandem.add %m, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %g = tandem.gelu %s : tensor<4x8xf32>
  %t = tandem.mul %g, %m : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// A diamond (one value read by two ops of the group) is one group.
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0) : (tensor<16xf32>) -> tensor<16xf32> {
// CHECK: tandem.exp
// CHECK: tandem.log
// CHECK: tandem.sqrt
// CHECK: tandem.add
// CHECK: tandem.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @diamond(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tandem.exp %x : tensor<16xf32>
  %a = tandem.log %e : tensor<16xf32>
  %b = tandem.sqrt %e : tensor<16xf32>
  %r = tandem.add %a, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// A value read outside the group (here a result of the function) is
// materialized: its producer heads a group of its own, and the group that
// reads it takes it as an input.
// CHECK-LABEL: func.func @materialized
// CHECK-NEXT: %[[A:.*]] = tandem.fused(%arg0) : (tensor<16xf32>) -> tensor<16xf32> {
// CHECK: tandem.neg
// CHECK: tandem.exp
// CHECK: tandem.yield
// CHECK: %[[B:.*]] = tandem.fused(%[[A]]) : (tensor<16xf32>) -> tensor<16xf32> {
// CHECK: tandem.relu
// CHECK: tandem.sigmoid
// CHECK: tandem.yield
// CHECK: return %[[A]], %[[B]]
func.func @materialized(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %n = tandem.neg %x : tensor<16xf32>
  %e = tandem.exp %n : tensor<16xf32>
  %r = tandem.relu %e : tensor<16xf32>
  %s = tandem.sigmoid %r : tensor<16xf32>
  return %e, %s : tensor<16xf32>, tensor<16xf32>
}

// -----

// What must not fuse: an op of a smaller shape than the group (it is read
// broadcast, not recomputed per element), ops on other element types, and
// a lone fusible op (no group of one).
// CHECK-LABEL: func.func @not_fused
// CHECK-NEXT: %[[E:.*]] = tandem.exp %arg1 : tensor<8xf32>
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0, %[[E]])
// CHECK: tandem.add
// CHECK: tandem.tanh
// CHECK: tandem.yield
// CHECK: %[[H:.*]] = tandem.add %arg2, %arg2 : tensor<8xf16>
// CHECK-NEXT: %[[H2:.*]] = tandem.relu %[[H]] : tensor<8xf16>
// CHECK-NEXT: %[[I:.*]] = tandem.add %arg3, %arg3 : tensor<8xi64>
// CHECK-NEXT: %[[I2:.*]] = tandem.neg %[[I]] : tensor<8xi64>
// CHECK-NEXT: %[[L:.*]] = tandem.relu %arg1 : tensor<8xf32>
func.func @not_fused(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %h: tensor<8xf16>, %i: tensor<8xi64>)
    -> (tensor<4x8xf32>, tensor<8xf16>, tensor<8xi64>, tensor<8xf32>) {
  %e = tandem.exp %y : tensor<8xf32>
  %a = tandem.add %x, %e : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %t = tandem.tanh %a : tensor<4x8xf32>
  %h1 = tandem.add %h, %h : tensor<8xf16>, tensor<8xf16> -> tensor<8xf16>
  %h2 = tandem.relu %h1 : tensor<8xf16>
  %i1 = tandem.add %i, %i : tensor<8xi64>, tensor<8xi64> -> tensor<8xi64>
  %i2 = tandem.neg %i1 : tensor<8xi64>
  %l = tandem.relu %y : tensor<8xf32>
  return %t, %h2, %i2, %l : tensor<4x8xf32>, tensor<8xf16>, tensor<8xi64>, tensor<8xf32>
}

// -----

// Ops pinned to different devices are not grouped; ops of one pin are, and
// the group keeps the pin (its body's ops carry none).
// CHECK-LABEL: func.func @pins
// CHECK-NEXT: %[[A:.*]] = tandem.neg %arg0 {tandem.pin = #tandem.device<cpu>}
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%[[A]]) {tandem.pin = #tandem.device<gpu>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tandem.exp %{{.*}} : tensor<16xf32>
// CHECK-NEXT: tandem.relu %{{.*}} : tensor<16xf32>
// CHECK-NEXT: tandem.yield
func.func @pins(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = tandem.neg %x {tandem.pin = #tandem.device<cpu>} : tensor<16xf32>
  %b = tandem.exp %a {tandem.pin = #tandem.device<gpu>} : tensor<16xf32>
  %c = tandem.relu %b {tandem.pin = #tandem.device<gpu>} : tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

// One producer per group: of two GEMMs feeding one add, the add's first
// operand's joins, the other stays a GEMM of its own; a
// convolution with a bias and a ReLU is a group; a GEMM whose product is
// read elsewhere stays out (its product is materialized), and a producer's
// operands never join (the tanh stays out though its shape is the group's).
// CHECK-LABEL: func.func @producers
// CHECK-NEXT: %[[B:.*]] = tandem.matmul %arg0, %arg1
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0, %[[B]])
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8x8xf32>, %{{.*}}: tensor<8x8xf32>):
// CHECK-NEXT: tandem.matmul %[[X]], %[[X]]
// CHECK-NEXT: tandem.add
// CHECK-NEXT: tandem.yield
// CHECK: %[[C:.*]] = tandem.fused(%arg2, %arg3, %arg4)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tandem.conv2d
// CHECK-NEXT: tandem.relu
// CHECK-NEXT: tandem.yield
// CHECK: %[[M:.*]] = tandem.matmul %arg0, %arg1
// CHECK-NEXT: %[[R:.*]] = tandem.relu %[[M]]
// CHECK-NEXT: %[[T:.*]] = tandem.tanh %arg0
// CHECK-NEXT: %[[P:.*]] = tandem.fused(%[[T]], %arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tandem.matmul
// CHECK-NEXT: tandem.exp
// CHECK: return %[[F]], %[[C]], %[[M]], %[[R]], %[[P]]
func.func @producers(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>, %i: tensor<1x2x5x5xf32>,
                     %cw: tensor<3x2x3x3xf32>, %cb: tensor<3xf32>)
    -> (tensor<8x8xf32>, tensor<1x3x3x3xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %a = tandem.matmul %x, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = tandem.matmul %x, %y : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = tandem.add %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %c = tandem.conv2d %i, %cw, %cb : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %cr = tandem.relu %c : tensor<1x3x3x3xf32>
  %m = tandem.matmul %x, %y : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = tandem.relu %m : tensor<8x8xf32>
  %t = tandem.tanh %x : tensor<8x8xf32>
  %p = tandem.matmul %t, %y : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = tandem.exp %p : tensor<8x8xf32>
  return %s, %cr, %m, %r, %e : tensor<8x8xf32>, tensor<1x3x3x3xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A value the GEMM reads stays out of the GEMM's group even when the
// epilogue reads it too (a pre-activation residual): it is an input.
// CHECK-LABEL: func.func @residual
// CHECK-NEXT: %[[X:.*]] = tandem.relu %arg0
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%[[X]], %arg1, %arg2)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tandem.linear
// CHECK-NEXT: tandem.add
// CHECK-NEXT: tandem.yield
// CHECK: return %[[F]]
func.func @residual(%a: tensor<8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %x = tandem.relu %a : tensor<8x16xf32>
  %l = tandem.linear %x, %w, %b : (tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = tandem.add %l, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// A group reads its operands through views (transpose, slice, reshape,
// broadcast_to): the views move into the body on the group's inputs and
// are never materialized; a view other ops still read stays for them.
// CHECK-LABEL: func.func @through_views
// CHECK-NEXT: %[[T:.*]] = tandem.transpose %arg1
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0, %arg1, %arg2) : (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<8x4xf32>, %[[Z:.*]]: tensor<4x16xf32>):
// CHECK-NEXT:   %[[TY:.*]] = tandem.transpose %[[Y]] {perm = array<i64: 1, 0>}
// CHECK-NEXT:   %[[A:.*]] = tandem.add %[[X]], %[[TY]]
// CHECK-NEXT:   %[[S:.*]] = tandem.slice %[[Z]]
// CHECK-NEXT:   %[[M:.*]] = tandem.mul %[[A]], %[[S]]
// CHECK-NEXT:   tandem.yield %[[M]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]], %[[T]]
func.func @through_views(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>, %z: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %t = tandem.transpose %y {perm = array<i64: 1, 0>} : tensor<8x4xf32> -> tensor<4x8xf32>
  %a = tandem.add %x, %t : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s = tandem.slice %z {starts = array<i64: 0, 1>, limits = array<i64: 4, 16>, strides = array<i64: 1, 2>} : tensor<4x16xf32> -> tensor<4x8xf32>
  %m = tandem.mul %a, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %m, %t : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// One op reading a view that would copy is a group of its own: the copy
// goes. Through a reshape alone (a relabelling) it is not.
// CHECK-LABEL: func.func @one_op_through_a_copy
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0)
// CHECK:        tandem.transpose
// CHECK-NEXT:   tandem.relu
// CHECK:      %[[R:.*]] = tandem.reshape %arg1
// CHECK-NEXT: %[[N:.*]] = tandem.relu %[[R]]
// CHECK-NEXT: return %[[F]], %[[N]]
func.func @one_op_through_a_copy(%x: tensor<8x4xf32>, %y: tensor<32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %t = tandem.transpose %x {perm = array<i64: 1, 0>} : tensor<8x4xf32> -> tensor<4x8xf32>
  %r = tandem.relu %t : tensor<4x8xf32>
  %u = tandem.reshape %y : tensor<32xf32> -> tensor<4x8xf32>
  %n = tandem.relu %u : tensor<4x8xf32>
  return %r, %n : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Attention's head split: q, k and v are slices of one projection, each
// reshaped and transposed to [B, H, S, D], and k transposed again. Each
// chain that a GEMM reads becomes one group of views (one copy instead of
// three), and the views they shared go.
// CHECK-LABEL: func.func @head_split
// CHECK-NEXT: %[[Q:.*]] = tandem.fused(%arg0) : (tensor<2x8x48xf32>) -> tensor<2x2x8x8xf32> {
// CHECK:        tandem.yield
// CHECK:      %[[V:.*]] = tandem.fused(%arg0) : (tensor<2x8x48xf32>) -> tensor<2x2x8x8xf32> {
// CHECK:        tandem.yield
// CHECK:      %[[K:.*]] = tandem.fused(%arg0) : (tensor<2x8x48xf32>) -> tensor<2x2x8x8xf32> {
// CHECK:        tandem.slice {{.*}}starts = array<i64: 1, 0, 0, 0>
// CHECK:        tandem.transpose {{.*}}perm = array<i64: 0, 1, 3, 2>
// CHECK-NEXT:   tandem.yield
// CHECK:      %[[S:.*]] = tandem.matmul %[[Q]], %[[K]]
// CHECK-NEXT: %[[O:.*]] = tandem.matmul %[[S]], %[[V]]
// CHECK-NEXT: return %[[O]]
func.func @head_split(%p: tensor<2x8x48xf32>) -> tensor<2x2x8x8xf32> {
  %r = tandem.reshape %p : tensor<2x8x48xf32> -> tensor<2x8x3x16xf32>
  %t = tandem.transpose %r {perm = array<i64: 2, 0, 1, 3>} : tensor<2x8x3x16xf32> -> tensor<3x2x8x16xf32>
  %q0 = tandem.slice %t {starts = array<i64: 0, 0, 0, 0>, limits = array<i64: 1, 2, 8, 16>} : tensor<3x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %k0 = tandem.slice %t {starts = array<i64: 1, 0, 0, 0>, limits = array<i64: 2, 2, 8, 16>} : tensor<3x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %v0 = tandem.slice %t {starts = array<i64: 2, 0, 0, 0>, limits = array<i64: 3, 2, 8, 16>} : tensor<3x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %q1 = tandem.reshape %q0 : tensor<1x2x8x16xf32> -> tensor<2x8x2x8xf32>
  %k1 = tandem.reshape %k0 : tensor<1x2x8x16xf32> -> tensor<2x8x2x8xf32>
  %v1 = tandem.reshape %v0 : tensor<1x2x8x16xf32> -> tensor<2x8x2x8xf32>
  %q = tandem.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %k2 = tandem.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %v = tandem.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %k = tandem.transpose %k2 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %s = tandem.matmul %q, %k : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %o = tandem.matmul %s, %v : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  return %o : tensor<2x2x8x8xf32>
}

// -----

// Views are not absorbed where the chain is not one strided access (here a
// transposed [4, 6] flattened): the longest part that is, is; one
// transpose before a GEMM stays a transpose (no copy saved); views of
// other element types stay.
// CHECK-LABEL: func.func @views_kept
// CHECK-NEXT: %[[T:.*]] = tandem.transpose %arg0
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%[[T]])
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x6xf32>):
// CHECK-NEXT:   tandem.reshape %[[A]]
// CHECK-NEXT:   tandem.exp
// CHECK-NEXT:   tandem.neg
// CHECK:      %[[U:.*]] = tandem.transpose %arg1
// CHECK-NEXT: tandem.matmul %[[U]], %arg1
// CHECK:      %[[H:.*]] = tandem.transpose %arg2
// CHECK-NEXT: tandem.neg %[[H]]
func.func @views_kept(%x: tensor<6x4xf32>, %y: tensor<4x4xf32>, %h: tensor<2x4xf16>) -> (tensor<24xf32>, tensor<4x4xf32>, tensor<4x2xf16>) {
  %t = tandem.transpose %x {perm = array<i64: 1, 0>} : tensor<6x4xf32> -> tensor<4x6xf32>
  %f = tandem.reshape %t : tensor<4x6xf32> -> tensor<24xf32>
  %e0 = tandem.exp %f : tensor<24xf32>
  %e = tandem.neg %e0 : tensor<24xf32>
  %u = tandem.transpose %y {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %m = tandem.matmul %u, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = tandem.transpose %h {perm = array<i64: 1, 0>} : tensor<2x4xf16> -> tensor<4x2xf16>
  %n = tandem.neg %g : tensor<4x2xf16>
  return %e, %m, %n : tensor<24xf32>, tensor<4x4xf32>, tensor<4x2xf16>
}

// -----

// A softmax or layer norm of a group's result ends the group: it runs in
// place on the group's buffer after the generated kernel (attention's
// scaled scores; a residual add before a layer norm). Its other operands
// are the group's inputs.
// CHECK-LABEL: func.func @normalizations
// CHECK-NEXT: %[[S:.*]] = tandem.fused(%arg0, %arg1, %arg2) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32> {
// CHECK-NEXT: ^bb0(%[[Q:.*]]: tensor<2x8x8xf32>, %[[K:.*]]: tensor<2x8x8xf32>, %[[C:.*]]: tensor<f32>):
// CHECK-NEXT:   %[[M:.*]] = tandem.matmul %[[Q]], %[[K]]
// CHECK-NEXT:   %[[X:.*]] = tandem.mul %[[M]], %[[C]]
// CHECK-NEXT:   %[[P:.*]] = tandem.softmax %[[X]] {axis = -1 : i64}
// CHECK-NEXT:   tandem.yield %[[P]]
// CHECK:      %[[N:.*]] = tandem.fused(%arg3, %arg4, %arg5, %arg0, %arg6, %arg7)
// CHECK:        tandem.linear
// CHECK-NEXT:   tandem.add
// CHECK-NEXT:   %[[L:.*]] = tandem.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64}
// CHECK-NEXT:   tandem.yield %[[L]]
// CHECK:      return %[[S]], %[[N]]
func.func @normalizations(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>, %c: tensor<f32>, %x: tensor<2x8x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %g: tensor<8xf32>, %h: tensor<8xf32>) -> (tensor<2x8x8xf32>, tensor<2x8x8xf32>) {
  %m = tandem.matmul %q, %k : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = tandem.mul %m, %c : tensor<2x8x8xf32>, tensor<f32> -> tensor<2x8x8xf32>
  %p = tandem.softmax %s {axis = -1 : i64} : tensor<2x8x8xf32>
  %l = tandem.linear %x, %w, %b : (tensor<2x8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  %r = tandem.add %q, %l : tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  %n = tandem.layer_norm %r, %g, %h {axis = 2 : i64} : (tensor<2x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  return %p, %n : tensor<2x8x8xf32>, tensor<2x8x8xf32>
}

// -----

// Not ended by a normalization: one whose input a GEMM computes directly
// (there is no kernel to run before it), one whose input is read elsewhere,
// an l2_normalize on f16 (only f32 groups fuse).
// CHECK-LABEL: func.func @normalizations_apart
// CHECK-NEXT: %[[M:.*]] = tandem.matmul
// CHECK-NEXT: tandem.softmax %[[M]]
// CHECK-NEXT: %[[E:.*]] = tandem.exp
// CHECK-NEXT: tandem.softmax %[[E]]
// CHECK-NEXT: %[[N:.*]] = tandem.neg
// CHECK-NEXT: %[[N2:.*]] = tandem.neg %[[N]]
// CHECK-NEXT: tandem.l2_normalize %[[N2]]
func.func @normalizations_apart(%q: tensor<8x8xf32>, %h: tensor<8x8xf16>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>) {
  %m = tandem.matmul %q, %q : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = tandem.softmax %m {axis = -1 : i64} : tensor<8x8xf32>
  %e = tandem.exp %q : tensor<8x8xf32>
  %b = tandem.softmax %e {axis = -1 : i64} : tensor<8x8xf32>
  %n = tandem.neg %h : tensor<8x8xf16>
  %n2 = tandem.neg %n : tensor<8x8xf16>
  %c = tandem.l2_normalize %n2 {axis = -1 : i64} : tensor<8x8xf16>
  return %a, %b, %e, %c : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>
}

// -----

// A log_softmax or an l2_normalize ends a group as a softmax does: a
// classifier's temperature-scaled logits, a projection's bias and the L2
// normalization of its embedding along the first axis.
// CHECK-LABEL: func.func @normalizations_in_place
// CHECK-NEXT: %[[A:.*]] = tandem.fused(%arg0, %arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   %[[D:.*]] = tandem.div
// CHECK-NEXT:   %[[L:.*]] = tandem.log_softmax %[[D]] {axis = -1 : i64}
// CHECK-NEXT:   tandem.yield %[[L]]
// CHECK:      %[[B:.*]] = tandem.fused(%arg2, %arg3)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   %[[S:.*]] = tandem.add
// CHECK-NEXT:   %[[N:.*]] = tandem.l2_normalize %[[S]] {axis = 0 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT:   tandem.yield %[[N]]
// CHECK:      return %[[A]], %[[B]]
func.func @normalizations_in_place(%x: tensor<4x10xf32>, %t: tensor<f32>, %y: tensor<6x16xf32>, %b: tensor<16xf32>) -> (tensor<4x10xf32>, tensor<6x16xf32>) {
  %d = tandem.div %x, %t : tensor<4x10xf32>, tensor<f32> -> tensor<4x10xf32>
  %l = tandem.log_softmax %d {axis = -1 : i64} : tensor<4x10xf32>
  %s = tandem.add %y, %b : tensor<6x16xf32>, tensor<16xf32> -> tensor<6x16xf32>
  %n = tandem.l2_normalize %s {axis = 0 : i64, epsilon = 1.0e-6 : f32} : tensor<6x16xf32>
  return %l, %n : tensor<4x10xf32>, tensor<6x16xf32>
}

// -----

// A value a layer norm reads as its scale (or shift) stays materialized:
// it is not the group's to compute, even where all its readers are in the
// group.
// CHECK-LABEL: func.func @normalization_scale_stays
// CHECK-NEXT: %[[T:.*]] = tandem.add %arg0, %arg1
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%[[T]], %arg2, %arg3)
// CHECK:        tandem.mul
// CHECK-NEXT:   tandem.layer_norm
// CHECK-NEXT:   tandem.yield
// CHECK:      return %[[F]]
func.func @normalization_scale_stays(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %h: tensor<8xf32>) -> tensor<8xf32> {
  %t = tandem.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %y = tandem.mul %t, %c : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %n = tandem.layer_norm %y, %t, %h {axis = 0 : i64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %n : tensor<8xf32>
}

// -----

// Views of tensors without elements read nothing (any strides do); a slice
// whose step is far beyond its dimension is one element.
// CHECK-LABEL: func.func @views_edge
// CHECK:      tandem.fused(%arg0, %arg1)
// CHECK:      tandem.fused(%arg2, %arg3)
// CHECK:        tandem.slice
// CHECK-NEXT:   tandem.reshape
// CHECK-NEXT:   tandem.add
func.func @views_edge(%a: tensor<0x3xf32>, %b: tensor<3x0xf32>, %x: tensor<4x5xf32>, %y: tensor<2x2xf32>) -> (tensor<0x3xf32>, tensor<2x2xf32>) {
  %t = tandem.transpose %b {perm = array<i64: 1, 0>} : tensor<3x0xf32> -> tensor<0x3xf32>
  %s0 = tandem.add %a, %t : tensor<0x3xf32>, tensor<0x3xf32> -> tensor<0x3xf32>
  %e = tandem.exp %s0 : tensor<0x3xf32>
  %s = tandem.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 5>, strides = array<i64: 1, 9223372036854775807>} : tensor<4x5xf32> -> tensor<4x1xf32>
  %r = tandem.reshape %s : tensor<4x1xf32> -> tensor<2x2xf32>
  %v = tandem.add %r, %y : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %e, %v : tensor<0x3xf32>, tensor<2x2xf32>
}

// -----

// A group of views alone is read over a refinement of its result's shape:
// GPT-2's head split, q = x[:, :, :C] as [B, S, H, D] transposed and
// flattened to [B*H, S, D], whose B*H dimension is not one stride of x, is
// one copy (strided over [B, H, S, D]). An elementwise op reading the same
// chain reads it through the part that is strided per dimension only (here
// the last reshape: the slice and the transpose before it stay).
// CHECK-LABEL: func.func @head_split_flattened
// CHECK:      %[[T:.*]] = tandem.transpose
// CHECK-NEXT: %[[Q:.*]] = tandem.fused(%arg0) : (tensor<2x8x48xf32>) -> tensor<4x8x8xf32> {
// CHECK:        tandem.slice
// CHECK-NEXT:   tandem.reshape
// CHECK-NEXT:   tandem.transpose
// CHECK-NEXT:   tandem.reshape
// CHECK-NEXT:   tandem.yield
// CHECK:      tandem.fused(%[[T]])
// CHECK:        tandem.reshape
// CHECK-NEXT:   tandem.exp
// CHECK:      tandem.matmul %[[Q]], %[[Q]]
func.func @head_split_flattened(%x: tensor<2x8x48xf32>) -> (tensor<4x8x8xf32>, tensor<4x8x8xf32>) {
  %q0 = tandem.slice %x {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 8, 16>} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %q1 = tandem.reshape %q0 : tensor<2x8x16xf32> -> tensor<2x8x2x8xf32>
  %q2 = tandem.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %q = tandem.reshape %q2 : tensor<2x2x8x8xf32> -> tensor<4x8x8xf32>
  %e = tandem.exp %q : tensor<4x8x8xf32>
  %e2 = tandem.neg %e : tensor<4x8x8xf32>
  %s = tandem.matmul %q, %q : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  return %s, %e2 : tensor<4x8x8xf32>, tensor<4x8x8xf32>
}

// -----

// Masks: a compare's mask read by a select and a cast joins the group that
// reads it, and a mask input (broadcast, read through a transpose) is a leaf
// like any other input.
// CHECK-LABEL: func.func @masks
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0, %arg1, %arg2) : (tensor<4x8xf32>, tensor<8xf32>, tensor<1x4xi1>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[T:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<1x4xi1>):
// CHECK-NEXT:   %[[C:.*]] = tandem.compare gt, %[[X]], %[[T]]
// CHECK-NEXT:   %[[N:.*]] = tandem.neg %[[X]]
// CHECK-NEXT:   %[[S:.*]] = tandem.select %[[C]], %[[X]], %[[N]]
// CHECK-NEXT:   %[[B:.*]] = tandem.cast %[[C]] : tensor<4x8xi1> -> tensor<4x8xf32>
// CHECK-NEXT:   %[[A:.*]] = tandem.add %[[S]], %[[B]]
// CHECK-NEXT:   %[[V:.*]] = tandem.transpose %[[M]] {perm = array<i64: 1, 0>} : tensor<1x4xi1> -> tensor<4x1xi1>
// CHECK-NEXT:   %[[R:.*]] = tandem.select %[[V]], %[[A]], %[[X]]
// CHECK-NEXT:   tandem.yield %[[R]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @masks(%x: tensor<4x8xf32>, %t: tensor<8xf32>, %m: tensor<1x4xi1>) -> tensor<4x8xf32> {
  %c = tandem.compare gt, %x, %t : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %n = tandem.neg %x : tensor<4x8xf32>
  %s = tandem.select %c, %x, %n : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = tandem.cast %c : tensor<4x8xi1> -> tensor<4x8xf32>
  %a = tandem.add %s, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %v = tandem.transpose %m {perm = array<i64: 1, 0>} : tensor<1x4xi1> -> tensor<4x1xi1>
  %r = tandem.select %v, %a, %x : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A mask read outside the group (a result) is materialized: its compare
// stays out, and roots no group (a group writes f32). A cast to an integer
// and a compare of integers are not fusible: the chain around them fuses
// without them.
// CHECK-LABEL: func.func @masks_apart
// CHECK-NEXT: %[[C:.*]] = tandem.compare lt, %arg0, %arg1
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%[[C]], %arg0, %arg1)
// CHECK:        tandem.select
// CHECK:        tandem.exp
// CHECK:        tandem.yield
// CHECK:      %[[I:.*]] = tandem.cast %[[F]] : tensor<8xf32> -> tensor<8xi64>
// CHECK-NEXT: %[[K:.*]] = tandem.compare eq, %[[I]], %arg2
// CHECK-NEXT: %[[G:.*]] = tandem.select %[[K]], %[[F]], %arg0
// CHECK-NEXT: return %[[C]], %[[G]]
func.func @masks_apart(%x: tensor<8xf32>, %y: tensor<8xf32>, %k: tensor<8xi64>) -> (tensor<8xi1>, tensor<8xf32>) {
  %c = tandem.compare lt, %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %s = tandem.select %c, %x, %y : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %e = tandem.exp %s : tensor<8xf32>
  %i = tandem.cast %e : tensor<8xf32> -> tensor<8xi64>
  %q = tandem.compare eq, %i, %k : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi1>
  %g = tandem.select %q, %e, %x : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %c, %g : tensor<8xi1>, tensor<8xf32>
}

// -----

// A constant (an f32 fill, of any shape that broadcasts) read by a group is
// computed in its body, not read as an input: the fill read by the group
// alone goes; one read outside as well stays for that reader. A fill of
// integers is not a constant of the generated kernels.
// CHECK-LABEL: func.func @constants
// CHECK-NEXT: %[[K:.*]] = tandem.fill(2.000000e+00 : f32) : tensor<8xf32>
// CHECK-NEXT: %[[I:.*]] = tandem.fill(1 : i64) : tensor<8xi64>
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:   %[[INF:.*]] = tandem.fill(0xFF800000 : f32) : tensor<f32>
// CHECK-NEXT:   %[[C:.*]] = tandem.compare gt, %[[X]], %[[INF]]
// CHECK-NEXT:   %[[TWO:.*]] = tandem.fill(2.000000e+00 : f32) : tensor<8xf32>
// CHECK-NEXT:   %[[M:.*]] = tandem.mul %[[X]], %[[TWO]]
// CHECK-NEXT:   %[[S:.*]] = tandem.select %[[C]], %[[M]], %[[INF]]
// CHECK-NEXT:   tandem.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]], %[[K]], %[[I]]
func.func @constants(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xi64>) {
  %inf = tandem.fill(0xFF800000 : f32) : tensor<f32>
  %two = tandem.fill(2.0 : f32) : tensor<8xf32>
  %one = tandem.fill(1 : i64) : tensor<8xi64>
  %c = tandem.compare gt, %x, %inf : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
  %m = tandem.mul %x, %two : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %s = tandem.select %c, %m, %inf : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %s, %two, %one : tensor<4x8xf32>, tensor<8xf32>, tensor<8xi64>
}

// -----

// One op alone is a group where the group computes a constant that nothing
// else reads (the fill no longer runs); where the fill stays for another
// reader, the op stays as it is.
// CHECK-LABEL: func.func @lone_constant
// CHECK-NEXT: %[[K:.*]] = tandem.fill(3.000000e+00 : f32) : tensor<f32>
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0) : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8xf32>):
// CHECK-NEXT:   %[[H:.*]] = tandem.fill(1.250000e-01 : f32) : tensor<f32>
// CHECK-NEXT:   %[[M:.*]] = tandem.mul %[[X]], %[[H]]
// CHECK-NEXT:   tandem.yield %[[M]] : tensor<8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[A:.*]] = tandem.add %arg0, %[[K]]
// CHECK-NEXT: return %[[F]], %[[A]], %[[K]]
func.func @lone_constant(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<f32>) {
  %h = tandem.fill(0.125 : f32) : tensor<f32>
  %k = tandem.fill(3.0 : f32) : tensor<f32>
  %m = tandem.mul %x, %h : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %a = tandem.add %x, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %m, %a, %k : tensor<8xf32>, tensor<8xf32>, tensor<f32>
}

// -----

// A value that a GEMM or a normalization of the group reads is an input of
// the group as it is: the elementwise ops that read it too read the input
// (its fill, or its view, is not cloned), so the GEMM stays first and the
// normalization reads inputs alone.
// CHECK-LABEL: func.func @read_whole
// CHECK-NEXT: %[[K:.*]] = tandem.fill(1.500000e+00 : f32) : tensor<8x8xf32>
// CHECK-NEXT: %[[G:.*]] = tandem.fill(2.000000e+00 : f32) : tensor<8xf32>
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0, %[[K]]) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8x8xf32>, %[[KI:.*]]: tensor<8x8xf32>):
// CHECK-NEXT:   %[[P:.*]] = tandem.matmul %[[X]], %[[KI]]
// CHECK-NEXT:   %[[A:.*]] = tandem.add %[[P]], %[[KI]]
// CHECK-NEXT:   tandem.yield %[[A]]
// CHECK:      %[[N:.*]] = tandem.fused(%arg0, %[[G]]) : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT: ^bb0(%[[Y:.*]]: tensor<8x8xf32>, %[[GI:.*]]: tensor<8xf32>):
// CHECK-NEXT:   %[[S:.*]] = tandem.add %[[Y]], %[[GI]]
// CHECK-NEXT:   %[[L:.*]] = tandem.layer_norm %[[S]], %[[GI]], %[[GI]]
// CHECK-NEXT:   tandem.yield %[[L]]
func.func @read_whole(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %k = tandem.fill(1.5 : f32) : tensor<8x8xf32>
  %g = tandem.fill(2.0 : f32) : tensor<8xf32>
  %p = tandem.matmul %x, %k : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = tandem.add %p, %k : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %s = tandem.add %x, %g : tensor<8x8xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %n = tandem.layer_norm %s, %g, %g {axis = -1 : i64} : (tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  return %a, %n : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// The same for a view: the GEMM reads the transpose as its input, and so
// does the add.
// CHECK-LABEL: func.func @read_whole_view
// CHECK-NEXT: %[[T:.*]] = tandem.transpose %arg0
// CHECK-NEXT: %[[F:.*]] = tandem.fused(%arg0, %[[T]])
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8x8xf32>, %[[TI:.*]]: tensor<8x8xf32>):
// CHECK-NEXT:   %[[P:.*]] = tandem.matmul %[[X]], %[[TI]]
// CHECK-NEXT:   %[[A:.*]] = tandem.add %[[P]], %[[TI]]
// CHECK-NEXT:   tandem.yield %[[A]]
func.func @read_whole_view(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %t = tandem.transpose %x {perm = array<i64: 1, 0>} : tensor<8x8xf32> -> tensor<8x8xf32>
  %p = tandem.matmul %x, %t : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = tandem.add %p, %t : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}

// -----

// A reduction over its input's trailing axes ends the group that computes
// its input (T5's and LLaMA's RMSNorm: the square and its mean): the group's
// result is the reduction's, and the squares never reach memory. Sums,
// means, maxima and minima over one or several trailing axes, kept or not.
// CHECK-LABEL: func.func @reductions
// CHECK-NEXT: %[[M:.*]] = tandem.fused(%arg0) : (tensor<4x64xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x64xf32>):
// CHECK-NEXT:   %[[SQ:.*]] = tandem.mul %[[X]], %[[X]]
// CHECK-NEXT:   %[[MEAN:.*]] = tandem.reduce_mean %[[SQ]] {axes = array<i64: -1>, keepdims = true}
// CHECK-NEXT:   tandem.yield %[[MEAN]] : tensor<4x1xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.*]] = tandem.fused(%arg1, %arg2) : (tensor<2x3x4x5xf32>, tensor<5xf32>) -> tensor<2x3xf32> {
// CHECK:        tandem.add
// CHECK-NEXT:   tandem.exp
// CHECK-NEXT:   tandem.reduce_sum %{{.*}} {axes = array<i64: 3, 2>}
// CHECK:      %[[MAX:.*]] = tandem.fused(%arg0) : (tensor<4x64xf32>) -> tensor<4xf32> {
// CHECK:        tandem.abs
// CHECK-NEXT:   tandem.reduce_max
// CHECK:      %[[MIN:.*]] = tandem.fused(%arg0) : (tensor<4x64xf32>) -> tensor<4xf32> {
// CHECK:        tandem.neg
// CHECK-NEXT:   tandem.reduce_min
// CHECK:      return %[[M]], %[[S]], %[[MAX]], %[[MIN]]
func.func @reductions(%x: tensor<4x64xf32>, %y: tensor<2x3x4x5xf32>, %b: tensor<5xf32>) -> (tensor<4x1xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %sq = tandem.mul %x, %x : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  %m = tandem.reduce_mean %sq {axes = array<i64: -1>, keepdims = true} : tensor<4x64xf32> -> tensor<4x1xf32>
  %a = tandem.add %y, %b : tensor<2x3x4x5xf32>, tensor<5xf32> -> tensor<2x3x4x5xf32>
  %e = tandem.exp %a : tensor<2x3x4x5xf32>
  %s = tandem.reduce_sum %e {axes = array<i64: 3, 2>} : tensor<2x3x4x5xf32> -> tensor<2x3xf32>
  %abs = tandem.abs %x : tensor<4x64xf32>
  %max = tandem.reduce_max %abs {axes = array<i64: 1>} : tensor<4x64xf32> -> tensor<4xf32>
  %neg = tandem.neg %x : tensor<4x64xf32>
  %min = tandem.reduce_min %neg {axes = array<i64: 1>} : tensor<4x64xf32> -> tensor<4xf32>
  return %m, %s, %max, %min : tensor<4x1xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// What does not end a group: a reduction over leading or inner axes (an
// output's elements are not one run), over more than 32768 elements an
// output (the runtime's fold takes longer runs in pieces), of integers, of
// an input another op reads too (it is materialized anyway), of an input
// nothing computes. Nor does a GEMM join a reduction's group (its product
// is written to the group's buffer, which holds the reduction's outputs):
// the matmul stays apart, and the group reads its product.
// CHECK-LABEL: func.func @reductions_apart
// CHECK-NEXT: %[[E0:.*]] = tandem.exp %arg0
// CHECK-NEXT: tandem.reduce_sum %[[E0]] {axes = array<i64: 0>}
// CHECK-NEXT: %[[E1:.*]] = tandem.exp %arg0
// CHECK-NEXT: tandem.reduce_sum %[[E1]] {axes = array<i64: 0, 1>}
// CHECK-NEXT: %[[E2:.*]] = tandem.exp %arg1
// CHECK-NEXT: tandem.reduce_sum %[[E2]] {axes = array<i64: 1>}
// CHECK-NEXT: %[[N:.*]] = tandem.neg %arg2
// CHECK-NEXT: tandem.reduce_sum %[[N]]
// CHECK-NEXT: %[[E3:.*]] = tandem.exp %arg0
// CHECK-NEXT: tandem.reduce_max %[[E3]]
// CHECK-NEXT: tandem.reduce_min %arg0
// CHECK-NEXT: %[[P:.*]] = tandem.matmul %arg0, %arg3
// CHECK-NEXT: tandem.fused(%[[P]]) : (tensor<4x8x16xf32>) -> tensor<4x8xf32> {
// CHECK:        tandem.relu
// CHECK-NEXT:   tandem.reduce_sum
func.func @reductions_apart(%x: tensor<4x8x16xf32>, %long: tensor<2x32769xf32>, %i: tensor<4x8xi64>, %w: tensor<16x16xf32>)
    -> (tensor<8x16xf32>, tensor<16xf32>, tensor<2xf32>, tensor<4xi64>, tensor<4x8xf32>, tensor<4x8x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e0 = tandem.exp %x : tensor<4x8x16xf32>
  %s0 = tandem.reduce_sum %e0 {axes = array<i64: 0>} : tensor<4x8x16xf32> -> tensor<8x16xf32>
  %e1 = tandem.exp %x : tensor<4x8x16xf32>
  %s1 = tandem.reduce_sum %e1 {axes = array<i64: 0, 1>} : tensor<4x8x16xf32> -> tensor<16xf32>
  %e2 = tandem.exp %long : tensor<2x32769xf32>
  %s2 = tandem.reduce_sum %e2 {axes = array<i64: 1>} : tensor<2x32769xf32> -> tensor<2xf32>
  %n = tandem.neg %i : tensor<4x8xi64>
  %s3 = tandem.reduce_sum %n {axes = array<i64: 1>} : tensor<4x8xi64> -> tensor<4xi64>
  %e3 = tandem.exp %x : tensor<4x8x16xf32>
  %s4 = tandem.reduce_max %e3 {axes = array<i64: 2>} : tensor<4x8x16xf32> -> tensor<4x8xf32>
  %s5 = tandem.reduce_min %x {axes = array<i64: 2>} : tensor<4x8x16xf32> -> tensor<4x8xf32>
  %p = tandem.matmul %x, %w : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
  %r = tandem.relu %p : tensor<4x8x16xf32>
  %s6 = tandem.reduce_sum %r {axes = array<i64: 2>} : tensor<4x8x16xf32> -> tensor<4x8xf32>
  return %s0, %s1, %s2, %s3, %s4, %e3, %s5, %s6 : tensor<8x16xf32>, tensor<16xf32>, tensor<2xf32>, tensor<4xi64>, tensor<4x8xf32>, tensor<4x8x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
