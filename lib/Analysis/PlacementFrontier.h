//===- PlacementFrontier.h - placements that do not depend on the budget -===//
//
// Internal to lib/Analysis. A problem's frontier is a set of placements
// computed without looking at the budget, each with its time and its
// laid-out GPU arena, keeping only those that no other beats on both. The
// answer of `auto` under a budget starts from the fastest frontier point
// that fits, so more memory can never make it slower: every point that fits
// a budget fits every larger one.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_ANALYSIS_PLACEMENTFRONTIER_H
#define TANDEM_LIB_ANALYSIS_PLACEMENTFRONTIER_H

#include "PlacementSearch.h"
#include "tandem/Analysis/PlacementProblem.h"

#include <optional>
#include <vector>

namespace mlir::tandem::search {

struct FrontierPoint {
  Placement placement;
  double us = 0;
  int64_t arena = 0;
};

class Frontier {
public:
  /// Adds `placement` unless a point as fast with an arena as small is
  /// there; drops the points it beats. Returns true if it was added.
  bool add(const PlacementProblem &problem, const Placement &placement);
  /// The same, with the placement's cost known.
  bool add(const PlacementProblem &problem, const Placement &placement,
           const PlacementCost &cost);

  /// The fastest point whose arena is at most `budget`, or null.
  const FrontierPoint *bestWithin(int64_t budget) const;

  /// Sorted by arena, fastest last.
  const std::vector<FrontierPoint> &getPoints() const { return points; }

private:
  std::vector<FrontierPoint> points;
};

/// The frontier of `problem`, ignoring its budget: the all-CPU, all-GPU and
/// unconstrained placements, every prefix greedy can stop at, minimum cuts
/// under growing prices on GPU memory, the path that moves ops off the GPU
/// from the unconstrained optimum one by one, and each point improved by
/// single moves within its own arena.
/// `unconstrained` is the problem's minimum cut with no prices.
Frontier buildFrontier(const PlacementProblem &problem,
                       const Placement &unconstrained);

/// A problem's frontier and unconstrained cut, each made on first use and
/// kept: the serial search and the makespan search of one solve share them.
class FrontierCache {
public:
  explicit FrontierCache(const PlacementProblem &problem) : problem(problem) {}
  const Frontier &get() {
    if (!frontier)
      frontier = buildFrontier(problem, unconstrainedCut().placement);
    return *frontier;
  }
  /// The minimum cut with no prices and nothing fixed, which the search and
  /// the frontier both start from (on a large graph, one of the costlier
  /// steps of a solve).
  const Cut &unconstrainedCut() {
    if (!unconstrained)
      unconstrained = solveCut(problem);
    return *unconstrained;
  }

private:
  const PlacementProblem &problem;
  std::optional<Frontier> frontier;
  std::optional<Cut> unconstrained;
};

/// What greedy (accelerate's infer_auto_device_map) can return at some
/// budget: in program order, the free ops before a free weight on the GPU,
/// the rest on the CPU; at most `samples` of them, evenly spaced, and all
/// of them on the GPU.
std::vector<Placement> greedyPrefixes(const PlacementProblem &problem,
                                      int samples);


} // namespace mlir::tandem::search

#endif // TANDEM_LIB_ANALYSIS_PLACEMENTFRONTIER_H
