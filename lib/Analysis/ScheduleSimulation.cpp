//===- ScheduleSimulation.cpp - a schedule's predicted times --------------===//

#include "tandem/Analysis/ScheduleSimulation.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/MemoryPlanner.h"
#include "tandem/Analysis/QueueProgramBuilder.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "tandem/Support/Format.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tandem;

ScheduleTimes tandem::simulateSchedule(Block &block,
                                       const DeviceProfile &profile) {
  ScheduleTimes times;
  FailureOr<BlockQueueProgram> built = buildQueueProgram(block, &profile);
  if (failed(built))
    return times;
  const QueueProgram &program = built->program;
  SimulatedSchedule simulated = simulateQueueProgram(program);
  for (auto [index, op] : llvm::enumerate(built->itemOps))
    times.ops.push_back({op, QueueKind(program.items[index].queue),
                         simulated.startUs[index], simulated.endUs[index]});
  times.makespanUs = simulated.makespanUs;
  times.serialUs = simulated.serialUs;
  times.busyUs = simulated.busyUs;
  times.hiddenCopyUs = simulated.hiddenCopyUs;
  times.crossQueueWaits = simulated.waits;
  return times;
}

llvm::json::Array tandem::scheduleToJSON(const ScheduleTimes &times) {
  llvm::json::Array items;
  for (auto [index, item] : llvm::enumerate(times.ops))
    items.push_back(llvm::json::Object{
        {"step", int64_t(index)},
        {"name", item.op->getName().getStringRef()},
        {"loc", formatLocation(item.op->getLoc())},
        {"queue", stringifyQueueKind(item.queue)},
        {"start_us", item.startUs},
        {"end_us", item.endUs}});
  return items;
}
