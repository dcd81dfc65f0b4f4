//===- ThreadPool.h - parallel loops for the CPU kernels --------*- C++ -*-===//

#ifndef TANDEM_RUNTIME_LIB_THREADPOOL_H
#define TANDEM_RUNTIME_LIB_THREADPOOL_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tandem::rt {

/// Runs body(begin, end) over [0, count) split into chunks across the
/// runtime's worker threads (one per hardware thread, started on first use);
/// runs inline when the work is too small to pay for the hand-off, or when
/// called from inside a pool task: `costPerItem` is a rough count of
/// operations per item.
void parallelFor(int64_t count, int64_t costPerItem,
                 const std::function<void(int64_t, int64_t)> &body);

/// How many threads a parallelFor called here would use: the pool's size,
/// or 1 inside one of its tasks (where loops run inline).
int64_t poolThreads();

/// Stops the worker threads (they start again on the next parallelFor):
/// what unloading a compiled model's library needs. A parallelFor running
/// on another thread finishes first, on the workers it started with.
void stopWorkers();

/// What a thread does while it spins: a pause (which frees the core's
/// pipeline for its sibling), else a yield.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// A lock for a few instructions (claiming a loop's next chunk, taking a
/// scratch buffer), held by spinning: under a std::mutex, two threads
/// taking it at the same moment put one of them to sleep in the kernel,
/// and a 128 x 128 fused multiply and mean split over two threads took 8 us
/// where one thread took 4.4.
class SpinLock {
public:
  void lock() {
    // A holder preempted inside its few instructions (more threads than
    // cores) is waited for by yielding, not by spinning through its
    // time slice.
    for (unsigned tries = 1; held.test_and_set(std::memory_order_acquire);
         ++tries) {
      if (tries % 1024 == 0)
        std::this_thread::yield();
      else
        cpuRelax();
    }
  }
  void unlock() { held.clear(std::memory_order_release); }

private:
  std::atomic_flag held = ATOMIC_FLAG_INIT;
};

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_THREADPOOL_H
