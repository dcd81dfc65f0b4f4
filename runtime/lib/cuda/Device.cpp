//===- Device.cpp - the CUDA backend's GPU, memory and copies -------------===//
//
// A runtime's GPU (struct Device): its arena in device memory (allocated at
// start), its stream, its cuBLAS handle (cuBLAS is opened on the first
// start), the two pinned staging buffers host copies go through in chunks,
// and the position checking kernels record a failure at; and the checks
// every kernel launch ends with. Host code only (the CUDA runtime's API): the
// kernels are in the family files, their dispatch in Dispatch.cpp.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

using namespace tandem::rt;
using namespace tandem::rt::cuda;

namespace {

Cublas cublasApi;

/// cuBLAS, opened when the CUDA backend starts rather than linked: a model
/// run on the CPU or the sim backend never loads its hundreds of megabytes,
/// and, once loaded, it stays (RTLD_NODELETE: cuBLAS leaks memory each time
/// it is unloaded, so a process that loads and closes many models would
/// grow).
bool openCublas(std::string &error);

/// Opens cuBLAS once per process (two models may start at once on two
/// threads); every later call gets the first one's answer.
bool loadCublas(std::string &error) {
  static std::once_flag once;
  static bool loaded = false;
  static std::string why;
  std::call_once(once, [] { loaded = openCublas(why); });
  if (!loaded)
    error = why;
  return loaded;
}

/// A CUDA library opened for good (RTLD_NODELETE: unloading leaks), by
/// soname; null with `error` naming it where it cannot be loaded.
void *openLibrary(const std::string &name, std::string &error) {
  void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!library) {
    const char *why = dlerror();
    error = "cannot load " + name + ": " + (why ? why : "not found");
  }
  return library;
}

/// Binds `entry` to `symbol` of `library`; false with `error` naming the
/// library and the symbol where it lacks it.
template <typename Fn>
bool bind(void *library, const std::string &name, const char *symbol,
          Fn &entry, std::string &error) {
  entry = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (!entry)
    error = name + " lacks " + symbol;
  return entry != nullptr;
}

bool openCublas(std::string &error) {
  std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void *library = openLibrary(name, error);
  Cublas api;
  if (!library ||
      !bind(library, name, "cublasCreate_v2", api.create, error) ||
      !bind(library, name, "cublasDestroy_v2", api.destroy, error) ||
      !bind(library, name, "cublasSetStream_v2", api.setStream, error) ||
      !bind(library, name, "cublasGemmEx", api.gemmEx, error) ||
      !bind(library, name, "cublasGemmStridedBatchedEx",
            api.gemmStridedBatchedEx, error))
    return false;
  cublasApi = api;
  return true;
}

#if TANDEM_HAVE_CUDNN
/// cuDNN, opened like cuBLAS (and kept: RTLD_NODELETE), but on the first
/// convolution: a model without one never loads it. False with `error`
/// where it is missing or lacks an entry point.
bool loadCudnn(Cudnn &api, std::string &error) {
  std::string name = "libcudnn.so." + std::to_string(CUDNN_MAJOR);
  void *library = openLibrary(name, error);
#define TANDEM_CUDNN_BIND(function)                                            \
  &&bind(library, name, #function, api.function, error)
  return library TANDEM_CUDNN_FUNCTIONS(TANDEM_CUDNN_BIND);
#undef TANDEM_CUDNN_BIND
}
#endif

/// A staging pair's pinned buffers and their events, made on first use.
bool ensureStaging(Staging &staging, std::string &error) {
  for (int k = 0; k < 2; ++k) {
    if (!staging.buffer[k] &&
        !check(cudaMallocHost(reinterpret_cast<void **>(&staging.buffer[k]),
                              kStagingChunk),
               "pinned staging", error))
      return false;
    if (!staging.done[k] &&
        !check(cudaEventCreateWithFlags(&staging.done[k],
                                        cudaEventDisableTiming),
               "staging event", error))
      return false;
  }
  return true;
}

void freeStaging(Staging &staging) {
  for (int k = 0; k < 2; ++k) {
    if (staging.buffer[k])
      cudaFreeHost(staging.buffer[k]);
    if (staging.done[k])
      cudaEventDestroy(staging.done[k]);
    staging.buffer[k] = nullptr;
    staging.done[k] = nullptr;
  }
}

/// Copies of pageable memory go through two pinned buffers of
/// kStagingChunk bytes, chunk by chunk: pageable memory would make the
/// driver stage them anyway, slower, and a buffer the size of the copy
/// would pin gigabytes for a large table. The host's memcpy of one chunk
/// overlaps the DMA of the other. The DMAs run on `stream`, after what was
/// enqueued there before. A buffer is refilled only once the DMA that last
/// used it, in this copy or an earlier one, is done. An upload returns once
/// the host's bytes are all in the staging buffers (its last DMAs may still
/// run: the host memory is free to reuse); a download once the host has
/// every byte.
bool stagedCopy(Staging &state, cudaStream_t stream, void *dst,
                const void *src, size_t bytes, bool toDevice,
                std::string &error);

/// A staged copy that, when it fails partway, still waits for the DMAs it
/// started: the next copy must not refill a buffer one of them still reads.
bool staged(Staging &state, cudaStream_t stream, void *dst, const void *src,
            size_t bytes, bool toDevice, std::string &error) {
  if (stagedCopy(state, stream, dst, src, bytes, toDevice, error))
    return true;
  cudaStreamSynchronize(stream);
  return false;
}

bool stagedCopy(Staging &state, cudaStream_t stream, void *dst,
                const void *src, size_t bytes, bool toDevice,
                std::string &error) {
  if (bytes == 0)
    return true;
  if (!ensureStaging(state, error))
    return false;
  size_t chunks = (bytes + kStagingChunk - 1) / kStagingChunk;
  auto span = [&](size_t i) {
    return std::min(kStagingChunk, bytes - i * kStagingChunk);
  };
  auto *out = static_cast<uint8_t *>(dst);
  const auto *in = static_cast<const uint8_t *>(src);
  // Chunks take the buffers in turn across copies too, so that two small
  // uploads in a row need not wait for each other's DMA.
  size_t first = size_t(state.next);
  state.next = int((first + chunks) % 2);
  if (toDevice) {
    for (size_t i = 0; i < chunks; ++i) {
      int k = int((first + i) % 2);
      // The DMA that last used this buffer must be done before it is
      // refilled (an event never recorded is complete).
      if (!check(cudaEventSynchronize(state.done[k]),
                 "host-to-device copy", error))
        return false;
      std::memcpy(state.buffer[k], in + i * kStagingChunk, span(i));
      if (!check(cudaMemcpyAsync(out + i * kStagingChunk, state.buffer[k],
                                 span(i), cudaMemcpyHostToDevice, stream),
                 "host-to-device copy", error) ||
          !check(cudaEventRecord(state.done[k], stream),
                 "host-to-device copy", error))
        return false;
    }
    return true;
  }
  // Device to host: the DMA of chunk i + 1 runs while chunk i is copied out.
  auto fetch = [&](size_t i) {
    int k = int((first + i) % 2);
    return check(cudaMemcpyAsync(state.buffer[k], in + i * kStagingChunk,
                                 span(i), cudaMemcpyDeviceToHost, stream),
                 "device-to-host copy", error) &&
           check(cudaEventRecord(state.done[k], stream),
                 "device-to-host copy", error);
  };
  if (!fetch(0))
    return false;
  for (size_t i = 0; i < chunks; ++i) {
    int k = int((first + i) % 2);
    if (i + 1 < chunks && !fetch(i + 1))
      return false;
    if (!check(cudaEventSynchronize(state.done[k]),
               "device-to-host copy", error))
      return false;
    std::memcpy(out + i * kStagingChunk, state.buffer[k], span(i));
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Shared with the kernels' files (CudaSupport.h)
//===----------------------------------------------------------------------===//

const Cublas &cuda::cublas() { return cublasApi; }

#if TANDEM_HAVE_CUDNN
const Cudnn *cuda::cudnnFor(Device &device) {
  static Cudnn api;
  static std::string loadError;
  static std::once_flag loaded;
  std::call_once(loaded, [] {
    if (!loadCudnn(api, loadError))
      api = Cudnn();
  });
  if (!device.dnnTried) {
    device.dnnTried = true;
    std::string why = loadError;
    if (api.cudnnCreate) {
      const char *step = "cudnnCreate";
      cudnnStatus_t status = api.cudnnCreate(&device.dnn);
      if (status == CUDNN_STATUS_SUCCESS) {
        step = "cudnnSetStream";
        status = api.cudnnSetStream(device.dnn, device.stream);
      }
      if (status != CUDNN_STATUS_SUCCESS) {
        why = std::string(step) + ": " + api.cudnnGetErrorString(status);
        if (device.dnn)
          api.cudnnDestroy(device.dnn);
        device.dnn = nullptr;
      }
    }
    static std::once_flag noted;
    if (!device.dnn)
      std::call_once(noted, [&] {
        std::fprintf(stderr, "note: cuDNN is not usable (%s): GPU "
                             "convolutions use Tandem's own kernel\n",
                     why.c_str());
      });
  }
  return device.dnn ? &api : nullptr;
}
#endif

bool cuda::check(cudaError_t status, const char *what, std::string &error) {
  if (status == cudaSuccess)
    return true;
  error = std::string(what) + ": " + cudaGetErrorString(status);
  return false;
}

/// What a cuBLAS status means, in words, with its name.
static std::string describeBlasStatus(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "cuBLAS could not initialize (CUBLAS_STATUS_NOT_INITIALIZED)";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "cuBLAS ran out of GPU memory (CUBLAS_STATUS_ALLOC_FAILED)";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "cuBLAS was given an invalid size or leading dimension "
           "(CUBLAS_STATUS_INVALID_VALUE)";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "cuBLAS does not support this GPU for the operation "
           "(CUBLAS_STATUS_ARCH_MISMATCH)";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "cuBLAS could not access GPU memory (CUBLAS_STATUS_MAPPING_ERROR)";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "a cuBLAS kernel failed to run (CUBLAS_STATUS_EXECUTION_FAILED)";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "cuBLAS failed internally (CUBLAS_STATUS_INTERNAL_ERROR)";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "cuBLAS does not support this operation or type "
           "(CUBLAS_STATUS_NOT_SUPPORTED)";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "cuBLAS license error (CUBLAS_STATUS_LICENSE_ERROR)";
  default:
    return "cuBLAS failed with status " + std::to_string(int(status));
  }
}

bool cuda::checkBlas(cublasStatus_t status, std::string &error) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  error = describeBlasStatus(status);
  return false;
}

bool cuda::launched(std::string &error) {
  return check(cudaGetLastError(), "kernel launch", error);
}

bool KernelCall::resetErrorAt() const {
  return check(cudaMemsetAsync(device.errorAt, 0xff, sizeof(*device.errorAt),
                               stream()),
               "resetting the error position", error);
}

bool KernelCall::readErrorAt(int64_t &first) const {
  unsigned long long at = ~0ULL;
  if (!check(cudaMemcpyAsync(&at, device.errorAt, sizeof(at),
                             cudaMemcpyDeviceToHost, stream()),
             "reading the error position", error) ||
      !check(cudaStreamSynchronize(stream()), "kernel", error))
    return false;
  first = at == ~0ULL ? -1 : int64_t(at);
  return true;
}

//===----------------------------------------------------------------------===//
// The backend (CudaBackend.h)
//===----------------------------------------------------------------------===//

bool cuda::available(std::string &why) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    why = status != cudaSuccess ? cudaGetErrorString(status)
                                : "no CUDA GPU is visible";
    return false;
  }
  // The kernels are built for TANDEM_CUDA_MIN_CAPABILITY and newer (the
  // build's CMAKE_CUDA_ARCHITECTURES); an older card cannot run them.
  cudaDeviceProp properties;
  status = cudaGetDeviceProperties(&properties, 0);
  if (status != cudaSuccess) {
    why = cudaGetErrorString(status);
    return false;
  }
  int capability = properties.major * 10 + properties.minor;
  if (capability < TANDEM_CUDA_MIN_CAPABILITY) {
    why = std::string("GPU 0 (") + properties.name +
          ") has compute capability " + std::to_string(properties.major) +
          "." + std::to_string(properties.minor) +
          "; this runtime's CUDA kernels are built for " +
          std::to_string(TANDEM_CUDA_MIN_CAPABILITY / 10) + "." +
          std::to_string(TANDEM_CUDA_MIN_CAPABILITY % 10) + " and newer";
    return false;
  }
  return true;
}

std::string cuda::describeDevices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    return "cuda: no GPU visible\n";
  std::string text;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp properties;
    if (cudaGetDeviceProperties(&properties, i) != cudaSuccess)
      continue;
    text += "cuda:" + std::to_string(i) + ": " + properties.name + ", " +
            std::to_string(properties.totalGlobalMem) +
            " bytes, compute capability " + std::to_string(properties.major) +
            "." + std::to_string(properties.minor) + "\n";
  }
  return text;
}

static bool startBackend(Device &state, int64_t arenaBytes,
                         std::string &error);

cuda::Device *cuda::start(int64_t arenaBytes, bool allowTf32,
                          std::string &error) {
  auto *device = new Device();
  device->allowTf32 = allowTf32;
  if (startBackend(*device, arenaBytes, error))
    return device;
  stop(device); // a failed start leaves nothing allocated
  return nullptr;
}

static bool startBackend(Device &state, int64_t arenaBytes,
                         std::string &error) {
  // cuBLAS and the context take their memory first, so that what is left is
  // what the arena can have: a plan near the card's memory then fails here,
  // naming the bytes, rather than in the first GEMM.
  if (!check(cudaSetDevice(0), "cudaSetDevice", error) ||
      !check(cudaStreamCreateWithFlags(&state.stream, cudaStreamNonBlocking),
             "creating the stream", error) ||
      !check(cudaStreamCreateWithFlags(&state.h2dStream, cudaStreamNonBlocking),
             "creating the host-to-device stream", error) ||
      !check(cudaStreamCreateWithFlags(&state.d2hStream, cudaStreamNonBlocking),
             "creating the device-to-host stream", error) ||
      !check(cudaMalloc(&state.errorAt, sizeof(*state.errorAt)), "cudaMalloc",
             error) ||
      !check(cudaMalloc(&state.reduceScratch, kReduceScratchBytes), "cudaMalloc",
             error) ||
      !loadCublas(error) || !checkBlas(cublasApi.create(&state.blas), error) ||
      !checkBlas(cublasApi.setStream(state.blas, state.stream), error))
    return false;
  size_t freeBytes = 0, total = 0;
  if (!check(cudaMemGetInfo(&freeBytes, &total), "cudaMemGetInfo", error))
    return false;
  int64_t asked = std::max<int64_t>(arenaBytes, 256);
  int64_t usable = int64_t(freeBytes) - kWorkspaceHeadroom;
  if (asked > usable) {
    error = "the memory plan needs a GPU arena of " + std::to_string(asked) +
            " bytes, but GPU 0 has " + std::to_string(freeBytes) +
            " bytes free of " +
            std::to_string(total) + " (less " +
            std::to_string(kWorkspaceHeadroom) +
            " kept for cuBLAS's and cuDNN's own memory): compile with a smaller "
            "--gpu-memory";
    return false;
  }
  state.arenaBytes = asked;
  return check(cudaMalloc(&state.arena, size_t(asked)),
               "allocating the GPU arena", error);
}

void cuda::stop(Device *device) {
  if (!device)
    return;
  OnDevice onDevice;
  Device &state = *device;
  // Nothing may still use the memory.
  for (cudaStream_t stream : {state.stream, state.h2dStream, state.d2hStream})
    if (stream)
      cudaStreamSynchronize(stream);
  dropGraph(device);
  for (auto [begin, end] : state.pinned)
    cudaHostUnregister(const_cast<uint8_t *>(begin));
  for (std::vector<cudaEvent_t> *events : {&state.opDone, &state.opStart})
    for (cudaEvent_t event : *events)
      if (event)
        cudaEventDestroy(event);
  for (cudaEvent_t event : {state.fork, state.joinH2D, state.joinD2H})
    if (event)
      cudaEventDestroy(event);
  if (state.blas)
    cublasApi.destroy(state.blas);
#if TANDEM_HAVE_CUDNN
  if (state.dnn)
    cudnnFor(state)->cudnnDestroy(state.dnn);
#endif
  for (Staging *staging : {&state.staging, &state.h2dStaging, &state.d2hStaging})
    freeStaging(*staging);
  if (state.generated)
    cudaLibraryUnload(state.generated);
  cudaFree(state.arena);
  cudaFree(state.errorAt);
  cudaFree(state.reduceScratch);
  for (cudaStream_t stream : {state.stream, state.h2dStream, state.d2hStream})
    if (stream)
      cudaStreamDestroy(stream);
  delete device;
}

void *cuda::arena(Device *device) { return device->arena; }

bool cuda::toDevice(Device *device, void *deviceData, const void *host,
                    size_t bytes, std::string &error) {
  OnDevice onDevice;
  return staged(device->staging, device->stream, deviceData, host, bytes, true,
                error);
}

bool cuda::toHost(Device *device, void *host, const void *deviceData,
                  size_t bytes, std::string &error) {
  OnDevice onDevice;
  return staged(device->staging, device->stream, host, deviceData, bytes,
                false, error);
}

bool cuda::synchronize(Device *device, std::string &error) {
  OnDevice onDevice;
  // The copy engines first: the compute stream's failure, if any, is the
  // one reported last and so kept.
  for (cudaStream_t stream : {device->h2dStream, device->d2hStream})
    if (!check(cudaStreamSynchronize(stream), "GPU copies", error))
      return false;
  return check(cudaStreamSynchronize(device->stream), "GPU work", error);
}

//===----------------------------------------------------------------------===//
// Scheduled runs (CudaBackend.h)
//===----------------------------------------------------------------------===//

namespace {

cudaStream_t streamOf(Device &device, GpuQueue queue) {
  switch (queue) {
  case GpuQueue::HostToDevice:
    return device.h2dStream;
  case GpuQueue::DeviceToHost:
    return device.d2hStream;
  case GpuQueue::Compute:
    break;
  }
  return device.stream;
}

/// Whether [host, host + bytes) lies in one pinned range.
bool isPinned(const Device &device, const void *host, size_t bytes) {
  auto *begin = static_cast<const uint8_t *>(host);
  auto after = std::upper_bound(
      device.pinned.begin(), device.pinned.end(), begin,
      [](const uint8_t *value, const auto &range) { return value < range.first; });
  if (after == device.pinned.begin())
    return false;
  const auto &range = *std::prev(after);
  return begin >= range.first && begin + bytes <= range.second;
}

bool validOp(const Device &device, size_t op, std::string &error) {
  if (op < device.opDone.size())
    return true;
  error = "op #" + std::to_string(op) + " has no event (the schedule was not "
          "prepared)";
  return false;
}

} // namespace

bool cuda::pinHostMemory(Device *device, const void *host, size_t bytes,
                         bool readOnly, std::string &why) {
  OnDevice onDevice;
  if (bytes == 0 || isPinned(*device, host, bytes))
    return true;
  unsigned flags = cudaHostRegisterPortable;
  if (readOnly) {
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported,
                               cudaDevAttrHostRegisterReadOnlySupported,
                               0) != cudaSuccess ||
        !supported) {
      cudaGetLastError();
      why = "this GPU cannot page-lock read-only memory";
      return false;
    }
    flags |= cudaHostRegisterReadOnly;
  }
  cudaError_t status =
      cudaHostRegister(const_cast<void *>(host), bytes, flags);
  if (status != cudaSuccess) {
    cudaGetLastError(); // not a failure of the run: copies are staged
    why = std::string("cudaHostRegister: ") + cudaGetErrorString(status);
    return false;
  }
  auto *begin = static_cast<const uint8_t *>(host);
  auto at = std::lower_bound(
      device->pinned.begin(), device->pinned.end(), begin,
      [](const auto &range, const uint8_t *value) { return range.first < value; });
  device->pinned.insert(at, {begin, begin + bytes});
  return true;
}

bool cuda::prepareSchedule(Device *device, size_t ops, bool timing,
                           std::string &error) {
  OnDevice onDevice;
  // Blocking: a thread waiting for an op yields its core (the CPU worker
  // shares the cores with the CPU kernels) instead of spinning.
  unsigned flags = cudaEventBlockingSync |
                   (timing ? cudaEventDefault : cudaEventDisableTiming);
  auto make = [&](std::vector<cudaEvent_t> &events) {
    events.assign(ops, nullptr);
    for (cudaEvent_t &event : events)
      if (!check(cudaEventCreateWithFlags(&event, flags), "creating an event",
                 error))
        return false;
    return true;
  };
  if (!make(device->opDone) || (timing && !make(device->opStart)))
    return false;
  for (cudaEvent_t *event : {&device->fork, &device->joinH2D, &device->joinD2H})
    if (!*event && !check(cudaEventCreateWithFlags(event, cudaEventDisableTiming),
                          "creating an event", error))
      return false;
  return true;
}

bool cuda::streamWaitFor(Device *device, GpuQueue queue, size_t waited,
                         std::string &error) {
  OnDevice onDevice;
  return validOp(*device, waited, error) &&
         check(cudaStreamWaitEvent(streamOf(*device, queue),
                                   device->opDone[waited], 0),
               "waiting for another queue", error);
}

bool cuda::hostWaitFor(Device *device, size_t op, std::string &error) {
  OnDevice onDevice;
  return validOp(*device, op, error) &&
         check(cudaEventSynchronize(device->opDone[op]), "GPU work", error);
}

bool cuda::recordStart(Device *device, GpuQueue queue, size_t op,
                       std::string &error) {
  if (device->opStart.empty())
    return true; // not timing
  OnDevice onDevice;
  return validOp(*device, op, error) &&
         check(cudaEventRecord(device->opStart[op], streamOf(*device, queue)),
               "recording an event", error);
}

bool cuda::recordDone(Device *device, GpuQueue queue, size_t op,
                      std::string &error) {
  OnDevice onDevice;
  return validOp(*device, op, error) &&
         check(cudaEventRecord(device->opDone[op], streamOf(*device, queue)),
               "recording an event", error);
}

bool cuda::opSeconds(Device *device, size_t op, size_t first, double &start,
                     double &seconds, std::string &error) {
  if (device->opStart.empty() || !validOp(*device, op, error) ||
      !validOp(*device, first, error))
    return false;
  OnDevice onDevice;
  float fromFirst = 0, took = 0;
  if (!check(cudaEventElapsedTime(&fromFirst, device->opStart[first],
                                  device->opStart[op]),
             "timing an op", error) ||
      !check(cudaEventElapsedTime(&took, device->opStart[op],
                                  device->opDone[op]),
             "timing an op", error))
    return false;
  start = fromFirst * 1e-3;
  seconds = took * 1e-3;
  return true;
}

bool cuda::copyOnQueue(Device *device, GpuQueue queue, void *dst,
                       const void *src, size_t bytes, std::string &error) {
  OnDevice onDevice;
  bool toDevice = queue == GpuQueue::HostToDevice;
  const void *host = toDevice ? src : dst;
  cudaStream_t stream = streamOf(*device, queue);
  if (isPinned(*device, host, bytes))
    return check(cudaMemcpyAsync(dst, src, bytes,
                                 toDevice ? cudaMemcpyHostToDevice
                                          : cudaMemcpyDeviceToHost,
                                 stream),
                 toDevice ? "host-to-device copy" : "device-to-host copy",
                 error);
  // Staging waits on the host for its DMAs, and a graph would replay the
  // DMA out of the staging buffer with the bytes of the run it captured:
  // not while capturing (the capture then fails, and the run goes op by op).
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    error = "a copy of host memory that is not page-locked cannot be "
            "captured in a CUDA graph";
    return false;
  }
  Staging &staging = toDevice ? device->h2dStaging : device->d2hStaging;
  return staged(staging, stream, dst, src, bytes, toDevice, error);
}

bool cuda::beginGraphCapture(Device *device, std::string &error) {
  OnDevice onDevice;
  dropGraph(device);
  if (!check(cudaStreamBeginCapture(device->stream,
                                     cudaStreamCaptureModeThreadLocal),
             "beginning a CUDA graph capture", error))
    return false;
  // The copy engines' streams join the capture by waiting for an event of
  // the compute stream's.
  if (check(cudaEventRecord(device->fork, device->stream),
            "beginning a CUDA graph capture", error) &&
      check(cudaStreamWaitEvent(device->h2dStream, device->fork, 0),
            "beginning a CUDA graph capture", error) &&
      check(cudaStreamWaitEvent(device->d2hStream, device->fork, 0),
            "beginning a CUDA graph capture", error))
    return true;
  // Half begun: end the capture, so that the streams run work again.
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(device->stream, &graph);
  if (graph)
    cudaGraphDestroy(graph);
  cudaGetLastError();
  return false;
}

bool cuda::endGraphCapture(Device *device, std::string &error) {
  OnDevice onDevice;
  // The copy engines' streams join back; a failure recorded on any of them
  // during the capture invalidates it, and ending it then reports it.
  bool joined =
      check(cudaEventRecord(device->joinH2D, device->h2dStream),
            "ending a CUDA graph capture", error) &&
      check(cudaEventRecord(device->joinD2H, device->d2hStream),
            "ending a CUDA graph capture", error) &&
      check(cudaStreamWaitEvent(device->stream, device->joinH2D, 0),
            "ending a CUDA graph capture", error) &&
      check(cudaStreamWaitEvent(device->stream, device->joinD2H, 0),
            "ending a CUDA graph capture", error);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(device->stream, &graph);
  cudaGetLastError(); // a failed capture is no error of the run's
  if (!joined || ended != cudaSuccess || !graph) {
    if (joined)
      error = std::string("the run could not be captured as a CUDA graph: ") +
              cudaGetErrorString(ended);
    if (graph)
      cudaGraphDestroy(graph);
    return false;
  }
  cudaError_t made = cudaGraphInstantiate(&device->graph, graph, 0);
  cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    cudaGetLastError();
    device->graph = nullptr;
    error = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(made);
    return false;
  }
  return true;
}

bool cuda::launchGraph(Device *device, std::string &error) {
  OnDevice onDevice;
  if (!device->graph) {
    error = "no CUDA graph was captured";
    return false;
  }
  return check(cudaGraphLaunch(device->graph, device->stream),
               "launching the CUDA graph", error);
}

void cuda::dropGraph(Device *device) {
  if (device->graph)
    cudaGraphExecDestroy(device->graph);
  device->graph = nullptr;
}
