//===- thread_pool_stop.cpp - stopping the workers while a loop runs ------===//
//
// Built with AddressSanitizer by thread-pool-stop.test: one thread stops the
// runtime's workers over and over (what closing the last open model does)
// while this one runs parallel loops (another model being opened and run).
// Each loop must cover its range exactly once, and no loop may touch a pool
// that was freed under it.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

using namespace tandem::rt;

int main() {
  std::atomic<bool> running{true};
  std::thread stopper([&] {
    while (running.load())
      stopWorkers();
  });
  for (int loop = 0; loop < 300; ++loop) {
    std::vector<std::atomic<int>> hits(512);
    parallelFor(512, 1 << 20, [&](int64_t begin, int64_t end) {
      // Long enough for the stopper to strike while the loop runs.
      auto until =
          std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
      for (int64_t i = begin; i < end; ++i)
        hits[i]++;
    });
    for (size_t i = 0; i < hits.size(); ++i)
      if (hits[i].load() != 1) {
        std::printf("loop %d: index %zu ran %d times\n", loop, i,
                    hits[i].load());
        return 1;
      }
  }
  running = false;
  stopper.join();
  std::printf("300 loops, each index once\n");
  return 0;
}
