//===- TandemViews.h - view ops read as strided accesses --------*- C++ -*-===//
//
// A fused group reads its inputs through view ops (reshape, transpose,
// slice, broadcast_to) without materializing them: a chain of views from a
// row-major buffer is, when it can be, one strided access, element
// (i0, ..., in) of the view being element offset + sum(i_d * strides[d]) of
// the buffer. The fusion pass, the fused op's verifier and the code
// generator share this one reading of a chain.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMVIEWS_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMVIEWS_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tandem {

/// Whether `op` is a view op a fused group may read through: reshape,
/// transpose, slice and broadcast_to, whose results are their operand's
/// elements picked by index arithmetic alone.
bool isViewOp(Operation *op);

/// Whether `op` is a view op that moves data when it runs on its own (all
/// but a reshape, which relabels its buffer).
bool isDataMovingView(Operation *op);

/// A view of `base`'s row-major buffer: element i of the view (of `shape`)
/// is element offset + sum(i[d] * strides[d]) of the buffer (a stride of 0
/// repeats a value).
struct StridedAccess {
  Value base;
  int64_t offset = 0;
  llvm::SmallVector<int64_t> shape, strides;
};

/// How a chain's end is read: per dimension of its shape (each dimension
/// one stride), or over a refinement of its shape (each dimension split
/// where its elements are not one run of the base: the row-major order of
/// the refined shape is the end's; a group of views alone, which reads
/// nothing else, iterates over it).
enum class ViewReading { PerDimension, Refined };

/// The strided access that `views` (view ops, the first reading `base`,
/// each other the previous one's result; none: `base` itself) make of
/// `base`; failure where the chain is not one strided access (a reshape
/// that merges dimensions a transpose or a slice has separated). A view
/// without elements reads nothing: its strides are 0.
/// Refined, the access's shape is the refinement (dimensions of 1 left out)
/// and fails only where a reshape splits an element run it cannot.
FailureOr<StridedAccess>
composeViews(Value base, llvm::ArrayRef<Operation *> views,
             ViewReading reading = ViewReading::PerDimension);

/// The view ops that `value` is the end of, base side first, followed while
/// `follow` admits each; empty if `value` is not a view op's result.
llvm::SmallVector<Operation *>
viewChainOf(Value value, llvm::function_ref<bool(Operation *)> follow);

} // namespace mlir::tandem

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMVIEWS_H
