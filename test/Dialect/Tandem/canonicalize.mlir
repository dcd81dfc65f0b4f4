// Folds that are plainly right.
// RUN: tandem-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = tandem.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = tandem.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = tandem.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_back
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_back(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tandem.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = tandem.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @identity_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tandem.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A reshape with another user keeps it; the second reshape reads x directly.
// CHECK-LABEL: func.func @reshape_shared
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[A:.*]] = tandem.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[B:.*]] = tandem.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @reshape_shared(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = tandem.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = tandem.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %0, %1 : tensor<6xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = tandem.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  // [2, 3, 4] -> perm [1, 2, 0] -> [3, 4, 2] -> perm [1, 0, 2] -> [4, 3, 2]
  %0 = tandem.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = tandem.transpose %0 {perm = array<i64: 1, 0, 2>} : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_back
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_back(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tandem.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = tandem.transpose %0 {perm = array<i64: 2, 0, 1>} : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @identity_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tandem.transpose %x {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @shape_is_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<[4, 3, 2]> : tensor<3xi64>
// CHECK-NEXT: return %[[C]]
func.func @shape_is_constant(%x: tensor<4x3x2xf32>) -> tensor<3xi64> {
  %0 = tandem.shape %x : tensor<4x3x2xf32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @identity_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x1xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_slice(%x: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %0 = tandem.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 1>, strides = array<i64: 1, 3>} : tensor<4x1xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// A proper window stays.
// CHECK-LABEL: func.func @window_slice
// CHECK: tandem.slice
func.func @window_slice(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %0 = tandem.slice %x {starts = array<i64: 1, 0>, limits = array<i64: 3, 4>} : tensor<4x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @identity_broadcast_cast_dynamic_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %{{.*}}: tensor<2xi64>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]]
func.func @identity_broadcast_cast_dynamic_slice(%x: tensor<4x3xf32>, %o: tensor<2xi64>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = tandem.broadcast_to %x : tensor<4x3xf32> -> tensor<4x3xf32>
  %1 = tandem.cast %x : tensor<4x3xf32> -> tensor<4x3xf32>
  %2 = tandem.dynamic_slice %x, %o {sizes = array<i64: 4, 3>} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Arguments arrive on the host: moving one to the CPU moves nothing.
// CHECK-LABEL: func.func @transfer_to_where_it_is
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[G:.*]] = tandem.transfer %[[X]] : tensor<4xf32> to #tandem.device<gpu>
// CHECK-NEXT: %[[R:.*]] = tandem.relu %[[G]] {tandem.device = #tandem.device<gpu>}
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @transfer_to_where_it_is(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = tandem.transfer %x : tensor<4xf32> to #tandem.device<cpu>
  %1 = tandem.transfer %x : tensor<4xf32> to #tandem.device<gpu>
  %2 = tandem.relu %1 {tandem.device = #tandem.device<gpu>} : tensor<4xf32>
  %3 = tandem.transfer %2 : tensor<4xf32> to #tandem.device<gpu>
  return %0, %3 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @there_and_back
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @there_and_back(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tandem.transfer %x : tensor<4xf32> to #tandem.device<gpu>
  %1 = tandem.transfer %0 : tensor<4xf32> to #tandem.device<cpu>
  return %1 : tensor<4xf32>
}

// -----

// Two hops collapse into one; a GPU 0 value moved to GPU 1 still moves.
// CHECK-LABEL: func.func @two_hops
// CHECK: %[[R:.*]] = tandem.relu
// CHECK-NEXT: %[[T:.*]] = tandem.transfer %[[R]] : tensor<4xf32> to #tandem.device<gpu, 1>
// CHECK-NEXT: return %[[T]]
func.func @two_hops(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = tandem.transfer %x : tensor<4xf32> to #tandem.device<gpu>
  %r = tandem.relu %g {tandem.device = #tandem.device<gpu>} : tensor<4xf32>
  %0 = tandem.transfer %r : tensor<4xf32> to #tandem.device<cpu>
  %1 = tandem.transfer %0 : tensor<4xf32> to #tandem.device<gpu, 1>
  return %1 : tensor<4xf32>
}

// -----

// Where the value lives is unknown: the transfer stays.
// CHECK-LABEL: func.func @unknown_source
// CHECK: tandem.relu
// CHECK-NEXT: tandem.transfer
func.func @unknown_source(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tandem.relu %x : tensor<4xf32>
  %0 = tandem.transfer %r : tensor<4xf32> to #tandem.device<gpu>
  return %0 : tensor<4xf32>
}

// -----

// A linear on rows flattened from a 3-D tensor and unflattened after (as
// PyTorch decomposes nn.Linear) is one linear on the 3-D tensor: the
// reshapes meet and fold.
// CHECK-LABEL: func.func @linear_between_reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<8x64x256xf32>, %[[W:.*]]: tensor<1024x256xf32>, %[[B:.*]]: tensor<1024xf32>)
// CHECK-NEXT: %[[L:.*]] = tandem.linear %[[X]], %[[W]], %[[B]] : (tensor<8x64x256xf32>, tensor<1024x256xf32>, tensor<1024xf32>) -> tensor<8x64x1024xf32>
// CHECK-NEXT: %[[R:.*]] = tandem.relu %[[L]]
// CHECK-NEXT: return %[[R]]
func.func @linear_between_reshapes(%x: tensor<8x64x256xf32>, %w: tensor<1024x256xf32>, %b: tensor<1024xf32>) -> tensor<8x64x1024xf32> {
  %0 = tandem.reshape %x : tensor<8x64x256xf32> -> tensor<512x256xf32>
  %1 = tandem.linear %0, %w, %b : (tensor<512x256xf32>, tensor<1024x256xf32>, tensor<1024xf32>) -> tensor<512x1024xf32>
  %2 = tandem.reshape %1 : tensor<512x1024xf32> -> tensor<8x64x1024xf32>
  %3 = tandem.relu %2 : tensor<8x64x1024xf32>
  return %3 : tensor<8x64x1024xf32>
}

// -----

// Not moved: a reshape that changes the last dimension (it mixes the
// linear's outputs of several rows), a linear read twice, a placed one.
// CHECK-LABEL: func.func @linear_reshapes_kept
// CHECK: tandem.linear {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: tandem.reshape {{.*}} -> tensor<32xf32>
// CHECK: tandem.linear {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: tandem.reshape {{.*}} -> tensor<2x2x8xf32>
// CHECK: tandem.linear {{.*}}tandem.pin{{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: tandem.reshape {{.*}} -> tensor<2x2x8xf32>
func.func @linear_reshapes_kept(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> (tensor<32xf32>, tensor<2x2x8xf32>, tensor<4x8xf32>, tensor<2x2x8xf32>) {
  %0 = tandem.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %1 = tandem.reshape %0 : tensor<4x8xf32> -> tensor<32xf32>
  %2 = tandem.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %3 = tandem.reshape %2 : tensor<4x8xf32> -> tensor<2x2x8xf32>
  %4 = tandem.linear %x, %w {tandem.pin = #tandem.device<gpu>} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %5 = tandem.reshape %4 : tensor<4x8xf32> -> tensor<2x2x8xf32>
  return %1, %3, %2, %5 : tensor<32xf32>, tensor<2x2x8xf32>, tensor<4x8xf32>, tensor<2x2x8xf32>
}

// -----

// A transpose of a linear's rows moves to its input when the input's rows
// are no longer (K <= N); with K > N it stays, the smaller copy.
// CHECK-LABEL: func.func @transpose_above_linear
// CHECK-SAME: (%[[X:.*]]: tensor<64x8x256xf32>, %[[W:.*]]: tensor<256x256xf32>, %[[V:.*]]: tensor<64x256xf32>)
// CHECK-NEXT: %[[T:.*]] = tandem.transpose %[[X]] {perm = array<i64: 1, 0, 2>} : tensor<64x8x256xf32> -> tensor<8x64x256xf32>
// CHECK-NEXT: %[[L:.*]] = tandem.linear %[[T]], %[[W]] : (tensor<8x64x256xf32>, tensor<256x256xf32>) -> tensor<8x64x256xf32>
// CHECK-NEXT: %[[M:.*]] = tandem.linear %[[X]], %[[V]] : (tensor<64x8x256xf32>, tensor<64x256xf32>) -> tensor<64x8x64xf32>
// CHECK-NEXT: %[[U:.*]] = tandem.transpose %[[M]] {perm = array<i64: 1, 0, 2>} : tensor<64x8x64xf32> -> tensor<8x64x64xf32>
// CHECK-NEXT: return %[[L]], %[[U]]
func.func @transpose_above_linear(%x: tensor<64x8x256xf32>, %w: tensor<256x256xf32>, %v: tensor<64x256xf32>) -> (tensor<8x64x256xf32>, tensor<8x64x64xf32>) {
  %0 = tandem.linear %x, %w : (tensor<64x8x256xf32>, tensor<256x256xf32>) -> tensor<64x8x256xf32>
  %1 = tandem.transpose %0 {perm = array<i64: 1, 0, 2>} : tensor<64x8x256xf32> -> tensor<8x64x256xf32>
  %2 = tandem.linear %x, %v : (tensor<64x8x256xf32>, tensor<64x256xf32>) -> tensor<64x8x64xf32>
  %3 = tandem.transpose %2 {perm = array<i64: 1, 0, 2>} : tensor<64x8x64xf32> -> tensor<8x64x64xf32>
  return %1, %3 : tensor<8x64x256xf32>, tensor<8x64x64xf32>
}

// -----

// Attention's head merge, [B, H, S, D] -> [S, B, H, D] -> [S, B, H*D] ->
// [B, S, H*D]: the second transpose moves above the merge and folds into
// the first, one transpose and one reshape.
// CHECK-LABEL: func.func @transpose_above_merge
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x16xf32>)
// CHECK-NEXT: %[[T:.*]] = tandem.transpose %[[X]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
// CHECK-NEXT: %[[R:.*]] = tandem.reshape %[[T]] : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @transpose_above_merge(%x: tensor<2x4x8x16xf32>) -> tensor<2x8x64xf32> {
  %0 = tandem.transpose %x {perm = array<i64: 2, 0, 1, 3>} : tensor<2x4x8x16xf32> -> tensor<8x2x4x16xf32>
  %1 = tandem.reshape %0 : tensor<8x2x4x16xf32> -> tensor<8x2x64xf32>
  %2 = tandem.transpose %1 {perm = array<i64: 1, 0, 2>} : tensor<8x2x64xf32> -> tensor<2x8x64xf32>
  return %2 : tensor<2x8x64xf32>
}

// -----

// A reshape that splits a dimension (or has dimensions of 1) keeps the
// transpose after it.
// CHECK-LABEL: func.func @transpose_after_split
// CHECK-NEXT: tandem.reshape
// CHECK-NEXT: tandem.transpose
// CHECK-NEXT: tandem.reshape
// CHECK-NEXT: tandem.transpose
func.func @transpose_after_split(%x: tensor<8x6xf32>, %y: tensor<8x6xf32>) -> (tensor<2x8x3xf32>, tensor<6x1x8xf32>) {
  %0 = tandem.reshape %x : tensor<8x6xf32> -> tensor<8x2x3xf32>
  %1 = tandem.transpose %0 {perm = array<i64: 1, 0, 2>} : tensor<8x2x3xf32> -> tensor<2x8x3xf32>
  %2 = tandem.reshape %y : tensor<8x6xf32> -> tensor<8x1x6xf32>
  %3 = tandem.transpose %2 {perm = array<i64: 2, 1, 0>} : tensor<8x1x6xf32> -> tensor<6x1x8xf32>
  return %1, %3 : tensor<2x8x3xf32>, tensor<6x1x8xf32>
}

// -----

// A batched matmul's batch dimensions regrouped after it are regrouped on
// its operands instead (attention's scores [B*H, S, S] as [B, H, S, S]),
// so the product meets the scaling that reads it. Not where an operand is
// broadcast along the batch, or the last two dimensions change.
// CHECK-LABEL: func.func @reshape_above_matmul
// CHECK-SAME: (%[[Q:.*]]: tensor<8x64x16xf32>, %[[K:.*]]: tensor<8x16x64xf32>, %[[W:.*]]: tensor<16x64xf32>)
// CHECK-DAG:  %[[A:.*]] = tandem.reshape %[[Q]] : tensor<8x64x16xf32> -> tensor<2x4x64x16xf32>
// CHECK-DAG:  %[[B:.*]] = tandem.reshape %[[K]] : tensor<8x16x64xf32> -> tensor<2x4x16x64xf32>
// CHECK:      %[[S:.*]] = tandem.matmul %[[A]], %[[B]] : (tensor<2x4x64x16xf32>, tensor<2x4x16x64xf32>) -> tensor<2x4x64x64xf32>
// CHECK-NEXT: %[[M:.*]] = tandem.matmul %[[Q]], %[[W]]
// CHECK-NEXT: tandem.reshape %[[M]] : tensor<8x64x64xf32> -> tensor<2x4x64x64xf32>
// CHECK-NEXT: %[[N:.*]] = tandem.matmul %[[Q]], %[[K]]
// CHECK-NEXT: tandem.reshape %[[N]] : tensor<8x64x64xf32> -> tensor<8x4096xf32>
func.func @reshape_above_matmul(%q: tensor<8x64x16xf32>, %k: tensor<8x16x64xf32>, %w: tensor<16x64xf32>) -> (tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<8x4096xf32>) {
  %0 = tandem.matmul %q, %k : (tensor<8x64x16xf32>, tensor<8x16x64xf32>) -> tensor<8x64x64xf32>
  %1 = tandem.reshape %0 : tensor<8x64x64xf32> -> tensor<2x4x64x64xf32>
  %2 = tandem.matmul %q, %w : (tensor<8x64x16xf32>, tensor<16x64xf32>) -> tensor<8x64x64xf32>
  %3 = tandem.reshape %2 : tensor<8x64x64xf32> -> tensor<2x4x64x64xf32>
  %4 = tandem.matmul %q, %k : (tensor<8x64x16xf32>, tensor<8x16x64xf32>) -> tensor<8x64x64xf32>
  %5 = tandem.reshape %4 : tensor<8x64x64xf32> -> tensor<8x4096xf32>
  return %1, %3, %5 : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<8x4096xf32>
}
