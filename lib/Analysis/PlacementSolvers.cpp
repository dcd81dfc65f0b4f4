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
#include <optional>

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

/// What a free op (not fixed by `fixed`, a pin or device support) keeps
/// alive on the GPU at one point: all the bytes of the buffers it holds, and
/// the bytes of those it alone holds (moving it frees them).
struct GpuHolding {
  int op;
  int64_t bytes;
  int64_t soleBytes;
};

/// The free ops that keep some GPU buffer alive at `point`: the branching
/// and repair candidates. A buffer kept alive only by fixed ops is
/// unavoidable at that point.
std::vector<GpuHolding> opsHoldingGpuMemory(const PlacementProblem &problem,
                                            const Placement &placement,
                                            int64_t point,
                                            const std::vector<int8_t> &fixed) {
  std::vector<std::vector<int>> members;
  std::vector<BufferLifetime> buffers = problem.gpuBuffers(placement, &members);
  std::vector<int64_t> held(problem.ops.size(), 0), sole(problem.ops.size(), 0);
  std::vector<int> holders;
  auto hold = [&](int op) {
    if (fixed[op] < 0 && !problem.ops[op].isFixed())
      holders.push_back(op);
  };
  for (auto [buffer, values] : llvm::zip(buffers, members)) {
    if (point < buffer.first || point > buffer.last)
      continue;
    holders.clear();
    // Every value sharing the buffer (a value and its GPU reshapes) holds it
    // as its own would.
    for (int member : values) {
      const PlacementValue &value = problem.values[member];
      bool producedOnGpu = !value.isArgument() && placement[value.producer];
      int64_t producerPoint = 2 * int64_t(value.producer) + 1;
      if (producedOnGpu && value.isWeight) {
        hold(value.producer); // resident
        continue;
      }
      // A GPU result is held by its producer at its own point and at the
      // copy-out point after it.
      if (producedOnGpu && point <= producerPoint + 1)
        hold(value.producer);
      // After that, by every GPU consumer still to run: it needs the
      // buffer whichever device produced it.
      if (!producedOnGpu || point > producerPoint)
        for (int consumer : value.consumers)
          if (placement[consumer] && 2 * int64_t(consumer) + 1 >= point)
            hold(consumer);
    }
    llvm::sort(holders);
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    for (int op : holders)
      held[op] += buffer.bytes;
    if (holders.size() == 1)
      sole[holders.front()] += buffer.bytes;
  }
  std::vector<GpuHolding> result;
  for (auto [op, bytes] : llvm::enumerate(held))
    if (bytes > 0)
      result.push_back({static_cast<int>(op), bytes, sole[op]});
  return result;
}

/// Moves ops off the GPU until the placement fits, choosing each time the
/// move that costs the least time per byte freed at the peak. Ops fixed by
/// `fixed` (1: GPU) stay.
Placement repair(const PlacementProblem &problem, Placement placement,
                 const std::vector<int8_t> *fixed = nullptr) {
  std::vector<int8_t> free(problem.ops.size(), -1);
  const std::vector<int8_t> &locked = fixed ? *fixed : free;
  // Each round frees the excess at the peak plus a margin; when the peak
  // just moves elsewhere the margin doubles, so a long graph with the same
  // excess at every point is repaired in a few rounds, not one per point.
  int64_t margin = 0;
  while (true) {
    PlacementCost cost = problem.evaluate(placement);
    if (cost.peakGpuBytes <= problem.gpuBudgetBytes)
      return placement;
    std::vector<std::pair<double, GpuHolding>> moves;
    for (const GpuHolding &holding :
         opsHoldingGpuMemory(problem, placement, cost.peakPoint, locked)) {
      if (!placement[holding.op])
        continue;
      double ratio = std::max(0.0, problem.flipDeltaUs(holding.op, placement)) /
                     double(holding.bytes);
      moves.push_back({ratio, holding});
    }
    if (moves.empty())
      return placement; // nothing movable holds the peak: it cannot fit
    llvm::sort(moves, [](const auto &a, const auto &b) {
      return a.first < b.first;
    });
    // Only bytes an op holds alone are surely freed by moving it; shared
    // buffers are counted when their last holder moves.
    int64_t excess = cost.peakGpuBytes - problem.gpuBudgetBytes + margin;
    int64_t largest = 0;
    for (auto &[ratio, holding] : moves)
      largest = std::max(largest, holding.bytes);
    margin = std::max(2 * margin, largest);
    for (auto &[ratio, holding] : moves) {
      placement[holding.op] = 0;
      excess -= holding.soleBytes;
      if (excess <= 0)
        break;
    }
  }
}

/// Single-op moves that lower the time and keep the budget. A move to the
/// CPU never grows GPU memory; a move to the GPU is checked (a whole
/// evaluation), at most `maxGpuwardChecks` times.
void improveLocally(const PlacementProblem &problem, Placement &placement,
                    int maxGpuwardChecks) {
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

/// Exchange moves: put one CPU op that would be faster on the GPU there,
/// then repair the budget around it (the op stays), keeping the result if
/// it beats the current time. Tries the `maxMoves` most promising ops.
void improveByExchange(const PlacementProblem &problem, Placement &placement,
                       int maxMoves, int maxGpuwardChecks) {
  std::vector<std::pair<double, int>> gains;
  for (size_t op = 0; op < problem.ops.size(); ++op)
    if (!placement[op] && !problem.ops[op].isFixed()) {
      double delta = problem.flipDeltaUs(op, placement);
      if (delta < -1e-9)
        gains.push_back({delta, static_cast<int>(op)});
    }
  llvm::sort(gains);
  if (gains.size() > size_t(maxMoves))
    gains.resize(maxMoves);
  double currentUs = problem.evaluate(placement).totalUs();
  std::vector<int8_t> fixed(problem.ops.size(), -1);
  for (auto [delta, op] : gains) {
    if (placement[op])
      continue;
    Placement candidate = placement;
    candidate[op] = 1;
    fixed[op] = 1;
    candidate = repair(problem, std::move(candidate), &fixed);
    fixed[op] = -1;
    PlacementCost cost = problem.evaluate(candidate);
    if (cost.peakGpuBytes <= problem.gpuBudgetBytes &&
        cost.totalUs() < currentUs - 1e-9) {
      improveLocally(problem, candidate, maxGpuwardChecks);
      placement = std::move(candidate);
      currentUs = problem.evaluate(placement).totalUs();
    }
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

bool branchAndBound(const PlacementProblem &problem, Placement &best,
                    int64_t maxNodes, int64_t &nodes, int &solves);

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
  auto consider = [&](const Placement &placement,
                      std::optional<PlacementCost> known = std::nullopt) {
    PlacementCost cost = known ? *known : problem.evaluate(placement);
    if (cost.peakGpuBytes > problem.gpuBudgetBytes)
      return false;
    if (cost.totalUs() < bestUs) {
      bestUs = cost.totalUs();
      best = placement;
    }
    return true;
  };
  consider(repair(problem, unconstrained));

  // Subgradient ascent on the Lagrangian dual, one multiplier per program
  // point: where a cut uses more GPU memory than the budget, memory there
  // gets dearer. Each step is one min-cut; the best feasible cut is kept.
  int64_t numPoints = problem.getNumPoints();
  bool smallGraph = problem.ops.size() <= 2000;
  std::vector<double> prices(numPoints, 0.0);
  double bestBound = unconstrainedCost.totalUs();
  double stepScale = 1.0;
  int sinceBetterBound = 0;
  // The dual bound proves how near the best placement is: stop within 0.1%.
  int iterations = smallGraph ? 60 : problem.ops.size() <= 20000 ? 30 : 15;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    Placement cut = solveMinCut(problem, &prices);
    ++solves;
    std::vector<int64_t> live;
    PlacementCost cutCost = problem.evaluate(cut, &live);
    double bound = cutCost.totalUs();
    double norm = 0;
    std::vector<double> excess(numPoints);
    for (int64_t t = 0; t < numPoints; ++t) {
      excess[t] = double(live[t] - problem.gpuBudgetBytes);
      bound += prices[t] * excess[t];
      if (prices[t] == 0 && excess[t] < 0)
        excess[t] = 0; // projected: the multiplier stays at zero
      norm += excess[t] * excess[t];
    }
    // Repairing every cut is affordable on small graphs; on large ones a
    // repair (one evaluation per move) is rationed.
    if (!consider(cut, cutCost) && (smallGraph || iteration % 8 == 0))
      consider(repair(problem, cut));
    if (bound > bestBound + 1e-9) {
      bestBound = bound;
      sinceBetterBound = 0;
    } else if (++sinceBetterBound >= 4) {
      stepScale /= 2;
      sinceBetterBound = 0;
    }
    double gap = bestUs - bound;
    if (norm == 0 || gap <= 1e-3 * bestUs || stepScale < 1e-4)
      break;
    double step = stepScale * gap / norm;
    for (int64_t t = 0; t < numPoints; ++t)
      prices[t] = std::max(0.0, prices[t] + step * excess[t]);
  }
  // Each check evaluates the whole placement: ration them on large graphs.
  int checks = smallGraph ? 256 : 32;
  improveLocally(problem, best, checks);
  improveByExchange(problem, best, smallGraph ? 64 : 4, smallGraph ? 256 : 8);
  // A truncated branch and bound from the best placement found: its nodes
  // are min-cuts, so it is rationed by graph size to stay near-linear.
  int64_t nodes = 0;
  int64_t graphSize = problem.ops.size() + problem.values.size();
  int64_t maxNodes = std::clamp<int64_t>(int64_t(2000000) / graphSize, 4, 20000);
  branchAndBound(problem, best, maxNodes, nodes, solves);
  PlacementResult result = finish(problem, std::move(best), solves);
  result.searchNodes = nodes;
  return result;
}

/// Branch and bound from an incumbent. Returns true if the search finished
/// (the incumbent is then optimal), false if it stopped at `maxNodes`.
bool branchAndBound(const PlacementProblem &problem, Placement &best,
                    int64_t maxNodes, int64_t &nodes, int &solves) {
  double bestUs = problem.evaluate(best).totalUs();
  // Costs are cut in whole nanoseconds: a relative slack absorbs rounding.
  double slack = 1e-9 * std::max(1.0, std::fabs(bestUs)) + 1e-6;
  std::vector<std::vector<int8_t>> stack;
  stack.push_back(std::vector<int8_t>(problem.ops.size(), -1));
  while (!stack.empty()) {
    if (nodes >= maxNodes)
      return false;
    ++nodes;
    std::vector<int8_t> fixed = std::move(stack.back());
    stack.pop_back();
    Placement candidate = solveMinCut(problem, nullptr, &fixed);
    ++solves;
    PlacementCost cost = problem.evaluate(candidate);
    if (cost.totalUs() >= bestUs - slack)
      continue; // the bound: no completion beats the incumbent
    if (cost.peakGpuBytes <= problem.gpuBudgetBytes) {
      best = std::move(candidate);
      bestUs = cost.totalUs();
      continue;
    }
    std::vector<GpuHolding> holders =
        opsHoldingGpuMemory(problem, candidate, cost.peakPoint, fixed);
    if (holders.empty())
      continue; // the peak is unavoidable: no completion fits
    int branch = std::max_element(holders.begin(), holders.end(),
                                  [](const GpuHolding &a, const GpuHolding &b) {
                                    return a.bytes < b.bytes;
                                  })
                     ->op;
    std::vector<int8_t> onGpu = fixed;
    onGpu[branch] = 1;
    fixed[branch] = 0;
    stack.push_back(std::move(onGpu));
    stack.push_back(std::move(fixed)); // explored first
  }
  return true;
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
  int solves = incumbent->minCutSolves;
  int64_t nodes = 0;
  if (!branchAndBound(problem, best, limits.maxNodes, nodes, solves))
    return makeError(llvm::formatv(
        "strategy 'exact' gave up after {0} search nodes without proving "
        "the optimum: the graph is too big for it; use strategy 'auto'",
        limits.maxNodes));
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
                              const std::vector<double> *pointPenalties,
                              const std::vector<int8_t> *fixed) {
  int numOps = problem.ops.size();
  MinCutGraph graph(numOps + 2);
  int source = numOps, sink = numOps + 1; // source side = CPU

  // The price of keeping `bytes` on the GPU over points [first, last].
  std::vector<double> prefix;
  if (pointPenalties) {
    prefix.assign(pointPenalties->size() + 1, 0);
    for (size_t t = 0; t < pointPenalties->size(); ++t)
      prefix[t + 1] = prefix[t] + (*pointPenalties)[t];
  }
  auto price = [&](int64_t bytes, int64_t first, int64_t last) {
    return prefix.empty() ? 0.0 : bytes * (prefix[last + 1] - prefix[first]);
  };
  int64_t lastPoint = problem.getNumPoints() - 1;

  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    bool cpuAllowed = op.canRunOn(DeviceKind::CPU) &&
                      (!op.pin || *op.pin == DeviceKind::CPU) &&
                      (!fixed || (*fixed)[index] != 1);
    bool gpuAllowed = op.canRunOn(DeviceKind::GPU) &&
                      (!op.pin || *op.pin == DeviceKind::GPU) &&
                      (!fixed || (*fixed)[index] != 0);
    // On the GPU its results occupy memory at its point and the copy-out
    // point after it (a resident weight: always).
    int64_t first = op.isWeight ? 0 : 2 * int64_t(index) + 1;
    int64_t last = op.isWeight ? lastPoint : first + 1;
    double gpuUs = op.gpuUs + price(resultBytes(problem, op), first, last);
    graph.addEdge(source, index,
                  gpuAllowed ? toCapacity(gpuUs) : MinCutGraph::kInfinity);
    graph.addEdge(index, sink,
                  cpuAllowed ? toCapacity(op.cpuUs) : MinCutGraph::kInfinity);
  }
  for (const PlacementValue &value : problem.values) {
    int producer = value.isArgument() ? source : value.producer;
    if (!value.consumers.empty()) {
      // `needed[s]` is on the sink side iff one of the consumers from the
      // s-th on runs on the GPU: then the value's GPU buffer is live from
      // the previous consumer's point to this one's. Without prices, only
      // the first (any consumer at all) matters.
      size_t chain = prefix.empty() ? 1 : value.consumers.size();
      int64_t segmentStart =
          value.isArgument() ? 0 : 2 * int64_t(value.producer) + 2;
      int previous = -1;
      for (size_t s = 0; s < chain; ++s) {
        int needed = graph.addNode();
        if (s == 0)
          graph.addEdge(producer, needed, toCapacity(value.h2dUs));
        else
          graph.addEdge(previous, needed, MinCutGraph::kInfinity);
        for (size_t c = s; c < (prefix.empty() ? value.consumers.size() : s + 1);
             ++c)
          graph.addEdge(needed, value.consumers[c], MinCutGraph::kInfinity);
        if (!prefix.empty()) {
          int64_t segmentEnd = 2 * int64_t(value.consumers[s]) + 1;
          // A weight's copy exists only when the weight is not resident.
          graph.addEdge(value.isWeight ? producer : source, needed,
                        toCapacity(price(value.bytes, segmentStart,
                                         segmentEnd)));
          segmentStart = segmentEnd + 1;
        }
        previous = needed;
      }
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
tandem::solvePlacementWithinArena(const PlacementProblem &problem,
                                  PlacementStrategy strategy,
                                  const ExactSearchLimits &limits) {
  llvm::Expected<PlacementResult> result =
      solvePlacement(problem, strategy, limits);
  if (!result || (strategy != PlacementStrategy::Auto &&
                  strategy != PlacementStrategy::Exact))
    return result;
  // The budget bounds the arena, which fragmentation can make larger than
  // the peak of live bytes: tighten the peak budget by the overshoot and
  // solve again.
  std::optional<PlacementProblem> tightened;
  for (int attempt = 0; attempt < 4; ++attempt) {
    int64_t arena =
        planMemory(problem.gpuBuffers(result->placement)).arenaBytes;
    if (arena <= problem.gpuBudgetBytes)
      return result;
    if (!tightened)
      tightened = problem;
    tightened->gpuBudgetBytes -=
        (arena - problem.gpuBudgetBytes) * (attempt + 1);
    if (strategy == PlacementStrategy::Exact) {
      // The proof must hold under the tightened budget: search again.
      llvm::Expected<PlacementResult> retry =
          solvePlacement(*tightened, strategy, limits);
      if (!retry) {
        llvm::consumeError(retry.takeError());
        break;
      }
      result = std::move(retry);
    } else {
      // auto: repair the placement it has under the tightened budget and
      // improve it locally, rather than search from scratch.
      Placement placement = repair(*tightened, result->placement);
      if (tightened->fitsBudget(placement))
        improveLocally(*tightened, placement, 32);
      result->placement = std::move(placement);
    }
    result->cost = problem.evaluate(result->placement);
  }
  int64_t arena = planMemory(problem.gpuBuffers(result->placement)).arenaBytes;
  if (arena <= problem.gpuBudgetBytes)
    return result;
  return makeError(llvm::formatv(
      "the placement's GPU buffers need an arena of {0} bytes, over the "
      "budget of {1} bytes, once laid out without overlap",
      arena, problem.gpuBudgetBytes));
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
