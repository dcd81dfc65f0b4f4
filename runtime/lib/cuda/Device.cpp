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

/// The two pinned staging buffers and their events, made on first use.
bool ensureStaging(Device &state, std::string &error) {
  for (int k = 0; k < 2; ++k) {
    if (!state.staging[k] &&
        !check(cudaMallocHost(reinterpret_cast<void **>(&state.staging[k]),
                              kStagingChunk),
               "pinned staging", error))
      return false;
    if (!state.stagingDone[k] &&
        !check(cudaEventCreateWithFlags(&state.stagingDone[k],
                                        cudaEventDisableTiming),
               "staging event", error))
      return false;
  }
  return true;
}

/// Copies go through two pinned buffers of kStagingChunk bytes, chunk by
/// chunk: pageable memory would make the driver stage them anyway, slower,
/// and a buffer the size of the copy would pin gigabytes for a large table.
/// The host's memcpy of one chunk overlaps the DMA of the other. The DMAs
/// run on the device's stream, after the ops before them. A buffer is
/// refilled only once the DMA that last used it, in this copy or an earlier
/// one, is done. An upload returns once the host's bytes are all in the
/// staging buffers (its last DMAs may still run: the host memory is free to
/// reuse); a download once the host has every byte.
bool stagedCopy(Device &state, void *dst, const void *src, size_t bytes,
                bool toDevice, std::string &error);

/// A staged copy that, when it fails partway, still waits for the DMAs it
/// started: the next copy must not refill a buffer one of them still reads.
bool staged(Device &state, void *dst, const void *src, size_t bytes,
            bool toDevice, std::string &error) {
  if (stagedCopy(state, dst, src, bytes, toDevice, error))
    return true;
  cudaStreamSynchronize(state.stream);
  return false;
}

bool stagedCopy(Device &state, void *dst, const void *src, size_t bytes,
                bool toDevice, std::string &error) {
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
  size_t first = size_t(state.nextStaging);
  state.nextStaging = int((first + chunks) % 2);
  if (toDevice) {
    for (size_t i = 0; i < chunks; ++i) {
      int k = int((first + i) % 2);
      // The DMA that last used this buffer must be done before it is
      // refilled (an event never recorded is complete).
      if (!check(cudaEventSynchronize(state.stagingDone[k]),
                 "host-to-device copy", error))
        return false;
      std::memcpy(state.staging[k], in + i * kStagingChunk, span(i));
      if (!check(cudaMemcpyAsync(out + i * kStagingChunk, state.staging[k],
                                 span(i), cudaMemcpyHostToDevice,
                                 state.stream),
                 "host-to-device copy", error) ||
          !check(cudaEventRecord(state.stagingDone[k], state.stream),
                 "host-to-device copy", error))
        return false;
    }
    return true;
  }
  // Device to host: the DMA of chunk i + 1 runs while chunk i is copied out.
  auto fetch = [&](size_t i) {
    int k = int((first + i) % 2);
    return check(cudaMemcpyAsync(state.staging[k], in + i * kStagingChunk,
                                 span(i), cudaMemcpyDeviceToHost,
                                 state.stream),
                 "device-to-host copy", error) &&
           check(cudaEventRecord(state.stagingDone[k], state.stream),
                 "device-to-host copy", error);
  };
  if (!fetch(0))
    return false;
  for (size_t i = 0; i < chunks; ++i) {
    int k = int((first + i) % 2);
    if (i + 1 < chunks && !fetch(i + 1))
      return false;
    if (!check(cudaEventSynchronize(state.stagingDone[k]),
               "device-to-host copy", error))
      return false;
    std::memcpy(out + i * kStagingChunk, state.staging[k], span(i));
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
      !check(cudaMalloc(&state.errorAt, sizeof(*state.errorAt)), "cudaMalloc",
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
  if (state.stream)
    cudaStreamSynchronize(state.stream); // nothing may still use the memory
  if (state.blas)
    cublasApi.destroy(state.blas);
#if TANDEM_HAVE_CUDNN
  if (state.dnn)
    cudnnFor(state)->cudnnDestroy(state.dnn);
#endif
  for (int k = 0; k < 2; ++k) {
    if (state.staging[k])
      cudaFreeHost(state.staging[k]);
    if (state.stagingDone[k])
      cudaEventDestroy(state.stagingDone[k]);
  }
  cudaFree(state.arena);
  cudaFree(state.errorAt);
  if (state.stream)
    cudaStreamDestroy(state.stream);
  delete device;
}

void *cuda::arena(Device *device) { return device->arena; }

bool cuda::toDevice(Device *device, void *deviceData, const void *host,
                    size_t bytes, std::string &error) {
  OnDevice onDevice;
  return staged(*device, deviceData, host, bytes, true, error);
}

bool cuda::toHost(Device *device, void *host, const void *deviceData,
                  size_t bytes, std::string &error) {
  OnDevice onDevice;
  return staged(*device, host, deviceData, bytes, false, error);
}

bool cuda::synchronize(Device *device, std::string &error) {
  OnDevice onDevice;
  return check(cudaStreamSynchronize(device->stream), "GPU work", error);
}
