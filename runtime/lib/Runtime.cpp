//===- Runtime.cpp - the executor: arenas and each op's execution ---------===//
//
// The core every form of a model shares (the executable and the library):
// picking the device backend, checking the GPU budget and the host's memory,
// the arenas, and running each op of the image on the CPU kernels, the sim
// GPU stand-in (its own arena held to the budget; copies are real memcpys,
// counted and timed; compute uses the CPU kernels) or CUDA, timing it for
// the reports.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "CudaBackend.h"
#include "Queues.h"
#include "tandem/runtime/BlasCore.h"
#include "tandem/runtime/ModelImage.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>

using namespace tandem::rt;
namespace img = tandem::image;

double tandem::rt::now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t tandem::rt::hostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

namespace {

uint8_t *allocateArena(int64_t bytes, std::string &error) {
  void *memory = nullptr;
  if (posix_memalign(&memory, 64, std::max<int64_t>(bytes, 64)) != 0) {
    error = "cannot allocate an arena of " + std::to_string(bytes) + " bytes";
    return nullptr;
  }
  return static_cast<uint8_t *>(memory);
}

/// ": op NAME at LOC asks for N bytes at offset O": of the GPU buffers that
/// reach past `budget` in the arena, the lowest (where the plan crosses the
/// budget line).
std::string firstBeyond(const Image &image, int64_t budget) {
  std::string culprit;
  int64_t lowest = INT64_MAX;
  auto consider = [&](int64_t offset, int64_t bytes, const std::string &what) {
    if (offset + bytes > budget && offset < lowest) {
      lowest = offset;
      culprit = ": " + what + " asks for " + std::to_string(bytes) +
                " bytes at offset " + std::to_string(offset);
    }
  };
  for (const WeightRecord &weight : image.weights)
    if (weight.device == img::kGpu)
      consider(weight.arenaOffset, int64_t(weight.tensor.bytes()),
               "weight '" + weight.name + "'");
  for (const OpRecord &op : image.ops)
    if (op.device == img::kGpu)
      consider(op.arenaOffset, int64_t(op.result.bytes()),
               "op '" + op.name + "' at " + op.loc);
  return culprit.empty() ? " (every buffer fits; their alignment padding does not)"
                         : culprit;
}

/// Whether what the run keeps in host memory (the CPU arena, the sim
/// backend's GPU arena, the inputs, random weights) fits in this machine's
/// memory: beyond it the kernel would kill the process half-way instead of
/// an error now. (Weights from a file are mapped, paged in as read.)
bool fitsHostMemory(const TandemRuntime &rt, std::string &error) {
  auto add = [](uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
  };
  uint64_t inputs = 0, weights = 0;
  for (const TensorDesc &input : rt.image.inputs)
    inputs = add(inputs, input.bytes());
  if (rt.options.randomWeights)
    for (const WeightRecord &weight : rt.image.weights)
      weights = add(weights, weight.tensor.bytes());
  uint64_t arenas = add(uint64_t(rt.image.cpuArena),
                        rt.useCuda ? 0 : uint64_t(rt.image.gpuArena));
  uint64_t needed = add(add(arenas, inputs), weights);
  uint64_t memory = hostMemoryBytes();
  if (memory == 0)
    return true; // unknown: let the allocations say
  if (needed <= memory)
    return true;
  error = "the model needs " + std::to_string(needed) +
          " bytes of host memory (arenas " + std::to_string(arenas) +
          ", inputs " + std::to_string(inputs) +
          (rt.options.randomWeights
               ? ", random weights " + std::to_string(weights)
               : std::string()) +
          "), more than this machine's " + std::to_string(memory) + " bytes";
  return false;
}

} // namespace

bool tandem::rt::setUp(TandemRuntime &rt, std::string &error) {
  std::string why;
  if (rt.options.backend == "cuda") {
    if (!cuda::available(why)) {
      error = "--device-backend cuda: " + why;
      return false;
    }
    rt.useCuda = true;
  } else if (rt.options.backend == "auto") {
    // A plan with no GPU memory (a model placed all on the CPU) neither
    // needs nor starts CUDA.
    if (rt.image.gpuArena == 0)
      rt.useCuda = false;
    else if (!(rt.useCuda = cuda::available(why)))
      std::fprintf(stderr, "note: no CUDA GPU (%s): GPU ops run on the sim "
                           "backend\n", why.c_str());
  } else if (rt.options.backend != "sim") {
    error = "unknown device backend '" + rt.options.backend +
            "': expected sim, cuda or auto";
    return false;
  }
  int64_t budget = rt.image.gpuBudget;
  if (rt.options.gpuMemory) {
    if (*rt.options.gpuMemory > budget) {
      error = "--gpu-memory may only lower the compiled budget of " +
              std::to_string(budget) + " bytes";
      return false;
    }
    budget = *rt.options.gpuMemory;
  }
  rt.budget = budget;
  if (rt.options.simTiming) {
    if (rt.useCuda) {
      error = "--sim-timing=profile paces the sim backend's ops to the "
              "compiler's predictions; this run uses CUDA (pass "
              "--device-backend sim)";
      return false;
    }
    if (rt.image.predictedSerialSeconds <= 0 && !rt.image.ops.empty()) {
      error = "--sim-timing=profile needs the predicted times of a device "
              "profile, and this model was compiled without one (lower it "
              "with --convert-tandem-to-llvm=\"device-profile=NAME\", as "
              "tandem-compile does)";
      return false;
    }
  }
  if (rt.image.gpuArena > budget) {
    error = "the memory plan needs a GPU arena of " +
            std::to_string(rt.image.gpuArena) + " bytes, over the budget of " +
            std::to_string(budget) + " bytes" + firstBeyond(rt.image, budget);
    return false;
  }
  if (!fitsHostMemory(rt, error))
    return false;
  rt.arenas[img::kCpu] = allocateArena(rt.image.cpuArena, error);
  if (!rt.arenas[img::kCpu])
    return false;
  if (rt.useCuda) {
    const char *tf32 = std::getenv("TANDEM_ALLOW_TF32");
    bool allowTf32 = rt.options.allowTf32 || (tf32 && std::string(tf32) == "1");
    rt.gpu = cuda::start(rt.image.gpuArena, allowTf32, error);
    if (!rt.gpu) {
      error = "CUDA: " + error;
      return false;
    }
    rt.arenas[img::kGpu] = static_cast<uint8_t *>(cuda::arena(rt.gpu));
    std::vector<int64_t> fusedOnGpu;
    for (const OpRecord &op : rt.image.ops)
      if (op.kind == img::kFused && op.device == img::kGpu)
        fusedOnGpu.push_back(img::readAttrs<img::FusedAttrs>(op.attrs).kernel);
    if (!fusedOnGpu.empty() &&
        !cuda::loadGeneratedKernels(rt.gpu, rt.image.ptx, fusedOnGpu,
                                    rt.image.numKernels, error)) {
      error = "CUDA: " + error;
      return false;
    }
    rt.waitEachGpuOp = rt.options.profile || !rt.options.profileJson.empty() ||
                       !rt.options.trace.empty();
  } else {
    rt.arenas[img::kGpu] = allocateArena(rt.image.gpuArena, error);
    if (!rt.arenas[img::kGpu])
      return false;
  }
  rt.outputs.assign(rt.image.outputs.size(), nullptr);
  rt.operandViews.clear();
  rt.resultViews.clear();
  rt.fusedParts.clear();
  for (const OpRecord &op : rt.image.ops) {
    std::vector<TensorView> views;
    for (const TensorDesc &operand : op.operands)
      views.push_back({operand.dtype, operand.shape, nullptr});
    rt.resultViews.push_back({op.result.dtype, op.result.shape, nullptr});
    rt.fusedParts.push_back(
        op.kind == img::kFused
            ? fusedParts(views, rt.resultViews.back(), op.attrs)
            : FusedParts());
    rt.operandViews.push_back(std::move(views));
  }
  // The BLAS loads its kernels now rather than in the first run's first
  // product, wherever a product runs on the host (the CPU's ops, and the
  // GPU's on the sim backend).
  for (size_t k = 0; k < rt.image.ops.size(); ++k) {
    const OpRecord &op = rt.image.ops[k];
    int64_t kind = op.kind == img::kFused && rt.fusedParts[k].producer
                       ? rt.fusedParts[k].producer->kind
                       : op.kind;
    bool onHost = op.device == img::kCpu || !rt.useCuda;
    if (onHost && (kind == img::kLinear || kind == img::kMatmul ||
                   kind == img::kConv2d)) {
      warmUpSequentialBlas();
      break;
    }
  }
  rt.timesOps = rt.options.profile || !rt.options.profileJson.empty() ||
                !rt.options.trace.empty() || rt.options.simTiming;
  rt.opStats.assign(rt.image.ops.size(), OpStats());
  // A scheduled model runs its queues concurrently, unless asked to run
  // serially; one all on one queue has nothing to overlap.
  bool severalQueues = false;
  for (const OpRecord &op : rt.image.ops)
    severalQueues |= op.queue != rt.image.ops[0].queue;
  if (rt.image.scheduled && !rt.options.serial && severalQueues) {
    if (!rt.useCuda) {
      rt.queues = startQueues(rt, rt.options.simJitter);
    } else if (!(rt.cudaQueues = startCudaQueues(rt, error))) {
      error = "CUDA: " + error;
      return false;
    }
  }
  return true;
}

void tandem::rt::tearDown(TandemRuntime &rt) {
  rt.queues.reset(); // joins the workers
  rt.cudaQueues.reset();
  // The GPU first: it unpins the host memory it page-locked.
  if (rt.useCuda) {
    cuda::stop(rt.gpu);
    rt.gpu = nullptr;
  } else
    std::free(rt.arenas[img::kGpu]);
  std::free(rt.arenas[img::kCpu]);
  rt.arenas = {nullptr, nullptr};
}

std::string tandem::rt::describeException(std::exception_ptr exception) {
  try {
    std::rethrow_exception(exception);
  } catch (const std::bad_alloc &) {
    return "out of host memory (the model's buffers, inputs or weights do "
           "not fit)";
  } catch (const std::exception &e) {
    return std::string("internal error: ") + e.what();
  } catch (...) {
    return "internal error: an unknown exception";
  }
}

void tandem::rt::recordFailure(TandemRuntime &rt, const std::string &message) {
  std::lock_guard<std::mutex> lock(rt.statsMutex);
  if (rt.failure.empty())
    rt.failure = message;
  rt.failed = true;
}

void tandem::rt::clearFailure(TandemRuntime &rt) {
  rt.failure.clear();
  rt.failed = false;
}

void tandem::rt::executeOp(TandemRuntime &rt, int32_t index, void **operands,
                           void *result) {
  if (rt.queues)
    submit(*rt.queues, index, operands, result);
  else if (rt.cudaQueues)
    submit(*rt.cudaQueues, index, operands, result);
  else
    executeOpNow(rt, index, operands, result);
}

namespace {

/// --sim-timing=profile: holds the op until its predicted time (times the
/// scale) has passed since it started; an op the stand-in ran slower than
/// that is counted as an overrun. Returns the op's paced seconds.
double paceToPrediction(TandemRuntime &rt, const OpRecord &op, double start,
                        double elapsed) {
  double slot = op.predictedSeconds * rt.options.simTimeScale;
  if (slot <= 0)
    return elapsed;
  ++rt.pacedRuns;
  if (elapsed > slot) {
    ++rt.pacedOverruns;
    return elapsed;
  }
  std::this_thread::sleep_until(
      std::chrono::steady_clock::time_point(
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(start + slot))));
  return now() - start;
}

} // namespace

void tandem::rt::countCopyLocked(TandemRuntime &rt, const OpRecord &op) {
  int64_t bytes = op.result.bytes();
  if (op.device == img::kGpu) {
    ++rt.h2dCount;
    rt.h2dBytes += bytes;
  } else {
    ++rt.d2hCount;
    rt.d2hBytes += bytes;
  }
}

void tandem::rt::executeOpNow(TandemRuntime &rt, int32_t index,
                              void **operands, void *result) {
  if (rt.failed)
    return;
  const OpRecord &op = rt.image.ops[index];
  std::vector<TensorView> &views = rt.operandViews[index];
  for (size_t k = 0; k < views.size(); ++k)
    views[k].data = operands[k];
  TensorView &out = rt.resultViews[index];
  out.data = result;
  double start = rt.timesOps ? now() : 0;
  std::string error;
  bool ok;
  if (op.kind == img::kFused && (!rt.useCuda || op.device == img::kCpu)) {
    // The model's own code; sim runs its GPU groups through it too.
    FusedParts &parts = rt.fusedParts[index];
    bindFusedParts(parts, views, out);
    ok = runFusedGroup(
        rt.image.kernels[img::readAttrs<img::FusedAttrs>(op.attrs).kernel],
        views, out, op.attrs, parts, error);
  } else if (!rt.useCuda) {
    ok = runCpuKernel(op.kind, views, out, op.attrs, error);
  } else if (op.kind == img::kTransfer) {
    ok = op.device == img::kGpu
             ? cuda::toDevice(rt.gpu, result, operands[0], op.result.bytes(),
                              error)
             : cuda::toHost(rt.gpu, result, operands[0], op.result.bytes(),
                            error);
    if (ok && op.device == img::kGpu && rt.waitEachGpuOp)
      ok = cuda::synchronize(rt.gpu, error);
  } else if (op.device == img::kGpu) {
    ok = cuda::runKernel(rt.gpu, op.kind, views, out, op.attrs, error);
    if (ok && rt.waitEachGpuOp)
      ok = cuda::synchronize(rt.gpu, error);
  } else {
    ok = runCpuKernel(op.kind, views, out, op.attrs, error);
  }
  if (!ok) {
    recordFailure(rt, op.name + " at " + op.loc + ": " + error);
    return;
  }
  if (!rt.timesOps)
    return;
  double seconds = now() - start;
  if (rt.options.simTiming)
    seconds = paceToPrediction(rt, op, start, seconds);
  std::lock_guard<std::mutex> lock(rt.statsMutex);
  if (op.kind == img::kTransfer) {
    countCopyLocked(rt, op);
    rt.copySeconds += seconds;
  }
  if (!rt.options.trace.empty())
    rt.trace.push_back({op.name, op.device, op.queue, start - rt.origin, seconds});
  rt.opStats[index].record(seconds);
}

void tandem::rt::finishRun(TandemRuntime &rt) {
  if (rt.queues)
    drain(*rt.queues);
  if (rt.cudaQueues) {
    finishCudaRun(*rt.cudaQueues);
    return;
  }
  std::string error;
  if (!rt.useCuda || cuda::synchronize(rt.gpu, error))
    return;
  // Without reports, GPU ops are not waited for one by one, so the op that
  // failed is not known here; with them, executeOp names it.
  recordFailure(rt, "a GPU op of this run failed: " + error +
                        " (run with --profile to wait for each GPU op and "
                        "name the one that fails)");
}
