//===- Reduce.cpp - the CPU's reductions ----------------------------------===//
//
// The Reduce family of OpKinds.def: sum, mean, max and min over a set of
// axes (f32 accumulating in double, i64 and i32 in wrapping int64; NaN
// wins max and min), argmax along one axis, and the running sum (cumsum)
// along one axis, accumulated the same way.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"
#include "tandem/runtime/CpuKernelPaths.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

/// A reduction's running sum; integer sums wrap around.
template <typename Acc> Acc sum(Acc total, Acc v) {
  if constexpr (std::is_integral_v<Acc>)
    return wrapAdd(total, v);
  else
    return total + v;
}

/// What a reduction folds its elements with.
enum class Fold { Sum, Max, Min };

/// A max over only -inf elements is -inf: float lanes start there, not at
/// the lowest finite value.
template <Fold F, typename Acc> Acc foldIdentity() {
  using Limits = std::numeric_limits<Acc>;
  if constexpr (F == Fold::Max)
    return Limits::has_infinity ? -Limits::infinity() : Limits::lowest();
  else if constexpr (F == Fold::Min)
    return Limits::has_infinity ? Limits::infinity() : Limits::max();
  else
    return Acc(0);
}

/// `acc` with `v` folded in. Max and min ignore NaN here (a comparison with
/// it is false); the callers track NaN beside them, so that the loops stay
/// plain selects the compiler vectorizes.
template <Fold F, typename Acc> Acc fold(Acc acc, Acc v) {
  if constexpr (F == Fold::Max)
    return v > acc ? v : acc;
  else if constexpr (F == Fold::Min)
    return v < acc ? v : acc;
  else
    return sum(acc, v);
}

/// The output of a fold of `count` elements: a mean divides, and a NaN
/// among the elements wins a max or a min.
template <Fold F, typename T, typename Acc>
T finishFold(Acc acc, bool nan, int64_t count, bool mean) {
  if (mean)
    acc = count ? acc / Acc(count) : Acc(NAN);
  if constexpr (!std::is_integral_v<T> && F != Fold::Sum)
    if (nan)
      acc = Acc(NAN);
  return T(acc);
}

/// What a fold's lanes hold: a sum accumulates in Acc (double for f32);
/// a max or a min is exact in the element type itself, and stays there so
/// that its loops run as many lanes a vector as the elements do.
template <Fold F, typename T, typename Acc>
using LaneOf = std::conditional_t<F == Fold::Sum, Acc, T>;

/// Whether a fold tracks NaN beside its lanes: a float max or min (a sum
/// carries NaN itself).
template <Fold F, typename T>
constexpr bool kTracksNan = !std::is_integral_v<T> && F != Fold::Sum;

/// Folds `count` rows of `width` elements, `stride` apart from `rows`,
/// into acc[0, width) and nan[0, width), column by column. The loop over a
/// row vectorizes: its lanes and NaN flags are as wide as each other (a
/// byte of flags beside each double kept it scalar, 4x slower).
template <Fold F, typename T, typename Lane>
void foldRows(const T *rows, int64_t count, int64_t stride, int64_t width,
              Lane *__restrict acc, int32_t *__restrict nan) {
  for (int64_t r = 0; r < count; ++r) {
    const T *row = rows + r * stride;
    for (int64_t i = 0; i < width; ++i) {
      Lane v = Lane(row[i]);
      if constexpr (kTracksNan<F, T>)
        nan[i] |= v != v;
      acc[i] = fold<F>(acc[i], v);
    }
  }
}

/// A float max or min over `count` whole rows of Lanes floats, in GCC's
/// vector types of four floats (the baseline x86-64's SSE width: wider
/// ones fell back to scalar code there): left to itself, the compiler
/// unrolled the lanes and kept them scalar, 4x slower. The same
/// comparisons per lane in the same order as foldRows, so the same result.
template <int64_t Lanes, Fold F>
void foldFloatRows(const float *rows, int64_t count, float *lanes,
                   int32_t *nanLanes) {
  constexpr int64_t kWidth = 4, kVectors = Lanes / kWidth;
  static_assert(Lanes % kWidth == 0, "whole vectors of lanes");
  typedef float Floats __attribute__((vector_size(kWidth * sizeof(float))));
  typedef int32_t Flags __attribute__((vector_size(kWidth * sizeof(int32_t))));
  Floats acc[kVectors];
  Flags nan[kVectors];
  std::memcpy(acc, lanes, sizeof(acc));
  std::memcpy(nan, nanLanes, sizeof(nan));
  for (int64_t r = 0; r < count; ++r)
    for (int64_t k = 0; k < kVectors; ++k) {
      Floats x;
      std::memcpy(&x, rows + r * Lanes + k * kWidth, sizeof(x));
      nan[k] |= x != x;
      if constexpr (F == Fold::Max)
        acc[k] = x > acc[k] ? x : acc[k];
      else
        acc[k] = x < acc[k] ? x : acc[k];
    }
  std::memcpy(lanes, acc, sizeof(acc));
  std::memcpy(nanLanes, nan, sizeof(nan));
}

/// Folds the contiguous `run[0, n)` into `acc` and `nan`, as rows of
/// Lanes interleaved lanes (one chain of dependent adds would wait on each
/// add's latency), which then fold pairwise (a chain through sixteen lanes
/// cost more than a short run itself).
template <int64_t Lanes, Fold F, typename T, typename Acc>
void foldRunInLanes(const T *run, int64_t n, Acc &acc, bool &nan) {
  using Lane = LaneOf<F, T, Acc>;
  Lane lanes[Lanes];
  int32_t nanLanes[Lanes] = {};
  for (Lane &lane : lanes)
    lane = foldIdentity<F, Lane>();
  int64_t whole = n / Lanes;
  if constexpr (std::is_same_v<T, float> && F != Fold::Sum && Lanes > 1)
    foldFloatRows<Lanes, F>(run, whole, lanes, nanLanes);
  else
    foldRows<F>(run, whole, Lanes, Lanes, lanes, nanLanes);
  foldRows<F>(run + whole * Lanes, 1, 0, n - whole * Lanes, lanes, nanLanes);
  for (int64_t width = Lanes / 2; width >= 1; width /= 2)
    for (int64_t lane = 0; lane < width; ++lane) {
      lanes[lane] = fold<F>(lanes[lane], lanes[lane + width]);
      nanLanes[lane] |= nanLanes[lane + width];
    }
  acc = fold<F>(acc, Acc(lanes[0]));
  nan |= nanLanes[0] != 0;
}

/// foldRunInLanes<16, Fold::Sum> of floats into doubles, the same adds in
/// the same order (so the same result), its lanes in four vectors of four
/// doubles that stay in registers: through foldRows every row of sixteen
/// lanes was loaded and stored again, which made the fold of a 128-float row
/// (an RMSNorm's) 1.6x slower. (Without AVX2 the vectors are split in two,
/// about 1.4x slower than the loop over lanes on long runs.)
__attribute__((always_inline)) inline double
sumFloatsInLanes(const float *run, int64_t n) {
  typedef float Floats __attribute__((vector_size(4 * sizeof(float))));
  typedef double Doubles __attribute__((vector_size(4 * sizeof(double))));
  Doubles lanes[4] = {};
  int64_t whole = n / 16;
  for (int64_t r = 0; r < whole; ++r)
    for (int k = 0; k < 4; ++k) {
      Floats x;
      std::memcpy(&x, run + r * 16 + k * 4, sizeof(x));
      lanes[k] += __builtin_convertvector(x, Doubles);
    }
  double tail[16];
  std::memcpy(tail, lanes, sizeof(tail));
  for (int64_t i = 0; i < n - whole * 16; ++i)
    tail[i] += double(run[whole * 16 + i]);
  std::memcpy(lanes, tail, sizeof(tail));
  // Pairwise as foldRunInLanes: lane l with l + 8, then l + 4, l + 2, l + 1.
  Doubles half = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
  return (half[0] + half[2]) + (half[1] + half[3]);
}

/// foldRunInLanes of sixteen lanes, compiled for AVX2 too: only long runs
/// call through the clones' indirection (the many runs of a few elements of
/// a global average pool over small maps paid more for it than it saved).
template <Fold F, typename T, typename Acc>
TANDEM_VECTOR_CLONES void foldLongRun(const T *run, int64_t n, Acc &acc,
                                      bool &nan) {
  if constexpr (F == Fold::Sum && std::is_same_v<T, float> &&
                std::is_same_v<Acc, double>)
    acc += sumFloatsInLanes(run, n);
  else
    foldRunInLanes<16, F>(run, n, acc, nan);
}

/// The sum of a short run (a global average pool over 4x4 to 7x7 pixels)
/// in four lanes, added as foldRunInLanes<4> adds them (the same result),
/// in scalars: its array of lanes, stored a lane at a time and read back
/// two at a time by the pairwise fold, stalled every run on the store
/// (12 ns a run over [2, 480, 4, 4]'s 960, 3x the adds).
template <typename T, typename Acc>
Acc sumShortRun(const T *run, int64_t n) {
  Acc l0 = 0, l1 = 0, l2 = 0, l3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    l0 = sum(l0, Acc(run[i]));
    l1 = sum(l1, Acc(run[i + 1]));
    l2 = sum(l2, Acc(run[i + 2]));
    l3 = sum(l3, Acc(run[i + 3]));
  }
  if (i < n)
    l0 = sum(l0, Acc(run[i]));
  if (i + 1 < n)
    l1 = sum(l1, Acc(run[i + 1]));
  if (i + 2 < n)
    l2 = sum(l2, Acc(run[i + 2]));
  return sum(sum(l0, l2), sum(l1, l3));
}

/// foldRunInLanes with sixteen lanes for a long run, four for a short one
/// (a global average pool over 4x4 pixels), one for a few elements (over
/// 2x2 pixels, where setting up lanes cost twice the fold).
template <Fold F, typename T, typename Acc>
void foldRun(const T *run, int64_t n, Acc &acc, bool &nan) {
  if (n >= 64)
    foldLongRun<F>(run, n, acc, nan);
  else if (n >= 16 && F == Fold::Sum)
    acc = sum(acc, sumShortRun<T, Acc>(run, n));
  else if (n >= 16)
    foldRunInLanes<4, F>(run, n, acc, nan);
  else
    foldRunInLanes<1, F>(run, n, acc, nan);
}

/// One output from the contiguous row[0, count): what foldConsecutive
/// writes for each row of an input and foldComputedRows for each row a fused
/// group computes, so that the two give the same bits.
template <Fold F, typename T, typename Acc>
T foldRow(const T *row, int64_t count, bool mean) {
  Acc acc = foldIdentity<F, Acc>();
  bool nan = false;
  foldRun<F>(row, count, acc, nan);
  return finishFold<F, T>(acc, nan, count, mean);
}

/// x as [outer, count, inner], folded along count. Where inner is 1 each
/// output folds a contiguous run (long runs of few outputs split into
/// fixed pieces, so that the result does not depend on the thread count);
/// else each output row of `inner` is folded from `count` contiguous rows,
/// a block of columns at a time.
template <Fold F, typename T, typename Acc>
void foldConsecutive(const T *in, T *z, int64_t outer, int64_t count,
                     int64_t inner, bool mean) {
  if (inner == 1) {
    constexpr int64_t kPiece = kReducePieceElements;
    int64_t pieces = (count + kPiece - 1) / kPiece;
    if (outer >= poolThreads() || pieces <= 1) {
      parallelFor(outer, count, [&](int64_t first, int64_t last) {
        for (int64_t o = first; o < last; ++o)
          z[o] = foldRow<F, T, Acc>(in + o * count, count, mean);
      });
      return;
    }
    std::vector<Acc> partial(size_t(outer * pieces), foldIdentity<F, Acc>());
    std::vector<uint8_t> partialNan(partial.size(), 0);
    parallelFor(outer * pieces, kPiece, [&](int64_t first, int64_t last) {
      for (int64_t item = first; item < last; ++item) {
        int64_t o = item / pieces, begin = (item % pieces) * kPiece;
        bool nan = false;
        foldRun<F>(in + o * count + begin, std::min(kPiece, count - begin),
                   partial[item], nan);
        partialNan[item] = nan;
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      Acc acc = foldIdentity<F, Acc>();
      bool nan = false;
      for (int64_t p = 0; p < pieces; ++p) {
        acc = fold<F>(acc, partial[o * pieces + p]);
        nan |= partialNan[o * pieces + p] != 0;
      }
      z[o] = finishFold<F, T>(acc, nan, count, mean);
    }
    return;
  }
  constexpr int64_t kBlock = 256;
  int64_t blocks = (inner + kBlock - 1) / kBlock;
  parallelFor(outer * blocks, count * std::min(inner, kBlock),
              [&](int64_t first, int64_t last) {
    using Lane = LaneOf<F, T, Acc>;
    Lane acc[kBlock];
    int32_t nan[kBlock];
    for (int64_t item = first; item < last; ++item) {
      int64_t o = item / blocks, begin = (item % blocks) * kBlock;
      int64_t width = std::min(kBlock, inner - begin);
      for (int64_t i = 0; i < width; ++i) {
        acc[i] = foldIdentity<F, Lane>();
        nan[i] = 0;
      }
      foldRows<F>(in + o * count * inner + begin, count, inner, width, acc,
                  nan);
      for (int64_t i = 0; i < width; ++i)
        z[o * inner + begin + i] =
            finishFold<F, T>(Acc(acc[i]), nan[i] != 0, count, mean);
    }
  });
}

/// The rows of a fused group's reduction (reduceComputedRows): blocks of
/// rows computed into scratch and folded by foldRow, as foldConsecutive
/// folds each row of up to kReducePieceElements of an input (inner 1).
template <Fold F>
void foldComputedRows(int64_t outer, int64_t count, int64_t costPerElement,
                      float *z, bool mean, const ComputeElements &compute) {
  // Blocks of about 16 KiB (a row at least): in L1 when folded.
  constexpr int64_t kBlockFloats = 4096;
  int64_t rowsPerBlock = std::max<int64_t>(1, kBlockFloats / count);
  parallelFor(outer, count * (costPerElement + 1),
              [&](int64_t first, int64_t last) {
    int64_t rows = std::min(rowsPerBlock, last - first);
    Scratch scratch(size_t(rows * count));
    float *block = scratch.get();
    for (int64_t o = first; o < last; o += rows) {
      int64_t end = std::min(last, o + rows);
      compute(o * count, end * count, block);
      for (int64_t r = o; r < end; ++r)
        z[r] = foldRow<F, float, double>(block + (r - o) * count, count, mean);
    }
  });
}

/// The common case, reduced axes that are consecutive dimensions: x is
/// [outer, reduced, inner] (foldConsecutive). Returns false for other axis
/// sets.
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
  const T *in = static_cast<const T *>(x.data);
  T *z = static_cast<T *>(out.data);
  bool mean = kind == img::kReduceMean;
  if (kind == img::kReduceMax)
    foldConsecutive<Fold::Max, T, Acc>(in, z, outer, count, inner, false);
  else if (kind == img::kReduceMin)
    foldConsecutive<Fold::Min, T, Acc>(in, z, outer, count, inner, false);
  else
    foldConsecutive<Fold::Sum, T, Acc>(in, z, outer, count, inner, mean);
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


/// x viewed as [outer, size, inner]: each of the outer·inner runs along the
/// axis is summed in order, in parallel over the runs.
template <typename T, typename Acc>
void cumsum(const TensorView &x, const TensorView &out, int64_t axis) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  const T *in = static_cast<const T *>(x.data);
  T *z = static_cast<T *>(out.data);
  parallelFor(outer * inner, size, [&](int64_t begin, int64_t end) {
    for (int64_t run = begin; run < end; ++run) {
      int64_t base = (run / inner) * size * inner + run % inner;
      Acc acc = 0;
      for (int64_t k = 0; k < size; ++k) {
        acc = sum(acc, Acc(in[base + k * inner]));
        z[base + k * inner] = T(acc);
      }
    }
  });
}

bool cumsumKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &error) {
  int64_t axis = img::readAttrs<img::AxisAttrs>(attrs).axis;
  switch (out.dtype) {
  case DType::F32: cumsum<float, double>(ops[0], out, axis); return true;
  case DType::I64: cumsum<int64_t, int64_t>(ops[0], out, axis); return true;
  case DType::I32: cumsum<int32_t, int64_t>(ops[0], out, axis); return true;
  default: return unsupported(out.dtype, error);
  }
}

/// Reductions over a list of axes (ListAttrs: the reduced axes).
bool reduceKernel(int64_t kind, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &axes,
                  std::string &error) {
  switch (out.dtype) {
  case DType::F32: reduce<float, double>(kind, ops[0], out, axes); return true;
  case DType::I64: reduce<int64_t, int64_t>(kind, ops[0], out, axes); return true;
  case DType::I32: reduce<int32_t, int64_t>(kind, ops[0], out, axes); return true;
  default: return unsupported(out.dtype, error);
  }
}

bool argmaxKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &error) {
  int64_t axis = img::readAttrs<img::AxisAttrs>(attrs).axis;
  switch (ops[0].dtype) {
  case DType::F32: argmax<float>(ops[0], out, axis); return true;
  case DType::I64: argmax<int64_t>(ops[0], out, axis); return true;
  case DType::I32: argmax<int32_t>(ops[0], out, axis); return true;
  default: return unsupported(out.dtype, error);
  }
}

} // namespace

void cpu::reduceComputedRows(int64_t kind, int64_t outer, int64_t count,
                             int64_t costPerElement, float *out,
                             const ComputeElements &compute) {
  if (kind == img::kReduceMax)
    foldComputedRows<Fold::Max>(outer, count, costPerElement, out, false,
                                compute);
  else if (kind == img::kReduceMin)
    foldComputedRows<Fold::Min>(outer, count, costPerElement, out, false,
                                compute);
  else
    foldComputedRows<Fold::Sum>(outer, count, costPerElement, out,
                                kind == img::kReduceMean, compute);
}

void cpu::registerReduceKernels(CpuKernelTable &table) {
  for (img::OpKind kind : {img::kReduceSum, img::kReduceMean, img::kReduceMax,
                           img::kReduceMin})
    table[kind] = reduceKernel;
  table[img::kArgmax] = argmaxKernel;
  table[img::kCumsum] = cumsumKernel;
}
