//===- ArenaBuffers.h - a function's buffers and their lifetimes -*- C++ -*-===//
//
// The buffers --tandem-plan-memory lays out, one list per device arena, with
// the memory points at which each is live (QueueProgram::arenaLifetimes:
// in a scheduled function a buffer is live from the first item its producer
// may overlap to the last item any of its readers may overlap, so two
// buffers whose lives do not intersect never hold bytes at the same time in
// any interleaving the schedule allows; unscheduled, the points are program
// order). The scheduler and placement price the GPU arena with the same
// rule, on the same QueueProgram.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_ARENABUFFERS_H
#define TANDEM_ANALYSIS_ARENABUFFERS_H

#include "tandem/Analysis/MemoryPlanner.h"

#include "mlir/IR/Block.h"
#include "mlir/Support/LogicalResult.h"

#include <vector>

namespace mlir::tandem {

struct ArenaBuffers {
  std::vector<BufferLifetime> lifetimes;
  /// The op whose result (or, from firstWorkspace on, whose workspace) each
  /// buffer is.
  std::vector<Operation *> writers;
  size_t firstWorkspace = 0;
};

struct FunctionBuffers {
  ArenaBuffers cpu, gpu;
  /// The op at each memory point: a lifetime's points index it.
  std::vector<Operation *> pointOps;
};

/// The buffers of a placed (and perhaps scheduled) block with their
/// lifetimes: op results in their device's arena (not views, weights on the
/// CPU or function arguments; GPU weights live for the whole run), then GPU
/// workspaces. Emits an error on an op that is not placed or has other than
/// one result.
FailureOr<FunctionBuffers> collectArenaBuffers(Block &block);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_ARENABUFFERS_H
