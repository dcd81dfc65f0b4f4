//===- Elementwise.cu - CUDA kernels for elementwise ops ------------------===//
//
// The Elementwise family of OpKinds.def on the GPU: binary arithmetic with
// per-operand broadcast strides (up to 8 dimensions), the unary functions,
// and compare. f16 and bf16 compute in f32; integers follow Layout.h's
// rules (wrap-around, division by zero fails the op), which the CPU kernels
// share.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

#include <string>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

/// The offsets of result element i in the two operands. Dense operands (and
/// a scalar broadcast) merge into one dimension, where the offset is a
/// multiply: no 64-bit division per element, which would otherwise make a
/// memory-bound op compute-bound on the GPU.
__device__ inline void operandOffsets(const Layout &layout, int64_t i,
                                      int64_t *o) {
  if (layout.rank == 1) {
    o[0] = i * layout.strides[0][0];
    o[1] = i * layout.strides[1][0];
  } else {
    offsetsOf(layout, i, 2, o);
  }
}

template <typename T>
__global__ void binaryFloat(int kind, Layout layout, int64_t n, const T *a,
                            const T *b, T *out) {
  GRID_LOOP(i, n) {
    int64_t o[2];
    operandOffsets(layout, i, o);
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

/// Integers wrap around; a division by zero records its position in
/// *errorAt.
template <typename T>
__global__ void binaryInt(int kind, Layout layout, int64_t n, const T *a,
                          const T *b, T *out, unsigned long long *errorAt) {
  GRID_LOOP(i, n) {
    int64_t o[2];
    operandOffsets(layout, i, o);
    T x = a[o[0]], y = b[o[1]], r = 0;
    bool byZero = false;
    switch (kind) {
    case img::kAdd: r = wrapAdd(x, y); break;
    case img::kSub: r = wrapSub(x, y); break;
    case img::kMul: r = wrapMul(x, y); break;
    case img::kDiv:
      r = divideInteger(x, y, byZero);
      if (byZero)
        atomicMin(errorAt, (unsigned long long)i);
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
    case img::kFloor: r = floorf(v); break;
    case img::kCeil: r = ceilf(v); break;
    case img::kRound: r = rintf(v); break; // halves to even
    case img::kTrunc: r = truncf(v); break;
    case img::kErf: r = erff(v); break;
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
    operandOffsets(layout, i, o);
    out[i] = comparePredicate(predicate, orderKey(a[o[0]]), orderKey(b[o[1]]));
  }
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

bool runBinary(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  int64_t kind = call.kind, n = call.n;
  dim3 grid = call.grid, block = call.block;
  DType dtype = out.dtype;
  Layout layout = layoutOf(out.shape, {broadcastStrides(ops[0].shape, out.shape),
                                       broadcastStrides(ops[1].shape, out.shape)});
  bool integer = dtype == DType::I64 || dtype == DType::I32;
  if (integer && kind == img::kPow)
    return call.unsupported();
  // Only an integer division can fail (by zero); only it waits to read
  // back where.
  bool checks = integer && kind == img::kDiv;
  unsigned long long *errorAt = call.device.errorAt;
  if (checks && !call.resetErrorAt())
    return false;
  if (dtype == DType::I64)
    binaryInt<int64_t><<<grid, block, 0, call.stream()>>>(int(kind), layout, n,
        static_cast<const int64_t *>(ops[0].data),
        static_cast<const int64_t *>(ops[1].data), static_cast<int64_t *>(out.data),
        errorAt);
  else if (dtype == DType::I32)
    binaryInt<int32_t><<<grid, block, 0, call.stream()>>>(int(kind), layout, n,
        static_cast<const int32_t *>(ops[0].data),
        static_cast<const int32_t *>(ops[1].data), static_cast<int32_t *>(out.data),
        errorAt);
  else if (!withFloat(dtype, [&](auto t) {
             using T = decltype(t);
             binaryFloat<T><<<grid, block, 0, call.stream()>>>(int(kind), layout, n,
                 static_cast<const T *>(ops[0].data),
                 static_cast<const T *>(ops[1].data), static_cast<T *>(out.data));
           }))
    return call.unsupported();
  if (!launched(call.error))
    return false;
  int64_t first = -1;
  if (checks && !call.readErrorAt(first))
    return false;
  if (first >= 0) {
    call.error = "integer division by zero";
    return false;
  }
  return true;
}

/// Integers: neg, abs and relu only.
bool runUnary(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  int64_t kind = call.kind, n = call.n;
  dim3 grid = call.grid, block = call.block;
  DType dtype = out.dtype;
  if (dtype == DType::I64 || dtype == DType::I32) {
    if (kind != img::kNeg && kind != img::kAbs && kind != img::kRelu)
      return call.unsupported();
    if (dtype == DType::I64)
      unaryInt<int64_t><<<grid, block, 0, call.stream()>>>(int(kind), n,
          static_cast<const int64_t *>(ops[0].data), static_cast<int64_t *>(out.data));
    else
      unaryInt<int32_t><<<grid, block, 0, call.stream()>>>(int(kind), n,
          static_cast<const int32_t *>(ops[0].data), static_cast<int32_t *>(out.data));
    return launched(call.error);
  }
  if (!withFloat(dtype, [&](auto t) {
        using T = decltype(t);
        unaryFloat<T><<<grid, block, 0, call.stream()>>>(int(kind), n,
            static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
      }))
    return call.unsupported();
  return launched(call.error);
}

/// A bool mask of `operand 0 <predicate> operand 1`, broadcast.
bool runCompare(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  int64_t n = call.n;
  dim3 grid = call.grid, block = call.block;
  int predicate = int(img::readAttrs<img::CompareAttrs>(call.attrs).predicate);
  Layout layout = layoutOf(out.shape, {broadcastStrides(ops[0].shape, out.shape),
                                       broadcastStrides(ops[1].shape, out.shape)});
  uint8_t *mask = static_cast<uint8_t *>(out.data);
  if (ops[0].dtype == DType::I64)
    compareKernel<int64_t><<<grid, block, 0, call.stream()>>>(predicate, layout, n,
        static_cast<const int64_t *>(ops[0].data),
        static_cast<const int64_t *>(ops[1].data), mask);
  else if (ops[0].dtype == DType::I32)
    compareKernel<int32_t><<<grid, block, 0, call.stream()>>>(predicate, layout, n,
        static_cast<const int32_t *>(ops[0].data),
        static_cast<const int32_t *>(ops[1].data), mask);
  else if (ops[0].dtype == DType::Bool)
    compareKernel<uint8_t><<<grid, block, 0, call.stream()>>>(predicate, layout, n,
        static_cast<const uint8_t *>(ops[0].data),
        static_cast<const uint8_t *>(ops[1].data), mask);
  else if (!withFloat(ops[0].dtype, [&](auto t) {
             using T = decltype(t);
             compareKernel<T><<<grid, block, 0, call.stream()>>>(predicate, layout, n,
                 static_cast<const T *>(ops[0].data),
                 static_cast<const T *>(ops[1].data), mask);
           }))
    return call.unsupported();
  return launched(call.error);
}

} // namespace

void cuda::registerElementwiseKernels(CudaKernelTable &table) {
  for (img::OpKind kind : {img::kAdd, img::kSub, img::kMul, img::kDiv,
                           img::kMaximum, img::kMinimum, img::kPow})
    table.add(kind, runBinary);
  for (img::OpKind kind : {img::kNeg, img::kAbs, img::kExp, img::kLog,
                           img::kSqrt, img::kRsqrt, img::kTanh, img::kSigmoid,
                           img::kRelu, img::kGelu, img::kSilu, img::kFloor,
                           img::kCeil, img::kRound, img::kTrunc, img::kErf})
    table.add(kind, runUnary);
  table.add(img::kCompare, runCompare);
}
