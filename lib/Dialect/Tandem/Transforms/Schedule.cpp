//===- Schedule.cpp - queues, order and explicit waits --------------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Analysis/ArenaBuffers.h"
#include "tandem/Analysis/QueueProgramBuilder.h"
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

/// Writes the program's waits into the block: a tandem.wait before each
/// item whose queue waits, naming the results of the items it waits for.
void insertWaits(const BlockQueueProgram &built) {
  for (auto [index, item] : llvm::enumerate(built.program.items)) {
    if (item.waits.empty())
      continue;
    Operation *op = built.itemOps[index];
    SmallVector<Value> values;
    for (int32_t waited : item.waits)
      values.push_back(built.itemOps[waited]->getResult(0));
    OpBuilder builder(op);
    builder.create<WaitOp>(
        op->getLoc(),
        QueueKindAttr::get(op->getContext(), QueueKind(item.queue)), values);
  }
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
      FailureOr<WindowChoice> chosen = scheduleFunction(func, *profile);
      if (failed(chosen))
        return signalPassFailure();
      if (!report.empty() && func == reported &&
          failed(addToReport(func, *profile, *chosen)))
        return signalPassFailure();
    }
  }

  /// Schedules `func` with the best window that fits its budget; returns
  /// the choice.
  FailureOr<WindowChoice> scheduleFunction(FunctionOpInterface func,
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
      candidates = {kUnboundedWindow};
    else
      candidates.assign(getDefaultScheduleWindows().begin(),
                        getDefaultScheduleWindows().end());
    FailureOr<BlockQueueProgram> built = buildQueueProgram(block, &profile);
    if (failed(built))
      return failure();
    WindowChoice chosen =
        chooseScheduleWindow(built->program, budget, candidates);
    int64_t arena = window != 0 && budget && chosen.window != 1
                        ? built->program.gpuArenaBytes()
                        : 0;
    if (window != 0 && budget && arena > *budget && chosen.window != 1) {
      QueueProgram widest = built->program;
      WindowChoice fits = chooseScheduleWindow(
          widest, budget, getDefaultScheduleWindows(), 0,
          /*wideningEffort=*/0);
      // A warning: the arena it asks for is still reported (a what-if), and
      // --tandem-plan-memory refuses it with the buffers at the peak.
      func.emitWarning()
             << "the schedule window "
             << (chosen.window == kUnboundedWindow
                     ? std::string("-1 (unbounded)")
                     : std::to_string(chosen.window))
             << " needs a GPU arena of " << arena
             << " bytes, over the budget of " << *budget
             << " bytes (a wider window keeps more copies in flight); the "
                "widest window that fits is "
             << (fits.window == kUnboundedWindow ? std::string("unbounded")
                                                 : std::to_string(fits.window));
    }
    insertWaits(*built);
    return chosen;
  }

  /// Adds the schedule to the placement report --tandem-place wrote.
  LogicalResult addToReport(FunctionOpInterface func,
                            const DeviceProfile &profile,
                            const WindowChoice &chosen) {
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
    std::optional<double> bound =
        root ? root->getNumber("makespan_lower_bound_us") : std::nullopt;
    if (!predicted || !bound)
      return fail("it is not a placement report (no predicted_us or "
                  "makespan_lower_bound_us)");
    Block &block = func.getFunctionBody().front();
    ScheduleTimes times = simulateSchedule(block, profile);
    // The emitted program's GPU memory: under the schedule, buffers may
    // live longer than in program order.
    FailureOr<FunctionBuffers> buffers = collectArenaBuffers(block);
    if (failed(buffers))
      return failure();
    (*root)["peak_gpu_bytes"] = peakLiveBytes(buffers->gpu.lifetimes);
    (*root)["gpu_arena_bytes"] = planMemory(buffers->gpu.lifetimes).arenaBytes;
    // What the program takes is now the schedule's makespan; the bound
    // placement proved for any schedule bounds it.
    // `exact` proved its optimum over placements with one window for the
    // whole program; widened copies can beat it, and then it no longer is
    // the optimum of `total`.
    if (std::optional<double> optimal = root->getNumber("optimal_us");
        optimal && times.makespanUs < *optimal * (1 - 1e-9))
      (*root)["optimal_us"] = nullptr;
    (*predicted)["total"] = times.makespanUs;
    (*predicted)["serial"] = times.serialUs;
    (*predicted)["makespan"] = times.makespanUs;
    (*root)["lower_bound_us"] = *bound;
    (*predicted)["hidden_copy"] = times.hiddenCopyUs;
    llvm::json::Object busy;
    for (int queue = 0; queue < kNumQueues; ++queue)
      busy[stringifyQueueKind(QueueKind(queue))] = times.busyUs[queue];
    (*predicted)["queue_busy"] = std::move(busy);
    (*root)["schedule_window"] =
        chosen.window == kUnboundedWindow ? llvm::json::Value(nullptr)
                                          : llvm::json::Value(chosen.window);
    (*root)["schedule_widened_copies"] = chosen.widenedCopies;
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
