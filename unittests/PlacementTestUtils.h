//===- PlacementTestUtils.h - enumeration, the placement tests' oracle ----===//

#ifndef TANDEM_UNITTESTS_PLACEMENTTESTUTILS_H
#define TANDEM_UNITTESTS_PLACEMENTTESTUTILS_H

#include "tandem/Analysis/PlacementProblem.h"

namespace tandem_test {

/// True if every op of `placement` is on a device it can run on and that
/// its pin allows.
inline bool allowed(const mlir::tandem::PlacementProblem &problem,
                    const mlir::tandem::Placement &placement) {
  using mlir::tandem::DeviceKind;
  for (size_t i = 0; i < problem.ops.size(); ++i) {
    DeviceKind kind = placement[i] ? DeviceKind::GPU : DeviceKind::CPU;
    if (!problem.ops[i].canRunOn(kind) ||
        (problem.ops[i].pin && *problem.ops[i].pin != kind))
      return false;
  }
  return true;
}

/// The least `objective(placement, cost)` over the allowed placements
/// whose buffers fit the budget once laid out, by enumerating every
/// placement; +inf if none fits.
template <typename Objective>
double bruteForceOptimum(const mlir::tandem::PlacementProblem &problem,
                         Objective objective) {
  double best = mlir::tandem::kUnreachable;
  size_t n = problem.ops.size();
  mlir::tandem::Placement placement(n);
  for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
    for (size_t i = 0; i < n; ++i)
      placement[i] = (mask >> i) & 1;
    if (!allowed(problem, placement))
      continue;
    mlir::tandem::PlacementCost cost = problem.evaluate(placement);
    if (problem.fitsBudget(placement, cost))
      best = std::min(best, objective(placement, cost));
  }
  return best;
}

/// The serial optimum, by enumeration.
inline double bruteForceOptimum(const mlir::tandem::PlacementProblem &problem) {
  return bruteForceOptimum(
      problem, [](const mlir::tandem::Placement &,
                  const mlir::tandem::PlacementCost &cost) {
        return cost.totalUs();
      });
}

/// A random placement of the free ops (fixed ops where they must be).
template <typename Rng>
mlir::tandem::Placement
randomPlacement(Rng &rng, const mlir::tandem::PlacementProblem &problem) {
  mlir::tandem::Placement placement = problem.leastGpuPlacement();
  for (size_t op = 0; op < problem.ops.size(); ++op)
    if (!problem.ops[op].isFixed())
      placement[op] = rng() % 2;
  return placement;
}

} // namespace tandem_test

#endif // TANDEM_UNITTESTS_PLACEMENTTESTUTILS_H
