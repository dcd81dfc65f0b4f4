//===- PlacementPipeline.cpp - --tandem-placement-pipeline ----------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

using namespace mlir;
using namespace mlir::tandem;

void tandem::buildPlacementPipeline(OpPassManager &pm,
                                    const PlacementPipelineOptions &options) {
  // No cleanup after placement: --tandem-place folds and merges duplicates
  // itself before it prices, so the emitted IR is the program its report
  // describes, and a cleanup here could only make them differ.
  PlaceOptions place;
  place.gpuMemory = options.gpuMemory;
  place.deviceProfile = options.deviceProfile;
  place.strategy = options.strategy;
  place.report = options.report;
  place.explain = options.explain;
  place.objective = options.objective;
  pm.addPass(createPlace(place));
  pm.addPass(createInsertTransfers());
  ScheduleOptions schedule;
  schedule.deviceProfile = options.deviceProfile;
  schedule.window = options.scheduleWindow;
  // The schedule is added to a report written to a file (not to a stream).
  if (options.report != "-")
    schedule.report = options.report;
  pm.addPass(createSchedule(schedule));
  // Last, so offsets describe the final IR.
  pm.addPass(createPlanMemory());
}

PrePlacementCleanup::PrePlacementCleanup(MLIRContext *context) {
  // The patterns --canonicalize collects.
  RewritePatternSet patterns(context);
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, context);
  canonicalization = FrozenRewritePatternSet(std::move(patterns));
}

void PrePlacementCleanup::run(Operation *op) const {
  // --canonicalize's defaults; like it, a rewrite that does not converge
  // within its iterations leaves valid IR and is not an error.
  GreedyRewriteConfig config;
  config.useTopDownTraversal = true;
  // Region simplification erases unreachable blocks, merges identical ones
  // and drops dead cycles and block arguments: none exists where every
  // region has one block (SSA in one block has no cycles), and on a large
  // model its liveness pass costs a third as much as the rewrites.
  bool singleBlocks = true;
  op->walk([&](Operation *nested) {
    for (Region &region : nested->getRegions())
      singleBlocks &= region.empty() || region.hasOneBlock();
  });
  config.enableRegionSimplification = singleBlocks
                                          ? GreedySimplifyRegionLevel::Disabled
                                          : GreedySimplifyRegionLevel::Normal;
  (void)applyPatternsAndFoldGreedily(op, canonicalization, config);
  IRRewriter rewriter(op->getContext());
  DominanceInfo dominance(op);
  eliminateCommonSubExpressions(rewriter, dominance, op);
  sinkSources(op);
}

namespace {
struct PrePlacementCleanupPass
    : PassWrapper<PrePlacementCleanupPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrePlacementCleanupPass)
  llvm::StringRef getArgument() const override {
    return "tandem-pre-placement-cleanup";
  }
  LogicalResult initialize(MLIRContext *context) override {
    cleanup.emplace(context);
    return success();
  }
  void runOnOperation() override { cleanup->run(getOperation()); }
  std::optional<PrePlacementCleanup> cleanup;
};
} // namespace

void tandem::addPrePlacementCleanup(OpPassManager &pm) {
  pm.addPass(std::make_unique<PrePlacementCleanupPass>());
}

void tandem::registerPlacementPipeline() {
  PassPipelineRegistration<PlacementPipelineOptions>(
      "tandem-placement-pipeline",
      "Place every op under the GPU budget, insert the transfers, schedule "
      "the queues and plan memory (tandem-place, tandem-insert-transfers, "
      "tandem-schedule, tandem-plan-memory); "
      "takes tandem-place's options",
      buildPlacementPipeline);
}
