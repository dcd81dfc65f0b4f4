//===- ThreadPoolTest.cpp - the worker pool and the split GEMM ------------===//
//
// Every index of a parallel loop runs exactly once, in one loop or in many
// short ones; a caller asleep on a long chunk wakes; a loop inside a task runs
// inline; an exception in a chunk reaches the caller and leaves the pool
// whole; parallelSgemm's blocks give naive products (with a bias, too) and
// hand each element to blockDone exactly once, split by rows or by columns.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"
#include "cpu/CpuSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace tandem::rt;

namespace {

TEST(ThreadPoolTest, EveryIndexRunsOnce) {
  for (int64_t count : {1, 2, 7, 100, 4097, 100003}) {
    std::vector<std::atomic<int>> hits(count);
    parallelFor(count, 1000, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        hits[i]++;
    });
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "count " << count << " index " << i;
  }
}

// Loops one after another, as a model's ops run: the workers see each new
// loop while they spin, and claim its chunks as the caller does.
TEST(ThreadPoolTest, ManyShortLoopsEachRunEveryIndexOnce) {
  std::vector<std::atomic<int>> hits(64);
  for (int loop = 0; loop < 20000; ++loop)
    parallelFor(64, 1 << 12, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        hits[i]++;
    });
  for (int64_t i = 0; i < 64; ++i)
    ASSERT_EQ(hits[i].load(), 20000) << "index " << i;
}

// A chunk longer than the caller spins: the caller, done with its own
// chunk, sleeps, and the worker that ends the loop must wake it (a missed
// wake-up hangs the test). Chunk 0 (the caller's) waits until chunk 1 has
// started, so that a worker runs chunk 1.
TEST(ThreadPoolTest, ACallerThatSleepsIsWokenByTheLastChunk) {
  if (poolThreads() < 2)
    GTEST_SKIP() << "one thread: every loop runs inline";
  for (int loop = 0; loop < 20; ++loop) {
    std::atomic<bool> secondStarted{false};
    std::atomic<int64_t> covered{0};
    parallelFor(2, 1 << 20, [&](int64_t begin, int64_t end) {
      if (begin == 1) {
        secondStarted = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      } else {
        auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!secondStarted && std::chrono::steady_clock::now() < deadline)
          std::this_thread::yield();
      }
      covered += end - begin;
    });
    ASSERT_TRUE(secondStarted.load());
    ASSERT_EQ(covered.load(), 2);
  }
}

TEST(ThreadPoolTest, LoopsInsideATaskRunInline) {
  std::atomic<int64_t> inner{0}, threadsInside{0};
  parallelFor(8, 1 << 20, [&](int64_t begin, int64_t end) {
    threadsInside = poolThreads();
    for (int64_t i = begin; i < end; ++i)
      parallelFor(1000, 1 << 20, [&](int64_t b, int64_t e) { inner += e - b; });
  });
  EXPECT_EQ(inner.load(), 8 * 1000);
  EXPECT_EQ(threadsInside.load(), 1);
}

TEST(ThreadPoolTest, AnExceptionReachesTheCallerAndThePoolGoesOn) {
  // The chunk holding index 8 throws, split or not (on one core the loop
  // runs inline as one chunk).
  EXPECT_THROW(parallelFor(64, 1 << 20,
                           [&](int64_t begin, int64_t end) {
                             if (begin <= 8 && 8 < end)
                               throw std::runtime_error("chunk failed");
                           }),
               std::runtime_error);
  // Not left "inside a task": loops split again, and all of them run.
  EXPECT_GE(poolThreads(), 1);
  std::atomic<int64_t> covered{0};
  parallelFor(1000, 1 << 20,
              [&](int64_t begin, int64_t end) { covered += end - begin; });
  EXPECT_EQ(covered.load(), 1000);
}

void checkSgemm(int64_t m, int64_t n, int64_t k, bool transB,
                bool bias = false) {
  std::vector<float> a(m * k), b(k * n), c(m * n, -1.0f), initial(n);
  for (int64_t j = 0; j < n; ++j)
    initial[j] = float(j % 9) - 4;
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(int64_t(i * 7 % 13) - 6);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int64_t(i * 5 % 11) - 5);
  std::vector<std::atomic<int>> done(m * n);
  cpu::parallelSgemm({m, n, k, a.data(), k, b.data(), transB ? k : n, transB,
                      c.data(), n, bias ? initial.data() : nullptr},
                     [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                       for (int64_t r = r0; r < r1; ++r)
                         for (int64_t j = c0; j < c1; ++j)
                           done[r * n + j]++;
                     });
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float want = bias ? initial[j] : 0; // small integers: exact
      for (int64_t q = 0; q < k; ++q)
        want += a[r * k + q] * (transB ? b[j * k + q] : b[q * n + j]);
      ASSERT_EQ(c[r * n + j], want) << m << "x" << n << "x" << k << " at "
                                    << r << "," << j;
      ASSERT_EQ(done[r * n + j].load(), 1);
    }
}

TEST(ThreadPoolTest, SplitSgemmMatchesTheNaiveProduct) {
  // Rows (m large), columns (n >= 4m), k = 0 (zeros), one row, odd sizes.
  for (bool transB : {false, true}) {
    checkSgemm(300, 64, 33, transB);
    checkSgemm(40, 700, 17, transB);
    checkSgemm(37, 53, 0, transB);
    checkSgemm(1, 129, 64, transB);
    checkSgemm(129, 1, 64, transB);
    // A linear's bias: every row of C starts as it.
    checkSgemm(300, 64, 33, transB, /*bias=*/true);
    checkSgemm(40, 700, 17, transB, /*bias=*/true);
    checkSgemm(37, 53, 0, transB, /*bias=*/true);
  }
}

} // namespace
