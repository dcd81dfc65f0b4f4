//===- CudaBackend.cu - GPU-placed ops on a CUDA GPU ----------------------===//
//
// Kernels of ours for everything but GEMMs (cuBLAS). Elementwise kernels
// take up to 8 dimensions with per-operand broadcast strides; f16 and bf16
// compute in f32; data movement copies elements of any size. Every call
// waits for its kernel, so the profile times each op (streams and
// copy/compute overlap come with --tandem-schedule).
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "Layout.h"

#include "tandem/runtime/ModelImage.h"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

constexpr int kMaxRank = 8;

struct Layout {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {}; // per operand, in elements
};

/// cuBLAS, opened when the CUDA backend starts rather than linked: a model
/// run on the CPU or the sim backend never loads its hundreds of megabytes,
/// and, once loaded, it stays (RTLD_NODELETE: cuBLAS leaks memory each time
/// it is unloaded, so a process that loads and closes many models would
/// grow).
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  // (Spelled out: C++ overloads cublasGemmEx.)
  cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t,
                           cublasOperation_t, int, int, int, const void *,
                           const void *, cudaDataType, int, const void *,
                           cudaDataType, int, const void *, void *,
                           cudaDataType, int, cublasComputeType_t,
                           cublasGemmAlgo_t) = nullptr;
};
Cublas cublas;

bool loadCublas(std::string &error) {
  if (cublas.create)
    return true;
  std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!library) {
    const char *why = dlerror();
    error = "cannot load " + name + ": " + (why ? why : "not found");
    return false;
  }
  Cublas api;
  api.create = reinterpret_cast<decltype(api.create)>(
      dlsym(library, "cublasCreate_v2"));
  api.destroy = reinterpret_cast<decltype(api.destroy)>(
      dlsym(library, "cublasDestroy_v2"));
  api.gemmEx =
      reinterpret_cast<decltype(api.gemmEx)>(dlsym(library, "cublasGemmEx"));
  if (!api.create || !api.destroy || !api.gemmEx) {
    error = name + " lacks cublasCreate_v2, cublasDestroy_v2 or cublasGemmEx";
    return false;
  }
  cublas = api;
  return true;
}

struct State {
  void *arena = nullptr;
  void *staging = nullptr; // pinned
  size_t stagingBytes = 0;
  int *errorFlag = nullptr; // device: set by index-checking kernels
  cublasHandle_t blas = nullptr;
};
State state;

bool check(cudaError_t status, const char *what, std::string &error) {
  if (status == cudaSuccess)
    return true;
  error = std::string(what) + ": " + cudaGetErrorString(status);
  return false;
}

bool checkBlas(cublasStatus_t status, std::string &error) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  error = "cuBLAS status " + std::to_string(int(status));
  return false;
}

Layout layoutOf(const std::vector<int64_t> &out,
                const std::vector<std::vector<int64_t>> &operandStrides) {
  Layout layout;
  layout.rank = int(out.size());
  for (int d = 0; d < layout.rank; ++d) {
    layout.dims[d] = out[d];
    for (size_t k = 0; k < operandStrides.size(); ++k)
      layout.strides[k][d] = operandStrides[k][d];
  }
  return layout;
}

__device__ void offsetsOf(const Layout &layout, int64_t i, int operands,
                          int64_t *offsets) {
  for (int k = 0; k < operands; ++k)
    offsets[k] = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    int64_t index = i % layout.dims[d];
    i /= layout.dims[d];
    for (int k = 0; k < operands; ++k)
      offsets[k] += index * layout.strides[k][d];
  }
}

template <typename T> __device__ float toFloat(T v) { return float(v); }
template <> __device__ float toFloat(__half v) { return __half2float(v); }
template <> __device__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ T fromFloat(float v) { return T(v); }
template <> __device__ __half fromFloat(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 fromFloat(float v) { return __float2bfloat16_rn(v); }

#define GRID_LOOP(i, n)                                                        \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);   \
       i += int64_t(gridDim.x) * blockDim.x)

dim3 blocksFor(int64_t n) {
  return dim3(unsigned(std::min<int64_t>((n + 255) / 256, 65535)));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void binaryFloat(int kind, Layout layout, int64_t n, const T *a,
                            const T *b, T *out) {
  GRID_LOOP(i, n) {
    int64_t o[2];
    offsetsOf(layout, i, 2, o);
    float x = toFloat(a[o[0]]), y = toFloat(b[o[1]]), r = 0;
    switch (kind) {
    case img::kAdd: r = x + y; break;
    case img::kSub: r = x - y; break;
    case img::kMul: r = x * y; break;
    case img::kDiv: r = x / y; break;
    case img::kMaximum: r = (isnan(x) || isnan(y)) ? NAN : fmaxf(x, y); break;
    case img::kMinimum: r = (isnan(x) || isnan(y)) ? NAN : fminf(x, y); break;
    case img::kPow: r = powf(x, y); break;
    }
    out[i] = fromFloat<T>(r);
  }
}

/// Integers wrap around; a division by zero sets *errorFlag.
template <typename T>
__global__ void binaryInt(int kind, Layout layout, int64_t n, const T *a,
                          const T *b, T *out, int *errorFlag) {
  GRID_LOOP(i, n) {
    int64_t o[2];
    offsetsOf(layout, i, 2, o);
    T x = a[o[0]], y = b[o[1]], r = 0;
    bool byZero = false;
    switch (kind) {
    case img::kAdd: r = wrapAdd(x, y); break;
    case img::kSub: r = wrapSub(x, y); break;
    case img::kMul: r = wrapMul(x, y); break;
    case img::kDiv:
      r = divideInteger(x, y, byZero);
      if (byZero)
        *errorFlag = 1;
      break;
    case img::kMaximum: r = x > y ? x : y; break;
    case img::kMinimum: r = x < y ? x : y; break;
    }
    out[i] = r;
  }
}

template <typename T>
__global__ void unaryFloat(int kind, int64_t n, const T *x, T *out) {
  GRID_LOOP(i, n) {
    float v = toFloat(x[i]), r = 0;
    switch (kind) {
    case img::kNeg: r = -v; break;
    case img::kAbs: r = fabsf(v); break;
    case img::kExp: r = expf(v); break;
    case img::kLog: r = logf(v); break;
    case img::kSqrt: r = sqrtf(v); break;
    case img::kRsqrt: r = rsqrtf(v); break;
    case img::kTanh: r = tanhf(v); break;
    case img::kSigmoid: r = 1.0f / (1.0f + expf(-v)); break;
    case img::kRelu: r = reluOf(v); break;
    case img::kGelu: r = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
    case img::kSilu: r = v / (1.0f + expf(-v)); break;
    }
    out[i] = fromFloat<T>(r);
  }
}

template <typename T>
__global__ void unaryInt(int kind, int64_t n, const T *x, T *out) {
  GRID_LOOP(i, n) {
    T v = x[i];
    out[i] = kind == img::kNeg ? wrapNeg(v)
             : kind == img::kAbs ? (v < 0 ? wrapNeg(v) : v)
                                 : reluOf(v);
  }
}

template <typename T>
__global__ void compareKernel(int predicate, Layout layout, int64_t n,
                              const T *a, const T *b, uint8_t *out) {
  GRID_LOOP(i, n) {
    int64_t o[2];
    offsetsOf(layout, i, 2, o);
    out[i] = comparePredicate(predicate, toFloat(a[o[0]]), toFloat(b[o[1]]));
  }
}

template <>
__global__ void compareKernel<int64_t>(int predicate, Layout layout, int64_t n,
                                       const int64_t *a, const int64_t *b,
                                       uint8_t *out) {
  GRID_LOOP(i, n) {
    int64_t o[2];
    offsetsOf(layout, i, 2, o);
    out[i] = comparePredicate(predicate, a[o[0]], b[o[1]]);
  }
}

/// out[i] = src[base + Σ index·stride] for elements of `item` bytes;
/// operand 0's strides in `layout` (operand 1 and 2 for select).
__global__ void stridedCopy(Layout layout, int64_t n, int64_t base,
                            const uint8_t *src, uint8_t *out, int item) {
  GRID_LOOP(i, n) {
    int64_t o[1];
    offsetsOf(layout, i, 1, o);
    for (int b = 0; b < item; ++b)
      out[i * item + b] = src[(base + o[0]) * item + b];
  }
}

__global__ void selectKernel(Layout layout, int64_t n, const uint8_t *cond,
                             const uint8_t *a, const uint8_t *b, uint8_t *out,
                             int item) {
  GRID_LOOP(i, n) {
    int64_t o[3];
    offsetsOf(layout, i, 3, o);
    const uint8_t *from = cond[o[0]] ? a + o[1] * item : b + o[2] * item;
    for (int k = 0; k < item; ++k)
      out[i * item + k] = from[k];
  }
}

__device__ double loadAny(int dtype, const void *data, int64_t i) {
  switch (dtype) {
  case 0: return static_cast<const float *>(data)[i];
  case 1: return __half2float(static_cast<const __half *>(data)[i]);
  case 2: return __bfloat162float(static_cast<const __nv_bfloat16 *>(data)[i]);
  case 3: return double(static_cast<const int64_t *>(data)[i]);
  case 4: return static_cast<const int32_t *>(data)[i];
  default: return static_cast<const uint8_t *>(data)[i] != 0;
  }
}

__device__ void storeAny(int dtype, void *data, int64_t i, double v) {
  switch (dtype) {
  case 0: static_cast<float *>(data)[i] = float(v); break;
  case 1: static_cast<__half *>(data)[i] = __float2half_rn(float(v)); break;
  case 2: static_cast<__nv_bfloat16 *>(data)[i] = __float2bfloat16_rn(float(v)); break;
  case 3: static_cast<int64_t *>(data)[i] = floatToInteger<int64_t>(v); break;
  case 4: static_cast<int32_t *>(data)[i] = floatToInteger<int32_t>(v); break;
  default: static_cast<uint8_t *>(data)[i] = v != 0; break;
  }
}

__global__ void castKernel(int64_t n, int from, const void *x, int to, void *out) {
  GRID_LOOP(i, n) {
    if ((from == 3 || from == 4) && (to == 3 || to == 4)) {
      int64_t v = from == 3 ? static_cast<const int64_t *>(x)[i]
                            : static_cast<const int32_t *>(x)[i];
      if (to == 3)
        static_cast<int64_t *>(out)[i] = v;
      else
        static_cast<int32_t *>(out)[i] = int32_t(v);
    } else {
      storeAny(to, out, i, loadAny(from, x, i));
    }
  }
}

__global__ void fillKernel(int64_t n, int dtype, double value, void *out) {
  GRID_LOOP(i, n) { storeAny(dtype, out, i, value); }
}

__global__ void iotaKernel(int64_t n, int dtype, int64_t stride, int64_t size,
                           void *out) {
  GRID_LOOP(i, n) { storeAny(dtype, out, i, double((i / stride) % size)); }
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalization (f32 compute)
//===----------------------------------------------------------------------===//

struct ConvArgs {
  int64_t n, c, h, w, o, cg, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, og;
};

template <typename T>
__global__ void conv2dKernel(ConvArgs a, const T *x, const T *wt, const T *bias,
                             T *out) {
  GRID_LOOP(i, a.n * a.o * a.oh * a.ow) {
    int64_t xo = i % a.ow, y = (i / a.ow) % a.oh, oi = (i / (a.ow * a.oh)) % a.o,
            ni = i / (a.ow * a.oh * a.o), g = oi / a.og;
    float sum = bias ? toFloat(bias[oi]) : 0.0f;
    for (int64_t ci = 0; ci < a.cg; ++ci)
      for (int64_t p = 0; p < a.kh; ++p) {
        int64_t iy = y * a.sh - a.ph + p * a.dh;
        if (iy < 0 || iy >= a.h)
          continue;
        for (int64_t q = 0; q < a.kw; ++q) {
          int64_t ix = xo * a.sw - a.pw + q * a.dw;
          if (ix < 0 || ix >= a.w)
            continue;
          sum += toFloat(x[((ni * a.c + g * a.cg + ci) * a.h + iy) * a.w + ix]) *
                 toFloat(wt[((oi * a.cg + ci) * a.kh + p) * a.kw + q]);
        }
      }
    out[i] = fromFloat<T>(sum);
  }
}

template <typename T>
__global__ void poolKernel(ConvArgs a, bool max, const T *x, T *out) {
  GRID_LOOP(i, a.n * a.c * a.oh * a.ow) {
    int64_t xo = i % a.ow, y = (i / a.ow) % a.oh, p = i / (a.ow * a.oh);
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t r = 0; r < a.kh; ++r)
      for (int64_t s = 0; s < a.kw; ++s) {
        int64_t iy = y * a.sh - a.ph + r, ix = xo * a.sw - a.pw + s;
        if (iy < 0 || iy >= a.h || ix < 0 || ix >= a.w)
          continue;
        float v = toFloat(x[(p * a.h + iy) * a.w + ix]);
        acc = max ? ((isnan(v) || v > acc) ? v : acc) : acc + v;
      }
    out[i] = fromFloat<T>(max ? acc : acc / float(a.kh * a.kw));
  }
}

template <typename T>
__global__ void batchNormKernel(int64_t n, int64_t channels, int64_t inner,
                                double epsilon, const T *x, const T *scale,
                                const T *bias, const T *mean, const T *var,
                                T *out) {
  GRID_LOOP(i, n) {
    int64_t c = (i / inner) % channels;
    float factor = toFloat(scale[c]) / sqrtf(toFloat(var[c]) + float(epsilon));
    out[i] = fromFloat<T>((toFloat(x[i]) - toFloat(mean[c])) * factor +
                          toFloat(bias[c]));
  }
}

/// One thread per row along `axis`: softmax (0), log_softmax (1),
/// l2_normalize (2).
template <typename T>
__global__ void rowKernel(int mode, int64_t outer, int64_t size, int64_t inner,
                          double epsilon, const T *x, T *out) {
  GRID_LOOP(item, outer * inner) {
    int64_t o = item / inner, i = item % inner;
    const T *row = x + o * size * inner + i;
    T *dst = out + o * size * inner + i;
    if (mode == 2) {
      float sum = 0;
      for (int64_t k = 0; k < size; ++k)
        sum += toFloat(row[k * inner]) * toFloat(row[k * inner]);
      float norm = fmaxf(sqrtf(sum), float(epsilon));
      for (int64_t k = 0; k < size; ++k)
        dst[k * inner] = fromFloat<T>(toFloat(row[k * inner]) / norm);
      continue;
    }
    float peak = -INFINITY, sum = 0;
    for (int64_t k = 0; k < size; ++k)
      peak = fmaxf(peak, toFloat(row[k * inner]));
    for (int64_t k = 0; k < size; ++k)
      sum += expf(toFloat(row[k * inner]) - peak);
    for (int64_t k = 0; k < size; ++k) {
      float shifted = toFloat(row[k * inner]) - peak;
      dst[k * inner] = fromFloat<T>(mode == 1 ? shifted - logf(sum)
                                              : expf(shifted) / sum);
    }
  }
}

template <typename T>
__global__ void layerNormKernel(int64_t rows, int64_t cols, double epsilon,
                                const T *x, const T *gamma, const T *beta,
                                T *out) {
  GRID_LOOP(r, rows) {
    const T *row = x + r * cols;
    float mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += toFloat(row[c]);
    mean /= float(cols);
    for (int64_t c = 0; c < cols; ++c) {
      float d = toFloat(row[c]) - mean;
      var += d * d;
    }
    float scale = rsqrtf(var / float(cols) + float(epsilon));
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = fromFloat<T>((toFloat(row[c]) - mean) * scale *
                                           toFloat(gamma[c]) +
                                       toFloat(beta[c]));
  }
}

//===----------------------------------------------------------------------===//
// Reductions and indexing
//===----------------------------------------------------------------------===//

struct ReduceArgs {
  int rank;
  int64_t dims[kMaxRank], strides[kMaxRank];
  bool reduced[kMaxRank];
  int64_t perOutput;
};

template <typename T, typename Acc>
__global__ void reduceKernel(int kind, ReduceArgs a, int64_t outputs,
                             const T *x, T *out) {
  GRID_LOOP(i, outputs) {
    // The base offset of output i over the kept dimensions.
    int64_t base = 0, rest = i;
    for (int d = a.rank - 1; d >= 0; --d)
      if (!a.reduced[d]) {
        base += (rest % a.dims[d]) * a.strides[d];
        rest /= a.dims[d];
      }
    Acc acc = kind == img::kReduceMax ? Acc(-INFINITY)
              : kind == img::kReduceMin ? Acc(INFINITY) : Acc(0);
    bool nan = false;
    for (int64_t r = 0; r < a.perOutput; ++r) {
      int64_t offset = base, left = r;
      for (int d = a.rank - 1; d >= 0; --d)
        if (a.reduced[d]) {
          offset += (left % a.dims[d]) * a.strides[d];
          left /= a.dims[d];
        }
      Acc v = Acc(toFloat(x[offset]));
      nan |= v != v;
      acc = kind == img::kReduceMax ? (v > acc ? v : acc)
            : kind == img::kReduceMin ? (v < acc ? v : acc) : acc + v;
    }
    if (kind == img::kReduceMean)
      acc /= Acc(a.perOutput);
    if (nan && (kind == img::kReduceMax || kind == img::kReduceMin))
      acc = Acc(NAN);
    out[i] = fromFloat<T>(float(acc));
  }
}

template <typename T>
__global__ void argmaxKernel(int64_t outer, int64_t size, int64_t inner,
                             const T *x, int64_t *out) {
  GRID_LOOP(item, outer * inner) {
    int64_t o = item / inner, i = item % inner, best = 0;
    const T *row = x + o * size * inner + i;
    for (int64_t k = 1; k < size; ++k) {
      float v = toFloat(row[k * inner]), b = toFloat(row[best * inner]);
      if (!(b != b) && ((v != v) || v > b))
        best = k;
    }
    out[item] = best;
  }
}

/// As the CPU's takeRows: a negative index counts from the end only where
/// `negativeFromEnd` (gather, not embedding).
__global__ void takeKernel(int64_t outer, int64_t size, int64_t inner,
                           int64_t picks, const uint8_t *x, const void *indices,
                           bool wide, bool negativeFromEnd, uint8_t *out,
                           int item, int *errorFlag) {
  GRID_LOOP(e, outer * picks * inner) {
    int64_t k = e % inner, j = (e / inner) % picks, o = e / (inner * picks);
    int64_t index = wide ? static_cast<const int64_t *>(indices)[j]
                         : static_cast<const int32_t *>(indices)[j];
    if (index < 0 && negativeFromEnd)
      index += size;
    if (index < 0 || index >= size) {
      *errorFlag = 1;
      continue;
    }
    for (int b = 0; b < item; ++b)
      out[e * item + b] = x[((o * size + index) * inner + k) * item + b];
  }
}

//===----------------------------------------------------------------------===//
// Dispatch helpers
//===----------------------------------------------------------------------===//


/// Whether a kernel since the last reset set state.errorFlag.
bool errorFlagged() {
  int flag = 0;
  cudaMemcpy(&flag, state.errorFlag, sizeof(int), cudaMemcpyDeviceToHost);
  return flag != 0;
}

bool launched(std::string &error) {
  return check(cudaGetLastError(), "kernel launch", error) &&
         check(cudaDeviceSynchronize(), "kernel", error);
}

/// Runs `launch` with the element type T of `dtype` (f32, f16 or bf16).
template <typename F> bool withFloat(DType dtype, F launch) {
  switch (dtype) {
  case DType::F32: launch(float()); return true;
  case DType::F16: launch(__half()); return true;
  case DType::BF16: launch(__nv_bfloat16()); return true;
  default: return false;
  }
}

bool gemm(bool transposeB, int64_t m, int64_t n, int64_t k, DType dtype,
          const void *a, const void *b, void *c, float beta,
          std::string &error) {
  // Row-major C = A·op(B) is column-major Cᵀ = op(B)ᵀ·Aᵀ.
  cudaDataType type = dtype == DType::F32   ? CUDA_R_32F
                      : dtype == DType::F16 ? CUDA_R_16F
                                            : CUDA_R_16BF;
  float alpha = 1.0f;
  return checkBlas(
      cublas.gemmEx(state.blas, transposeB ? CUBLAS_OP_T : CUBLAS_OP_N,
                   CUBLAS_OP_N, int(n), int(m), int(k), &alpha, b, type,
                   transposeB ? int(k) : int(n), a, type, int(k), &beta, c,
                   type, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      error);
}

} // namespace

//===----------------------------------------------------------------------===//
// The backend
//===----------------------------------------------------------------------===//

bool cuda::available(std::string &why) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    why = status != cudaSuccess ? cudaGetErrorString(status)
                                : "no CUDA GPU is visible";
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

bool cuda::start(int64_t arenaBytes, std::string &error) {
  if (!check(cudaSetDevice(0), "cudaSetDevice", error) ||
      !check(cudaMalloc(&state.arena, std::max<int64_t>(arenaBytes, 256)),
             "allocating the GPU arena", error) ||
      !check(cudaMalloc(&state.errorFlag, sizeof(int)), "cudaMalloc", error) ||
      !loadCublas(error) || !checkBlas(cublas.create(&state.blas), error))
    return false;
  return true;
}

void cuda::stop() {
  if (state.blas)
    cublas.destroy(state.blas);
  if (state.staging)
    cudaFreeHost(state.staging);
  cudaFree(state.arena);
  cudaFree(state.errorFlag);
  state = State();
}

void *cuda::arena() { return state.arena; }

/// Copies go through a pinned staging buffer (grown on demand): pageable
/// memory would make the driver stage them anyway, slower.
static bool staged(void *dst, const void *src, size_t bytes, bool toDevice,
                   std::string &error) {
  if (bytes > state.stagingBytes) {
    if (state.staging)
      cudaFreeHost(state.staging);
    state.staging = nullptr;
    state.stagingBytes = 0;
    if (!check(cudaMallocHost(&state.staging, bytes), "pinned staging", error))
      return false;
    state.stagingBytes = bytes;
  }
  if (toDevice) {
    std::memcpy(state.staging, src, bytes);
    return check(cudaMemcpy(dst, state.staging, bytes, cudaMemcpyHostToDevice),
                 "host-to-device copy", error);
  }
  if (!check(cudaMemcpy(state.staging, src, bytes, cudaMemcpyDeviceToHost),
             "device-to-host copy", error))
    return false;
  std::memcpy(dst, state.staging, bytes);
  return true;
}

bool cuda::toDevice(void *device, const void *host, size_t bytes,
                    std::string &error) {
  return staged(device, host, bytes, true, error);
}

bool cuda::toHost(void *host, const void *device, size_t bytes,
                  std::string &error) {
  return staged(host, device, bytes, false, error);
}

bool cuda::runKernel(int64_t kind, const std::vector<TensorView> &ops,
                     const TensorView &out, const std::vector<int64_t> &a,
                     std::string &error) {
  int64_t n = countOf(out.shape);
  int item = int(dtypeSize(out.dtype));
  if (out.shape.size() > size_t(kMaxRank)) {
    error = "the CUDA backend handles tensors of rank at most 8";
    return false;
  }
  dim3 grid = blocksFor(std::max<int64_t>(n, 1)), block(256);
  auto unsupported = [&] {
    error = std::string("no CUDA kernel for this op on ") + dtypeName(out.dtype);
    return false;
  };
  DType dtype = out.dtype;
  switch (kind) {
  case img::kConstant:
    return check(cudaMemcpy(out.data, a.data(), n * item,
                            cudaMemcpyHostToDevice),
                 "constant upload", error);
  case img::kFill:
    fillKernel<<<grid, block>>>(n, int(dtype), wordToDouble(a[0]), out.data);
    return launched(error);
  case img::kIota: {
    std::vector<int64_t> strides = rowMajorStrides(out.shape);
    iotaKernel<<<grid, block>>>(n, int(dtype), strides[a[0]], out.shape[a[0]],
                                out.data);
    return launched(error);
  }
  case img::kCast:
    castKernel<<<grid, block>>>(n, int(ops[0].dtype), ops[0].data, int(dtype),
                                out.data);
    return launched(error);
  case img::kAdd: case img::kSub: case img::kMul: case img::kDiv:
  case img::kMaximum: case img::kMinimum: case img::kPow: {
    Layout layout = layoutOf(out.shape, {broadcastStrides(ops[0].shape, out.shape),
                                         broadcastStrides(ops[1].shape, out.shape)});
    bool integer = dtype == DType::I64 || dtype == DType::I32;
    if (integer && kind == img::kPow)
      return unsupported();
    if (integer)
      cudaMemset(state.errorFlag, 0, sizeof(int));
    if (dtype == DType::I64)
      binaryInt<int64_t><<<grid, block>>>(int(kind), layout, n,
          static_cast<const int64_t *>(ops[0].data),
          static_cast<const int64_t *>(ops[1].data), static_cast<int64_t *>(out.data),
          state.errorFlag);
    else if (dtype == DType::I32)
      binaryInt<int32_t><<<grid, block>>>(int(kind), layout, n,
          static_cast<const int32_t *>(ops[0].data),
          static_cast<const int32_t *>(ops[1].data), static_cast<int32_t *>(out.data),
          state.errorFlag);
    else if (!withFloat(dtype, [&](auto t) {
               using T = decltype(t);
               binaryFloat<T><<<grid, block>>>(int(kind), layout, n,
                   static_cast<const T *>(ops[0].data),
                   static_cast<const T *>(ops[1].data), static_cast<T *>(out.data));
             }))
      return unsupported();
    if (!launched(error))
      return false;
    if (integer && errorFlagged()) {
      error = "integer division by zero";
      return false;
    }
    return true;
  }
  case img::kCompare: {
    Layout layout = layoutOf(out.shape, {broadcastStrides(ops[0].shape, out.shape),
                                         broadcastStrides(ops[1].shape, out.shape)});
    uint8_t *mask = static_cast<uint8_t *>(out.data);
    if (ops[0].dtype == DType::I64)
      compareKernel<int64_t><<<grid, block>>>(int(a[0]), layout, n,
          static_cast<const int64_t *>(ops[0].data),
          static_cast<const int64_t *>(ops[1].data), mask);
    else if (ops[0].dtype == DType::I32)
      compareKernel<int32_t><<<grid, block>>>(int(a[0]), layout, n,
          static_cast<const int32_t *>(ops[0].data),
          static_cast<const int32_t *>(ops[1].data), mask);
    else if (ops[0].dtype == DType::Bool)
      compareKernel<uint8_t><<<grid, block>>>(int(a[0]), layout, n,
          static_cast<const uint8_t *>(ops[0].data),
          static_cast<const uint8_t *>(ops[1].data), mask);
    else if (!withFloat(ops[0].dtype, [&](auto t) {
               using T = decltype(t);
               compareKernel<T><<<grid, block>>>(int(a[0]), layout, n,
                   static_cast<const T *>(ops[0].data),
                   static_cast<const T *>(ops[1].data), mask);
             }))
      return unsupported();
    return launched(error);
  }
  case img::kSelect: {
    Layout layout = layoutOf(out.shape, {broadcastStrides(ops[0].shape, out.shape),
                                         broadcastStrides(ops[1].shape, out.shape),
                                         broadcastStrides(ops[2].shape, out.shape)});
    selectKernel<<<grid, block>>>(layout, n,
        static_cast<const uint8_t *>(ops[0].data),
        static_cast<const uint8_t *>(ops[1].data),
        static_cast<const uint8_t *>(ops[2].data),
        static_cast<uint8_t *>(out.data), item);
    return launched(error);
  }
  case img::kMatmul: {
    size_t ra = ops[0].shape.size(), rb = ops[1].shape.size();
    int64_t m = ops[0].shape[ra - 2], k = ops[0].shape[ra - 1],
            cols = ops[1].shape[rb - 1];
    std::vector<int64_t> batch(out.shape.begin(), out.shape.end() - 2),
        aBatch(ops[0].shape.begin(), ops[0].shape.end() - 2),
        bBatch(ops[1].shape.begin(), ops[1].shape.end() - 2);
    std::vector<int64_t> sa = broadcastStrides(aBatch, batch),
                         sb = broadcastStrides(bBatch, batch);
    int64_t batches = countOf(batch);
    std::vector<int64_t> index(batch.size(), 0);
    size_t width = dtypeSize(dtype);
    for (int64_t i = 0; i < batches; ++i) {
      int64_t ia = 0, ib = 0;
      for (size_t d = 0; d < batch.size(); ++d) {
        ia += index[d] * sa[d];
        ib += index[d] * sb[d];
      }
      if (!gemm(false, m, cols, k, dtype,
                static_cast<const uint8_t *>(ops[0].data) + ia * m * k * width,
                static_cast<const uint8_t *>(ops[1].data) + ib * k * cols * width,
                static_cast<uint8_t *>(out.data) + i * m * cols * width, 0.0f,
                error))
        return false;
      for (size_t d = batch.size(); d-- > 0;) {
        if (++index[d] < batch[d])
          break;
        index[d] = 0;
      }
    }
    return launched(error);
  }
  case img::kLinear: {
    int64_t k = ops[0].shape.back(), cols = ops[1].shape[0];
    int64_t rows = k ? countOf(ops[0].shape) / k : 0;
    bool bias = ops.size() > 2;
    if (bias) { // broadcast the bias into the result, then accumulate
      Layout layout = layoutOf(out.shape, {broadcastStrides(ops[2].shape, out.shape)});
      stridedCopy<<<grid, block>>>(layout, n, 0,
          static_cast<const uint8_t *>(ops[2].data),
          static_cast<uint8_t *>(out.data), item);
    }
    if (rows && cols &&
        !gemm(true, rows, cols, k, dtype, ops[0].data, ops[1].data, out.data,
              bias ? 1.0f : 0.0f, error))
      return false;
    return launched(error);
  }
  case img::kConv2d: case img::kMaxPool2d: case img::kAvgPool2d: {
    const std::vector<int64_t> &x = ops[0].shape;
    ConvArgs args{x[0], x[1], x[2], x[3], 0, 0, 0, 0, out.shape[2],
                  out.shape[3], 0, 0, 0, 0, 1, 1, 1};
    bool ok;
    if (kind == img::kConv2d) {
      const std::vector<int64_t> &w = ops[1].shape;
      args.o = w[0]; args.cg = w[1]; args.kh = w[2]; args.kw = w[3];
      args.sh = a[0]; args.sw = a[1]; args.ph = a[2]; args.pw = a[3];
      args.dh = a[4]; args.dw = a[5]; args.og = w[0] / a[6];
      ok = withFloat(dtype, [&](auto t) {
        using T = decltype(t);
        conv2dKernel<T><<<grid, block>>>(args, static_cast<const T *>(ops[0].data),
            static_cast<const T *>(ops[1].data),
            ops.size() > 2 ? static_cast<const T *>(ops[2].data) : nullptr,
            static_cast<T *>(out.data));
      });
    } else {
      args.kh = a[0]; args.kw = a[1]; args.sh = a[2]; args.sw = a[3];
      args.ph = a[4]; args.pw = a[5];
      ok = withFloat(dtype, [&](auto t) {
        using T = decltype(t);
        poolKernel<T><<<grid, block>>>(args, kind == img::kMaxPool2d,
            static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
      });
    }
    return ok ? launched(error) : unsupported();
  }
  case img::kBatchNorm: {
    int64_t channels = ops[0].shape[1], inner = n / std::max<int64_t>(1, ops[0].shape[0] * channels);
    bool ok = withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      batchNormKernel<T><<<grid, block>>>(n, channels, inner, wordToDouble(a[0]),
          static_cast<const T *>(ops[0].data), static_cast<const T *>(ops[1].data),
          static_cast<const T *>(ops[2].data), static_cast<const T *>(ops[3].data),
          static_cast<const T *>(ops[4].data), static_cast<T *>(out.data));
    });
    return ok ? launched(error) : unsupported();
  }
  case img::kSoftmax: case img::kLogSoftmax: case img::kL2Normalize: {
    int64_t outer, size, inner;
    splitAt(out.shape, a[0], outer, size, inner);
    int mode = kind == img::kSoftmax ? 0 : kind == img::kLogSoftmax ? 1 : 2;
    double epsilon = kind == img::kL2Normalize ? wordToDouble(a[1]) : 0;
    bool ok = withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      rowKernel<T><<<blocksFor(outer * inner), block>>>(mode, outer, size, inner,
          epsilon, static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
    });
    return ok ? launched(error) : unsupported();
  }
  case img::kLayerNorm: {
    int64_t rows = 1;
    for (int64_t d = 0; d < a[0]; ++d)
      rows *= out.shape[d];
    int64_t cols = rows ? n / rows : 0;
    bool ok = withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      layerNormKernel<T><<<blocksFor(rows), block>>>(rows, cols, wordToDouble(a[1]),
          static_cast<const T *>(ops[0].data), static_cast<const T *>(ops[1].data),
          static_cast<const T *>(ops[2].data), static_cast<T *>(out.data));
    });
    return ok ? launched(error) : unsupported();
  }
  case img::kReduceSum: case img::kReduceMean: case img::kReduceMax:
  case img::kReduceMin: {
    ReduceArgs args{};
    const std::vector<int64_t> &x = ops[0].shape;
    std::vector<int64_t> strides = rowMajorStrides(x);
    args.rank = int(x.size());
    args.perOutput = 1;
    for (size_t d = 0; d < x.size(); ++d) {
      args.dims[d] = x[d];
      args.strides[d] = strides[d];
    }
    for (int64_t axis : a) {
      args.reduced[axis] = true;
      args.perOutput *= x[axis];
    }
    if (dtype == DType::I64 || dtype == DType::I32) {
      error = "integer reductions on the GPU are not in the CUDA backend yet";
      return false;
    }
    bool ok = withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      reduceKernel<T, float><<<grid, block>>>(int(kind), args, n,
          static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
    });
    return ok ? launched(error) : unsupported();
  }
  case img::kArgmax: {
    int64_t outer, size, inner;
    splitAt(ops[0].shape, a[0], outer, size, inner);
    bool ok = withFloat(ops[0].dtype, [&](auto t) {
      using T = decltype(t);
      argmaxKernel<T><<<blocksFor(outer * inner), block>>>(outer, size, inner,
          static_cast<const T *>(ops[0].data), static_cast<int64_t *>(out.data));
    });
    return ok ? launched(error) : unsupported();
  }
  case img::kTranspose: case img::kSlice: case img::kBroadcastTo:
  case img::kDynamicSlice: {
    std::vector<int64_t> in = rowMajorStrides(ops[0].shape), strides;
    int64_t base = 0;
    size_t rank = out.shape.size();
    if (kind == img::kTranspose) {
      for (int64_t p : a)
        strides.push_back(in[p]);
    } else if (kind == img::kSlice) {
      for (size_t d = 0; d < rank; ++d) {
        base += a[d] * in[d];
        strides.push_back(a[rank + d] * in[d]);
      }
    } else if (kind == img::kBroadcastTo) {
      strides = broadcastStrides(ops[0].shape, out.shape);
    } else { // dynamic_slice: its offsets are a host operand
      const int64_t *offsets = static_cast<const int64_t *>(ops[1].data);
      for (size_t d = 0; d < rank; ++d)
        base += std::clamp<int64_t>(offsets[d], 0,
                                    ops[0].shape[d] - out.shape[d]) * in[d];
      strides = in;
    }
    stridedCopy<<<grid, block>>>(layoutOf(out.shape, {strides}), n, base,
                                 static_cast<const uint8_t *>(ops[0].data),
                                 static_cast<uint8_t *>(out.data), item);
    return launched(error);
  }
  case img::kConcat: {
    int64_t outer, size, inner;
    splitAt(out.shape, a[0], outer, size, inner);
    int64_t offset = 0;
    for (const TensorView &input : ops) {
      int64_t part = input.shape[a[0]];
      if (!check(cudaMemcpy2D(static_cast<uint8_t *>(out.data) + offset * inner * item,
                              size * inner * item, input.data,
                              part * inner * item, part * inner * item, outer,
                              cudaMemcpyDeviceToDevice),
                 "concat copy", error))
        return false;
      offset += part;
    }
    return true;
  }
  case img::kEmbedding: case img::kGather: {
    int64_t axis = kind == img::kEmbedding ? 0 : a[0];
    int64_t outer, size, inner;
    splitAt(ops[0].shape, axis, outer, size, inner);
    int64_t picks = countOf(ops[1].shape);
    cudaMemset(state.errorFlag, 0, sizeof(int));
    takeKernel<<<grid, block>>>(outer, size, inner, picks,
        static_cast<const uint8_t *>(ops[0].data), ops[1].data,
        ops[1].dtype == DType::I64, kind == img::kGather,
        static_cast<uint8_t *>(out.data), item, state.errorFlag);
    if (!launched(error))
      return false;
    if (errorFlagged()) {
      error = std::string("an index is out of range ") +
              (kind == img::kGather ? "[-" + std::to_string(size) + ", "
                                    : std::string("[0, ")) +
              std::to_string(size) + ")";
      return false;
    }
    return true;
  }
  default:
    if (dtype == DType::I64 || dtype == DType::I32) {
      if (kind != img::kNeg && kind != img::kAbs && kind != img::kRelu)
        return unsupported();
      if (dtype == DType::I64)
        unaryInt<int64_t><<<grid, block>>>(int(kind), n,
            static_cast<const int64_t *>(ops[0].data), static_cast<int64_t *>(out.data));
      else
        unaryInt<int32_t><<<grid, block>>>(int(kind), n,
            static_cast<const int32_t *>(ops[0].data), static_cast<int32_t *>(out.data));
      return launched(error);
    }
    if (!withFloat(dtype, [&](auto t) {
          using T = decltype(t);
          unaryFloat<T><<<grid, block>>>(int(kind), n,
              static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
        }))
      return unsupported();
    return launched(error);
  }
}
