//===- Fuse.cpp - elementwise chains into tandem.fused ops ----------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tandem {
#define GEN_PASS_DEF_FUSE
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// The attributes a group's ops must agree on, and the group keeps: where
/// the user pinned them, and where they are placed if they already are.
constexpr StringLiteral kGroupAttrs[] = {TandemDialect::kPinAttrName,
                                         TandemDialect::kDeviceAttrName};

bool sameGroupAttrs(Operation *a, Operation *b) {
  return llvm::all_of(kGroupAttrs, [&](StringLiteral name) {
    return a->getAttr(name) == b->getAttr(name);
  });
}

/// How many inputs the group of `members` and `candidate` reads.
size_t countInputs(const llvm::SetVector<Operation *> &members,
                   Operation *candidate) {
  llvm::DenseSet<Value> inputs;
  for (Operation *op : llvm::concat<Operation *const>(
           members.getArrayRef(), ArrayRef<Operation *>(candidate)))
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def != candidate && !members.contains(def))
        inputs.insert(operand);
  return inputs.size();
}

/// The ops of the group that ends at `root`, in no particular order.
llvm::SetVector<Operation *> growGroup(Operation *root,
                                      const DenseSet<Operation *> &taken) {
  llvm::SetVector<Operation *> members;
  members.insert(root);
  Type shape = root->getResult(0).getType();
  bool hasProducer = false;
  auto definedInGroup = [&](Value value) {
    return members.contains(value.getDefiningOp());
  };
  auto joins = [&](Operation *producer) {
    if (!producer || producer->getBlock() != root->getBlock() ||
        taken.contains(producer) || members.contains(producer) ||
        producer->getResult(0).getType() != shape ||
        !sameGroupAttrs(producer, root) ||
        !llvm::all_of(producer->getUsers(), [&](Operation *user) {
          return members.contains(user);
        }))
      return false;
    // A GEMM's or convolution's operands are the group's inputs: it joins
    // only if no member computes one, and no op that feeds it joins.
    if (isEpilogueProducer(producer))
      return !hasProducer &&
             llvm::none_of(producer->getOperands(), definedInGroup) &&
             countInputs(members, producer) <= kMaxFusedInputs;
    if (!isFusible(producer) ||
        llvm::any_of(producer->getUsers(), isEpilogueProducer))
      return false;
    // Each input is a kernel parameter on the GPU: keep groups well inside
    // what PTX allows.
    return countInputs(members, producer) <= kMaxFusedInputs;
  };
  // A producer read by two members joins once both have: repeat until no
  // producer joins.
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < members.size(); ++i) {
      // A GEMM's or convolution's operands are the group's inputs.
      if (isEpilogueProducer(members[i]))
        continue;
      for (Value operand : members[i]->getOperands())
        if (Operation *producer = operand.getDefiningOp(); joins(producer)) {
          members.insert(producer);
          hasProducer |= isEpilogueProducer(producer);
          grew = true;
        }
    }
  }
  return members;
}

/// Replaces the group's ops (in body order; `root` last in the block) by
/// one tandem.fused where the root was.
void buildGroup(ArrayRef<Operation *> ops, Operation *root) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  SmallVector<Location> locations;
  for (Operation *op : ops) {
    locations.push_back(op->getLoc());
    for (Value operand : op->getOperands())
      if (!inGroup.contains(operand.getDefiningOp()))
        inputs.insert(operand);
  }
  OpBuilder builder(root);
  MLIRContext *context = root->getContext();
  auto fused = builder.create<FusedOp>(
      FusedLoc::get(context, locations), root->getResult(0).getType(),
      inputs.getArrayRef());
  for (StringLiteral name : kGroupAttrs)
    if (Attribute value = root->getAttr(name))
      fused->setAttr(name, value);
  Block *body = builder.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : ops) {
    Operation *clone = builder.clone(*op, mapping);
    for (StringLiteral name : kGroupAttrs)
      clone->removeAttr(name);
  }
  builder.create<YieldOp>(root->getLoc(),
                          mapping.lookup(root->getResult(0)));
  root->getResult(0).replaceAllUsesWith(fused.getResult());
  // Users first: each op's results are unused when it goes.
  SmallVector<Operation *> erased(ops.begin(), ops.end());
  llvm::sort(erased, [](Operation *a, Operation *b) {
    return b->isBeforeInBlock(a);
  });
  for (Operation *op : erased)
    op->erase();
}

void fuseBlock(Block &block) {
  DenseSet<Operation *> taken;
  SmallVector<std::pair<SmallVector<Operation *>, Operation *>> groups;
  for (Operation &op : llvm::reverse(block)) {
    if (taken.contains(&op) || !isFusible(&op))
      continue;
    llvm::SetVector<Operation *> members = growGroup(&op, taken);
    taken.insert(members.begin(), members.end());
    if (members.size() < 2)
      continue;
    // In block order, but a GEMM or convolution first: it reads the
    // group's inputs only, and the body starts with it.
    SmallVector<Operation *> ordered(members.begin(), members.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      if (isEpilogueProducer(a) != isEpilogueProducer(b))
        return isEpilogueProducer(a);
      return a->isBeforeInBlock(b);
    });
    groups.push_back({std::move(ordered), &op});
  }
  for (auto &[group, root] : groups)
    buildGroup(group, root);
}

struct Fuse : tandem::impl::FuseBase<Fuse> {
  void runOnOperation() override {
    // Blocks of the ops themselves, not the bodies of groups already built.
    getOperation()->walk<WalkOrder::PreOrder>([](Operation *op) {
      if (isa<FusedOp>(op))
        return WalkResult::skip();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          fuseBlock(block);
      return WalkResult::advance();
    });
  }
};

} // namespace
