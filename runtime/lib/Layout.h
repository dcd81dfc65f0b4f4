//===- Layout.h - row-major layouts shared by the kernels -------*- C++ -*-===//
//
// Helpers of the CPU and CUDA kernels: element counts, strides,
// broadcasting, splitting a shape at an axis, the double stored in an
// attribute word; and, on the host and in CUDA kernels alike, the
// arithmetic whose edge cases the two backends must agree on (comparison
// predicates, integer wrap-around and division, float-to-integer
// conversion, relu of NaN) and the index arithmetic of CUDA's tiled
// transpose (tested on the host).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_LAYOUT_H
#define TANDEM_RUNTIME_LIB_LAYOUT_H

#include "tandem/runtime/Tensor.h"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
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

//===----------------------------------------------------------------------===//
// The tiled strided copy (CUDA's transpose)
//===----------------------------------------------------------------------===//
//
// A strided copy out[i] = src[base + Σ index·stride] reads its source along
// the output's last dimension. When that is not the source's contiguous
// dimension (a transpose that moves the innermost dimension), a thread per
// output element reads the source with a large stride, uncoalesced. The
// tiled copy instead moves square tiles of kTile x kTile elements over two
// output dimensions, the tile pair: the rows, the output dimension the
// source walks contiguously (source stride 1), and the columns, the output's
// last dimension (output stride 1). A block of kTile x kTileRows threads
// reads a tile along its rows (consecutive threads, consecutive source
// elements), keeps it in shared memory, and writes it along its columns
// (consecutive threads, consecutive output elements). Every other output
// dimension is the batch. The index arithmetic is here, so that the host
// tests can run the kernel's loops with it.

/// The tiles' side, and the rows of threads in a block of the tiled copy:
/// each thread moves kTile / kTileRows elements of a tile.
constexpr int kTile = 32, kTileRows = 8;
/// The most dimensions the tiled copy takes (CUDA's Layout has no more).
constexpr int kTiledMaxRank = 8;
/// Tile pairs with a side shorter than this stay with the plain copy: a
/// tile would leave most of its threads idle, and the plain copy's warps
/// already read runs of several contiguous elements.
constexpr int64_t kMinTiledSide = 8;
/// The grid's limits: x, and y (and z).
constexpr int64_t kMaxGridX = 2147483647, kMaxGridY = 65535;

/// A tiled copy: out[outBatch + r·outRowStride + c] =
/// src[base + srcBatch + r·srcRowStride + c·srcColStride] for the rows r,
/// the columns c and each batch index's offsets.
struct TiledCopy {
  int64_t rows = 0, cols = 0; // the sizes of the tile pair
  int64_t srcRowStride = 0, srcColStride = 0, outRowStride = 0;
  int64_t rowTiles = 0, colTiles = 0, tiles = 0;
  // The other output dimensions, outermost first, with their source and
  // output strides; `batch` is their product (1 with none).
  int batchRank = 0;
  int64_t batch = 1;
  int64_t batchDims[kTiledMaxRank] = {};
  int64_t batchSrc[kTiledMaxRank] = {};
  int64_t batchOut[kTiledMaxRank] = {};
};

/// Whether the strided copy over the coalesced layout (`rank` output
/// dimensions `dims`, the source's `strides`; the output dense, row-major)
/// should run tiled, and if so its plan: the output's last dimension is not
/// the source's contiguous one (its stride is neither 1 nor 0, a
/// broadcast), another output dimension is, and both are at least
/// kMinTiledSide long. Which pair is tiled never changes what is copied,
/// only how fast.
inline bool planTiledCopy(int rank, const int64_t *dims,
                          const int64_t *strides, TiledCopy &plan) {
  if (rank < 2 || rank > kTiledMaxRank)
    return false;
  int last = rank - 1, rowDim = -1;
  if (strides[last] == 1 || strides[last] == 0)
    return false;
  for (int d = 0; d < last && rowDim < 0; ++d)
    if (strides[d] == 1)
      rowDim = d;
  if (rowDim < 0 || dims[rowDim] < kMinTiledSide || dims[last] < kMinTiledSide)
    return false;
  plan = TiledCopy();
  plan.rows = dims[rowDim];
  plan.cols = dims[last];
  plan.srcRowStride = strides[rowDim];
  plan.srcColStride = strides[last];
  // The output's row-major strides, and the batch: the dimensions besides
  // the pair, in order.
  int64_t outStrides[kTiledMaxRank];
  outStrides[last] = 1;
  for (int d = last; d-- > 0;)
    outStrides[d] = outStrides[d + 1] * dims[d + 1];
  plan.outRowStride = outStrides[rowDim];
  for (int d = 0; d < last; ++d) {
    if (d == rowDim)
      continue;
    plan.batchDims[plan.batchRank] = dims[d];
    plan.batchSrc[plan.batchRank] = strides[d];
    plan.batchOut[plan.batchRank] = outStrides[d];
    plan.batch *= dims[d];
    ++plan.batchRank;
  }
  if (plan.batch == 0) // an empty result: nothing to copy
    return false;
  plan.rowTiles = (plan.rows + kTile - 1) / kTile;
  plan.colTiles = (plan.cols + kTile - 1) / kTile;
  plan.tiles = plan.rowTiles * plan.colTiles;
  return true;
}

/// The grid of a tiled copy: x over the tiles, y over the batch, each at
/// least 1 and within its limit (the kernel loops over both).
inline void tiledGrid(const TiledCopy &plan, int64_t &x, int64_t &y) {
  x = plan.tiles < 1 ? 1 : plan.tiles > kMaxGridX ? kMaxGridX : plan.tiles;
  y = plan.batch < 1 ? 1 : plan.batch > kMaxGridY ? kMaxGridY : plan.batch;
}

/// The source and output offsets of batch index `b` (in [0, plan.batch)).
TANDEM_HOST_DEVICE inline void tiledBatchOffsets(const TiledCopy &plan,
                                                 int64_t b, int64_t &src,
                                                 int64_t &out) {
  src = out = 0;
  for (int k = plan.batchRank - 1; k >= 0; --k) {
    int64_t index = b % plan.batchDims[k];
    b /= plan.batchDims[k];
    src += index * plan.batchSrc[k];
    out += index * plan.batchOut[k];
  }
}

/// The first row and column of tile `t` (in [0, plan.tiles)).
TANDEM_HOST_DEVICE inline void tileOrigin(const TiledCopy &plan, int64_t t,
                                          int64_t &row0, int64_t &col0) {
  row0 = t / plan.colTiles * kTile;
  col0 = t % plan.colTiles * kTile;
}

/// The element of a tile (row r, column c, from its origin) that thread
/// (tx, ty) of a kTile x kTileRows block reads in step j (0, kTileRows,
/// ... below kTile): consecutive tx, consecutive rows, which the source
/// holds contiguously.
TANDEM_HOST_DEVICE inline void tiledReadAt(int tx, int ty, int j, int &r,
                                           int &c) {
  r = tx;
  c = ty + j;
}

/// The element it writes in step j: consecutive tx, consecutive columns,
/// which the output holds contiguously.
TANDEM_HOST_DEVICE inline void tiledWriteAt(int tx, int ty, int j, int &r,
                                            int &c) {
  r = ty + j;
  c = tx;
}

/// Offsets of row r, column c of the tile pair, past the batch's offsets.
TANDEM_HOST_DEVICE inline int64_t tiledSrcOffset(const TiledCopy &plan,
                                                 int64_t r, int64_t c) {
  return r * plan.srcRowStride + c * plan.srcColStride;
}
TANDEM_HOST_DEVICE inline int64_t tiledOutOffset(const TiledCopy &plan,
                                                 int64_t r, int64_t c) {
  return r * plan.outRowStride + c;
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

/// embedding_bag's max: the larger value, or the first NaN met.
TANDEM_HOST_DEVICE inline float bagMax(float best, float v) {
  return (v > best || v != v) && best == best ? v : best;
}

/// An embedding_bag result from its bag's sum or maximum and the rows it
/// took: zeros for an empty bag, the sum over the count for mean (mode 1).
TANDEM_HOST_DEVICE inline float bagResult(float acc, int64_t taken,
                                          int64_t mode) {
  return taken == 0 ? 0.0f : mode == 1 ? acc / float(taken) : acc;
}

/// The message for an embedding_bag offset out of order, as both backends
/// word it.
inline std::string bagOffsetError(int64_t position, int64_t value,
                                  int64_t previous, int64_t length) {
  return "embedding_bag: offset " + std::to_string(position) + " is " +
         std::to_string(value) +
         (position ? " after " + std::to_string(previous) : std::string()) +
         "; offsets must start at 0, never decrease and stay within the " +
         std::to_string(length) + " ids";
}

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_LAYOUT_H
