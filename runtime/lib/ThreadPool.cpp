//===- ThreadPool.cpp - parallel loops for the CPU kernels ----------------===//

#include "ThreadPool.h"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

using namespace tandem::rt;

namespace {

/// Below this many operations a loop is not worth waking workers for (nor
/// competing with OpenBLAS's threads, which spin for a while after a GEMM).
constexpr int64_t kMinParallelWork = 1 << 22;

class Pool {
public:
  Pool() {
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < threads; ++i)
      workers.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &worker : workers)
      worker.join();
  }

  size_t size() const { return workers.size() + 1; }

  void run(int64_t chunks, const std::function<void(int64_t)> &task) {
    // One loop at a time: two threads running models share the workers.
    std::lock_guard<std::mutex> turn(runMutex);
    {
      std::lock_guard<std::mutex> lock(mutex);
      current = &task;
      next = 0;
      total = chunks;
      remaining = chunks;
      ++generation;
    }
    wake.notify_all();
    drain(); // the caller works too
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [this] { return remaining == 0; });
    current = nullptr;
  }

private:
  void drain() {
    while (true) {
      int64_t chunk;
      const std::function<void(int64_t)> *task;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!current || next >= total)
          return;
        chunk = next++;
        task = current;
      }
      (*task)(chunk);
      std::lock_guard<std::mutex> lock(mutex);
      if (--remaining == 0)
        done.notify_all();
    }
  }

  void work() {
    uint64_t seen = 0;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping)
          return;
        seen = generation;
      }
      drain();
    }
  }

  std::vector<std::thread> workers;
  std::mutex runMutex, mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t)> *current = nullptr;
  int64_t next = 0, total = 0, remaining = 0;
  uint64_t generation = 0;
  bool stopping = false;
};

std::mutex poolMutex;
std::unique_ptr<Pool> instance; // started on first use

Pool &pool() {
  std::lock_guard<std::mutex> lock(poolMutex);
  if (!instance)
    instance = std::make_unique<Pool>();
  return *instance;
}

} // namespace

void tandem::rt::parallelFor(int64_t count, int64_t costPerItem,
                             const std::function<void(int64_t, int64_t)> &body) {
  if (count <= 0)
    return;
  int64_t work = count * std::max<int64_t>(costPerItem, 1);
  Pool &workers = pool();
  if (work < kMinParallelWork || workers.size() == 1 || count == 1) {
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
  std::lock_guard<std::mutex> lock(poolMutex);
  instance.reset();
}
