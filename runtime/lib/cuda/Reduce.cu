//===- Reduce.cu - CUDA kernels for reductions and argmax -----------------===//
//
// The Reduce family of OpKinds.def on the GPU: sum, mean, max and min over
// any set of axes, and argmax along an axis (a max that gives the position).
// As on the CPU, floats accumulate in double and integers in wrapping int64
// (f16 and bf16 round once, from the double); argmax compares integers
// exactly; max, min and argmax take the first of equal values (which keeps
// -0 or +0 as the CPU's sequential loop does) and NaN wins over all (max
// and min then give NaN, argmax the first NaN's position).
//
// Two kernels, each a reduction with warp shuffles (CudaSupport.cuh):
//  - reduceAlongKernel: the threads of a warp, or of a whole block, fold
//    one result element each, striding along the reduced elements and
//    combining their partials with shuffles (and shared memory between
//    warps). For reduced elements that are contiguous (the last axis, where
//    adjacent threads then read adjacent elements), and for few results
//    (a reduction to a scalar: a block of 1024 threads instead of one).
//  - reduceAcrossKernel: a thread per result element over a run of
//    adjacent results (adjacent in the input too: the reduced axes are not
//    innermost, so adjacent threads read adjacent elements), optionally
//    with several rows of threads splitting the reduced elements and
//    combining through shared memory. For short reductions (a thread each)
//    and for many results of an axis other than the last.
// Neither needs scratch memory or atomics: each result is folded by one
// warp or block, in an order that depends on the shapes only, so a sum is
// the same on every run.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

/// A reduction as its kernels take it: the result elements (the kept
/// dimensions) and, for each, the reduced elements, both as dimensions of
/// the input with their strides, merged where contiguous (a run of reduced
/// axes at the end is one dimension of stride 1).
struct ReduceArgs {
  int keptRank = 0, reducedRank = 0;
  int64_t keptDims[kMaxRank] = {}, keptStrides[kMaxRank] = {};
  int64_t reducedDims[kMaxRank] = {}, reducedStrides[kMaxRank] = {};
  int64_t outputs = 0;   // result elements
  int64_t perOutput = 0; // reduced elements per result element
  bool mean = false;     // a sum divided by perOutput
  bool positions = false; // argmax: the result is the winner's position (i64)
};

/// What a reduction folds: a sum (and mean), or the largest (max, argmax)
/// or smallest (min) element.
enum class Fold { Sum, Max, Min };

/// What a reduction of T accumulates in, as the CPU does: double for the
/// floating types, int64 (wrapping) for integers.
template <typename T>
using Accumulator = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

template <typename T> __device__ inline Accumulator<T> widen(T v) {
  if constexpr (std::is_integral_v<T>)
    return int64_t(v);
  else
    return double(toFloat(v));
}

/// The accumulator rounded once to T (not through float: a double rounded
/// to float and then to f16 can land an ulp off).
template <typename T> __device__ inline T narrow(Accumulator<T> v) {
  if constexpr (std::is_same_v<T, __half>)
    return __double2half(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __double2bfloat16(v);
  else
    return T(v);
}

/// A max or min fold's winner so far: its value and its position among
/// the reduced elements (kNone before any element).
template <typename A> struct Best {
  A value;
  int64_t position;
};
constexpr int64_t kNone = INT64_MAX;

template <typename A> __device__ inline Best<A> shuffleXor(Best<A> b, int mask) {
  return {cuda::shuffleXor(b.value, mask), cuda::shuffleXor(b.position, mask)};
}

/// Whether (v at i) wins over (b at j) in a max (or min) fold: NaN wins
/// over all; of two NaNs, or of equal values, the first. That is what the
/// CPU's sequential loop keeps, and as a total order on (value, position)
/// it gives the same winner in whatever order partials are combined.
template <Fold F, typename A>
__device__ inline bool wins(A v, int64_t i, A b, int64_t j) {
  bool vNan = v != v, bNan = b != b; // false for integers
  if (vNan || bNan)
    return vNan && (!bNan || i < j);
  if (v == b)
    return i < j;
  return F == Fold::Max ? v > b : v < b;
}

/// A thread's partial result of fold F over elements of type T.
template <typename T, Fold F>
using State = std::conditional_t<F == Fold::Sum, Accumulator<T>,
                                 Best<Accumulator<T>>>;

template <typename T, Fold F> __device__ inline State<T, F> emptyState() {
  using A = Accumulator<T>;
  if constexpr (F == Fold::Sum) {
    return A(0);
  } else if constexpr (std::is_integral_v<T>) {
    return {F == Fold::Max ? INT64_MIN : INT64_MAX, kNone};
  } else {
    return {F == Fold::Max ? -A(INFINITY) : A(INFINITY), kNone};
  }
}

/// Two partials combined (commutative, as warpReduce needs; integer sums
/// wrap).
template <typename T, Fold F> struct Combine {
  __device__ State<T, F> operator()(State<T, F> a, State<T, F> b) const {
    if constexpr (F != Fold::Sum)
      return wins<F>(b.value, b.position, a.value, a.position) ? b : a;
    else if constexpr (std::is_integral_v<T>)
      return wrapAdd(a, b);
    else
      return a + b;
  }
};

/// The offset in the input of element `i` of dimensions `dims` (row-major
/// order) with `strides`. One dimension, the common case, needs no
/// division; the unrolled loop keeps the arrays in parameter space.
__device__ inline int64_t offsetIn(int rank, const int64_t (&dims)[kMaxRank],
                                   const int64_t (&strides)[kMaxRank],
                                   int64_t i) {
  if (rank == 1)
    return i * strides[0];
  int64_t offset = 0;
#pragma unroll
  for (int d = kMaxRank - 1; d >= 0; --d)
    if (d < rank) {
      offset += (i % dims[d]) * strides[d];
      i /= dims[d];
    }
  return offset;
}

/// Folds reduced element `r` of result element `o` (at input offset
/// `base`) into `s`. The elements a thread folds come in increasing r.
template <typename T, Fold F>
__device__ inline State<T, F> fold(const ReduceArgs &a, const T *x,
                                   int64_t base, int64_t r, State<T, F> s) {
  Accumulator<T> v =
      widen(x[base + offsetIn(a.reducedRank, a.reducedDims, a.reducedStrides, r)]);
  if constexpr (F == Fold::Sum)
    return Combine<T, F>()(s, v);
  else
    return wins<F>(v, r, s.value, s.position) ? State<T, F>{v, r} : s;
}

/// Stores result element `o` from the fold of all its reduced elements.
template <typename T, Fold F>
__device__ inline void store(const ReduceArgs &a, State<T, F> s, void *out,
                             int64_t o) {
  using A = Accumulator<T>;
  if constexpr (F == Fold::Sum) {
    if (a.mean) {
      if constexpr (std::is_integral_v<T>) // truncating, as the CPU
        s = a.perOutput ? s / a.perOutput : INT64_MIN; // an empty axis has no mean
      else
        s = a.perOutput ? s / A(a.perOutput) : A(NAN);
    }
    static_cast<T *>(out)[o] = narrow<T>(s);
  } else if (a.positions) {
    // Argmax of an empty axis: 0, as the CPU.
    static_cast<int64_t *>(out)[o] = s.position == kNone ? 0 : s.position;
  } else {
    A v = s.value;
    if constexpr (!std::is_integral_v<T>)
      if (v != v) // the CPU's NaN, not the input's
        v = A(NAN);
    static_cast<T *>(out)[o] = narrow<T>(v);
  }
}

/// A thread's share of result element o's fold: its reduced elements
/// start, start + step, ...; nothing for an o past the end (so that the
/// thread still takes part in its block's shuffles and barriers).
template <typename T, Fold F>
__device__ inline State<T, F> foldShare(const ReduceArgs &a, const T *x,
                                        int64_t o, int64_t start,
                                        int64_t step) {
  State<T, F> s = emptyState<T, F>();
  if (o < a.outputs) {
    int64_t base = offsetIn(a.keptRank, a.keptDims, a.keptStrides, o);
    for (int64_t r = start; r < a.perOutput; r += step)
      s = fold<T, F>(a, x, base, r, s);
  }
  return s;
}

/// A warp (blockDim (32, rows)) or a whole block (blockDim (threads, 1))
/// per result element: threadIdx.x strides along its reduced elements,
/// threadIdx.y picks the result element among the block's blockDim.y.
template <typename T, Fold F>
__global__ void __launch_bounds__(1024)
    reduceAlongKernel(ReduceArgs a, const T *x, void *out) {
  using S = State<T, F>;
  __shared__ S warps[32];
  // `first` is the same in the whole block, so its threads all reach
  // blockReduce's barriers, as many times; a result element past the end
  // leaves its threads folding nothing, not skipping the shuffles.
  for (int64_t first = blockIdx.x * int64_t(blockDim.y); first < a.outputs;
       first += int64_t(gridDim.x) * blockDim.y) {
    int64_t o = first + threadIdx.y;
    S s = foldShare<T, F>(a, x, o, threadIdx.x, blockDim.x);
    // blockDim.x is the same in the whole block: a uniform branch.
    s = blockDim.x > 32 ? blockReduce(s, warps, Combine<T, F>())
                        : warpReduce(s, Combine<T, F>());
    if (threadIdx.x == 0 && o < a.outputs)
      store<T, F>(a, s, out, o);
  }
}

/// A thread per result element over blockDim.x adjacent ones; blockDim.y
/// rows of threads split each one's reduced elements (row y folds y, y +
/// blockDim.y, ...) and row 0 combines the rows' partials in row order.
template <typename T, Fold F>
__global__ void __launch_bounds__(1024)
    reduceAcrossKernel(ReduceArgs a, const T *x, void *out) {
  using S = State<T, F>;
  // [y][x], for blockDim.y > 1: the launch sizes it (none for a single row,
  // leaving that memory to the L1 cache that short rows are read through).
  extern __shared__ __align__(16) unsigned char acrossShared[];
  S *partials = reinterpret_cast<S *>(acrossShared);
  // `first` is the same in the whole block: its threads all reach the
  // barriers, as many times.
  for (int64_t first = blockIdx.x * int64_t(blockDim.x); first < a.outputs;
       first += int64_t(gridDim.x) * blockDim.x) {
    int64_t o = first + threadIdx.x;
    S s = foldShare<T, F>(a, x, o, threadIdx.y, blockDim.y);
    if (blockDim.y > 1) { // uniform in the block
      partials[threadIdx.y * blockDim.x + threadIdx.x] = s;
      __syncthreads();
      if (threadIdx.y == 0)
        for (unsigned y = 1; y < blockDim.y; ++y)
          s = Combine<T, F>()(s, partials[y * blockDim.x + threadIdx.x]);
      __syncthreads(); // the next run's writes wait for these reads
    }
    if (threadIdx.y == 0 && o < a.outputs)
      store<T, F>(a, s, out, o);
  }
}

/// Stage one of a reduction split over blocks (few result elements, each
/// of very many reduced elements, which one block apiece would fold with
/// most of the GPU idle): block (part, o) folds result element o's reduced
/// elements from part * blockDim.x + threadIdx.x on, every gridDim.x *
/// blockDim.x-th, into partials[o * gridDim.x + part].
template <typename T, Fold F>
__global__ void __launch_bounds__(1024)
    reducePartsKernel(ReduceArgs a, const T *x, State<T, F> *partials) {
  using S = State<T, F>;
  __shared__ S warps[32];
  int64_t o = blockIdx.y, parts = gridDim.x;
  S s = foldShare<T, F>(a, x, o, int64_t(blockIdx.x) * blockDim.x + threadIdx.x,
                        parts * blockDim.x);
  s = blockReduce(s, warps, Combine<T, F>());
  if (threadIdx.x == 0)
    partials[o * parts + blockIdx.x] = s;
}

/// Stage two: a block per result element combines its parts (in the order
/// blockReduce fixes, so the result depends on the launch's shape only).
template <typename T, Fold F>
__global__ void __launch_bounds__(1024)
    combinePartsKernel(ReduceArgs a, const State<T, F> *partials, int64_t parts,
                       void *out) {
  using S = State<T, F>;
  __shared__ S warps[32];
  int64_t o = blockIdx.x;
  S s = emptyState<T, F>();
  for (int64_t p = threadIdx.x; p < parts; p += blockDim.x)
    s = Combine<T, F>()(s, partials[o * parts + p]);
  s = blockReduce(s, warps, Combine<T, F>());
  if (threadIdx.x == 0)
    store<T, F>(a, s, out, o);
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Reductions of fewer elements than this stay a thread per result element:
/// two warps' worth, below which a warp's lanes would fold a single
/// element or two each and the shuffles (five steps, of a double and a
/// position for max and min) would cost more than the loads they spread.
/// (softmax and layer_norm take a block per row from the same length.)
constexpr int64_t kMinCooperative = 64;
/// From this many reduced elements a whole block folds each result element
/// (8 or more per thread of 256); fewer: a warp each (2 to 64 per lane).
constexpr int64_t kBlockPerOutput = 2048;
/// Fewer result elements than this get a block each whatever their length:
/// a warp each would make at most 16 blocks of 8 warps, an eighth of an
/// H100's 132 SMs.
constexpr int64_t kFewOutputs = 128;
/// With at most this many result elements, each of at least
/// kHugeReduction elements, a block has 1024 threads instead of 256: then
/// there are too few blocks to fill the SMs, and each should pull harder.
constexpr int64_t kFewBigOutputs = 256, kHugeReduction = 16384;
/// Reduced elements that are not contiguous (an axis other than the last)
/// are folded a thread per result element, adjacent threads reading
/// adjacent elements, from this many result elements on (32 blocks of
/// 32 x 32 threads and more); with fewer, a block per result element reads
/// them strided (each warp's load touching 32 sectors, mostly L2 hits as
/// the neighbouring results' blocks read the rest), which keeps more SMs
/// busy than a few blocks would.
constexpr int64_t kAcrossMinOutputs = 1024;
/// reduceAcrossKernel splits each result element's reduced elements over
/// rows of threads until the launch has about this many threads (and at
/// most 32 rows): 65536 is 256 blocks of 256.
constexpr int64_t kAcrossThreads = 65536;

/// Reductions of at most this many result elements, each of at least
/// kSplitMinPerPart * 2 elements, are split over blocks (reducePartsKernel):
/// about kSplitBlocks blocks in all (8 per SM of an H100 or H200), each
/// folding at least kSplitMinPerPart elements (32 per thread).
constexpr int64_t kSplitMaxOutputs = 256, kSplitBlocks = 1024,
                  kSplitMinPerPart = 8192;
// A split has at most kSplitBlocks + kSplitMaxOutputs parts in all (a part
// count rounded up per result element), each a State of at most 16 bytes (a
// double or int64 and a position): they fit the backend's scratch.
static_assert((kSplitBlocks + kSplitMaxOutputs) * 16 <= kReduceScratchBytes,
              "a split reduction's partial results must fit reduceScratch");

/// How a reduction is launched: which kernel, and its grid and block.
struct ReducePlan {
  bool along = false; // reduceAlongKernel, else reduceAcrossKernel
  int64_t parts = 0;  // > 0: reducePartsKernel over this many blocks per
                      // result element, then combinePartsKernel
  dim3 grid, block;
};

unsigned gridFor(int64_t blocks) {
  return unsigned(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

ReducePlan planReduce(const ReduceArgs &a) {
  ReducePlan plan;
  int64_t outputs = a.outputs, per = a.perOutput;
  bool contiguous = a.reducedRank > 0 && a.reducedStrides[a.reducedRank - 1] == 1;
  if (per >= kMinCooperative && (contiguous || outputs < kAcrossMinOutputs)) {
    plan.along = true;
    int64_t parts = outputs > 0 ? std::min((kSplitBlocks + outputs - 1) / outputs,
                                           per / kSplitMinPerPart)
                                : 0;
    if (outputs <= kSplitMaxOutputs && parts >= 2) {
      plan.parts = parts;
      plan.block = dim3(unsigned(kThreadsPerBlock), 1);
      plan.grid = dim3(unsigned(parts), unsigned(outputs));
      return plan;
    }
    if (per >= kBlockPerOutput || outputs < kFewOutputs) {
      int threads = outputs <= kFewBigOutputs && per >= kHugeReduction ? 1024 : 256;
      plan.block = dim3(unsigned(threads), 1);
      plan.grid = dim3(gridFor(outputs));
    } else {
      constexpr int warps = int(kThreadsPerBlock / 32);
      plan.block = dim3(32, unsigned(warps));
      plan.grid = dim3(gridFor((outputs + warps - 1) / warps));
    }
    return plan;
  }
  // A thread per result element (rows = 1): reductions shorter than
  // kMinCooperative, and many result elements. Fewer result elements split
  // each reduction over up to 32 rows; a block then covers at least 32
  // result elements (a warp reads a run of 32 adjacent ones).
  int64_t rows = 1;
  if (per >= kMinCooperative)
    while (rows < 32 && outputs * rows * 2 <= kAcrossThreads)
      rows *= 2;
  int64_t width = std::max<int64_t>(32, kThreadsPerBlock / rows);
  plan.block = dim3(unsigned(width), unsigned(rows));
  plan.grid = dim3(gridFor((outputs + width - 1) / width));
  return plan;
}

/// The reduction of `shape` (row-major) over `axes`.
ReduceArgs reduceArgs(const std::vector<int64_t> &shape,
                      const std::vector<int64_t> &axes) {
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t axis : axes)
    reduced[axis] = true;
  std::vector<int64_t> strides = rowMajorStrides(shape);
  std::vector<int64_t> kept, reducedDims;
  std::vector<int64_t> keptStrides[1], reducedStrides[1];
  ReduceArgs a;
  a.outputs = a.perOutput = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? reducedDims : kept).push_back(shape[d]);
    (reduced[d] ? reducedStrides[0] : keptStrides[0]).push_back(strides[d]);
    (reduced[d] ? a.perOutput : a.outputs) *= shape[d];
  }
  coalesce(kept, keptStrides);
  coalesce(reducedDims, reducedStrides);
  a.keptRank = int(kept.size());
  a.reducedRank = int(reducedDims.size());
  for (int d = 0; d < a.keptRank; ++d) {
    a.keptDims[d] = kept[d];
    a.keptStrides[d] = keptStrides[0][d];
  }
  for (int d = 0; d < a.reducedRank; ++d) {
    a.reducedDims[d] = reducedDims[d];
    a.reducedStrides[d] = reducedStrides[0][d];
  }
  return a;
}

/// The shared memory of reduceAcrossKernel: a partial per thread when rows
/// of threads split the reduced elements (at most 1024 x 16 bytes).
template <typename T, Fold F> size_t acrossSharedBytes(const ReducePlan &plan) {
  return plan.block.y > 1
             ? size_t(plan.block.x) * plan.block.y * sizeof(State<T, F>)
             : 0;
}

template <typename T, Fold F>
void launchFold(const ReduceArgs &a, const ReducePlan &plan,
                cudaStream_t stream, void *scratch, const void *x, void *out) {
  const T *in = static_cast<const T *>(x);
  if (plan.parts > 0) {
    auto *partials = static_cast<State<T, F> *>(scratch);
    reducePartsKernel<T, F><<<plan.grid, plan.block, 0, stream>>>(a, in, partials);
    combinePartsKernel<T, F><<<dim3(unsigned(a.outputs)), plan.block, 0, stream>>>(
        a, partials, plan.parts, out);
  } else if (plan.along)
    reduceAlongKernel<T, F><<<plan.grid, plan.block, 0, stream>>>(a, in, out);
  else
    reduceAcrossKernel<T, F><<<plan.grid, plan.block, acrossSharedBytes<T, F>(plan), stream>>>(
        a, in, out);
}

/// Runs `launch` with the element type T of `dtype`: a floating type or an
/// integer (what reductions and argmax take).
template <typename F> bool withNumeric(DType dtype, F launch) {
  switch (dtype) {
  case DType::I64: launch(int64_t()); return true;
  case DType::I32: launch(int32_t()); return true;
  default: return withFloat(dtype, launch);
  }
}

/// Launches fold `fold` of operand 0 (of `dtype`) into the result.
bool launchReduce(const KernelCall &call, DType dtype, Fold fold,
                  const ReduceArgs &a) {
  ReducePlan plan = planReduce(a);
  const void *x = call.ops[0].data;
  void *out = call.out.data, *scratch = call.device.reduceScratch;
  return withNumeric(dtype, [&](auto t) {
    using T = decltype(t);
    static_assert(sizeof(State<T, Fold::Max>) <= 16 && sizeof(State<T, Fold::Sum>) <= 16,
                  "kReduceScratchBytes is sized for partials of 16 bytes");
    switch (fold) {
    case Fold::Sum: launchFold<T, Fold::Sum>(a, plan, call.stream(), scratch, x, out); break;
    case Fold::Max: launchFold<T, Fold::Max>(a, plan, call.stream(), scratch, x, out); break;
    case Fold::Min: launchFold<T, Fold::Min>(a, plan, call.stream(), scratch, x, out); break;
    }
  });
}

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin: the words are the reduced
/// axes of operand 0.
bool runReduce(const KernelCall &call) {
  ReduceArgs a = reduceArgs(call.ops[0].shape, call.attrs);
  a.mean = call.kind == img::kReduceMean;
  Fold fold = call.kind == img::kReduceMax   ? Fold::Max
              : call.kind == img::kReduceMin ? Fold::Min
                                             : Fold::Sum;
  if (!launchReduce(call, call.out.dtype, fold, a))
    return call.unsupported();
  return launched(call.error);
}

/// The index (i64) of the largest element along the axis: the first of
/// equal ones; the first NaN wins.
bool runArgmax(const KernelCall &call) {
  const TensorView &x = call.ops[0];
  int64_t axis = img::readAttrs<img::AxisAttrs>(call.attrs).axis;
  ReduceArgs a = reduceArgs(x.shape, {axis});
  a.positions = true;
  if (!launchReduce(call, x.dtype, Fold::Max, a)) {
    call.error = std::string("no CUDA kernel for argmax over ") + dtypeName(x.dtype);
    return false;
  }
  return launched(call.error);
}

/// The running sum along an axis of x viewed as [outer, size, inner]: a
/// thread per run, adjacent threads on adjacent runs (coalesced where
/// inner > 1), accumulating as the reductions do and rounding each prefix
/// once. A last-axis scan with few rows runs on few threads: a
/// block-parallel scan is the step beyond this.
template <typename T>
__global__ void cumsumKernel(int64_t outer, int64_t size, int64_t inner,
                             const T *x, T *out) {
  GRID_LOOP(run, outer * inner) {
    int64_t base = (run / inner) * size * inner + run % inner;
    Accumulator<T> acc = 0;
    for (int64_t k = 0; k < size; ++k) {
      Accumulator<T> v = widen(x[base + k * inner]);
      if constexpr (std::is_integral_v<T>)
        acc = wrapAdd(acc, v);
      else
        acc += v;
      out[base + k * inner] = narrow<T>(acc);
    }
  }
}

bool runCumsum(const KernelCall &call) {
  int64_t axis = img::readAttrs<img::AxisAttrs>(call.attrs).axis;
  int64_t outer, size, inner;
  splitAt(call.out.shape, axis, outer, size, inner);
  if (!withNumeric(call.out.dtype, [&](auto t) {
        using T = decltype(t);
        cumsumKernel<T><<<blocksFor(outer * inner), call.block, 0,
                          call.stream()>>>(
            outer, size, inner, static_cast<const T *>(call.ops[0].data),
            static_cast<T *>(call.out.data));
      }))
    return call.unsupported();
  return launched(call.error);
}

} // namespace

void cuda::registerReduceKernels(CudaKernelTable &table) {
  for (img::OpKind kind : {img::kReduceSum, img::kReduceMean, img::kReduceMax,
                           img::kReduceMin})
    table.add(kind, runReduce);
  table.add(img::kArgmax, runArgmax);
  table.add(img::kCumsum, runCumsum);
}
