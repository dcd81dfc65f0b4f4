//===- MakespanBound.cpp - a certified lower bound on the makespan --------===//

#include "tandem/Analysis/MakespanBound.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::tandem;

namespace {

constexpr double kNever = 1e300;

/// The devices `op` may run on in some placement within the budget: its
/// pin and its device support allow it, and on the GPU what it reads and
/// writes there at once fits the budget.
std::array<bool, 2> allowedDevices(const PlacementProblem &problem,
                                   const PlacementOp &op) {
  std::array<bool, 2> allowed{};
  for (int device = 0; device < 2; ++device) {
    DeviceKind kind = device ? DeviceKind::GPU : DeviceKind::CPU;
    allowed[device] = op.canRunOn(kind) && (!op.pin || *op.pin == kind);
  }
  if (allowed[1]) {
    int64_t bytes = alignBufferSize(op.gpuWorkspaceBytes);
    for (int value : op.operands)
      bytes += alignBufferSize(problem.values[value].bytes);
    for (int value : op.results)
      bytes += alignBufferSize(problem.values[value].bytes);
    allowed[1] = bytes <= problem.gpuBudgetBytes;
  }
  return allowed;
}

double chainBoundUs(const PlacementProblem &problem,
                    const std::vector<std::array<bool, 2>> &allowed) {
  // Per value, the earliest it can be ready on each device (0: CPU, 1: GPU):
  // produced there, or produced on the other and copied over. Each op picks
  // its device on its own, so this is below every placement's chain.
  std::vector<std::array<double, 2>> ready(problem.values.size(), {0, 0});
  auto copyUs = [&](int value, int to) {
    const PlacementValue &moved = problem.values[value];
    return to ? moved.h2dUs : moved.d2hUs;
  };
  auto readyOn = [&](int value, int device) {
    return std::min(ready[value][device],
                    ready[value][1 - device] + copyUs(value, device));
  };
  for (auto [index, value] : llvm::enumerate(problem.values))
    if (value.isArgument()) // arrives on the host
      ready[index] = {0, value.h2dUs};
  double longest = 0;
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    if (op.isWeight)
      continue; // resident or mapped: ready everywhere from the start
    if (op.aliasesOperand) {
      for (int value : op.results)
        ready[value] = ready[op.operands.front()];
      continue;
    }
    std::array<double, 2> finish{kNever, kNever};
    for (int device = 0; device < 2; ++device) {
      if (!allowed[index][device])
        continue;
      double start = 0;
      for (int value : op.operands)
        start = std::max(start, readyOn(value, device));
      for (int value : op.hostOperands)
        start = std::max(start, readyOn(value, 0));
      finish[device] = start + (device ? op.gpuUs : op.cpuUs);
    }
    for (int value : op.results)
      for (int device = 0; device < 2; ++device)
        ready[value][device] = std::min(
            finish[device], finish[1 - device] + copyUs(value, device));
    longest = std::max(longest, std::min(finish[0], finish[1]));
  }
  for (auto [index, value] : llvm::enumerate(problem.values))
    if (value.isResult)
      longest = std::max(longest, readyOn(index, 0));
  return longest;
}

/// The load relaxation, as the dual of
///   min T  s.t.  C0 + sum x c <= T,  G0 + sum (1 - x) g <= T,
///                W0 + sum (1 - x) w <= B + rho T,  0 <= x <= 1
/// over the free ops (x: the CPU's fraction of an op; w: the weight bytes
/// it reads, each weight's bytes shared among its readers; rho: the most
/// weight bytes the link moves per microsecond). With multipliers
/// (a, b, k / rho) on the three rows, a + b + k <= 1, every such point
/// bounds T from below.
class LoadBound {
public:
  LoadBound(const PlacementProblem &problem,
            const std::vector<std::array<bool, 2>> &allowed) {
    // The bytes of each weight value, shared among its readers.
    std::vector<double> share(problem.values.size(), 0);
    for (auto [index, value] : llvm::enumerate(problem.values)) {
      if (!value.isWeight || value.consumers.empty())
        continue;
      share[index] = double(value.bytes) / double(value.consumers.size());
      if (value.h2dUs > 0)
        rho = std::max(rho, double(value.bytes) / value.h2dUs);
    }
    for (auto [index, op] : llvm::enumerate(problem.ops)) {
      if (op.isWeight)
        continue;
      double weightBytes = 0;
      for (int value : op.operands)
        weightBytes += share[value];
      bool cpu = allowed[index][0], gpu = allowed[index][1];
      if (cpu && gpu) {
        free.push_back({op.cpuUs, op.gpuUs, weightBytes});
        gpuTotal += op.gpuUs;
        weightTotal += weightBytes;
      } else if (cpu) {
        cpuFixed += op.cpuUs;
      } else if (gpu) {
        gpuTotal += op.gpuUs;
        weightTotal += weightBytes;
      }
    }
    overBudget = weightTotal - double(problem.gpuBudgetBytes);
  }

  /// The dual's value at (a, b, k), a + b + k <= 1.
  double at(double a, double b, double k) const {
    double lambda = rho > 0 ? k / rho : 0;
    double value = a * cpuFixed + b * gpuTotal + lambda * overBudget;
    for (const Op &op : free)
      value -= std::max(0.0, b * op.gpuUs + lambda * op.weightBytes -
                                 a * op.cpuUs);
    return value;
  }

  /// The best dual point found: a grid over the simplex, then a pattern
  /// search around the best point (the dual is concave).
  double best(BoundEffort effort) const {
    bool withWeights = rho > 0 && overBudget > 0;
    const int kGrid = effort == BoundEffort::Full ? 16 : 4;
    const double kFinestStep = effort == BoundEffort::Full ? 1e-7 : 1e-3;
    const int kRounds = effort == BoundEffort::Full ? 64 : 8;
    double bestValue = 0, bestA = 0, bestB = 0, bestK = 0;
    auto consider = [&](double a, double b, double k) {
      if (a < 0 || b < 0 || k < 0 || a + b + k > 1 + 1e-12)
        return false;
      double value = at(a, b, k);
      if (value <= bestValue)
        return false;
      bestValue = value;
      bestA = a, bestB = b, bestK = k;
      return true;
    };
    for (int i = 0; i <= kGrid; ++i)
      for (int j = 0; i + j <= kGrid; ++j)
        consider(double(i) / kGrid, double(j) / kGrid,
                 withWeights ? double(kGrid - i - j) / kGrid : 0);
    for (double step = 0.5 / kGrid; step > kFinestStep; step /= 2) {
      bool moved = true;
      for (int round = 0; moved && round < kRounds; ++round) {
        moved = false;
        double a = bestA, b = bestB, k = bestK;
        const double moves[6][3] = {{step, -step, 0}, {-step, step, 0},
                                    {step, 0, -step}, {-step, 0, step},
                                    {0, step, -step}, {0, -step, step}};
        for (const auto &move : moves)
          if (withWeights || (move[2] == 0))
            moved |= consider(a + move[0], b + move[1], k + move[2]);
      }
    }
    return bestValue;
  }

private:
  struct Op {
    double cpuUs, gpuUs, weightBytes;
  };
  std::vector<Op> free;
  double cpuFixed = 0, gpuTotal = 0, weightTotal = 0, overBudget = 0;
  double rho = 0;
};

} // namespace

MakespanBound tandem::computeMakespanBound(const PlacementProblem &problem,
                                           BoundEffort effort) {
  std::vector<std::array<bool, 2>> allowed;
  allowed.reserve(problem.ops.size());
  for (const PlacementOp &op : problem.ops) {
    allowed.push_back(allowedDevices(problem, op));
    if (!problem.hasGpu)
      allowed.back()[1] = false;
  }
  MakespanBound bound;
  bound.chainUs = chainBoundUs(problem, allowed);
  bound.loadUs = LoadBound(problem, allowed).best(effort);
  // Rounding in the sums must not lift a bound above a makespan it equals.
  bound.chainUs *= 1 - 1e-12;
  bound.loadUs *= 1 - 1e-9;
  return bound;
}
