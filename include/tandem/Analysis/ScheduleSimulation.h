//===- ScheduleSimulation.h - a schedule's predicted times ------*- C++ -*-===//
//
// A scheduled block's predicted times, op by op, for the report: the block's
// QueueProgram simulated (simulateQueueProgram: each queue runs its ops one
// at a time in block order, an op starts when its queue is free and the
// ops it waits for have completed, and takes the time the device profile
// predicts for it). A wait adds no time of its own: a hand-off between
// devices already pays the copy's link latency and the op's launch
// overhead, so a schedule is never predicted slower than its ops run one
// at a time. The makespan is when the last op ends; the serial time is the
// sum of all op times.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_SCHEDULESIMULATION_H
#define TANDEM_ANALYSIS_SCHEDULESIMULATION_H

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"

#include "llvm/Support/JSON.h"

#include <vector>

namespace mlir::tandem {

struct ScheduledOp {
  Operation *op = nullptr;
  QueueKind queue = QueueKind::CPU;
  double startUs = 0, endUs = 0;
};

struct ScheduleTimes {
  /// Every queue item, in block order.
  std::vector<ScheduledOp> ops;
  double makespanUs = 0;
  /// The sum of every op's time: the same program run one op at a time.
  double serialUs = 0;
  /// Each queue's busy time.
  std::array<double, kNumQueues> busyUs{};
  /// Microseconds of copies that ran while the GPU or the CPU computed.
  double hiddenCopyUs = 0;
  int64_t crossQueueWaits = 0;
};

/// Simulates the block's schedule (block order on one queue when it is not
/// scheduled).
ScheduleTimes simulateSchedule(Block &block, const DeviceProfile &profile);

/// The report's schedule section: {op, name, loc, queue, start_us, end_us}
/// per queue item.
llvm::json::Array scheduleToJSON(const ScheduleTimes &times);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_SCHEDULESIMULATION_H
