//===- RuntimeState.h - a loaded model, shared by the runtime ---*- C++ -*-===//
//
// The state of one loaded model (the TandemRuntime of tandem_runtime.h) and
// the functions the runtime's files call across each other: the executor
// (Runtime.cpp), the weights (Weights.cpp), the reports (Reports.cpp), the
// executable's driver (Driver.cpp) and the library form's C ABI (CApi.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_RUNTIMESTATE_H
#define TANDEM_RUNTIME_LIB_RUNTIMESTATE_H

#include "tandem_runtime.h"

#include "CudaBackend.h"
#include "Image.h"
#include "cpu/CpuKernels.h"
#include "tandem/runtime/Safetensors.h"

#include <algorithm>
#include <cstdint>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tandem::rt {

/// One op's timings over the runs.
struct OpStats {
  int64_t calls = 0;
  /// `first`: the first call's seconds (it pays for faulting in the
  /// arenas' pages and cold caches); the steady time excludes it.
  double total = 0, min = 1e30, max = 0, first = 0;

  void record(double seconds) {
    if (calls++ == 0)
      first = seconds;
    total += seconds;
    min = std::min(min, seconds);
    max = std::max(max, seconds);
  }
};

/// The executable's command line (the library form sets only `backend`).
struct Options {
  std::vector<std::string> inputs;
  std::string outputDir, weights, backend = "auto", profileJson, trace;
  bool listDevices = false;
  std::optional<uint64_t> randomWeights, randomInputs;
  std::optional<int64_t> gpuMemory;
  int64_t repeat = 1;
  bool profile = false;
  // f32 GEMMs and convolutions on the GPU's tensor cores in TF32 (inputs
  // rounded to 10 mantissa bits); TANDEM_ALLOW_TF32=1 does the same.
  bool allowTf32 = false;
  // Run a scheduled model one op at a time, in program order, instead of on
  // its queues (--serial).
  bool serial = false;
  // Random delays per queue on the sim backend's workers (--sim-jitter).
  std::optional<uint64_t> simJitter;
  // --sim-timing=profile: each op on the sim backend takes the time the
  // compiler's cost model predicted for it (times --sim-time-scale), so a
  // run's makespan can be compared with the prediction on any machine.
  bool simTiming = false;
  double simTimeScale = 1;
  // A scheduled run on CUDA with no CPU op is captured once as a CUDA graph
  // and replayed (--no-cuda-graph: each op enqueued every run).
  bool cudaGraph = true;
  // --timing: print each run's wall-clock time summary (the first run apart:
  // it makes the libraries' handles and a CUDA graph) without the per-op
  // waits that --profile adds.
  bool timing = false;
};

class QueueExecutor;
class CudaQueueExecutor;

} // namespace tandem::rt

struct TandemRuntime {
  tandem::rt::Image image;
  tandem::rt::Options options;
  std::vector<uint8_t *> arenas = {nullptr, nullptr};
  std::vector<std::vector<uint8_t>> inputData;
  std::vector<std::vector<uint8_t>> randomWeightData;
  std::vector<void *> weightData;
  tandem::rt::SafetensorsFile weightsFile;
  // The model's compiled body; with an at-load function, it runs once more
  // while the weights load, on atLoadRuntime (tandem_rt_at_load), which is
  // null otherwise.
  void (*run)(TandemRuntime *) = nullptr;
  TandemRuntime *atLoadRuntime = nullptr;
  // The weights the at-load function computed, one per result.
  std::vector<std::vector<uint8_t>> foldedWeightData;
  double atLoadSeconds = 0;
  std::vector<void *> outputs;
  // Per op of the image, built once so that executing an op allocates
  // nothing: its operand and result views (only the data pointers change
  // between calls) and its timings, summed by name for the reports.
  std::vector<std::vector<tandem::rt::TensorView>> operandViews;
  std::vector<tandem::rt::TensorView> resultViews;
  // A fused group's prebuilt parts, decoded from its words (empty for
  // other ops).
  std::vector<tandem::rt::FusedParts> fusedParts;
  std::vector<tandem::rt::OpStats> opStats;
  // Whether each op's time is taken: only for what reports or paces it
  // (--profile, --profile-json, --trace, --sim-timing); two clock reads and
  // a lock per op were a fifth of a tiny op's run.
  bool timesOps = false;
  struct TraceEvent {
    std::string name;
    int64_t device, queue;
    double start, seconds;
  };
  std::vector<TraceEvent> trace;
  double origin = 0;
  int64_t h2dCount = 0, d2hCount = 0, h2dBytes = 0, d2hBytes = 0;
  double copySeconds = 0, loadSeconds = 0;
  // The run's first failure; `failed` is set with it, and may be read while
  // queues run.
  std::string failure;
  std::atomic<bool> failed{false};
  // Guards failure, the counters, the timings and the trace while a
  // scheduled model's queues run concurrently.
  std::mutex statsMutex;
  // A scheduled model's queue workers (sim), or null: one op at a time.
  std::shared_ptr<tandem::rt::QueueExecutor> queues;
  // A scheduled model's streams and CPU worker on CUDA, or null: one op at a
  // time on one stream.
  std::shared_ptr<tandem::rt::CudaQueueExecutor> cudaQueues;
  // The most GPU arena bytes held by live buffers at once while the queues
  // ran (sim): what the memory plan must keep within the budget in every
  // interleaving.
  int64_t gpuLivePeak = 0;
  // --sim-timing: op runs that took longer than their predicted slot (the
  // stand-in was slower than the profile), and all paced op runs.
  std::atomic<int64_t> pacedRuns{0}, pacedOverruns{0};
  int64_t budget = 0;
  bool useCuda = false;
  tandem::rt::cuda::Device *gpu = nullptr; // this model's GPU (useCuda)
  // Wait for each GPU op before timing the next (reports asked for, so that
  // each op's time is its own); otherwise GPU ops run ahead of the host.
  bool waitEachGpuOp = false;
  std::mutex callMutex; // held by each tandem_rt_infer and by close
};

namespace tandem::rt {

// Runtime.cpp: the executor.

/// Seconds on a steady clock.
double now();
/// This machine's physical memory in bytes; 0 if it cannot be known.
uint64_t hostMemoryBytes();
/// Picks the device backend, checks the budget and allocates the arenas.
bool setUp(TandemRuntime &rt, std::string &error);
void tearDown(TandemRuntime &rt);
/// Runs op `index` of the image on `operands` into `result` (on its queue,
/// when the model's queues run concurrently); a failure is kept in
/// rt.failure and makes the run's later ops do nothing.
void executeOp(TandemRuntime &rt, int32_t index, void **operands,
               void *result);
/// Counts a copy (a transfer op) in the run's statistics; rt.statsMutex
/// held.
void countCopyLocked(TandemRuntime &rt, const OpRecord &op);
/// Runs op `index` now, on the calling thread.
void executeOpNow(TandemRuntime &rt, int32_t index, void **operands,
                  void *result);
/// Keeps the run's first failure.
void recordFailure(TandemRuntime &rt, const std::string &message);
/// Forgets the last run's failure.
void clearFailure(TandemRuntime &rt);
/// Ends a run: waits for the GPU ops still running, keeping a failure of
/// theirs in rt.failure.
void finishRun(TandemRuntime &rt);
/// A message for an exception escaping the runtime (memory exhausted).
std::string describeException(std::exception_ptr exception);

// Weights.cpp: weights and random tensors.

/// Fills a tensor of `desc` with deterministic random values from `state`
/// (--random-inputs, --random-weights).
void randomFill(const TensorDesc &desc, uint8_t *data, uint64_t &state);
/// Whether the model reads a weight from a weights file (the weights it
/// computes at load aside).
bool needsWeightsFile(const Image &image);
/// Loads the weights from `path` (or random ones with --random-weights),
/// computes those folded at load (the at-load function, run through
/// rt.run), and
/// uploads the GPU-resident ones; on CUDA with a scheduled model, then
/// page-locks what the copies read and write (pinHostBuffers).
bool loadWeights(TandemRuntime &rt, const std::string &path,
                 std::string &error);
/// Page-locks the host memory a scheduled CUDA run copies from and to, so
/// that its copies are asynchronous; what cannot be is named in a note.
void pinHostBuffers(TandemRuntime &rt);

// Reports.cpp: --profile, --profile-json, --trace.

void printProfile(TandemRuntime &rt, double totalSeconds);
void writeProfileJson(TandemRuntime &rt, double totalSeconds);
void writeTrace(TandemRuntime &rt);

// Driver.cpp: the executable.

/// Prints "error: MESSAGE" and exits with status 1.
[[noreturn]] void fatal(const std::string &message);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_RUNTIMESTATE_H
