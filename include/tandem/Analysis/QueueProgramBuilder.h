//===- QueueProgramBuilder.h - the queue program of IR or a placement -*- C++ -*-===//
//
// The two ways to get a QueueProgram: from a placed block (its transfers
// explicit, perhaps scheduled), and from a placement problem with a
// placement, mirroring what --tandem-insert-transfers would make of it.
// Both give the same program for the same placement: the placement
// property tests compare them item by item and buffer by buffer.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_QUEUEPROGRAMBUILDER_H
#define TANDEM_ANALYSIS_QUEUEPROGRAMBUILDER_H

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Analysis/PlacementProblem.h"
#include "tandem/Analysis/QueueProgram.h"

#include "mlir/IR/Block.h"
#include "mlir/Support/LogicalResult.h"

#include <vector>

namespace mlir::tandem {

/// A block's queue program with the IR behind each index.
struct BlockQueueProgram {
  QueueProgram program;
  /// Item → its op.
  std::vector<Operation *> itemOps;
  /// Buffer → the op writing it, or whose workspace it is.
  std::vector<Operation *> bufferOps;

  /// The op at a memory point (QueueProgram::getEndPoint): the item running
  /// there, the block's first op before the items, its terminator after.
  Operation *opAtPoint(Block &block, int64_t point) const;
};

/// The program of a placed block. Scheduled, each item runs on its
/// `tandem.queue` after the waits before it; unscheduled, the items run one
/// at a time in block order. With a profile, each item gets its predicted
/// time. Emits an error on an op that is not placed, or that has other than
/// one result.
FailureOr<BlockQueueProgram> buildQueueProgram(Block &block,
                                               const DeviceProfile *profile);

/// The program --tandem-insert-transfers would make of `placement`, items
/// on the queues their placement implies and no waits yet (call
/// chooseWaits or chooseScheduleWindow).
QueueProgram buildQueueProgram(const PlacementProblem &problem,
                               const Placement &placement);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_QUEUEPROGRAMBUILDER_H
