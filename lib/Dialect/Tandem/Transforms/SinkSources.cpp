//===- SinkSources.cpp - operand-free ops next to their first user --------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tandem {
#define GEN_PASS_DEF_SINKSOURCES
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// The first op of `block` that uses a result of `op`, or null.
Operation *firstUserInBlock(Operation *op, Block &block) {
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *inBlock = block.findAncestorOpInBlock(*user);
    if (inBlock && (!first || inBlock->isBeforeInBlock(first)))
      first = inBlock;
  }
  return first;
}

void sinkSourcesOf(Block &block) {
  SmallVector<Operation *> sources;
  for (Operation &op : block)
    if (op.getNumOperands() == 0 && op.getNumResults() > 0 &&
        op.getNumRegions() == 0 && isMemoryEffectFree(&op))
      sources.push_back(&op);
  // In program order, each just before its first user: sources of one user
  // keep their order.
  for (Operation *source : sources)
    if (Operation *user = firstUserInBlock(source, block))
      source->moveBefore(user);
}

struct SinkSources : tandem::impl::SinkSourcesBase<SinkSources> {
  void runOnOperation() override { tandem::sinkSources(getOperation()); }
};

} // namespace

void tandem::sinkSources(Operation *op) {
  op->walk([](Block *block) { sinkSourcesOf(*block); });
}
