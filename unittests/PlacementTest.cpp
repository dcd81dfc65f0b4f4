//===- PlacementTest.cpp - solvers against brute force --------------------===//
//
// Random small placement problems, solved by enumerating every placement,
// and by the solvers: the min-cut must find the unconstrained optimum,
// `exact` the optimum under the budget, and `auto` must stay within 2% of it.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/MinCut.h"
#include "tandem/Analysis/PlacementProblem.h"
#include "RandomPlacementProblems.h"

#include "PlacementTestUtils.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir::tandem;
using tandem_test::allowed;
using tandem_test::bruteForceOptimum;

namespace {

// Capacities are whole picoseconds: a nanosecond per op and value is ample.
double tolerance(const PlacementProblem &problem) {
  return 1e-3 * (problem.ops.size() + problem.values.size());
}

TEST(MinCutTest, SmallGraphByHand) {
  // s -> a (3), s -> b (2), a -> b (1), a -> t (2), b -> t (3): cut 5.
  MinCutGraph graph(4);
  graph.addEdge(0, 1, 3);
  graph.addEdge(0, 2, 2);
  graph.addEdge(1, 2, 1);
  graph.addEdge(1, 3, 2);
  graph.addEdge(2, 3, 3);
  EXPECT_EQ(graph.solve(0, 3), 5);
  EXPECT_TRUE(graph.onSourceSide(0));
  EXPECT_FALSE(graph.onSourceSide(3));
}

TEST(PlacementTest, MinCutMatchesBruteForceWithoutBudget) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 3 + trial % 10);
    double optimum = bruteForceOptimum(problem);
    Placement placement = solveMinCut(problem);
    ASSERT_TRUE(allowed(problem, placement)) << "trial " << trial;
    EXPECT_NEAR(problem.evaluate(placement).totalUs(), optimum,
                tolerance(problem))
        << "trial " << trial;
  }
}

TEST(PlacementTest, ExactMatchesBruteForceUnderBudgets) {
  std::mt19937 rng(7);
  int binding = 0;
  for (int trial = 0; trial < 200; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 4 + trial % 9);
    problem.gpuBudgetBytes = makeBindingBudget(rng, problem);
    double optimum = bruteForceOptimum(problem);
    llvm::Expected<PlacementResult> exact =
        solvePlacement(problem, PlacementStrategy::Exact);
    if (optimum == kUnreachable) {
      EXPECT_FALSE(bool(exact)) << "trial " << trial;
      llvm::consumeError(exact.takeError());
      continue;
    }
    ASSERT_TRUE(bool(exact)) << llvm::toString(exact.takeError());
    ASSERT_TRUE(allowed(problem, exact->placement));
    EXPECT_LE(exact->cost.peakGpuBytes, problem.gpuBudgetBytes);
    EXPECT_NEAR(exact->cost.totalUs(), optimum, tolerance(problem))
        << "trial " << trial;
    ASSERT_TRUE(exact->optimalUs.has_value());
    binding += problem.evaluate(solveMinCut(problem)).peakGpuBytes >
               problem.gpuBudgetBytes;
  }
  EXPECT_GT(binding, 100) << "too few trials had a binding budget";
}

TEST(PlacementTest, AutoIsFeasibleAndWithinTwoPercentOfExact) {
  std::mt19937 rng(99);
  double worst = 1.0;
  for (int trial = 0; trial < 200; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 6 + trial % 35);
    problem.gpuBudgetBytes = makeBindingBudget(rng, problem);
    llvm::Expected<PlacementResult> exact =
        solvePlacement(problem, PlacementStrategy::Exact);
    llvm::Expected<PlacementResult> automatic =
        solvePlacement(problem, PlacementStrategy::Auto);
    ASSERT_EQ(bool(exact), bool(automatic));
    if (!exact) {
      llvm::consumeError(exact.takeError());
      llvm::consumeError(automatic.takeError());
      continue;
    }
    ASSERT_TRUE(allowed(problem, automatic->placement));
    EXPECT_LE(automatic->cost.peakGpuBytes, problem.gpuBudgetBytes);
    double ratio = automatic->cost.totalUs() / exact->cost.totalUs();
    worst = std::max(worst, ratio);
  }
  EXPECT_LE(worst, 1.02);
  RecordProperty("worst_auto_over_exact", std::to_string(worst));
}

TEST(PlacementTest, AutoIsOptimalWhenTheBudgetDoesNotBind) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 3 + trial % 10);
    llvm::Expected<PlacementResult> automatic =
        solvePlacement(problem, PlacementStrategy::Auto);
    ASSERT_TRUE(bool(automatic));
    EXPECT_NEAR(automatic->cost.totalUs(), bruteForceOptimum(problem),
                tolerance(problem));
  }
}

TEST(PlacementTest, InfeasibleBudgetIsAnError) {
  std::mt19937 rng(11);
  PlacementProblem problem = makeRandomPlacementProblem(rng, 8);
  problem.ops[0].pin = DeviceKind::GPU;
  problem.ops[0].gpuUs = 1;
  problem.ops[0].isWeight = false;
  problem.gpuBudgetBytes = 0;
  for (PlacementStrategy strategy :
       {PlacementStrategy::Auto, PlacementStrategy::Exact}) {
    llvm::Expected<PlacementResult> result = solvePlacement(problem, strategy);
    ASSERT_FALSE(bool(result));
    EXPECT_NE(llvm::toString(result.takeError()).find("the ops pinned to the GPU or able to run only there need"),
              std::string::npos);
  }
}

TEST(PlacementTest, ExactRefusesGraphsBeyondItsLimit) {
  std::mt19937 rng(3);
  PlacementProblem problem = makeRandomPlacementProblem(rng, 40);
  ExactSearchLimits limits;
  limits.maxFreeOps = 10;
  llvm::Expected<PlacementResult> result =
      solvePlacement(problem, PlacementStrategy::Exact, limits);
  ASSERT_FALSE(bool(result));
  EXPECT_NE(llvm::toString(result.takeError()).find("at most 10 ops"),
            std::string::npos);
}

TEST(PlacementTest, EvaluateCountsTransfersOncePerDestination) {
  // x (argument) read by two GPU ops: one copy in; their results returned.
  PlacementProblem problem;
  PlacementValue x;
  x.producer = -1;
  x.bytes = 4000;
  x.h2dUs = 7;
  problem.values.push_back(x);
  for (int i = 0; i < 2; ++i) {
    PlacementOp op;
    op.cpuUs = 10;
    op.gpuUs = 1;
    op.operands = {0};
    op.results = {int(problem.values.size())};
    PlacementValue result;
    result.producer = i;
    result.bytes = 4000;
    result.d2hUs = 3;
    result.isResult = true;
    problem.values.push_back(result);
    problem.ops.push_back(op);
  }
  problem.finalize();
  problem.gpuBudgetBytes = 1 << 20;
  PlacementCost cost = problem.evaluate({1, 1});
  EXPECT_EQ(cost.h2dCount, 1);
  EXPECT_EQ(cost.d2hCount, 2);
  EXPECT_DOUBLE_EQ(cost.totalUs(), 2 * 1 + 7 + 2 * 3);
  // Points: 0 args copied, 1 op0, 2 copies after op0, 3 op1, 4 after op1.
  // Peak at op1's point: x's copy, op0's result is gone, op1's result.
  EXPECT_EQ(cost.peakGpuBytes, 2 * alignBufferSize(4000));
}

TEST(PlacementTest, GpuReshapeSharesItsOperandsBuffer) {
  // op0 makes a (4000 B); op1 reshapes it to b; op2 reads a and b; op3 reads
  // b. On the GPU b is a's buffer, alive until op3: at op2 a/b and c are
  // live, where separate buffers would be three. With the reshape on the
  // CPU, b is a buffer of its own, copied in for op2 and op3.
  PlacementProblem problem;
  auto addOp = [&](std::vector<int> operands, bool reshape) {
    PlacementOp op;
    op.cpuUs = 10;
    op.gpuUs = 1;
    op.operands.assign(operands.begin(), operands.end());
    op.aliasesOperand = reshape;
    op.results = {int(problem.values.size())};
    PlacementValue result;
    result.producer = problem.ops.size();
    result.bytes = 4000;
    result.h2dUs = result.d2hUs = 1;
    problem.values.push_back(result);
    problem.ops.push_back(op);
  };
  addOp({}, false);     // a = value 0
  addOp({0}, true);     // b = reshape a
  addOp({0, 1}, false); // c
  addOp({1}, false);    // d, read by nothing
  problem.finalize();
  problem.gpuBudgetBytes = 1 << 20;
  std::vector<BufferMembers> members;
  std::vector<BufferLifetime> buffers =
      problem.gpuBuffers({1, 1, 1, 1}, &members);
  ASSERT_EQ(buffers.size(), 3u); // a+b, c, d
  EXPECT_EQ(members[0], (BufferMembers{0, 1}));
  EXPECT_EQ(buffers[0].first, 1); // op0's point
  EXPECT_EQ(buffers[0].last, 7);  // op3's point
  EXPECT_EQ(problem.evaluate({1, 1, 1, 1}).peakGpuBytes, 2 * alignBufferSize(4000));
  std::vector<BufferLifetime> split = problem.gpuBuffers({1, 0, 1, 1}, &members);
  EXPECT_EQ(split.size(), 4u);
  EXPECT_EQ(problem.evaluate({1, 0, 1, 1}).peakGpuBytes,
            3 * alignBufferSize(4000));
}

} // namespace

namespace {
TEST(PlacementTest, WithinArenaPlansFitTheBudgetOnceLaidOut) {
  std::mt19937 rng(21);
  int solved = 0;
  for (int trial = 0; trial < 100; ++trial) {
    PlacementProblem problem = makeRandomPlacementProblem(rng, 10 + trial % 30);
    problem.gpuBudgetBytes = makeBindingBudget(rng, problem);
    llvm::Expected<PlacementResult> result =
        solvePlacement(problem, PlacementStrategy::Auto);
    if (!result) {
      llvm::consumeError(result.takeError());
      continue;
    }
    ++solved;
    EXPECT_LE(planMemory(problem.gpuBuffers(result->placement)).arenaBytes,
              problem.gpuBudgetBytes)
        << "trial " << trial;
  }
  EXPECT_GT(solved, 80);
}
} // namespace
