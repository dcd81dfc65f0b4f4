//===- ThreadPool.cpp - parallel loops for the CPU kernels ----------------===//
//
// One pool runs every parallel loop of the runtime, GEMMs included (OpenBLAS
// runs single-threaded inside the pool's tasks, see BlasCore.cpp): two pools
// on the same cores would fight, each spinning while the other works.
//
// Workers spin for a short while after their last chunk before they sleep:
// a model's ops follow each other within microseconds, and waking a sleeping
// thread through the kernel costs tens of them, more than many ops' work.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

using namespace tandem::rt;

namespace {

/// Below this many operations a loop is not worth handing to a worker, even
/// a spinning one (about ten microseconds of work on one core).
constexpr int64_t kMinParallelWork = 1 << 15;

/// How long an idle worker (and a caller waiting for the last chunks) spins
/// before it blocks: longer than the gap between a model's ops, short enough
/// that an idle process gives its cores back at once.
constexpr std::chrono::microseconds kSpinTime{200};

/// Spins until `ready()` or kSpinTime has passed; says whether it is ready.
template <typename Ready> bool spinUntil(Ready ready) {
  auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned i = 1;; ++i) {
    if (ready())
      return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline)
      return false;
    cpuRelax();
  }
}

/// The cores this process may run on (its affinity mask: taskset, a
/// container's cpuset), else the machine's.
unsigned usableCores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return unsigned(CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

/// Set while a thread runs a pool task: a parallel loop inside one (a GEMM's
/// epilogue, a kernel calling another) runs inline instead of waiting for
/// the pool it is part of.
thread_local bool insideTask = false;

class Pool {
public:
  Pool() {
    unsigned threads = usableCores();
    for (unsigned i = 1; i < threads; ++i)
      workers.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      generation.fetch_add(1, std::memory_order_release);
    }
    wake.notify_all();
    for (std::thread &worker : workers)
      worker.join();
  }

  size_t size() const { return workers.size() + 1; }

  void run(int64_t chunks, const std::function<void(int64_t)> &task) {
    // One loop at a time: two threads running models share the workers.
    std::lock_guard<std::mutex> turn(runMutex);
    bool anyAsleep;
    {
      std::lock_guard<std::mutex> lock(mutex);
      // The count before the chunks: a worker still in drain() after the
      // last loop's last chunk may claim one of these the moment they are
      // posted, and its count must not be overwritten (the caller would
      // wait for chunks no one runs).
      remaining.store(chunks, std::memory_order_relaxed);
      {
        std::lock_guard<SpinLock> claims(claimLock);
        current = &task;
        next = 0;
        total = chunks;
      }
      generation.fetch_add(1, std::memory_order_release);
      anyAsleep = sleepers > 0;
    }
    if (anyAsleep)
      wake.notify_all();
    drain(/*fromFront=*/true); // the caller works too
    // Every claimed chunk has finished (or thrown) before `task` goes.
    if (!spinUntil([this] { return remaining.load() == 0; })) {
      std::unique_lock<std::mutex> lock(mutex);
      callerAsleep.store(true);
      done.wait(lock, [this] { return remaining.load() == 0; });
      callerAsleep.store(false);
    }
    std::exception_ptr thrown;
    {
      std::lock_guard<std::mutex> lock(mutex);
      std::lock_guard<SpinLock> claims(claimLock);
      current = nullptr;
      std::swap(thrown, failure);
    }
    if (thrown)
      std::rethrow_exception(thrown); // on the caller, after the loop ends
  }

private:
  /// Runs chunks until none is left. A chunk that throws (bad_alloc) still
  /// counts as done; the first exception goes to the caller of run().
  /// The caller claims chunks from the front, the workers from the back:
  /// with two threads, each runs the same part of a loop run after run (what
  /// it wrote there last time is in its own core's cache), and the one done
  /// first takes the other's last chunks.
  void drain(bool fromFront) {
    struct TaskScope {
      TaskScope() { insideTask = true; }
      ~TaskScope() { insideTask = false; }
    } scope;
    while (true) {
      int64_t chunk;
      const std::function<void(int64_t)> *task;
      {
        std::lock_guard<SpinLock> claims(claimLock);
        if (!current || next >= total)
          break;
        chunk = fromFront ? next++ : --total;
        task = current;
      }
      int64_t finished = 1;
      try {
        (*task)(chunk);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        std::lock_guard<SpinLock> claims(claimLock);
        if (!failure)
          failure = std::current_exception();
        // The rest of the loop is not worth running: its chunks are done.
        finished += total - next;
        next = total;
      }
      // The last chunk wakes the caller if it sleeps (after remaining,
      // both sequentially consistent: it either sees the flag or the caller
      // sees no chunk left). Locking `mutex` when it spins made the next
      // loop's caller wait for it in the kernel.
      if (remaining.fetch_sub(finished) == finished && callerAsleep.load()) {
        std::lock_guard<std::mutex> lock(mutex);
        done.notify_all();
      }
    }
  }

  void work() {
    uint64_t seen = 0;
    while (true) {
      auto posted = [&] {
        return generation.load(std::memory_order_acquire) != seen;
      };
      if (!spinUntil(posted)) {
        std::unique_lock<std::mutex> lock(mutex);
        ++sleepers;
        wake.wait(lock, posted);
        --sleepers;
      }
      seen = generation.load(std::memory_order_acquire);
      // Read without `mutex`: a worker that locked it here, as the caller
      // posting the loop still held it, slept in the kernel.
      if (stopping.load(std::memory_order_acquire))
        return;
      drain(/*fromFront=*/false);
    }
  }

  std::vector<std::thread> workers;
  std::mutex runMutex, mutex;
  std::condition_variable wake, done;
  // The loop and its unclaimed chunks [next, total), guarded by claimLock
  // (taken after `mutex` where both are).
  SpinLock claimLock;
  const std::function<void(int64_t)> *current = nullptr;
  int64_t next = 0, total = 0;
  // Guarded by `mutex`; `generation` and `remaining` are also read without
  // it, by spinning threads.
  std::atomic<int64_t> remaining{0};
  std::atomic<uint64_t> generation{0};
  std::exception_ptr failure; // the first a chunk of this loop threw
  int sleepers = 0;
  std::atomic<bool> stopping{false};
  std::atomic<bool> callerAsleep{false}; // set under `mutex`
};

std::mutex poolMutex;
// Started on first use. A loop holds its own reference, so stopping the
// workers while another thread's loop runs (a model closed as another is
// opened and run) lets that loop finish on the pool it started on.
std::shared_ptr<Pool> instance;

std::shared_ptr<Pool> pool() {
  std::lock_guard<std::mutex> lock(poolMutex);
  if (!instance)
    instance = std::make_shared<Pool>();
  return instance;
}

} // namespace

int64_t tandem::rt::poolThreads() {
  return insideTask ? 1 : int64_t(pool()->size());
}

void tandem::rt::parallelFor(int64_t count, int64_t costPerItem,
                             const std::function<void(int64_t, int64_t)> &body) {
  if (count <= 0)
    return;
  int64_t work = count * std::max<int64_t>(costPerItem, 1);
  if (work < kMinParallelWork || count == 1 || insideTask) {
    body(0, count);
    return;
  }
  std::shared_ptr<Pool> held = pool();
  Pool &workers = *held;
  if (workers.size() == 1) {
    body(0, count);
    return;
  }
  int64_t chunks = std::min<int64_t>(count, int64_t(workers.size()) * 4);
  int64_t step = (count + chunks - 1) / chunks;
  chunks = (count + step - 1) / step;
  workers.run(chunks, [&](int64_t chunk) {
    int64_t begin = chunk * step;
    body(begin, std::min(count, begin + step));
  });
}

void tandem::rt::stopWorkers() {
  std::shared_ptr<Pool> stopped;
  {
    std::lock_guard<std::mutex> lock(poolMutex);
    stopped = std::move(instance);
  }
  // Joined here, outside the lock, unless a loop still holds the pool: then
  // when that loop ends.
}
