//===- Elementwise.cu - CUDA kernels for elementwise ops ------------------===//
//
// The Elementwise family of OpKinds.def on the GPU: binary arithmetic with
// per-operand broadcast strides (up to 8 dimensions), the unary functions,
// and compare. Dense f32 results whose rows are a multiple of 4 long go 4
// elements a thread (16-byte accesses), with operands dense, broadcast
// along rows or columns, or scalar. f16 and bf16 compute in f32; integers follow Layout.h's
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

/// x `kind` y for the float kinds (f16 and bf16 computed in f32).
__device__ inline float binaryOf(int kind, float x, float y) {
  switch (kind) {
  case img::kAdd: return x + y;
  case img::kSub: return x - y;
  case img::kMul: return x * y;
  case img::kDiv: return x / y;
  case img::kMaximum: return (isnan(x) || isnan(y)) ? NAN : fmaxf(x, y);
  case img::kMinimum: return (isnan(x) || isnan(y)) ? NAN : fminf(x, y);
  case img::kPow: return powf(x, y);
  }
  return 0;
}

template <typename T>
__global__ void binaryFloat(int kind, Layout layout, int64_t n, const T *a,
                            const T *b, T *out) {
  GRID_LOOP(i, n) {
    int64_t o[2];
    operandOffsets(layout, i, o);
    out[i] = fromFloat<T>(binaryOf(kind, toFloat(a[o[0]]), toFloat(b[o[1]])));
  }
}

/// How an f32 operand of binaryF32Quads is read, for a result of `rows` x
/// `cols`: all of it, one row broadcast down the rows, one column broadcast
/// across them, or one scalar.
enum QuadReading : int { kDenseQuads, kRowQuads, kColumnQuads, kScalarQuads };

/// A dense f32 result of rows x cols (cols a multiple of 4; fewer than 2^31
/// elements) as quads of 4 elements: 16-byte loads and stores and 32-bit
/// index arithmetic, where the one-element kernels' 4-byte accesses reach
/// about 62% of an H200's bandwidth.
struct QuadLayout {
  uint32_t rows = 1, quadsPerRow = 0;
  QuadReading reading[2] = {kDenseQuads, kDenseQuads};
};

__device__ inline float4 readQuad(const float *p, QuadReading reading,
                                  uint32_t q, uint32_t row, uint32_t colQuad) {
  switch (reading) {
  case kDenseQuads: return reinterpret_cast<const float4 *>(p)[q];
  case kRowQuads: return reinterpret_cast<const float4 *>(p)[colQuad];
  case kColumnQuads: { float v = p[row]; return make_float4(v, v, v, v); }
  default: { float v = p[0]; return make_float4(v, v, v, v); }
  }
}

__global__ void binaryF32Quads(int kind, QuadLayout l, const float *a,
                               const float *b, float *out) {
  uint32_t quads = l.rows * l.quadsPerRow;
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < quads;
       q += gridDim.x * blockDim.x) {
    uint32_t row = l.rows == 1 ? 0 : q / l.quadsPerRow;
    uint32_t colQuad = q - row * l.quadsPerRow;
    float4 x = readQuad(a, l.reading[0], q, row, colQuad);
    float4 y = readQuad(b, l.reading[1], q, row, colQuad);
    reinterpret_cast<float4 *>(out)[q] =
        make_float4(binaryOf(kind, x.x, y.x), binaryOf(kind, x.y, y.y),
                    binaryOf(kind, x.z, y.z), binaryOf(kind, x.w, y.w));
  }
}

bool aligned16(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/// Whether `n` elements make whole quads that 32-bit indices reach.
bool wholeQuads(int64_t n) { return n > 0 && n % 4 == 0 && n < (int64_t(1) << 31); }

/// The quad plan of an f32 binary op, if it has one: a result of one or two
/// merged dimensions whose last is a multiple of 4, each operand read in one
/// of QuadReading's ways, the quad-read pointers 16-byte aligned.
bool quadLayoutOf(const Layout &layout, int64_t n, const void *a, const void *b,
                  const void *out, QuadLayout &l) {
  if (!wholeQuads(n) || layout.rank < 1 || layout.rank > 2)
    return false;
  int64_t cols = layout.dims[layout.rank - 1];
  if (cols % 4 != 0 || !aligned16(out))
    return false;
  l.rows = uint32_t(n / cols);
  l.quadsPerRow = uint32_t(cols / 4);
  const void *operands[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    int64_t last = layout.strides[k][layout.rank - 1];
    int64_t first = layout.rank == 2 ? layout.strides[k][0] : 0;
    if (last == 1 && (layout.rank == 1 || first == cols))
      l.reading[k] = kDenseQuads;
    else if (last == 1 && first == 0)
      l.reading[k] = kRowQuads;
    else if (last == 0 && first == 1 && layout.rank == 2)
      l.reading[k] = kColumnQuads;
    else if (last == 0 && first == 0)
      l.reading[k] = kScalarQuads;
    else
      return false;
    if (l.reading[k] <= kRowQuads && !aligned16(operands[k]))
      return false;
  }
  return true;
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

/// `kind` of v for the float kinds (f16 and bf16 computed in f32).
__device__ inline float unaryOf(int kind, float v) {
  switch (kind) {
  case img::kNeg: return -v;
  case img::kAbs: return fabsf(v);
  case img::kExp: return expf(v);
  case img::kLog: return logf(v);
  case img::kSqrt: return sqrtf(v);
  case img::kRsqrt: return rsqrtf(v);
  case img::kTanh: return tanhf(v);
  case img::kSigmoid: return 1.0f / (1.0f + expf(-v));
  case img::kRelu: return reluOf(v);
  case img::kGelu: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  case img::kSilu: return v / (1.0f + expf(-v));
  case img::kFloor: return floorf(v);
  case img::kCeil: return ceilf(v);
  case img::kRound: return rintf(v); // halves to even
  case img::kTrunc: return truncf(v);
  case img::kErf: return erff(v);
  }
  return 0;
}

template <typename T>
__global__ void unaryFloat(int kind, int64_t n, const T *x, T *out) {
  GRID_LOOP(i, n)
    out[i] = fromFloat<T>(unaryOf(kind, toFloat(x[i])));
}

/// unaryFloat over f32 quads (n / 4 of them; see QuadLayout).
__global__ void unaryF32Quads(int kind, uint32_t quads, const float *x, float *out) {
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < quads;
       q += gridDim.x * blockDim.x) {
    float4 v = reinterpret_cast<const float4 *>(x)[q];
    reinterpret_cast<float4 *>(out)[q] =
        make_float4(unaryOf(kind, v.x), unaryOf(kind, v.y), unaryOf(kind, v.z),
                    unaryOf(kind, v.w));
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
  else if (QuadLayout quads; dtype == DType::F32 &&
           quadLayoutOf(layout, n, ops[0].data, ops[1].data, out.data, quads))
    binaryF32Quads<<<blocksFor(n / 4), block, 0, call.stream()>>>(int(kind), quads,
        static_cast<const float *>(ops[0].data), static_cast<const float *>(ops[1].data),
        static_cast<float *>(out.data));
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
  if (dtype == DType::F32 && wholeQuads(n) && aligned16(ops[0].data) &&
      aligned16(out.data)) {
    unaryF32Quads<<<blocksFor(n / 4), block, 0, call.stream()>>>(int(kind), uint32_t(n / 4),
        static_cast<const float *>(ops[0].data), static_cast<float *>(out.data));
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
