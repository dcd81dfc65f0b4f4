//===- Norm.cu - CUDA kernels for normalizations --------------------------===//
//
// The Norm family of OpKinds.def on the GPU: batch_norm (inference, NCHW);
// softmax and log_softmax along the last dimension (or along another when
// its rows are few) and layer_norm over the trailing dimensions, a block per
// row (warp shuffles, CudaSupport.cuh's blockReduce) for rows of 64 or more;
// shorter rows, softmax along another axis over many rows and l2_normalize,
// a thread per row. f32, f16 and bf16 compute in f32; the statistics of
// l2_normalize and layer_norm are in double, as on the CPU.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

#include <algorithm>
#include <vector>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

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

/// The norm l2_normalize divides by, from the row's sum of squares (in
/// double, as on the CPU): at least epsilon, and NaN kept (fmax would
/// replace it by epsilon).
__device__ inline double l2Norm(double sumOfSquares, double epsilon) {
  double norm = sqrt(sumOfSquares);
  return norm < epsilon ? epsilon : norm;
}

/// Softmax (mode 0) or log_softmax (1) of x − max, given the row's
/// Σ exp(x − max).
__device__ inline float softmaxOf(int mode, float shifted, float sum) {
  return mode == 1 ? shifted - logf(sum) : expf(shifted) / sum;
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
      double sum = 0;
      for (int64_t k = 0; k < size; ++k) {
        double v = toFloat(row[k * inner]);
        sum += v * v;
      }
      double norm = l2Norm(sum, epsilon);
      for (int64_t k = 0; k < size; ++k)
        dst[k * inner] = fromFloat<T>(float(toFloat(row[k * inner]) / norm));
      continue;
    }
    float peak = -INFINITY, sum = 0;
    for (int64_t k = 0; k < size; ++k)
      peak = fmaxf(peak, toFloat(row[k * inner]));
    for (int64_t k = 0; k < size; ++k)
      sum += expf(toFloat(row[k * inner]) - peak);
    for (int64_t k = 0; k < size; ++k) {
      float shifted = toFloat(row[k * inner]) - peak;
      dst[k * inner] = fromFloat<T>(softmaxOf(mode, shifted, sum));
    }
  }
}

/// Softmax (mode 0) or log_softmax (1) of rows along the axis, a block per
/// row: the block's threads stride along it, so a long row is read by the
/// whole block instead of one thread. Row r starts at (r / inner) * size *
/// inner + r % inner and its elements are `inner` apart: contiguous rows
/// (the last axis, inner = 1, attention's softmax) are read coalesced; rows
/// along another axis are strided, which runRows takes only when there are
/// too few of them for a thread per row to fill the GPU.
template <typename T>
__global__ void softmaxRowsKernel(int mode, int64_t rows, int64_t size,
                                  int64_t inner, const T *x, T *out) {
  __shared__ float shared[32];
  // r is the same in the whole block: its threads all reach blockReduce's
  // barriers, as many times.
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int64_t start = (r / inner) * size * inner + r % inner;
    const T *row = x + start;
    T *dst = out + start;
    float peak = -INFINITY;
    for (int64_t k = threadIdx.x; k < size; k += blockDim.x)
      peak = fmaxf(peak, toFloat(row[k * inner]));
    peak = blockReduce(peak, shared, MaxOf());
    float sum = 0;
    for (int64_t k = threadIdx.x; k < size; k += blockDim.x)
      sum += expf(toFloat(row[k * inner]) - peak);
    sum = blockReduce(sum, shared, SumOf());
    for (int64_t k = threadIdx.x; k < size; k += blockDim.x) {
      float shifted = toFloat(row[k * inner]) - peak;
      dst[k * inner] = fromFloat<T>(softmaxOf(mode, shifted, sum));
    }
  }
}

/// l2_normalize of rows laid out as softmaxRowsKernel's, a block per row:
/// the sum of squares in double (as on the CPU and rowKernel), a NaN norm
/// kept.
template <typename T>
__global__ void l2NormalizeRowsKernel(int64_t rows, int64_t size, int64_t inner,
                                      double epsilon, const T *x, T *out) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int64_t start = (r / inner) * size * inner + r % inner;
    const T *row = x + start;
    T *dst = out + start;
    double sum = 0;
    for (int64_t k = threadIdx.x; k < size; k += blockDim.x) {
      double v = toFloat(row[k * inner]);
      sum += v * v;
    }
    double norm = l2Norm(blockReduce(sum, shared, SumOf()), epsilon);
    for (int64_t k = threadIdx.x; k < size; k += blockDim.x)
      dst[k * inner] = fromFloat<T>(float(toFloat(row[k * inner]) / norm));
  }
}

/// Layer norm of rows at least two warps long: a block per row, as
/// softmaxRowsKernel, with the CPU's statistics (the mean, then the mean of
/// squared deviations, both in double: in f32 the squares of values near
/// 1e20 would overflow and the row would come out as beta) and its
/// per-element pass in f32.
template <typename T>
__global__ void layerNormRowsKernel(int64_t rows, int64_t cols, double epsilon,
                                    const T *x, const T *gamma, const T *beta,
                                    T *out) {
  __shared__ double shared[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *row = x + r * cols;
    double sum = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      sum += toFloat(row[c]);
    double mean = blockReduce(sum, shared, SumOf()) / double(cols);
    double squares = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      double d = toFloat(row[c]) - mean;
      squares += d * d;
    }
    double var = blockReduce(squares, shared, SumOf()) / double(cols);
    float center = float(mean), scale = float(1.0 / sqrt(var + epsilon));
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      out[r * cols + c] = fromFloat<T>((toFloat(row[c]) - center) * scale *
                                           toFloat(gamma[c]) +
                                       toFloat(beta[c]));
  }
}

/// Layer norm of short rows, a thread per row; statistics as
/// layerNormRowsKernel's.
template <typename T>
__global__ void layerNormKernel(int64_t rows, int64_t cols, double epsilon,
                                const T *x, const T *gamma, const T *beta,
                                T *out) {
  GRID_LOOP(r, rows) {
    const T *row = x + r * cols;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += toFloat(row[c]);
    mean /= double(cols);
    for (int64_t c = 0; c < cols; ++c) {
      double d = toFloat(row[c]) - mean;
      var += d * d;
    }
    float center = float(mean),
          scale = float(1.0 / sqrt(var / double(cols) + epsilon));
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = fromFloat<T>((toFloat(row[c]) - center) * scale *
                                           toFloat(gamma[c]) +
                                       toFloat(beta[c]));
  }
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Operands x, scale, bias, mean, var; channels are dimension 1.
bool runBatchNorm(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  int64_t n = call.n;
  double epsilon = img::readAttrs<img::EpsilonAttrs>(call.attrs).epsilon;
  int64_t channels = ops[0].shape[1], inner = n / std::max<int64_t>(1, ops[0].shape[0] * channels);
  bool ok = withFloat(out.dtype, [&](auto t) {
    using T = decltype(t);
    batchNormKernel<T><<<call.grid, call.block, 0, call.stream()>>>(n, channels, inner, epsilon,
        static_cast<const T *>(ops[0].data), static_cast<const T *>(ops[1].data),
        static_cast<const T *>(ops[2].data), static_cast<const T *>(ops[3].data),
        static_cast<const T *>(ops[4].data), static_cast<T *>(out.data));
  });
  return ok ? launched(call.error) : call.unsupported();
}

/// Rows along an axis other than the last are few up to this many: a
/// thread per row would be at most 16 blocks of rowKernel, an eighth of an
/// H100's 132 SMs, each thread walking its whole row three times. A block
/// per row keeps the GPU busy instead, strided as its reads are (a warp's
/// load touches up to 32 sectors, mostly L2 hits as the neighbouring rows'
/// blocks read the rest of them). More rows fill the GPU a thread per row,
/// adjacent threads reading adjacent elements.
constexpr int64_t kFewRows = 16 * kThreadsPerBlock;

/// Softmax, log_softmax and l2_normalize of rows at least two warps long along the last
/// dimension, or along another with at most kFewRows rows:
/// softmaxRowsKernel (l2_normalize: l2NormalizeRowsKernel), a block per row;
/// shorter rows and many rows along another axis (adjacent threads then read
/// adjacent elements): rowKernel, a thread per row (which also keeps short
/// rows from leaving most of a block idle).
bool runRows(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  int64_t kind = call.kind, axis;
  double epsilon = 0;
  if (kind == img::kL2Normalize) {
    auto attrs = img::readAttrs<img::AxisEpsilonAttrs>(call.attrs);
    axis = attrs.axis;
    epsilon = attrs.epsilon;
  } else {
    axis = img::readAttrs<img::AxisAttrs>(call.attrs).axis;
  }
  int64_t outer, size, inner;
  splitAt(out.shape, axis, outer, size, inner);
  int mode = kind == img::kSoftmax ? 0 : kind == img::kLogSoftmax ? 1 : 2;
  int64_t rows = outer * inner;
  bool blockPerRow = size >= 64 && (inner == 1 || rows <= kFewRows);
  bool ok = withFloat(out.dtype, [&](auto t) {
    using T = decltype(t);
    if (blockPerRow && mode == 2)
      l2NormalizeRowsKernel<T><<<dim3(unsigned(std::clamp<int64_t>(rows, 1, kMaxBlocks))),
                                 call.block, 0, call.stream()>>>(rows, size, inner,
          epsilon, static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
    else if (blockPerRow)
      softmaxRowsKernel<T><<<dim3(unsigned(std::clamp<int64_t>(rows, 1, kMaxBlocks))),
                             call.block, 0, call.stream()>>>(mode, rows, size, inner,
          static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
    else
      rowKernel<T><<<blocksFor(rows), call.block, 0, call.stream()>>>(mode, outer, size,
          inner, epsilon, static_cast<const T *>(ops[0].data),
          static_cast<T *>(out.data));
  });
  return ok ? launched(call.error) : call.unsupported();
}

/// Normalizes over the dimensions from the axis on; operands x, gamma, beta.
bool runLayerNorm(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  auto attrs = img::readAttrs<img::AxisEpsilonAttrs>(call.attrs);
  int64_t rows = 1;
  for (int64_t d = 0; d < attrs.axis; ++d)
    rows *= out.shape[d];
  int64_t cols = rows ? call.n / rows : 0;
  bool ok = withFloat(out.dtype, [&](auto t) {
    using T = decltype(t);
    const T *x = static_cast<const T *>(ops[0].data);
    const T *gamma = static_cast<const T *>(ops[1].data);
    const T *beta = static_cast<const T *>(ops[2].data);
    T *y = static_cast<T *>(out.data);
    if (cols >= 64) // a block per row (a transformer's hidden size)
      layerNormRowsKernel<T><<<dim3(unsigned(std::clamp<int64_t>(rows, 1, kMaxBlocks))),
                               call.block, 0, call.stream()>>>(rows, cols, attrs.epsilon, x,
                                             gamma, beta, y);
    else
      layerNormKernel<T><<<blocksFor(rows), call.block, 0, call.stream()>>>(rows, cols,
          attrs.epsilon, x, gamma, beta, y);
  });
  return ok ? launched(call.error) : call.unsupported();
}

} // namespace

void cuda::registerNormKernels(CudaKernelTable &table) {
  table.add(img::kBatchNorm, runBatchNorm);
  table.add(img::kSoftmax, runRows);
  table.add(img::kLogSoftmax, runRows);
  table.add(img::kL2Normalize, runRows);
  table.add(img::kLayerNorm, runLayerNorm);
}
