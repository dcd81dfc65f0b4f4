//===- LayoutTest.cpp - the kernels' shared arithmetic, on the host -------===//
//
// Layout.h holds what the CPU and CUDA kernels must agree on; its
// __host__ __device__ helpers are tested here, where there is no GPU, so the
// CUDA backend's launch shapes and edge cases are checked on every machine.
//
//===----------------------------------------------------------------------===//

#include "Layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace tandem::rt;

namespace {

TEST(LayoutTest, LaunchesNeverHaveZeroBlocks) {
  // Zero items (an empty tensor, a softmax over no rows) still launch one
  // block: a zero-block launch fails with "invalid configuration argument".
  EXPECT_EQ(launchBlocks(0), 1);
  EXPECT_EQ(launchBlocks(1), 1);
  EXPECT_EQ(launchBlocks(kThreadsPerBlock), 1);
  EXPECT_EQ(launchBlocks(kThreadsPerBlock + 1), 2);
  EXPECT_EQ(launchBlocks(kThreadsPerBlock * kMaxBlocks), kMaxBlocks);
  EXPECT_EQ(launchBlocks(int64_t(1) << 40), kMaxBlocks);
  EXPECT_EQ(launchBlocks(std::numeric_limits<int64_t>::max()), kMaxBlocks);
}

TEST(LayoutTest, CoalesceMergesWhatEveryOperandWalksAsOne) {
  // Dense operands: one dimension (the CUDA kernels then index without a
  // division per dimension).
  std::vector<int64_t> shape = {2, 3, 4};
  std::vector<std::vector<int64_t>> strides = {{12, 4, 1}, {12, 4, 1}};
  coalesce(shape, strides);
  EXPECT_EQ(shape, (std::vector<int64_t>{24}));
  EXPECT_EQ(strides[1], (std::vector<int64_t>{1}));
  // A row broadcast over the leading dimensions: two.
  shape = {2, 3, 4};
  strides = {{12, 4, 1}, {0, 0, 1}};
  coalesce(shape, strides);
  EXPECT_EQ(shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(strides[0], (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(strides[1], (std::vector<int64_t>{0, 1}));
  // A transpose keeps its dimensions; size-1 dimensions go.
  shape = {3, 1, 2};
  std::vector<int64_t> transposed[1] = {{1, 6, 3}};
  coalesce(shape, transposed);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(transposed[0], (std::vector<int64_t>{1, 3}));
  // A scalar: no dimension at all.
  shape = {1, 1};
  strides = {{0, 0}};
  coalesce(shape, strides);
  EXPECT_TRUE(shape.empty());
}

TEST(LayoutTest, IntegerComparisonsAreExact) {
  // Through float, 16777217 == 16777216 (2^24 + 1 has no float).
  EXPECT_FALSE(comparePredicate<int64_t>(0, 16777217, 16777216));
  EXPECT_TRUE(comparePredicate<int64_t>(4, 16777217, 16777216));
  EXPECT_FALSE(comparePredicate<int32_t>(0, 2147483647, 2147483646));
  EXPECT_TRUE(comparePredicate<float>(0, 16777217.0f, 16777216.0f));
}

TEST(LayoutTest, IntegerSumsWrapAround) {
  EXPECT_EQ(wrapAdd<int64_t>(std::numeric_limits<int64_t>::max(), 1),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(wrapAdd<int32_t>(std::numeric_limits<int32_t>::max(), 1),
            std::numeric_limits<int32_t>::min());
}

} // namespace
