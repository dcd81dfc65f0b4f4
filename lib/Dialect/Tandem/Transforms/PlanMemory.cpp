//===- PlanMemory.cpp - static offsets in one arena per device ------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Support/Format.h"
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

struct DeviceBuffers {
  std::vector<BufferLifetime> lifetimes;
  std::vector<Operation *> writers;
};

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
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<Operation *> order;
  for (Operation &op : block) {
    position[&op] = order.size();
    order.push_back(&op);
  }
  int64_t numPoints = order.size();

  // A reshape owns no buffer: it is its operand's bytes, read as another
  // shape (the lowering passes the operand's address on). Its operand's
  // buffer lives until the reshape's last user, through chains of reshapes.
  llvm::DenseMap<Value, Value> root;
  auto rootOf = [&](Value value) {
    auto found = root.find(value);
    return found == root.end() ? value : found->second;
  };
  llvm::DenseMap<Value, int64_t> lastUse;
  for (Operation *op : order) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      root[op->getResult(0)] = rootOf(view.getViewSource());
    for (Value operand : op->getOperands()) {
      int64_t &last = lastUse[rootOf(operand)];
      last = std::max(last, position[op]);
    }
  }

  // A workspace planned before (the ops may have moved since) is planned
  // again below, where the op is still on the GPU.
  for (Operation *op : order)
    op->removeAttr(TandemDialect::kWorkspaceOffsetAttrName);

  DeviceBuffers cpu, gpu;
  // GPU ops' workspaces, listed after every buffer in op order (as
  // PlacementProblem::gpuBuffers lists them), each live at its op only.
  DeviceBuffers workspaces;
  for (Operation *op : order) {
    if (op->hasTrait<mlir::OpTrait::IsTerminator>() ||
        isa<ViewLikeOpInterface>(op))
      continue;
    if (op->getNumResults() != 1)
      return op->emitError("memory planning handles ops with one result");
    Value result = op->getResult(0);
    DeviceAttr device = getPlacedDevice(result);
    if (!device)
      return op->emitError("is not placed: run --tandem-place and "
                           "--tandem-insert-transfers first");
    BufferLifetime lifetime;
    lifetime.bytes = getNumBytes(result.getType());
    if (isa<WeightOp>(op)) {
      // Host weights are read from the mapped weights file; GPU weights are
      // uploaded once and stay for the whole run.
      if (device.isCPU())
        continue;
      lifetime.first = 0;
      lifetime.last = numPoints - 1;
    } else {
      lifetime.first = position[op];
      lifetime.last = std::max(position[op], lastUse.lookup(result));
    }
    DeviceBuffers &buffers = device.isGPU() ? gpu : cpu;
    buffers.lifetimes.push_back(lifetime);
    buffers.writers.push_back(op);
    auto support = dyn_cast<DeviceSupportOpInterface>(op);
    if (int64_t bytes = support ? support.getGpuWorkspaceBytes() : 0;
        bytes > 0 && device.isGPU()) {
      workspaces.lifetimes.push_back({bytes, position[op], position[op]});
      workspaces.writers.push_back(op);
    }
  }
  size_t firstWorkspace = gpu.lifetimes.size();
  gpu.lifetimes.insert(gpu.lifetimes.end(), workspaces.lifetimes.begin(),
                       workspaces.lifetimes.end());
  gpu.writers.insert(gpu.writers.end(), workspaces.writers.begin(),
                     workspaces.writers.end());

  Builder builder(func.getContext());
  auto assign = [&](DeviceBuffers &buffers, size_t firstWorkspace) {
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
  Operation *atPeak = order[peakPoint];
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
