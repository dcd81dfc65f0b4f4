//===- PlacementSearchTest.cpp - the solvers' pieces against the model ----===//
//
// The incremental and relaxed views the solvers work with must agree with
// PlacementProblem::evaluate, the one definition of time and memory: a
// move's effect, the bytes the Lagrangian cut prices (never more than are
// live), the cut's value, and the bound it proves. Then the promises of
// `auto` over budget sweeps: monotone, never behind a baseline that fits,
// laid out within the budget.
//
//===----------------------------------------------------------------------===//

#include "PlacementFrontier.h"
#include "PlacementSearch.h"

#include "RandomPlacementProblems.h"

#include "PlacementTestUtils.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir::tandem;
using namespace mlir::tandem::search;

namespace {

using tandem_test::randomPlacement;

TEST(PlacementSearchTest, MoveEffectMatchesTwoEvaluations) {
  std::mt19937 rng(17);
  int reshapesMoved = 0;
  for (int trial = 0; trial < 400; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 4 + trial % 30);
    Placement placement = randomPlacement(rng, problem);
    std::vector<int> moved;
    for (int k = 0, n = 1 + rng() % 3; k < n; ++k) {
      int op = rng() % problem.ops.size();
      if (!problem.ops[op].isFixed() && !llvm::is_contained(moved, op))
        moved.push_back(op);
    }
    if (moved.empty())
      continue;
    for (int op : moved)
      reshapesMoved += problem.ops[op].aliasesOperand;
    int64_t point = rng() % problem.getNumPoints();
    std::vector<int64_t> before, after;
    PlacementCost costBefore = problem.evaluate(placement, &before);
    PlacementProblem::MoveEffect effect =
        problem.moveEffect(placement, moved, point);
    for (int op : moved)
      placement[op] ^= 1;
    PlacementCost costAfter = problem.evaluate(placement, &after);
    EXPECT_NEAR(effect.deltaUs, costAfter.totalUs() - costBefore.totalUs(),
                1e-6)
        << "trial " << trial;
    EXPECT_EQ(effect.deltaBytes, after[point] - before[point])
        << "trial " << trial;
  }
  EXPECT_GT(reshapesMoved, 20);
}

TEST(PlacementSearchTest, PricedBytesNeverExceedLiveBytes) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 300; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 4 + trial % 40);
    Placement placement = randomPlacement(rng, problem);
    std::vector<int64_t> live;
    problem.evaluate(placement, &live);
    std::vector<int64_t> priced = pricedGpuBytes(problem, placement);
    for (size_t t = 0; t < live.size(); ++t)
      ASSERT_LE(priced[t], live[t]) << "trial " << trial << " point " << t;
  }
}

TEST(PlacementSearchTest, CutValueIsTimePlusPricedMemory) {
  std::mt19937 rng(29);
  for (int trial = 0; trial < 200; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 4 + trial % 30);
    std::vector<double> prices(problem.getNumPoints());
    for (double &price : prices)
      price = (rng() % 3 == 0) ? 0.0 : 1e-5 * (rng() % 100);
    Cut cut = solveCut(problem, &prices);
    ASSERT_TRUE(cut.exact);
    double charged = problem.evaluate(cut.placement).totalUs();
    std::vector<int64_t> priced = pricedGpuBytes(problem, cut.placement);
    for (size_t t = 0; t < priced.size(); ++t)
      charged += prices[t] * double(priced[t]);
    // Whole picoseconds per edge.
    EXPECT_NEAR(cut.valueUs, charged, 1e-3) << "trial " << trial;
  }
}

TEST(PlacementSearchTest, LagrangianBoundNeverExceedsTheOptimum) {
  std::mt19937 rng(31);
  int bounding = 0;
  for (int trial = 0; trial < 150; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 4 + trial % 9);
    problem.gpuBudgetBytes = makeBindingBudget(rng, problem);
    double optimum = tandem_test::bruteForceOptimum(problem);
    if (optimum == kUnreachable)
      continue;
    double unconstrained = problem.evaluate(solveMinCut(problem)).totalUs();
    for (int round = 0; round < 5; ++round) {
      std::vector<double> prices(problem.getNumPoints());
      for (double &price : prices)
        price = 1e-4 * (rng() % 100) * (rng() % 2);
      Cut cut = solveCut(problem, &prices);
      double bound = lagrangianBound(problem, cut, prices);
      EXPECT_LE(bound, optimum + 1e-6) << "trial " << trial;
    }
    llvm::Expected<PlacementResult> automatic =
        solvePlacement(problem, PlacementStrategy::Auto);
    ASSERT_TRUE(bool(automatic)) << llvm::toString(automatic.takeError());
    ASSERT_TRUE(automatic->lowerBoundUs.has_value());
    EXPECT_LE(*automatic->lowerBoundUs, optimum + 1e-6) << "trial " << trial;
    bounding += *automatic->lowerBoundUs > unconstrained + 1e-6;
  }
  // The search's bounds must often be better than the unconstrained optimum.
  EXPECT_GT(bounding, 30);
}

TEST(PlacementSearchTest, FrontierPointsTradeMemoryForTime) {
  std::mt19937 rng(37);
  for (int trial = 0; trial < 60; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 10 + trial % 40);
    Frontier frontier = buildFrontier(problem, solveCut(problem).placement);
    const std::vector<FrontierPoint> &points = frontier.getPoints();
    ASSERT_FALSE(points.empty());
    for (size_t i = 0; i < points.size(); ++i) {
      PlacementCost cost = problem.evaluate(points[i].placement);
      EXPECT_DOUBLE_EQ(points[i].us, cost.totalUs());
      EXPECT_EQ(points[i].arena, std::max(cost.peakGpuBytes,
                                          problem.arenaBytes(points[i].placement)));
      if (i > 0) {
        EXPECT_GT(points[i].arena, points[i - 1].arena);
        EXPECT_LT(points[i].us, points[i - 1].us);
      }
    }
  }
}

// Beyond 40,000 ops the search runs pieces side by side (the frontier's
// level searches in two chains, the makespan candidates' pricing on other
// threads); its answer must not depend on which thread finishes first.
TEST(PlacementSearchTest, LargeGraphSearchIsDeterministic) {
  std::mt19937 rng(43);
  PlacementProblem problem = makeRandomPlacementProblem(rng, 45000);
  ASSERT_GT(SearchEffort::forProblem(problem).levelChains, size_t(1));
  int64_t least = problem.arenaBytes(problem.leastGpuPlacement());
  int64_t free = problem.arenaBytes(solveMinCut(problem));
  problem.gpuBudgetBytes = least + (free - least) / 3;
  std::optional<PlacementResult> first;
  for (int run = 0; run < 3; ++run) {
    llvm::Expected<PlacementResult> result = solvePlacement(
        problem, PlacementStrategy::Auto, {}, PlacementObjective::Makespan);
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    EXPECT_TRUE(problem.fitsBudget(result->placement, result->cost));
    if (!first) {
      first = std::move(*result);
      continue;
    }
    EXPECT_EQ(result->placement, first->placement) << "run " << run;
    EXPECT_EQ(result->makespanUs, first->makespanUs) << "run " << run;
  }
}

TEST(PlacementSearchTest, AutoIsMonotoneAndAheadOfTheBaselines) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 10; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 15 + trial * 5);
    int64_t least = problem.arenaBytes(problem.leastGpuPlacement());
    int64_t free = problem.arenaBytes(solveMinCut(problem));
    double previous = kUnreachable;
    for (int step = 0; step <= 15; ++step) {
      problem.gpuBudgetBytes = least + (free - least) * step / 15;
      llvm::Expected<PlacementResult> automatic =
          solvePlacement(problem, PlacementStrategy::Auto);
      ASSERT_TRUE(bool(automatic))
          << "trial " << trial << ": " << llvm::toString(automatic.takeError());
      double us = automatic->cost.totalUs();
      EXPECT_TRUE(problem.fitsBudget(automatic->placement, automatic->cost));
      EXPECT_LE(us, previous * (1 + 1e-9))
          << "trial " << trial << " step " << step;
      previous = std::min(previous, us);
      for (PlacementStrategy baseline :
           {PlacementStrategy::AllCpu, PlacementStrategy::Greedy,
            PlacementStrategy::AllGpu, PlacementStrategy::MinCut}) {
        llvm::Expected<PlacementResult> other =
            solvePlacement(problem, baseline);
        if (!other) {
          llvm::consumeError(other.takeError());
          continue;
        }
        if (problem.fitsBudget(other->placement, other->cost)) {
          EXPECT_LE(us, other->cost.totalUs() * (1 + 1e-9))
              << stringifyPlacementStrategy(baseline).str() << ", trial "
              << trial << " step " << step;
        }
      }
    }
  }
}

} // namespace
