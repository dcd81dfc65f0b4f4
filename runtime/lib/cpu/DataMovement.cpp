//===- DataMovement.cpp - the CPU's data movement kernels -----------------===//
//
// The DataMovement family of OpKinds.def: ops that copy, pick or make
// elements without arithmetic (transfers, cast, select, transpose, concat,
// slices, broadcasts, gathers, constants). They run on any element type as
// it is stored (f16 and bf16 are not widened): most copy bytes of the
// element's size.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

/// Eight rows of eight 4-byte elements, `from` rows `fromStep` apart, into
/// eight columns of `to`, rows `toStep` apart: the unpacks, shuffles and
/// lane swaps of an AVX 8 x 8 transpose, in GCC's vector types (bits moved,
/// never computed).
TANDEM_VECTOR_CLONES
void transposeBlock8(const uint32_t *from, int64_t fromStep, uint32_t *to,
                     int64_t toStep) {
  Floats8 r[8], t[8], u[8];
  for (int k = 0; k < 8; ++k)
    std::memcpy(&r[k], from + k * fromStep, sizeof(Floats8));
  for (int k = 0; k < 8; k += 2) {
    t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[k + 1] =
        __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int k = 0; k < 8; k += 4)
    for (int h = 0; h < 2; ++h) {
      u[k + 2 * h] = __builtin_shufflevector(t[k + h], t[k + h + 2], 0, 1, 8,
                                             9, 4, 5, 12, 13);
      u[k + 2 * h + 1] = __builtin_shufflevector(t[k + h], t[k + h + 2], 2, 3,
                                                 10, 11, 6, 7, 14, 15);
    }
  for (int k = 0; k < 4; ++k) {
    Floats8 low = __builtin_shufflevector(u[k], u[k + 4], 0, 1, 2, 3, 8, 9,
                                          10, 11);
    Floats8 high = __builtin_shufflevector(u[k], u[k + 4], 4, 5, 6, 7, 12, 13,
                                           14, 15);
    std::memcpy(to + k * toStep, &low, sizeof(Floats8));
    std::memcpy(to + (k + 4) * toStep, &high, sizeof(Floats8));
  }
}

/// copyStrided where the output's last dimension steps through the source
/// (a stride above 1) and another dimension is contiguous there (a swap of
/// the last two axes, NHWC to NCHW): in tiles of kTile x kTile elements,
/// each read from kTile source rows and written to kTile output rows, all
/// of them in L1; 4-byte elements eight by eight through vector shuffles
/// (transposeBlock8). (One element at a time down the source, attention's
/// 8 x 4 x 64 x 64 scores swapped their last two axes in 34-42 us.) False
/// where the layout is not such a swap.
template <typename T>
bool copySwappedTiles(const T *in, T *z, std::vector<int64_t> shape,
                      std::vector<int64_t> sourceStrides) {
  constexpr int64_t kTile = 16;
  if (countOf(shape) == 0) // (coalesce keeps empty axes: no tiles to count)
    return false;
  std::vector<int64_t> strides[1] = {std::move(sourceStrides)};
  coalesce(shape, strides);
  const std::vector<int64_t> &source = strides[0];
  int64_t rank = int64_t(shape.size());
  if (rank < 2 || source.back() <= 1)
    return false;
  int64_t swapped = -1; // the output dimension contiguous in the source
  for (int64_t d = rank - 2; d >= 0 && swapped < 0; --d)
    if (source[d] == 1)
      swapped = d;
  if (swapped < 0)
    return false;
  std::vector<int64_t> outStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    outStrides[d] = outStrides[d + 1] * shape[d + 1];
  int64_t rows = shape[swapped], cols = shape.back(), step = source.back();
  int64_t outerCount = int64_t(countOf(shape)) / (rows * cols);
  int64_t rowTiles = (rows + kTile - 1) / kTile;
  parallelFor(outerCount * rowTiles, 2 * kTile * cols,
              [&](int64_t first, int64_t last) {
    for (int64_t task = first; task < last; ++task) {
      // The other dimensions' offsets, innermost first.
      int64_t outer = task / rowTiles, inBase = 0, outBase = 0;
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (d == swapped)
          continue;
        int64_t index = outer % shape[d];
        outer /= shape[d];
        inBase += index * source[d];
        outBase += index * outStrides[d];
      }
      int64_t i0 = task % rowTiles * kTile, i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        int64_t j1 = std::min(cols, j0 + kTile);
        if constexpr (sizeof(T) == 4) {
          if (i1 - i0 == kTile && j1 - j0 == kTile) {
            for (int64_t i = i0; i < i1; i += 8)
              for (int64_t j = j0; j < j1; j += 8)
                transposeBlock8(in + inBase + i + j * step, step,
                                z + outBase + i * outStrides[swapped] + j,
                                outStrides[swapped]);
            continue;
          }
        }
        for (int64_t i = i0; i < i1; ++i) {
          const T *src = in + inBase + i;
          T *dst = z + outBase + i * outStrides[swapped];
          for (int64_t j = j0; j < j1; ++j)
            dst[j] = src[j * step];
        }
      }
    }
  });
  return true;
}

/// Copies the elements `x` holds at `sourceStrides` (from element `base`)
/// into the dense `out`, a contiguous row at a time where the source allows,
/// in tiles where the source holds the output's columns (copySwappedTiles).
void copyStrided(const TensorView &x, const TensorView &out,
                 const std::vector<int64_t> &sourceStrides, int64_t base = 0) {
  bool tiled = false;
  withElementWord(out.dtype, [&](auto word) {
    using T = decltype(word);
    tiled = copySwappedTiles(static_cast<const T *>(x.data) + base,
                             static_cast<T *>(out.data), out.shape,
                             sourceStrides);
  });
  if (tiled)
    return;
  size_t item = dtypeSize(out.dtype);
  const uint8_t *in = static_cast<const uint8_t *>(x.data) + base * item;
  uint8_t *z = static_cast<uint8_t *>(out.data);
  std::vector<int64_t> strides[1] = {sourceStrides};
  forEachRow(out.shape, strides, 1,
             [&](int64_t o, const int64_t *start, int64_t length,
                 const int64_t *step) {
               const uint8_t *src = in + start[0] * item;
               uint8_t *dst = z + o * item;
               if (step[0] == 1) {
                 std::memcpy(dst, src, length * item);
               } else if (item == 4) {
                 for (int64_t j = 0; j < length; ++j)
                   std::memcpy(dst + 4 * j, src + 4 * j * step[0], 4);
               } else {
                 for (int64_t j = 0; j < length; ++j)
                   std::memcpy(dst + j * item, src + j * step[0] * item, item);
               }
             });
}

void transpose(const TensorView &x, const TensorView &out,
               const std::vector<int64_t> &perm) {
  std::vector<int64_t> inStrides = rowMajorStrides(x.shape), strides;
  for (int64_t p : perm)
    strides.push_back(inStrides[p]);
  copyStrided(x, out, strides);
}

void concat(const std::vector<TensorView> &inputs, const TensorView &out,
            int64_t axis) {
  int64_t outer, size, inner;
  splitAt(out.shape, axis, outer, size, inner);
  size_t item = dtypeSize(out.dtype);
  uint8_t *z = static_cast<uint8_t *>(out.data);
  int64_t offset = 0;
  for (const TensorView &input : inputs) {
    int64_t part = input.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(z + (o * size + offset) * inner * item,
                  static_cast<const uint8_t *>(input.data) +
                      o * part * inner * item,
                  part * inner * item);
    offset += part;
  }
}

/// Element k of an integer tensor (i64 or i32).
int64_t integerAt(const TensorView &t, uint64_t k) {
  return t.dtype == DType::I64 ? static_cast<const int64_t *>(t.data)[k]
                               : static_cast<const int32_t *>(t.data)[k];
}

/// Slices of `x` along `axis` picked by `indices`. A negative index counts
/// from the end where `negativeFromEnd` (numpy.take) and is an error
/// otherwise (torch.nn.functional.embedding).
bool takeRows(const TensorView &x, const TensorView &indices,
              const TensorView &out, int64_t axis, bool negativeFromEnd,
              std::string &error) {
  int64_t outer, size, inner;
  splitAt(x.shape, axis, outer, size, inner);
  uint64_t picks = countOf(indices.shape);
  size_t item = dtypeSize(out.dtype);
  const uint8_t *in = static_cast<const uint8_t *>(x.data);
  uint8_t *z = static_cast<uint8_t *>(out.data);
  for (uint64_t j = 0; j < picks; ++j) {
    int64_t index = integerAt(indices, j);
    int64_t given = index;
    if (index < 0 && negativeFromEnd)
      index += size;
    if (index < 0 || index >= size) {
      error = "index " + std::to_string(given) + " is out of range " +
              (negativeFromEnd ? "[-" + std::to_string(size) + ", "
                               : std::string("[0, ")) +
              std::to_string(size) + ")";
      return false;
    }
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(z + ((o * picks + j) * inner) * item,
                  in + ((o * size + index) * inner) * item, inner * item);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The kernels
//===----------------------------------------------------------------------===//

bool transferKernel(int64_t, const std::vector<TensorView> &ops,
                    const TensorView &out, const std::vector<int64_t> &,
                    std::string &) {
  std::memcpy(out.data, ops[0].data, countOf(out.shape) * dtypeSize(out.dtype));
  return true;
}

/// One element of a cast from the type stored as From to the one stored as
/// To: integers keep all their bits; other values go through a double, as
/// storeDouble takes them (integers saturate; a bool is value != 0, and
/// reads as 0 or 1).
template <typename From, typename To, bool FromBool, bool ToBool>
inline To castElement(From v) {
  if constexpr (FromBool)
    return castElement<int32_t, To, false, ToBool>(v != 0);
  else if constexpr (ToBool)
    return To(v != From(0));
  else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>)
    return To(int64_t(v));
  else if constexpr (std::is_integral_v<To>)
    return floatToInteger<To>(double(v));
  else
    return To(double(v));
}

/// The cast's loop with both types fixed, in parallel chunks.
template <typename From, typename To, bool FromBool = false,
          bool ToBool = false>
void castAll(const void *in, void *out, uint64_t n) {
  const From *x = static_cast<const From *>(in);
  To *z = static_cast<To *>(out);
  parallelFor(int64_t(n), 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      z[i] = castElement<From, To, FromBool, ToBool>(x[i]);
  });
}

/// castAll from `From` to `to` where `to` is f32, i64, i32 or bool; false
/// for another type.
template <typename From, bool FromBool = false>
bool castFrom(const void *in, DType to, void *out, uint64_t n) {
  switch (to) {
  case DType::F32: castAll<From, float, FromBool>(in, out, n); return true;
  case DType::I64: castAll<From, int64_t, FromBool>(in, out, n); return true;
  case DType::I32: castAll<From, int32_t, FromBool>(in, out, n); return true;
  case DType::Bool:
    castAll<From, uint8_t, FromBool, true>(in, out, n);
    return true;
  default: return false;
  }
}

bool castKernel(int64_t, const std::vector<TensorView> &ops,
                const TensorView &out, const std::vector<int64_t> &,
                std::string &) {
  const TensorView &x = ops[0];
  uint64_t n = countOf(out.shape);
  // The common types with the element types fixed at compile time (a
  // generic element costs two switches and two calls: 5-15x the time a
  // model's small casts were priced at); f16 and bf16 the generic way.
  bool typed = false;
  switch (x.dtype) {
  case DType::F32: typed = castFrom<float>(x.data, out.dtype, out.data, n); break;
  case DType::I64: typed = castFrom<int64_t>(x.data, out.dtype, out.data, n); break;
  case DType::I32: typed = castFrom<int32_t>(x.data, out.dtype, out.data, n); break;
  case DType::Bool: typed = castFrom<uint8_t, true>(x.data, out.dtype, out.data, n); break;
  default: break;
  }
  if (typed)
    return true;
  for (uint64_t i = 0; i < n; ++i)
    storeDouble(out.dtype, out.data, i, loadDouble(x.dtype, x.data, i));
  return true;
}

bool fillKernel(int64_t, const std::vector<TensorView> &,
                const TensorView &out, const std::vector<int64_t> &attrs,
                std::string &error) {
  double value = img::readAttrs<img::FillAttrs>(attrs).value;
  uint64_t n = countOf(out.shape);
  // The element converted once, then copied as a whole word (storeDouble
  // per element cost a switch and a call each).
  uint64_t word = 0;
  storeDouble(out.dtype, &word, 0, value);
  return withElementWord(out.dtype,
                         [&](auto element) {
                           std::memcpy(&element, &word, sizeof(element));
                           std::fill_n(static_cast<decltype(element) *>(out.data),
                                       n, element);
                         }) ||
         unsupported(out.dtype, error);
}

bool iotaKernel(int64_t, const std::vector<TensorView> &,
                const TensorView &out, const std::vector<int64_t> &attrs,
                std::string &) {
  int64_t axis = img::readAttrs<img::AxisAttrs>(attrs).axis;
  std::vector<int64_t> strides = rowMajorStrides(out.shape);
  uint64_t n = countOf(out.shape);
  for (uint64_t i = 0; i < n; ++i)
    storeDouble(out.dtype, out.data, i,
                double((i / strides[axis]) % out.shape[axis]));
  return true;
}

/// ListAttrs: the result's bytes, 8 to a word.
bool constantKernel(int64_t, const std::vector<TensorView> &,
                    const TensorView &out, const std::vector<int64_t> &bytes,
                    std::string &) {
  std::memcpy(out.data, bytes.data(),
              countOf(out.shape) * dtypeSize(out.dtype));
  return true;
}

bool shapeKernel(int64_t, const std::vector<TensorView> &ops,
                 const TensorView &out, const std::vector<int64_t> &,
                 std::string &) {
  for (size_t d = 0; d < ops[0].shape.size(); ++d)
    static_cast<int64_t *>(out.data)[d] = ops[0].shape[d];
  return true;
}

bool selectKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &,
                  std::string &error) {
  std::vector<int64_t> strides[3] = {broadcastStrides(ops[0].shape, out.shape),
                                     broadcastStrides(ops[1].shape, out.shape),
                                     broadcastStrides(ops[2].shape, out.shape)};
  const uint8_t *cond = static_cast<const uint8_t *>(ops[0].data);
  // Elements copied as whole words; both values loaded, then one chosen: a
  // select the compiler vectorizes.
  return withElementWord(out.dtype,
                         [&](auto element) {
                           using Word = decltype(element);
                           const Word *a = static_cast<const Word *>(ops[1].data);
                           const Word *b = static_cast<const Word *>(ops[2].data);
                           Word *c = static_cast<Word *>(out.data);
                           forEachElement(out.shape, strides, 1,
                                          [a, b, c, cond](uint64_t i,
                                                          const int64_t *o) {
                                            Word ifTrue = a[o[1]], ifFalse = b[o[2]];
                                            c[i] = cond[o[0]] ? ifTrue : ifFalse;
                                          });
                         }) ||
         unsupported(out.dtype, error);
}

/// ListAttrs: the permutation.
bool transposeKernel(int64_t, const std::vector<TensorView> &ops,
                     const TensorView &out, const std::vector<int64_t> &perm,
                     std::string &) {
  transpose(ops[0], out, perm);
  return true;
}

bool concatKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &) {
  concat(ops, out, img::readAttrs<img::AxisAttrs>(attrs).axis);
  return true;
}

/// ListAttrs: the start of each dimension, then its stride.
bool sliceKernel(int64_t, const std::vector<TensorView> &ops,
                 const TensorView &out, const std::vector<int64_t> &a,
                 std::string &) {
  size_t rank = out.shape.size();
  std::vector<int64_t> inStrides = rowMajorStrides(ops[0].shape), strides;
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    base += a[d] * inStrides[d];
    strides.push_back(a[rank + d] * inStrides[d]);
  }
  copyStrided(ops[0], out, strides, base);
  return true;
}

bool broadcastToKernel(int64_t, const std::vector<TensorView> &ops,
                       const TensorView &out, const std::vector<int64_t> &,
                       std::string &) {
  copyStrided(ops[0], out, broadcastStrides(ops[0].shape, out.shape));
  return true;
}

bool embeddingKernel(int64_t, const std::vector<TensorView> &ops,
                     const TensorView &out, const std::vector<int64_t> &,
                     std::string &error) {
  if (!takeRows(ops[0], ops[1], out, 0, /*negativeFromEnd=*/false, error)) {
    error = "embedding: " + error;
    return false;
  }
  return true;
}

bool gatherKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &error) {
  int64_t axis = img::readAttrs<img::AxisAttrs>(attrs).axis;
  if (!takeRows(ops[0], ops[1], out, axis, /*negativeFromEnd=*/true, error)) {
    error = "gather: " + error;
    return false;
  }
  return true;
}

/// The bags' bounds, `bags` + 1 of them (the last: the end of the ids, or
/// the last offset), or an error naming the first offset out of order.
bool bagBounds(const TensorView &offsets, int64_t length, int64_t bags,
               bool includeLast, std::vector<int64_t> &bounds,
               std::string &error) {
  bounds.assign(size_t(bags) + 1, length);
  for (int64_t b = 0; b < bags + (includeLast ? 1 : 0); ++b)
    bounds[b] = integerAt(offsets, b);
  for (int64_t b = 0; b <= bags; ++b) {
    int64_t previous = b ? bounds[b - 1] : 0;
    if ((b == 0 && bags && bounds[0] != 0) || bounds[b] < previous ||
        bounds[b] > length) {
      error = bagOffsetError(b, bounds[b], previous, length);
      return false;
    }
  }
  return true;
}

/// Adds `width` floats of `row` into `acc` (times `scale` where the bag has
/// weights), or keeps the larger (`max`), the same operations in the same
/// order as the generic loop, one loop per case so each vectorizes.
void accumulateRow(const float *row, int64_t width, bool max, bool weighted,
                   float scale, float *acc) {
  if (max)
    for (int64_t d = 0; d < width; ++d)
      acc[d] = bagMax(acc[d], row[d]);
  else if (weighted)
    for (int64_t d = 0; d < width; ++d)
      acc[d] = acc[d] + row[d] * scale;
  else
    for (int64_t d = 0; d < width; ++d)
      acc[d] = acc[d] + row[d];
}

/// One bag per task: its rows summed (times their weights), averaged or
/// maximized in f32 (f16/bf16 tables are read and written element by
/// element, never widened whole). `padding` rows are left out.
bool embeddingBagKernel(int64_t, const std::vector<TensorView> &ops,
                        const TensorView &out, const std::vector<int64_t> &attrs,
                        std::string &error) {
  auto a = img::readAttrs<img::EmbeddingBagAttrs>(attrs);
  const TensorView &table = ops[0], &ids = ops[1];
  int64_t rows = table.shape[0], width = table.shape[1];
  int64_t length = ids.shape[0], bags = out.shape[0];
  for (int64_t i = 0; i < length; ++i) {
    int64_t id = integerAt(ids, i);
    if (id < 0 || id >= rows) {
      error = "embedding_bag: id " + std::to_string(id) + " is out of range [0, " +
              std::to_string(rows) + ")";
      return false;
    }
  }
  std::vector<int64_t> bounds;
  if (!bagBounds(ops[2], length, bags, a.includeLastOffset, bounds, error))
    return false;
  const TensorView *weights = a.hasWeights ? &ops[3] : nullptr;
  auto load = [](const TensorView &t, uint64_t k) -> float {
    return t.dtype == DType::F32 ? static_cast<const float *>(t.data)[k]
                                 : float(loadDouble(t.dtype, t.data, k));
  };
  // An f32 table's rows go through loops the compiler vectorizes (the
  // generic loop's load by dtype, mode and weights per element cost 2.9 ns
  // an element: a bag of 16384 lookups of 32 floats took 1.5 ms).
  const float *f32Table = table.dtype == DType::F32
                              ? static_cast<const float *>(table.data)
                              : nullptr;
  parallelFor(bags, 2 * width * (bags ? length / bags + 1 : 1),
              [&](int64_t first, int64_t last) {
    std::vector<float> acc(static_cast<size_t>(width));
    for (int64_t b = first; b < last; ++b) {
      int64_t count = 0;
      std::fill(acc.begin(), acc.end(), a.mode == 2 ? -INFINITY : 0.0f);
      for (int64_t i = bounds[b]; i < bounds[b + 1]; ++i) {
        int64_t id = integerAt(ids, i);
        if (id == a.paddingIdx)
          continue;
        ++count;
        float scale = weights ? load(*weights, i) : 1.0f;
        uint64_t row = uint64_t(id) * width;
        if (f32Table)
          accumulateRow(f32Table + row, width, a.mode == 2, weights, scale,
                        acc.data());
        else
          for (int64_t d = 0; d < width; ++d) {
            float v = load(table, row + d);
            acc[d] = a.mode == 2 ? bagMax(acc[d], v)
                                 : acc[d] + (weights ? v * scale : v);
          }
      }
      for (int64_t d = 0; d < width; ++d) {
        float v = bagResult(acc[d], count, a.mode);
        uint64_t k = uint64_t(b) * width + d;
        if (out.dtype == DType::F32)
          static_cast<float *>(out.data)[k] = v;
        else
          storeDouble(out.dtype, out.data, k, v);
      }
    }
  });
  return true;
}

bool dynamicSliceKernel(int64_t, const std::vector<TensorView> &ops,
                        const TensorView &out, const std::vector<int64_t> &,
                        std::string &) {
  // Offsets are clamped to [0, dim - size], as XLA does.
  const int64_t *offsets = static_cast<const int64_t *>(ops[1].data);
  std::vector<int64_t> inStrides = rowMajorStrides(ops[0].shape);
  int64_t base = 0;
  for (size_t d = 0; d < out.shape.size(); ++d) {
    int64_t start =
        std::clamp<int64_t>(offsets[d], 0, ops[0].shape[d] - out.shape[d]);
    base += start * inStrides[d];
  }
  copyStrided(ops[0], out, inStrides, base);
  return true;
}

} // namespace

void cpu::registerDataMovementKernels(CpuKernelTable &table) {
  table[img::kTransfer] = transferKernel;
  table[img::kFill] = fillKernel;
  table[img::kSelect] = selectKernel;
  table[img::kCast] = castKernel;
  table[img::kIota] = iotaKernel;
  table[img::kTranspose] = transposeKernel;
  table[img::kConcat] = concatKernel;
  table[img::kSlice] = sliceKernel;
  table[img::kBroadcastTo] = broadcastToKernel;
  table[img::kEmbedding] = embeddingKernel;
  table[img::kGather] = gatherKernel;
  table[img::kEmbeddingBag] = embeddingBagKernel;
  table[img::kDynamicSlice] = dynamicSliceKernel;
  table[img::kShape] = shapeKernel;
  table[img::kConstant] = constantKernel;
}
