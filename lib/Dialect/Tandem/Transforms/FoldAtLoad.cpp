//===- FoldAtLoad.cpp - subgraphs on weights computed once, at load -------===//
//
// A model's ops that compute from weights, fills and iotas alone give the
// same tensor in every run. They move into an at-load function, which the
// runtime runs once after reading the weights; the model reads what that
// function returns as weights of its own (tandem.weight with
// tandem.folded = K), which placement then keeps resident or streams like
// any other weight.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Analysis/PlacementGraph.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tandem {
#define GEN_PASS_DEF_FOLDATLOAD
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// A folded value may always take this much memory; beyond it, no more
/// than the weights it is computed from.
constexpr int64_t kSmallFoldBytes = int64_t(1) << 20;

/// Sources: what the at-load function reads rather than computes. A pinned
/// one is where the user wants the model to read it: it stays the model's.
bool isConstantSource(Operation *op) {
  return isa<WeightOp, FillOp, IotaOp>(op) &&
         !op->hasAttr(TandemDialect::kPinAttrName);
}

/// Whether `op` itself may run at load, its operands aside: one result, not
/// pinned or placed (the user or an earlier pass chose its device), and able
/// to run on the CPU, where the at-load function runs.
bool mayRunAtLoad(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      op->hasAttr(TandemDialect::kPinAttrName) ||
      op->hasAttr(TandemDialect::kDeviceAttrName) ||
      isa<ReshapeOp, TransferOp, WaitOp>(op))
    return false;
  auto support = dyn_cast<DeviceSupportOpInterface>(op);
  return support && support.canRunOn(DeviceKind::CPU);
}

/// The values of `block` computed from weights, fills and iotas alone
/// (through reshapes), by ops that may run at load.
llvm::DenseSet<Value> findConstantValues(Block &block) {
  llvm::DenseSet<Value> constant;
  for (Operation &op : block) {
    bool operandsConstant = llvm::all_of(
        op.getOperands(), [&](Value v) { return constant.contains(v); });
    if (isConstantSource(&op) ||
        (isa<ReshapeOp>(op) && operandsConstant) ||
        (mayRunAtLoad(&op) && operandsConstant))
      constant.insert(op.getResult(0));
  }
  return constant;
}

/// The ops that compute `values`, and those that compute their operands,
/// down to the block's sources.
llvm::DenseSet<Operation *> collectProducers(ArrayRef<Value> values) {
  llvm::DenseSet<Operation *> seen;
  SmallVector<Operation *> stack;
  for (Value value : values)
    stack.push_back(value.getDefiningOp());
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!op || !seen.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      stack.push_back(operand.getDefiningOp());
  }
  return seen;
}

/// Folds each batch norm that reads a convolution's or a linear layer's
/// result (and nothing else does) into it, where the batch norm's
/// parameters and the producer's weight and bias are constant: with
/// s = scale / sqrt(var + epsilon), the weight becomes W * s per output
/// channel and the bias (b - mean) * s + shift. The new weight and bias are
/// subgraphs on weights, which the rest of the pass computes at load; the
/// model loses a pass over the activations and a buffer.
void foldBatchNorms(Block &block) {
  llvm::DenseSet<Value> constant = findConstantValues(block);
  for (auto batchNorm : llvm::make_early_inc_range(block.getOps<BatchNormOp>())) {
    Operation *producer = batchNorm.getX().getDefiningOp();
    if (!producer || !isa<Conv2dOp, LinearOp>(producer) ||
        !producer->hasOneUse() || !mayRunAtLoad(batchNorm) ||
        !mayRunAtLoad(producer) ||
        !getElementTypeOrSelf(batchNorm.getType()).isF32())
      continue;
    // Operand 1 is the weight, 2 the bias if any.
    Value weight = producer->getOperand(1);
    Value bias = producer->getNumOperands() > 2 ? producer->getOperand(2)
                                                : Value();
    // The channel a batch norm normalizes (dimension 1) must be the
    // producer's output feature: a linear's on rows ([N, O]).
    auto resultType = cast<RankedTensorType>(producer->getResult(0).getType());
    if (isa<LinearOp>(producer) && resultType.getRank() != 2)
      continue;
    SmallVector<Value> parameters = {weight, batchNorm.getScale(),
                                     batchNorm.getBias(), batchNorm.getMean(),
                                     batchNorm.getVar()};
    if (bias)
      parameters.push_back(bias);
    if (!llvm::all_of(parameters, [&](Value v) { return constant.contains(v); }))
      continue;
    OpBuilder b(batchNorm);
    Location loc = batchNorm.getLoc();
    auto channels = cast<RankedTensorType>(batchNorm.getScale().getType());
    auto scalar = RankedTensorType::get({}, channels.getElementType());
    Value epsilon = b.create<FillOp>(loc, scalar, batchNorm.getEpsilonAttr());
    Value s = b.create<MulOp>(
        loc, channels, batchNorm.getScale(),
        b.create<RsqrtOp>(loc, b.create<AddOp>(loc, channels,
                                               batchNorm.getVar(), epsilon)));
    auto weightType = cast<RankedTensorType>(weight.getType());
    SmallVector<int64_t> perChannel(weightType.getRank(), 1);
    perChannel[0] = channels.getDimSize(0);
    Value column = b.create<ReshapeOp>(
        loc, RankedTensorType::get(perChannel, channels.getElementType()), s);
    Value newWeight = b.create<MulOp>(loc, weightType, weight, column);
    Value centred =
        bias ? b.create<SubOp>(loc, channels, bias, batchNorm.getMean())
             : b.create<NegOp>(loc, channels, batchNorm.getMean()).getResult();
    Value newBias = b.create<AddOp>(
        loc, channels, b.create<MulOp>(loc, channels, centred, s),
        batchNorm.getBias());
    OperationState state(producer->getLoc(), producer->getName());
    state.addOperands({producer->getOperand(0), newWeight, newBias});
    state.addAttributes(producer->getAttrs());
    state.addTypes(resultType);
    Operation *folded = b.create(state);
    folded->setLoc(b.getFusedLoc({producer->getLoc(), loc}));
    batchNorm.replaceAllUsesWith(folded->getResult(0));
    batchNorm.erase();
    producer->erase();
  }
}

class BlockFolder {
public:
  explicit BlockFolder(Block &block) : block(block) {}

  /// The ops to fold, in block order (empty: nothing to fold).
  SmallVector<Operation *> chooseFolded() {
    llvm::DenseSet<Value> constant = findConstantValues(block);
    for (Operation &op : block)
      if (mayRunAtLoad(&op) && constant.contains(op.getResult(0)))
        folded.insert(&op);
    // A folded op whose result the model would keep, too large for what it
    // is computed from, stays in the model; its operands may then be
    // handed over instead, so check again until nothing changes.
    for (bool changed = !folded.empty(); changed;) {
      changed = false;
      for (Operation *op : llvm::to_vector(folded)) {
        Value value = op->getResult(0);
        if (!readByModel(value))
          continue;
        int64_t bytes = getNumBytes(value.getType());
        if (bytes <= kSmallFoldBytes || bytes <= weightBytesOf(op))
          continue;
        folded.remove(op);
        changed = true;
      }
    }
    return SmallVector<Operation *>(folded.begin(), folded.end());
  }

  /// Whether a value computed at load is read by the model: by an op left
  /// in it, its terminator, or a reshape the model reads.
  bool readByModel(Value value) {
    for (Operation *user : value.getUsers()) {
      if (isa<ReshapeOp>(user) ? readByModel(user->getResult(0))
                               : !folded.contains(user))
        return true;
    }
    return false;
  }

private:
  /// The bytes of the weights `op` is computed from, each counted once.
  int64_t weightBytesOf(Operation *op) {
    int64_t bytes = 0;
    for (Operation *producer : collectProducers(op->getResult(0)))
      if (isa<WeightOp>(producer))
        bytes += getNumBytes(producer->getResult(0).getType());
    return bytes;
  }

  Block &block;
  llvm::SetVector<Operation *> folded;
};

/// Moves `func`'s foldable ops into a new at-load function; returns it, or
/// null when there is nothing to fold.
FunctionOpInterface foldFunction(FunctionOpInterface func,
                                 SymbolTable &symbols) {
  Block &block = func.getFunctionBody().front();
  foldBatchNorms(block);
  BlockFolder folder(block);
  SmallVector<Operation *> folded = folder.chooseFolded();
  if (folded.empty())
    return nullptr;

  // What the model reads, in block order: the at-load function's results.
  SmallVector<Value> handed;
  for (Operation *op : folded)
    if (folder.readByModel(op->getResult(0)))
      handed.push_back(op->getResult(0));
  // Everything they are computed from, in block order.
  llvm::DenseSet<Operation *> producers = collectProducers(handed);
  SmallVector<Operation *> slice;
  for (Operation &op : block)
    if (producers.contains(&op))
      slice.push_back(&op);

  MLIRContext *context = func.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointAfter(func);
  SmallVector<Type> resultTypes;
  for (Value value : handed)
    resultTypes.push_back(value.getType());
  auto atLoad = builder.create<func::FuncOp>(
      func.getLoc(), (func.getName() + "_at_load").str(),
      builder.getFunctionType({}, resultTypes));
  symbols.insert(atLoad); // renamed if the name is taken
  atLoad->setAttr(TandemDialect::kAtLoadAttrName,
                  FlatSymbolRefAttr::get(context, func.getName()));
  Block *body = atLoad.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  auto cpu = DeviceAttr::getCPU(context);
  for (Operation *op : slice) {
    Operation *clone = builder.clone(*op, mapping);
    clone->setAttr(TandemDialect::kDeviceAttrName, cpu);
  }
  SmallVector<Value> returned;
  for (Value value : handed)
    returned.push_back(mapping.lookup(value));
  builder.create<func::ReturnOp>(func.getLoc(), returned);

  // The model reads each handed value as a weight, computed at load.
  for (auto [index, value] : llvm::enumerate(handed)) {
    Operation *producer = value.getDefiningOp();
    builder.setInsertionPoint(producer);
    auto weight = builder.create<WeightOp>(
        producer->getLoc(), value.getType(),
        builder.getStringAttr(atLoad.getName() + "." + std::to_string(index)));
    weight->setAttr(TandemDialect::kFoldedAttrName,
                    builder.getI64IntegerAttr(int64_t(index)));
    value.replaceAllUsesWith(weight.getResult());
  }
  // Backwards, so that each op's readers are gone before it: the folded
  // ops, and the reshapes and sources nothing reads any more.
  llvm::DenseSet<Operation *> foldedSet(folded.begin(), folded.end());
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (foldedSet.contains(&op) ||
        ((isa<ReshapeOp>(op) || isConstantSource(&op)) && op.use_empty()))
      op.erase();
  return atLoad;
}

struct FoldAtLoad : tandem::impl::FoldAtLoadBase<FoldAtLoad> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (FunctionOpInterface func : getModelFunctions(module)) {
      // An at-load function is folded already; a function with one has
      // been through this pass; a placed one keeps the program it has.
      if (func->hasAttr(TandemDialect::kAtLoadAttrName) || isPlaced(func) ||
          getAtLoadFunction(module, func) ||
          func.getFunctionBody().getBlocks().size() != 1)
        continue;
      foldFunction(func, symbols);
    }
  }
};

} // namespace

FunctionOpInterface tandem::getAtLoadFunction(ModuleOp module,
                                              FunctionOpInterface func) {
  for (auto other : module.getOps<FunctionOpInterface>()) {
    auto of = other->getAttrOfType<FlatSymbolRefAttr>(
        TandemDialect::kAtLoadAttrName);
    if (of && of.getValue() == func.getName())
      return other;
  }
  return nullptr;
}
