//===- PlacementProblem.cpp - objective and GPU memory of a placement -----===//

#include "tandem/Analysis/PlacementProblem.h"

#include <cassert>

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

std::optional<PlacementStrategy>
tandem::parsePlacementStrategy(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<PlacementStrategy>>(name)
      .Case("auto", PlacementStrategy::Auto)
      .Case("exact", PlacementStrategy::Exact)
      .Case("mincut", PlacementStrategy::MinCut)
      .Case("greedy", PlacementStrategy::Greedy)
      .Case("all-cpu", PlacementStrategy::AllCpu)
      .Case("all-gpu", PlacementStrategy::AllGpu)
      .Default(std::nullopt);
}

llvm::StringRef tandem::stringifyPlacementStrategy(PlacementStrategy strategy) {
  switch (strategy) {
  case PlacementStrategy::Auto:
    return "auto";
  case PlacementStrategy::Exact:
    return "exact";
  case PlacementStrategy::MinCut:
    return "mincut";
  case PlacementStrategy::Greedy:
    return "greedy";
  case PlacementStrategy::AllCpu:
    return "all-cpu";
  case PlacementStrategy::AllGpu:
    return "all-gpu";
  }
  return "auto";
}

void PlacementProblem::finalize() {
  for (PlacementValue &value : values) {
    value.consumers.clear();
    value.hostConsumers.clear();
  }
  for (auto [index, op] : llvm::enumerate(ops)) {
    for (int operand : op.operands)
      values[operand].consumers.push_back(index);
  }
  for (PlacementValue &value : values) {
    llvm::sort(value.consumers);
    value.consumers.erase(
        std::unique(value.consumers.begin(), value.consumers.end()),
        value.consumers.end());
  }
}

namespace {
/// Where a value is read, under a placement.
struct ValueUse {
  bool producedOnGpu = false;
  bool readOnCpu = false;
  int lastGpuConsumer = -1;
};

ValueUse useOf(const PlacementValue &value, const Placement &placement) {
  ValueUse use;
  use.producedOnGpu = !value.isArgument() && placement[value.producer];
  use.readOnCpu = value.neededOnCpu();
  for (int consumer : value.consumers) {
    if (placement[consumer])
      use.lastGpuConsumer = std::max(use.lastGpuConsumer, consumer);
    else
      use.readOnCpu = true;
  }
  return use;
}

/// The value moves host to device (+1), device to host (-1), or not (0).
int transferDirection(const PlacementValue &value, const ValueUse &use) {
  if (!use.producedOnGpu)
    return use.lastGpuConsumer >= 0 ? +1 : 0;
  // A weight is always readable on the host: the weights file is mapped.
  if (value.isWeight)
    return 0;
  return use.readOnCpu ? -1 : 0;
}
} // namespace

double PlacementProblem::transferUs(int index,
                                    const Placement &placement) const {
  const PlacementValue &value = values[index];
  switch (transferDirection(value, useOf(value, placement))) {
  case +1:
    return value.h2dUs;
  case -1:
    return value.d2hUs;
  default:
    return 0;
  }
}

namespace {
/// The GPU buffer of `value` given its use, if it has one.
std::optional<BufferLifetime> gpuBufferOf(const PlacementValue &value,
                                          const ValueUse &use,
                                          int64_t lastPoint) {
  int64_t producerPoint = value.isArgument() ? 0 : 2 * value.producer + 1;
  BufferLifetime buffer;
  buffer.bytes = value.bytes;
  if (use.producedOnGpu && value.isWeight) {
    // Resident: uploaded before the first run, kept to the end.
    buffer.first = 0;
    buffer.last = lastPoint;
  } else if (use.producedOnGpu) {
    buffer.first = producerPoint;
    buffer.last = producerPoint;
    if (use.lastGpuConsumer >= 0)
      buffer.last =
          std::max<int64_t>(buffer.last, 2 * int64_t(use.lastGpuConsumer) + 1);
    if (use.readOnCpu) // copied out right after the producer
      buffer.last = std::max(buffer.last, producerPoint + 1);
  } else if (use.lastGpuConsumer >= 0) {
    // Copied in right after the producer (arguments: before op 0).
    buffer.first = value.isArgument() ? 0 : producerPoint + 1;
    buffer.last = 2 * int64_t(use.lastGpuConsumer) + 1;
  } else {
    return std::nullopt;
  }
  return buffer;
}
} // namespace

std::vector<BufferLifetime>
PlacementProblem::gpuBuffers(const Placement &placement,
                             std::vector<std::vector<int>> *members) const {
  std::vector<BufferLifetime> buffers;
  if (members)
    members->clear();
  std::vector<int> bufferOf(values.size(), -1);
  int64_t lastPoint = getNumPoints() - 1;
  for (auto [index, value] : llvm::enumerate(values)) {
    std::optional<BufferLifetime> buffer =
        gpuBufferOf(value, useOf(value, placement), lastPoint);
    if (!value.isArgument() && ops[value.producer].aliasesOperand &&
        placement[value.producer]) {
      // A GPU reshape reads its operand on the GPU, so that buffer exists:
      // the result shares it, and keeps it alive as long as it needs it.
      int shared = bufferOf[ops[value.producer].operands.front()];
      assert(shared >= 0 && "a GPU reshape's operand has a GPU buffer");
      if (buffer)
        buffers[shared].last = std::max(buffers[shared].last, buffer->last);
      bufferOf[index] = shared;
      if (members)
        (*members)[shared].push_back(index);
      continue;
    }
    if (!buffer)
      continue;
    bufferOf[index] = buffers.size();
    buffers.push_back(*buffer);
    if (members)
      members->push_back({static_cast<int>(index)});
  }
  return buffers;
}

PlacementCost PlacementProblem::evaluate(const Placement &placement,
                                        std::vector<int64_t> *livePerPoint) const {
  PlacementCost cost;
  for (auto [index, op] : llvm::enumerate(ops)) {
    if (placement[index])
      cost.gpuComputeUs += op.gpuUs;
    else
      cost.cpuComputeUs += op.cpuUs;
  }
  // One pass over the values: transfers, and GPU memory as a difference
  // array over the program points.
  std::vector<int64_t> delta(getNumPoints() + 1, 0);
  for (const PlacementValue &value : values) {
    ValueUse use = useOf(value, placement);
    switch (transferDirection(value, use)) {
    case +1:
      cost.transferUs += value.h2dUs;
      ++cost.h2dCount;
      cost.h2dBytes += value.bytes;
      break;
    case -1:
      cost.transferUs += value.d2hUs;
      ++cost.d2hCount;
      cost.d2hBytes += value.bytes;
      break;
    default:
      break;
    }
  }
  for (const BufferLifetime &buffer : gpuBuffers(placement)) {
    delta[buffer.first] += alignBufferSize(buffer.bytes);
    delta[buffer.last + 1] -= alignBufferSize(buffer.bytes);
  }
  int64_t live = 0;
  if (livePerPoint)
    livePerPoint->resize(getNumPoints());
  for (int64_t point = 0; point < getNumPoints(); ++point) {
    live += delta[point];
    if (livePerPoint)
      (*livePerPoint)[point] = live;
    if (live > cost.peakGpuBytes) {
      cost.peakGpuBytes = live;
      cost.peakPoint = point;
    }
  }
  return cost;
}

Placement PlacementProblem::leastGpuPlacement() const {
  Placement placement(ops.size(), 0);
  for (auto [index, op] : llvm::enumerate(ops))
    placement[index] = (op.pin && *op.pin == DeviceKind::GPU) ||
                       !op.canRunOn(DeviceKind::CPU);
  return placement;
}

double PlacementProblem::flipDeltaUs(int index, Placement &placement) const {
  const PlacementOp &op = ops[index];
  auto touchedTransfers = [&] {
    double total = 0;
    for (int value : op.operands)
      total += transferUs(value, placement);
    for (int value : op.results)
      total += transferUs(value, placement);
    return total;
  };
  double before = touchedTransfers() + (placement[index] ? op.gpuUs : op.cpuUs);
  placement[index] ^= 1;
  double after = touchedTransfers() + (placement[index] ? op.gpuUs : op.cpuUs);
  placement[index] ^= 1;
  return after - before;
}
