//===- CudaBackend.h - the CUDA backend of the runtime ----------*- C++ -*-===//
//
// GPU-placed ops on a CUDA GPU: one arena in device memory (allocated once),
// resident weights uploaded at load, transfers through pinned staging
// buffers, cuBLAS for GEMMs and kernels of ours for everything else. Built
// whenever nvcc is present (runtime/lib/cuda/: the device and copies, the
// dispatch, a file of kernels per kernel family); elsewhere
// CudaBackendNone.cpp says CUDA is not built in.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_CUDABACKEND_H
#define TANDEM_RUNTIME_LIB_CUDABACKEND_H

#include "cpu/CpuKernels.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::rt::cuda {

/// True if this runtime has CUDA and a GPU is visible; else `why` says not.
bool available(std::string &why);

/// One line per visible GPU: name, memory, compute capability (honours
/// CUDA_VISIBLE_DEVICES), or why there is none.
std::string describeDevices();

/// Sets up GPU 0 with an arena of `arenaBytes`; false with `error` if not.
bool start(int64_t arenaBytes, std::string &error);
void stop();
void *arena();

/// Copies between host and device memory, synchronously.
bool toDevice(void *device, const void *host, size_t bytes, std::string &error);
bool toHost(void *host, const void *device, size_t bytes, std::string &error);

/// Runs op `kind` on the GPU on device buffers (host operands, such as
/// dynamic_slice's offsets, are host pointers) and waits for it.
bool runKernel(int64_t kind, const std::vector<TensorView> &operands,
               const TensorView &result, const std::vector<int64_t> &attrs,
               std::string &error);

/// True iff runKernel has a kernel for op `kind` (which may still refuse
/// some element types). Needs no GPU. Transfer has none (toDevice and toHost
/// are its copies), nor has Shape (a CPU-only op).
bool hasKernel(int64_t kind);

} // namespace tandem::rt::cuda

#endif // TANDEM_RUNTIME_LIB_CUDABACKEND_H
