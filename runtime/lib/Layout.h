//===- Layout.h - row-major layouts shared by the kernels -------*- C++ -*-===//
//
// Host-side helpers of the CPU and CUDA kernels: element counts, strides,
// broadcasting, splitting a shape at an axis, the double stored in an
// attribute word, and the comparison predicates.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_LAYOUT_H
#define TANDEM_RUNTIME_LIB_LAYOUT_H

#include "tandem/runtime/Tensor.h"

#include <cstdint>
#include <cstring>
#include <vector>

#ifdef __CUDACC__
#define TANDEM_HOST_DEVICE __host__ __device__
#else
#define TANDEM_HOST_DEVICE
#endif

namespace tandem::rt {

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

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_LAYOUT_H
