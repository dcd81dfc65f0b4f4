//===- CudaSupport.h - what the CUDA backend's files share ------*- C++ -*-===//
//
// Private to runtime/lib/cuda/. A runtime's Device (made by Device.cpp),
// the checks a launch ends with, layouts as the kernels take them, and the
// table of kernels by op kind that each family file (<Family>.cu, as
// OpKinds.def assigns kinds to families) fills. Host code only, so that
// Device.cpp and Dispatch.cpp are plain C++ and the table can be built, and
// asked, on a machine without a GPU; the kernels' device helpers are in
// CudaSupport.cuh.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_CUDA_CUDASUPPORT_H
#define TANDEM_RUNTIME_LIB_CUDA_CUDASUPPORT_H

#include "../CudaBackend.h"
#include "../Layout.h"

#include "tandem/runtime/ModelImage.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#if TANDEM_HAVE_CUDNN
#include <cudnn.h>
#endif

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tandem::rt::cuda {

constexpr int kMaxRank = image::kMaxGpuRank;

/// A result's dimensions and the strides (in elements) of up to three
/// operands seen through it, passed to kernels by value.
struct Layout {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {}; // per operand, in elements
};

/// The result's shape and each operand's strides, with the dimensions
/// every operand walks as one merged (Layout.h's coalesce): a dense
/// elementwise op indexes one dimension, a broadcast row two.
inline Layout layoutOf(std::vector<int64_t> out,
                       std::vector<std::vector<int64_t>> operandStrides) {
  coalesce(out, operandStrides);
  Layout layout;
  layout.rank = int(out.size());
  for (int d = 0; d < layout.rank; ++d) {
    layout.dims[d] = out[d];
    for (size_t k = 0; k < operandStrides.size(); ++k)
      layout.strides[k][d] = operandStrides[k][d];
  }
  return layout;
}

/// The size of each of the two pinned staging buffers: a copy of any size
/// pins 2 x this, and the host's memcpy into one buffer overlaps the DMA
/// out of the other.
constexpr size_t kStagingChunk = size_t(16) << 20;

/// GPU memory left free beside the arena for cuBLAS's workspaces (a GEMM
/// may ask for tens of MiB), cuDNN's handle and the kernels' launches (a
/// convolution's workspace is in the arena: the memory plan sizes it).
constexpr int64_t kWorkspaceHeadroom = int64_t(256) << 20;
/// Device::reduceScratch's size: room for thousands of partial results.
constexpr int64_t kReduceScratchBytes = int64_t(256) << 10;

/// Makes GPU 0 current for the calling thread while it lives, and restores
/// the thread's device after: a host program may have made another GPU
/// current on the thread that calls into the model.
class OnDevice {
public:
  OnDevice() {
    if (cudaGetDevice(&previous_) != cudaSuccess)
      previous_ = 0;
    if (previous_ != 0)
      cudaSetDevice(0);
  }
  ~OnDevice() {
    if (previous_ != 0)
      cudaSetDevice(previous_);
  }
  OnDevice(const OnDevice &) = delete;
  OnDevice &operator=(const OnDevice &) = delete;

private:
  int previous_ = 0;
};

/// The grid for `n` items (Layout.h's launchBlocks: never zero blocks).
inline dim3 blocksFor(int64_t n) { return dim3(unsigned(launchBlocks(n))); }

//===----------------------------------------------------------------------===//
// The backend's state (Device.cpp)
//===----------------------------------------------------------------------===//

/// cuBLAS's entry points, opened when the backend starts (see loadCublas in
/// Device.cpp).
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) setStream = nullptr;
  // (Spelled out: C++ overloads cublasGemmEx.)
  cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t,
                           cublasOperation_t, int, int, int, const void *,
                           const void *, cudaDataType, int, const void *,
                           cudaDataType, int, const void *, void *,
                           cudaDataType, int, cublasComputeType_t,
                           cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*gemmStridedBatchedEx)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
      const void *, const void *, cudaDataType, int, long long, const void *,
      cudaDataType, int, long long, const void *, void *, cudaDataType, int,
      long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

#if TANDEM_HAVE_CUDNN
/// The cuDNN entry points the convolutions use (its legacy convolution API),
/// opened with the first convolution (see loadCudnn in Device.cpp).
#define TANDEM_CUDNN_FUNCTIONS(X)                                              \
  X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream) X(cudnnGetErrorString)      \
  X(cudnnCreateTensorDescriptor) X(cudnnSetTensor4dDescriptor)                 \
  X(cudnnDestroyTensorDescriptor) X(cudnnCreateFilterDescriptor)               \
  X(cudnnSetFilter4dDescriptor) X(cudnnDestroyFilterDescriptor)                \
  X(cudnnCreateConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor)       \
  X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType)              \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount)                              \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)
struct Cudnn {
#define TANDEM_CUDNN_POINTER(name) decltype(&::name) name = nullptr;
  TANDEM_CUDNN_FUNCTIONS(TANDEM_CUDNN_POINTER)
#undef TANDEM_CUDNN_POINTER
};
#endif

/// Two pinned buffers of kStagingChunk bytes that copies of pageable host
/// memory go through, and the events that say when the DMA out of (or
/// into) each is done; made on first use.
struct Staging {
  uint8_t *buffer[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
  int next = 0; // the buffer the next chunk goes through
};

struct Device {
  void *arena = nullptr;
  int64_t arenaBytes = 0;
  // The compute stream: every op, and every copy of an unscheduled model,
  // runs on it in program order.
  cudaStream_t stream = nullptr;
  // A scheduled model's copy engines: one stream each.
  cudaStream_t h2dStream = nullptr, d2hStream = nullptr;
  // The compute stream's staging, and each copy engine's own.
  Staging staging, h2dStaging, d2hStaging;
  // Host memory page-locked for direct asynchronous copies: [begin, end),
  // sorted by begin.
  std::vector<std::pair<const uint8_t *, const uint8_t *>> pinned;
  // A scheduled image's events, per op: done (recorded after it), and
  // start (before it) when timing.
  std::vector<cudaEvent_t> opDone, opStart;
  // A run's GPU side captured once and replayed, and the events that fork
  // the copy engines' streams into the capture and join them back.
  cudaGraphExec_t graph = nullptr;
  cudaEvent_t fork = nullptr, joinH2D = nullptr, joinD2H = nullptr;
  // Device: the first failing position a kernel found (an out-of-range
  // index, a division by zero), ~0 for none. Kernels lower it with
  // atomicMin, so the position reported is the first, as on the CPU.
  unsigned long long *errorAt = nullptr;
  // A reduction split over several blocks per result element keeps its
  // blocks' partial results here between its two kernels (Reduce.cu);
  // allocated with the backend, so that no run (or graph capture) allocates.
  void *reduceScratch = nullptr;
  // The model's generated GPU kernels (loadGeneratedKernels), by index;
  // null for a group not on the GPU.
  cudaLibrary_t generated = nullptr;
  std::vector<cudaKernel_t> generatedKernels;
  cublasHandle_t blas = nullptr; // bound to `stream`
  bool allowTf32 = false;         // f32 GEMMs in TF32 (start's option)
#if TANDEM_HAVE_CUDNN
  cudnnHandle_t dnn = nullptr; // made with the first convolution
  bool dnnTried = false;       // whether that was tried (it may have failed)
  // The algorithm and math type cuDNN chose for each convolution (the key:
  // the shapes, the attributes, the element type, the math allowed, the
  // workspace); algorithm -1 where cuDNN has none that fits or refused it.
  struct ConvChoice {
    int algorithm = -1;
    int math = 0;
  };
  std::map<std::vector<int64_t>, ConvChoice> convAlgorithms;
#endif
};

#if TANDEM_HAVE_CUDNN
/// cuDNN and the device's handle on its stream, made on first use; null
/// where cuDNN cannot be loaded (a one-line note says so, once per process).
const Cudnn *cudnnFor(Device &device);
#endif

/// cuBLAS, once a start() has loaded it.
const Cublas &cublas();

/// True if `status` is success; else `error` says `what` failed and why.
bool check(cudaError_t status, const char *what, std::string &error);
bool checkBlas(cublasStatus_t status, std::string &error);

/// Whether the last launch started (it does not wait for the kernel: a
/// failure while it runs is reported by the next synchronize).
bool launched(std::string &error);

//===----------------------------------------------------------------------===//
// The kernel table (Dispatch.cpp)
//===----------------------------------------------------------------------===//

/// One op as runKernel received it, with what most launches use.
struct KernelCall {
  Device &device; // the stream to launch on, cuBLAS, the error position
  int64_t kind;
  const std::vector<TensorView> &ops; // on the device, but dynamic_slice's
                                      // offsets (on the host)
  const TensorView &out;
  const std::vector<int64_t> &attrs; // as ImageAttrs.h lays them out
  int64_t n;                         // elements in the result
  int item;                          // bytes per element of the result
  dim3 grid, block; // a thread per result element, at least one block
  std::string &error;

  cudaStream_t stream() const { return device.stream; }

  /// Before a checking kernel: no failure found yet.
  bool resetErrorAt() const;
  /// After it: waits for it, and gives the first failing position it found
  /// in `first`, or -1.
  bool readErrorAt(int64_t &first) const;

  /// Fails: the kind's kernel does not take the result's element type.
  bool unsupported() const {
    error = std::string("no CUDA kernel for this op on ") + dtypeName(out.dtype);
    return false;
  }
};

/// Enqueues one op on call.stream(); false with call.error if it could not.
using KernelFn = bool (*)(const KernelCall &call);

/// The kernels by op kind: an entry where this backend has a kernel for the
/// kind (for some element types; the kernel refuses the others), none
/// elsewhere. Filling it is plain host code: no GPU needed.
struct CudaKernelTable {
  KernelFn byKind[image::kNumOpKinds] = {};

  void add(image::OpKind kind, KernelFn run) {
    assert(!byKind[kind] && "two kernels for one kind");
    byKind[kind] = run;
  }
};

/// Each family file's entries (<Family>.cu).
void registerDataMovementKernels(CudaKernelTable &table);
void registerElementwiseKernels(CudaKernelTable &table);
void registerGemmKernels(CudaKernelTable &table);
void registerConvKernels(CudaKernelTable &table);
void registerNormKernels(CudaKernelTable &table);
void registerReduceKernels(CudaKernelTable &table);
/// Generated.cpp: fused groups, the model's own PTX.
void registerGeneratedKernels(CudaKernelTable &table);

/// Launches DataMovement.cu's strided copy on `stream` (without waiting): out[i] = src[base + Σ index·stride] for the n elements of
/// `item` bytes, operand 0's strides in `layout`. Linear broadcasts its bias
/// with it. False for an element size other than 1, 2, 4 or 8 bytes.
bool launchStridedCopy(dim3 grid, dim3 block, cudaStream_t stream,
                       const Layout &layout, int64_t n, int64_t base,
                       const uint8_t *src, uint8_t *out, int item);

} // namespace tandem::rt::cuda

#endif // TANDEM_RUNTIME_LIB_CUDA_CUDASUPPORT_H
