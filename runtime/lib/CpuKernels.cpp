//===- CpuKernels.cpp - the CPU kernels of the runtime --------------------===//
//
// First slice: elementwise ops with NumPy broadcasting, matmul and linear
// through OpenBLAS (f32), reshape, fill. More ops and element types follow
// the same pattern.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "tandem/runtime/ModelImage.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tandem::rt;
namespace img = tandem::image;

namespace {

uint64_t count(const std::vector<int64_t> &shape) {
  return elementCount(shape).value_or(0);
}

/// Strides (in elements) of `shape` seen through the broadcast to `to`: a
/// stretched or missing dimension has stride 0.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape,
                                      const std::vector<int64_t> &to) {
  std::vector<int64_t> strides(to.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t from = shape.size() - 1 - i, dst = to.size() - 1 - i;
    strides[dst] = shape[from] == 1 && to[dst] != 1 ? 0 : stride;
    stride *= shape[from];
  }
  return strides;
}

template <typename T, typename F>
void binary(const TensorView &a, const TensorView &b, const TensorView &out,
            F f) {
  const T *x = static_cast<const T *>(a.data);
  const T *y = static_cast<const T *>(b.data);
  T *z = static_cast<T *>(out.data);
  uint64_t n = count(out.shape);
  if (a.shape == out.shape && b.shape == out.shape) {
    for (uint64_t i = 0; i < n; ++i)
      z[i] = f(x[i], y[i]);
    return;
  }
  std::vector<int64_t> sa = broadcastStrides(a.shape, out.shape),
                       sb = broadcastStrides(b.shape, out.shape);
  size_t rank = out.shape.size();
  std::vector<int64_t> index(rank, 0);
  int64_t ia = 0, ib = 0;
  for (uint64_t i = 0; i < n; ++i) {
    z[i] = f(x[ia], y[ib]);
    // Advance the multi-index, carrying into outer dimensions.
    for (size_t d = rank; d-- > 0;) {
      ++index[d];
      ia += sa[d];
      ib += sb[d];
      if (index[d] < out.shape[d])
        break;
      ia -= sa[d] * index[d];
      ib -= sb[d] * index[d];
      index[d] = 0;
    }
  }
}

template <typename T>
bool binaryOp(int64_t kind, const TensorView &a, const TensorView &b,
              const TensorView &out) {
  switch (kind) {
  case img::kAdd: binary<T>(a, b, out, [](T x, T y) { return x + y; }); return true;
  case img::kSub: binary<T>(a, b, out, [](T x, T y) { return x - y; }); return true;
  case img::kMul: binary<T>(a, b, out, [](T x, T y) { return x * y; }); return true;
  case img::kDiv:
    binary<T>(a, b, out, [](T x, T y) {
      if constexpr (std::is_integral_v<T>)
        return y == 0 ? T(0) : T(x / y);
      else
        return x / y;
    });
    return true;
  case img::kMaximum:
    binary<T>(a, b, out, [](T x, T y) {
      if constexpr (!std::is_integral_v<T>)
        if (std::isnan(x) || std::isnan(y))
          return T(NAN);
      return std::max(x, y);
    });
    return true;
  case img::kMinimum:
    binary<T>(a, b, out, [](T x, T y) {
      if constexpr (!std::is_integral_v<T>)
        if (std::isnan(x) || std::isnan(y))
          return T(NAN);
      return std::min(x, y);
    });
    return true;
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

template <typename T, typename F> void unary(const TensorView &x, const TensorView &out, F f) {
  const T *in = static_cast<const T *>(x.data);
  T *o = static_cast<T *>(out.data);
  uint64_t n = count(out.shape);
  for (uint64_t i = 0; i < n; ++i)
    o[i] = f(in[i]);
}

bool unaryF32(int64_t kind, const TensorView &x, const TensorView &out) {
  switch (kind) {
  case img::kNeg: unary<float>(x, out, [](float v) { return -v; }); return true;
  case img::kAbs: unary<float>(x, out, [](float v) { return std::fabs(v); }); return true;
  case img::kExp: unary<float>(x, out, [](float v) { return std::exp(v); }); return true;
  case img::kLog: unary<float>(x, out, [](float v) { return std::log(v); }); return true;
  case img::kSqrt: unary<float>(x, out, [](float v) { return std::sqrt(v); }); return true;
  case img::kRsqrt: unary<float>(x, out, [](float v) { return 1.0f / std::sqrt(v); }); return true;
  case img::kTanh: unary<float>(x, out, [](float v) { return std::tanh(v); }); return true;
  case img::kSigmoid: unary<float>(x, out, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }); return true;
  case img::kRelu: unary<float>(x, out, [](float v) { return v > 0 ? v : 0.0f; }); return true;
  case img::kGelu: unary<float>(x, out, [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); }); return true;
  case img::kSilu: unary<float>(x, out, [](float v) { return v / (1.0f + std::exp(-v)); }); return true;
  default:
    return false;
  }
}

/// result = a · b (+ nothing), batched with broadcast batch dimensions.
void matmulF32(const TensorView &a, const TensorView &b, const TensorView &out) {
  size_t ra = a.shape.size(), rb = b.shape.size(), ro = out.shape.size();
  int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
  std::vector<int64_t> batch(out.shape.begin(), out.shape.end() - 2);
  std::vector<int64_t> aBatch(a.shape.begin(), a.shape.end() - 2),
      bBatch(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> sa = broadcastStrides(aBatch, batch),
                       sb = broadcastStrides(bBatch, batch);
  uint64_t batches = count(batch);
  std::vector<int64_t> index(batch.size(), 0);
  const float *x = static_cast<const float *>(a.data);
  const float *y = static_cast<const float *>(b.data);
  float *z = static_cast<float *>(out.data);
  (void)ro;
  for (uint64_t i = 0; i < batches; ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ia += index[d] * sa[d];
      ib += index[d] * sb[d];
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                x + ia * m * k, k, y + ib * k * n, n, 0.0f, z + i * m * n, n);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++index[d] < batch[d])
        break;
      index[d] = 0;
    }
  }
}

/// result = x · wᵀ + b, x: [..., K], w: [N, K].
void linearF32(const TensorView &x, const TensorView &w, const TensorView *b,
               const TensorView &out) {
  int64_t k = x.shape.back(), n = w.shape[0];
  int64_t rows = int64_t(count(x.shape)) / std::max<int64_t>(k, 1);
  float *z = static_cast<float *>(out.data);
  if (b) {
    const float *bias = static_cast<const float *>(b->data);
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(z + r * n, bias, n * sizeof(float));
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, k, 1.0f,
              static_cast<const float *>(x.data), k,
              static_cast<const float *>(w.data), k, b ? 1.0f : 0.0f, z, n);
}

template <typename T> void fill(const TensorView &out, T value) {
  T *o = static_cast<T *>(out.data);
  std::fill(o, o + count(out.shape), value);
}

} // namespace

bool tandem::rt::runCpuKernel(int64_t kind,
                              const std::vector<TensorView> &operands,
                              const TensorView &result,
                              const std::vector<int64_t> &attrs,
                              std::string &error) {
  DType dtype = result.dtype;
  auto unsupported = [&] {
    error = std::string("no CPU kernel for this op on ") + dtypeName(dtype) +
            " in this runtime yet";
    return false;
  };
  switch (kind) {
  case img::kTransfer:
  case img::kReshape:
    std::memcpy(result.data, operands[0].data,
                count(result.shape) * dtypeSize(dtype));
    return true;
  case img::kFill: {
    double value;
    std::memcpy(&value, &attrs[0], sizeof(value));
    if (dtype == DType::F32)
      fill<float>(result, float(value));
    else if (dtype == DType::I64)
      fill<int64_t>(result, int64_t(value));
    else if (dtype == DType::I32)
      fill<int32_t>(result, int32_t(value));
    else if (dtype == DType::Bool)
      fill<uint8_t>(result, value != 0);
    else
      return unsupported();
    return true;
  }
  case img::kAdd: case img::kSub: case img::kMul: case img::kDiv:
  case img::kMaximum: case img::kMinimum: case img::kPow: {
    bool done = dtype == DType::F32   ? binaryOp<float>(kind, operands[0], operands[1], result)
                : dtype == DType::I64 ? binaryOp<int64_t>(kind, operands[0], operands[1], result)
                : dtype == DType::I32 ? binaryOp<int32_t>(kind, operands[0], operands[1], result)
                                      : false;
    return done || unsupported();
  }
  case img::kMatmul:
    if (dtype != DType::F32)
      return unsupported();
    matmulF32(operands[0], operands[1], result);
    return true;
  case img::kLinear:
    if (dtype != DType::F32)
      return unsupported();
    linearF32(operands[0], operands[1],
              operands.size() > 2 ? &operands[2] : nullptr, result);
    return true;
  default:
    if (dtype == DType::F32 && unaryF32(kind, operands[0], result))
      return true;
    return unsupported();
  }
}
