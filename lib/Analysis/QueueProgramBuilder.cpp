//===- QueueProgramBuilder.cpp - the queue program of IR or a placement ---===//

#include "tandem/Analysis/QueueProgramBuilder.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// Sorts and deduplicates a list of item indices.
template <typename List> void sortUnique(List &list) {
  llvm::sort(list);
  list.erase(std::unique(list.begin(), list.end()), list.end());
}

/// The end of either builder: each buffer's readers sorted, then the GPU
/// workspaces, in item order, each live while its item runs.
void finishBuffers(QueueProgram &program,
                   llvm::ArrayRef<std::pair<int32_t, int64_t>> workspaces) {
  for (ArenaBuffer &buffer : program.buffers)
    sortUnique(buffer.readers);
  for (auto [item, bytes] : workspaces) {
    ArenaBuffer workspace;
    workspace.arena = Arena::GPU;
    workspace.bytes = bytes;
    workspace.writer = item;
    workspace.isWorkspace = true;
    program.buffers.push_back(std::move(workspace));
  }
}

/// Microseconds one queue item takes: an op on its placed device, a
/// transfer over its link.
double estimateItemUs(Operation *op, const DeviceProfile &profile) {
  if (auto transfer = dyn_cast<TransferOp>(op))
    return estimateTransferTimeUs(getNumBytes(transfer.getType()),
                                  transfer.getTo().isGPU() ? profile.h2d()
                                                           : profile.d2h());
  DeviceAttr device = getPlacedDevice(op->getResult(0));
  return estimateOpTimeUs(op, device.getKind(), profile).value_or(0);
}

} // namespace

Operation *BlockQueueProgram::opAtPoint(Block &block, int64_t point) const {
  if (point >= 1 && point <= int64_t(itemOps.size()))
    return itemOps[point - 1];
  return point <= 0 ? &block.front() : block.getTerminator();
}

FailureOr<BlockQueueProgram> tandem::buildQueueProgram(Block &block,
                                                       const DeviceProfile *profile) {
  BlockQueueProgram result;
  QueueProgram &program = result.program;
  program.concurrent = isScheduled(block.getParentOp());

  // A view owns no buffer: it is its source's bytes read as another shape.
  // Its readers read its root's buffer, ready once the root's producer is.
  llvm::DenseMap<Value, Value> viewRoot;
  auto rootOf = [&](Value value) {
    auto found = viewRoot.find(value);
    return found == viewRoot.end() ? value : found->second;
  };
  llvm::DenseMap<Operation *, int32_t> itemOf;
  llvm::DenseMap<Value, int32_t> bufferOf;
  std::array<llvm::SmallVector<int32_t, 2>, kNumQueues> pendingWaits;
  std::vector<std::pair<int32_t, int64_t>> workspaces; // (item, bytes)

  auto producerItem = [&](Value value) -> int32_t {
    Operation *producer = rootOf(value).getDefiningOp();
    auto found = producer ? itemOf.find(producer) : itemOf.end();
    return found == itemOf.end() ? -1 : found->second;
  };

  for (Operation &op : block) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      for (Value operand : op.getOperands())
        if (auto found = bufferOf.find(rootOf(operand)); found != bufferOf.end())
          program.buffers[found->second].heldToEnd = true;
      continue;
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      viewRoot[op.getResult(0)] = rootOf(view.getViewSource());
      continue;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      // A wait holds for the next item of its queue (and so all later ones).
      for (Value value : wait.getValues())
        if (int32_t producer = producerItem(value); producer >= 0)
          pendingWaits[int(wait.getQueue())].push_back(producer);
      continue;
    }
    if (op.getNumResults() != 1)
      return op.emitError("memory planning handles ops with one result");
    Value value = op.getResult(0);
    DeviceAttr device = getPlacedDevice(value);
    if (!device)
      return op.emitError("is not placed: run --tandem-place and "
                          "--tandem-insert-transfers first");
    if (isa<WeightOp>(op)) {
      // Host weights are read from the mapped weights file; GPU weights are
      // uploaded once and stay for the whole run.
      if (device.isGPU()) {
        bufferOf[value] = program.buffers.size();
        program.buffers.push_back({Arena::GPU, getNumBytes(value.getType())});
        result.bufferOps.push_back(&op);
      }
      continue;
    }

    int32_t index = program.items.size();
    QueueItem item;
    std::optional<QueueKind> queue =
        program.concurrent ? getScheduledQueue(&op) : getQueueForPlacement(&op);
    item.queue = int(queue.value_or(getQueueForPlacement(&op).value_or(
        QueueKind::CPU)));
    if (profile)
      item.us = estimateItemUs(&op, *profile);
    for (Value operand : op.getOperands()) {
      if (int32_t producer = producerItem(operand); producer >= 0)
        item.inputs.push_back(producer);
      if (auto found = bufferOf.find(rootOf(operand)); found != bufferOf.end())
        program.buffers[found->second].readers.push_back(index);
    }
    sortUnique(item.inputs);
    item.waits = std::move(pendingWaits[item.queue]);
    pendingWaits[item.queue].clear();
    program.items.push_back(std::move(item));
    result.itemOps.push_back(&op);
    itemOf[&op] = index;

    bufferOf[value] = program.buffers.size();
    ArenaBuffer buffer;
    buffer.arena = device.isGPU() ? Arena::GPU : Arena::CPU;
    buffer.bytes = getNumBytes(value.getType());
    buffer.writer = index;
    program.buffers.push_back(std::move(buffer));
    result.bufferOps.push_back(&op);
    auto support = dyn_cast<DeviceSupportOpInterface>(op);
    if (int64_t bytes = support ? support.getGpuWorkspaceBytes() : 0;
        bytes > 0 && device.isGPU())
      workspaces.push_back({index, bytes});
  }
  finishBuffers(program, workspaces);
  for (auto [item, bytes] : workspaces)
    result.bufferOps.push_back(result.itemOps[item]);
  return result;
}

namespace {

/// Builds the program of a placement in the order --tandem-insert-transfers
/// leaves the block: each op where it is, the copy of its result right
/// after it, the copies of the arguments first.
class PlacementProgramBuilder {
public:
  PlacementProgramBuilder(const PlacementProblem &problem,
                          const Placement &placement)
      : problem(problem), placement(placement),
        ready(problem.values.size(), {-1, -1}),
        buffer(problem.values.size(), {-1, -1}) {}

  QueueProgram build() {
    // At most one copy per value, and a buffer per value on each device:
    // reserved, so that growing never copies the items' small vectors.
    program.items.reserve(problem.ops.size() + problem.values.size());
    program.buffers.reserve(2 * problem.values.size() + problem.ops.size());
    for (int value = 0; value < int(problem.values.size()); ++value)
      if (problem.values[value].isArgument())
        moveValue(value, /*home=*/0);
    std::vector<std::pair<int32_t, int64_t>> workspaces;
    for (int index = 0; index < int(problem.ops.size()); ++index) {
      const PlacementOp &op = problem.ops[index];
      int device = placement[index];
      if (op.isWeight) {
        for (int value : op.results) {
          if (device)
            buffer[value][1] = addBuffer(Arena::GPU, value, -1);
          moveValue(value, device);
        }
        continue;
      }
      if (op.aliasesOperand) {
        int source = op.operands.front();
        for (int value : op.results) {
          ready[value][device] = ready[source][device];
          buffer[value][device] = buffer[source][device];
          moveValue(value, device);
        }
        continue;
      }
      int32_t item = program.items.size();
      QueueItem queued;
      queued.queue = int(device ? QueueKind::GPU : QueueKind::CPU);
      queued.us = device ? op.gpuUs : op.cpuUs;
      auto read = [&](int value, int on) {
        if (ready[value][on] >= 0)
          queued.inputs.push_back(ready[value][on]);
        if (buffer[value][on] >= 0)
          program.buffers[buffer[value][on]].readers.push_back(item);
      };
      for (int value : op.operands)
        read(value, device);
      for (int value : op.hostOperands)
        read(value, 0);
      sortUnique(queued.inputs);
      program.items.push_back(std::move(queued));
      for (int value : op.results) {
        ready[value][device] = item;
        buffer[value][device] =
            addBuffer(device ? Arena::GPU : Arena::CPU, value, item);
      }
      if (device && op.gpuWorkspaceBytes > 0)
        workspaces.push_back({item, op.gpuWorkspaceBytes});
      for (int value : op.results)
        moveValue(value, device);
    }
    for (const PlacementValue &value : problem.values)
      if (value.isResult) {
        int index = &value - problem.values.data();
        if (buffer[index][0] >= 0)
          program.buffers[buffer[index][0]].heldToEnd = true;
      }
    finishBuffers(program, workspaces);
    return std::move(program);
  }

private:
  int32_t addBuffer(Arena arena, int value, int32_t writer) {
    ArenaBuffer added;
    added.arena = arena;
    added.bytes = problem.values[value].bytes;
    added.writer = writer;
    program.buffers.push_back(std::move(added));
    return program.buffers.size() - 1;
  }

  /// The copy of `value` to the device other than `home`, if something
  /// reads it there (a weight on the GPU is read on the host from the
  /// mapped file: no copy).
  void moveValue(int index, int home) {
    const PlacementValue &value = problem.values[index];
    int other = 1 - home;
    bool readThere = false;
    for (int consumer : value.consumers)
      readThere |= placement[consumer] == other;
    if (other == 0)
      readThere |= value.neededOnCpu();
    if (!readThere)
      return;
    if (value.isWeight && home == 1) {
      ready[index][0] = -1; // the host's own copy, the mapped file
      return;
    }
    int32_t item = program.items.size();
    QueueItem copy;
    copy.queue = int(other ? QueueKind::H2D : QueueKind::D2H);
    copy.us = other ? value.h2dUs : value.d2hUs;
    if (ready[index][home] >= 0)
      copy.inputs.push_back(ready[index][home]);
    if (buffer[index][home] >= 0)
      program.buffers[buffer[index][home]].readers.push_back(item);
    program.items.push_back(std::move(copy));
    ready[index][other] = item;
    buffer[index][other] =
        addBuffer(other ? Arena::GPU : Arena::CPU, index, item);
  }

  const PlacementProblem &problem;
  const Placement &placement;
  QueueProgram program;
  /// Per value and device (0 CPU, 1 GPU): the item after which it is ready
  /// there (-1: from the start), and its buffer there (-1: none).
  std::vector<std::array<int32_t, 2>> ready, buffer;
};

} // namespace

QueueProgram tandem::buildQueueProgram(const PlacementProblem &problem,
                                       const Placement &placement) {
  return PlacementProgramBuilder(problem, placement).build();
}
