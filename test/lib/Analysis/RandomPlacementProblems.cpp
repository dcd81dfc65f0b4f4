//===- RandomPlacementProblems.cpp - random graphs for tests and benchmarks ===//

#include "RandomPlacementProblems.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

PlacementProblem tandem::makeRandomPlacementProblem(std::mt19937 &rng,
                                                    int numOps) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  PlacementProblem problem;
  auto addValue = [&](int producer) {
    PlacementValue value;
    value.producer = producer;
    value.bytes = 1024 * (1 + rng() % 1024);
    value.h2dUs = 5 + value.bytes / 12e3;
    value.d2hUs = 5 + value.bytes / 12e3;
    problem.values.push_back(value);
    return int(problem.values.size()) - 1;
  };
  addValue(-1);
  addValue(-2);
  for (int i = 0; i < numOps; ++i) {
    PlacementOp op;
    op.isWeight = unit(rng) < 0.2;
    op.cpuUs = 1 + 100 * unit(rng);
    op.gpuUs = unit(rng) < 0.1 ? kUnreachable : 0.5 + 60 * unit(rng);
    if (op.isWeight)
      op.cpuUs = op.gpuUs = 0;
    if (unit(rng) < 0.08)
      op.pin = unit(rng) < 0.5 ? DeviceKind::CPU : DeviceKind::GPU;
    if (op.pin == DeviceKind::GPU && op.gpuUs == kUnreachable)
      op.pin.reset();
    if (!op.isWeight) {
      int numOperands = 1 + rng() % 3;
      for (int k = 0; k < numOperands; ++k) {
        int value = rng() % problem.values.size();
        if (unit(rng) < 0.1) {
          op.hostOperands.push_back(value);
          continue;
        }
        if (std::find(op.operands.begin(), op.operands.end(), value) ==
            op.operands.end())
          op.operands.push_back(value);
      }
    }
    // Some one-operand ops are reshapes: on the GPU their result is their
    // operand's buffer.
    op.aliasesOperand = !op.isWeight && op.operands.size() == 1 &&
                        op.hostOperands.empty() && unit(rng) < 0.15;
    if (op.aliasesOperand)
      op.cpuUs = op.gpuUs = 0;
    op.results.push_back(addValue(i));
    if (op.aliasesOperand)
      problem.values.back().bytes = problem.values[op.operands.front()].bytes;
    problem.values.back().isWeight = op.isWeight;
    problem.ops.push_back(op);
  }
  problem.values.back().isResult = true;
  if (numOps > 2)
    problem.values[problem.values.size() - 2].isResult = unit(rng) < 0.5;
  problem.finalize();
  problem.gpuBudgetBytes = int64_t(1) << 50;
  return problem;
}

int64_t tandem::makeBindingBudget(std::mt19937 &rng,
                                  const PlacementProblem &problem) {
  int64_t least = problem.evaluate(problem.leastGpuPlacement()).peakGpuBytes;
  int64_t free = problem.evaluate(solveMinCut(problem)).peakGpuBytes;
  if (free <= least)
    return least;
  return least + int64_t(rng() % uint64_t(free - least));
}

