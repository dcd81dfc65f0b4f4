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

/// One softmax (or log-softmax) row of `size` elements `Inner` (or `inner`,
/// where Inner is 0) apart; `dst` may be `row` (in place, as a fused group
/// ending in either runs it: each pass reads an element before it writes
/// it).
template <int64_t Inner>
[[gnu::always_inline]] inline void softmaxRow(const float *row, float *dst, int64_t size, int64_t inner,
                bool log) {
  int64_t step = Inner ? Inner : inner;
  constexpr float kLow = -std::numeric_limits<float>::infinity();
  float peaks[4] = {kLow, kLow, kLow, kLow};
  int64_t k = 0;
  for (; k + 4 <= size; k += 4)
    for (int lane = 0; lane < 4; ++lane)
      peaks[lane] = std::max(peaks[lane], row[(k + lane) * step]);
  for (; k < size; ++k)
    peaks[0] = std::max(peaks[0], row[k * step]);
  float peak = std::max(std::max(peaks[0], peaks[1]),
                        std::max(peaks[2], peaks[3]));
  if (log) {
    double sum = sumOf(size, [&](int64_t k) {
      return double(expNonPositive(row[k * step] - peak));
    });
    float logSum = float(std::log(sum));
    for (int64_t k = 0; k < size; ++k)
      dst[k * step] = (row[k * step] - peak) - logSum;
    return;
  }
  // One exp per element, kept in the output until the sum is known.
  for (int64_t k = 0; k < size; ++k)
    dst[k * step] = expNonPositive(row[k * step] - peak);
  float scale = float(1.0 / sumOf(size, [&](int64_t k) {
                  return double(dst[k * step]);
                }));
  for (int64_t k = 0; k < size; ++k)
    dst[k * step] *= scale;
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
      softmaxRow<1>(row, dst, size, inner, log);
    else
      softmaxRow<0>(row, dst, size, inner, log);
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
