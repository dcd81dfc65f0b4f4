//===- MakespanBound.h - a certified lower bound on the makespan -*- C++ -*-===//
//
// A bound below the makespan of every placement of a problem within its GPU
// budget, under every schedule (pins held): what the report's
// `lower_bound_us` states, and what `auto`'s makespan is measured against.
// It is the largest of four relaxations, each with its own proof:
//
// - the chain: the longest path from the inputs (on the host) to the
//   results (back on the host), each op on whichever device finishes it
//   first and each value paying its copy where the path needs it on the
//   other device;
// - the load: a linear relaxation of where the work goes. Each op runs a
//   fraction x on the CPU and 1 - x on the GPU; the CPU's, the GPU's and
//   the host-to-device engine's busy times are each at most the makespan;
//   and the weights an op reads on the GPU are resident or copied in each
//   run, so the weight bytes the GPU ops read, beyond what the budget can
//   keep resident, are copied at the link's rate. Any point of the linear
//   program's dual is a bound (weak duality); the best one is searched for;
// - the memory (for the report, on models of up to 4096 ops): the load
//   relaxation with one dependency path held to the makespan too, and the
//   GPU's bytes integrated over the run within the budget times the
//   makespan: a resident weight holds its bytes for the whole run, a
//   streamed one while it is copied and while its readers run, and each GPU
//   op its own buffers while it runs. At a makespan T each op is also kept
//   off a device where its span there (its earliest start, its time, and
//   the least that must follow it) exceeds T, and the ops left one device
//   must fit its queue one at a time (Jackson's preemptive schedule). The
//   largest makespan whose relaxation is shown infeasible (a positive point
//   of its dual, or a queue that cannot fit), by bisection;
// - the placements (where few enough ops are free to enumerate them by
//   branch and bound): the least, over every placement that can fit, of the
//   placement's own bound. With the devices fixed the copies are known, so
//   no schedule of that placement, in any order, beats the longest path of
//   its data dependencies or any queue's items run one at a time between
//   their earliest starts and their paths to the end; and a
//   placement cannot fit when, beside its resident weights, the buffers some
//   op or copy needs while it runs (its own, and those written before it and
//   read after it in every order) exceed the budget. This is what sees that
//   a streamed weight needs room next to the resident ones.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_MAKESPANBOUND_H
#define TANDEM_ANALYSIS_MAKESPANBOUND_H

#include "tandem/Analysis/PlacementProblem.h"

#include <algorithm>
#include <optional>

namespace mlir::tandem {

struct MakespanBound {
  /// The chain term and the load term, microseconds.
  double chainUs = 0, loadUs = 0;
  /// The memory term, at least the chain and load terms where computed
  /// (BoundEffort::Exhaustive, at most 4096 ops); 0 elsewhere.
  double memoryUs = 0;
  /// The placements term, where it was computed (BoundEffort::Exhaustive,
  /// few enough free ops, the enumeration finished).
  std::optional<double> placementsUs;

  double us() const {
    return std::max({chainUs, loadUs, memoryUs, placementsUs.value_or(0)});
  }
};

/// How hard the bound is worked for: `Quick` (the load term's dual on a
/// coarse grid, a short refinement) where a search needs a bound at each of
/// many nodes; `Full` (the dual searched finely); `Exhaustive`, for the
/// report, adds the placements term where at most kMaxEnumeratedFreeOps
/// ops are free. Each is a valid bound.
enum class BoundEffort { Quick, Full, Exhaustive };

/// The placements term is enumerated where at most this many ops are free
/// to move, and given up (left out) after kMaxEnumeratedNodes search nodes.
constexpr int kMaxEnumeratedFreeOps = 20;
constexpr int64_t kMaxEnumeratedNodes = int64_t(1) << 14;

/// The bound for `problem` under its gpuBudgetBytes. `fittingUs`, if
/// given, is the predicted makespan of a placement whose arena fits the
/// budget: the placements term never exceeds it, so its search starts
/// pruning there.
MakespanBound
computeMakespanBound(const PlacementProblem &problem,
                     BoundEffort effort = BoundEffort::Full,
                     std::optional<double> fittingUs = std::nullopt);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_MAKESPANBOUND_H
