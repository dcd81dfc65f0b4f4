//===- DataMovement.cu - CUDA kernels that move or make data --------------===//
//
// The DataMovement family of OpKinds.def on the GPU: constants, fill, iota,
// cast, select, the strided copies (transpose, slice, broadcast_to,
// dynamic_slice; tiled through shared memory where a transpose moves the
// source's contiguous dimension), concat, and embedding/gather with their
// index check.
// Elements are copied as one word of their size. Transfer is not here: the
// runtime does it with toDevice/toHost (Device.cpp); nor is shape, which
// has no CUDA kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.cuh"

#include <algorithm>
#include <string>
#include <type_traits>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

/// Data movement copies whole elements as one word of their size (W is an
/// unsigned integer of 1, 2, 4 or 8 bytes; buffers are aligned to their
/// element size), not byte by byte.
template <typename F> bool withWord(int item, F launch) {
  switch (item) {
  case 1: launch(uint8_t()); return true;
  case 2: launch(uint16_t()); return true;
  case 4: launch(uint32_t()); return true;
  case 8: launch(uint64_t()); return true;
  default: return false;
  }
}

/// out[i] = src[base + Σ index·stride]; operand 0's strides in `layout`.
template <typename W>
__global__ void stridedCopy(Layout layout, int64_t n, int64_t base,
                            const W *src, W *out) {
  GRID_LOOP(i, n) {
    int64_t o[1];
    offsetsOf(layout, i, 1, o);
    out[i] = src[base + o[0]];
  }
}

/// The strided copy in tiles (Layout.h's TiledCopy): a block of kTile x
/// kTileRows threads reads each tile along the source's contiguous
/// dimension into shared memory and writes it along the output's, over the
/// grid's tiles (x) and batch indices (y). Elements narrower than 4 bytes
/// are kept as 4-byte words in shared memory and the rows padded by one, so
/// that neither step has bank conflicts.
template <typename W>
__global__ void __launch_bounds__(kTile * kTileRows)
    tiledCopy(TiledCopy plan, int64_t base, const W *src, W *out) {
  using Slot = std::conditional_t<(sizeof(W) < 4), uint32_t, W>;
  __shared__ Slot tile[kTile][kTile + 1]; // [column][row]
  const int tx = threadIdx.x, ty = threadIdx.y;
  // Every thread of a block runs the same iterations (their bounds depend
  // on the block alone), so the barriers are reached by all.
  for (int64_t b = blockIdx.y; b < plan.batch; b += gridDim.y) {
    int64_t srcBatch, outBatch;
    tiledBatchOffsets(plan, b, srcBatch, outBatch);
    const W *from = src + base + srcBatch;
    W *to = out + outBatch;
    for (int64_t t = blockIdx.x; t < plan.tiles; t += gridDim.x) {
      int64_t row0, col0;
      tileOrigin(plan, t, row0, col0);
#pragma unroll
      for (int j = 0; j < kTile; j += kTileRows) {
        int r, c;
        tiledReadAt(tx, ty, j, r, c);
        if (row0 + r < plan.rows && col0 + c < plan.cols)
          tile[c][r] = Slot(from[tiledSrcOffset(plan, row0 + r, col0 + c)]);
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kTile; j += kTileRows) {
        int r, c;
        tiledWriteAt(tx, ty, j, r, c);
        if (row0 + r < plan.rows && col0 + c < plan.cols)
          to[tiledOutOffset(plan, row0 + r, col0 + c)] = W(tile[c][r]);
      }
      __syncthreads(); // before the next tile overwrites this one
    }
  }
}

/// Operand 0 (the condition), 1 and 2's strides in `layout`.
template <typename W>
__global__ void selectKernel(Layout layout, int64_t n, const uint8_t *cond,
                             const W *a, const W *b, W *out) {
  GRID_LOOP(i, n) {
    int64_t o[3];
    offsetsOf(layout, i, 3, o);
    out[i] = cond[o[0]] ? a[o[1]] : b[o[2]];
  }
}

__device__ double loadAny(int dtype, const void *data, int64_t i) {
  switch (dtype) {
  case 0: return static_cast<const float *>(data)[i];
  case 1: return __half2float(static_cast<const __half *>(data)[i]);
  case 2: return __bfloat162float(static_cast<const __nv_bfloat16 *>(data)[i]);
  case 3: return double(static_cast<const int64_t *>(data)[i]);
  case 4: return static_cast<const int32_t *>(data)[i];
  default: return static_cast<const uint8_t *>(data)[i] != 0;
  }
}

__device__ void storeAny(int dtype, void *data, int64_t i, double v) {
  switch (dtype) {
  case 0: static_cast<float *>(data)[i] = float(v); break;
  case 1: static_cast<__half *>(data)[i] = __float2half_rn(float(v)); break;
  case 2: static_cast<__nv_bfloat16 *>(data)[i] = __float2bfloat16_rn(float(v)); break;
  case 3: static_cast<int64_t *>(data)[i] = floatToInteger<int64_t>(v); break;
  case 4: static_cast<int32_t *>(data)[i] = floatToInteger<int32_t>(v); break;
  default: static_cast<uint8_t *>(data)[i] = v != 0; break;
  }
}

__global__ void castKernel(int64_t n, int from, const void *x, int to, void *out) {
  GRID_LOOP(i, n) {
    if ((from == 3 || from == 4) && (to == 3 || to == 4)) {
      int64_t v = from == 3 ? static_cast<const int64_t *>(x)[i]
                            : static_cast<const int32_t *>(x)[i];
      if (to == 3)
        static_cast<int64_t *>(out)[i] = v;
      else
        static_cast<int32_t *>(out)[i] = int32_t(v);
    } else {
      storeAny(to, out, i, loadAny(from, x, i));
    }
  }
}

__global__ void fillKernel(int64_t n, int dtype, double value, void *out) {
  GRID_LOOP(i, n) { storeAny(dtype, out, i, value); }
}

__global__ void iotaKernel(int64_t n, int dtype, int64_t stride, int64_t size,
                           void *out) {
  GRID_LOOP(i, n) { storeAny(dtype, out, i, double((i / stride) % size)); }
}

/// Index j of `indices` as a row of a dimension of `size`, or -1 if out of
/// range. As the CPU's takeRows: a negative index counts from the end only
/// where `negativeFromEnd` (gather, not embedding).
__device__ inline int64_t rowOf(const void *indices, bool wide, int64_t j,
                                bool negativeFromEnd, int64_t size) {
  int64_t index = wide ? static_cast<const int64_t *>(indices)[j]
                       : static_cast<const int32_t *>(indices)[j];
  if (index < 0 && negativeFromEnd)
    index += size;
  return index < 0 || index >= size ? -1 : index;
}

/// Every index checked, even when there is nothing to copy (an empty row),
/// as the CPU does: the first one out of range is recorded.
__global__ void checkIndices(int64_t picks, const void *indices, bool wide,
                             bool negativeFromEnd, int64_t size,
                             unsigned long long *errorAt) {
  GRID_LOOP(j, picks) {
    if (rowOf(indices, wide, j, negativeFromEnd, size) < 0)
      atomicMin(errorAt, (unsigned long long)j);
  }
}

template <typename W>
__global__ void takeKernel(int64_t outer, int64_t size, int64_t inner,
                           int64_t picks, const W *x, const void *indices,
                           bool wide, bool negativeFromEnd, W *out) {
  GRID_LOOP(e, outer * picks * inner) {
    int64_t k = e % inner, j = (e / inner) % picks, o = e / (inner * picks);
    int64_t index = rowOf(indices, wide, j, negativeFromEnd, size);
    if (index < 0)
      continue; // checkIndices has recorded it
    out[e] = x[(o * size + index) * inner + k];
  }
}

/// Offset b of a bag list, or -1 when it breaks the rules (bags start at
/// 0 and rise to at most `length`).
__device__ inline int64_t boundOf(const void *offsets, bool wide, int64_t count,
                                  int64_t length, int64_t b) {
  if (b >= count)
    return length; // the last bag runs to the end of the ids
  int64_t at = wide ? static_cast<const int64_t *>(offsets)[b]
                    : static_cast<const int32_t *>(offsets)[b];
  int64_t before = b == 0 ? 0
                   : wide ? static_cast<const int64_t *>(offsets)[b - 1]
                          : static_cast<const int32_t *>(offsets)[b - 1];
  bool bad = (b == 0 && at != 0) || at < before || at > length;
  return bad ? -1 : at;
}

/// The first offset out of order, recorded at length + its position (the
/// ids' own errors are at their positions, below length).
__global__ void checkBagBounds(int64_t count, const void *offsets, bool wide,
                               int64_t length, unsigned long long *errorAt) {
  GRID_LOOP(b, count) {
    if (boundOf(offsets, wide, count, length, b) < 0)
      atomicMin(errorAt, (unsigned long long)(length + b));
  }
}

/// A thread per result element: its bag's rows, summed (times their
/// weights), averaged or maximized (NaN wins) in f32; padding rows left out.
template <typename T>
__global__ void embeddingBagKernel(int64_t bags, int64_t width, int64_t rows,
                                   int64_t length, const T *table,
                                   const void *ids, bool wideIds,
                                   const void *offsets, bool wideOffsets,
                                   int64_t count, const T *weights,
                                   img::EmbeddingBagAttrs a, T *out) {
  GRID_LOOP(e, bags * width) {
    int64_t b = e / width, d = e % width;
    int64_t begin = boundOf(offsets, wideOffsets, count, length, b);
    int64_t end = boundOf(offsets, wideOffsets, count, length, b + 1);
    if (begin < 0 || end < 0)
      continue; // checkBagBounds has recorded it
    float acc = a.mode == 2 ? -INFINITY : 0.0f;
    int64_t taken = 0;
    for (int64_t i = begin; i < end; ++i) {
      int64_t id = rowOf(ids, wideIds, i, false, rows);
      if (id < 0 || id == a.paddingIdx)
        continue; // an id out of range: checkIndices has recorded it
      ++taken;
      float v = toFloat(table[id * width + d]);
      acc = a.mode == 2 ? bagMax(acc, v) : acc + (weights ? v * toFloat(weights[i]) : v);
    }
    out[e] = fromFloat<T>(bagResult(acc, taken, a.mode));
  }
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// The result's bytes are the attribute words.
bool runConstant(const KernelCall &call) {
  // (From pageable memory: the call returns once the words are staged.)
  return check(cudaMemcpyAsync(call.out.data, call.attrs.data(),
                               call.n * call.item, cudaMemcpyHostToDevice,
                               call.stream()),
               "constant upload", call.error);
}

bool runFill(const KernelCall &call) {
  const TensorView &out = call.out;
  auto attrs = img::readAttrs<img::FillAttrs>(call.attrs);
  fillKernel<<<call.grid, call.block, 0, call.stream()>>>(call.n, int(out.dtype), attrs.value,
                                        out.data);
  return launched(call.error);
}

bool runIota(const KernelCall &call) {
  const TensorView &out = call.out;
  int64_t axis = img::readAttrs<img::AxisAttrs>(call.attrs).axis;
  std::vector<int64_t> strides = rowMajorStrides(out.shape);
  iotaKernel<<<call.grid, call.block, 0, call.stream()>>>(call.n, int(out.dtype), strides[axis],
                                        out.shape[axis], out.data);
  return launched(call.error);
}

bool runCast(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  castKernel<<<call.grid, call.block, 0, call.stream()>>>(call.n, int(ops[0].dtype), ops[0].data,
                                        int(out.dtype), out.data);
  return launched(call.error);
}

bool runSelect(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  Layout layout = layoutOf(out.shape, {broadcastStrides(ops[0].shape, out.shape),
                                       broadcastStrides(ops[1].shape, out.shape),
                                       broadcastStrides(ops[2].shape, out.shape)});
  if (!withWord(call.item, [&](auto w) {
        using W = decltype(w);
        selectKernel<W><<<call.grid, call.block, 0, call.stream()>>>(layout, call.n,
            static_cast<const uint8_t *>(ops[0].data),
            static_cast<const W *>(ops[1].data),
            static_cast<const W *>(ops[2].data), static_cast<W *>(out.data));
      }))
    return call.unsupported();
  return launched(call.error);
}

/// Transpose (the permutation in the words), slice (starts, then strides),
/// broadcast_to, dynamic_slice (its offsets are a host operand): a copy of
/// operand 0 through strides, tiled where that moves the source's
/// contiguous dimension (launchStridedCopy).
bool runStrided(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  const std::vector<int64_t> &a = call.attrs;
  std::vector<int64_t> in = rowMajorStrides(ops[0].shape), strides;
  int64_t base = 0;
  size_t rank = out.shape.size();
  if (call.kind == img::kTranspose) {
    for (int64_t p : a)
      strides.push_back(in[p]);
  } else if (call.kind == img::kSlice) {
    for (size_t d = 0; d < rank; ++d) {
      base += a[d] * in[d];
      strides.push_back(a[rank + d] * in[d]);
    }
  } else if (call.kind == img::kBroadcastTo) {
    strides = broadcastStrides(ops[0].shape, out.shape);
  } else { // dynamic_slice: its offsets are a host operand
    const int64_t *offsets = static_cast<const int64_t *>(ops[1].data);
    for (size_t d = 0; d < rank; ++d)
      base += std::clamp<int64_t>(offsets[d], 0,
                                  ops[0].shape[d] - out.shape[d]) * in[d];
    strides = in;
  }
  if (!launchStridedCopy(call.grid, call.block, call.stream(), layoutOf(out.shape, {strides}),
                         call.n, base, static_cast<const uint8_t *>(ops[0].data),
                         static_cast<uint8_t *>(out.data), call.item))
    return call.unsupported();
  return launched(call.error);
}

/// One 2-D copy per input: its rows of (part × inner) elements into the
/// result's rows of (size × inner). cudaMemcpy2D takes pitches below 2^31
/// bytes; rows longer than that (a concat of tensors over 2 GiB) are
/// copied one by one, and a single row in one copy.
bool runConcat(const KernelCall &call) {
  const TensorView &out = call.out;
  int64_t axis = img::readAttrs<img::AxisAttrs>(call.attrs).axis;
  int64_t item = call.item;
  int64_t outer, size, inner;
  splitAt(out.shape, axis, outer, size, inner);
  constexpr int64_t kMaxPitch = 2147483647;
  int64_t offset = 0;
  for (const TensorView &input : call.ops) {
    int64_t part = input.shape[axis];
    int64_t width = part * inner * item, pitch = size * inner * item;
    uint8_t *dst = static_cast<uint8_t *>(out.data) + offset * inner * item;
    const uint8_t *src = static_cast<const uint8_t *>(input.data);
    offset += part;
    if (width == 0 || outer == 0)
      continue;
    if (outer == 1 || pitch > kMaxPitch) {
      for (int64_t row = 0; row < outer; ++row)
        if (!check(cudaMemcpyAsync(dst + row * pitch, src + row * width,
                                   size_t(width), cudaMemcpyDeviceToDevice,
                                   call.stream()),
                   "concat copy", call.error))
          return false;
      continue;
    }
    if (!check(cudaMemcpy2DAsync(dst, size_t(pitch), src, size_t(width),
                                 size_t(width), size_t(outer),
                                 cudaMemcpyDeviceToDevice, call.stream()),
               "concat copy", call.error))
      return false;
  }
  return true;
}

/// Element `position` of an i64 or i32 tensor on the device, read back for
/// an error message (the stream has been waited for).
bool integerToHost(const KernelCall &call, const TensorView &t, int64_t position,
                   int64_t &value) {
  if (t.dtype == DType::I64)
    return toHost(&call.device, &value,
                  static_cast<const int64_t *>(t.data) + position, sizeof(value),
                  call.error);
  int32_t narrow = 0;
  if (!toHost(&call.device, &narrow, static_cast<const int32_t *>(t.data) + position,
              sizeof(narrow), call.error))
    return false;
  value = narrow;
  return true;
}

/// Embedding takes rows (axis 0) of operand 0, gather along its axis; an
/// index out of range fails the op.
bool runTake(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  int64_t kind = call.kind;
  int64_t axis =
      kind == img::kEmbedding ? 0 : img::readAttrs<img::AxisAttrs>(call.attrs).axis;
  int64_t outer, size, inner;
  splitAt(ops[0].shape, axis, outer, size, inner);
  int64_t picks = countOf(ops[1].shape);
  if (!call.resetErrorAt())
    return false;
  bool wide = ops[1].dtype == DType::I64;
  checkIndices<<<blocksFor(picks), call.block, 0, call.stream()>>>(picks, ops[1].data, wide,
      kind == img::kGather, size, call.device.errorAt);
  if (!withWord(call.item, [&](auto w) {
        using W = decltype(w);
        takeKernel<W><<<call.grid, call.block, 0, call.stream()>>>(outer, size, inner, picks,
            static_cast<const W *>(ops[0].data), ops[1].data, wide,
            kind == img::kGather, static_cast<W *>(call.out.data));
      }))
    return call.unsupported();
  int64_t first = -1;
  if (!launched(call.error) || !call.readErrorAt(first))
    return false;
  if (first < 0)
    return true;
  // The first index out of range, named as the CPU names it.
  int64_t given = 0;
  if (!integerToHost(call, ops[1], first, given))
    return false;
  call.error = std::string(kind == img::kGather ? "gather" : "embedding") +
               ": index " + std::to_string(given) + " is out of range " +
               (kind == img::kGather ? "[-" + std::to_string(size) + ", "
                                     : std::string("[0, ")) +
               std::to_string(size) + ")";
  return false;
}

/// Bags of table rows: ids and offsets checked as the CPU checks them.
bool runEmbeddingBag(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  auto a = img::readAttrs<img::EmbeddingBagAttrs>(call.attrs);
  int64_t rows = ops[0].shape[0], width = ops[0].shape[1];
  int64_t length = ops[1].shape[0], count = ops[2].shape[0];
  int64_t bags = call.out.shape[0];
  bool wideIds = ops[1].dtype == DType::I64;
  bool wideOffsets = ops[2].dtype == DType::I64;
  if (!call.resetErrorAt())
    return false;
  checkIndices<<<blocksFor(length), call.block, 0, call.stream()>>>(
      length, ops[1].data, wideIds, false, rows, call.device.errorAt);
  checkBagBounds<<<blocksFor(count), call.block, 0, call.stream()>>>(
      count, ops[2].data, wideOffsets, length, call.device.errorAt);
  if (!withFloat(call.out.dtype, [&](auto t) {
        using T = decltype(t);
        embeddingBagKernel<T><<<call.grid, call.block, 0, call.stream()>>>(
            bags, width, rows, length, static_cast<const T *>(ops[0].data),
            ops[1].data, wideIds, ops[2].data, wideOffsets, count,
            a.hasWeights ? static_cast<const T *>(ops[3].data) : nullptr, a,
            static_cast<T *>(call.out.data));
      }))
    return call.unsupported();
  int64_t first = -1;
  if (!launched(call.error) || !call.readErrorAt(first))
    return false;
  if (first < 0)
    return true;
  // The first bad id or offset, named as the CPU names it.
  bool isId = first < length;
  const TensorView &where = isId ? ops[1] : ops[2];
  int64_t position = isId ? first : first - length;
  int64_t given = 0;
  if (!integerToHost(call, where, position, given))
    return false;
  if (isId) {
    call.error = "embedding_bag: id " + std::to_string(given) +
                 " is out of range [0, " + std::to_string(rows) + ")";
    return false;
  }
  int64_t previous = 0;
  if (position > 0 && !integerToHost(call, where, position - 1, previous))
    return false;
  call.error = bagOffsetError(position, given, previous, length);
  return false;
}

} // namespace

bool cuda::launchStridedCopy(dim3 grid, dim3 block, cudaStream_t stream,
                             const Layout &layout,
                             int64_t n, int64_t base, const uint8_t *src,
                             uint8_t *out, int item) {
  static_assert(kMaxRank <= kTiledMaxRank, "a layout the tiled copy cannot take");
  // Tiled where the source's contiguous dimension is not the output's last
  // (a transpose that moves it): both read and write coalesced. Otherwise
  // a thread per element, whose reads are then coalesced already (or a
  // broadcast, strided by a slice's steps, or a tile pair with a side under
  // kMinTiledSide).
  TiledCopy plan;
  bool tiled = planTiledCopy(layout.rank, layout.dims, layout.strides[0], plan);
  int64_t x = 1, y = 1;
  if (tiled)
    tiledGrid(plan, x, y);
  return withWord(item, [&](auto w) {
    using W = decltype(w);
    if (tiled)
      tiledCopy<W><<<dim3(unsigned(x), unsigned(y)), dim3(kTile, kTileRows), 0,
                     stream>>>(plan, base, reinterpret_cast<const W *>(src),
                               reinterpret_cast<W *>(out));
    else
      stridedCopy<W><<<grid, block, 0, stream>>>(layout, n, base,
                                                 reinterpret_cast<const W *>(src),
                                                 reinterpret_cast<W *>(out));
  });
}

void cuda::registerDataMovementKernels(CudaKernelTable &table) {
  // Transfer: the runtime copies with toDevice/toHost instead. Shape: none.
  table.add(img::kConstant, runConstant);
  table.add(img::kFill, runFill);
  table.add(img::kIota, runIota);
  table.add(img::kCast, runCast);
  table.add(img::kSelect, runSelect);
  for (img::OpKind kind : {img::kTranspose, img::kSlice, img::kBroadcastTo,
                           img::kDynamicSlice})
    table.add(kind, runStrided);
  table.add(img::kConcat, runConcat);
  table.add(img::kEmbedding, runTake);
  table.add(img::kGather, runTake);
  table.add(img::kEmbeddingBag, runEmbeddingBag);
}
