//===- InsertTransfers.cpp - make every copy an explicit transfer ---------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::tandem {
#define GEN_PASS_DEF_INSERTTRANSFERS
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// The device a use reads its value on, or null if the reader is not placed.
DeviceAttr readDevice(OpOperand &use) {
  Operation *reader = use.getOwner();
  MLIRContext *context = reader->getContext();
  // Results are returned on the host.
  if (reader->hasTrait<mlir::OpTrait::IsTerminator>())
    return DeviceAttr::getCPU(context);
  if (auto support = dyn_cast<DeviceSupportOpInterface>(reader))
    if (support.isHostOperand(use.getOperandNumber()))
      return DeviceAttr::getCPU(context);
  if (auto transfer = dyn_cast<TransferOp>(reader))
    return {}; // already explicit
  return reader->getAttrOfType<DeviceAttr>(TandemDialect::kDeviceAttrName);
}

LogicalResult insertTransfers(FunctionOpInterface func) {
  Block &block = func.getFunctionBody().front();
  OpBuilder builder(func.getContext());

  auto moveValue = [&](Value value, Operation *producer) -> LogicalResult {
    DeviceAttr home = getPlacedDevice(value);
    if (!home)
      return producer->emitError("is not placed: run --tandem-place first");
    // Readers by device, in first-use order for a deterministic output.
    llvm::MapVector<DeviceAttr, SmallVector<OpOperand *>> readers;
    for (OpOperand &use : value.getUses()) {
      DeviceAttr device = readDevice(use);
      if (!device && !isa<TransferOp>(use.getOwner()))
        return use.getOwner()->emitError(
            "is not placed: run --tandem-place first");
      if (device && device != home)
        readers[device].push_back(&use);
    }
    if (producer)
      builder.setInsertionPointAfter(producer);
    else
      builder.setInsertionPointToStart(&block);
    for (auto &[device, uses] : readers) {
      Value copy;
      auto weight = dyn_cast_or_null<WeightOp>(producer);
      if (weight && device.isCPU()) {
        // The host reads the weights file itself: no copy back.
        Operation *hostWeight = builder.clone(*weight);
        hostWeight->setAttr(TandemDialect::kDeviceAttrName, device);
        // The user's pin is on the weight itself, not on its host copy.
        hostWeight->removeAttr(TandemDialect::kPinAttrName);
        copy = hostWeight->getResult(0);
      } else {
        copy = builder.create<TransferOp>(value.getLoc(), value, device);
      }
      for (OpOperand *use : uses)
        use->set(copy);
    }
    return success();
  };

  for (BlockArgument argument : llvm::reverse(block.getArguments()))
    if (failed(moveValue(argument, nullptr)))
      return failure();
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    if (!isa<TransferOp>(op) && !op.hasTrait<mlir::OpTrait::IsTerminator>())
      ops.push_back(&op);
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (failed(moveValue(result, op)))
        return failure();
  // Copies that were already explicit are kept; a reader of one on another
  // device than its destination is an error, not a silent wrong read.
  for (Operation &op : block)
    for (OpOperand &use : op.getOpOperands()) {
      DeviceAttr device = readDevice(use);
      DeviceAttr home = getPlacedDevice(use.get());
      if (device && home && device != home)
        return op.emitError() << "reads operand #" << use.getOperandNumber()
                              << " on " << device << ", but it is on "
                              << home;
    }
  return success();
}

struct InsertTransfers
    : tandem::impl::InsertTransfersBase<InsertTransfers> {
  void runOnOperation() override {
    for (FunctionOpInterface func : getModelFunctions(getOperation()))
      if (failed(insertTransfers(func)))
        return signalPassFailure();
  }
};

} // namespace
