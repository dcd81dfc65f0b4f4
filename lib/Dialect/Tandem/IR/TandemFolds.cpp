//===- TandemFolds.cpp - folds of the tandem dialect ----------------------===//
//
// Only folds that are plainly right: identities, a reshape or transpose of
// another, `shape` of a static tensor, and transfers that move nothing.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/IR/TandemOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tandem;

DeviceAttr tandem::getPlacedDevice(Value value) {
  MLIRContext *context = value.getContext();
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    // The model's inputs arrive on the host.
    Block *block = argument.getOwner();
    if (block->isEntryBlock() &&
        isa_and_nonnull<FunctionOpInterface>(block->getParentOp()))
      return DeviceAttr::getCPU(context);
    return {};
  }
  Operation *producer = value.getDefiningOp();
  if (auto transfer = dyn_cast<TransferOp>(producer))
    return transfer.getTo();
  return producer->getAttrOfType<DeviceAttr>(TandemDialect::kDeviceAttrName);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getX().getType() == getType())
    return getX();
  // reshape(reshape(x)) is one reshape of x.
  if (auto producer = getX().getDefiningOp<ReshapeOp>()) {
    if (producer.getX().getType() == getType())
      return producer.getX();
    getXMutable().assign(producer.getX());
    return getResult();
  }
  return {};
}

static bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [index, dim] : llvm::enumerate(perm))
    if (dim != static_cast<int64_t>(index))
      return false;
  return true;
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (isIdentityPermutation(getPerm()))
    return getX();
  // transpose(transpose(x, inner), perm) is transpose(x, inner ∘ perm).
  if (auto producer = getX().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> inner = producer.getPerm();
    SmallVector<int64_t> composed;
    for (int64_t dim : getPerm())
      composed.push_back(inner[dim]);
    if (isIdentityPermutation(composed))
      return producer.getX();
    setPerm(composed);
    getXMutable().assign(producer.getX());
    return getResult();
  }
  return {};
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  return DenseIntElementsAttr::get(getType(), getX().getType().getShape());
}

// A slice whose result is as large as its input selects every element: a
// stride above 1 or a non-zero start would shrink some dimension.
OpFoldResult SliceOp::fold(FoldAdaptor) {
  return getX().getType() == getType() ? getX() : Value();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor) {
  return getX().getType() == getType() ? getX() : Value();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  return getX().getType() == getType() ? getX() : Value();
}

// A window as large as the tensor clamps every offset to 0.
OpFoldResult DynamicSliceOp::fold(FoldAdaptor) {
  return getX().getType() == getType() ? getX() : Value();
}

OpFoldResult TransferOp::fold(FoldAdaptor) {
  // transfer(transfer(x, A), B) moves x to B directly.
  bool changed = false;
  if (auto producer = getX().getDefiningOp<TransferOp>()) {
    getXMutable().assign(producer.getX());
    changed = true;
  }
  // A transfer to where the value already is moves nothing.
  if (getPlacedDevice(getX()) == getTo())
    return getX();
  return changed ? getResult() : Value();
}
