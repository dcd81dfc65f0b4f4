//===- PlacementSearch.cpp - repair, local moves, branch and bound --------===//

#include "PlacementSearch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::search;

double search::timeSlack(double us) {
  return 1e-9 * std::max(1.0, std::fabs(us)) + 1e-6;
}

SearchEffort SearchEffort::forProblem(const PlacementProblem &problem) {
  // One row per size of graph, up to its number of ops; the last row's
  // steps are each a pass over 40,000 ops or more: the fewest.
  struct Tier {
    size_t maxOps;
    SearchEffort effort;
  };
  static const Tier kTiers[] = {
      //          levels seeds refine prefixes dirs grid refine checks
      //          one-by-one candidates bound chains
      // (On the largest graphs each level's search is a few passes over the
      // whole graph, 1/20 of a second at 100k ops: two chains run side by
      // side.)
      {400, {32, 3, 3, 64, 2, 4, 4, 64, true, 32, 60, 1}},
      {4000, {16, 2, 1, 64, 2, 4, 3, 32, true, 16, 40, 1}},
      {40000, {8, 1, 0, 16, 1, 8, 1, 8, false, 0, 12, 1}},
      {SIZE_MAX, {6, 1, 0, 8, 0, 8, 0, 3, false, 0, 0, 2}},
  };
  for (const Tier &tier : kTiers)
    if (problem.ops.size() <= tier.maxOps)
      return tier.effort;
  return kTiers[std::size(kTiers) - 1].effort;
}

bool Incumbent::offer(const Placement &placement) {
  return offer(placement, problem->evaluate(placement));
}

bool Incumbent::offer(const Placement &placement, const PlacementCost &cost) {
  // The cheap test first: only a faster placement is laid out.
  if (found() && cost.totalUs() >= bestUs - timeSlack(bestUs))
    return false;
  if (!problem->fitsBudget(placement, cost))
    return false;
  best = placement;
  bestUs = cost.totalUs();
  return true;
}

std::vector<GpuHolding> search::opsHoldingGpuMemory(
    const PlacementProblem &problem, const Placement &placement, int64_t point,
    const Fixing &fixed, bool includeFixed) {
  std::vector<BufferMembers> members;
  std::vector<BufferLifetime> buffers = problem.gpuBuffers(placement, &members);
  std::vector<int64_t> held(problem.ops.size(), 0), sole(problem.ops.size(), 0);
  std::vector<int> holders;
  auto hold = [&](int op) {
    if (includeFixed || (fixed[op] < 0 && !problem.ops[op].isFixed()))
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
      // A CPU reshape's result copied in: the reshape moved to the GPU
      // would alias its operand's buffer instead.
      if (!producedOnGpu && !value.isArgument() &&
          problem.ops[value.producer].aliasesOperand)
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
    int64_t bytes = alignBufferSize(buffer.bytes);
    for (int op : holders)
      held[op] += bytes;
    if (holders.size() == 1)
      sole[holders.front()] += bytes;
  }
  // A workspace (a buffer holding no value) is its op's alone, at its point.
  if (point % 2 == 1) {
    int op = int(point / 2);
    if (op < int(problem.ops.size()) && placement[op] &&
        problem.ops[op].gpuWorkspaceBytes > 0) {
      holders.clear();
      hold(op);
      int64_t bytes = alignBufferSize(problem.ops[op].gpuWorkspaceBytes);
      for (int holder : holders) {
        held[holder] += bytes;
        sole[holder] += bytes;
      }
    }
  }
  std::vector<GpuHolding> result;
  for (auto [op, bytes] : llvm::enumerate(held))
    if (bytes > 0)
      result.push_back({static_cast<int>(op), bytes, sole[op]});
  return result;
}

namespace {

/// One op (or group) at a time, each the cheapest per byte freed at the
/// peak, evaluated exactly among the most promising candidates.
Placement repairOneByOne(const PlacementProblem &problem, Placement placement,
                         int64_t peakTarget, const Fixing &locked,
                         int candidates, PlacementCost &cost) {
  while (true) {
    cost = problem.evaluate(placement);
    if (cost.peakGpuBytes <= peakTarget)
      return placement;
    std::optional<std::vector<int>> move = cheapestMoveOffPeak(
        problem, placement, cost.peakPoint, cost.peakGpuBytes - peakTarget,
        locked, candidates);
    if (!move)
      return placement; // nothing movable frees the peak: it cannot fit
    for (int op : *move)
      placement[op] = 0;
  }
}

/// In rounds, each freeing the excess at the peak plus a margin, by the
/// bytes each op holds alone; when the peak just moves elsewhere the margin
/// doubles, so a long graph with the same excess at every point is repaired
/// in a few rounds, not one per point.
Placement repairInRounds(const PlacementProblem &problem, Placement placement,
                         int64_t peakTarget, const Fixing &locked,
                         PlacementCost &cost) {
  int64_t margin = 0;
  while (true) {
    cost = problem.evaluate(placement);
    if (cost.peakGpuBytes <= peakTarget)
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
      return a.first < b.first ||
             (a.first == b.first && a.second.op < b.second.op);
    });
    // Only bytes an op holds alone are surely freed by moving it; shared
    // buffers are counted when their last holder moves.
    int64_t excess = cost.peakGpuBytes - peakTarget + margin;
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

} // namespace

namespace {

/// The ops that leave the GPU together with `op`: a resident weight takes
/// its GPU consumers along (moved alone it would only be streamed), and an
/// op takes the weights only it reads on the GPU (left there they would
/// hold memory for nothing). Free ops only.
std::vector<int> moveGroup(const PlacementProblem &problem,
                           const Placement &placement, int op,
                           const Fixing &fixed) {
  auto movable = [&](int other) {
    return placement[other] && fixed[other] < 0 &&
           !problem.ops[other].isFixed();
  };
  std::vector<int> group = {op};
  const PlacementOp &moved = problem.ops[op];
  if (moved.isWeight) {
    for (int value : moved.results)
      for (int consumer : problem.values[value].consumers)
        if (movable(consumer))
          group.push_back(consumer);
    return group;
  }
  for (int value : moved.operands) {
    const PlacementValue &operand = problem.values[value];
    if (!operand.isWeight || operand.isArgument() ||
        !movable(operand.producer))
      continue;
    bool onlyReader = llvm::all_of(operand.consumers, [&](int consumer) {
      return consumer == op || !placement[consumer];
    });
    if (onlyReader)
      group.push_back(operand.producer);
  }
  return group;
}

} // namespace

std::optional<std::vector<int>>
search::cheapestMoveOffPeak(const PlacementProblem &problem,
                            Placement &placement, int64_t point,
                            int64_t excess, const Fixing &fixed,
                            int maxCandidates) {
  std::optional<std::vector<int>> best;
  double bestScore = 0;
  auto consider = [&](std::vector<int> group) {
    PlacementProblem::MoveEffect effect =
        problem.moveEffect(placement, group, point);
    int64_t freed = -effect.deltaBytes;
    if (freed <= 0)
      return;
    double delta = std::max(0.0, effect.deltaUs);
    double score = delta / double(std::min(freed, excess));
    if (!best || score < bestScore) {
      best = std::move(group);
      bestScore = score;
    }
  };
  // The most promising by a cheap estimate (time per byte held alone),
  // then exactly.
  std::vector<std::pair<double, GpuHolding>> holders;
  for (const GpuHolding &holding :
       opsHoldingGpuMemory(problem, placement, point, fixed))
    if (placement[holding.op])
      holders.push_back(
          {std::max(0.0, problem.flipDeltaUs(holding.op, placement)) /
               double(std::max<int64_t>(1, holding.soleBytes)),
           holding});
  if (holders.size() > size_t(maxCandidates)) {
    std::nth_element(holders.begin(), holders.begin() + maxCandidates,
                     holders.end(), [](const auto &a, const auto &b) {
                       return a.first < b.first ||
                              (a.first == b.first && a.second.op < b.second.op);
                     });
    holders.resize(maxCandidates);
  }
  llvm::sort(holders, [](const auto &a, const auto &b) {
    return a.second.op < b.second.op;
  });
  for (const auto &[estimate, holding] : holders) {
    consider({holding.op});
    std::vector<int> group = moveGroup(problem, placement, holding.op, fixed);
    if (group.size() > 1)
      consider(std::move(group));
  }
  return best;
}

Placement search::repairPeak(const PlacementProblem &problem,
                             Placement placement, int64_t peakTarget,
                             PlacementCost &cost, const Fixing *fixed) {
  Fixing free(problem.ops.size(), -1);
  const Fixing &locked = fixed ? *fixed : free;
  SearchEffort effort = SearchEffort::forProblem(problem);
  if (effort.repairOneByOne)
    return repairOneByOne(problem, std::move(placement), peakTarget, locked,
                          effort.repairCandidates, cost);
  return repairInRounds(problem, std::move(placement), peakTarget, locked,
                        cost);
}

std::optional<Placement> search::repairToFit(const PlacementProblem &problem,
                                             Placement placement,
                                             int64_t budget,
                                             const Fixing *fixed) {
  int64_t target = budget;
  // Each round lowers the peak target by the layout's overshoot, so it ends
  // when the layout fits or nothing more can leave the GPU.
  for (int round = 0; round < 64 && target >= 0; ++round) {
    PlacementCost cost;
    placement = repairPeak(problem, std::move(placement), target, cost, fixed);
    if (cost.peakGpuBytes > target)
      return std::nullopt;
    int64_t arena = problem.arenaBytes(placement);
    if (arena <= budget)
      return placement;
    target = cost.peakGpuBytes - (arena - budget);
  }
  return std::nullopt;
}

void search::improveLocally(const PlacementProblem &problem,
                            Placement &placement, int64_t budget,
                            int maxChecks) {
  for (int sweep = 0; sweep < 3; ++sweep) {
    // The largest gains first: the budget left goes to what saves most.
    std::vector<std::pair<double, int>> gains;
    for (size_t op = 0; op < problem.ops.size(); ++op) {
      if (problem.ops[op].isFixed())
        continue;
      double delta = problem.flipDeltaUs(op, placement);
      if (delta < -1e-9)
        gains.push_back({delta, static_cast<int>(op)});
    }
    llvm::sort(gains);
    bool improved = false;
    for (auto [delta, op] : gains) {
      // Earlier moves change this one's gain.
      if (problem.flipDeltaUs(op, placement) >= -1e-9)
        continue;
      // Either direction can grow the layout (a reshape moved to the CPU
      // needs a copy of its own; another layout can fragment more).
      if (maxChecks-- <= 0)
        return;
      placement[op] ^= 1;
      if (problem.fitsWithin(placement, budget)) {
        improved = true;
        continue;
      }
      placement[op] ^= 1;
    }
    if (!improved)
      return;
  }
}

namespace {

/// The op to branch on in a node whose minimum cut does not fit: one that
/// keeps the most GPU bytes alive where the peak is; if the peak fits but
/// the layout does not, any free op on the GPU, the largest holder first.
std::optional<int> branchingOp(const PlacementProblem &problem,
                               const Placement &cut, const PlacementCost &cost,
                               const Fixing &fixed) {
  std::vector<GpuHolding> holders =
      opsHoldingGpuMemory(problem, cut, cost.peakPoint, fixed);
  if (holders.empty() && cost.peakGpuBytes <= problem.gpuBudgetBytes) {
    // The layout overshoots: any buffer may be what fragments it.
    std::vector<int64_t> live;
    problem.evaluate(cut, &live);
    for (int64_t point = 0; point < int64_t(live.size()) && holders.empty();
         ++point)
      if (live[point] > 0)
        holders = opsHoldingGpuMemory(problem, cut, point, fixed);
  }
  if (holders.empty())
    return std::nullopt;
  return std::max_element(holders.begin(), holders.end(),
                          [](const GpuHolding &a, const GpuHolding &b) {
                            return a.bytes < b.bytes ||
                                   (a.bytes == b.bytes && a.op > b.op);
                          })
      ->op;
}

} // namespace

BranchAndBoundResult search::branchAndBound(const PlacementProblem &problem,
                                            Incumbent &incumbent,
                                            const std::vector<double> *prices,
                                            int64_t maxNodes) {
  BranchAndBoundResult result;
  // A node's cut graphs are its parent's, solved, with one more op fixed:
  // each max-flow continues from the parent's instead of starting over.
  struct Node {
    Fixing fixed;
    double bound; // the parent's: no completion here is faster
    std::shared_ptr<const CutGraph> plain, priced;
    int fixedOp = -1;
    bool onGpu = false;
  };
  std::vector<Node> stack;
  stack.push_back({Fixing(problem.ops.size(), -1), 0.0,
                   std::make_shared<CutGraph>(problem, nullptr),
                   prices ? std::make_shared<CutGraph>(problem, prices)
                          : nullptr});
  auto prunes = [&](double bound) {
    return incumbent.found() &&
           bound >= incumbent.us() - timeSlack(incumbent.us());
  };
  auto childGraph = [](const std::shared_ptr<const CutGraph> &parent,
                       const Node &node) {
    CutGraph graph = *parent;
    if (node.fixedOp >= 0)
      graph.fix(node.fixedOp, node.onGpu);
    return graph;
  };
  while (!stack.empty()) {
    if (result.nodes >= maxNodes) {
      // Stopped early: what is left unexplored bounds the optimum.
      double least = incumbent.found() ? incumbent.us() : kUnreachable;
      for (const Node &node : stack)
        least = std::min(least, node.bound);
      result.lowerBoundUs = least;
      return result;
    }
    Node node = std::move(stack.back());
    stack.pop_back();
    if (prunes(node.bound))
      continue;
    ++result.nodes;
    CutGraph plain = childGraph(node.plain, node);
    Cut cut = plain.solve();
    ++result.cuts;
    PlacementCost cost = problem.evaluate(cut.placement);
    double bound = std::max(node.bound, cost.totalUs());
    if (prunes(bound))
      continue;
    if (problem.fitsBudget(cut.placement, cost)) {
      // The node's unconstrained optimum fits: it is the node's optimum.
      incumbent.offer(cut.placement, cost);
      continue;
    }
    std::shared_ptr<const CutGraph> pricedSolved;
    if (prices) {
      CutGraph pricedGraph = childGraph(node.priced, node);
      Cut priced = pricedGraph.solve();
      ++result.cuts;
      if (priced.exact)
        bound = std::max(bound, lagrangianBound(problem, priced, *prices));
      incumbent.offer(priced.placement);
      if (prunes(bound))
        continue;
      pricedSolved = std::make_shared<const CutGraph>(std::move(pricedGraph));
    }
    std::optional<int> branch =
        branchingOp(problem, cut.placement, cost, node.fixed);
    if (!branch)
      continue; // what keeps the GPU full is fixed: no completion fits
    auto plainSolved = std::make_shared<const CutGraph>(std::move(plain));
    Node onGpu{node.fixed, bound, plainSolved, pricedSolved, *branch, true};
    onGpu.fixed[*branch] = 1;
    Node onCpu{std::move(node.fixed), bound, plainSolved, pricedSolved,
               *branch, false};
    onCpu.fixed[*branch] = 0;
    stack.push_back(std::move(onGpu));
    stack.push_back(std::move(onCpu)); // explored first
  }
  result.finished = true;
  result.lowerBoundUs = incumbent.found() ? incumbent.us() : kUnreachable;
  return result;
}
