//===- PlacementSearch.h - the pieces the solvers share ---------*- C++ -*-===//
//
// Internal to lib/Analysis: the minimum cut with prices on GPU memory (a
// Lagrangian relaxation of the budget), the best placement found so far,
// repair and local moves, the branch and bound that `auto` runs
// truncated and `exact` runs to the end, and the depth-first search over
// pinned devices that the makespan's branch and bound and its bound's
// placements term share.
//
// What the budget bounds is the laid-out arena (PlacementProblem::
// fitsBudget): every placement a solver keeps is judged by it, so a
// placement is never returned that --tandem-plan-memory would refuse.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_ANALYSIS_PLACEMENTSEARCH_H
#define TANDEM_LIB_ANALYSIS_PLACEMENTSEARCH_H

#include "tandem/Analysis/MinCut.h"
#include "tandem/Analysis/PlacementProblem.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <functional>
#include <future>
#include <optional>
#include <vector>

namespace mlir::tandem::search {

/// Forced devices during a search: -1 free, 0 CPU, 1 GPU.
using Fixing = std::vector<int8_t>;

/// How much searching a problem of its size affords: the rations, in one
/// place, that keep placement near-linear in the size of the graph. Small
/// graphs get exact one-op-at-a-time repair and dense frontiers; large ones
/// repair in rounds and sample fewer points.
struct SearchEffort {
  /// Evenly spaced memory levels the frontier is searched at, the starting
  /// placements repaired to each, and the rounds that add levels where the
  /// frontier has a large step.
  int levels = 0, seedsPerLevel = 0, refinementRounds = 0;
  /// Greedy prefixes and priced-cut directions sampled, the price grid's
  /// step, and how many times it is bisected where the cuts jump.
  int greedyPrefixes = 0, cutDirections = 0;
  double cutGridRatio = 4;
  int cutRefinements = 0;
  /// Budget checks per local improvement.
  int localChecks = 0;
  /// Repair one op (or group) at a time, evaluating this many candidates
  /// exactly at each step; otherwise in rounds.
  bool repairOneByOne = false;
  int repairCandidates = 0;
  /// Subgradient steps for the lower bound.
  int boundIterations = 0;
  /// Chains the levels are searched in side by side (each level started
  /// from the one above it in its chain); 1: one after another.
  size_t levelChains = 1;

  static SearchEffort forProblem(const PlacementProblem &problem);
};

/// A minimum cut of the placement graph.
struct Cut {
  Placement placement;
  /// The cut's objective: time plus the priced GPU memory, microseconds.
  double valueUs = 0;
  /// False if a capacity was too large to represent; the value is then not
  /// a bound.
  bool exact = true;
};

/// The placement graph of the minimum cut below, kept so that it can be
/// solved again after more ops are fixed: fixing only adds infinite edges,
/// so the flow found so far stays valid and the next solve continues from
/// it (what branch and bound does at every node, from its parent's flow).
class CutGraph {
public:
  CutGraph(const PlacementProblem &problem, const std::vector<double> *prices);
  /// Forces `op` to the GPU or to the CPU.
  void fix(int op, bool onGpu);
  /// The minimum cut under the fixings so far.
  Cut solve();

private:
  MinCutGraph graph;
  int numOps, source, sink;
  int64_t flow = 0, finiteEdges = 0;
  bool capped = false;
};

/// The minimum of time + sum over points t of prices[t] * pricedBytes(t),
/// where pricedBytes (below) never exceeds the GPU bytes live at t: with
/// prices, the cut's value minus sum(prices) * budget is a lower bound on
/// the time of every placement within the budget. Ties go to the CPU.
Cut solveCut(const PlacementProblem &problem,
             const std::vector<double> *prices = nullptr,
             const Fixing *fixed = nullptr);

/// The GPU bytes solveCut prices at each point for `placement`: every
/// buffer that is certainly live there, without the copy-out point of a GPU
/// result nothing on the GPU reads, and without a GPU reshape's extension
/// of its operand's buffer. At most the live bytes at every point.
std::vector<int64_t> pricedGpuBytes(const PlacementProblem &problem,
                                    const Placement &placement);

/// The lower bound a priced cut proves: its value minus what the prices
/// charge for the budget itself.
double lagrangianBound(const PlacementProblem &problem, const Cut &cut,
                       const std::vector<double> &prices);

/// The best placement within the budget found so far.
class Incumbent {
public:
  explicit Incumbent(const PlacementProblem &problem) : problem(&problem) {}

  /// Keeps `placement` if it fits the budget and beats the best; returns
  /// true if it was kept.
  bool offer(const Placement &placement);
  bool offer(const Placement &placement, const PlacementCost &cost);

  bool found() const { return bestUs != kUnreachable; }
  const Placement &placement() const { return best; }
  double us() const { return bestUs; }

private:
  const PlacementProblem *problem;
  Placement best;
  double bestUs = kUnreachable;
};

/// A free op (not fixed by a pin, device support or `fixed`) that keeps GPU
/// memory alive at a point, with the bytes it keeps and those only it keeps.
struct GpuHolding {
  int op;
  int64_t bytes;
  int64_t soleBytes;
};

/// The free ops keeping some GPU buffer alive at `point` (with
/// `includeFixed`, every op): those on the GPU that write or read it, and a
/// CPU reshape whose result is copied in (on the GPU it would alias its
/// operand's buffer instead).
std::vector<GpuHolding> opsHoldingGpuMemory(const PlacementProblem &problem,
                                            const Placement &placement,
                                            int64_t point, const Fixing &fixed,
                                            bool includeFixed = false);

/// Moves ops off the GPU until the peak of live bytes is at most
/// `peakTarget`, the cheapest time per byte freed first. Ops fixed by
/// `fixed` stay. `cost` is set to the result's.
Placement repairPeak(const PlacementProblem &problem, Placement placement,
                     int64_t peakTarget, PlacementCost &cost,
                     const Fixing *fixed = nullptr);

/// repairPeak until the laid-out arena fits `budget`: when the layout
/// overshoots, the peak target drops by the overshoot and repair goes on.
/// std::nullopt if moving ops off the GPU cannot make it fit.
std::optional<Placement> repairToFit(const PlacementProblem &problem,
                                     Placement placement, int64_t budget,
                                     const Fixing *fixed = nullptr);

/// Single-op moves that lower the time and keep the placement within
/// `budget`, the largest gains first, at most `maxChecks` of them checked.
void improveLocally(const PlacementProblem &problem, Placement &placement,
                    int64_t budget, int maxChecks);

/// The move off the GPU that costs the least time per byte it frees at
/// `peakPoint` (bytes past `excess` count for nothing): one op that
/// keeps memory there, or it with the ops that go with it (a weight with its
/// consumers, an op with the weights only it reads), among the
/// `maxCandidates` most promising by a cheap estimate. std::nullopt if no
/// move frees any.
std::optional<std::vector<int>>
cheapestMoveOffPeak(const PlacementProblem &problem, Placement &placement,
                    int64_t peakPoint, int64_t excess, const Fixing &fixed,
                    int maxCandidates);

/// Branch and bound over the free ops from the incumbent. Each node's bound
/// is its unconstrained minimum cut and, given `prices`, its Lagrangian
/// bound; a node whose cut fits is solved. Returns the least bound of the
/// nodes left unexplored (the incumbent's time when the search finished:
/// it is then optimal).
struct BranchAndBoundResult {
  bool finished = false;
  double lowerBoundUs = 0;
  int64_t nodes = 0;
  int cuts = 0;
};
BranchAndBoundResult branchAndBound(const PlacementProblem &problem,
                                    Incumbent &incumbent,
                                    const std::vector<double> *prices,
                                    int64_t maxNodes);

/// Depth-first over the devices of the ops in `order` (free ops of
/// `problem`): each decided op becomes a pin of a copy of the problem, so a
/// bound of that copy holds for every completion of the partial placement.
/// At an inner node `prune(pinned, depth)` may cut the subtree; at a leaf
/// `leaf(placement)` sees the whole placement, fixed ops on their devices.
/// `firstDevice(op)` is the device tried first. Returns false if it stopped
/// after `maxNodes` nodes (counted in `nodes`).
template <typename Prune, typename Leaf, typename FirstDevice>
bool searchPinnedPlacements(const PlacementProblem &problem,
                            llvm::ArrayRef<int> order, int64_t maxNodes,
                            int64_t &nodes, Prune prune, Leaf leaf,
                            FirstDevice firstDevice) {
  PlacementProblem pinned = problem;
  Placement placement(problem.ops.size(), 0);
  for (auto [index, op] : llvm::enumerate(problem.ops))
    if (op.isFixed())
      placement[index] = op.fixedDevice();
  bool finished = true;
  std::function<void(size_t)> visit = [&](size_t depth) {
    if (!finished)
      return;
    if (++nodes > maxNodes) {
      finished = false;
      return;
    }
    if (depth == order.size()) {
      leaf(placement);
      return;
    }
    if (prune(pinned, depth))
      return;
    int op = order[depth];
    uint8_t first = firstDevice(op);
    for (uint8_t device : {first, uint8_t(1 - first)}) {
      placement[op] = device;
      pinned.ops[op].pin = device ? DeviceKind::GPU : DeviceKind::CPU;
      visit(depth + 1);
    }
    pinned.ops[op].pin.reset();
  };
  visit(0);
  return finished;
}

/// Two times that differ by less than this are equal: capacities are cut
/// in whole picoseconds.
double timeSlack(double us);

/// The makespan objective (PlacementMakespan.cpp): `serial` is the answer
/// of `strategy` under the serial objective; `auto` and `exact` search from
/// it for the placement whose schedule is fastest, the others keep it.
/// Either way the result carries its makespan.
/// `side` holds the candidates priced beside the serial search; it is
/// needed where searchesForMakespan says the search runs.
class FrontierCache;
class SideCandidates;
llvm::Expected<PlacementResult>
improveForMakespan(const PlacementProblem &problem, PlacementStrategy strategy,
                   PlacementResult serial, const ExactSearchLimits &limits,
                   FrontierCache &frontier, SideCandidates *side);

/// Whether improveForMakespan searches (`auto` and `exact`, with a GPU)
/// rather than keeping the serial answer.
bool searchesForMakespan(const PlacementProblem &problem,
                         PlacementStrategy strategy);

/// A placement priced once for many makespan searches: what an offer works
/// out before it simulates the windows.
struct PricedPlacement {
  Placement placement;
  double unwindowedUs = 0, serialUs = 0;
  /// Its peak of live bytes in program order, and the arena those buffers
  /// are laid out in (-1 until a budget above the peak asks for it).
  int64_t peak = 0, arena = -1;
};

/// The makespan search's candidates that do not come from the frontier
/// (greedy's prefixes, the earliest-finish placement and its streaming
/// ladder), built and priced on a thread of their own from construction:
/// on a large graph that runs while the serial search builds the frontier.
class SideCandidates {
public:
  explicit SideCandidates(const PlacementProblem &problem);
  /// Waits for the pricing (if it was not taken).
  ~SideCandidates();
  /// The candidates, in a fixed order; once.
  std::vector<PricedPlacement> take();

private:
  std::future<std::vector<PricedPlacement>> pricing;
};

} // namespace mlir::tandem::search

#endif // TANDEM_LIB_ANALYSIS_PLACEMENTSEARCH_H
