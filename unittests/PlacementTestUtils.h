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

/// The fastest allowed placement whose buffers fit the budget once laid
/// out, by enumerating every placement; +inf if none fits.
inline double bruteForceOptimum(const mlir::tandem::PlacementProblem &problem) {
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
      best = std::min(best, cost.totalUs());
  }
  return best;
}

} // namespace tandem_test

#endif // TANDEM_UNITTESTS_PLACEMENTTESTUTILS_H
