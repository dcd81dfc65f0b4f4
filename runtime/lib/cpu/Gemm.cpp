//===- Gemm.cpp - the CPU's matrix products -------------------------------===//
//
// The Gemm family of OpKinds.def: batched matmul (batch dimensions
// broadcast) and linear, as OpenBLAS SGEMMs on f32. The runtime's pool
// splits each product into blocks and OpenBLAS runs single-threaded on each
// (see parallelSgemm): a fused group's epilogue then runs on a block right
// after it is written, on the same core, and no second pool of BLAS threads
// spins against the runtime's.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"
#include "tandem/runtime/BlasCore.h"
#include "tandem/runtime/CpuKernelPaths.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

/// Blocks are multiples of this many rows or columns (OpenBLAS's AVX-512
/// SGEMM kernel works on 16-wide tiles).
constexpr int64_t kBlockMultiple = 16;

/// A product at most this deep is shallow: its output's bytes, not its
/// multiply-adds, set its time (see parallelSgemm's choice of blocks).
constexpr int64_t kShallowDepth = 64;

/// Skinny products, at most this many rows or columns wide (a few rows
/// through a linear, a convolution over a few pixels), run in blocks of
/// about kSkinnyBlockMacs multiply-adds along their long side where the BLAS
/// has small-matrix kernels (BlasCore.h): OpenBLAS multiplies such blocks
/// without packing, where one call over the whole product packs the large
/// operand for a few columns of work. One core, OpenBLAS 0.3.21's
/// Cooperlake kernels, an AMD EPYC: a 1 x 1024 x 1024 linear 807 -> 88 us,
/// 4 x 1024 x 1024 833 -> 135 us, a 512 x 8 x 4608 product 1611 -> 1009 us.
/// Not where the narrow operand is large, read unpacked by every block
/// (256 x 32 x 2304: 507 -> 724 us), nor where the product is wide (128 x
/// 256 x 256: no faster). On an Intel Xeon (AVX-512, two cores) products
/// 32 wide ran 5-12% slower in blocks (512 x 32 x 1152 linear: 204 -> 230
/// us), 16 wide 6% faster, 4 wide 2.4x faster.
constexpr int64_t kSkinnyOperandBytes = int64_t(192) << 10;
constexpr int64_t kSkinnyBlockMacs = int64_t(1) << 18;

/// The offsets of batch element `i` (row-major over `batch`) in each
/// operand, whose batch strides are `strides`.
void batchOffsets(const std::vector<int64_t> &batch,
                  const std::vector<int64_t> (&strides)[2], int64_t i,
                  int64_t (&offsets)[2]) {
  offsets[0] = offsets[1] = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    int64_t index = i % batch[d];
    i /= batch[d];
    offsets[0] += index * strides[0][d];
    offsets[1] += index * strides[1][d];
  }
}

void matmulF32(const TensorView &a, const TensorView &b, const TensorView &out,
               const BlockEpilogue *epilogue) {
  size_t ra = a.shape.size(), rb = b.shape.size();
  int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
  std::vector<int64_t> batch(out.shape.begin(), out.shape.end() - 2);
  std::vector<int64_t> aBatch(a.shape.begin(), a.shape.end() - 2),
      bBatch(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> strides[2] = {broadcastStrides(aBatch, batch),
                                     broadcastStrides(bBatch, batch)};
  const float *x = static_cast<const float *>(a.data);
  const float *y = static_cast<const float *>(b.data);
  float *z = static_cast<float *>(out.data);
  if (m == 0 || n == 0)
    return;
  // Many small products (attention's heads) spread over the pool one matrix
  // at a time; a single large one splits into blocks.
  // (Fewer matrices than threads: one at a time, each split into blocks.)
  int64_t count = int64_t(countOf(batch));
  auto product = [&](int64_t i) {
    int64_t o[2];
    batchOffsets(batch, strides, i, o);
    parallelSgemm({m, n, k, x + o[0] * m * k, k, y + o[1] * k * n, n,
                   /*transB=*/false, z + i * m * n, n},
                  [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                    if (epilogue)
                      epilogueOnBlock(*epilogue, i * m * n, n, r0, r1, c0, c1);
                  });
  };
  // (A batch of fewer FLOPs in all than a product worth splitting runs on
  // the calling thread too, by the same rule as one product, which is the
  // one the cost model prices: handed to the pool, 4 x 16 x 16 x 16 took
  // 3-4 us, most of it the hand-off.)
  if (count < poolThreads() ||
      gemmRunsOnCallingThread(double(count) * 2 * m * n * k)) {
    for (int64_t i = 0; i < count; ++i)
      product(i);
    return;
  }
  parallelFor(count, 2 * m * n * k, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i)
      product(i);
  });
}

void linearF32(const TensorView &x, const TensorView &w, const TensorView *b,
               const TensorView &out, const BlockEpilogue *epilogue) {
  int64_t k = x.shape.back(), n = w.shape[0];
  int64_t rows = n ? countOf(out.shape) / n : 0;
  const float *bias = b ? static_cast<const float *>(b->data) : nullptr;
  float *z = static_cast<float *>(out.data);
  parallelSgemm({rows, n, k, static_cast<const float *>(x.data), k,
                 static_cast<const float *>(w.data), k, /*transB=*/true, z, n,
                 bias},
                [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                  if (epilogue)
                    epilogueOnBlock(*epilogue, 0, n, r0, r1, c0, c1);
                });
}

bool gemmKernel(int64_t kind, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &error) {
  return gemmWithEpilogue(kind, ops, out, attrs, nullptr, error);
}

} // namespace

namespace {
/// Copies `count` floats. A GEMM's bias goes into every row of its block
/// before the product: with narrow rows (a small MLP's 16 columns) a
/// memmove call per row cost an eighth of the whole model's run, so short
/// rows are copied in fixed-size pieces the compiler inlines.
inline void copyRow(const float *from, int64_t count, float *to) {
  constexpr int64_t kShort = 64;
  if (count >= kShort) {
    std::memcpy(to, from, size_t(count) * sizeof(float));
    return;
  }
  int64_t k = 0;
  for (; k + 8 <= count; k += 8)
    std::memcpy(to + k, from + k, 8 * sizeof(float));
  if (k + 4 <= count) {
    std::memcpy(to + k, from + k, 4 * sizeof(float));
    k += 4;
  }
  switch (count - k) {
  case 3:
    to[k + 2] = from[k + 2];
    [[fallthrough]];
  case 2:
    to[k + 1] = from[k + 1];
    [[fallthrough]];
  case 1:
    to[k] = from[k];
    break;
  default:
    break;
  }
}
} // namespace

void cpu::parallelSgemm(
    const Sgemm &g,
    const std::function<void(int64_t, int64_t, int64_t, int64_t)> &blockDone) {
  if (g.m == 0 || g.n == 0)
    return;
  // An empty product is zeros (BLAS refuses a leading dimension of 0 and
  // writes nothing).
  if (g.k == 0) {
    for (int64_t r = 0; r < g.m; ++r) {
      float *row = g.c + r * g.ldc;
      if (g.initialRow)
        std::copy(g.initialRow, g.initialRow + g.n, row);
      else
        std::fill(row, row + g.n, 0.0f);
    }
    blockDone(0, g.m, 0, g.n);
    return;
  }
  useSequentialBlas();
  // Each block's OpenBLAS call packs all of the other operand again: blocks
  // of rows (whole rows of output, too) unless the columns are many times
  // more. Measured with 2 threads here: rows of 512 x 768 x 256 run at 294
  // GFLOP/s (columns 281), columns of 256 x 1024 x 1024 at 293 (rows 269).
  // A shallow product (k <= 64) of just four times as many columns as rows
  // goes by rows too (128 x 13 x 512: 21 us by rows, 42 by columns; 256 x
  // 32 x 1024: 88 against 107; 128 x 64 x 512: 44 against 51; at k = 128
  // the same either way, and at eight times the columns, 64 x 13 x 512,
  // columns stay ahead). Whichever way gives more blocks where the
  // preferred one gives fewer than there are threads.
  int64_t threads = poolThreads(), flops = 2 * g.m * g.n * g.k;
  auto blocksAlong = [&](int64_t extent) {
    return std::min(threads, (extent + kBlockMultiple - 1) / kBlockMultiple);
  };
  bool byRows = g.n < 4 * g.m || (g.k <= kShallowDepth && g.n <= 4 * g.m);
  if (blocksAlong(byRows ? g.m : g.n) < blocksAlong(byRows ? g.n : g.m))
    byRows = !byRows;
  int64_t narrow = std::min(g.m, g.n);
  // In blocks along its long side, a skinny product's wide operand is read
  // unpacked a block at a time: rows of A, or of a transposed B, are
  // contiguous, but columns of an untransposed B are a slab of short rows
  // far apart (a convolution's im2col columns), which the small-matrix
  // kernels read 2x slower than OpenBLAS packs them (a 32 x 1152 x 512
  // matmul: 221 -> 438 us).
  bool skinnyByRows = g.n <= g.m;
  bool skinny = !gemmRunsOnCallingThread(double(flops)) &&
                narrow <= kSkinnyGemmWidth &&
                narrow * g.k * int64_t(sizeof(float)) <= kSkinnyOperandBytes &&
                (skinnyByRows || g.transB) && blasHasSmallMatrixKernels();
  if (skinny)
    byRows = skinnyByRows;
  int64_t extent = byRows ? g.m : g.n;
  int64_t blocks = gemmRunsOnCallingThread(double(flops)) ? 1 : threads;
  int64_t step = (extent + blocks - 1) / blocks;
  if (skinny)
    step = std::max(kBlockMultiple, kSkinnyBlockMacs / (narrow * g.k));
  step = std::min(extent, (step + kBlockMultiple - 1) / kBlockMultiple *
                              kBlockMultiple);
  blocks = (extent + step - 1) / step;
  parallelFor(blocks, flops / blocks, [&](int64_t first, int64_t last) {
    for (int64_t block = first; block < last; ++block) {
      int64_t lo = block * step, hi = std::min(extent, lo + step);
      int64_t r0 = byRows ? lo : 0, r1 = byRows ? hi : g.m;
      int64_t c0 = byRows ? 0 : lo, c1 = byRows ? g.n : hi;
      const float *b = g.b + (g.transB ? c0 * g.ldb : c0);
      float *c = g.c + r0 * g.ldc + c0;
      // The bias goes in first and the product adds to it (one pass over
      // the block, by OpenBLAS, not two).
      if (g.initialRow)
        for (int64_t r = r0; r < r1; ++r)
          copyRow(g.initialRow + c0, c1 - c0, g.c + r * g.ldc + c0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans,
                  g.transB ? CblasTrans : CblasNoTrans, r1 - r0, c1 - c0, g.k,
                  1.0f, g.a + r0 * g.lda, g.lda, b, g.ldb,
                  g.initialRow ? 1.0f : 0.0f, c, g.ldc);
      blockDone(r0, r1, c0, c1);
    }
  });
}

void cpu::epilogueOnBlock(const BlockEpilogue &epilogue, int64_t base,
                          int64_t width, int64_t r0, int64_t r1, int64_t c0,
                          int64_t c1) {
  if (c0 == 0 && c1 == width) {
    epilogue(base + r0 * width, base + r1 * width);
    return;
  }
  for (int64_t r = r0; r < r1; ++r)
    epilogue(base + r * width + c0, base + r * width + c1);
}

bool cpu::gemmWithEpilogue(int64_t kind, const std::vector<TensorView> &ops,
                           const TensorView &out,
                           const std::vector<int64_t> &attrs,
                           const BlockEpilogue *epilogue, std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  if (kind == img::kMatmul) {
    matmulF32(ops[0], ops[1], out, epilogue);
    return true;
  }
  bool hasBias = img::readAttrs<img::LinearAttrs>(attrs).hasBias;
  linearF32(ops[0], ops[1], hasBias ? &ops[2] : nullptr, out, epilogue);
  return true;
}

void cpu::registerGemmKernels(CpuKernelTable &table) {
  table[img::kMatmul] = gemmKernel;
  table[img::kLinear] = gemmKernel;
}
