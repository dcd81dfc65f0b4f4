//===- LayoutTest.cpp - the kernels' shared arithmetic, on the host -------===//
//
// Layout.h holds what the CPU and CUDA kernels must agree on; its
// __host__ __device__ helpers are tested here, where there is no GPU, so the
// CUDA backend's launch shapes and edge cases are checked on every machine.
//
//===----------------------------------------------------------------------===//

#include "Layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

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

//===----------------------------------------------------------------------===//
// The tiled strided copy (CUDA's transpose), its kernel's loops run here
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

/// A transpose's result shape and source strides, as the CUDA runStrided
/// builds them.
void transposeLayout(const Shape &in, const Shape &perm, Shape &out,
                     Shape &strides) {
  Shape inStrides = rowMajorStrides(in);
  out.clear();
  strides.clear();
  for (int64_t p : perm) {
    out.push_back(in[p]);
    strides.push_back(inStrides[p]);
  }
}

/// out[i] = src[base + Σ index·stride] over `dims`, one element at a time:
/// what the plain strided copy computes.
Shape plainCopy(const Shape &dims, const Shape &strides, int64_t base,
                const Shape &src) {
  Shape out;
  Shape index(dims.size(), 0);
  int64_t n = countOf(dims);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = base;
    for (size_t d = 0; d < dims.size(); ++d)
      offset += index[d] * strides[d];
    out.push_back(src.at(size_t(offset)));
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// The tiledCopy kernel's loops (DataMovement.cu) on the host, for a grid
/// of gridX x gridY blocks of kTile x kTileRows threads, with the same
/// helpers: its result, and in `writes` how often each output element was
/// written. A tile slot read before it was filled, or a write outside the
/// output, fails the test.
Shape runTiled(const TiledCopy &plan, int64_t base, const Shape &src,
               int64_t n, int64_t gridX, int64_t gridY,
               std::vector<int> &writes) {
  constexpr int64_t kUnfilled = -1;
  Shape out(size_t(n), kUnfilled);
  writes.assign(size_t(n), 0);
  int64_t tile[kTile][kTile + 1];
  int64_t unfilledReads = 0, writesOutside = 0;
  for (int64_t by = 0; by < gridY; ++by)
    for (int64_t bx = 0; bx < gridX; ++bx)
      for (int64_t b = by; b < plan.batch; b += gridY) {
        int64_t srcBatch, outBatch;
        tiledBatchOffsets(plan, b, srcBatch, outBatch);
        for (int64_t t = bx; t < plan.tiles; t += gridX) {
          int64_t row0, col0;
          tileOrigin(plan, t, row0, col0);
          for (auto &line : tile)
            for (int64_t &slot : line)
              slot = kUnfilled;
          for (int ty = 0; ty < kTileRows; ++ty)
            for (int tx = 0; tx < kTile; ++tx)
              for (int j = 0; j < kTile; j += kTileRows) {
                int r, c;
                tiledReadAt(tx, ty, j, r, c);
                if (row0 + r < plan.rows && col0 + c < plan.cols)
                  tile[c][r] = src.at(size_t(
                      base + srcBatch +
                      tiledSrcOffset(plan, row0 + r, col0 + c)));
              }
          // (__syncthreads)
          for (int ty = 0; ty < kTileRows; ++ty)
            for (int tx = 0; tx < kTile; ++tx)
              for (int j = 0; j < kTile; j += kTileRows) {
                int r, c;
                tiledWriteAt(tx, ty, j, r, c);
                if (row0 + r >= plan.rows || col0 + c >= plan.cols)
                  continue;
                unfilledReads += tile[c][r] == kUnfilled;
                int64_t at = outBatch + tiledOutOffset(plan, row0 + r, col0 + c);
                if (at < 0 || at >= n) {
                  ++writesOutside;
                  continue;
                }
                out[size_t(at)] = tile[c][r];
                ++writes[size_t(at)];
              }
        }
      }
  EXPECT_EQ(unfilledReads, 0);
  EXPECT_EQ(writesOutside, 0);
  return out;
}

/// Checks that the tiled copy over the coalesced layout of (dims, strides)
/// writes every output element exactly once, with the source element the
/// plain strided copy over the uncoalesced layout reads, for the grid the
/// launch uses and for grids smaller than the work (its loops).
void expectTiledCopyMatches(const Shape &dims, const Shape &strides,
                            int64_t base, const std::string &what) {
  SCOPED_TRACE(what);
  // A source whose elements are their offsets, long enough for every read.
  int64_t extent = base + 1;
  for (size_t d = 0; d < dims.size(); ++d)
    extent += (dims[d] - 1) * strides[d];
  Shape src(static_cast<size_t>(extent));
  std::iota(src.begin(), src.end(), int64_t(0));
  Shape expected = plainCopy(dims, strides, base, src);

  // As CUDA's layoutOf: coalesced, then planned.
  Shape shape = dims;
  Shape coalesced[1] = {strides};
  coalesce(shape, coalesced);
  TiledCopy plan;
  ASSERT_TRUE(planTiledCopy(int(shape.size()), shape.data(),
                            coalesced[0].data(), plan));
  int64_t n = countOf(dims);
  int64_t gridX, gridY;
  tiledGrid(plan, gridX, gridY);
  EXPECT_EQ(gridX, std::min(plan.tiles, kMaxGridX));
  EXPECT_EQ(gridY, std::min(plan.batch, kMaxGridY));
  const int64_t grids[][2] = {{gridX, gridY}, {1, 1}, {3, 2}};
  for (const auto &grid : grids) {
    SCOPED_TRACE("grid " + std::to_string(grid[0]) + " x " +
                 std::to_string(grid[1]));
    std::vector<int> writes;
    Shape out = runTiled(plan, base, src, n, grid[0], grid[1], writes);
    EXPECT_EQ(std::count(writes.begin(), writes.end(), 1), n)
        << "an output element written other than once";
    EXPECT_EQ(out, expected);
  }
}

void expectTiledTranspose(const Shape &in, const Shape &perm) {
  Shape out, strides;
  transposeLayout(in, perm, out, strides);
  std::string what = "transpose of [";
  for (int64_t d : in)
    what += std::to_string(d) + " ";
  what += "] by (";
  for (int64_t p : perm)
    what += std::to_string(p) + " ";
  expectTiledCopyMatches(out, strides, 0, what + ")");
}

TEST(LayoutTest, TiledCopyPicksTheTilePair) {
  // NCHW -> NHWC of (5, 40, 9, 33): the output (5, 9, 33, 40) coalesces to
  // (5, 297, 40); rows are H·W (the source's contiguous run), columns C.
  Shape out, strides;
  transposeLayout({5, 40, 9, 33}, {0, 2, 3, 1}, out, strides);
  Shape coalesced[1] = {strides};
  coalesce(out, coalesced);
  ASSERT_EQ(out, (Shape{5, 297, 40}));
  TiledCopy plan;
  ASSERT_TRUE(planTiledCopy(3, out.data(), coalesced[0].data(), plan));
  EXPECT_EQ(plan.rows, 297);
  EXPECT_EQ(plan.cols, 40);
  EXPECT_EQ(plan.srcRowStride, 1);
  EXPECT_EQ(plan.srcColStride, 297);
  EXPECT_EQ(plan.outRowStride, 40);
  EXPECT_EQ(plan.rowTiles, 10);
  EXPECT_EQ(plan.colTiles, 2);
  EXPECT_EQ(plan.tiles, 20);
  ASSERT_EQ(plan.batchRank, 1);
  EXPECT_EQ(plan.batch, 5);
  EXPECT_EQ(plan.batchDims[0], 5);
  EXPECT_EQ(plan.batchSrc[0], 40 * 297);
  EXPECT_EQ(plan.batchOut[0], 297 * 40);

  // A batch dimension between the pair: (35, 3, 41) by (2, 1, 0).
  transposeLayout({35, 3, 41}, {2, 1, 0}, out, strides);
  ASSERT_TRUE(planTiledCopy(3, out.data(), strides.data(), plan));
  EXPECT_EQ(plan.rows, 41);
  EXPECT_EQ(plan.cols, 35);
  EXPECT_EQ(plan.srcColStride, 123);
  EXPECT_EQ(plan.outRowStride, 105);
  ASSERT_EQ(plan.batchRank, 1);
  EXPECT_EQ(plan.batchSrc[0], 41);
  EXPECT_EQ(plan.batchOut[0], 35);
}

TEST(LayoutTest, TiledCopyOnlyWhereTheContiguousDimensionMoves) {
  auto tiled = [](const Shape &dims, const Shape &strides) {
    Shape shape = dims;
    Shape coalesced[1] = {strides};
    coalesce(shape, coalesced);
    TiledCopy plan;
    return planTiledCopy(int(shape.size()), shape.data(), coalesced[0].data(),
                         plan);
  };
  auto transposed = [&](const Shape &in, const Shape &perm) {
    Shape out, strides;
    transposeLayout(in, perm, out, strides);
    return tiled(out, strides);
  };
  EXPECT_TRUE(transposed({64, 48}, {1, 0}));
  EXPECT_TRUE(transposed({9, 8}, {1, 0})); // both sides kMinTiledSide or more
  // The innermost dimension stays innermost: the plain copy is coalesced.
  EXPECT_FALSE(transposed({40, 50, 60}, {1, 0, 2}));
  EXPECT_FALSE(transposed({40, 50}, {0, 1})); // one dense dimension
  // A side below kMinTiledSide (NCHW <-> NHWC with 3 channels).
  EXPECT_FALSE(transposed({2, 3, 224, 224}, {0, 2, 3, 1}));
  EXPECT_FALSE(transposed({2, 224, 224, 3}, {0, 3, 1, 2}));
  EXPECT_FALSE(transposed({7, 100}, {1, 0}));
  // Broadcasts along the last dimension, slices with a step (no dimension
  // of stride 1), a rank-1 copy, an empty result.
  EXPECT_FALSE(tiled({40, 50}, {1, 0}));
  EXPECT_FALSE(tiled({40, 50}, {2, 100}));
  EXPECT_FALSE(tiled({400}, {3}));
  EXPECT_FALSE(tiled({0, 40, 50}, {2000, 1, 40}));
  EXPECT_FALSE(tiled({40, 0, 50}, {1, 2000, 40}));
}

TEST(LayoutTest, TiledTransposeVisitsEveryElementOnce) {
  expectTiledTranspose({64, 48}, {1, 0});   // whole tiles
  expectTiledTranspose({33, 65}, {1, 0});   // ragged both ways
  expectTiledTranspose({9, 8}, {1, 0});     // under one tile
  expectTiledTranspose({3, 37, 70}, {0, 2, 1});
  expectTiledTranspose({5, 40, 9, 33}, {0, 2, 3, 1}); // NCHW -> NHWC
  expectTiledTranspose({5, 9, 33, 40}, {0, 3, 1, 2}); // NHWC -> NCHW
  expectTiledTranspose({35, 3, 41}, {2, 1, 0});       // batch between the pair
  expectTiledTranspose({2, 33, 3, 17, 40}, {4, 2, 0, 3, 1});
  expectTiledTranspose({8, 70, 1, 12}, {3, 2, 1, 0}); // a size-1 dimension
  expectTiledTranspose({40, 3, 2, 3, 2, 3, 2, 10}, {7, 6, 5, 4, 3, 2, 1, 0});
}

TEST(LayoutTest, TiledCopyFollowsAnyStridesAndBase) {
  // Columns of a pitched source (rows of 100, 50 of them used), from an
  // offset; a batch that is a broadcast (stride 0); a row stride that is
  // not 1 is still copied right, however slowly.
  expectTiledCopyMatches({40, 50}, {1, 100}, 7, "pitched columns");
  expectTiledCopyMatches({20, 6, 45}, {1, 0, 64}, 3, "broadcast batch");
  expectTiledCopyMatches({6, 20, 45}, {0, 1, 64}, 0, "broadcast outer");
}

TEST(LayoutTest, TiledGridIsNeverZeroAndWithinLimits) {
  TiledCopy plan;
  int64_t x, y;
  plan.tiles = 0;
  plan.batch = 0;
  tiledGrid(plan, x, y);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 1);
  plan.tiles = int64_t(1) << 40;
  plan.batch = 100000;
  tiledGrid(plan, x, y);
  EXPECT_EQ(x, kMaxGridX);
  EXPECT_EQ(y, kMaxGridY);
  // More batch indices than grid rows: the blocks loop over them (as the
  // small grids of TiledTransposeVisitsEveryElementOnce do).
  Shape out, strides;
  transposeLayout({70000, 8, 8}, {0, 2, 1}, out, strides);
  ASSERT_TRUE(planTiledCopy(3, out.data(), strides.data(), plan));
  tiledGrid(plan, x, y);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, kMaxGridY);
}

} // namespace
