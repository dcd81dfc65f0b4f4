//===- Queues.cpp - a scheduled model's queues run concurrently -----------===//

#include "Queues.h"

#include "RuntimeState.h"
#include "tandem/runtime/ModelImage.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

using namespace tandem::rt;
namespace img = tandem::image;

namespace tandem::rt {

class QueueExecutor {
public:
  QueueExecutor(TandemRuntime &rt, std::optional<uint64_t> jitterSeed);
  ~QueueExecutor();
  void submit(int32_t index, void **operands, void *result);
  void drain();

private:
  struct Task {
    int32_t index;
    std::vector<void *> operands;
    void *result;
  };
  /// A buffer in an arena, live from its producer's start until its last
  /// reader completes (or the run ends).
  struct Live {
    int64_t arena, begin, end;
    int64_t op; // -1: a GPU weight, live for good
  };

  void work(int queue);
  /// The race detector's check of `task` as it starts; "" if clean.
  std::string checkStart(const Task &task);
  template <typename Predicate> void eraseLive(Predicate erase);
  void addLive(const Live &buffer);
  /// (arena, offset) of a pointer into an arena, or arena -1.
  std::pair<int64_t, int64_t> locate(const void *pointer) const;

  TandemRuntime &rt;
  const Image &image;
  std::optional<uint64_t> jitterSeed;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::deque<Task>> queues;
  std::vector<std::thread> workers;
  bool stopping = false;
  int64_t pending = 0;
  int64_t run = 0;
  /// Per op: the run in which it last completed; its readers in the image;
  /// those still to complete in this run.
  std::vector<int64_t> doneRun, readers, readersLeft;
  std::vector<Live> live;
  int64_t liveGpuBytes = 0;
};

} // namespace tandem::rt

QueueExecutor::QueueExecutor(TandemRuntime &rt,
                             std::optional<uint64_t> jitterSeed)
    : rt(rt), image(rt.image), jitterSeed(jitterSeed),
      queues(img::kNumQueues) {
  size_t ops = image.ops.size();
  doneRun.assign(ops, -1);
  readers.assign(ops, 0);
  for (const OpRecord &op : image.ops)
    for (int64_t producer : op.operandProducers)
      if (producer >= 0)
        ++readers[producer];
  readersLeft = readers;
  for (const WeightRecord &weight : image.weights)
    if (weight.device == img::kGpu)
      addLive({img::kGpu, weight.arenaOffset,
               weight.arenaOffset + int64_t(weight.tensor.bytes()), -1});
  for (int queue = 0; queue < img::kNumQueues; ++queue)
    workers.emplace_back([this, queue] { work(queue); });
}

QueueExecutor::~QueueExecutor() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

void QueueExecutor::submit(int32_t index, void **operands, void *result) {
  const OpRecord &op = image.ops[index];
  Task task{index, std::vector<void *>(operands, operands + op.operands.size()),
            result};
  {
    std::lock_guard<std::mutex> lock(mutex);
    queues[op.queue].push_back(std::move(task));
    ++pending;
  }
  changed.notify_all();
}

void QueueExecutor::drain() {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [this] { return pending == 0; });
  ++run;
  readersLeft = readers;
  eraseLive([](const Live &buffer) { return buffer.op >= 0; });
}

template <typename Predicate> void QueueExecutor::eraseLive(Predicate erase) {
  // partition, not remove_if: the erased entries stay readable.
  auto dead = std::partition(live.begin(), live.end(),
                             [&](const Live &buffer) { return !erase(buffer); });
  for (auto it = dead; it != live.end(); ++it)
    if (it->arena == img::kGpu)
      liveGpuBytes -= it->end - it->begin;
  live.erase(dead, live.end());
}

void QueueExecutor::addLive(const Live &buffer) {
  live.push_back(buffer);
  if (buffer.arena == img::kGpu) {
    liveGpuBytes += buffer.end - buffer.begin;
    rt.gpuLivePeak = std::max(rt.gpuLivePeak, liveGpuBytes);
  }
}

std::pair<int64_t, int64_t> QueueExecutor::locate(const void *pointer) const {
  auto *bytes = static_cast<const uint8_t *>(pointer);
  int64_t sizes[2] = {image.cpuArena, image.gpuArena};
  for (int64_t arena : {img::kCpu, img::kGpu})
    if (rt.arenas[arena] && bytes >= rt.arenas[arena] &&
        bytes < rt.arenas[arena] + sizes[arena])
      return {arena, bytes - rt.arenas[arena]};
  return {-1, 0};
}

std::string QueueExecutor::checkStart(const Task &task) {
  const OpRecord &op = image.ops[task.index];
  auto name = [&](int64_t index) {
    return "'" + image.ops[index].name + "' at " + image.ops[index].loc;
  };
  for (int64_t producer : op.operandProducers)
    if (producer >= 0 && doneRun[producer] != run)
      return "race: " + name(task.index) + " started before " +
             name(producer) + ", whose result it reads, completed: the "
             "schedule misses a wait";
  auto [arena, offset] = locate(task.result);
  if (arena < 0)
    return "";
  int64_t end = offset + int64_t(op.result.bytes());
  for (const Live &buffer : live)
    if (buffer.arena == arena && buffer.begin < end && offset < buffer.end &&
        buffer.op != task.index)
      return "race: " + name(task.index) + " writes bytes [" +
             std::to_string(std::max(offset, buffer.begin)) + ", " +
             std::to_string(std::min(end, buffer.end)) + ") of the " +
             (arena == img::kGpu ? "GPU" : "CPU") + " arena, which still hold " +
             (buffer.op < 0 ? std::string("a resident weight")
                            : "the result of " + name(buffer.op) + " (" +
                                  std::to_string(readersLeft[buffer.op]) +
                                  " of its readers yet to run)") +
             ": the schedule misses a wait";
  return "";
}

void QueueExecutor::work(int queue) {
  std::mt19937_64 random(jitterSeed ? *jitterSeed * img::kNumQueues + queue : 0);
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    changed.wait(lock, [&] { return stopping || !queues[queue].empty(); });
    if (queues[queue].empty())
      return; // stopping
    Task task = std::move(queues[queue].front());
    queues[queue].pop_front();
    const OpRecord &op = image.ops[task.index];
    changed.wait(lock, [&] {
      for (int64_t waited : op.waits)
        if (doneRun[waited] != run)
          return false;
      return true;
    });
    if (jitterSeed && random() % 2) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(random() % 300));
      lock.lock();
    }
    std::string race = checkStart(task);
    bool writes = locate(task.result).first >= 0;
    if (race.empty() && writes) {
      auto [arena, offset] = locate(task.result);
      addLive({arena, offset, offset + int64_t(op.result.bytes()), task.index});
    }
    lock.unlock();
    if (race.empty())
      executeOpNow(rt, task.index, task.operands.data(), task.result);
    else
      recordFailure(rt, race);
    lock.lock();
    doneRun[task.index] = run;
    // A buffer whose last reader completed is free for the next writer.
    for (int64_t producer : op.operandProducers)
      if (producer >= 0 && --readersLeft[producer] == 0)
        eraseLive([&](const Live &buffer) { return buffer.op == producer; });
    --pending;
    changed.notify_all();
  }
}

std::shared_ptr<QueueExecutor>
tandem::rt::startQueues(TandemRuntime &rt, std::optional<uint64_t> jitterSeed) {
  return std::make_shared<QueueExecutor>(rt, jitterSeed);
}

void tandem::rt::submit(QueueExecutor &queues, int32_t index, void **operands,
                        void *result) {
  queues.submit(index, operands, result);
}

void tandem::rt::drain(QueueExecutor &queues) { queues.drain(); }
