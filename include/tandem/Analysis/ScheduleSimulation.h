//===- ScheduleSimulation.h - a schedule's predicted times ------*- C++ -*-===//
//
// The cost model of a schedule: each queue runs its ops one at a time in
// block order, an op starts when its queue is free and the ops it waits
// for have completed (plus the cost of a cross-queue wait), and takes the
// time the device profile predicts for it (an op on its device, a copy over
// its link). The makespan is when the last op ends; the serial time is the
// sum of all op times (the program run one op at a time).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_SCHEDULESIMULATION_H
#define TANDEM_ANALYSIS_SCHEDULESIMULATION_H

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"

#include "llvm/Support/JSON.h"

#include <vector>

namespace mlir::tandem {

/// Microseconds a wait on another queue's op adds beyond the times of the
/// ops themselves. A hand-off between devices already costs the copy's link
/// latency and the op's launch overhead, in the schedule as in the serial
/// program, so a wait adds nothing more; with that, a schedule is never
/// predicted slower than the same ops run one at a time. (A GPU-side event
/// wait, cudaStreamWaitEvent, is a few microseconds, below the link
/// latencies the profiles give.)
constexpr double kCrossQueueWaitUs = 0.0;

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

/// Microseconds one queue item takes: an op on its placed device, a
/// transfer over its link (the profile's pinned or pageable figures).
double estimateQueueItemUs(Operation *op, const DeviceProfile &profile);

/// Simulates the block's schedule (block order on one queue when it is not
/// scheduled).
ScheduleTimes simulateSchedule(Block &block, const DeviceProfile &profile);

/// A lower bound on the makespan of any placement and schedule of the
/// block's ops, however the ops are placed (pins held): the longest chain
/// of ops from the inputs (on the host) to the results (back on the host),
/// each op on the device that lets it finish first and each value copied
/// where the chain needs it on the other device; the work of the ops only
/// one device can run, on that device's queue; and half of all work at its
/// fastest (two compute queues). An op whose operands and result alone
/// exceed `gpuBudgetBytes` cannot run on the GPU.
double scheduleLowerBoundUs(Block &block, const DeviceProfile &profile,
                            std::optional<int64_t> gpuBudgetBytes);

/// The report's schedule section: {op, name, loc, queue, start_us, end_us}
/// per queue item.
llvm::json::Array scheduleToJSON(const ScheduleTimes &times);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_SCHEDULESIMULATION_H
