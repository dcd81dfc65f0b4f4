//===- Reduce.cu - CUDA kernels for reductions and argmax -----------------===//
//
// The Reduce family of OpKinds.def on the GPU: sum, mean, max and min over
// any set of axes (a thread per result element) and argmax along an axis (a
// thread per row). As on the CPU, floats accumulate in double and integers
// in wrapping int64; argmax compares integers exactly.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

#include <string>
#include <type_traits>
#include <vector>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

struct ReduceArgs {
  int rank;
  int64_t dims[kMaxRank], strides[kMaxRank];
  bool reduced[kMaxRank];
  int64_t perOutput;
};

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

template <typename T>
__global__ void reduceKernel(int kind, ReduceArgs a, int64_t outputs,
                             const T *x, T *out) {
  using Acc = Accumulator<T>;
  constexpr bool integral = std::is_integral_v<T>;
  bool isMax = kind == img::kReduceMax, isMin = kind == img::kReduceMin;
  GRID_LOOP(i, outputs) {
    // The base offset of output i over the kept dimensions.
    int64_t base = 0, rest = i;
    for (int d = a.rank - 1; d >= 0; --d)
      if (!a.reduced[d]) {
        base += (rest % a.dims[d]) * a.strides[d];
        rest /= a.dims[d];
      }
    Acc acc = Acc(0);
    if constexpr (integral)
      acc = isMax ? INT64_MIN : isMin ? INT64_MAX : 0;
    else
      acc = isMax ? -INFINITY : isMin ? INFINITY : 0.0;
    bool nan = false;
    for (int64_t r = 0; r < a.perOutput; ++r) {
      int64_t offset = base, left = r;
      for (int d = a.rank - 1; d >= 0; --d)
        if (a.reduced[d]) {
          offset += (left % a.dims[d]) * a.strides[d];
          left /= a.dims[d];
        }
      Acc v = widen(x[offset]);
      nan |= v != v;
      if (isMax)
        acc = v > acc ? v : acc;
      else if (isMin)
        acc = v < acc ? v : acc;
      else if constexpr (integral)
        acc = wrapAdd(acc, v);
      else
        acc += v;
    }
    if constexpr (integral) {
      // As the CPU: truncating division; an empty axis has no mean.
      if (kind == img::kReduceMean)
        acc = a.perOutput ? acc / a.perOutput : INT64_MIN;
    } else {
      if (kind == img::kReduceMean)
        acc = a.perOutput ? acc / Acc(a.perOutput) : Acc(NAN);
      if (nan && (isMax || isMin))
        acc = Acc(NAN);
    }
    out[i] = narrow<T>(acc);
  }
}

template <typename T>
__global__ void argmaxKernel(int64_t outer, int64_t size, int64_t inner,
                             const T *x, int64_t *out) {
  GRID_LOOP(item, outer * inner) {
    int64_t o = item / inner, i = item % inner, best = 0;
    const T *row = x + o * size * inner + i;
    for (int64_t k = 1; k < size; ++k) {
      auto v = orderKey(row[k * inner]), b = orderKey(row[best * inner]);
      if (!(b != b) && ((v != v) || v > b))
        best = k;
    }
    out[item] = best;
  }
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

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin: the words are the reduced
/// axes of operand 0.
bool runReduce(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  DType dtype = out.dtype;
  ReduceArgs args{};
  const std::vector<int64_t> &x = ops[0].shape;
  std::vector<int64_t> strides = rowMajorStrides(x);
  args.rank = int(x.size());
  args.perOutput = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    args.dims[d] = x[d];
    args.strides[d] = strides[d];
  }
  for (int64_t axis : call.attrs) {
    args.reduced[axis] = true;
    args.perOutput *= x[axis];
  }
  bool ok = withNumeric(dtype, [&](auto t) {
    using T = decltype(t);
    reduceKernel<T><<<call.grid, call.block, 0, call.stream()>>>(int(call.kind), args,
        call.n, static_cast<const T *>(ops[0].data), static_cast<T *>(out.data));
  });
  return ok ? launched(call.error) : call.unsupported();
}

/// The index (i64) of the largest element along the axis; the first NaN
/// wins.
bool runArgmax(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  int64_t axis = img::readAttrs<img::AxisAttrs>(call.attrs).axis;
  int64_t outer, size, inner;
  splitAt(ops[0].shape, axis, outer, size, inner);
  bool ok = withNumeric(ops[0].dtype, [&](auto t) {
    using T = decltype(t);
    argmaxKernel<T><<<blocksFor(outer * inner), call.block, 0, call.stream()>>>(outer, size,
        inner, static_cast<const T *>(ops[0].data),
        static_cast<int64_t *>(call.out.data));
  });
  if (!ok) {
    call.error = std::string("no CUDA kernel for argmax over ") +
                 dtypeName(ops[0].dtype);
    return false;
  }
  return launched(call.error);
}

} // namespace

void cuda::registerReduceKernels(CudaKernelTable &table) {
  for (img::OpKind kind : {img::kReduceSum, img::kReduceMean, img::kReduceMax,
                           img::kReduceMin})
    table.add(kind, runReduce);
  table.add(img::kArgmax, runArgmax);
}
