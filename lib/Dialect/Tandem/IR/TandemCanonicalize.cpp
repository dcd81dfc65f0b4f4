//===- TandemCanonicalize.cpp - rewrite patterns of --canonicalize --------===//
//
// A linear layer on a tensor of more than two dimensions reaches the IR as
// PyTorch decomposes it: flatten the rows, addmm, unflatten (and, in
// attention, a transpose back to the caller's layout). A linear maps each
// row on its own, so relabelling or permuting the rows of its result is the
// same as doing so to its input rows. Moving those views above the linear
// puts it next to the elementwise ops that read it, where --tandem-fuse
// makes them its epilogue, and leaves the views on its input, where a
// group reads them without a copy. A batched matmul's batch dimensions
// regroup the same way.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/IR/TandemOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// The linear whose result `view` alone reads, when the rewrite may move
/// the view above it: neither carries attributes of placement or planning
/// that the rewrite would have to split.
LinearOp movableLinear(Operation *view) {
  auto linear = view->getOperand(0).getDefiningOp<LinearOp>();
  if (!linear || !linear->hasOneUse() ||
      !linear->getDiscardableAttrDictionary().empty() ||
      !view->getDiscardableAttrDictionary().empty())
    return {};
  return linear;
}

/// The linear of `x` with `linear`'s weight and bias, giving `type`.
LinearOp relinear(PatternRewriter &rewriter, LinearOp linear, Value x,
                  Type type) {
  return rewriter.create<LinearOp>(linear.getLoc(), type, x, linear.getW(),
                                   linear.getB());
}

/// reshape(linear(x)) -> linear(reshape(x)) where the reshape keeps the
/// last dimension: it regroups rows only.
struct ReshapeAboveLinear : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    LinearOp linear = movableLinear(reshape);
    auto type = cast<RankedTensorType>(reshape.getType());
    if (!linear || type.getRank() < 1 ||
        type.getShape().back() != cast<RankedTensorType>(linear.getResult().getType()).getShape().back())
      return failure();
    SmallVector<int64_t> rows(type.getShape());
    rows.back() = linear.getX().getType().getShape().back();
    Value x = rewriter.create<ReshapeOp>(
        reshape.getLoc(), type.clone(rows), linear.getX());
    rewriter.replaceOp(reshape, relinear(rewriter, linear, x, type));
    return success();
  }
};

/// transpose(linear(x)) -> linear(transpose(x)) where the transpose keeps
/// the last dimension (it permutes rows) and the rows of x are no longer
/// than the linear's (K <= N): the moved copy is no larger.
struct TransposeAboveLinear : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    LinearOp linear = movableLinear(transpose);
    ArrayRef<int64_t> perm = transpose.getPerm();
    if (!linear || perm.empty() || perm.back() != int64_t(perm.size()) - 1)
      return failure();
    auto xType = cast<RankedTensorType>(linear.getX().getType());
    if (xType.getShape().back() > cast<RankedTensorType>(linear.getResult().getType()).getShape().back())
      return failure();
    SmallVector<int64_t> rows;
    for (int64_t dim : perm)
      rows.push_back(xType.getShape()[dim]);
    Value x = rewriter.create<TransposeOp>(
        transpose.getLoc(), xType.clone(rows), linear.getX(),
        transpose.getPermAttr());
    rewriter.replaceOp(transpose,
                       relinear(rewriter, linear, x, transpose.getType()));
    return success();
  }
};

/// reshape(matmul(a, b)) -> matmul(reshape(a), reshape(b)) where the
/// reshape regroups the batch dimensions only (the last two are kept) and
/// both operands carry the whole batch (no broadcast): attention's scores,
/// [B*H, S, S] viewed as [B, H, S, S], meet the scaling that reads them.
struct ReshapeAboveMatmul : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto matmul = reshape.getX().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() ||
        !matmul->getDiscardableAttrDictionary().empty() ||
        !reshape->getDiscardableAttrDictionary().empty())
      return failure();
    auto type = cast<RankedTensorType>(reshape.getType());
    auto product = cast<RankedTensorType>(matmul.getResult().getType());
    auto aType = cast<RankedTensorType>(matmul.getA().getType());
    auto bType = cast<RankedTensorType>(matmul.getB().getType());
    ArrayRef<int64_t> batch = product.getShape().drop_back(2);
    if (type.getRank() < 2 ||
        type.getShape().take_back(2) != product.getShape().take_back(2) ||
        aType.getShape().drop_back(2) != batch ||
        bType.getShape().drop_back(2) != batch)
      return failure();
    auto regroup = [&](Value operand, RankedTensorType operandType) {
      SmallVector<int64_t> shape(type.getShape().drop_back(2));
      llvm::append_range(shape, operandType.getShape().take_back(2));
      return rewriter.create<ReshapeOp>(reshape.getLoc(),
                                        operandType.clone(shape), operand);
    };
    rewriter.replaceOpWithNewOp<MatmulOp>(
        reshape, type, regroup(matmul.getA(), aType),
        regroup(matmul.getB(), bType));
    return success();
  }
};

/// For a reshape from `from` to `to` that merges or splits neighbouring
/// dimensions only (no dimension of 1 in either): per dimension of `to`,
/// the dimensions of `from` it is (one each for a split), or failure.
FailureOr<SmallVector<SmallVector<int64_t>>>
mergedDims(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (llvm::is_contained(from, 1) || llvm::is_contained(to, 1))
    return failure();
  SmallVector<SmallVector<int64_t>> groups(to.size());
  size_t i = 0;
  for (auto [j, size] : llvm::enumerate(to)) {
    int64_t product = 1;
    while (i < from.size() && product < size)
      product *= from[i], groups[j].push_back(i++);
    if (product != size)
      return failure();
  }
  return groups;
}

/// transpose(reshape(y)) -> reshape(transpose(y)) where the reshape merges
/// neighbouring dimensions of y and the transpose moves the merged ones as
/// wholes: the transpose then meets y's producer, where a transpose folds
/// into another (attention's [B, H, S, D] -> [S, B, H*D] -> [B, S, H*D]
/// becomes one transpose).
struct TransposeAboveMerge : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto reshape = transpose.getX().getDefiningOp<ReshapeOp>();
    if (!reshape || !reshape->getDiscardableAttrDictionary().empty() ||
        !transpose->getDiscardableAttrDictionary().empty())
      return failure();
    auto yType = cast<RankedTensorType>(reshape.getX().getType());
    auto merged = mergedDims(yType.getShape(),
                             cast<ShapedType>(reshape.getType()).getShape());
    // A split dimension would move apart: only merges (and dimensions kept
    // as they are).
    if (failed(merged) || merged->size() >= size_t(yType.getRank()))
      return failure();
    SmallVector<int64_t> perm, shape;
    for (int64_t dim : transpose.getPerm())
      for (int64_t from : (*merged)[dim]) {
        perm.push_back(from);
        shape.push_back(yType.getShape()[from]);
      }
    Value moved = rewriter.create<TransposeOp>(
        transpose.getLoc(), yType.clone(shape), reshape.getX(),
        rewriter.getDenseI64ArrayAttr(perm));
    rewriter.replaceOpWithNewOp<ReshapeOp>(transpose, transpose.getType(),
                                           moved);
    return success();
  }
};

} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ReshapeAboveLinear, ReshapeAboveMatmul>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<TransposeAboveLinear, TransposeAboveMerge>(context);
}
