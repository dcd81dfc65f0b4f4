//===- CudaQueues.cpp - a scheduled model's queues on a CUDA GPU ----------===//
//
// The CUDA side of Queues.h. The compiled code hands the runtime its ops in
// program order; this executor
//   - enqueues each GPU op on the compute stream and each copy on its copy
//     engine's stream, after making the stream wait (on the GPU, through
//     events) for the other GPU-side queues' ops it waits for, and records
//     an event when it is done;
//   - runs the CPU ops on a worker thread of their own, which waits on the
//     host only for the GPU-side ops a CPU op waits for, so the host keeps
//     enqueuing GPU work while the CPU computes;
//   - waits on the host for a CPU op only before a GPU-side op that waits
//     for it (or reads its result on the host, as dynamic_slice's offsets);
//   - where a run has no CPU op, no host operand and no kernel that reads a
//     result back on the host, captures its GPU side once as a CUDA graph
//     (on the second run: the first, run op by op, also makes what the
//     libraries allocate on first use) and launches that graph on later
//     runs, as long as they hand it the same buffers (--no-cuda-graph turns
//     this off).
// Copies are asynchronous DMAs where their host memory was page-locked
// (pinHostBuffers: the CPU arena, the inputs, the weights), staged through
// each copy engine's own pinned buffers otherwise.
//
//===----------------------------------------------------------------------===//

#include "Queues.h"

#include "CudaBackend.h"
#include "RuntimeState.h"
#include "tandem/runtime/ModelImage.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

using namespace tandem::rt;
namespace img = tandem::image;

namespace tandem::rt {

class CudaQueueExecutor {
public:
  explicit CudaQueueExecutor(TandemRuntime &rt);
  ~CudaQueueExecutor();
  bool start(std::string &error);
  void submit(int32_t index, void **operands, void *result);
  void finishRun();
  /// Forgets a run cut short (an exception escaped it): ends a capture it
  /// left open and drops its recorded calls.
  void resetRun();
  std::string describeGraphs() const;

private:
  struct Call {
    int32_t index;
    std::vector<void *> operands;
    void *result;
    bool operator==(const Call &other) const {
      return index == other.index && operands == other.operands &&
             result == other.result;
    }
  };
  enum class Graphs { Off, Capture, Replay };

  bool isCpu(int64_t op) const { return image.ops[op].queue == img::kCpuQueue; }
  void work();
  void waitForCpuOp(int64_t op);
  /// Enqueues a GPU-side op on its stream after its waits; false with
  /// `error` if it could not.
  bool enqueue(const Call &call, std::string &error);
  /// Enqueues the run's recorded GPU-side calls one by one (no graph).
  void enqueueAll(const std::vector<Call> &calls);
  void fail(const Call &call, const std::string &error);
  /// Counts a copy in the run's statistics.
  void countCopy(const OpRecord &op);
  /// Per-op GPU times of the run's enqueued ops, into the stats (when the
  /// reports need them).
  void collectTimes();

  TandemRuntime &rt;
  const Image &image;
  bool timing;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Call> cpuTasks;
  std::thread worker;
  bool stopping = false;
  int64_t pendingCpu = 0, run = 0;
  std::vector<int64_t> doneRun; // per op: the run it last completed in
  Graphs graphs = Graphs::Off;
  bool capturing = false, captureFailed = false;
  std::vector<Call> calls, captured; // the run's GPU-side calls; the graph's
  std::vector<int32_t> enqueued;     // GPU-side ops enqueued one by one
  double firstEnqueue = 0;           // when the run's first was, host time
  int64_t graphRuns = 0, eagerRuns = 0;
  std::string graphNote;
};

namespace {

/// Kernels that read a result back on the host while they are enqueued (an
/// index check, a division's zero check, a constant's bytes from host
/// memory): they cannot be captured in a graph.
bool readsBackOnHost(const OpRecord &op) {
  switch (op.kind) {
  case img::kGather:
  case img::kEmbedding:
  case img::kEmbeddingBag:
  case img::kConstant:
    return true;
  case img::kDiv:
    return op.result.dtype == DType::I64 || op.result.dtype == DType::I32;
  default:
    return false;
  }
}

} // namespace

} // namespace tandem::rt

CudaQueueExecutor::CudaQueueExecutor(TandemRuntime &rt)
    : rt(rt), image(rt.image), timing(rt.waitEachGpuOp) {
  doneRun.assign(image.ops.size(), -1);
  // A graph holds GPU work only: a run with a CPU op, a GPU op reading a
  // host operand or a kernel reading back on the host needs the host
  // between its GPU ops.
  bool gpuOnly = true, readsBack = false;
  for (const OpRecord &op : image.ops) {
    gpuOnly &= op.queue != img::kCpuQueue;
    if (op.kind == img::kTransfer)
      continue;
    for (int64_t device : op.operandDevices)
      gpuOnly &= device == img::kGpu;
    readsBack |= readsBackOnHost(op);
  }
  if (!rt.options.cudaGraph)
    graphNote = "off (--no-cuda-graph)";
  else if (timing)
    graphNote = "off (the reports time each op)";
  else if (!gpuOnly)
    graphNote = "off (the run has CPU ops between its GPU ops)";
  else if (readsBack)
    graphNote = "off (a kernel reads a result back on the host: an index or "
                "zero-division check, or a constant)";
  else
    graphs = Graphs::Capture;
  worker = std::thread([this] { work(); });
}

CudaQueueExecutor::~CudaQueueExecutor() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  worker.join();
}

bool CudaQueueExecutor::start(std::string &error) {
  return cuda::prepareSchedule(rt.gpu, image.ops.size(), timing, error);
}

void CudaQueueExecutor::work() {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    changed.wait(lock, [&] { return stopping || !cpuTasks.empty(); });
    if (cpuTasks.empty())
      return; // stopping
    Call call = std::move(cpuTasks.front());
    cpuTasks.pop_front();
    lock.unlock();
    // Its waits on GPU-side ops: their events were recorded before it was
    // handed over (the host enqueues in program order).
    std::string error;
    bool ready = true;
    for (int64_t waited : image.ops[call.index].waits)
      if (!isCpu(waited) && !cuda::hostWaitFor(rt.gpu, waited, error)) {
        ready = false;
        break;
      }
    if (!ready) {
      fail(call, error);
    } else {
      try {
        executeOpNow(rt, call.index, call.operands.data(), call.result);
      } catch (...) {
        fail(call, describeException(std::current_exception()));
      }
    }
    lock.lock();
    doneRun[call.index] = run;
    --pendingCpu;
    changed.notify_all();
  }
}

void CudaQueueExecutor::waitForCpuOp(int64_t op) {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return doneRun[op] == run; });
}

void CudaQueueExecutor::fail(const Call &call, const std::string &error) {
  const OpRecord &op = image.ops[call.index];
  recordFailure(rt, op.name + " at " + op.loc + ": " + error);
}

bool CudaQueueExecutor::enqueue(const Call &call, std::string &error) {
  const OpRecord &op = image.ops[call.index];
  auto queue = cuda::GpuQueue(op.queue);
  for (int64_t waited : op.waits) {
    if (isCpu(waited))
      waitForCpuOp(waited);
    else if (!cuda::streamWaitFor(rt.gpu, queue, waited, error))
      return false;
  }
  // A kernel reads its host operands when it is enqueued: they must be
  // there, not merely on their way.
  if (op.kind != img::kTransfer)
    for (size_t k = 0; k < op.operands.size(); ++k) {
      int64_t producer = op.operandProducers[k];
      if (op.operandDevices[k] != img::kCpu || producer < 0)
        continue;
      if (isCpu(producer))
        waitForCpuOp(producer);
      else if (!cuda::hostWaitFor(rt.gpu, producer, error))
        return false;
    }
  if (!capturing && enqueued.empty())
    firstEnqueue = now();
  if (!cuda::recordStart(rt.gpu, queue, call.index, error))
    return false;
  bool ok;
  if (op.kind == img::kTransfer) {
    ok = cuda::copyOnQueue(rt.gpu, queue, call.result, call.operands[0],
                           op.result.bytes(), error);
  } else {
    std::vector<TensorView> &views = rt.operandViews[call.index];
    for (size_t k = 0; k < views.size(); ++k)
      views[k].data = call.operands[k];
    TensorView &out = rt.resultViews[call.index];
    out.data = call.result;
    ok = cuda::runKernel(rt.gpu, op.kind, views, out, op.attrs, error);
  }
  if (!ok || !cuda::recordDone(rt.gpu, queue, call.index, error))
    return false;
  if (!capturing) {
    enqueued.push_back(call.index);
    countCopy(op);
  }
  return true;
}

void CudaQueueExecutor::countCopy(const OpRecord &op) {
  if (op.kind != img::kTransfer)
    return;
  std::lock_guard<std::mutex> lock(rt.statsMutex);
  countCopyLocked(rt, op);
}

void CudaQueueExecutor::submit(int32_t index, void **operands, void *result) {
  if (rt.failed)
    return;
  const OpRecord &op = image.ops[index];
  Call call{index, std::vector<void *>(operands, operands + op.operands.size()),
            result};
  if (op.queue == img::kCpuQueue) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      cpuTasks.push_back(std::move(call));
      ++pendingCpu;
    }
    changed.notify_all();
    return;
  }
  if (graphs == Graphs::Replay) {
    calls.push_back(std::move(call)); // launched as one graph at the end
    return;
  }
  std::string error;
  // The first run goes op by op: cuDNN's handle, the libraries' workspaces
  // and the kernels' modules are made on first use, which a capture may not.
  if (graphs == Graphs::Capture && eagerRuns > 0) {
    if (!capturing && calls.empty()) {
      if (!cuda::beginGraphCapture(rt.gpu, error)) {
        graphs = Graphs::Off;
        graphNote = "off (" + error + ")";
      } else {
        capturing = true;
      }
    }
    if (capturing) {
      calls.push_back(call);
      // A failure while capturing fails the capture, not the run: the run
      // is then enqueued again without a graph.
      if (!captureFailed && !enqueue(call, error))
        captureFailed = true;
      return;
    }
  }
  if (!enqueue(call, error))
    fail(call, error);
}

void CudaQueueExecutor::enqueueAll(const std::vector<Call> &all) {
  std::string error;
  for (const Call &call : all) {
    if (rt.failed)
      return;
    if (!enqueue(call, error))
      fail(call, error);
  }
}

void CudaQueueExecutor::collectTimes() {
  if (!timing || enqueued.empty())
    return;
  std::string error;
  int32_t first = enqueued.front();
  for (int32_t index : enqueued) {
    double start = 0, seconds = 0;
    if (!cuda::opSeconds(rt.gpu, index, first, start, seconds, error)) {
      recordFailure(rt, "timing the GPU ops: " + error);
      return;
    }
    const OpRecord &op = image.ops[index];
    std::lock_guard<std::mutex> lock(rt.statsMutex);
    if (op.kind == img::kTransfer)
      rt.copySeconds += seconds;
    if (!rt.options.trace.empty())
      rt.trace.push_back({op.name, op.device, op.queue,
                          firstEnqueue - rt.origin + start, seconds});
    rt.opStats[index].record(seconds);
  }
}

void CudaQueueExecutor::finishRun() {
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return pendingCpu == 0; });
  }
  std::string error;
  if (capturing) {
    capturing = false;
    bool made = cuda::endGraphCapture(rt.gpu, error) && !captureFailed;
    if (made && cuda::launchGraph(rt.gpu, error)) {
      graphs = Graphs::Replay;
      captured = calls;
      ++graphRuns;
      for (const Call &call : calls)
        countCopy(image.ops[call.index]);
    } else {
      cuda::dropGraph(rt.gpu);
      graphs = Graphs::Off;
      graphNote = "off (" + (error.empty() ? std::string("the capture failed")
                                           : error) + ")";
      enqueueAll(calls);
    }
  } else if (graphs == Graphs::Replay) {
    if (calls == captured && cuda::launchGraph(rt.gpu, error)) {
      ++graphRuns;
      for (const Call &call : calls)
        countCopy(image.ops[call.index]);
    } else {
      // Other buffers than the captured ones: run them one by one, and
      // capture again next run.
      cuda::dropGraph(rt.gpu);
      graphs = Graphs::Capture;
      enqueueAll(calls);
    }
  }
  if (!cuda::synchronize(rt.gpu, error))
    recordFailure(rt, "a GPU op of this run failed: " + error +
                          " (run with --serial --profile to wait for each "
                          "GPU op and name the one that fails)");
  else
    collectTimes();
  if (graphs != Graphs::Replay || graphRuns == 0)
    ++eagerRuns;
  calls.clear();
  enqueued.clear();
  captureFailed = false;
  std::lock_guard<std::mutex> lock(mutex);
  ++run;
}

void CudaQueueExecutor::resetRun() {
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return pendingCpu == 0; });
  }
  if (capturing) {
    std::string ignored;
    cuda::endGraphCapture(rt.gpu, ignored); // discarded below
    cuda::dropGraph(rt.gpu);
    capturing = false;
    if (graphs == Graphs::Capture)
      graphs = Graphs::Off, graphNote = "off (a run was cut short while it "
                                        "was captured)";
  }
  calls.clear();
  enqueued.clear();
  captureFailed = false;
  std::string ignored;
  cuda::synchronize(rt.gpu, ignored);
  std::lock_guard<std::mutex> lock(mutex);
  ++run;
}

std::string CudaQueueExecutor::describeGraphs() const {
  if (graphRuns > 0)
    return "CUDA graph: " + std::to_string(graphRuns) +
           " run(s) launched as one captured graph";
  return "CUDA graph: " + graphNote;
}

std::shared_ptr<CudaQueueExecutor>
tandem::rt::startCudaQueues(TandemRuntime &rt, std::string &error) {
  auto executor = std::make_shared<CudaQueueExecutor>(rt);
  if (!executor->start(error))
    return nullptr;
  return executor;
}

void tandem::rt::submit(CudaQueueExecutor &queues, int32_t index,
                        void **operands, void *result) {
  queues.submit(index, operands, result);
}

void tandem::rt::finishCudaRun(CudaQueueExecutor &queues) {
  queues.finishRun();
}

void tandem::rt::resetCudaRun(CudaQueueExecutor &queues) { queues.resetRun(); }

std::string tandem::rt::describeCudaGraphs(const CudaQueueExecutor &queues) {
  return queues.describeGraphs();
}
