//===- QueueProgram.h - a placed function as work on four queues -*- C++ -*-===//
//
// The scheduler's view of a placed function, with no IR in it: the ops and
// copies that run in each run (items, in block order), the queue each runs
// on, the items whose results each reads, the waits its queue makes before
// it, and the arena buffers they write and read. Everything the schedule
// decides and predicts is computed here, once, for both of its users:
//
// - --tandem-schedule, --tandem-plan-memory and the report build a program
//   from the IR (QueueProgramBuilder.h: fromBlock);
// - placement builds the same program from a PlacementProblem and a
//   placement, without any IR (fromPlacement), to price the makespan of
//   thousands of candidate placements.
//
// The rules (docs/schedule.md): a queue runs its items one at a time in
// block order; an item starts once its queue is free and the items its
// queue waited for have completed. Waits are transitive (vector clocks). A
// buffer is live from the first item its writer may overlap to the last
// item any of its readers may overlap, so two buffers whose lives do not
// intersect never hold bytes at once in any interleaving the waits allow.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_QUEUEPROGRAM_H
#define TANDEM_ANALYSIS_QUEUEPROGRAM_H

#include "tandem/Analysis/MemoryPlanner.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::tandem {

/// One op or copy that runs on a queue in every run.
struct QueueItem {
  int queue = 0; // a QueueKind
  /// Predicted microseconds (0 where the program was built without a
  /// profile, for memory planning alone).
  double us = 0;
  /// The items whose results it reads (through views).
  llvm::SmallVector<int32_t, 3> inputs;
  /// The items its queue waits for right before it (tandem.wait).
  llvm::SmallVector<int32_t, 2> waits;
};

/// Arena of a buffer.
enum class Arena : int { CPU = 0, GPU = 1 };

/// A buffer in one of the two arenas.
struct ArenaBuffer {
  Arena arena = Arena::CPU;
  int64_t bytes = 0;
  /// The item that writes it; -1: a resident GPU weight, live for the
  /// whole run.
  int32_t writer = -1;
  /// The items that read it (through views).
  llvm::SmallVector<int32_t, 3> readers;
  /// Returned by the function: live to the end of the run.
  bool heldToEnd = false;
  /// The writer's scratch memory, live while the writer runs.
  bool isWorkspace = false;
};

/// The window the GPU arena's queues keep in a schedule: an item waits for
/// the items of the other queues sharing its arena more than `window` items
/// before it. kUnboundedWindow: only data orders them.
constexpr int64_t kUnboundedWindow = INT64_MAX;

/// The windows --tandem-schedule tries when none is fixed, widest first.
llvm::ArrayRef<int64_t> getDefaultScheduleWindows();

class QueueProgram {
public:
  std::vector<QueueItem> items;
  /// Each buffer once: op results in block order, then the GPU workspaces
  /// in item order.
  std::vector<ArenaBuffer> buffers;
  /// False for an unscheduled block: its items run one at a time in block
  /// order, whatever their queues.
  bool concurrent = true;

  /// Memory points of the lifetimes below: 0 before the first item, i + 1
  /// while item i runs, getEndPoint() after the last.
  int64_t getEndPoint() const { return int64_t(items.size()) + 1; }

  /// Replaces every item's waits with those of a schedule keeping
  /// `gpuWindow`: a wait for each input produced on another queue, and
  /// one for the items of other queues sharing an arena more than the
  /// window before it (the CPU arena keeps a window of its own). A wait
  /// that earlier waits already imply is left out. `copyWindows`, if not
  /// empty, has an entry per item: a host-to-device copy whose entry is
  /// not 0 keeps that window to the GPU arena's other queues instead of
  /// `gpuWindow`, its own prefetch depth.
  void chooseWaits(int64_t gpuWindow, llvm::ArrayRef<int64_t> copyWindows = {});

  /// Each item's place in its queue and what is known to complete before
  /// it starts, from the waits.
  std::vector<QueueClocks::Stamp> stampItems() const;

  /// The lifetimes of the buffers in `arena`, in memory points, in the
  /// order of `buffers`; `indices`, if given, receives each one's index in
  /// `buffers`.
  std::vector<BufferLifetime>
  arenaLifetimes(Arena arena, std::vector<int> *indices = nullptr) const;

  /// The bytes the GPU arena needs once laid out (planMemory).
  int64_t gpuArenaBytes() const;
};

/// The schedule's predicted times.
struct SimulatedSchedule {
  /// Per item.
  std::vector<double> startUs, endUs;
  double makespanUs = 0;
  /// The sum of every item's time: the program run one item at a time.
  double serialUs = 0;
  std::array<double, kNumQueues> busyUs{};
  /// Copy time during which the CPU or the GPU computed.
  double hiddenCopyUs = 0;
  /// How many waits the items' queues make.
  int64_t waits = 0;
};

/// List-scheduling simulation of the program's waits: each queue in block
/// order, an item starting when its queue is free and its waits have ended.
/// An unscheduled program runs its items back to back.
SimulatedSchedule simulateQueueProgram(const QueueProgram &program);

/// The work chooseScheduleWindow may spend widening copies' windows, in
/// items visited (each try visits every item a few times): a few hundred
/// tries on a model of a few hundred ops, a few on a 100k-op one.
constexpr int64_t kScheduleWideningEffort = int64_t(1) << 17;

/// What choosing the window of a schedule found.
struct WindowChoice {
  int64_t window = 1;
  double makespanUs = 0;
  /// Host-to-device copies given a wider window than `window`.
  int64_t widenedCopies = 0;
};

/// Keeps the widest of `windows` (sorted widest first) whose GPU arena fits
/// `gpuBudgetBytes`, the fastest of those that fit, found by bisection (a
/// window of 1 is always taken as fitting: it keeps the GPU arena's queues
/// in program order, the memory placement checked; if none fits, the
/// narrowest). Where the budget refused a wider window, it then widens the
/// window of each host-to-device copy, one at a time in block order, to the
/// widest of the wider `windows` whose arena still fits: one window for the
/// whole program is set by its most crowded stretch, while a copy
/// elsewhere can often be prefetched further. Leaves the program's waits
/// those of the choice. `hint`, if one of `windows`, is tried first: the
/// window a similar program took (the placement search's neighbours mostly
/// take the same). `wideningEffort` rations the widening (0: none).
WindowChoice chooseScheduleWindow(QueueProgram &program,
                                  std::optional<int64_t> gpuBudgetBytes,
                                  llvm::ArrayRef<int64_t> windows,
                                  int64_t hint = 0,
                                  int64_t wideningEffort = kScheduleWideningEffort);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_QUEUEPROGRAM_H
