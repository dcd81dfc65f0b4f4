//===- MemoryPlannerTest.cpp - offsets never collide ----------------------===//

#include "tandem/Analysis/MemoryPlanner.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir::tandem;

namespace {

std::vector<BufferLifetime> randomBuffers(std::mt19937 &rng, int count,
                                          int numPoints) {
  std::vector<BufferLifetime> buffers;
  for (int i = 0; i < count; ++i) {
    BufferLifetime buffer;
    buffer.first = rng() % numPoints;
    buffer.last = std::min<int64_t>(numPoints - 1,
                                    buffer.first + rng() % (numPoints / 4 + 1));
    buffer.bytes = 1 + rng() % (1 << 16);
    buffers.push_back(buffer);
  }
  return buffers;
}

void expectValidPlan(const std::vector<BufferLifetime> &buffers,
                     const MemoryPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  for (size_t a = 0; a < buffers.size(); ++a) {
    EXPECT_EQ(plan.offsets[a] % kBufferAlignment, 0);
    EXPECT_LE(plan.offsets[a] + buffers[a].bytes, plan.arenaBytes);
    for (size_t b = a + 1; b < buffers.size(); ++b) {
      bool liveTogether = buffers[a].first <= buffers[b].last &&
                          buffers[b].first <= buffers[a].last;
      bool overlap = plan.offsets[a] < plan.offsets[b] + buffers[b].bytes &&
                     plan.offsets[b] < plan.offsets[a] + buffers[a].bytes;
      ASSERT_FALSE(liveTogether && overlap)
          << "buffers " << a << " and " << b << " collide";
    }
  }
  EXPECT_GE(plan.arenaBytes, peakLiveBytes(buffers));
}

TEST(MemoryPlannerTest, GreedyBySizeNeverOverlapsLiveBuffers) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLifetime> buffers = randomBuffers(rng, 200, 100);
    expectValidPlan(buffers, planMemory(buffers));
  }
}

TEST(MemoryPlannerTest, BestFitNeverOverlapsLiveBuffers) {
  // Past 4096 buffers the planner switches to best fit in program order.
  std::mt19937 rng(2);
  std::vector<BufferLifetime> buffers = randomBuffers(rng, 5000, 3000);
  MemoryPlan plan = planMemory(buffers);
  expectValidPlan(buffers, plan);
  // And stays within a small factor of the lower bound.
  EXPECT_LE(plan.arenaBytes, 2 * peakLiveBytes(buffers));
}

TEST(MemoryPlannerTest, BestFitDependsOnTheOrderOfPointsAlone) {
  // Dense points are ordered by a counting sort, sparse ones by comparison:
  // spreading the same points apart must not change the plan.
  std::mt19937 rng(3);
  std::vector<BufferLifetime> dense = randomBuffers(rng, 6000, 4000);
  std::vector<BufferLifetime> sparse = dense;
  for (BufferLifetime &buffer : sparse) {
    buffer.first = buffer.first * 100003 + 7;
    buffer.last = buffer.last * 100003 + 7;
  }
  MemoryPlan densePlan = planMemory(dense), sparsePlan = planMemory(sparse);
  expectValidPlan(dense, densePlan);
  EXPECT_EQ(densePlan.offsets, sparsePlan.offsets);
  EXPECT_EQ(densePlan.arenaBytes, sparsePlan.arenaBytes);
}

TEST(MemoryPlannerTest, BestFitPlacesBuffersOfNoBytes) {
  // Zero-size tensors are legal: among thousands of buffers (best fit), one
  // of no bytes sharing an offset with a live buffer must not corrupt the
  // free blocks.
  std::mt19937 rng(4);
  std::vector<BufferLifetime> buffers = randomBuffers(rng, 5000, 3000);
  for (size_t i = 0; i < buffers.size(); i += 7)
    buffers[i].bytes = 0;
  buffers.push_back({0, 0, 0});
  buffers.push_back({64, 0, 1});
  buffers.push_back({64, 2, 3});
  buffers.push_back({64, 3, 3});
  expectValidPlan(buffers, planMemory(buffers));
}

TEST(MemoryPlannerTest, ReusesMemoryOfDeadBuffers) {
  // A chain: each buffer dies as the next is written.
  std::vector<BufferLifetime> buffers;
  for (int i = 0; i < 10; ++i)
    buffers.push_back({1000, i, i + 1});
  MemoryPlan plan = planMemory(buffers);
  expectValidPlan(buffers, plan);
  EXPECT_EQ(plan.arenaBytes, 2 * alignBufferSize(1000));
}

TEST(MemoryPlannerTest, PeakLiveBytes) {
  EXPECT_EQ(peakLiveBytes({{64, 0, 2}, {128, 1, 3}, {64, 3, 4}}), 192);
  EXPECT_EQ(peakLiveBytes({}), 0);
}

TEST(MemoryPlannerTest, LivePeakIsAtTheFirstFullestPoint) {
  // 192 bytes are live at points 1, 2 and 3; the peak is reported at 1.
  LivePeak peak = findLivePeak({{64, 0, 2}, {128, 1, 3}, {64, 3, 4}});
  EXPECT_EQ(peak.bytes, 192);
  EXPECT_EQ(peak.point, 1);
  // A later, larger buffer moves it.
  peak = findLivePeak({{64, 0, 0}, {128, 2, 2}});
  EXPECT_EQ(peak.bytes, 128);
  EXPECT_EQ(peak.point, 2);
}

TEST(MemoryPlannerTest, LivePeakMatchesAPointByPointCount) {
  // Dense program points (summed per point) and sparse ones (sorted
  // events) against counting every point.
  std::mt19937 rng(7);
  for (int spread : {1, 1000}) {
    for (int round = 0; round < 50; ++round) {
      std::vector<BufferLifetime> buffers = randomBuffers(rng, 1 + round, 40);
      for (BufferLifetime &buffer : buffers) {
        buffer.first *= spread;
        buffer.last *= spread;
      }
      LivePeak expected;
      for (int64_t point = 0; point < 40 * spread; ++point) {
        int64_t live = 0;
        for (const BufferLifetime &buffer : buffers)
          if (buffer.first <= point && point <= buffer.last)
            live += alignBufferSize(buffer.bytes);
        if (live > expected.bytes)
          expected = {live, point};
      }
      LivePeak peak = findLivePeak(buffers);
      EXPECT_EQ(peak.bytes, expected.bytes) << "spread " << spread;
      EXPECT_EQ(peak.point, expected.point) << "spread " << spread;
    }
  }
}

} // namespace
