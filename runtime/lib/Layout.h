//===- Layout.h - row-major layouts shared by the kernels -------*- C++ -*-===//
//
// Helpers of the CPU and CUDA kernels: element counts, strides,
// broadcasting, splitting a shape at an axis, the double stored in an
// attribute word; and, on the host and in CUDA kernels alike, the
// arithmetic whose edge cases the two backends must agree on (comparison
// predicates, integer wrap-around and division, float-to-integer
// conversion, relu of NaN).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_LAYOUT_H
#define TANDEM_RUNTIME_LIB_LAYOUT_H

#include "tandem/runtime/Tensor.h"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <vector>

#ifdef __CUDACC__
#define TANDEM_HOST_DEVICE __host__ __device__
#else
#define TANDEM_HOST_DEVICE
#endif

namespace tandem::rt {

/// Merges adjacent dimensions that every operand walks as one (and drops
/// dimensions of size 1), so that loops run long rows and index arithmetic
/// has fewer dimensions: a dense elementwise op becomes one dimension.
/// `strides` holds one stride list per operand (a C array or a vector of
/// them), each as long as `shape`.
template <typename StrideLists>
void coalesce(std::vector<int64_t> &shape, StrideLists &strides) {
  std::vector<int64_t> merged;
  std::vector<std::vector<int64_t>> mergedStrides(std::size(strides));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    bool joins = !merged.empty();
    for (size_t k = 0; k < mergedStrides.size() && joins; ++k)
      joins = mergedStrides[k].back() == strides[k][d] * shape[d];
    if (joins) {
      merged.back() *= shape[d];
      for (size_t k = 0; k < mergedStrides.size(); ++k)
        mergedStrides[k].back() = strides[k][d];
      continue;
    }
    merged.push_back(shape[d]);
    for (size_t k = 0; k < mergedStrides.size(); ++k)
      mergedStrides[k].push_back(strides[k][d]);
  }
  shape = std::move(merged);
  for (size_t k = 0; k < mergedStrides.size(); ++k)
    strides[k] = std::move(mergedStrides[k]);
}

/// Threads per block of the CUDA kernels, and the most blocks a launch asks
/// for (the kernels loop over the grid, so fewer blocks still cover all).
constexpr int64_t kThreadsPerBlock = 256, kMaxBlocks = 65535;

/// Blocks of kThreadsPerBlock threads for `items` items: at least one (a
/// launch of zero blocks is an error, and a kernel over zero items simply
/// does nothing) and at most kMaxBlocks.
TANDEM_HOST_DEVICE inline int64_t launchBlocks(int64_t items) {
  int64_t blocks = items / kThreadsPerBlock + (items % kThreadsPerBlock != 0);
  return blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks;
}

/// Elements in `shape`; the loader has already refused shapes that overflow.
inline int64_t countOf(const std::vector<int64_t> &shape) {
  return int64_t(elementCount(shape).value_or(0));
}

/// Strides (in elements) of a row-major tensor of `shape`.
inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Strides of `shape` seen through its NumPy broadcast to `to`: a stretched
/// or missing dimension has stride 0.
inline std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape,
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

/// (outer, size, inner) of `shape` split at `axis`.
inline void splitAt(const std::vector<int64_t> &shape, int64_t axis,
                    int64_t &outer, int64_t &size, int64_t &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  size = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

/// The double a model-image attribute word holds.
inline double wordToDouble(int64_t word) {
  double value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

/// `l <predicate> r` for tandem.compare's predicate numbering
/// (eq ne lt le gt ge = 0..5); on the host and in CUDA kernels alike.
template <typename T>
TANDEM_HOST_DEVICE inline bool comparePredicate(int64_t predicate, T l, T r) {
  switch (predicate) {
  case 0: return l == r;
  case 1: return l != r;
  case 2: return l < r;
  case 3: return l <= r;
  case 4: return l > r;
  case 5: return l >= r;
  }
  return false;
}

/// Integer x + y, x - y, x * y and -x wrap around in two's complement (as
/// NumPy and PyTorch do) instead of overflowing, which C++ leaves undefined.
template <typename T> TANDEM_HOST_DEVICE inline T wrapAdd(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return T(U(x) + U(y));
}
template <typename T> TANDEM_HOST_DEVICE inline T wrapSub(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return T(U(x) - U(y));
}
template <typename T> TANDEM_HOST_DEVICE inline T wrapMul(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return T(U(x) * U(y));
}
template <typename T> TANDEM_HOST_DEVICE inline T wrapNeg(T x) {
  using U = std::make_unsigned_t<T>;
  return T(U(0) - U(x));
}

/// Integer x / y truncated toward zero; MIN / -1 wraps to MIN (NumPy,
/// PyTorch). Division by zero sets `byZero` (the op then fails) and gives 0.
template <typename T>
TANDEM_HOST_DEVICE inline T divideInteger(T x, T y, bool &byZero) {
  if (y == 0) {
    byZero = true;
    return 0;
  }
  if (y == T(-1))
    return wrapNeg(x);
  return T(x / y);
}

/// A float converted to an integer type: truncated toward zero, NaN to 0,
/// values beyond the type's range saturate (as XLA and the GPU's own
/// conversion instructions do; a plain C++ cast is undefined there).
template <typename T> TANDEM_HOST_DEVICE inline T floatToInteger(double v) {
  using U = std::make_unsigned_t<T>;
  // (Spelled without std::numeric_limits, which CUDA device code lacks.)
  const T largest = T(U(~U(0)) >> 1), smallest = T(-largest - 1);
  // 2^(bits-1) is exact in a double; the largest T is not.
  const double limit = double(U(1) << (sizeof(T) * 8 - 1));
  if (v != v)
    return 0;
  if (v >= limit)
    return largest;
  if (v <= -limit)
    return smallest;
  return T(v); // truncates toward zero
}

/// relu: max(v, 0) that keeps NaN (NumPy's maximum, PyTorch's relu).
template <typename T> TANDEM_HOST_DEVICE inline T reluOf(T v) {
  return v > T(0) || v != v ? v : T(0);
}

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_LAYOUT_H
