//===- CpuSupport.h - what the CPU kernel families share --------*- C++ -*-===//
//
// Private to runtime/lib/cpu: the kernel table the family files fill, the
// loops over broadcast and strided tensors that several families run
// (coalesced, spread over the worker pool), and the f16/bf16 conversions and
// element loads and stores of any element type.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_CPU_CPUSUPPORT_H
#define TANDEM_RUNTIME_LIB_CPU_CPUSUPPORT_H

#include "CpuKernels.h"

#include "Layout.h"
#include "ThreadPool.h"
#include "tandem/runtime/ModelImage.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tandem::rt::cpu {

namespace img = tandem::image;

//===----------------------------------------------------------------------===//
// The kernel table
//===----------------------------------------------------------------------===//

/// A kernel: runCpuKernel's arguments, with f16/bf16 operands and results
/// already widened to f32 unless the kind moves data. Several kinds may
/// share one kernel that looks at `kind`.
using CpuKernel = bool (*)(int64_t kind, const std::vector<TensorView> &ops,
                           const TensorView &out,
                           const std::vector<int64_t> &attrs,
                           std::string &error);

/// The kernel of each kind; null where there is none.
using CpuKernelTable = std::array<CpuKernel, img::kNumOpKinds>;

/// Each family's file fills the entries of the kinds it implements.
void registerDataMovementKernels(CpuKernelTable &table);
void registerElementwiseKernels(CpuKernelTable &table);
void registerGemmKernels(CpuKernelTable &table);
void registerConvKernels(CpuKernelTable &table);
void registerNormKernels(CpuKernelTable &table);
void registerReduceKernels(CpuKernelTable &table);

/// Sets `error` to say no kernel handles `dtype` and returns false.
bool unsupported(DType dtype, std::string &error);

//===----------------------------------------------------------------------===//
// Loops over strided tensors
//===----------------------------------------------------------------------===//

/// Advances a row-major `index` over the first `dims` dimensions of `shape`
/// by one, keeping each input's offset in step with its `strides`.
template <size_t N>
void advance(std::vector<int64_t> &index, const std::vector<int64_t> &shape,
             const std::vector<int64_t> (&strides)[N], int64_t (&offsets)[N],
             size_t dims) {
  for (size_t d = dims; d-- > 0;) {
    ++index[d];
    for (size_t k = 0; k < N; ++k)
      offsets[k] += strides[k][d];
    if (index[d] < shape[d])
      return;
    for (size_t k = 0; k < N; ++k)
      offsets[k] -= strides[k][d] * index[d];
    index[d] = 0;
  }
}

/// Calls f(outIndex, inputOffsets) for every element of `shape`, with the
/// offsets of each input advanced by its `strides`, in order, on this thread
/// (for callers that accumulate).
template <size_t N, typename F>
void forEachBroadcast(const std::vector<int64_t> &shape,
                      const std::vector<int64_t> (&strides)[N], F f) {
  uint64_t n = countOf(shape);
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offsets[N] = {};
  for (uint64_t i = 0; i < n; ++i) {
    f(i, static_cast<const int64_t *>(offsets));
    advance(index, shape, strides, offsets, shape.size());
  }
}

/// Calls run(outIndex, inputOffsets, length, inputStrides) once per row of
/// the (coalesced) last dimension: the row's `length` elements start at
/// outIndex in the dense output and at inputOffsets[k] in input k, which
/// advances by inputStrides[k]. Rows are spread over the worker pool;
/// `costPerElement` is a rough count of operations per element.
template <size_t N, typename F>
void forEachRow(std::vector<int64_t> shape, std::vector<int64_t> (&strides)[N],
                int64_t costPerElement, F run) {
  if (countOf(shape) == 0)
    return;
  coalesce(shape, strides);
  size_t rank = shape.size();
  int64_t length = rank ? shape.back() : 1;
  int64_t inner[N];
  for (size_t k = 0; k < N; ++k)
    inner[k] = rank ? strides[k].back() : 0;
  int64_t rows = int64_t(countOf(shape)) / length;
  if (rank == 2) {
    // One outer dimension: a row's offsets by a multiply, not by advancing
    // an index (on rows of a few elements, [256, 8] against [256, 1], that
    // cost as much as the row).
    int64_t outer[N];
    for (size_t k = 0; k < N; ++k)
      outer[k] = strides[k][0];
    parallelFor(rows, length * costPerElement, [&](int64_t first, int64_t last) {
      for (int64_t row = first; row < last; ++row) {
        int64_t offsets[N];
        for (size_t k = 0; k < N; ++k)
          offsets[k] = row * outer[k];
        run(row * length, static_cast<const int64_t *>(offsets), length,
            static_cast<const int64_t *>(inner));
      }
    });
    return;
  }
  parallelFor(rows, length * costPerElement, [&](int64_t first, int64_t last) {
    // The outer index of row `first`, and the inputs' offsets there.
    std::vector<int64_t> index(rank ? rank - 1 : 0, 0);
    int64_t offsets[N] = {};
    for (int64_t r = first, d = int64_t(index.size()) - 1; d >= 0; --d) {
      index[d] = r % shape[d];
      r /= shape[d];
      for (size_t k = 0; k < N; ++k)
        offsets[k] += index[d] * strides[k][d];
    }
    for (int64_t row = first; row < last; ++row) {
      run(row * length, static_cast<const int64_t *>(offsets), length,
          static_cast<const int64_t *>(inner));
      advance(index, shape, strides, offsets, index.size());
    }
  });
}

/// Calls body(Word()) with Word the unsigned integer as wide as an element
/// of `dtype`, for kernels that only move elements (fill, select); false
/// where no such integer exists.
template <typename Body> bool withElementWord(DType dtype, Body &&body) {
  switch (dtypeSize(dtype)) {
  case 1: body(uint8_t()); return true;
  case 2: body(uint16_t()); return true;
  case 4: body(uint32_t()); return true;
  case 8: body(uint64_t()); return true;
  default: return false;
  }
}

/// Calls body(std::integral_constant<unsigned, Mask>) for the Mask equal to
/// `mask` (mask < 2^N).
template <size_t N, unsigned Mask = 0, typename Body>
void withStepMask(unsigned mask, Body &&body) {
  if constexpr (Mask + 1 < (1u << N))
    if (mask != Mask)
      return withStepMask<N, Mask + 1>(mask, body);
  body(std::integral_constant<unsigned, Mask>{});
}

/// forEachBroadcast for element-independent work: f(outIndex, offsets) in
/// parallel rows (f must not accumulate across elements). A row whose
/// operands each step by 1 (contiguous) or 0 (a broadcast value), the
/// common case, runs a loop with those steps fixed at compile time, which
/// the compiler vectorizes (a select over a broadcast mask ran 5 ns an
/// element through the general loop).
template <size_t N, typename F>
void forEachElement(const std::vector<int64_t> &shape,
                    const std::vector<int64_t> (&strides)[N],
                    int64_t costPerElement, F f) {
  std::vector<int64_t> dims = shape;
  std::vector<int64_t> copies[N];
  for (size_t k = 0; k < N; ++k)
    copies[k] = strides[k];
  coalesce(dims, copies);
  // Every row steps its operands alike (the innermost strides), so the loop
  // is chosen once, not per row: on short rows (a squeeze-and-excitation
  // scale, [2, 1152, 1, 1] x [2, 1152, 2, 2]) choosing it per row cost more
  // than the row.
  unsigned unitSteps = 0;
  bool simple = true;
  for (size_t k = 0; k < N; ++k) {
    int64_t step = dims.empty() ? 0 : copies[k].back();
    unitSteps |= unsigned(step == 1) << k;
    simple &= step == 0 || step == 1;
  }
  if constexpr (N <= 3) {
    if (simple) {
      withStepMask<N>(unitSteps, [&](auto mask) {
        constexpr unsigned kMask = decltype(mask)::value;
        forEachRow(dims, copies, costPerElement,
                   [&](int64_t out, const int64_t *start, int64_t length,
                       const int64_t *) {
                     // A copy of f the loop can keep in registers: f
                     // itself, behind a reference, might be what a byte
                     // store (a mask) writes, so the loop reloaded its
                     // captures every element (f should capture its
                     // pointers by value, for the same reason).
                     F local = f;
                     for (int64_t j = 0; j < length; ++j) {
                       int64_t o[N];
                       for (size_t k = 0; k < N; ++k)
                         o[k] = start[k] + ((kMask >> k) & 1 ? j : 0);
                       local(uint64_t(out + j),
                             static_cast<const int64_t *>(o));
                     }
                   });
      });
      return;
    }
  }
  forEachRow(dims, copies, costPerElement,
             [&](int64_t out, const int64_t *start, int64_t length,
                 const int64_t *step) {
               int64_t o[N];
               for (size_t k = 0; k < N; ++k)
                 o[k] = start[k];
               for (int64_t j = 0; j < length; ++j) {
                 f(uint64_t(out + j), static_cast<const int64_t *>(o));
                 for (size_t k = 0; k < N; ++k)
                   o[k] += step[k];
               }
             });
}

//===----------------------------------------------------------------------===//
// GEMMs and what runs on their blocks
//===----------------------------------------------------------------------===//

/// Scratch memory for a kernel (a convolution's im2col columns, a fused
/// reduction's rows), kept from call to call: fresh vectors cost more than
/// the work done in them (tens of MiB zero-filled on one thread, and page
/// faults where glibc maps them). Buffers wait in a free list and each is
/// lent to one holder at a time, so kernels running at once (on the pool's
/// workers, or queues side by side) each get their own. (Not thread_local: a
/// thread local with a destructor keeps a dlopen'd model library mapped
/// until the thread exits.) releaseScratch (CpuKernels.h) frees them.
class Scratch {
public:
  /// A buffer of at least `count` floats, lent until this goes out of scope.
  explicit Scratch(size_t count);
  ~Scratch();
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  float *get() const { return data.get(); }

private:
  std::unique_ptr<float[]> data;
  size_t size = 0;
};

/// What a fused group runs on each block of its producer's result as soon as
/// the block is written, while it is in cache: elements [begin, end) of the
/// result, row-major. Blocks run on any worker, concurrently.
using BlockEpilogue = std::function<void(int64_t begin, int64_t end)>;

/// One SGEMM, C = A * op(B) (+ each row of C starting as `initialRow`, a
/// linear's bias, where it is not null), row-major: A is m x k (leading
/// dimension lda), B is k x n, or n x k when `transB`, C is m x n (ldc).
struct Sgemm {
  int64_t m, n, k;
  const float *a;
  int64_t lda;
  const float *b;
  int64_t ldb;
  bool transB;
  float *c;
  int64_t ldc;
  const float *initialRow = nullptr;
};

/// Runs `gemm` split into blocks of rows (or of columns, where the rows are
/// too few) across the pool, one OpenBLAS call per block on the worker that
/// runs it, and calls blockDone(r0, r1, c0, c1) right after block rows
/// [r0, r1) x columns [c0, c1) is written, on the same worker. Inside a pool
/// task it runs as one block. (k = 0 writes zeros.)
void parallelSgemm(
    const Sgemm &gemm,
    const std::function<void(int64_t, int64_t, int64_t, int64_t)> &blockDone);

/// Calls epilogue(begin, end) over the rows [r0, r1) x columns [c0, c1) of a
/// row-major matrix with `width` columns that starts at element `base` of a
/// result: one call when the block spans whole rows, else one per row.
void epilogueOnBlock(const BlockEpilogue &epilogue, int64_t base,
                     int64_t width, int64_t r0, int64_t r1, int64_t c0,
                     int64_t c1);

/// linear, matmul (Gemm.cpp) and conv2d (Conv.cpp) on f32 with `epilogue`
/// run on each block of the result as it is written (null: none).
bool gemmWithEpilogue(int64_t kind, const std::vector<TensorView> &ops,
                      const TensorView &out, const std::vector<int64_t> &attrs,
                      const BlockEpilogue *epilogue, std::string &error);
bool conv2dWithEpilogue(const std::vector<TensorView> &ops,
                        const TensorView &out,
                        const std::vector<int64_t> &attrs,
                        const BlockEpilogue *epilogue, std::string &error);

/// What a fused group computes before its reduction: elements [begin, end)
/// (row-major) of the reduction's input, written to into[0, end - begin).
using ComputeElements =
    std::function<void(int64_t begin, int64_t end, float *into)>;

/// reduce_sum, reduce_mean, reduce_max or reduce_min (`kind`) into
/// out[0, outer) of `outer` rows of `count` f32 elements that `compute`
/// writes, a block of rows at a time into a worker's scratch, each row
/// folded while in cache exactly as the reduction folds a row of a
/// materialized input (Reduce.cpp; reductionFusesRows in CpuKernelPaths.h
/// says which `count` qualify). `costPerElement` is compute's.
void reduceComputedRows(int64_t kind, int64_t outer, int64_t count,
                        int64_t costPerElement, float *out,
                        const ComputeElements &compute);

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f); // rounds to nearest even
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f); // rounds to nearest even

/// f16 or bf16: the types the kernels compute in f32.
inline bool isHalf(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16;
}

/// Compiles a kernel loop twice, for AVX2 and for the baseline x86-64, and
/// picks one when the program loads (GCC's function multiversioning). AVX2
/// without FMA, and the runtime is built with -ffp-contract=off: the same
/// operations in the same order, so both give the bits the generated
/// kernels give.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TANDEM_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TANDEM_VECTOR_CLONES
#endif

/// Eight floats, and their bits: the vectors a kernel loop spells out where
/// the compiler would not vectorize the scalar loop (GCC's vector
/// extensions; two SSE registers in the baseline clone).
typedef float Floats8 __attribute__((vector_size(8 * sizeof(float))));
typedef uint32_t Bits8 __attribute__((vector_size(8 * sizeof(uint32_t))));

/// The integer type of a float type's bits (for expNonPositive's scale).
template <typename V> struct BitsOf {
  using type = uint32_t;
};
template <> struct BitsOf<Floats8> {
  using type = Bits8;
};

/// exp(x) for x <= 0 (softmax's shifted inputs; NaN stays NaN), branch-free
/// so that loops of it vectorize: Cephes' expf, 2^n · p(r) with
/// r = x - n·ln2 in [-ln2/2, ln2/2], within 2 ulp of the exact value; 0
/// where the exact value is below the smallest normal float (x < -87.34).
/// Of a float or of Floats8, lane by lane the same operations (so the same
/// bits).
template <typename V>
[[gnu::always_inline]] inline V expNonPositive(V v) {
  using Bits = typename BitsOf<V>::type;
  constexpr float kLowest = -87.3365447505531f; // ln(FLT_MIN)
  constexpr float kRound = 12582912.0f;         // 1.5 · 2^23: rounds to ints
  const V zero{};
  // Below kLowest the result is 0 whatever is computed, so those lanes
  // compute exp(0): at kLowest itself 2^-126 · p(r) falls just below the
  // smallest normal, and a multiply making a subnormal takes a microcode
  // assist (a causal mask's -inf entries made softmax 7x slower).
  V x = v < kLowest ? zero : v;
  V shifted = x * 1.44269504088896341f + kRound;
  V n = shifted - kRound;
  V r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  V e = p * r * r + r + 1.0f;
  // 2^n from n's bits, which the rounding left in the low mantissa bits.
  Bits bits;
  uint32_t roundBits;
  std::memcpy(&bits, &shifted, sizeof(bits));
  std::memcpy(&roundBits, &kRound, 4);
  Bits scaleBits = (bits - roundBits + 127u) << 23;
  V scale;
  std::memcpy(&scale, &scaleBits, sizeof(scale));
  return v < kLowest ? zero : e * scale;
}

/// Element i of a tensor as a double (a wide common type for cast).
double loadDouble(DType dtype, const void *data, uint64_t i);
/// Stores `value` as element i (integers saturate, as floatToInteger does).
void storeDouble(DType dtype, void *data, uint64_t i, double value);

} // namespace tandem::rt::cpu

#endif // TANDEM_RUNTIME_LIB_CPU_CPUSUPPORT_H
