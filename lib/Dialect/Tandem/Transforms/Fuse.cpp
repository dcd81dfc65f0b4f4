//===- Fuse.cpp - elementwise chains into tandem.fused ops ----------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemViews.h"
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
  // Masks (i1) have the group's shape too: the element type may differ.
  // A reduction's group computes its input.
  ArrayRef<int64_t> shape =
      cast<ShapedType>((isRowReduction(root) ? root->getOperand(0)
                                             : root->getResult(0))
                           .getType())
          .getShape();
  bool hasProducer = false;
  auto definedInGroup = [&](Value value) {
    return members.contains(value.getDefiningOp());
  };
  auto joins = [&](Operation *producer) {
    if (!producer || producer->getBlock() != root->getBlock() ||
        taken.contains(producer) || members.contains(producer) ||
        cast<ShapedType>(producer->getResult(0).getType()).getShape() !=
            shape ||
        !sameGroupAttrs(producer, root) ||
        !llvm::all_of(producer->getUsers(), [&](Operation *user) {
          return members.contains(user);
        }))
      return false;
    // A GEMM's or convolution's operands are the group's inputs: it joins
    // only if no member computes one, and no op that feeds it joins. (A
    // normalization or a reduction only roots a group: see fuseElementwise.)
    // (Not before a reduction: a product is written to the group's
    // buffer, which then holds the reduction's outputs.)
    if (isEpilogueProducer(producer))
      return !hasProducer && !isRowReduction(root) &&
             llvm::none_of(producer->getOperands(), definedInGroup) &&
             countInputs(members, producer) <= kMaxFusedInputs;
    // A normalization reads its operands but its input as they are: a
    // value it reads so stays materialized.
    if (!isFusible(producer) ||
        llvm::any_of(producer->getUsers(), isEpilogueProducer) ||
        llvm::any_of(producer->getUses(), [](OpOperand &use) {
          return isGroupConsumer(use.getOwner()) &&
                 use.getOperandNumber() != 0;
        }))
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
      // A GEMM's or convolution's operands are the group's inputs, and so
      // are a normalization's but its input.
      if (isEpilogueProducer(members[i]))
        continue;
      auto operands = members[i]->getOperands();
      if (isGroupConsumer(members[i]))
        operands = operands.take_front();
      for (Value operand : operands)
        if (Operation *producer = operand.getDefiningOp(); joins(producer)) {
          members.insert(producer);
          hasProducer |= isEpilogueProducer(producer);
          grew = true;
        }
    }
  }
  return members;
}

/// The longest chain of view ops ending at `value` (base side first) that
/// a group rooted at `root` reads as one strided access of the chain's base
/// (TandemViews.h; read as `reading` says): views of f32 (or of i1 masks,
/// where `masks` says so) in `root`'s block, with its pin and device. Empty
/// if there is none.
SmallVector<Operation *>
absorbableViews(Value value, Operation *root,
                ViewReading reading = ViewReading::PerDimension,
                bool masks = true) {
  SmallVector<Operation *> chain = viewChainOf(value, [&](Operation *view) {
    Type element =
        cast<ShapedType>(view->getResult(0).getType()).getElementType();
    return view->getBlock() == root->getBlock() &&
           sameGroupAttrs(view, root) &&
           (element.isF32() || (masks && element.isInteger(1)));
  });
  for (size_t first = 0; first < chain.size(); ++first) {
    ArrayRef<Operation *> suffix = ArrayRef(chain).drop_front(first);
    if (succeeded(composeViews(suffix.front()->getOperand(0), suffix, reading)))
      return SmallVector<Operation *>(suffix);
  }
  return {};
}

/// The ops a group clones into its body for the value each ends in: a
/// chain of views (base side first), or a constant (isFusedConstant).
using ViewChains = DenseMap<Value, SmallVector<Operation *>>;

/// Moves `group`'s ops (in body order; `root` last in the block) into one
/// tandem.fused where the root was, and erases them. The ops read their
/// operands through the view chains in `viewsOf` (keyed by the value each
/// chain ends in), cloned into the body: the chains' bases are the group's
/// inputs (a constant has none), and the views themselves stay for other
/// readers.
void buildGroup(ArrayRef<Operation *> group, Operation *root,
                const ViewChains &viewsOf = ViewChains()) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(group.begin(), group.end());
  llvm::SetVector<Value> inputs;
  SmallVector<Location> locations;
  for (Operation *op : group) {
    locations.push_back(op->getLoc());
    for (Value operand : op->getOperands()) {
      if (inGroup.contains(operand.getDefiningOp()))
        continue;
      auto views = viewsOf.find(operand);
      if (views == viewsOf.end()) {
        inputs.insert(operand);
        continue;
      }
      for (Operation *view : views->second)
        locations.push_back(view->getLoc());
      if (Operation *base = views->second.front(); base->getNumOperands())
        inputs.insert(base->getOperand(0));
    }
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
  auto cloneIntoBody = [&](Operation *op) {
    if (mapping.contains(op->getResult(0)))
      return; // a view two of the group's ops read
    Operation *clone = builder.clone(*op, mapping);
    for (StringLiteral name : kGroupAttrs)
      clone->removeAttr(name);
  };
  for (Operation *op : group) {
    for (Value operand : op->getOperands())
      if (auto views = viewsOf.find(operand); views != viewsOf.end())
        llvm::for_each(views->second, cloneIntoBody);
    cloneIntoBody(op);
  }
  builder.create<YieldOp>(root->getLoc(),
                          mapping.lookup(root->getResult(0)));
  root->getResult(0).replaceAllUsesWith(fused.getResult());
  // Users first: each op's results are unused when it goes.
  SmallVector<Operation *> erased(group.begin(), group.end());
  llvm::sort(erased, [](Operation *a, Operation *b) {
    return b->isBeforeInBlock(a);
  });
  for (Operation *op : erased)
    if (!isViewOp(op))
      op->erase();
}

/// Erases the views and constants of `block` that nothing reads any more
/// (the groups have their own copies).
void eraseDeadViews(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if ((isViewOp(&op) || isFusedConstant(&op)) && op.use_empty())
      op.erase();
}

/// Groups of elementwise ops (with a GEMM's or convolution's epilogue, and
/// a softmax or layer norm of their result), reading their operands through
/// views.
void fuseElementwise(Block &block) {
  DenseSet<Operation *> taken;
  struct Group {
    SmallVector<Operation *> ops;
    Operation *root;
    ViewChains viewsOf;
  };
  SmallVector<Group> groups;
  for (Operation &op : llvm::reverse(block)) {
    bool consumer = isGroupConsumer(&op);
    // A group writes f32: a mask (a compare's) joins the group that reads
    // it, never roots one.
    bool root = isFusible(&op) && cast<ShapedType>(op.getResult(0).getType())
                                      .getElementType()
                                      .isF32();
    if (taken.contains(&op) || !(root || consumer))
      continue;
    llvm::SetVector<Operation *> members = growGroup(&op, taken);
    // A normalization or a reduction ends a group whose elementwise ops
    // compute its input; else it stays apart, and its input's op may root a
    // group of its own.
    if (consumer) {
      Operation *input = op.getOperand(0).getDefiningOp();
      if (!input || !members.contains(input) || !isFusible(input))
        continue;
    }
    taken.insert(members.begin(), members.end());
    Group group;
    group.root = &op;
    // A GEMM's or convolution's operands, and a normalization's, are the
    // group's inputs as they are: a value one of them reads stays an input
    // for the elementwise ops too (its views or fill are not cloned).
    auto readsWhole = [](Operation *member) {
      return isEpilogueProducer(member) || isGroupConsumer(member);
    };
    llvm::DenseSet<Value> readWhole;
    for (Operation *member : members)
      if (readsWhole(member))
        readWhole.insert(member->operand_begin(), member->operand_end());
    // Through a view that would copy, or a constant that would be an op.
    bool savesAnOp = false;
    for (Operation *member : members) {
      if (readsWhole(member))
        continue;
      for (Value operand : member->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (members.contains(def) || readWhole.contains(operand))
          continue;
        // A constant is computed in the body, not read.
        if (def && isFusedConstant(def) && def->getBlock() == op.getBlock() &&
            sameGroupAttrs(def, &op)) {
          group.viewsOf[operand] = {def};
          savesAnOp |= llvm::all_of(def->getUsers(), [&](Operation *user) {
            return members.contains(user);
          });
          continue;
        }
        SmallVector<Operation *> views = absorbableViews(operand, &op);
        if (views.empty())
          continue;
        savesAnOp |= llvm::any_of(views, isDataMovingView);
        group.viewsOf[operand] = std::move(views);
      }
    }
    // One op alone is a group where it saves a view's copy or a constant's
    // fill.
    if (members.size() < 2 && !savesAnOp)
      continue;
    // In block order, but a GEMM or convolution first: it reads the
    // group's inputs only, and the body starts with it.
    group.ops.assign(members.begin(), members.end());
    llvm::sort(group.ops, [](Operation *a, Operation *b) {
      if (isEpilogueProducer(a) != isEpilogueProducer(b))
        return isEpilogueProducer(a);
      return a->isBeforeInBlock(b);
    });
    groups.push_back(std::move(group));
  }
  for (Group &group : groups)
    buildGroup(group.ops, group.root, group.viewsOf);
}

/// Groups of views alone, where other ops read a chain of two or more views
/// that move data (a transpose, a slice, a broadcast): one copy instead of
/// one per view.
void fuseViewChains(Block &block) {
  SmallVector<std::pair<SmallVector<Operation *>, Operation *>> chains;
  for (Operation &op : llvm::reverse(block)) {
    // The end of a chain: its readers are not views.
    if (!isViewOp(&op) || op.use_empty() ||
        llvm::any_of(op.getUsers(), isViewOp))
      continue;
    // The copy is f32, as every group's result.
    SmallVector<Operation *> chain = absorbableViews(
        op.getResult(0), &op, ViewReading::Refined, /*masks=*/false);
    if (llvm::count_if(chain, isDataMovingView) >= 2)
      chains.push_back({std::move(chain), &op});
  }
  // The chain's views are the group's ops (they stay for other readers).
  for (auto &[chain, end] : chains)
    buildGroup(chain, end);
}

void fuseBlock(Block &block) {
  fuseElementwise(block);
  eraseDeadViews(block);
  fuseViewChains(block);
  eraseDeadViews(block);
}

struct Fuse : tandem::impl::FuseBase<Fuse> {
  void runOnOperation() override {
    // Blocks of the ops themselves, not the bodies of groups already built.
    getOperation()->walk<WalkOrder::PreOrder>([](Operation *op) {
      // An at-load function runs once: nothing to win.
      if (isa<FusedOp>(op) || op->hasAttr(TandemDialect::kAtLoadAttrName))
        return WalkResult::skip();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          fuseBlock(block);
      return WalkResult::advance();
    });
  }
};

} // namespace
