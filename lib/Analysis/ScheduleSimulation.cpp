//===- ScheduleSimulation.cpp - a schedule's predicted times --------------===//

#include "tandem/Analysis/ScheduleSimulation.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/MemoryPlanner.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "tandem/Support/Format.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tandem;

double tandem::estimateQueueItemUs(Operation *op, const DeviceProfile &profile) {
  if (auto transfer = dyn_cast<TransferOp>(op)) {
    int64_t bytes = getNumBytes(transfer.getType());
    return estimateTransferTimeUs(bytes, transfer.getTo().isGPU()
                                             ? profile.h2d()
                                             : profile.d2h());
  }
  DeviceAttr device =
      op->getNumResults() == 1 ? getPlacedDevice(op->getResult(0)) : DeviceAttr();
  if (!device)
    return 0;
  return estimateOpTimeUs(op, device.getKind(), profile).value_or(0);
}

ScheduleTimes tandem::simulateSchedule(Block &block,
                                       const DeviceProfile &profile) {
  HappensBefore order(block);
  ScheduleTimes times;
  std::array<double, kNumQueues> queueFree{}, queueReady{};
  llvm::DenseMap<Operation *, double> end;
  for (Operation &op : block) {
    if (auto wait = dyn_cast<WaitOp>(op); wait && order.isScheduled()) {
      int queue = int(wait.getQueue());
      for (Value value : wait.getValues())
        if (Operation *producer = order.readyAfter(value)) {
          queueReady[queue] = std::max(queueReady[queue],
                                       end.lookup(producer) + kCrossQueueWaitUs);
          ++times.crossQueueWaits;
        }
      continue;
    }
    if (!isQueueItem(&op))
      continue;
    int queue = order.queueOf(&op);
    double us = estimateQueueItemUs(&op, profile);
    double start = std::max(queueFree[queue], queueReady[queue]);
    queueFree[queue] = end[&op] = start + us;
    times.ops.push_back({&op, QueueKind(queue), start, start + us});
    times.busyUs[queue] += us;
    times.serialUs += us;
    times.makespanUs = std::max(times.makespanUs, start + us);
  }
  // Copy time hidden under compute: the part of each copy's interval that
  // some compute op's interval covers (compute intervals of one queue do not
  // overlap, so each copy checks both queues' ops in time order).
  std::vector<std::pair<double, double>> compute;
  for (const ScheduledOp &item : times.ops)
    if (item.queue == QueueKind::CPU || item.queue == QueueKind::GPU)
      compute.push_back({item.startUs, item.endUs});
  llvm::sort(compute);
  // Merge into disjoint busy intervals.
  std::vector<std::pair<double, double>> busy;
  for (auto interval : compute) {
    if (!busy.empty() && interval.first <= busy.back().second)
      busy.back().second = std::max(busy.back().second, interval.second);
    else
      busy.push_back(interval);
  }
  for (const ScheduledOp &item : times.ops) {
    if (item.queue != QueueKind::H2D && item.queue != QueueKind::D2H)
      continue;
    auto it = llvm::lower_bound(busy, std::make_pair(item.startUs, -1e300));
    if (it != busy.begin())
      --it;
    for (; it != busy.end() && it->first < item.endUs; ++it)
      times.hiddenCopyUs += std::max(
          0.0, std::min(it->second, item.endUs) - std::max(it->first, item.startUs));
  }
  return times;
}

/// Whether the bytes `op` needs on the GPU at once fit `budget`.
static bool fitsGpuAlone(Operation *op, std::optional<int64_t> budget) {
  if (!budget)
    return true;
  int64_t bytes = 0;
  for (Value value : op->getOperands())
    bytes += alignBufferSize(getNumBytes(value.getType()));
  for (Value value : op->getResults())
    bytes += alignBufferSize(getNumBytes(value.getType()));
  if (auto support = dyn_cast<DeviceSupportOpInterface>(op))
    bytes += alignBufferSize(support.getGpuWorkspaceBytes());
  return bytes <= *budget;
}

double tandem::scheduleLowerBoundUs(Block &block, const DeviceProfile &profile,
                                    std::optional<int64_t> gpuBudgetBytes) {
  // The longest chain, with each op on whichever device lets it finish
  // first and a value copied where a chain needs it on the other device
  // (its link time is on the chain in any schedule): per value, the
  // earliest it can be ready on each device (0: CPU, 1: GPU). Each op picks
  // its device on its own, so this is below every placement's chain.
  constexpr double kNever = 1e300;
  struct Ready {
    double on[2] = {0, 0};
  };
  llvm::DenseMap<Value, Ready> ready;
  auto copyUs = [&](Value value, int to) {
    int64_t bytes = getNumBytes(value.getType());
    return estimateTransferTimeUs(bytes, to ? profile.h2d() : profile.d2h());
  };
  auto readyOf = [&](Value value) -> Ready {
    if (auto found = ready.find(value); found != ready.end())
      return found->second;
    // An input arrives on the host; a weight is resident or mapped.
    Ready arrival;
    if (isa<BlockArgument>(value))
      arrival.on[1] = copyUs(value, 1);
    return arrival;
  };
  double longest = 0, total = 0, cpuOnly = 0, gpuOnly = 0;
  for (Operation &op : block) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      for (Value result : op.getOperands()) {
        Ready at = readyOf(result);
        longest = std::max(longest, std::min(at.on[0], at.on[1] + copyUs(result, 0)));
      }
      continue;
    }
    if (isa<WaitOp, WeightOp>(op))
      continue;
    if (isa<TransferOp, ViewLikeOpInterface>(op)) {
      // A placement's copy or a view: the value itself, wherever it goes.
      ready[op.getResult(0)] = readyOf(op.getOperand(0));
      continue;
    }
    if (op.getNumResults() != 1)
      continue;
    auto pin = op.getAttrOfType<DeviceAttr>(TandemDialect::kPinAttrName);
    std::optional<double> us[2];
    if (!pin || pin.isCPU())
      us[0] = estimateOpTimeUs(&op, DeviceKind::CPU, profile);
    if ((!pin || pin.isGPU()) && fitsGpuAlone(&op, gpuBudgetBytes))
      us[1] = estimateOpTimeUs(&op, DeviceKind::GPU, profile);
    Ready finish;
    for (int device = 0; device < 2; ++device) {
      if (!us[device]) {
        finish.on[device] = kNever;
        continue;
      }
      double start = 0;
      for (Value operand : op.getOperands()) {
        Ready at = readyOf(operand);
        start = std::max(start, std::min(at.on[device],
                                         at.on[1 - device] +
                                             copyUs(operand, device)));
      }
      finish.on[device] = start + *us[device];
    }
    // Ready on the other device: finished there, or copied over.
    Value result = op.getResult(0);
    Ready at;
    for (int device = 0; device < 2; ++device)
      at.on[device] = std::min(finish.on[device],
                               finish.on[1 - device] + copyUs(result, device));
    ready[result] = at;
    longest = std::max(longest, std::min(finish.on[0], finish.on[1]));
    double fastest = 0;
    if (us[0] && us[1])
      fastest = std::min(*us[0], *us[1]);
    else if (us[0])
      cpuOnly += fastest = *us[0];
    else if (us[1])
      gpuOnly += fastest = *us[1];
    total += fastest;
  }
  return std::max({longest, total / 2, cpuOnly, gpuOnly});
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
