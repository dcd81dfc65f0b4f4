//===- TandemSchedule.cpp - queues and happens-before of a schedule -------===//

#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

std::optional<QueueKind> tandem::getQueueForPlacement(Operation *op) {
  if (auto transfer = dyn_cast<TransferOp>(op))
    return transfer.getTo().isGPU() ? QueueKind::H2D : QueueKind::D2H;
  if (op->getNumResults() != 1)
    return std::nullopt;
  DeviceAttr device = getPlacedDevice(op->getResult(0));
  if (!device)
    return std::nullopt;
  return device.isGPU() ? QueueKind::GPU : QueueKind::CPU;
}

std::optional<QueueKind> tandem::getScheduledQueue(Operation *op) {
  if (auto wait = dyn_cast<WaitOp>(op))
    return wait.getQueue();
  if (auto queue = op->getAttrOfType<QueueKindAttr>(TandemDialect::kQueueAttrName))
    return queue.getValue();
  return std::nullopt;
}

bool tandem::isScheduled(Operation *func) {
  return func && func->hasAttr(TandemDialect::kScheduledAttrName);
}

bool tandem::isQueueItem(Operation *op) {
  return !isa<WeightOp, WaitOp, ViewLikeOpInterface>(op) &&
         !op->hasTrait<mlir::OpTrait::IsTerminator>();
}

QueueClocks::QueueClocks() {
  Clock none;
  none.fill(-1);
  state.fill(none);
}

QueueClocks::Stamp QueueClocks::issue(int queue) {
  Stamp stamp;
  stamp.queue = queue;
  stamp.clock = state[queue];
  stamp.index = count[queue]++;
  // The queue's next op starts after this one completes.
  state[queue][queue] = stamp.index;
  return stamp;
}

void QueueClocks::wait(int queue, const Stamp &producer) {
  if (producer.index < 0)
    return;
  for (int k = 0; k < kNumQueues; ++k)
    state[queue][k] = std::max(state[queue][k], producer.clock[k]);
  state[queue][producer.queue] =
      std::max(state[queue][producer.queue], producer.index);
}

HappensBefore::HappensBefore(Block &block)
    : scheduled(tandem::isScheduled(block.getParentOp())) {
  QueueClocks clocks;
  int64_t position = 0;
  for (Operation &op : block) {
    Step step;
    step.position = position++;
    step.clock.fill(-1);
    if (auto view = dyn_cast<ViewLikeOpInterface>(&op)) {
      Value source = view.getViewSource();
      Value root = viewRoot.lookup(source);
      viewRoot[op.getResult(0)] = root ? root : source;
    }
    if (auto wait = dyn_cast<WaitOp>(&op); wait && scheduled) {
      for (Value value : wait.getValues())
        if (Operation *producer = readyAfter(value))
          clocks.wait(int(wait.getQueue()), steps.lookup(producer));
    } else if (isQueueItem(&op)) {
      // Unscheduled, every op is on one queue: block order.
      std::optional<QueueKind> queue =
          scheduled ? getScheduledQueue(&op) : QueueKind::CPU;
      if (!queue)
        queue = getQueueForPlacement(&op);
      static_cast<QueueClocks::Stamp &>(step) =
          clocks.issue(queue ? int(*queue) : 0);
    }
    steps[&op] = step;
  }
}

Operation *HappensBefore::readyAfter(Value value) const {
  if (Value root = viewRoot.lookup(value))
    value = root;
  Operation *producer = value.getDefiningOp();
  if (!producer || !isQueueItem(producer))
    return nullptr;
  return producer;
}

bool HappensBefore::completesBefore(Operation *before, Operation *after) const {
  Step first = steps.lookup(before), second = steps.lookup(after);
  if (first.index < 0 || second.index < 0)
    return true;
  return second.clock[first.queue] >= first.index;
}

LogicalResult tandem::verifySchedule(Operation *func) {
  auto function = dyn_cast<FunctionOpInterface>(func);
  if (!function)
    return func->emitError() << "'" << TandemDialect::kScheduledAttrName
                             << "' is set on '" << func->getName()
                             << "', which is not a function";
  if (function.isExternal())
    return success();
  Region &body = function.getFunctionBody();
  if (!body.hasOneBlock())
    return func->emitError("a scheduled function has one block");
  Block &block = body.front();
  HappensBefore order(block);
  for (Operation &op : block) {
    std::optional<QueueKind> queue = getScheduledQueue(&op);
    if (!isQueueItem(&op)) {
      if (!isa<WaitOp>(op) && op.hasAttr(TandemDialect::kQueueAttrName))
        return op.emitError()
               << "'" << op.getName()
               << "' runs on no queue (weights are uploaded or mapped at "
                  "load, views are their source's bytes): it takes no '"
               << TandemDialect::kQueueAttrName << "'";
      continue;
    }
    std::optional<QueueKind> placed = getQueueForPlacement(&op);
    if (!queue || !placed)
      return op.emitError()
             << "in a scheduled function, every op that runs needs a '"
             << TandemDialect::kQueueAttrName << "' and a placement ("
             << (queue ? "it is not placed" : "it has no queue") << ")";
    if (*queue != *placed)
      return op.emitError()
             << "is on the " << stringifyQueueKind(*queue)
             << " queue, but its placement puts it on the "
             << stringifyQueueKind(*placed) << " queue";
    for (OpOperand &use : op.getOpOperands()) {
      Operation *producer = order.readyAfter(use.get());
      if (!producer || order.completesBefore(producer, &op))
        continue;
      std::optional<QueueKind> from = getScheduledQueue(producer);
      return op.emitError()
             << "on the " << stringifyQueueKind(*queue)
             << " queue reads operand #" << use.getOperandNumber()
             << ", which '" << producer->getName() << "' produces on the "
             << (from ? stringifyQueueKind(*from) : StringRef("unknown"))
             << " queue, without waiting for it: add 'tandem.wait <"
             << stringifyQueueKind(*queue)
             << "> for' that value (or a later one of its queue) before "
                "this op";
    }
  }
  return success();
}

void tandem::clearSchedule(Operation *func) {
  func->removeAttr(TandemDialect::kScheduledAttrName);
  func->walk([](Operation *op) {
    if (isa<WaitOp>(op))
      op->erase();
    else
      op->removeAttr(TandemDialect::kQueueAttrName);
  });
}
