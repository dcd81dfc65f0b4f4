//===- Passes.h - tandem passes ---------------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_H
#define TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::tandem {

#define GEN_PASS_DECL
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"

/// The options of --tandem-placement-pipeline: those of --tandem-place.
struct PlacementPipelineOptions
    : public PassPipelineOptions<PlacementPipelineOptions> {
  Option<std::string> gpuMemory{*this, "gpu-memory",
                                llvm::cl::desc("GPU memory budget"),
                                llvm::cl::init("")};
  Option<std::string> deviceProfile{*this, "device-profile",
                                    llvm::cl::desc("Device profile"),
                                    llvm::cl::init("h200")};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("Placement strategy"),
                               llvm::cl::init("auto")};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("Placement report (JSON) file"),
                             llvm::cl::init("")};
  Option<bool> explain{*this, "explain",
                       llvm::cl::desc("A remark per op explaining its device"),
                       llvm::cl::init(false)};
  Option<std::string> objective{
      *this, "objective",
      llvm::cl::desc("makespan or serial (--tandem-place's objective)"),
      llvm::cl::init("makespan")};
  Option<int64_t> scheduleWindow{
      *this, "schedule-window",
      llvm::cl::desc("Fix --tandem-schedule's window (0: choose it)"),
      llvm::cl::init(0)};
};

/// Place (which first folds and merges duplicates), insert transfers,
/// schedule the queues, plan memory.
void buildPlacementPipeline(OpPassManager &pm,
                            const PlacementPipelineOptions &options);

/// What --tandem-place runs on a function before it prices it, so that no
/// cleanup after placement changes the program its report describes: the
/// canonicalizer's patterns (as --canonicalize applies them), CSE, then
/// --tandem-sink-sources. The three are called directly, not as a nested
/// pipeline, which would verify the whole function after each (on a
/// 100k-op function, a tenth of the placement pass's time); the pass
/// manager's verifier checks the IR after --tandem-place (or after the
/// cleanup's own pass) as after any pass.
class PrePlacementCleanup {
public:
  /// Collects the canonicalization patterns of every dialect and op loaded
  /// in `context`.
  explicit PrePlacementCleanup(MLIRContext *context);
  /// Cleans up the regions of `op`.
  void run(Operation *op) const;

private:
  FrozenRewritePatternSet canonicalization;
};

/// The cleanup as a pass, for pipelines that want the IR --tandem-place
/// prices.
void addPrePlacementCleanup(OpPassManager &pm);

/// Moves every operand-free op without side effects in `op`'s blocks right
/// before its first user in the block (--tandem-sink-sources).
void sinkSources(Operation *op);

/// Registers --tandem-placement-pipeline.
void registerPlacementPipeline();

/// The functions a pass over a module works on: every function with a body.
SmallVector<FunctionOpInterface> getModelFunctions(ModuleOp module);

/// The function reports and pictures describe: @main, else the only one.
FunctionOpInterface getReportedFunction(ModuleOp module);

/// The function --tandem-fold-at-load made of `func`'s subgraphs on
/// weights (marked tandem.at_load = @func), or null.
FunctionOpInterface getAtLoadFunction(ModuleOp module, FunctionOpInterface func);

} // namespace mlir::tandem

#endif // TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_H
