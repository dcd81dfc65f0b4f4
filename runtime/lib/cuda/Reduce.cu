//===- Reduce.cu - CUDA kernels for reductions and argmax -----------------===//
//
// The Reduce family of OpKinds.def on the GPU: sum, mean, max and min over
// any set of axes (a thread per result element, f32 accumulation; floats
// only) and argmax along an axis (a thread per row).
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

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

template <typename T, typename Acc>
__global__ void reduceKernel(int kind, ReduceArgs a, int64_t outputs,
                             const T *x, T *out) {
  GRID_LOOP(i, outputs) {
    // The base offset of output i over the kept dimensions.
    int64_t base = 0, rest = i;
    for (int d = a.rank - 1; d >= 0; --d)
      if (!a.reduced[d]) {
        base += (rest % a.dims[d]) * a.strides[d];
        rest /= a.dims[d];
      }
    Acc acc = kind == img::kReduceMax ? Acc(-INFINITY)
              : kind == img::kReduceMin ? Acc(INFINITY) : Acc(0);
    bool nan = false;
    for (int64_t r = 0; r < a.perOutput; ++r) {
      int64_t offset = base, left = r;
      for (int d = a.rank - 1; d >= 0; --d)
        if (a.reduced[d]) {
          offset += (left % a.dims[d]) * a.strides[d];
          left /= a.dims[d];
        }
      Acc v = Acc(toFloat(x[offset]));
      nan |= v != v;
      acc = kind == img::kReduceMax ? (v > acc ? v : acc)
            : kind == img::kReduceMin ? (v < acc ? v : acc) : acc + v;
    }
    if (kind == img::kReduceMean)
      acc /= Acc(a.perOutput);
    if (nan && (kind == img::kReduceMax || kind == img::kReduceMin))
      acc = Acc(NAN);
    out[i] = fromFloat<T>(float(acc));
  }
}

template <typename T>
__global__ void argmaxKernel(int64_t outer, int64_t size, int64_t inner,
                             const T *x, int64_t *out) {
  GRID_LOOP(item, outer * inner) {
    int64_t o = item / inner, i = item % inner, best = 0;
    const T *row = x + o * size * inner + i;
    for (int64_t k = 1; k < size; ++k) {
      float v = toFloat(row[k * inner]), b = toFloat(row[best * inner]);
      if (!(b != b) && ((v != v) || v > b))
        best = k;
    }
    out[item] = best;
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
  if (dtype == DType::I64 || dtype == DType::I32) {
    call.error = "integer reductions on the GPU are not in the CUDA backend yet";
    return false;
  }
  bool ok = withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    reduceKernel<T, float><<<call.grid, call.block>>>(int(call.kind), args,
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
  bool ok = withFloat(ops[0].dtype, [&](auto t) {
    using T = decltype(t);
    argmaxKernel<T><<<blocksFor(outer * inner), call.block>>>(outer, size,
        inner, static_cast<const T *>(ops[0].data),
        static_cast<int64_t *>(call.out.data));
  });
  return ok ? launched(call.error) : call.unsupported();
}

} // namespace

void cuda::registerReduceKernels(CudaKernelTable &table) {
  for (img::OpKind kind : {img::kReduceSum, img::kReduceMean, img::kReduceMax,
                           img::kReduceMin})
    table.add(kind, runReduce);
  table.add(img::kArgmax, runArgmax);
}
