//===- Schedule.cpp - queues, order and explicit waits --------------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Analysis/ArenaBuffers.h"
#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Analysis/ScheduleSimulation.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"
#include "tandem/Support/OutputFile.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::tandem {
#define GEN_PASS_DEF_SCHEDULE
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

constexpr int64_t kUnbounded = INT64_MAX;

/// The window CPU-arena queues keep: the CPU arena has no budget, but a
/// buffer a copy reads can be reused only once an op of the CPU queue is
/// known to start after the copy.
constexpr int64_t kCpuArenaWindow = 8;

constexpr int kCpu = int(QueueKind::CPU), kGpu = int(QueueKind::GPU),
              kH2D = int(QueueKind::H2D), kD2H = int(QueueKind::D2H);

/// The window between two queues, or 0 if they share no arena (only data
/// orders them): the GPU arena's queues use `gpuWindow`, the CPU arena's
/// kCpuArenaWindow; the copy engines share both.
int64_t windowBetween(int a, int b, int64_t gpuWindow) {
  auto onGpuArena = [](int q) { return q != kCpu; };
  auto onCpuArena = [](int q) { return q != kGpu; };
  int64_t window = 0;
  if (onGpuArena(a) && onGpuArena(b))
    window = gpuWindow;
  if (onCpuArena(a) && onCpuArena(b))
    window = window ? std::min(window, kCpuArenaWindow) : kCpuArenaWindow;
  return window;
}

/// The queue item whose completion makes `value` ready, through views.
Operation *readyAfter(Value value) {
  Operation *producer = value.getDefiningOp();
  while (auto view = dyn_cast_or_null<ViewLikeOpInterface>(producer))
    producer = view.getViewSource().getDefiningOp();
  return producer && isQueueItem(producer) ? producer : nullptr;
}

/// Writes `tandem.queue` on every queue item, and `tandem.scheduled` on
/// the function; an error on an op that is not placed.
LogicalResult assignQueues(FunctionOpInterface func) {
  Block &block = func.getFunctionBody().front();
  for (Operation &op : block) {
    if (!isQueueItem(&op))
      continue;
    std::optional<QueueKind> queue = getQueueForPlacement(&op);
    if (!queue)
      return op.emitError("is not placed: run --tandem-place and "
                          "--tandem-insert-transfers first");
    op.setAttr(TandemDialect::kQueueAttrName,
               QueueKindAttr::get(func.getContext(), *queue));
  }
  func->setAttr(TandemDialect::kScheduledAttrName,
                UnitAttr::get(func.getContext()));
  return success();
}

/// Inserts the waits: each operand from another queue, and each queue
/// sharing an arena kept within the window. A wait that earlier ones imply
/// is left out.
void insertWaits(Block &block, int64_t gpuWindow) {
  struct Issued {
    int64_t item; // position among the queue items
    Operation *op;
    QueueClocks::Stamp stamp;
  };
  std::array<std::vector<Issued>, kNumQueues> issued;
  llvm::DenseMap<Operation *, QueueClocks::Stamp> stamps;
  llvm::DenseMap<Operation *, int64_t> itemOf;
  QueueClocks clocks;
  OpBuilder builder(block.getParentOp()->getContext());
  int64_t item = 0;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (!isQueueItem(&op))
      continue;
    int queue = int(*getScheduledQueue(&op));
    SmallVector<Operation *> needed;
    for (Value operand : op.getOperands())
      if (Operation *producer = readyAfter(operand);
          producer && stamps.lookup(producer).queue != queue)
        needed.push_back(producer);
    for (int other = 0; other < kNumQueues; ++other) {
      int64_t window = other == queue ? 0 : windowBetween(queue, other, gpuWindow);
      if (window == 0 || window == kUnbounded || item < window)
        continue;
      // The last op of `other` at least `window` items before this one.
      auto after = llvm::partition_point(issued[other], [&](const Issued &i) {
        return i.item <= item - window;
      });
      if (after != issued[other].begin())
        needed.push_back(std::prev(after)->op);
    }
    // The latest first: waiting for it often implies the others.
    llvm::stable_sort(needed, [&](Operation *a, Operation *b) {
      return itemOf.lookup(a) > itemOf.lookup(b);
    });
    SmallVector<Value> values;
    for (Operation *producer : needed) {
      QueueClocks::Stamp stamp = stamps.lookup(producer);
      if (clocks.knows(queue, stamp))
        continue;
      clocks.wait(queue, stamp);
      values.push_back(producer->getResult(0));
    }
    if (!values.empty()) {
      builder.setInsertionPoint(&op);
      builder.create<WaitOp>(
          op.getLoc(),
          QueueKindAttr::get(builder.getContext(), QueueKind(queue)), values);
    }
    QueueClocks::Stamp stamp = clocks.issue(queue);
    stamps[&op] = stamp;
    itemOf[&op] = item;
    issued[queue].push_back({item++, &op, stamp});
  }
}

/// The GPU arena the memory plan will need under the block's schedule.
FailureOr<int64_t> gpuArenaBytes(Block &block) {
  FailureOr<FunctionBuffers> buffers = collectArenaBuffers(block);
  if (failed(buffers))
    return failure();
  return planMemory(buffers->gpu.lifetimes).arenaBytes;
}

struct Schedule : tandem::impl::ScheduleBase<Schedule> {
  using ScheduleBase::ScheduleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<DeviceProfile> profile = loadDeviceProfile(deviceProfile);
    if (!profile) {
      module.emitError(llvm::toString(profile.takeError()));
      return signalPassFailure();
    }
    FunctionOpInterface reported = getReportedFunction(module);
    for (FunctionOpInterface func : getModelFunctions(module)) {
      FailureOr<int64_t> chosen = scheduleFunction(func, *profile);
      if (failed(chosen))
        return signalPassFailure();
      if (!report.empty() && func == reported &&
          failed(addToReport(func, *profile, *chosen)))
        return signalPassFailure();
    }
  }

  /// Schedules `func` with the best window that fits its budget; returns
  /// the window.
  FailureOr<int64_t> scheduleFunction(FunctionOpInterface func,
                                      const DeviceProfile &profile) {
    Block &block = func.getFunctionBody().front();
    clearSchedule(func);
    if (failed(assignQueues(func)))
      return failure();
    std::optional<int64_t> budget;
    if (auto recorded = func->getAttrOfType<IntegerAttr>(
            TandemDialect::kGpuMemoryBudgetAttrName))
      budget = recorded.getInt();
    SmallVector<int64_t> candidates;
    if (window > 0)
      candidates = {window};
    else if (window < 0)
      candidates = {kUnbounded};
    else
      candidates = {kUnbounded, 32, 8, 2, 1};
    int64_t best = candidates.back();
    double bestUs = 0;
    bool found = false;
    for (int64_t candidate : candidates) {
      insertWaits(block, candidate);
      FailureOr<int64_t> arena = gpuArenaBytes(block);
      if (failed(arena))
        return failure();
      bool fits = !budget || *arena <= *budget || candidate == 1;
      double us = simulateSchedule(block, profile).makespanUs;
      if (fits && (!found || us < bestUs)) {
        found = true;
        best = candidate;
        bestUs = us;
      }
      for (Operation &op : llvm::make_early_inc_range(block))
        if (isa<WaitOp>(op))
          op.erase();
    }
    insertWaits(block, best);
    return best;
  }

  /// Adds the schedule to the placement report --tandem-place wrote.
  LogicalResult addToReport(FunctionOpInterface func,
                            const DeviceProfile &profile, int64_t chosen) {
    auto fail = [&](const llvm::Twine &why) {
      return func.emitError() << "cannot add the schedule to the placement "
                                 "report '"
                              << report << "': " << why;
    };
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
        llvm::MemoryBuffer::getFile(report);
    if (!text)
      return fail(text.getError().message() +
                  " (write it with --tandem-place's report option first)");
    llvm::Expected<llvm::json::Value> parsed =
        llvm::json::parse((*text)->getBuffer());
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    llvm::json::Object *root = parsed->getAsObject();
    llvm::json::Object *predicted =
        root ? root->getObject("predicted_us") : nullptr;
    if (!predicted)
      return fail("it is not a placement report (no predicted_us)");
    Block &block = func.getFunctionBody().front();
    ScheduleTimes times = simulateSchedule(block, profile);
    // The emitted program's GPU memory: under the schedule, buffers may
    // live longer than in program order.
    FailureOr<FunctionBuffers> buffers = collectArenaBuffers(block);
    if (failed(buffers))
      return failure();
    (*root)["peak_gpu_bytes"] = peakLiveBytes(buffers->gpu.lifetimes);
    (*root)["gpu_arena_bytes"] = planMemory(buffers->gpu.lifetimes).arenaBytes;
    (*predicted)["serial"] = times.serialUs;
    (*predicted)["makespan"] = times.makespanUs;
    (*predicted)["hidden_copy"] = times.hiddenCopyUs;
    llvm::json::Object busy;
    for (int queue = 0; queue < kNumQueues; ++queue)
      busy[stringifyQueueKind(QueueKind(queue))] = times.busyUs[queue];
    (*predicted)["queue_busy"] = std::move(busy);
    std::optional<int64_t> budget;
    if (auto recorded = func->getAttrOfType<IntegerAttr>(
            TandemDialect::kGpuMemoryBudgetAttrName))
      budget = recorded.getInt();
    (*root)["makespan_lower_bound_us"] =
        scheduleLowerBoundUs(block, profile, budget);
    (*root)["schedule_window"] =
        chosen == kUnbounded ? llvm::json::Value(nullptr)
                             : llvm::json::Value(chosen);
    (*root)["schedule_waits"] = times.crossQueueWaits;
    (*root)["schedule"] = scheduleToJSON(times);
    if (llvm::Error error = writeFileAtomically(
            report, [&](llvm::raw_ostream &os) {
              os << llvm::formatv("{0:2}\n", llvm::json::Value(std::move(*parsed)));
            }))
      return fail(llvm::toString(std::move(error)));
    return success();
  }
};

} // namespace
