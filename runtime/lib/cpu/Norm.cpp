//===- Norm.cpp - the CPU's normalizations --------------------------------===//
//
// The Norm family of OpKinds.def on f32: softmax and log-softmax along an
// axis, layer norm over the trailing dimensions from an axis, L2
// normalization and inference-mode batch norm. Sums and statistics are kept
// in double.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

/// The sum of element(0 .. size-1) in double, in four interleaved partial
/// sums (one long chain of dependent adds would take four times as
/// long).
template <typename F>
[[gnu::always_inline]] inline double sumOf(int64_t size, F element) {
  double partial[4] = {0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 4 <= size; k += 4)
    for (int lane = 0; lane < 4; ++lane)
      partial[lane] += element(k + lane);
  for (; k < size; ++k)
    partial[0] += element(k);
  return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

/// One softmax (or log-softmax) row of `size` elements `inner` apart; `dst`
/// may be `row` (in place, as a fused group ending in either runs it: each
/// pass reads an element before it writes it).
[[gnu::always_inline]] inline void
softmaxStridedRow(const float *row, float *dst, int64_t size, int64_t inner,
                  bool log) {
  float peak = -std::numeric_limits<float>::infinity();
  for (int64_t k = 0; k < size; ++k)
    peak = std::max(peak, row[k * inner]);
  if (log) {
    double sum = sumOf(size, [&](int64_t k) {
      return double(expNonPositive(row[k * inner] - peak));
    });
    float logSum = float(std::log(sum));
    for (int64_t k = 0; k < size; ++k)
      dst[k * inner] = (row[k * inner] - peak) - logSum;
    return;
  }
  // One exp per element, kept in the output until the sum is known.
  for (int64_t k = 0; k < size; ++k)
    dst[k * inner] = expNonPositive(row[k * inner] - peak);
  float scale = float(1.0 / sumOf(size, [&](int64_t k) {
                  return double(dst[k * inner]);
                }));
  for (int64_t k = 0; k < size; ++k)
    dst[k * inner] *= scale;
}

/// std::max(a, b) of each lane of a Floats8: a NaN in `b` is skipped.
template <typename V> [[gnu::always_inline]] inline V maxOf(V a, V b) {
  return a < b ? b : a;
}

/// softmaxStridedRow of a contiguous row, eight elements at a time (GCC
/// keeps a loop of std::max scalar, NaNs having no order, and the sum in
/// double in four scalar chains): on attention's rows of 64, 1.13x faster.
/// The exps are stored, then summed: computed and summed in one loop, the
/// exp's constants and the sums do not fit in the sixteen registers.
[[gnu::always_inline]] inline void softmaxRow(const float *row, float *dst,
                                              int64_t size, bool log) {
  typedef double Doubles4 __attribute__((vector_size(4 * sizeof(double))));
  constexpr float kLow = -std::numeric_limits<float>::infinity();
  int64_t whole = size / 8 * 8;
  // Lanes of std::max (a NaN element is skipped), folded by halves.
  Floats8 peaks = Floats8{} + kLow;
  for (int64_t k = 0; k < whole; k += 8) {
    Floats8 x;
    std::memcpy(&x, row + k, sizeof(x));
    peaks = maxOf(peaks, x);
  }
  peaks = maxOf(peaks, __builtin_shufflevector(peaks, peaks, 4, 5, 6, 7, 0, 1,
                                               2, 3));
  peaks = maxOf(peaks, __builtin_shufflevector(peaks, peaks, 2, 3, 0, 1, 6, 7,
                                               4, 5));
  peaks = maxOf(peaks, __builtin_shufflevector(peaks, peaks, 1, 0, 3, 2, 5, 4,
                                               7, 6));
  float peak = peaks[0];
  for (int64_t k = whole; k < size; ++k)
    peak = std::max(peak, row[k]);

  // The exps, in the output until the sum is known; log_softmax's sums
  // them as they are computed (its `dst` may be `row`).
  Doubles4 low{}, high{};
  auto add = [&](Floats8 e) {
    low += __builtin_convertvector(
        __builtin_shufflevector(e, e, 0, 1, 2, 3), Doubles4);
    high += __builtin_convertvector(
        __builtin_shufflevector(e, e, 4, 5, 6, 7), Doubles4);
  };
  for (int64_t k = 0; k < whole; k += 8) {
    Floats8 x;
    std::memcpy(&x, row + k, sizeof(x));
    Floats8 e = expNonPositive(x - peak);
    if (log)
      add(e);
    else
      std::memcpy(dst + k, &e, sizeof(e));
  }
  for (int64_t k = 0; k < whole && !log; k += 8) {
    Floats8 e;
    std::memcpy(&e, dst + k, sizeof(e));
    add(e);
  }
  Doubles4 lanes = low + high;
  double sum = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
  for (int64_t k = whole; k < size; ++k) {
    float e = expNonPositive(row[k] - peak);
    if (!log)
      dst[k] = e;
    sum += double(e);
  }
  if (log) {
    float logSum = float(std::log(sum));
    for (int64_t k = 0; k < size; ++k)
      dst[k] = (row[k] - peak) - logSum;
    return;
  }
  float scale = float(1.0 / sum);
  for (int64_t k = 0; k < size; ++k)
    dst[k] *= scale;
}

/// Softmax rows [first, last) of `outer` x `inner` rows of `size`.
TANDEM_VECTOR_CLONES
void softmaxRows(const float *in, float *z, int64_t first, int64_t last,
                 int64_t size, int64_t inner, bool log) {
  for (int64_t item = first; item < last; ++item) {
    int64_t o = item / inner, i = item % inner;
    const float *row = in + o * size * inner + i;
    float *dst = z + o * size * inner + i;
    if (inner == 1)
      softmaxRow(row, dst, size, log);
    else
      softmaxStridedRow(row, dst, size, inner, log);
  }
}

void softmaxF32(const TensorView &x, const TensorView &out, int64_t axis,
                bool log) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  const float *in = static_cast<const float *>(x.data);
  float *z = static_cast<float *>(out.data);
  // About ten operations per element with the exp vectorized: attention's
  // softmaxes are split across threads.
  parallelFor(outer * inner, 10 * size, [&](int64_t first, int64_t last) {
    softmaxRows(in, z, first, last, size, inner, log);
  });
}

/// `out` may be `x`: a fused group ending in an l2_normalize runs it in
/// place (each element is read before it is written).
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

/// Layer norm of rows [first, last) of `cols` elements each.
TANDEM_VECTOR_CLONES
void layerNormRows(const float *in, const float *g, const float *b, float *z,
                   int64_t first, int64_t last, int64_t cols, double epsilon) {
  for (int64_t r = first; r < last; ++r) {
    const float *row = in + r * cols;
    double mean = sumOf(cols, [&](int64_t c) { return double(row[c]); }) /
                  std::max<int64_t>(cols, 1);
    double var = sumOf(cols, [&](int64_t c) {
                   return (row[c] - mean) * (row[c] - mean);
                 }) /
                 std::max<int64_t>(cols, 1);
    // Statistics in double; the per-element pass in float, which vectorizes.
    float center = float(mean), scale = float(1.0 / std::sqrt(var + epsilon));
    for (int64_t c = 0; c < cols; ++c)
      z[r * cols + c] = (row[c] - center) * scale * g[c] + b[c];
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
    layerNormRows(in, g, b, z, first, last, cols, epsilon);
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

bool softmaxKernel(int64_t kind, const std::vector<TensorView> &ops,
                   const TensorView &out, const std::vector<int64_t> &attrs,
                   std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  softmaxF32(ops[0], out, img::readAttrs<img::AxisAttrs>(attrs).axis,
             kind == img::kLogSoftmax);
  return true;
}

bool layerNormKernel(int64_t, const std::vector<TensorView> &ops,
                     const TensorView &out, const std::vector<int64_t> &attrs,
                     std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  auto a = img::readAttrs<img::AxisEpsilonAttrs>(attrs);
  layerNormF32(ops[0], ops[1], ops[2], out, a.axis, a.epsilon);
  return true;
}

bool l2NormalizeKernel(int64_t, const std::vector<TensorView> &ops,
                       const TensorView &out,
                       const std::vector<int64_t> &attrs, std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  auto a = img::readAttrs<img::AxisEpsilonAttrs>(attrs);
  l2NormalizeF32(ops[0], out, a.axis, a.epsilon);
  return true;
}

bool batchNormKernel(int64_t, const std::vector<TensorView> &ops,
                     const TensorView &out, const std::vector<int64_t> &attrs,
                     std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  batchNormF32(ops, out, img::readAttrs<img::EpsilonAttrs>(attrs).epsilon);
  return true;
}

} // namespace

void cpu::registerNormKernels(CpuKernelTable &table) {
  table[img::kBatchNorm] = batchNormKernel;
  table[img::kSoftmax] = softmaxKernel;
  table[img::kLogSoftmax] = softmaxKernel;
  table[img::kLayerNorm] = layerNormKernel;
  table[img::kL2Normalize] = l2NormalizeKernel;
}
