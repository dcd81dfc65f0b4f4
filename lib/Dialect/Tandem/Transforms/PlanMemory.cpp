//===- PlanMemory.cpp - static offsets in one arena per device ------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Support/Format.h"
#include "tandem/Analysis/ArenaBuffers.h"
#include "tandem/Analysis/MemoryPlanner.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tandem {
#define GEN_PASS_DEF_PLANMEMORY
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// The point at which the most GPU bytes are live, and those buffers,
/// largest first.
std::pair<int64_t, std::vector<size_t>>
findPeak(const std::vector<BufferLifetime> &buffers) {
  int64_t peakPoint = findLivePeak(buffers).point;
  std::vector<size_t> alive;
  for (auto [index, buffer] : llvm::enumerate(buffers))
    if (buffer.first <= peakPoint && peakPoint <= buffer.last)
      alive.push_back(index);
  llvm::sort(alive, [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  return {peakPoint, alive};
}

LogicalResult planFunction(FunctionOpInterface func,
                           std::optional<int64_t> budget) {
  Block &block = func.getFunctionBody().front();
  // A workspace planned before (the ops may have moved since) is planned
  // again below, where the op is still on the GPU.
  for (Operation &op : block)
    op.removeAttr(TandemDialect::kWorkspaceOffsetAttrName);
  FailureOr<FunctionBuffers> buffers = collectArenaBuffers(block);
  if (failed(buffers))
    return failure();
  ArenaBuffers &cpu = buffers->cpu, &gpu = buffers->gpu;
  size_t firstWorkspace = gpu.firstWorkspace;
  const std::vector<Operation *> &pointOps = buffers->pointOps;

  Builder builder(func.getContext());
  auto assign = [&](ArenaBuffers &buffers, size_t firstWorkspace) {
    MemoryPlan plan = planMemory(buffers.lifetimes);
    for (auto [index, writer] : llvm::enumerate(buffers.writers))
      writer->setAttr(index < firstWorkspace
                          ? TandemDialect::kOffsetAttrName
                          : TandemDialect::kWorkspaceOffsetAttrName,
                      builder.getI64IntegerAttr(plan.offsets[index]));
    return plan.arenaBytes;
  };
  int64_t cpuArena = assign(cpu, cpu.lifetimes.size());
  int64_t gpuArena = assign(gpu, firstWorkspace);
  func->setAttr(TandemDialect::kCpuArenaBytesAttrName,
                builder.getI64IntegerAttr(cpuArena));
  func->setAttr(TandemDialect::kGpuArenaBytesAttrName,
                builder.getI64IntegerAttr(gpuArena));

  if (!budget || gpuArena <= *budget)
    return success();
  auto [peakPoint, alive] = findPeak(gpu.lifetimes);
  int64_t peakBytes = 0;
  for (size_t index : alive)
    peakBytes += alignBufferSize(gpu.lifetimes[index].bytes);
  Operation *atPeak = pointOps[peakPoint];
  InFlightDiagnostic diag =
      atPeak->emitError()
      << "the GPU arena needs " << gpuArena << " bytes, over the budget of "
      << *budget << " bytes; at its peak, at this op, " << peakBytes
      << " bytes (" << formatBytes(peakBytes) << ") in " << alive.size()
      << " buffers are alive";
  for (size_t index : alive) {
    Operation *writer = gpu.writers[index];
    diag.attachNote(writer->getLoc())
        << "alive at the peak: " << gpu.lifetimes[index].bytes << " bytes ("
        << formatBytes(gpu.lifetimes[index].bytes) << ") "
        << (index < firstWorkspace ? "written by" : "the workspace of")
        << " '" << writer->getName() << "'";
  }
  return failure();
}

struct PlanMemory : tandem::impl::PlanMemoryBase<PlanMemory> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    std::optional<int64_t> budget;
    if (!gpuMemory.empty()) {
      llvm::Expected<int64_t> parsed = parseByteSize(gpuMemory);
      if (!parsed) {
        getOperation().emitError()
            << "gpu-memory: " << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      budget = *parsed;
    }
    for (FunctionOpInterface func : getModelFunctions(getOperation())) {
      std::optional<int64_t> functionBudget = budget;
      if (auto recorded = func->getAttrOfType<IntegerAttr>(
              TandemDialect::kGpuMemoryBudgetAttrName);
          recorded && !functionBudget)
        functionBudget = recorded.getInt();
      if (failed(planFunction(func, functionBudget)))
        return signalPassFailure();
    }
  }
};

} // namespace
