//===- Elementwise.cpp - the CPU's elementwise kernels --------------------===//
//
// The Elementwise family of OpKinds.def: binary arithmetic (f32, i64, i32;
// operands broadcast NumPy's way), unary functions (f32; the integer ones
// where they make sense) and comparisons. Integers wrap around as in NumPy
// and PyTorch; the edge cases shared with the CUDA backend are in Layout.h.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

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
  forEachElement(out.shape, strides, 1, [x, y, z, f](uint64_t i, const int64_t *o) {
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
  case img::kFloor: unary<float>(x, out, [](float v) { return std::floor(v); }); return true;
  case img::kCeil: unary<float>(x, out, [](float v) { return std::ceil(v); }); return true;
  // nearbyint rounds halves to even in the default rounding mode.
  case img::kRound: unary<float>(x, out, [](float v) { return std::nearbyint(v); }); return true;
  case img::kTrunc: unary<float>(x, out, [](float v) { return std::trunc(v); }); return true;
  case img::kErf: unary<float>(x, out, [](float v) { return std::erf(v); }, 40); return true;
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
  // The predicate fixed at compile time (comparePredicate's switch folds
  // away), so that the loop is a plain comparison.
  auto compareAll = [&](auto fixed) {
    constexpr int64_t kPredicate = decltype(fixed)::value;
    // The pointers by value: a byte store (the mask) may alias anything a
    // reference reaches, which reloaded them every element.
    forEachElement(out.shape, strides, 1, [x, y, z](uint64_t i, const int64_t *o) {
      z[i] = comparePredicate(kPredicate, x[o[0]], y[o[1]]);
    });
  };
  switch (predicate) {
  case 0: compareAll(std::integral_constant<int64_t, 0>{}); return;
  case 1: compareAll(std::integral_constant<int64_t, 1>{}); return;
  case 2: compareAll(std::integral_constant<int64_t, 2>{}); return;
  case 3: compareAll(std::integral_constant<int64_t, 3>{}); return;
  case 4: compareAll(std::integral_constant<int64_t, 4>{}); return;
  case 5: compareAll(std::integral_constant<int64_t, 5>{}); return;
  default: compareAll(std::integral_constant<int64_t, -1>{}); return; // false
  }
}

//===----------------------------------------------------------------------===//
// The kernels
//===----------------------------------------------------------------------===//

bool binaryKernel(int64_t kind, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &,
                  std::string &error) {
  DType dtype = out.dtype;
  bool done;
  switch (dtype) {
  case DType::F32: done = binaryOp<float>(kind, ops[0], ops[1], out, error); break;
  case DType::I64: done = binaryOp<int64_t>(kind, ops[0], ops[1], out, error); break;
  case DType::I32: done = binaryOp<int32_t>(kind, ops[0], ops[1], out, error); break;
  default: return unsupported(dtype, error);
  }
  // binaryOp fails with a message (division by zero) or for a kind it has
  // no kernel for on this type (pow on integers).
  return done || (error.empty() && unsupported(dtype, error));
}

bool unaryKernel(int64_t kind, const std::vector<TensorView> &ops,
                 const TensorView &out, const std::vector<int64_t> &,
                 std::string &error) {
  DType dtype = out.dtype;
  if (dtype == DType::F32 && unaryF32(kind, ops[0], out))
    return true;
  if (dtype == DType::I64 && unaryInt<int64_t>(kind, ops[0], out))
    return true;
  if (dtype == DType::I32 && unaryInt<int32_t>(kind, ops[0], out))
    return true;
  return unsupported(dtype, error);
}

bool compareKernel(int64_t, const std::vector<TensorView> &ops,
                   const TensorView &out, const std::vector<int64_t> &attrs,
                   std::string &error) {
  int64_t predicate = img::readAttrs<img::CompareAttrs>(attrs).predicate;
  switch (ops[0].dtype) {
  case DType::F32: compare<float>(ops[0], ops[1], out, predicate); return true;
  case DType::I64: compare<int64_t>(ops[0], ops[1], out, predicate); return true;
  case DType::I32: compare<int32_t>(ops[0], ops[1], out, predicate); return true;
  case DType::Bool: compare<uint8_t>(ops[0], ops[1], out, predicate); return true;
  default: return unsupported(out.dtype, error);
  }
}

} // namespace

void cpu::registerElementwiseKernels(CpuKernelTable &table) {
  for (img::OpKind kind : {img::kAdd, img::kSub, img::kMul, img::kDiv,
                           img::kMaximum, img::kMinimum, img::kPow})
    table[kind] = binaryKernel;
  for (img::OpKind kind :
       {img::kNeg, img::kAbs, img::kExp, img::kLog, img::kSqrt, img::kRsqrt,
        img::kTanh, img::kSigmoid, img::kRelu, img::kGelu, img::kSilu,
        img::kFloor, img::kCeil, img::kRound, img::kTrunc, img::kErf})
    table[kind] = unaryKernel;
  table[img::kCompare] = compareKernel;
}
