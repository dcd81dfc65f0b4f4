//===- PlacementSolvers.cpp - auto, exact and the baselines ---------------===//
//
// `auto`: the unconstrained optimum is a minimum cut (PlacementCut.cpp); if
// its buffers fit the budget once laid out, it is optimal. Otherwise the
// answer is the fastest point that fits of the problem's frontier
// (PlacementFrontier.cpp), which does not depend on the budget, so a larger
// budget never gives a slower answer; it includes every baseline, so `auto`
// is never slower than one that fits. A Lagrangian relaxation of the budget
// (one price per program point, subgradient ascent) proves a lower bound,
// and where few ops are free to move a branch and bound that finishes
// replaces the answer with the proven optimum. `auto` refuses only when no
// placement it finds fits.
//
// `exact`: the same, then the branch and bound to the end: its answer is
// the optimum over every placement whose buffers fit once laid out, so it
// never gets slower as the budget grows.
//
//===----------------------------------------------------------------------===//

#include "PlacementFrontier.h"
#include "PlacementSearch.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::search;

char BudgetError::ID = 0;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

PlacementResult finish(const PlacementProblem &problem, Placement placement,
                       int minCutSolves = 0) {
  PlacementResult result;
  result.cost = problem.evaluate(placement);
  result.placement = std::move(placement);
  result.minCutSolves = minCutSolves;
  return result;
}

/// A placement over the budget, as an error naming `message` and the ops
/// keeping the most GPU memory alive at its peak (pinned ones among them).
llvm::Error overBudgetError(const PlacementProblem &problem,
                            const Placement &placement,
                            const llvm::Twine &message) {
  PlacementCost cost = problem.evaluate(placement);
  std::vector<std::pair<int, int64_t>> ops;
  Fixing none(problem.ops.size(), -1);
  for (const GpuHolding &holding :
       opsHoldingGpuMemory(problem, placement, cost.peakPoint, none,
                           /*includeFixed=*/true))
    ops.push_back({holding.op, holding.bytes});
  llvm::sort(ops, [](const auto &a, const auto &b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  return llvm::make_error<BudgetError>(message.str(), std::move(ops));
}

/// No placement found within the budget: says what the ops that must be on
/// the GPU need, with everything else on the CPU, and which ops they are.
llvm::Error infeasible(const PlacementProblem &problem) {
  Placement least = problem.leastGpuPlacement();
  return overBudgetError(
      problem, least,
      llvm::formatv("no placement fits the GPU memory budget of {0} bytes: "
                    "the ops pinned to the GPU or able to run only there need "
                    "{1}, with everything else on the CPU",
                    problem.gpuBudgetBytes,
                    problem.describeGpuMemory(least, problem.evaluate(least))));
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
    int64_t weightBytes = 0;
    if (op.isWeight)
      for (int value : op.results)
        weightBytes += problem.values[value].bytes;
    if (used + weightBytes > problem.gpuBudgetBytes)
      break;
    used += weightBytes;
    placement[index] = 1;
  }
  return placement;
}

/// The search `auto` runs and `exact` continues.
struct AutoSearch {
  AutoSearch(const PlacementProblem &problem, FrontierCache &frontier)
      : problem(problem), frontier(frontier), incumbent(problem) {}

  const PlacementProblem &problem;
  FrontierCache &frontier;
  Incumbent incumbent;
  double lowerBoundUs = 0;
  /// The prices of the best Lagrangian bound (empty: none found).
  std::vector<double> bestPrices;
  int cuts = 0;
  int64_t nodes = 0;

  bool proven() const {
    return incumbent.found() &&
           incumbent.us() - lowerBoundUs <= timeSlack(incumbent.us());
  }

  /// Returns false if the unconstrained optimum fits (then it is the
  /// incumbent, proven optimal).
  bool start();
  void lagrangianBound();
  void truncatedBranchAndBound();
};

bool AutoSearch::start() {
  const Cut &free = frontier.unconstrainedCut();
  ++cuts;
  PlacementCost freeCost = problem.evaluate(free.placement);
  lowerBoundUs = std::min(freeCost.totalUs(), free.valueUs);
  if (problem.fitsBudget(free.placement, freeCost)) {
    incumbent.offer(free.placement, freeCost);
    lowerBoundUs = freeCost.totalUs();
    return false;
  }
  // The fastest frontier point that fits: the frontier does not depend on
  // the budget, so a larger budget never finds a slower one.
  if (const FrontierPoint *best =
          frontier.get().bestWithin(problem.gpuBudgetBytes))
    incumbent.offer(best->placement);
  // Greedy under this budget, so auto never loses to it.
  incumbent.offer(solveGreedy(problem));
  if (!incumbent.found())
    if (std::optional<Placement> repaired =
            repairToFit(problem, problem.leastGpuPlacement(),
                        problem.gpuBudgetBytes))
      incumbent.offer(*repaired);
  return true;
}

void AutoSearch::lagrangianBound() {
  // Subgradient ascent on the Lagrangian dual, one multiplier per program
  // point: where a cut keeps more GPU memory than the budget, memory there
  // gets dearer. Each step is one minimum cut, and its value proves a lower
  // bound on every placement within the budget. Its cuts are not answers:
  // they depend on the budget, and answers come from the frontier.
  int64_t numPoints = problem.getNumPoints();
  int iterations = SearchEffort::forProblem(problem).boundIterations;
  std::vector<double> prices(numPoints, 0.0);
  // Polyak's step, started small (the first steps overshoot otherwise) and
  // grown while the bound improves.
  double stepScale = 0.1;
  int sinceBetterBound = 0;
  for (int iteration = 0; iteration < iterations && !proven(); ++iteration) {
    Cut cut = solveCut(problem, &prices);
    ++cuts;
    if (cut.exact) {
      double bound = search::lagrangianBound(problem, cut, prices);
      if (bound > lowerBoundUs + 1e-9) {
        lowerBoundUs = bound;
        bestPrices = prices;
        sinceBetterBound = 0;
        stepScale = std::min(2.0, stepScale * 1.2);
      } else if (++sinceBetterBound >= 4) {
        stepScale /= 2;
        sinceBetterBound = 0;
      }
    }
    std::vector<int64_t> priced = pricedGpuBytes(problem, cut.placement);
    std::vector<double> excess(numPoints);
    double norm = 0;
    for (int64_t t = 0; t < numPoints; ++t) {
      excess[t] = double(priced[t] - problem.gpuBudgetBytes);
      if (prices[t] == 0 && excess[t] < 0)
        excess[t] = 0; // projected: the multiplier stays at zero
      norm += excess[t] * excess[t];
    }
    if (norm == 0 || stepScale < 1e-3 || !incumbent.found())
      break;
    double gap = std::max(incumbent.us() - lowerBoundUs,
                          1e-3 * incumbent.us());
    double step = stepScale * gap / norm;
    for (int64_t t = 0; t < numPoints; ++t)
      prices[t] = std::max(0.0, prices[t] + step * excess[t]);
  }
}

void AutoSearch::truncatedBranchAndBound() {
  // Only where it can finish: a search cut short proves nothing and would
  // make the answer depend on where it stopped.
  int freeOps = 0;
  for (const PlacementOp &op : problem.ops)
    freeOps += !op.isFixed();
  if (proven() || freeOps > ExactSearchLimits().maxFreeOps)
    return;
  int64_t graphSize = problem.ops.size() + problem.values.size();
  int64_t maxNodes =
      std::clamp<int64_t>(int64_t(3000000) / graphSize, 4, 30000);
  Incumbent searched = incumbent;
  BranchAndBoundResult search = branchAndBound(
      problem, searched, bestPrices.empty() ? nullptr : &bestPrices, maxNodes);
  cuts += search.cuts;
  nodes += search.nodes;
  lowerBoundUs = std::max(lowerBoundUs, std::min(search.lowerBoundUs,
                                                 incumbent.us()));
  if (search.finished) {
    incumbent = std::move(searched);
    lowerBoundUs = incumbent.us();
  }
}

PlacementResult finishSearch(const AutoSearch &search) {
  PlacementResult result =
      finish(search.problem, search.incumbent.placement(), search.cuts);
  result.searchNodes = search.nodes;
  result.lowerBoundUs = std::min(search.lowerBoundUs, result.cost.totalUs());
  return result;
}

llvm::Expected<PlacementResult> solveAuto(const PlacementProblem &problem,
                                          FrontierCache &frontier) {
  AutoSearch search(problem, frontier);
  if (search.start()) {
    search.lagrangianBound();
    search.truncatedBranchAndBound();
  }
  if (!search.incumbent.found())
    return infeasible(problem);
  return finishSearch(search);
}

llvm::Expected<PlacementResult> solveExact(const PlacementProblem &problem,
                                           const ExactSearchLimits &limits,
                                           FrontierCache &frontier) {
  int freeOps = 0;
  for (const PlacementOp &op : problem.ops)
    freeOps += !op.isFixed();
  if (freeOps > limits.maxFreeOps)
    return makeError(llvm::formatv(
        "strategy 'exact' proves optimality by search and takes at most {0} "
        "ops free to move; this graph has {1}: use strategy 'auto'",
        limits.maxFreeOps, freeOps));

  AutoSearch search(problem, frontier);
  if (search.start()) {
    search.lagrangianBound();
    if (!search.proven()) {
      // To the end: the result is the optimum (or proof that none fits).
      BranchAndBoundResult tree = branchAndBound(
          problem, search.incumbent,
          search.bestPrices.empty() ? nullptr : &search.bestPrices,
          limits.maxNodes);
      search.cuts += tree.cuts;
      search.nodes += tree.nodes;
      if (!tree.finished)
        return makeError(llvm::formatv(
            "strategy 'exact' gave up after {0} search nodes without proving "
            "the optimum: the graph is too big for it; use strategy 'auto'",
            limits.maxNodes));
      search.lowerBoundUs = search.incumbent.us();
    }
  }
  if (!search.incumbent.found())
    return infeasible(problem);
  PlacementResult result = finishSearch(search);
  result.optimalUs = result.cost.totalUs();
  result.lowerBoundUs = result.optimalUs;
  return result;
}

} // namespace

namespace {

llvm::Expected<PlacementResult> solveSerial(const PlacementProblem &problem,
                                            PlacementStrategy strategy,
                                            const ExactSearchLimits &limits,
                                            FrontierCache &frontier) {
  if (!problem.hasGpu) {
    for (const PlacementOp &op : problem.ops)
      if (op.pin == DeviceKind::GPU || !op.canRunOn(DeviceKind::CPU))
        return makeError("the device profile has no GPU, but an op is "
                         "pinned to the GPU or can run only there");
    // One placement exists: all on the CPU, optimal.
    PlacementResult result = finish(problem, Placement(problem.ops.size(), 0));
    if (strategy == PlacementStrategy::Auto ||
        strategy == PlacementStrategy::Exact)
      result.lowerBoundUs = result.cost.totalUs();
    if (strategy == PlacementStrategy::Exact)
      result.optimalUs = result.cost.totalUs();
    return result;
  }
  auto overBudget = [&](const PlacementResult &result) -> llvm::Error {
    if (problem.fitsBudget(result.placement, result.cost))
      return llvm::Error::success();
    return overBudgetError(
        problem, result.placement,
        llvm::formatv("strategy '{0}' needs {1}, over the budget of {2} bytes",
                      stringifyPlacementStrategy(strategy),
                      problem.describeGpuMemory(result.placement, result.cost),
                      problem.gpuBudgetBytes));
  };
  switch (strategy) {
  case PlacementStrategy::Auto:
    return solveAuto(problem, frontier);
  case PlacementStrategy::Exact:
    return solveExact(problem, limits, frontier);
  case PlacementStrategy::MinCut:
    return finish(problem, solveMinCut(problem), 1);
  case PlacementStrategy::Greedy:
    return finish(problem, solveGreedy(problem));
  case PlacementStrategy::AllCpu:
  case PlacementStrategy::AllGpu: {
    PlacementResult result =
        finish(problem, strategy == PlacementStrategy::AllCpu
                            ? problem.leastGpuPlacement()
                            : problem.mostGpuPlacement());
    if (llvm::Error error = overBudget(result))
      return std::move(error);
    return result;
  }
  }
  return makeError("unknown strategy");
}

} // namespace

llvm::Expected<PlacementResult>
tandem::solvePlacement(const PlacementProblem &problem,
                       PlacementStrategy strategy,
                       const ExactSearchLimits &limits,
                       PlacementObjective objective) {
  FrontierCache frontier(problem);
  // The makespan search's candidates that need no frontier are priced on a
  // thread of their own while the serial search builds it.
  std::optional<SideCandidates> side;
  if (objective == PlacementObjective::Makespan &&
      searchesForMakespan(problem, strategy))
    side.emplace(problem);
  llvm::Expected<PlacementResult> serial =
      solveSerial(problem, strategy, limits, frontier);
  if (!serial || objective == PlacementObjective::Serial)
    return serial;
  return improveForMakespan(problem, strategy, std::move(*serial), limits,
                            frontier, side ? &*side : nullptr);
}
