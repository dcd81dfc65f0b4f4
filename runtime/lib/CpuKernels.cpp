//===- CpuKernels.cpp - the CPU kernels of the runtime --------------------===//
//
// Every op of the IR contract on the CPU. f16 and bf16 compute in f32 (the
// operands are widened, the result rounded to nearest even), as PyTorch's
// CPU kernels do for most ops; data movement ops copy elements of any size.
// GEMMs (matmul, linear) go to OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "Layout.h"
#include "ThreadPool.h"
#include "tandem/runtime/ModelImage.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

/// Advances a row-major `index` over the first `dims` dimensions of `shape`
/// by one, keeping each input's offset in step with its `strides`.
template <size_t N>
void advance(std::vector<int64_t> &index, const std::vector<int64_t> &shape,
             const std::vector<int64_t> (&strides)[N], int64_t (&offsets)[N],
             size_t dims) {
  for (size_t d = dims; d-- > 0;) {
    ++index[d];
    for (size_t k = 0; k < N; ++k)
      offsets[k] += strides[k][d];
    if (index[d] < shape[d])
      return;
    for (size_t k = 0; k < N; ++k)
      offsets[k] -= strides[k][d] * index[d];
    index[d] = 0;
  }
}

/// Calls f(outIndex, inputOffsets) for every element of `shape`, with the
/// offsets of each input advanced by its `strides`, in order, on this thread
/// (for callers that accumulate).
template <size_t N, typename F>
void forEachBroadcast(const std::vector<int64_t> &shape,
                      const std::vector<int64_t> (&strides)[N], F f) {
  uint64_t n = countOf(shape);
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offsets[N] = {};
  for (uint64_t i = 0; i < n; ++i) {
    f(i, static_cast<const int64_t *>(offsets));
    advance(index, shape, strides, offsets, shape.size());
  }
}

/// Merges adjacent dimensions that every input walks as one (and drops
/// dimensions of size 1), so that the loops below run long inner rows.
template <size_t N>
void coalesce(std::vector<int64_t> &shape, std::vector<int64_t> (&strides)[N]) {
  std::vector<int64_t> merged;
  std::vector<int64_t> mergedStrides[N];
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    bool joins = !merged.empty();
    for (size_t k = 0; k < N && joins; ++k)
      joins = mergedStrides[k].back() == strides[k][d] * shape[d];
    if (joins) {
      merged.back() *= shape[d];
      for (size_t k = 0; k < N; ++k)
        mergedStrides[k].back() = strides[k][d];
      continue;
    }
    merged.push_back(shape[d]);
    for (size_t k = 0; k < N; ++k)
      mergedStrides[k].push_back(strides[k][d]);
  }
  shape = std::move(merged);
  for (size_t k = 0; k < N; ++k)
    strides[k] = std::move(mergedStrides[k]);
}

/// Calls run(outIndex, inputOffsets, length, inputStrides) once per row of
/// the (coalesced) last dimension: the row's `length` elements start at
/// outIndex in the dense output and at inputOffsets[k] in input k, which
/// advances by inputStrides[k]. Rows are spread over the worker pool;
/// `costPerElement` is a rough count of operations per element.
template <size_t N, typename F>
void forEachRow(std::vector<int64_t> shape, std::vector<int64_t> (&strides)[N],
                int64_t costPerElement, F run) {
  if (countOf(shape) == 0)
    return;
  coalesce(shape, strides);
  size_t rank = shape.size();
  int64_t length = rank ? shape.back() : 1;
  int64_t inner[N];
  for (size_t k = 0; k < N; ++k)
    inner[k] = rank ? strides[k].back() : 0;
  int64_t rows = int64_t(countOf(shape)) / length;
  parallelFor(rows, length * costPerElement, [&](int64_t first, int64_t last) {
    // The outer index of row `first`, and the inputs' offsets there.
    std::vector<int64_t> index(rank ? rank - 1 : 0, 0);
    int64_t offsets[N] = {};
    for (int64_t r = first, d = int64_t(index.size()) - 1; d >= 0; --d) {
      index[d] = r % shape[d];
      r /= shape[d];
      for (size_t k = 0; k < N; ++k)
        offsets[k] += index[d] * strides[k][d];
    }
    for (int64_t row = first; row < last; ++row) {
      run(row * length, static_cast<const int64_t *>(offsets), length,
          static_cast<const int64_t *>(inner));
      advance(index, shape, strides, offsets, index.size());
    }
  });
}

/// forEachBroadcast for element-independent work: f(outIndex, offsets) in
/// parallel rows (f must not accumulate across elements).
template <size_t N, typename F>
void forEachElement(const std::vector<int64_t> &shape,
                    const std::vector<int64_t> (&strides)[N],
                    int64_t costPerElement, F f) {
  std::vector<int64_t> copies[N];
  for (size_t k = 0; k < N; ++k)
    copies[k] = strides[k];
  forEachRow(shape, copies, costPerElement,
             [&](int64_t out, const int64_t *start, int64_t length,
                 const int64_t *step) {
               int64_t o[N];
               for (size_t k = 0; k < N; ++k)
                 o[k] = start[k];
               for (int64_t j = 0; j < length; ++j) {
                 f(uint64_t(out + j), static_cast<const int64_t *>(o));
                 for (size_t k = 0; k < N; ++k)
                   o[k] += step[k];
               }
             });
}

//===----------------------------------------------------------------------===//
// f16 and bf16
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff, bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // inf or nan
    return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  int32_t e = int32_t(exponent) - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00;
  if (e <= 0) { // subnormal or zero, round to nearest even
    if (e < -10)
      return sign;
    mantissa |= 0x800000;
    uint32_t shift = 14 - e;
    uint32_t value = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (value & 1)))
      ++value;
    return sign | value;
  }
  uint32_t value = (uint32_t(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (value & 1)))
    ++value; // may carry into the exponent: still correct
  return sign | value;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return (bits >> 16) | 0x40; // quiet nan
  bits += 0x7fff + ((bits >> 16) & 1);
  return bits >> 16;
}

bool isHalf(DType dtype) { return dtype == DType::F16 || dtype == DType::BF16; }

/// Element i of a tensor as a double (a wide common type for cast).
double loadDouble(DType dtype, const void *data, uint64_t i) {
  switch (dtype) {
  case DType::F32: return static_cast<const float *>(data)[i];
  case DType::F16: return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::BF16: return bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::I64: return double(static_cast<const int64_t *>(data)[i]);
  case DType::I32: return static_cast<const int32_t *>(data)[i];
  case DType::Bool: return static_cast<const uint8_t *>(data)[i] != 0;
  }
  return 0;
}

void storeDouble(DType dtype, void *data, uint64_t i, double value) {
  switch (dtype) {
  case DType::F32: static_cast<float *>(data)[i] = float(value); break;
  case DType::F16: static_cast<uint16_t *>(data)[i] = floatToHalf(float(value)); break;
  case DType::BF16: static_cast<uint16_t *>(data)[i] = floatToBf16(float(value)); break;
  case DType::I64: static_cast<int64_t *>(data)[i] = floatToInteger<int64_t>(value); break;
  case DType::I32: static_cast<int32_t *>(data)[i] = floatToInteger<int32_t>(value); break;
  case DType::Bool: static_cast<uint8_t *>(data)[i] = value != 0; break;
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename T, typename F>
void binary(const TensorView &a, const TensorView &b, const TensorView &out,
            F f) {
  const T *x = static_cast<const T *>(a.data);
  const T *y = static_cast<const T *>(b.data);
  T *z = static_cast<T *>(out.data);
  if (a.shape == out.shape && b.shape == out.shape) {
    parallelFor(countOf(out.shape), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        z[i] = f(x[i], y[i]);
    });
    return;
  }
  std::vector<int64_t> strides[2] = {broadcastStrides(a.shape, out.shape),
                                     broadcastStrides(b.shape, out.shape)};
  forEachElement(out.shape, strides, 1, [&](uint64_t i, const int64_t *o) {
    z[i] = f(x[o[0]], y[o[1]]);
  });
}

template <typename T> T nanAware(T x, T y, bool max) {
  if constexpr (!std::is_integral_v<T>)
    if (std::isnan(x) || std::isnan(y))
      return std::numeric_limits<T>::quiet_NaN();
  return max ? std::max(x, y) : std::min(x, y);
}

/// Integers wrap around; an integer division by zero fails the op.
template <typename T>
bool binaryOp(int64_t kind, const TensorView &a, const TensorView &b,
              const TensorView &out, std::string &error) {
  constexpr bool integral = std::is_integral_v<T>;
  switch (kind) {
  case img::kAdd:
    binary<T>(a, b, out, [](T x, T y) {
      if constexpr (integral) return wrapAdd(x, y); else return x + y;
    });
    return true;
  case img::kSub:
    binary<T>(a, b, out, [](T x, T y) {
      if constexpr (integral) return wrapSub(x, y); else return x - y;
    });
    return true;
  case img::kMul:
    binary<T>(a, b, out, [](T x, T y) {
      if constexpr (integral) return wrapMul(x, y); else return x * y;
    });
    return true;
  case img::kDiv:
    if constexpr (integral) {
      std::atomic<bool> anyByZero{false};
      binary<T>(a, b, out, [&](T x, T y) {
        bool byZero = false;
        T q = divideInteger(x, y, byZero);
        if (byZero)
          anyByZero.store(true, std::memory_order_relaxed);
        return q;
      });
      if (anyByZero.load()) {
        error = "integer division by zero";
        return false;
      }
    } else {
      binary<T>(a, b, out, [](T x, T y) { return x / y; });
    }
    return true;
  case img::kMaximum: binary<T>(a, b, out, [](T x, T y) { return nanAware(x, y, true); }); return true;
  case img::kMinimum: binary<T>(a, b, out, [](T x, T y) { return nanAware(x, y, false); }); return true;
  case img::kPow:
    if constexpr (std::is_integral_v<T>)
      return false;
    else
      binary<T>(a, b, out, [](T x, T y) { return std::pow(x, y); });
    return true;
  default:
    return false;
  }
}

/// tanh as Eigen computes it for floats: a 13/6 rational approximation on
/// [-7.9, 7.9] (±1 beyond, x itself near 0). Branch-free, so the compiler
/// vectorizes it: about 4x glibc's tanhf here, within 3e-7 relative of the
/// exact value (tanhf: 1.3e-7).
float fastTanh(float v) {
  float x = std::clamp(v, -7.90531110763549805f, 7.90531110763549805f);
  float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  float r = x * p / q;
  return std::fabs(v) < 0.0004f ? v : r;
}

/// `cost`: rough operations per element (transcendental functions cost
/// tens), which decides when the pool pays.
template <typename T, typename F>
void unary(const TensorView &x, const TensorView &out, F f, int64_t cost = 4) {
  const T *in = static_cast<const T *>(x.data);
  T *o = static_cast<T *>(out.data);
  parallelFor(countOf(out.shape), cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      o[i] = f(in[i]);
  });
}

bool unaryF32(int64_t kind, const TensorView &x, const TensorView &out) {
  switch (kind) {
  case img::kNeg: unary<float>(x, out, [](float v) { return -v; }); return true;
  case img::kAbs: unary<float>(x, out, [](float v) { return std::fabs(v); }); return true;
  case img::kExp: unary<float>(x, out, [](float v) { return std::exp(v); }, 40); return true;
  case img::kLog: unary<float>(x, out, [](float v) { return std::log(v); }, 40); return true;
  case img::kSqrt: unary<float>(x, out, [](float v) { return std::sqrt(v); }); return true;
  case img::kRsqrt: unary<float>(x, out, [](float v) { return 1.0f / std::sqrt(v); }); return true;
  case img::kTanh: unary<float>(x, out, [](float v) { return fastTanh(v); }, 20); return true;
  case img::kSigmoid: unary<float>(x, out, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }, 40); return true;
  case img::kRelu: unary<float>(x, out, [](float v) { return reluOf(v); }); return true;
  case img::kGelu: unary<float>(x, out, [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); }, 40); return true;
  case img::kSilu: unary<float>(x, out, [](float v) { return v / (1.0f + std::exp(-v)); }, 40); return true;
  default:
    return false;
  }
}

template <typename T>
bool unaryInt(int64_t kind, const TensorView &x, const TensorView &out) {
  switch (kind) {
  case img::kNeg: unary<T>(x, out, [](T v) { return wrapNeg(v); }); return true;
  // abs(MIN) is MIN, as in NumPy and PyTorch.
  case img::kAbs: unary<T>(x, out, [](T v) { return v < 0 ? wrapNeg(v) : v; }); return true;
  case img::kRelu: unary<T>(x, out, [](T v) { return reluOf(v); }); return true;
  default:
    return false;
  }
}

template <typename T>
void compare(const TensorView &a, const TensorView &b, const TensorView &out,
             int64_t predicate) {
  const T *x = static_cast<const T *>(a.data);
  const T *y = static_cast<const T *>(b.data);
  uint8_t *z = static_cast<uint8_t *>(out.data);
  std::vector<int64_t> strides[2] = {broadcastStrides(a.shape, out.shape),
                                     broadcastStrides(b.shape, out.shape)};
  forEachElement(out.shape, strides, 1, [&](uint64_t i, const int64_t *o) {
    z[i] = comparePredicate(predicate, x[o[0]], y[o[1]]);
  });
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, normalization
//===----------------------------------------------------------------------===//

void matmulF32(const TensorView &a, const TensorView &b, const TensorView &out) {
  size_t ra = a.shape.size(), rb = b.shape.size();
  int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
  std::vector<int64_t> batch(out.shape.begin(), out.shape.end() - 2);
  std::vector<int64_t> aBatch(a.shape.begin(), a.shape.end() - 2),
      bBatch(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> strides[2] = {broadcastStrides(aBatch, batch),
                                     broadcastStrides(bBatch, batch)};
  const float *x = static_cast<const float *>(a.data);
  const float *y = static_cast<const float *>(b.data);
  float *z = static_cast<float *>(out.data);
  forEachBroadcast(batch, strides, [&](uint64_t i, const int64_t *o) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                x + o[0] * m * k, k, y + o[1] * k * n, n, 0.0f, z + i * m * n,
                n);
  });
}

void linearF32(const TensorView &x, const TensorView &w, const TensorView *b,
               const TensorView &out) {
  int64_t k = x.shape.back(), n = w.shape[0];
  int64_t rows = k ? countOf(x.shape) / k : 0;
  float *z = static_cast<float *>(out.data);
  if (b)
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(z + r * n, b->data, n * sizeof(float));
  if (rows && n)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, k, 1.0f,
                static_cast<const float *>(x.data), k,
                static_cast<const float *>(w.data), k, b ? 1.0f : 0.0f, z, n);
}

/// The output columns [first, last) whose input column xo·stride + offset
/// lies inside [0, width): the others read padding. (Ceiling divisions; a
/// negative numerator truncates toward zero, which the clamps absorb.)
std::pair<int64_t, int64_t> columnsInside(int64_t offset, int64_t stride,
                                          int64_t width, int64_t outputs) {
  int64_t first =
      std::min(outputs, std::max<int64_t>(0, (-offset + stride - 1) / stride));
  int64_t last =
      std::max(first, std::min(outputs, (width - offset + stride - 1) / stride));
  return {first, last};
}

/// Depthwise convolution (one input channel per group and one filter per
/// channel, as in MobileNets) directly: each output row accumulates kernel
/// row by kernel column over all its outputs at once, planes in parallel.
/// A GEMM per channel would be 1 x cols x k*k: all overhead.
void depthwiseConv2dF32(const TensorView &x, const TensorView &w,
                        const TensorView *b, const TensorView &out,
                        const std::vector<int64_t> &a) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t kh = w.shape[2], kw = w.shape[3];
  int64_t oh = out.shape[2], ow = out.shape[3];
  int64_t sh = a[0], sw = a[1], ph = a[2], pw = a[3], dh = a[4], dw = a[5];
  const float *in = static_cast<const float *>(x.data);
  const float *wt = static_cast<const float *>(w.data);
  const float *bias = b ? static_cast<const float *>(b->data) : nullptr;
  float *z = static_cast<float *>(out.data);
  parallelFor(n * c, oh * ow * kh * kw, [&](int64_t first, int64_t last) {
    for (int64_t plane = first; plane < last; ++plane) {
      int64_t channel = plane % c;
      const float *src = in + plane * h * wd;
      const float *filter = wt + channel * kh * kw;
      for (int64_t y = 0; y < oh; ++y) {
        float *acc = z + (plane * oh + y) * ow;
        std::fill(acc, acc + ow, bias ? bias[channel] : 0.0f);
        for (int64_t i = 0; i < kh; ++i) {
          int64_t iy = y * sh - ph + i * dh;
          if (iy < 0 || iy >= h)
            continue;
          const float *row = src + iy * wd;
          for (int64_t j = 0; j < kw; ++j) {
            int64_t offset = j * dw - pw;
            auto [x0, x1] = columnsInside(offset, sw, wd, ow);
            float weight = filter[i * kw + j];
            const float *from = row + offset;
            for (int64_t xo = x0; xo < x1; ++xo)
              acc[xo] += weight * from[xo * sw];
          }
        }
      }
    }
  });
}

/// Convolution as GEMMs: the input windows of a chunk of images are laid out
/// as columns (im2col; padding reads as zeros) and each group's filters
/// multiply all of them in one OpenBLAS call, which keeps the GEMM wide for
/// small images; the product is then scattered back to NCHW.
void conv2dF32(const TensorView &x, const TensorView &w, const TensorView *b,
               const TensorView &out, const std::vector<int64_t> &a) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t oh = out.shape[2], ow = out.shape[3];
  int64_t sh = a[0], sw = a[1], ph = a[2], pw = a[3], dh = a[4], dw = a[5],
          groups = a[6];
  int64_t og = o / groups, rows = cg * kh * kw, cols = oh * ow;
  if (groups == c && o == c && cg == 1)
    return depthwiseConv2dF32(x, w, b, out, a);
  const float *in = static_cast<const float *>(x.data);
  const float *wt = static_cast<const float *>(w.data);
  const float *bias = b ? static_cast<const float *>(b->data) : nullptr;
  float *z = static_cast<float *>(out.data);
  if (rows == 0 || cols == 0 || og == 0 || n == 0) {
    for (int64_t i = 0, e = n * o * cols; i < e; ++i)
      z[i] = bias ? bias[(i / cols) % o] : 0.0f;
    return;
  }
  // Images per GEMM: as many as keep the columns within about 32 MiB.
  int64_t chunk = std::clamp<int64_t>((int64_t(8) << 20) / (rows * cols), 1, n);
  std::vector<float> columns(size_t(rows) * chunk * cols);
  std::vector<float> product(chunk > 1 ? size_t(og) * chunk * cols : 0);
  for (int64_t n0 = 0; n0 < n; n0 += chunk) {
    int64_t images = std::min(chunk, n - n0), width = images * cols;
    for (int64_t g = 0; g < groups; ++g) {
      parallelFor(rows * images, cols, [&](int64_t first, int64_t last) {
        for (int64_t task = first; task < last; ++task) {
          int64_t r = task % rows, image = task / rows;
          int64_t ci = r / (kh * kw), i = (r / kw) % kh, j = r % kw;
          const float *plane = in + ((n0 + image) * c + g * cg + ci) * h * wd;
          float *row = columns.data() + r * width + image * cols;
          int64_t offset = j * dw - pw;
          auto [x0, x1] = columnsInside(offset, sw, wd, ow);
          for (int64_t y = 0; y < oh; ++y) {
            float *dst = row + y * ow;
            int64_t iy = y * sh - ph + i * dh;
            if (iy < 0 || iy >= h) {
              std::fill(dst, dst + ow, 0.0f);
              continue;
            }
            const float *src = plane + iy * wd + offset;
            std::fill(dst, dst + x0, 0.0f);
            for (int64_t xo = x0; xo < x1; ++xo)
              dst[xo] = src[xo * sw];
            std::fill(dst + x1, dst + ow, 0.0f);
          }
        }
      });
      // One image: the GEMM writes the output directly.
      float *result = images == 1 ? z + (n0 * o + g * og) * cols : product.data();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, og, width, rows,
                  1.0f, wt + g * og * rows, rows, columns.data(), width, 0.0f,
                  result, width);
      for (int64_t image = 0; image < images; ++image)
        for (int64_t oi = 0; oi < og; ++oi) {
          float *dst = z + ((n0 + image) * o + g * og + oi) * cols;
          const float *src = result + oi * width + image * cols;
          float add = bias ? bias[g * og + oi] : 0.0f;
          if (images == 1) {
            if (bias)
              for (int64_t k = 0; k < cols; ++k)
                dst[k] += add;
          } else {
            for (int64_t k = 0; k < cols; ++k)
              dst[k] = src[k] + add;
          }
        }
    }
  }
}

void pool2dF32(const TensorView &x, const TensorView &out,
               const std::vector<int64_t> &a, bool max) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t oh = out.shape[2], ow = out.shape[3];
  int64_t kh = a[0], kw = a[1], sh = a[2], sw = a[3], ph = a[4], pw = a[5];
  const float *in = static_cast<const float *>(x.data);
  float *z = static_cast<float *>(out.data);
  // Each output row accumulates window row by window row and column by
  // column, over all its outputs at once (long, branch-free inner loops).
  // Padding is -inf for max and 0 for the average, so it is skipped; padded
  // zeros still count in the average's divisor (count_include_pad=True).
  float start = max ? -std::numeric_limits<float>::infinity() : 0.0f;
  float scale = max ? 1.0f : 1.0f / float(kh * kw);
  parallelFor(n * c, oh * ow * kh * kw, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p)
      for (int64_t y = 0; y < oh; ++y) {
        float *acc = z + (p * oh + y) * ow;
        std::fill(acc, acc + ow, start);
        int64_t top = y * sh - ph;
        for (int64_t i = std::max<int64_t>(0, -top); i < std::min(kh, h - top);
             ++i) {
          const float *row = in + (p * h + top + i) * w;
          for (int64_t j = 0; j < kw; ++j) {
            int64_t offset = j - pw;
            auto [x0, x1] = columnsInside(offset, sw, w, ow);
            const float *src = row + offset;
            if (max)
              for (int64_t xo = x0; xo < x1; ++xo) {
                float v = src[xo * sw];
                acc[xo] = v > acc[xo] || v != v ? v : acc[xo];
              }
            else
              for (int64_t xo = x0; xo < x1; ++xo)
                acc[xo] += src[xo * sw];
          }
        }
        if (!max)
          for (int64_t xo = 0; xo < ow; ++xo)
            acc[xo] *= scale;
      }
  });
}

void softmaxF32(const TensorView &x, const TensorView &out, int64_t axis,
                bool log) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  const float *in = static_cast<const float *>(x.data);
  float *z = static_cast<float *>(out.data);
  parallelFor(outer * inner, 8 * size, [&](int64_t first, int64_t last) {
    for (int64_t item = first; item < last; ++item) {
      int64_t o = item / inner, i = item % inner;
      const float *row = in + o * size * inner + i;
      float *dst = z + o * size * inner + i;
      float peak = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < size; ++k)
        peak = std::max(peak, row[k * inner]);
      // One exp per element, kept in the output until the sum is known.
      double sum = 0;
      for (int64_t k = 0; k < size; ++k) {
        float e = std::exp(row[k * inner] - peak);
        dst[k * inner] = e;
        sum += e;
      }
      if (log) {
        float logSum = float(std::log(sum));
        for (int64_t k = 0; k < size; ++k)
          dst[k * inner] = (row[k * inner] - peak) - logSum;
      } else {
        float scale = float(1.0 / sum);
        for (int64_t k = 0; k < size; ++k)
          dst[k * inner] *= scale;
      }
    }
  });
}

void l2NormalizeF32(const TensorView &x, const TensorView &out, int64_t axis,
                    double epsilon) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  const float *in = static_cast<const float *>(x.data);
  float *z = static_cast<float *>(out.data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *row = in + o * size * inner + i;
      double sum = 0;
      for (int64_t k = 0; k < size; ++k)
        sum += double(row[k * inner]) * row[k * inner];
      double norm = std::max(std::sqrt(sum), epsilon);
      for (int64_t k = 0; k < size; ++k)
        z[o * size * inner + i + k * inner] = float(row[k * inner] / norm);
    }
}

void layerNormF32(const TensorView &x, const TensorView &gamma,
                  const TensorView &beta, const TensorView &out, int64_t axis,
                  double epsilon) {
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < int64_t(x.shape.size()); ++d)
    (d < axis ? rows : cols) *= x.shape[d];
  const float *in = static_cast<const float *>(x.data);
  const float *g = static_cast<const float *>(gamma.data);
  const float *b = static_cast<const float *>(beta.data);
  float *z = static_cast<float *>(out.data);
  parallelFor(rows, 8 * cols, [&](int64_t first, int64_t last) {
  for (int64_t r = first; r < last; ++r) {
    const float *row = in + r * cols;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += row[c];
    mean /= std::max<int64_t>(cols, 1);
    for (int64_t c = 0; c < cols; ++c)
      var += (row[c] - mean) * (row[c] - mean);
    var /= std::max<int64_t>(cols, 1);
    // Statistics in double; the per-element pass in float, which vectorizes.
    float center = float(mean), scale = float(1.0 / std::sqrt(var + epsilon));
    for (int64_t c = 0; c < cols; ++c)
      z[r * cols + c] = (row[c] - center) * scale * g[c] + b[c];
  }
  });
}

void batchNormF32(const std::vector<TensorView> &ops, const TensorView &out,
                  double epsilon) {
  const TensorView &x = ops[0];
  int64_t outer = x.shape[0], channels = x.shape[1], inner = 1;
  for (size_t d = 2; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  const float *in = static_cast<const float *>(x.data);
  const float *scale = static_cast<const float *>(ops[1].data);
  const float *bias = static_cast<const float *>(ops[2].data);
  const float *mean = static_cast<const float *>(ops[3].data);
  const float *var = static_cast<const float *>(ops[4].data);
  float *z = static_cast<float *>(out.data);
  for (int64_t c = 0; c < channels; ++c) {
    double factor = scale[c] / std::sqrt(double(var[c]) + epsilon);
    double shift = bias[c] - mean[c] * factor;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (o * channels + c) * inner + i;
        z[at] = float(in[at] * factor + shift);
      }
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The common case, reduced axes that are consecutive dimensions: x is
/// [outer, reduced, inner] and each output element folds one strided run,
/// in parallel over the outputs. Returns false for other axis sets.
/// A reduction's running sum; integer sums wrap around.
template <typename Acc> Acc sum(Acc total, Acc v) {
  if constexpr (std::is_integral_v<Acc>)
    return wrapAdd(total, v);
  else
    return total + v;
}

template <typename T, typename Acc>
bool reduceConsecutive(int64_t kind, const TensorView &x, const TensorView &out,
                       const std::vector<int64_t> &axes) {
  int64_t first = *std::min_element(axes.begin(), axes.end());
  int64_t last = *std::max_element(axes.begin(), axes.end());
  if (last - first + 1 != int64_t(axes.size()))
    return false;
  int64_t outer = 1, count = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(x.shape.size()); ++d)
    (d < first ? outer : d <= last ? count : inner) *= x.shape[d];
  bool isMax = kind == img::kReduceMax, isMin = kind == img::kReduceMin;
  const T *in = static_cast<const T *>(x.data);
  T *z = static_cast<T *>(out.data);
  parallelFor(outer * inner, count, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const T *run = in + (o / inner) * count * inner + o % inner;
      Acc acc = isMax   ? std::numeric_limits<Acc>::lowest()
                : isMin ? std::numeric_limits<Acc>::max()
                        : Acc(0);
      bool nan = false;
      for (int64_t r = 0; r < count; ++r) {
        Acc v = Acc(run[r * inner]);
        if constexpr (!std::is_integral_v<T>)
          nan |= v != v;
        acc = isMax ? std::max(acc, v) : isMin ? std::min(acc, v) : sum(acc, v);
      }
      if (kind == img::kReduceMean)
        acc = count ? acc / Acc(count) : Acc(NAN);
      if constexpr (!std::is_integral_v<T>)
        if ((isMax || isMin) && nan)
          acc = Acc(NAN);
      z[o] = T(acc);
    }
  });
  return true;
}

template <typename T, typename Acc>
void reduce(int64_t kind, const TensorView &x, const TensorView &out,
            const std::vector<int64_t> &axes) {
  if (!axes.empty() && reduceConsecutive<T, Acc>(kind, x, out, axes))
    return;
  std::vector<bool> reduced(x.shape.size(), false);
  for (int64_t axis : axes)
    reduced[axis] = true;
  // The output offset of each input element: the input's index with the
  // reduced axes dropped (or kept as 1: the same offset).
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < x.shape.size(); ++d)
    outShape.push_back(reduced[d] ? 1 : x.shape[d]);
  std::vector<int64_t> outStrides = rowMajorStrides(outShape);
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (reduced[d])
      outStrides[d] = 0;
  uint64_t outCount = countOf(out.shape);
  std::vector<Acc> acc(outCount);
  bool isMax = kind == img::kReduceMax, isMin = kind == img::kReduceMin;
  std::fill(acc.begin(), acc.end(),
            isMax ? std::numeric_limits<Acc>::lowest()
                  : isMin ? std::numeric_limits<Acc>::max() : Acc(0));
  const T *in = static_cast<const T *>(x.data);
  std::vector<int64_t> strides[1] = {outStrides};
  std::vector<bool> nan(outCount, false);
  forEachBroadcast(x.shape, strides, [&](uint64_t i, const int64_t *o) {
    Acc v = Acc(in[i]);
    if constexpr (!std::is_integral_v<T>)
      if (std::isnan(double(v)))
        nan[o[0]] = true;
    if (isMax)
      acc[o[0]] = std::max(acc[o[0]], v);
    else if (isMin)
      acc[o[0]] = std::min(acc[o[0]], v);
    else
      acc[o[0]] = sum(acc[o[0]], v);
  });
  uint64_t per = countOf(x.shape) / std::max<uint64_t>(outCount, 1);
  T *z = static_cast<T *>(out.data);
  for (uint64_t i = 0; i < outCount; ++i) {
    Acc v = acc[i];
    if (kind == img::kReduceMean)
      v = per ? v / Acc(per) : Acc(NAN);
    if constexpr (!std::is_integral_v<T>)
      if ((isMax || isMin) && nan[i])
        v = Acc(NAN);
    z[i] = T(v);
  }
}

template <typename T>
void argmax(const TensorView &x, const TensorView &out, int64_t axis) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  const T *in = static_cast<const T *>(x.data);
  int64_t *z = static_cast<int64_t *>(out.data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *row = in + o * size * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < size; ++k) {
        T v = row[k * inner], b = row[best * inner];
        bool vNan = false, bNan = false;
        if constexpr (!std::is_integral_v<T>) {
          vNan = std::isnan(v);
          bNan = std::isnan(b);
        }
        if (!bNan && (vNan || v > b))
          best = k; // the first maximum; NaN counts as the maximum
      }
      z[o * inner + i] = best;
    }
}

//===----------------------------------------------------------------------===//
// Data movement (any element size)
//===----------------------------------------------------------------------===//

/// Copies the elements `x` holds at `sourceStrides` (from element `base`)
/// into the dense `out`, a contiguous row at a time where the source allows.
void copyStrided(const TensorView &x, const TensorView &out,
                 const std::vector<int64_t> &sourceStrides, int64_t base = 0) {
  size_t item = dtypeSize(out.dtype);
  const uint8_t *in = static_cast<const uint8_t *>(x.data) + base * item;
  uint8_t *z = static_cast<uint8_t *>(out.data);
  std::vector<int64_t> strides[1] = {sourceStrides};
  forEachRow(out.shape, strides, 1,
             [&](int64_t o, const int64_t *start, int64_t length,
                 const int64_t *step) {
               const uint8_t *src = in + start[0] * item;
               uint8_t *dst = z + o * item;
               if (step[0] == 1) {
                 std::memcpy(dst, src, length * item);
               } else if (item == 4) {
                 for (int64_t j = 0; j < length; ++j)
                   std::memcpy(dst + 4 * j, src + 4 * j * step[0], 4);
               } else {
                 for (int64_t j = 0; j < length; ++j)
                   std::memcpy(dst + j * item, src + j * step[0] * item, item);
               }
             });
}

void transpose(const TensorView &x, const TensorView &out,
               const std::vector<int64_t> &perm) {
  std::vector<int64_t> inStrides = rowMajorStrides(x.shape), strides;
  for (int64_t p : perm)
    strides.push_back(inStrides[p]);
  copyStrided(x, out, strides);
}

void concat(const std::vector<TensorView> &inputs, const TensorView &out,
            int64_t axis) {
  int64_t outer, size, inner;
  splitAt(out.shape, axis, outer, size, inner);
  size_t item = dtypeSize(out.dtype);
  uint8_t *z = static_cast<uint8_t *>(out.data);
  int64_t offset = 0;
  for (const TensorView &input : inputs) {
    int64_t part = input.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(z + (o * size + offset) * inner * item,
                  static_cast<const uint8_t *>(input.data) +
                      o * part * inner * item,
                  part * inner * item);
    offset += part;
  }
}

/// Slices of `x` along `axis` picked by `indices`. A negative index counts
/// from the end where `negativeFromEnd` (numpy.take) and is an error
/// otherwise (torch.nn.functional.embedding).
bool takeRows(const TensorView &x, const TensorView &indices,
              const TensorView &out, int64_t axis, bool negativeFromEnd,
              std::string &error) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  uint64_t picks = countOf(indices.shape);
  size_t item = dtypeSize(out.dtype);
  const uint8_t *in = static_cast<const uint8_t *>(x.data);
  uint8_t *z = static_cast<uint8_t *>(out.data);
  for (uint64_t j = 0; j < picks; ++j) {
    int64_t index = indices.dtype == DType::I64
                        ? static_cast<const int64_t *>(indices.data)[j]
                        : static_cast<const int32_t *>(indices.data)[j];
    int64_t given = index;
    if (index < 0 && negativeFromEnd)
      index += size;
    if (index < 0 || index >= size) {
      error = "index " + std::to_string(given) + " is out of range " +
              (negativeFromEnd ? "[-" + std::to_string(size) + ", "
                               : std::string("[0, ")) +
              std::to_string(size) + ")";
      return false;
    }
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(z + ((o * picks + j) * inner) * item,
                  in + ((o * size + index) * inner) * item, inner * item);
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

namespace {

bool movesData(int64_t kind) {
  switch (kind) {
  case img::kTransfer: case img::kCast: case img::kSelect:
  case img::kTranspose: case img::kConcat: case img::kSlice:
  case img::kBroadcastTo: case img::kEmbedding: case img::kGather:
  case img::kDynamicSlice: case img::kShape: case img::kFill: case img::kIota:
  case img::kConstant:
    return true;
  default:
    return false;
  }
}

bool runF32OrInt(int64_t kind, const std::vector<TensorView> &ops,
                 const TensorView &out, const std::vector<int64_t> &a,
                 std::string &error) {
  DType dtype = out.dtype;
  auto unsupported = [&] {
    error = std::string("no CPU kernel for this op on ") + dtypeName(dtype);
    return false;
  };
  bool f32 = dtype == DType::F32;
  switch (kind) {
  case img::kAdd: case img::kSub: case img::kMul: case img::kDiv:
  case img::kMaximum: case img::kMinimum: case img::kPow: {
    if (!f32 && dtype != DType::I64 && dtype != DType::I32)
      return unsupported();
    bool done = f32                   ? binaryOp<float>(kind, ops[0], ops[1], out, error)
                : dtype == DType::I64 ? binaryOp<int64_t>(kind, ops[0], ops[1], out, error)
                                      : binaryOp<int32_t>(kind, ops[0], ops[1], out, error);
    // binaryOp fails with a message (division by zero) or for a kind it
    // has no kernel for.
    return done || (error.empty() && unsupported());
  }
  case img::kCompare:
    switch (ops[0].dtype) {
    case DType::F32: compare<float>(ops[0], ops[1], out, a[0]); return true;
    case DType::I64: compare<int64_t>(ops[0], ops[1], out, a[0]); return true;
    case DType::I32: compare<int32_t>(ops[0], ops[1], out, a[0]); return true;
    case DType::Bool: compare<uint8_t>(ops[0], ops[1], out, a[0]); return true;
    default: return unsupported();
    }
  case img::kMatmul:
    if (!f32)
      return unsupported();
    matmulF32(ops[0], ops[1], out);
    return true;
  case img::kLinear:
    if (!f32)
      return unsupported();
    linearF32(ops[0], ops[1], ops.size() > 2 ? &ops[2] : nullptr, out);
    return true;
  case img::kConv2d:
    if (!f32)
      return unsupported();
    conv2dF32(ops[0], ops[1], ops.size() > 2 ? &ops[2] : nullptr, out, a);
    return true;
  case img::kMaxPool2d: case img::kAvgPool2d:
    if (!f32)
      return unsupported();
    pool2dF32(ops[0], out, a, kind == img::kMaxPool2d);
    return true;
  case img::kBatchNorm:
    if (!f32)
      return unsupported();
    batchNormF32(ops, out, wordToDouble(a[0]));
    return true;
  case img::kSoftmax: case img::kLogSoftmax:
    if (!f32)
      return unsupported();
    softmaxF32(ops[0], out, a[0], kind == img::kLogSoftmax);
    return true;
  case img::kLayerNorm:
    if (!f32)
      return unsupported();
    layerNormF32(ops[0], ops[1], ops[2], out, a[0], wordToDouble(a[1]));
    return true;
  case img::kL2Normalize:
    if (!f32)
      return unsupported();
    l2NormalizeF32(ops[0], out, a[0], wordToDouble(a[1]));
    return true;
  case img::kReduceSum: case img::kReduceMean: case img::kReduceMax:
  case img::kReduceMin:
    if (f32)
      reduce<float, double>(kind, ops[0], out, a);
    else if (dtype == DType::I64)
      reduce<int64_t, int64_t>(kind, ops[0], out, a);
    else if (dtype == DType::I32)
      reduce<int32_t, int64_t>(kind, ops[0], out, a);
    else
      return unsupported();
    return true;
  case img::kArgmax:
    switch (ops[0].dtype) {
    case DType::F32: argmax<float>(ops[0], out, a[0]); return true;
    case DType::I64: argmax<int64_t>(ops[0], out, a[0]); return true;
    case DType::I32: argmax<int32_t>(ops[0], out, a[0]); return true;
    default: return unsupported();
    }
  default:
    if (f32 && unaryF32(kind, ops[0], out))
      return true;
    if (dtype == DType::I64 && unaryInt<int64_t>(kind, ops[0], out))
      return true;
    if (dtype == DType::I32 && unaryInt<int32_t>(kind, ops[0], out))
      return true;
    return unsupported();
  }
}

bool runDataMovement(int64_t kind, const std::vector<TensorView> &ops,
                     const TensorView &out, const std::vector<int64_t> &a,
                     std::string &error) {
  size_t item = dtypeSize(out.dtype);
  uint64_t n = countOf(out.shape);
  switch (kind) {
  case img::kTransfer:
    std::memcpy(out.data, ops[0].data, n * item);
    return true;
  case img::kCast:
    for (uint64_t i = 0; i < n; ++i) {
      // Integers keep all 64 bits; floats go through a double.
      if ((ops[0].dtype == DType::I64 || ops[0].dtype == DType::I32) &&
          (out.dtype == DType::I64 || out.dtype == DType::I32)) {
        int64_t v = ops[0].dtype == DType::I64
                        ? static_cast<const int64_t *>(ops[0].data)[i]
                        : static_cast<const int32_t *>(ops[0].data)[i];
        if (out.dtype == DType::I64)
          static_cast<int64_t *>(out.data)[i] = v;
        else
          static_cast<int32_t *>(out.data)[i] = int32_t(v);
      } else {
        storeDouble(out.dtype, out.data, i, loadDouble(ops[0].dtype, ops[0].data, i));
      }
    }
    return true;
  case img::kFill:
    for (uint64_t i = 0; i < n; ++i)
      storeDouble(out.dtype, out.data, i, wordToDouble(a[0]));
    return true;
  case img::kIota: {
    std::vector<int64_t> strides = rowMajorStrides(out.shape);
    for (uint64_t i = 0; i < n; ++i)
      storeDouble(out.dtype, out.data, i,
                  double((i / strides[a[0]]) % out.shape[a[0]]));
    return true;
  }
  case img::kConstant:
    std::memcpy(out.data, a.data(), n * item);
    return true;
  case img::kShape:
    for (size_t d = 0; d < ops[0].shape.size(); ++d)
      static_cast<int64_t *>(out.data)[d] = ops[0].shape[d];
    return true;
  case img::kSelect: {
    std::vector<int64_t> strides[3] = {broadcastStrides(ops[0].shape, out.shape),
                                       broadcastStrides(ops[1].shape, out.shape),
                                       broadcastStrides(ops[2].shape, out.shape)};
    const uint8_t *cond = static_cast<const uint8_t *>(ops[0].data);
    const uint8_t *x = static_cast<const uint8_t *>(ops[1].data);
    const uint8_t *y = static_cast<const uint8_t *>(ops[2].data);
    uint8_t *z = static_cast<uint8_t *>(out.data);
    if (item == 4) { // f32 and i32: whole-word copies
      const uint32_t *a = reinterpret_cast<const uint32_t *>(x);
      const uint32_t *b = reinterpret_cast<const uint32_t *>(y);
      uint32_t *c = reinterpret_cast<uint32_t *>(z);
      forEachElement(out.shape, strides, 1, [&](uint64_t i, const int64_t *o) {
        c[i] = cond[o[0]] ? a[o[1]] : b[o[2]];
      });
      return true;
    }
    forEachElement(out.shape, strides, 1, [&](uint64_t i, const int64_t *o) {
      std::memcpy(z + i * item, cond[o[0]] ? x + o[1] * item : y + o[2] * item,
                  item);
    });
    return true;
  }
  case img::kTranspose:
    transpose(ops[0], out, a);
    return true;
  case img::kConcat:
    concat(ops, out, a[0]);
    return true;
  case img::kSlice: {
    size_t rank = out.shape.size();
    std::vector<int64_t> inStrides = rowMajorStrides(ops[0].shape), strides;
    int64_t base = 0;
    for (size_t d = 0; d < rank; ++d) {
      base += a[d] * inStrides[d];
      strides.push_back(a[rank + d] * inStrides[d]);
    }
    copyStrided(ops[0], out, strides, base);
    return true;
  }
  case img::kBroadcastTo:
    copyStrided(ops[0], out, broadcastStrides(ops[0].shape, out.shape));
    return true;
  case img::kEmbedding:
    if (!takeRows(ops[0], ops[1], out, 0, /*negativeFromEnd=*/false, error)) {
      error = "embedding: " + error;
      return false;
    }
    return true;
  case img::kGather:
    if (!takeRows(ops[0], ops[1], out, a[0], /*negativeFromEnd=*/true, error)) {
      error = "gather: " + error;
      return false;
    }
    return true;
  case img::kDynamicSlice: {
    // Offsets are clamped to [0, dim - size], as XLA does.
    const int64_t *offsets = static_cast<const int64_t *>(ops[1].data);
    std::vector<int64_t> inStrides = rowMajorStrides(ops[0].shape);
    int64_t base = 0;
    for (size_t d = 0; d < out.shape.size(); ++d) {
      int64_t start = std::clamp<int64_t>(offsets[d], 0,
                                          ops[0].shape[d] - out.shape[d]);
      base += start * inStrides[d];
    }
    copyStrided(ops[0], out, inStrides, base);
    return true;
  }
  default:
    error = "no CPU kernel for this op";
    return false;
  }
}

} // namespace

bool tandem::rt::runCpuKernel(int64_t kind,
                              const std::vector<TensorView> &operands,
                              const TensorView &result,
                              const std::vector<int64_t> &attrs,
                              std::string &error) {
  if (movesData(kind))
    return runDataMovement(kind, operands, result, attrs, error);
  bool widen = isHalf(result.dtype);
  for (const TensorView &operand : operands)
    widen |= isHalf(operand.dtype);
  if (!widen)
    return runF32OrInt(kind, operands, result, attrs, error);
  // f16/bf16: compute in f32, round the result back.
  std::vector<std::vector<float>> storage;
  std::vector<TensorView> wide;
  for (const TensorView &operand : operands) {
    if (!isHalf(operand.dtype)) {
      wide.push_back(operand);
      continue;
    }
    uint64_t n = countOf(operand.shape);
    storage.emplace_back(n);
    for (uint64_t i = 0; i < n; ++i)
      storage.back()[i] = float(loadDouble(operand.dtype, operand.data, i));
    wide.push_back({DType::F32, operand.shape, storage.back().data()});
  }
  TensorView out = result;
  std::vector<float> wideResult;
  if (isHalf(result.dtype)) {
    wideResult.resize(countOf(result.shape));
    out = {DType::F32, result.shape, wideResult.data()};
  }
  if (!runF32OrInt(kind, wide, out, attrs, error))
    return false;
  if (isHalf(result.dtype))
    for (uint64_t i = 0; i < wideResult.size(); ++i)
      storeDouble(result.dtype, result.data, i, wideResult[i]);
  return true;
}
