//===- PlacementProblem.cpp - objective and GPU memory of a placement -----===//

#include "tandem/Analysis/PlacementProblem.h"

#include <cassert>

#include <algorithm>

#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"

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

std::optional<PlacementObjective>
tandem::parsePlacementObjective(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<PlacementObjective>>(name)
      .Case("serial", PlacementObjective::Serial)
      .Case("makespan", PlacementObjective::Makespan)
      .Default(std::nullopt);
}

llvm::StringRef
tandem::stringifyPlacementObjective(PlacementObjective objective) {
  return objective == PlacementObjective::Serial ? "serial" : "makespan";
}

void PlacementProblem::finalize() {
  for (PlacementValue &value : values) {
    value.consumers.clear();
    value.hostConsumers.clear();
  }
  for (auto [index, op] : llvm::enumerate(ops)) {
    for (int operand : op.operands)
      values[operand].consumers.push_back(index);
    for (int operand : op.hostOperands)
      values[operand].hostConsumers.push_back(index);
  }
  auto sortUnique = [](llvm::SmallVectorImpl<int> &list) {
    llvm::sort(list);
    list.erase(std::unique(list.begin(), list.end()), list.end());
  };
  for (PlacementValue &value : values) {
    sortUnique(value.consumers);
    sortUnique(value.hostConsumers);
  }
  // Alias groups: a reshape's result with its operand, transitively.
  aliasGroupOf.assign(values.size(), -1);
  aliasGroupMembers.clear();
  for (auto [index, value] : llvm::enumerate(values)) {
    int group = -1;
    if (!value.isArgument() && ops[value.producer].aliasesOperand &&
        !ops[value.producer].operands.empty())
      group = aliasGroupOf[ops[value.producer].operands.front()];
    if (group < 0) {
      group = aliasGroupMembers.size();
      aliasGroupMembers.emplace_back();
    }
    aliasGroupOf[index] = group;
    aliasGroupMembers[group].push_back(index);
  }
  packedValues.clear();
  packedValues.reserve(values.size());
  packedConsumers.clear();
  for (const PlacementValue &value : values) {
    PackedPlacementValue packed;
    packed.bytes = value.bytes;
    packed.producer = value.producer;
    packed.firstConsumer = packedConsumers.size();
    packedConsumers.insert(packedConsumers.end(), value.consumers.begin(),
                           value.consumers.end());
    packed.endConsumer = packedConsumers.size();
    packed.isWeight = value.isWeight;
    packed.neededOnCpu = value.neededOnCpu();
    packed.producedByAlias =
        !value.isArgument() && ops[value.producer].aliasesOperand;
    packedValues.push_back(packed);
  }
}

int64_t PlacementProblem::arenaBytes(const Placement &placement) const {
  return planMemory(gpuBuffers(placement)).arenaBytes;
}

bool PlacementProblem::fitsBudget(const Placement &placement) const {
  return fitsBudget(placement, evaluate(placement));
}

namespace {
/// Whether `buffers`, whose live bytes at once fit `budget`, fit it laid out.
bool layoutFits(const std::vector<BufferLifetime> &buffers, int64_t budget) {
  // Every buffer at once within the budget: any layout is (no planning).
  int64_t all = 0;
  for (const BufferLifetime &buffer : buffers)
    all += alignBufferSize(buffer.bytes);
  return all <= budget || planMemory(buffers).arenaBytes <= budget;
}
} // namespace

bool PlacementProblem::fitsWithin(const Placement &placement,
                                  const PlacementCost &cost,
                                  int64_t budget) const {
  if (cost.peakGpuBytes > budget)
    return false;
  return layoutFits(gpuBuffers(placement), budget);
}

bool PlacementProblem::fitsWithin(const Placement &placement,
                                  int64_t budget) const {
  std::vector<BufferLifetime> buffers = gpuBuffers(placement);
  if (findLivePeak(buffers).bytes > budget)
    return false;
  return layoutFits(buffers, budget);
}

namespace {
/// Where a value is read, under a placement.
struct ValueUse {
  bool producedOnGpu = false;
  bool readOnCpu = false;
  int lastGpuConsumer = -1;
};

ValueUse useOf(const PackedPlacementValue &value,
              llvm::ArrayRef<int32_t> consumers, const Placement &placement) {
  ValueUse use;
  use.producedOnGpu = value.producer >= 0 && placement[value.producer];
  use.readOnCpu = value.neededOnCpu;
  for (int consumer :
       consumers.slice(value.firstConsumer,
                       value.endConsumer - value.firstConsumer)) {
    if (placement[consumer])
      use.lastGpuConsumer = std::max(use.lastGpuConsumer, consumer);
    else
      use.readOnCpu = true;
  }
  return use;
}

/// The value moves host to device (+1), device to host (-1), or not (0).
int transferDirection(const PackedPlacementValue &value, const ValueUse &use) {
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
  const PackedPlacementValue &packed = packedValues[index];
  switch (transferDirection(packed, useOf(packed, packedConsumers, placement))) {
  case +1:
    return values[index].h2dUs;
  case -1:
    return values[index].d2hUs;
  default:
    return 0;
  }
}

namespace {
/// The GPU buffer of `value` given its use, if it has one.
std::optional<BufferLifetime> gpuBufferOf(const PackedPlacementValue &value,
                                          const ValueUse &use,
                                          int64_t lastPoint) {
  bool isArgument = value.producer < 0;
  int64_t producerPoint = isArgument ? 0 : 2 * int64_t(value.producer) + 1;
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
    buffer.first = isArgument ? 0 : producerPoint + 1;
    buffer.last = 2 * int64_t(use.lastGpuConsumer) + 1;
  } else {
    return std::nullopt;
  }
  return buffer;
}
} // namespace

template <typename Indices, typename BufferOf, typename OnUse>
void PlacementProblem::collectGpuBuffers(
    const Placement &placement, const Indices &indices, BufferOf &bufferOf,
    std::vector<BufferLifetime> &buffers,
    std::vector<BufferMembers> *members, OnUse onUse) const {
  int64_t lastPoint = getNumPoints() - 1;
  for (int index : indices) {
    const PackedPlacementValue &value = packedValues[index];
    ValueUse use = useOf(value, packedConsumers, placement);
    onUse(index, use);
    std::optional<BufferLifetime> buffer = gpuBufferOf(value, use, lastPoint);
    if (value.producedByAlias && placement[value.producer]) {
      // A GPU reshape reads its operand on the GPU, so that buffer exists:
      // the result shares it, and keeps it alive as long as it needs it.
      int shared = bufferOf.get(ops[value.producer].operands.front());
      assert(shared >= 0 && "a GPU reshape's operand has a GPU buffer");
      if (buffer)
        buffers[shared].last = std::max(buffers[shared].last, buffer->last);
      bufferOf.set(index, shared);
      if (members)
        (*members)[shared].push_back(index);
      continue;
    }
    if (!buffer)
      continue;
    bufferOf.set(index, buffers.size());
    buffers.push_back(*buffer);
    if (members)
      members->push_back(BufferMembers{index});
  }
}

namespace {
/// Buffer of each value, for all of them.
struct DenseBufferOf {
  std::vector<int> map;
  int get(int value) const { return map[value]; }
  void set(int value, int buffer) { map[value] = buffer; }
};
/// Buffer of each value, for the few of one alias group.
struct SparseBufferOf {
  llvm::SmallVector<std::pair<int, int>, 8> map;
  int get(int value) const {
    for (auto [key, buffer] : map)
      if (key == value)
        return buffer;
    return -1;
  }
  void set(int value, int buffer) { map.push_back({value, buffer}); }
};
} // namespace

std::vector<BufferLifetime>
PlacementProblem::gpuBuffers(const Placement &placement,
                             std::vector<BufferMembers> *members) const {
  std::vector<BufferLifetime> buffers;
  buffers.reserve(values.size());
  if (members)
    members->clear();
  DenseBufferOf bufferOf{std::vector<int>(values.size(), -1)};
  collectGpuBuffers(placement, llvm::seq<int>(0, values.size()), bufferOf,
                    buffers, members, [](int, const ValueUse &) {});
  appendWorkspaces(placement, buffers, members);
  return buffers;
}

void PlacementProblem::appendWorkspaces(
    const Placement &placement, std::vector<BufferLifetime> &buffers,
    std::vector<BufferMembers> *members) const {
  for (auto [index, op] : llvm::enumerate(ops)) {
    if (!placement[index] || op.gpuWorkspaceBytes == 0)
      continue;
    int64_t point = 2 * int64_t(index) + 1;
    buffers.push_back({op.gpuWorkspaceBytes, point, point});
    if (members)
      members->emplace_back();
  }
}

int64_t PlacementProblem::aliasGroupBytesAt(int group,
                                            const Placement &placement,
                                            int64_t point) const {
  std::vector<BufferLifetime> buffers;
  SparseBufferOf bufferOf;
  collectGpuBuffers(placement, aliasGroupMembers[group], bufferOf, buffers,
                    nullptr, [](int, const ValueUse &) {});
  int64_t bytes = 0;
  for (const BufferLifetime &buffer : buffers)
    if (buffer.first <= point && point <= buffer.last)
      bytes += alignBufferSize(buffer.bytes);
  return bytes;
}

PlacementProblem::MoveEffect
PlacementProblem::moveEffect(Placement &placement, llvm::ArrayRef<int> moved,
                             int64_t point) const {
  // Only the moved ops' own times, the transfers of the values they touch
  // and the buffers those values share change.
  llvm::SmallVector<int, 16> touched, groups;
  for (int op : moved)
    for (llvm::ArrayRef<int> list :
         {llvm::ArrayRef<int>(ops[op].operands), llvm::ArrayRef<int>(ops[op].hostOperands),
          llvm::ArrayRef<int>(ops[op].results)})
      touched.append(list.begin(), list.end());
  llvm::sort(touched);
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (int value : touched)
    groups.push_back(aliasGroupOf[value]);
  llvm::sort(groups);
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  auto measure = [&](double &us, int64_t &bytes) {
    us = 0;
    bytes = 0;
    for (int op : moved)
      us += placement[op] ? ops[op].gpuUs : ops[op].cpuUs;
    for (int value : touched)
      us += transferUs(value, placement);
    for (int group : groups)
      bytes += aliasGroupBytesAt(group, placement, point);
    for (int op : moved)
      if (placement[op] && point == 2 * int64_t(op) + 1)
        bytes += alignBufferSize(ops[op].gpuWorkspaceBytes);
  };
  double usBefore, usAfter;
  int64_t bytesBefore, bytesAfter;
  measure(usBefore, bytesBefore);
  for (int op : moved)
    placement[op] ^= 1;
  measure(usAfter, bytesAfter);
  for (int op : moved)
    placement[op] ^= 1;
  return {usAfter - usBefore, bytesAfter - bytesBefore};
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
  // One pass over the values: transfers, and the GPU buffers.
  std::vector<BufferLifetime> buffers;
  buffers.reserve(values.size());
  DenseBufferOf bufferOf{std::vector<int>(values.size(), -1)};
  collectGpuBuffers(
      placement, llvm::seq<int>(0, values.size()), bufferOf, buffers, nullptr,
      [&](int index, const ValueUse &use) {
        const PlacementValue &value = values[index];
        switch (transferDirection(packedValues[index], use)) {
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
      });
  appendWorkspaces(placement, buffers, nullptr);
  // GPU memory as a difference array over the program points.
  std::vector<int64_t> delta(getNumPoints() + 1, 0);
  for (const BufferLifetime &buffer : buffers) {
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

std::string PlacementProblem::describeGpuMemory(const Placement &placement,
                                                const PlacementCost &cost) const {
  int64_t arena = arenaBytes(placement);
  std::string text = std::to_string(std::max(arena, cost.peakGpuBytes)) +
                     " bytes of GPU memory";
  if (arena > cost.peakGpuBytes)
    text += " once laid out (" + std::to_string(cost.peakGpuBytes) +
            " bytes live at its peak)";
  return text;
}

Placement PlacementProblem::mostGpuPlacement() const {
  Placement placement(ops.size());
  for (auto [index, op] : llvm::enumerate(ops))
    placement[index] = op.canRunOn(DeviceKind::GPU) && op.pin != DeviceKind::CPU;
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
