//===- MakespanBound.h - a certified lower bound on the makespan -*- C++ -*-===//
//
// A bound below the makespan of every placement of a problem within its GPU
// budget, under every schedule (pins held): what the report's
// `lower_bound_us` states, and what `auto`'s makespan is measured against.
// It is the larger of two relaxations, each with its own proof:
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
//   program's dual is a bound (weak duality); the best one is searched for.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_MAKESPANBOUND_H
#define TANDEM_ANALYSIS_MAKESPANBOUND_H

#include "tandem/Analysis/PlacementProblem.h"

#include <algorithm>

namespace mlir::tandem {

struct MakespanBound {
  /// The chain term and the load term, microseconds.
  double chainUs = 0, loadUs = 0;

  double us() const { return std::max(chainUs, loadUs); }
};

/// How hard the load term's dual is searched: `Full` for the report, `Quick`
/// (a coarse grid, a short refinement) where a search needs a bound at each
/// of many nodes. Either is a valid bound.
enum class BoundEffort { Full, Quick };

/// The bound for `problem` under its gpuBudgetBytes.
MakespanBound computeMakespanBound(const PlacementProblem &problem,
                                   BoundEffort effort = BoundEffort::Full);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_MAKESPANBOUND_H
