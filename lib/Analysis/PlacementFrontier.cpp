//===- PlacementFrontier.cpp - placements that do not depend on the budget ===//
//
// Nothing here reads the problem's budget: the same problem gives the same
// frontier whatever the budget, which is what makes `auto` monotone in it.
//
//===----------------------------------------------------------------------===//

#include "PlacementFrontier.h"

#include "PlacementSearch.h"

#include "llvm/Support/Parallel.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::search;

std::vector<Placement> search::greedyPrefixes(const PlacementProblem &problem,
                                              int samples) {
  int weights = 0;
  for (const PlacementOp &op : problem.ops)
    weights += op.isWeight && !op.isFixed();
  int stride = std::max(1, weights / samples);
  std::vector<Placement> prefixes;
  Placement placement = problem.leastGpuPlacement();
  int seen = 0;
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    if (op.isFixed())
      continue;
    if (op.isWeight && seen++ % stride == 0)
      prefixes.push_back(placement);
    placement[index] = 1;
  }
  prefixes.push_back(placement);
  return prefixes;
}

bool Frontier::add(const PlacementProblem &problem,
                   const Placement &placement) {
  return add(problem, placement, problem.evaluate(placement));
}

bool Frontier::add(const PlacementProblem &problem, const Placement &placement,
                   const PlacementCost &cost) {
  double us = cost.totalUs();
  // A faster point with no larger peak beats it before any layout.
  for (const FrontierPoint &point : points)
    if (point.arena <= cost.peakGpuBytes && point.us <= us)
      return false;
  int64_t arena = std::max(cost.peakGpuBytes, problem.arenaBytes(placement));
  for (const FrontierPoint &point : points)
    if (point.arena <= arena && point.us <= us)
      return false;
  llvm::erase_if(points, [&](const FrontierPoint &point) {
    return arena <= point.arena && us <= point.us;
  });
  auto at = llvm::lower_bound(points, arena,
                              [](const FrontierPoint &point, int64_t bytes) {
                                return point.arena < bytes;
                              });
  points.insert(at, {placement, us, arena});
  return true;
}

const FrontierPoint *Frontier::bestWithin(int64_t budget) const {
  // Sorted by arena with times falling: the last that fits is the fastest.
  const FrontierPoint *best = nullptr;
  for (const FrontierPoint &point : points) {
    if (point.arena > budget)
      break;
    best = &point;
  }
  return best;
}

namespace {

/// Minimum cuts under prices alpha * direction on GPU memory, for alpha on
/// a grid from where memory is nearly free to where the cut keeps no more
/// on the GPU than it must; the grid is refined where one step changes the
/// arena by much. Each cut trades time for memory over the whole graph.
void addPricedCuts(const PlacementProblem &problem,
                   const std::vector<double> &direction, int64_t leastArena,
                   int64_t freePeak, double gridRatio, int refinements,
                   Frontier &frontier, std::vector<Placement> &cuts) {
  auto cutAt = [&](double alpha) {
    std::vector<double> prices(direction.size());
    for (size_t t = 0; t < direction.size(); ++t)
      prices[t] = alpha * direction[t];
    return solveCut(problem, &prices).placement;
  };
  struct Sample {
    double alpha;
    int64_t peak;
  };
  std::vector<Sample> samples;
  auto sample = [&](double alpha) {
    Placement placement = cutAt(alpha);
    PlacementCost cost = problem.evaluate(placement);
    frontier.add(problem, placement, cost);
    Sample result{alpha, cost.peakGpuBytes};
    cuts.push_back(std::move(placement));
    return result;
  };
  // From alpha = 1 (memory priced about like time) down until the cut is
  // the unconstrained one, and up until it is as lean as the pins allow or
  // stops changing.
  int64_t leastPeak = std::min(leastArena, freePeak);
  samples.push_back(sample(1.0));
  for (int step = 0; step < 8 && samples.front().peak < freePeak; ++step)
    samples.insert(samples.begin(), sample(samples.front().alpha / gridRatio));
  int unchanged = 0;
  for (int step = 0; step < 16 && samples.back().peak > leastPeak; ++step) {
    samples.push_back(sample(samples.back().alpha * gridRatio));
    unchanged = samples.back().peak == samples[samples.size() - 2].peak
                    ? unchanged + 1
                    : 0;
    if (unchanged >= 3)
      break;
  }
  // Bisect steps that move the peak by more than a twentieth of the range.
  int64_t range = std::max<int64_t>(1, freePeak - leastArena);
  for (int depth = 0; depth < refinements; ++depth) {
    std::vector<Sample> refined;
    for (size_t i = 0; i < samples.size(); ++i) {
      refined.push_back(samples[i]);
      if (i + 1 < samples.size() &&
          std::llabs(samples[i].peak - samples[i + 1].peak) * 20 > range)
        refined.push_back(
            sample(std::sqrt(samples[i].alpha * samples[i + 1].alpha)));
    }
    if (refined.size() == samples.size())
      break;
    samples = std::move(refined);
  }
}

/// The best placement it can find within `level` bytes, budget-style:
/// repaired to fit from the placements just above the level (the previous
/// level's answer, the frontier point just above, the priced cut just
/// above), then improved by single moves within the level.
class LevelSearch {
public:
  LevelSearch(const PlacementProblem &problem, const SearchEffort &effort,
              Frontier &frontier, std::vector<Placement> cuts)
      : problem(problem), effort(effort), frontier(frontier),
        cuts(std::move(cuts)) {
    for (const Placement &cut : this->cuts)
      cutPeaks.push_back(problem.evaluate(cut).peakGpuBytes);
  }

  /// The best placement found within `level`, with its cost.
  struct Found {
    Placement placement;
    PlacementCost cost;
  };
  std::optional<Found> find(int64_t level, const Placement *previous) const {
    std::vector<const Placement *> seeds;
    if (previous)
      seeds.push_back(previous);
    for (const FrontierPoint &point : frontier.getPoints())
      if (point.arena > level) {
        seeds.push_back(&point.placement);
        break;
      }
    // The leanest priced cut above the level.
    const Placement *cut = nullptr;
    int64_t cutPeak = std::numeric_limits<int64_t>::max();
    for (auto [placement, peak] : llvm::zip(cuts, cutPeaks))
      if (peak > level && peak < cutPeak) {
        cut = &placement;
        cutPeak = peak;
      }
    if (cut)
      seeds.push_back(cut);
    if (seeds.size() > size_t(effort.seedsPerLevel))
      seeds.resize(effort.seedsPerLevel);
    std::optional<Found> best;
    for (const Placement *seed : seeds) {
      std::optional<Placement> repaired = repairToFit(problem, *seed, level);
      if (!repaired)
        continue;
      improveLocally(problem, *repaired, level, effort.localChecks);
      PlacementCost cost = problem.evaluate(*repaired);
      if (!best || cost.totalUs() < best->cost.totalUs())
        best = Found{std::move(*repaired), cost};
    }
    return best;
  }

  void search(int64_t level, const Placement *previous) {
    if (std::optional<Found> found = find(level, previous))
      add(std::move(*found));
  }

  /// Searches `levels` (from the top down) in `chains` chains side by side:
  /// chain c takes every chains-th level from the c-th, each started from
  /// its chain's previous answer (the first from the frontier point above
  /// it). The answers join the frontier afterwards, from the top down, so
  /// the result does not depend on which chain finishes first.
  void searchInChains(const std::vector<int64_t> &levels, size_t chains) {
    std::vector<std::optional<Found>> found(levels.size());
    llvm::parallelFor(0, chains, [&](size_t chain) {
      const Placement *previous = nullptr;
      for (size_t k = chain; k < levels.size(); k += chains) {
        found[k] = find(levels[k], previous);
        if (found[k])
          previous = &found[k]->placement;
      }
    });
    for (std::optional<Found> &answer : found)
      if (answer)
        add(std::move(*answer));
  }

  const Placement *lastFound() const { return last.empty() ? nullptr : &last; }

private:
  void add(Found found) {
    frontier.add(problem, found.placement, found.cost);
    last = std::move(found.placement);
  }

  const PlacementProblem &problem;
  const SearchEffort &effort;
  Frontier &frontier;
  std::vector<Placement> cuts;
  std::vector<int64_t> cutPeaks;
  Placement last;
};

} // namespace

Frontier search::buildFrontier(const PlacementProblem &problem,
                               const Placement &unconstrained) {
  SearchEffort effort = SearchEffort::forProblem(problem);
  Frontier frontier;
  Placement least = problem.leastGpuPlacement();
  const Placement &free = unconstrained;
  frontier.add(problem, least);
  frontier.add(problem, free);
  frontier.add(problem, problem.mostGpuPlacement());
  for (const Placement &prefix : greedyPrefixes(problem, effort.greedyPrefixes))
    frontier.add(problem, prefix);

  std::vector<int64_t> live;
  PlacementCost freeCost = problem.evaluate(free, &live);
  if (freeCost.peakGpuBytes == 0)
    return frontier;
  int64_t leastArena = problem.arenaBytes(least);
  // Prices per byte and point, scaled so that alpha = 1 charges the
  // unconstrained optimum's memory about its time: uniform, and heavier
  // where the unconstrained optimum is crowded.
  double scale = std::max(freeCost.totalUs(), 1.0) /
                 (double(freeCost.peakGpuBytes) * double(live.size()));
  std::vector<double> uniform(live.size(), scale), crowded(live.size());
  for (size_t t = 0; t < live.size(); ++t)
    crowded[t] = scale * double(live[t]) / double(freeCost.peakGpuBytes);
  std::vector<Placement> cuts;
  if (effort.cutDirections > 0)
    addPricedCuts(problem, crowded, leastArena, freeCost.peakGpuBytes,
                  effort.cutGridRatio, effort.cutRefinements, frontier, cuts);
  if (effort.cutDirections > 1)
    addPricedCuts(problem, uniform, leastArena, freeCost.peakGpuBytes,
                  effort.cutGridRatio, effort.cutRefinements, frontier, cuts);

  // Budget-style searches at levels spread evenly from the unconstrained
  // peak down to the leanest, then between frontier points where one more
  // step of memory buys much time.
  int64_t leastPeak = problem.evaluate(least).peakGpuBytes;
  int64_t top = freeCost.peakGpuBytes;
  LevelSearch levels(problem, effort, frontier, std::move(cuts));
  std::vector<int64_t> spread;
  for (int level = effort.levels - 1; level >= 1; --level)
    spread.push_back(leastPeak + (top - leastPeak) * level / effort.levels);
  if (effort.levelChains > 1)
    levels.searchInChains(spread, effort.levelChains);
  else
    for (int64_t level : spread)
      levels.search(level, levels.lastFound());
  for (int round = 0; round < effort.refinementRounds; ++round) {
    std::vector<int64_t> gaps;
    const std::vector<FrontierPoint> &points = frontier.getPoints();
    for (size_t i = 0; i + 1 < points.size(); ++i)
      if (points[i].us > points[i + 1].us * 1.02 &&
          points[i + 1].arena - points[i].arena > 2 * kBufferAlignment)
        gaps.push_back((points[i].arena + points[i + 1].arena) / 2);
    for (int64_t level : gaps)
      levels.search(level, nullptr);
  }
  return frontier;
}
