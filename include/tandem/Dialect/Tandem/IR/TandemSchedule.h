//===- TandemSchedule.h - queues and happens-before of a schedule -*- C++ -*-===//
//
// A scheduled function (--tandem-schedule) runs each op on one of four
// queues (the CPU, the GPU's compute stream, the host-to-device and the
// device-to-host copy engines). A queue runs its ops one at a time in block
// order; queues run concurrently, ordered only by `tandem.wait`. This file
// computes what that order guarantees: which ops complete before which
// start (vector clocks over the queues) and the check the verifier runs.
// (The scheduler and memory planning work on a QueueProgram of the block:
// tandem/Analysis/QueueProgram.h.)
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMSCHEDULE_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMSCHEDULE_H

#include "tandem/Dialect/Tandem/IR/TandemOps.h"

#include "llvm/ADT/DenseMap.h"

#include <array>
#include <optional>

namespace mlir::tandem {

constexpr int kNumQueues = 4;

/// The queue an op belongs on by its placement: a transfer on the copy
/// engine of its direction, any other op on its device's queue. Null for an
/// op that is not placed.
std::optional<QueueKind> getQueueForPlacement(Operation *op);

/// The queue a scheduled op runs on: its `tandem.queue`, or a wait's own.
std::optional<QueueKind> getScheduledQueue(Operation *op);

/// Whether `func` carries `tandem.scheduled`.
bool isScheduled(Operation *func);

/// Whether an op runs in each run on a queue: not a weight (uploaded or
/// mapped at load), a wait, a view (its source's bytes) or the terminator.
bool isQueueItem(Operation *op);

/// The vector clocks of queues being scheduled, one op at a time in block
/// order: what each queue's next op is known to start after.
class QueueClocks {
public:
  using Clock = std::array<int32_t, kNumQueues>;
  /// An op's place: its queue, its index among that queue's ops, and
  /// clock[k], the last index on queue k that completes before it starts
  /// (-1: none).
  struct Stamp {
    int queue = 0;
    int32_t index = -1;
    Clock clock;
  };

  QueueClocks();
  /// Appends an op to `queue`.
  Stamp issue(int queue);
  /// Makes `queue`'s later ops start after `producer` completes.
  void wait(int queue, const Stamp &producer);
  /// Whether `queue`'s next op already starts after `producer` completes.
  bool knows(int queue, const Stamp &producer) const {
    return producer.index < 0 || state[queue][producer.queue] >= producer.index;
  }

private:
  std::array<Clock, kNumQueues> state;
  std::array<int32_t, kNumQueues> count{};
};

/// What a block's schedule guarantees about the order of its ops. In a
/// block that is not scheduled, the ops run one at a time in block order.
class HappensBefore {
public:
  explicit HappensBefore(Block &block);

  bool isScheduled() const { return scheduled; }
  /// Position of `op` in its block.
  int64_t position(Operation *op) const { return steps.lookup(op).position; }
  /// The queue of a queue item (all CPU when not scheduled).
  int queueOf(Operation *op) const { return steps.lookup(op).queue; }
  /// The place of a queue item in its queue.
  QueueClocks::Stamp stampOf(Operation *op) const { return steps.lookup(op); }
  /// Whether `before` is guaranteed to complete before `after` starts. A
  /// weight, a view of one or a block argument is ready before any op runs.
  bool completesBefore(Operation *before, Operation *after) const;
  /// The queue item whose completion makes `value` ready (through views),
  /// or null when it is ready from the start (an argument, a weight).
  Operation *readyAfter(Value value) const;

private:
  /// A stamp's index is -1 for what is not a queue item.
  struct Step : QueueClocks::Stamp {
    int64_t position = 0;
  };
  bool scheduled = false;
  llvm::DenseMap<Operation *, Step> steps;
  llvm::DenseMap<Value, Value> viewRoot;
};

/// Removes a function's schedule: its waits, every `tandem.queue` and
/// `tandem.scheduled`.
void clearSchedule(Operation *func);

/// The verifier's check of a scheduled block: every queue item has the
/// queue its placement implies, and every operand produced on another queue
/// is waited for, directly or through other waits. Emits an error naming
/// the op and the operand.
LogicalResult verifySchedule(Operation *func);

} // namespace mlir::tandem

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMSCHEDULE_H
