//===- PlacementSolvers.cpp - auto, exact and the baselines ---------------===//
//
// `auto`: the unconstrained optimum is an s-t minimum cut (Stone, 1977) with
// one auxiliary node per value and direction, so a transfer is paid once
// however many consumers need it. Under a binding budget, a Lagrangian
// penalty on GPU bytes is searched until the cut fits, then the best
// feasible cut is improved by single-op moves.
//
// `exact`: branch and bound. The bound of a subproblem (some ops fixed) is
// its unconstrained optimum, itself a minimum cut; a subproblem whose cut
// fits the budget is solved; otherwise it branches on an op that keeps a
// buffer alive at the cut's peak point, where the budget binds.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/MinCut.h"
#include "tandem/Analysis/PlacementProblem.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// Capacities are integer nanoseconds; a finite cost is capped well below
/// infinity so sums of finite capacities never reach it.
int64_t toCapacity(double us) {
  if (us == kUnreachable)
    return MinCutGraph::kInfinity;
  constexpr double kMaxFinite = double(int64_t(1) << 44);
  return static_cast<int64_t>(std::llround(std::min(us * 1e3, kMaxFinite)));
}

int64_t resultBytes(const PlacementProblem &problem, const PlacementOp &op) {
  int64_t bytes = 0;
  for (int value : op.results)
    bytes += problem.values[value].bytes;
  return bytes;
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The free ops (not fixed by `fixed`, a pin or device support) that keep
/// some GPU buffer alive at `point`, with the bytes each keeps alive there:
/// the branching and repair candidates. A buffer kept alive only by fixed
/// ops is unavoidable at that point.
std::vector<std::pair<int, int64_t>>
opsHoldingGpuMemory(const PlacementProblem &problem, const Placement &placement,
                    int64_t point, const std::vector<int8_t> &fixed) {
  std::vector<int> owners;
  std::vector<BufferLifetime> buffers = problem.gpuBuffers(placement, &owners);
  std::vector<int64_t> held(problem.ops.size(), 0);
  auto hold = [&](int op, int64_t bytes) {
    if (fixed[op] < 0 && !problem.ops[op].isFixed())
      held[op] += bytes;
  };
  for (auto [buffer, owner] : llvm::zip(buffers, owners)) {
    if (point < buffer.first || point > buffer.last)
      continue;
    const PlacementValue &value = problem.values[owner];
    bool producedOnGpu = !value.isArgument() && placement[value.producer];
    int64_t producerPoint = 2 * int64_t(value.producer) + 1;
    if (producedOnGpu && value.isWeight) {
      hold(value.producer, value.bytes); // resident
      continue;
    }
    // A GPU result is held by its producer at its own point and at the
    // copy-out point after it.
    if (producedOnGpu && point <= producerPoint + 1)
      hold(value.producer, value.bytes);
    // After that, by every GPU consumer still to run: it needs the buffer
    // whichever device produced it.
    if (!producedOnGpu || point > producerPoint)
      for (int consumer : value.consumers)
        if (placement[consumer] && 2 * int64_t(consumer) + 1 >= point)
          hold(consumer, value.bytes);
  }
  std::vector<std::pair<int, int64_t>> result;
  for (auto [op, bytes] : llvm::enumerate(held))
    if (bytes > 0)
      result.push_back({static_cast<int>(op), bytes});
  return result;
}

/// Moves ops off the GPU until the placement fits, choosing each time the
/// move that costs the least time per byte freed at the peak.
Placement repair(const PlacementProblem &problem, Placement placement) {
  std::vector<int8_t> free(problem.ops.size(), -1);
  while (true) {
    PlacementCost cost = problem.evaluate(placement);
    if (cost.peakGpuBytes <= problem.gpuBudgetBytes)
      return placement;
    int best = -1;
    double bestRatio = kUnreachable;
    for (auto [op, bytes] :
         opsHoldingGpuMemory(problem, placement, cost.peakPoint, free)) {
      if (!placement[op])
        continue;
      double ratio =
          std::max(0.0, problem.flipDeltaUs(op, placement)) / double(bytes);
      if (ratio < bestRatio) {
        bestRatio = ratio;
        best = op;
      }
    }
    if (best < 0)
      return placement; // unreachable when the least placement fits
    placement[best] = 0;
  }
}

/// Single-op moves that lower the time and keep the budget. A move to the
/// CPU never grows GPU memory; a move to the GPU is checked.
void improveLocally(const PlacementProblem &problem, Placement &placement,
                    int maxGpuwardChecks = 256) {
  for (int sweep = 0; sweep < 2; ++sweep) {
    bool improved = false;
    for (size_t op = 0; op < problem.ops.size(); ++op) {
      if (problem.ops[op].isFixed())
        continue;
      if (problem.flipDeltaUs(op, placement) >= -1e-9)
        continue;
      placement[op] ^= 1;
      if (!placement[op] || (maxGpuwardChecks-- > 0 &&
                             problem.fitsBudget(placement))) {
        improved = true;
        continue;
      }
      placement[op] ^= 1;
    }
    if (!improved)
      return;
  }
}

PlacementResult finish(const PlacementProblem &problem, Placement placement,
                       int minCutSolves = 0) {
  PlacementResult result;
  result.cost = problem.evaluate(placement);
  result.placement = std::move(placement);
  result.minCutSolves = minCutSolves;
  return result;
}

llvm::Error infeasible(const PlacementProblem &problem) {
  PlacementCost least = problem.evaluate(problem.leastGpuPlacement());
  return makeError(llvm::formatv(
      "no placement fits the GPU memory budget of {0} bytes: the ops pinned "
      "to the GPU or able to run only there need at least {1} bytes",
      problem.gpuBudgetBytes, least.peakGpuBytes));
}

llvm::Expected<PlacementResult> solveAuto(const PlacementProblem &problem) {
  Placement unconstrained = solveMinCut(problem);
  int solves = 1;
  PlacementCost unconstrainedCost = problem.evaluate(unconstrained);
  if (unconstrainedCost.peakGpuBytes <= problem.gpuBudgetBytes)
    return finish(problem, std::move(unconstrained), solves);

  Placement least = problem.leastGpuPlacement();
  PlacementCost leastCost = problem.evaluate(least);
  if (leastCost.peakGpuBytes > problem.gpuBudgetBytes)
    return infeasible(problem);

  Placement best = least;
  double bestUs = leastCost.totalUs();
  auto consider = [&](Placement placement) {
    PlacementCost cost = problem.evaluate(placement);
    if (cost.peakGpuBytes > problem.gpuBudgetBytes)
      return false;
    if (cost.totalUs() < bestUs) {
      bestUs = cost.totalUs();
      best = std::move(placement);
    }
    return true;
  };

  // The multiplier's scale: the time the unconstrained placement saves per
  // GPU byte it uses. Grow from well below it until the cut fits, then
  // bisect (geometrically) between the last misfit and the first fit.
  double scale = std::max(leastCost.totalUs() - unconstrainedCost.totalUs(),
                          1e-3) /
                 double(std::max<int64_t>(unconstrainedCost.peakGpuBytes, 1));
  double low = 0, high = 0;
  Placement last = unconstrained;
  for (double lambda = scale / 64; lambda < scale * 1e9; lambda *= 4) {
    last = solveMinCut(problem, lambda);
    ++solves;
    if (consider(last)) {
      high = lambda;
      break;
    }
    low = lambda;
  }
  if (high > 0) {
    for (int step = 0; step < 10 && low > 0 && high / low > 1.01; ++step) {
      double middle = std::sqrt(low * high);
      ++solves;
      if (consider(solveMinCut(problem, middle)))
        high = middle;
      else
        low = middle;
    }
  } else {
    consider(repair(problem, std::move(last)));
  }
  improveLocally(problem, best);
  return finish(problem, std::move(best), solves);
}

llvm::Expected<PlacementResult> solveExact(const PlacementProblem &problem,
                                           const ExactSearchLimits &limits) {
  int freeOps = 0;
  for (const PlacementOp &op : problem.ops)
    freeOps += !op.isFixed();
  if (freeOps > limits.maxFreeOps)
    return makeError(llvm::formatv(
        "strategy 'exact' proves optimality by search and takes at most {0} "
        "ops free to move; this graph has {1}: use strategy 'auto'",
        limits.maxFreeOps, freeOps));

  // The incumbent: auto's answer, or nothing if no placement fits.
  llvm::Expected<PlacementResult> incumbent = solveAuto(problem);
  if (!incumbent)
    return incumbent.takeError();
  Placement best = incumbent->placement;
  double bestUs = incumbent->cost.totalUs();
  int solves = incumbent->minCutSolves;
  // Costs are cut in whole nanoseconds: a relative slack absorbs rounding.
  double slack = 1e-9 * std::max(1.0, std::fabs(bestUs)) + 1e-6;

  std::vector<std::vector<int8_t>> stack;
  stack.push_back(std::vector<int8_t>(problem.ops.size(), -1));
  int64_t nodes = 0;
  while (!stack.empty()) {
    std::vector<int8_t> fixed = std::move(stack.back());
    stack.pop_back();
    if (++nodes > limits.maxNodes)
      return makeError(llvm::formatv(
          "strategy 'exact' gave up after {0} search nodes without proving "
          "the optimum: the graph is too big for it; use strategy 'auto'",
          limits.maxNodes));
    Placement candidate = solveMinCut(problem, 0, &fixed);
    ++solves;
    PlacementCost cost = problem.evaluate(candidate);
    if (cost.totalUs() >= bestUs - slack)
      continue; // the bound: no completion beats the incumbent
    if (cost.peakGpuBytes <= problem.gpuBudgetBytes) {
      best = std::move(candidate);
      bestUs = cost.totalUs();
      continue;
    }
    std::vector<std::pair<int, int64_t>> holders =
        opsHoldingGpuMemory(problem, candidate, cost.peakPoint, fixed);
    if (holders.empty())
      continue; // the peak is unavoidable: no completion fits
    int branch = std::max_element(holders.begin(), holders.end(),
                                  [](auto a, auto b) {
                                    return a.second < b.second;
                                  })
                     ->first;
    std::vector<int8_t> onGpu = fixed;
    onGpu[branch] = 1;
    fixed[branch] = 0;
    stack.push_back(std::move(onGpu));
    stack.push_back(std::move(fixed)); // explored first
  }
  PlacementResult result = finish(problem, std::move(best), solves);
  result.optimalUs = result.cost.totalUs();
  result.searchNodes = nodes;
  return result;
}

/// accelerate's infer_auto_device_map: in program order, onto the GPU while
/// the weights placed there fit the budget; once one does not, everything
/// after stays on the CPU. Activations are not counted.
Placement solveGreedy(const PlacementProblem &problem) {
  Placement placement = problem.leastGpuPlacement();
  int64_t used = 0;
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    if (op.isFixed())
      continue;
    int64_t weightBytes = op.isWeight ? resultBytes(problem, op) : 0;
    if (used + weightBytes > problem.gpuBudgetBytes)
      break;
    used += weightBytes;
    placement[index] = 1;
  }
  return placement;
}

} // namespace

Placement tandem::solveMinCut(const PlacementProblem &problem,
                              double gpuPenaltyUsPerByte,
                              const std::vector<int8_t> *fixed) {
  int numOps = problem.ops.size();
  MinCutGraph graph(numOps + 2);
  int source = numOps, sink = numOps + 1; // source side = CPU
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    bool cpuAllowed = op.canRunOn(DeviceKind::CPU) &&
                      (!op.pin || *op.pin == DeviceKind::CPU) &&
                      (!fixed || (*fixed)[index] != 1);
    bool gpuAllowed = op.canRunOn(DeviceKind::GPU) &&
                      (!op.pin || *op.pin == DeviceKind::GPU) &&
                      (!fixed || (*fixed)[index] != 0);
    double gpuUs = op.gpuUs + gpuPenaltyUsPerByte * resultBytes(problem, op);
    graph.addEdge(source, index,
                  gpuAllowed ? toCapacity(gpuUs) : MinCutGraph::kInfinity);
    graph.addEdge(index, sink,
                  cpuAllowed ? toCapacity(op.cpuUs) : MinCutGraph::kInfinity);
  }
  for (const PlacementValue &value : problem.values) {
    int producer = value.isArgument() ? source : value.producer;
    if (!value.consumers.empty()) {
      // Needed on the GPU: on the sink side as soon as one consumer is.
      int needed = graph.addNode();
      graph.addEdge(producer, needed,
                    toCapacity(value.h2dUs + gpuPenaltyUsPerByte * value.bytes));
      for (int consumer : value.consumers)
        graph.addEdge(needed, consumer, MinCutGraph::kInfinity);
    }
    if (!value.isArgument() && !value.isWeight &&
        (!value.consumers.empty() || value.neededOnCpu())) {
      // Needed on the CPU: on the source side as soon as one reader is.
      int needed = graph.addNode();
      graph.addEdge(needed, producer, toCapacity(value.d2hUs));
      for (int consumer : value.consumers)
        graph.addEdge(consumer, needed, MinCutGraph::kInfinity);
      if (value.neededOnCpu())
        graph.addEdge(source, needed, MinCutGraph::kInfinity);
    }
  }
  graph.solve(source, sink);
  Placement placement(numOps);
  for (int op = 0; op < numOps; ++op)
    placement[op] = !graph.onSourceSide(op);
  return placement;
}

llvm::Expected<PlacementResult>
tandem::solvePlacement(const PlacementProblem &problem,
                       PlacementStrategy strategy,
                       const ExactSearchLimits &limits) {
  if (!problem.hasGpu) {
    for (const PlacementOp &op : problem.ops)
      if (op.pin == DeviceKind::GPU || !op.canRunOn(DeviceKind::CPU))
        return makeError("the device profile has no GPU, but an op is "
                         "pinned to the GPU or can run only there");
    return finish(problem, Placement(problem.ops.size(), 0));
  }
  switch (strategy) {
  case PlacementStrategy::Auto:
    return solveAuto(problem);
  case PlacementStrategy::Exact:
    return solveExact(problem, limits);
  case PlacementStrategy::MinCut:
    return finish(problem, solveMinCut(problem), 1);
  case PlacementStrategy::Greedy:
    return finish(problem, solveGreedy(problem));
  case PlacementStrategy::AllCpu:
    return finish(problem, problem.leastGpuPlacement());
  case PlacementStrategy::AllGpu: {
    Placement placement(problem.ops.size());
    for (auto [index, op] : llvm::enumerate(problem.ops))
      placement[index] = op.canRunOn(DeviceKind::GPU) &&
                         op.pin != DeviceKind::CPU;
    PlacementResult result = finish(problem, std::move(placement));
    if (result.cost.peakGpuBytes > problem.gpuBudgetBytes)
      return makeError(llvm::formatv(
          "strategy 'all-gpu' needs {0} bytes of GPU memory, over the budget "
          "of {1} bytes",
          result.cost.peakGpuBytes, problem.gpuBudgetBytes));
    return result;
  }
  }
  return makeError("unknown strategy");
}
