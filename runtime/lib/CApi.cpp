//===- CApi.cpp - the C ABI of tandem_runtime.h ---------------------------===//
//
// The entry points a compiled model calls, but tandem_rt_main (Driver.cpp):
// the library form's open, load, infer and close, which report errors in
// the caller's buffer and let no exception escape, and the calls of the
// model's compiled body (arenas, inputs, weights, outputs, each op).
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "Queues.h"
#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

using namespace tandem::rt;
namespace img = tandem::image;

static void setError(char *buffer, int64_t size, const std::string &message) {
  if (!buffer || size <= 0)
    return;
  size_t length = std::min<size_t>(message.size(), size_t(size - 1));
  std::memcpy(buffer, message.data(), length);
  buffer[length] = '\0';
}

/// Runtimes open in this library; the last one closed stops the kernels'
/// worker threads, so that a library can be unloaded leaving nothing behind.
static std::atomic<int> openRuntimes{0};

static TandemRuntime *openRuntime(const int64_t *image, const char *strings,
                                  const void *kernels,
                                  void (*run)(TandemRuntime *),
                                  const char *weights, const char *backend,
                                  char *error, int64_t errorSize) {
  auto rt = std::make_unique<TandemRuntime>();
  std::string imageError;
  if (!decodeImage(image, strings,
                   reinterpret_cast<const img::FusedKernel *>(kernels),
                   rt->image, imageError)) {
    setError(error, errorSize, imageError);
    return nullptr;
  }
  rt->options.backend = backend && *backend ? backend : "auto";
  rt->run = run;
  std::string message;
  if (!setUp(*rt, message)) {
    setError(error, errorSize, message);
    tearDown(*rt); // what setUp allocated before it failed (the CPU arena)
    return nullptr;
  }
  rt->inputData.resize(rt->image.inputs.size());
  for (size_t k = 0; k < rt->image.inputs.size(); ++k)
    rt->inputData[k].resize(rt->image.inputs[k].bytes());
  if (needsWeightsFile(rt->image) && (!weights || !*weights)) {
    setError(error, errorSize, "the model has weights: pass a safetensors file");
    tearDown(*rt);
    return nullptr;
  }
  if (!loadWeights(*rt, weights ? weights : "", message)) {
    setError(error, errorSize, message);
    tearDown(*rt);
    return nullptr;
  }
  ++openRuntimes;
  return rt.release();
}

extern "C" TandemRuntime *tandem_rt_open(const int64_t *image,
                                         const char *strings,
                                         const void *kernels,
                                         void (*run)(TandemRuntime *),
                                         const char *weights,
                                         const char *backend, char *error,
                                         int64_t errorSize) {
  try {
    return openRuntime(image, strings, kernels, run, weights, backend, error,
                       errorSize);
  } catch (...) {
    setError(error, errorSize, describeException(std::current_exception()));
    return nullptr;
  }
}

extern "C" int tandem_rt_load(TandemRuntime **slot, const int64_t *image,
                              const char *strings, const void *kernels,
                              void (*run)(TandemRuntime *),
                              const char *weights,
                              const char *backend, char *error,
                              int64_t errorSize) {
  // One model per slot (a model library has one): a second load is refused
  // and leaves the loaded model as it was.
  if (*slot) {
    setError(error, errorSize, "a model is already loaded: call "
                               "tandem_model_unload first");
    return 1;
  }
  *slot = tandem_rt_open(image, strings, kernels, run, weights, backend,
                         error, errorSize);
  return *slot ? 0 : 1;
}

static int infer(TandemRuntime *rt, void (*run)(TandemRuntime *),
                 const void *const *inputs, void *const *outputs, char *error,
                 int64_t errorSize) {
  for (size_t k = 0; k < rt->inputData.size(); ++k)
    std::memcpy(rt->inputData[k].data(), inputs[k], rt->inputData[k].size());
  clearFailure(*rt);
  run(rt);
  finishRun(*rt);
  if (!rt->failure.empty()) {
    setError(error, errorSize, rt->failure);
    return 1;
  }
  for (size_t k = 0; k < rt->image.outputs.size(); ++k)
    std::memcpy(outputs[k], rt->outputs[k], rt->image.outputs[k].bytes());
  return 0;
}

extern "C" int tandem_rt_infer(TandemRuntime *rt, void (*run)(TandemRuntime *),
                               const void *const *inputs,
                               void *const *outputs, char *error,
                               int64_t errorSize) {
  if (!rt) {
    setError(error, errorSize, "the model is not loaded: call "
                               "tandem_model_load first");
    return 1;
  }
  // Calls from several threads take turns: a runtime's arenas and its
  // input and output slots serve one call at a time.
  std::lock_guard<std::mutex> lock(rt->callMutex);
  try {
    return infer(rt, run, inputs, outputs, error, errorSize);
  } catch (...) {
    setError(error, errorSize, describeException(std::current_exception()));
    // The run was cut short: the next one starts clean.
    if (rt->cudaQueues)
      resetCudaRun(*rt->cudaQueues);
    return 1;
  }
}

extern "C" void tandem_rt_close(TandemRuntime *rt) {
  if (!rt)
    return;
  {
    std::lock_guard<std::mutex> lock(rt->callMutex); // no call in flight
    tearDown(*rt);
  }
  delete rt;
  if (--openRuntimes == 0) {
    stopWorkers();
    releaseScratch();
  }
}

extern "C" TandemRuntime *tandem_rt_at_load(TandemRuntime *rt) {
  return rt->atLoadRuntime;
}

extern "C" void *tandem_rt_arena(TandemRuntime *rt, int32_t device) {
  return rt->arenas[device];
}

extern "C" void *tandem_rt_input(TandemRuntime *rt, int32_t index) {
  return rt->inputData[index].data();
}

extern "C" void *tandem_rt_weight(TandemRuntime *rt, int32_t index) {
  return rt->weightData[index];
}

extern "C" void tandem_rt_output(TandemRuntime *rt, int32_t index, void *data) {
  rt->outputs[index] = data;
}

extern "C" void tandem_rt_execute(TandemRuntime *rt, int32_t index,
                                  void **operands, void *result) {
  executeOp(*rt, index, operands, result);
}
