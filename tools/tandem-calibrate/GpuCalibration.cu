//===- GpuCalibration.cu - measuring GPU 0 and the PCIe link --------------===//
//
// Measures what the runtime's CUDA backend pays, the way it pays it: an
// op's dispatch as the runtime's own runKernel enqueues ops on its stream
// back to back (it waits only where the host reads a result), host/device
// copies through the runtime's own staged path
// (cuda::toDevice/toHost: pinned chunks from pageable memory) for the
// profile's default link rates, GEMMs on random matrices (all-zero inputs
// run faster than real ones on some GPUs), and copies from host memory that
// has been written (an untouched buffer reads the shared zero page).
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"
#include "CudaBackend.h"
#include "tandem/runtime/ImageAttrs.h"
#include "tandem/runtime/ModelImage.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

using namespace tandem_calibrate;

namespace {

struct Failure {
  std::string what;
};

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw Failure{std::string(what) + ": " + cudaGetErrorString(status)};
}

void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Failure{std::string(what) + ": cuBLAS status " +
                  std::to_string(int(status))};
}


/// Pseudo-random values in [-1, 1) (a hash of the index), in T.
template <typename T> __global__ void fillRandom(T *data, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u;
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    data[i] = T(float(h) / 2147483648.0f - 1.0f);
  }
}

void fillRandom(void *data, cudaDataType type, size_t n) {
  if (type == CUDA_R_32F)
    fillRandom<<<1024, 256>>>(static_cast<float *>(data), n);
  else if (type == CUDA_R_16F)
    fillRandom<<<1024, 256>>>(static_cast<__half *>(data), n);
  else
    fillRandom<<<1024, 256>>>(static_cast<__nv_bfloat16 *>(data), n);
  check(cudaGetLastError(), "fillRandom");
}

/// Seconds per call of `work` (enqueued `repeats` times, then synchronized).
double timeDevice(int repeats, const std::function<void()> &work) {
  work();
  check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start), "cudaEventRecord");
  for (int i = 0; i < repeats; ++i)
    work();
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3 / repeats;
}

double gemmRate(cublasHandle_t handle, cudaDataType type, int n) {
  size_t bytes = size_t(n) * n * 4;
  void *a, *b, *c;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMalloc(&c, bytes), "cudaMalloc");
  fillRandom(a, type, size_t(n) * n);
  fillRandom(b, type, size_t(n) * n);
  float alpha = 1, beta = 0;
  double seconds = timeDevice(10, [&] {
    check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a,
                       type, n, b, type, n, &beta, c, type, n,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  });
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 2.0 * n * n * double(n) / seconds;
}

/// A host-to-device or device-to-host copy: bandwidth from large copies,
/// latency from tiny synchronous ones. With a `runtime` device, through the
/// runtime's own copies (tandem::rt::cuda::toDevice/toHost), else plain
/// cudaMemcpy.
LinkRates linkRates(tandem::rt::cuda::Device *runtime, void *host,
                    void *device, size_t bytes, bool toDevice) {
  cudaMemcpyKind kind = toDevice ? cudaMemcpyHostToDevice
                                 : cudaMemcpyDeviceToHost;
  void *dst = toDevice ? device : host, *src = toDevice ? host : device;
  auto copy = [&](size_t size) {
    if (!runtime) {
      check(cudaMemcpy(dst, src, size, kind), "cudaMemcpy");
      return;
    }
    std::string error;
    bool ok = toDevice
                  ? tandem::rt::cuda::toDevice(runtime, dst, src, size, error) &&
                        tandem::rt::cuda::synchronize(runtime, error)
                  : tandem::rt::cuda::toHost(runtime, dst, src, size, error);
    if (!ok)
      throw Failure{"the runtime's copy: " + error};
  };
  copy(bytes);
  auto time = [&](int repeats, size_t size) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i)
      copy(size);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
               .count() /
           repeats;
  };
  LinkRates rates;
  rates.latencyUs = time(200, 4) * 1e6;
  rates.bandwidth = bytes / time(5, bytes);
  return rates;
}

/// The cost of one op beyond its work, as the runtime pays it: `ops`
/// one-element fills enqueued through its runKernel, back to back, then one
/// wait (the runtime waits only where the host reads a result).
double dispatchUs(tandem::rt::cuda::Device *device, int ops) {
  using namespace tandem::rt;
  TensorView one{DType::F32, {1}, cuda::arena(device)};
  std::vector<int64_t> attrs;
  tandem::image::writeAttrs(tandem::image::FillAttrs{1.0}, attrs);
  std::string error;
  auto enqueue = [&](int count) {
    for (int i = 0; i < count; ++i)
      if (!cuda::runKernel(device, tandem::image::kFill, {}, one, attrs, error))
        throw Failure{"the runtime's fill kernel: " + error};
    if (!cuda::synchronize(device, error))
      throw Failure{"the runtime's fill kernel: " + error};
  };
  enqueue(100); // warm up
  auto start = std::chrono::steady_clock::now();
  enqueue(ops);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
             .count() /
         ops * 1e6;
}

} // namespace

GpuCalibration tandem_calibrate::calibrateGpu(bool quick) {
  GpuCalibration result;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    result.error = "no CUDA GPU is visible";
    return result;
  }
  try {
    check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp properties;
    check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
    ProcessorRates &gpu = result.gpu;
    gpu.name = properties.name;
    gpu.memoryBytes = int64_t(properties.totalGlobalMem);

    cublasHandle_t handle;
    check(cublasCreate(&handle), "cublasCreate");
    int n = quick ? 2048 : 8192;
    gpu.f32Flops = gemmRate(handle, CUDA_R_32F, n);
    gpu.f16Flops = gemmRate(handle, CUDA_R_16F, n);
    gpu.bf16Flops = gemmRate(handle, CUDA_R_16BF, n);
    gpu.intOps = gpu.f32Flops;
    cublasDestroy(handle);

    size_t bytes = size_t(quick ? 64 : 256) << 20;
    void *deviceA, *deviceB;
    check(cudaMalloc(&deviceA, bytes), "cudaMalloc");
    check(cudaMalloc(&deviceB, bytes), "cudaMalloc");
    double copySeconds = timeDevice(20, [&] {
      check(cudaMemcpyAsync(deviceB, deviceA, bytes, cudaMemcpyDeviceToDevice),
            "cudaMemcpyAsync");
    });
    gpu.memoryBandwidth = 2.0 * bytes / copySeconds; // read and write

    // Host memory as a model's inputs and weights are: pageable, written.
    void *pageable = std::malloc(bytes);
    if (!pageable)
      throw Failure{"out of host memory for the copy test"};
    std::memset(pageable, 0x5a, bytes);
    result.h2dPageable = linkRates(nullptr, pageable, deviceA, bytes, true);
    result.d2hPageable = linkRates(nullptr, pageable, deviceA, bytes, false);
    // The profile's default ("pinned") rates: the runtime's staged copies,
    // pageable memory through its pinned buffers, as every transfer goes.
    std::string error;
    tandem::rt::cuda::Device *device = tandem::rt::cuda::start(256, false, error);
    if (!device)
      throw Failure{"starting the runtime's CUDA backend: " + error};
    result.h2dPinned = linkRates(device, pageable, deviceA, bytes, true);
    result.d2hPinned = linkRates(device, pageable, deviceA, bytes, false);
    gpu.dispatchUs = dispatchUs(device, quick ? 2000 : 20000);
    tandem::rt::cuda::stop(device);
    std::free(pageable);
    cudaFree(deviceA);
    cudaFree(deviceB);
    result.present = true;
  } catch (const Failure &failure) {
    result.error = failure.what;
  }
  return result;
}
