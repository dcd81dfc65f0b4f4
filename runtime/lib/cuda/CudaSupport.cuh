//===- CudaSupport.cuh - device helpers of the CUDA kernels -----*- C++ -*-===//
//
// Private to runtime/lib/cuda/, for the family files' kernels: the offsets
// of an element in broadcast operands, f16/bf16 conversion (they compute in
// f32), the grid-stride loop, reductions over a warp or a block with warp
// shuffles, and choosing the float type to launch with.
// Each .cu file is compiled whole, without relocatable device code, so what
// its kernels call must be in the file itself: the helpers here are inline
// or templates, and no __device__ or __constant__ variable is shared.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_CUDA_CUDASUPPORT_CUH
#define TANDEM_RUNTIME_LIB_CUDA_CUDASUPPORT_CUH

#include "CudaSupport.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

namespace tandem::rt::cuda {

/// The offsets of element `i` of the result in `operands` operands.
__device__ inline void offsetsOf(const Layout &layout, int64_t i, int operands,
                                 int64_t *offsets) {
  for (int k = 0; k < operands; ++k)
    offsets[k] = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    int64_t index = i % layout.dims[d];
    i /= layout.dims[d];
    for (int k = 0; k < operands; ++k)
      offsets[k] += index * layout.strides[k][d];
  }
}

template <typename T> __device__ inline float toFloat(T v) { return float(v); }
template <> __device__ inline float toFloat(__half v) { return __half2float(v); }
template <> __device__ inline float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ inline T fromFloat(float v) { return T(v); }
template <> __device__ inline __half fromFloat(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 fromFloat(float v) { return __float2bfloat16_rn(v); }

/// A value as comparisons and argmax order it: integers (and booleans)
/// exactly, floats in f32 (f16 and bf16 widen exactly). Going through float
/// would make 16777217 == 16777216 for an i32.
template <typename T> __device__ inline auto orderKey(T v) {
  if constexpr (std::is_integral_v<T>)
    return int64_t(v);
  else
    return toFloat(v);
}

/// for i in [0, n), over the whole grid.
#define GRID_LOOP(i, n)                                                        \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);   \
       i += int64_t(gridDim.x) * blockDim.x)

/// Every lane of a warp. The kernels launch blocks of whole warps, and a
/// warp's lanes all reach the shuffles below.
constexpr unsigned kFullWarp = 0xffffffffu;

/// `v` of lane (this lane ^ `mask`). A type the shuffles do not take (a
/// struct) gets an overload of its own beside it, found by argument-
/// dependent lookup.
template <typename V> __device__ inline V shuffleXor(V v, int mask) {
  return __shfl_xor_sync(kFullWarp, v, mask);
}

/// a + b and fmaxf(a, b), for warpReduce and blockReduce.
struct SumOf {
  template <typename V> __device__ V operator()(V a, V b) const { return a + b; }
};
struct MaxOf {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// `combine` of `v` over the warp's 32 lanes, in every lane: a butterfly of
/// __shfl_xor_sync. `combine` must be commutative (a float sum is): lane i
/// computes combine(v_i, v_j) where lane j computes combine(v_j, v_i), so
/// all lanes end with the same bits. Every lane of the warp must call it.
template <typename V, typename F> __device__ inline V warpReduce(V v, F combine) {
  for (int mask = 16; mask > 0; mask /= 2)
    v = combine(v, shuffleXor(v, mask));
  return v;
}

/// `combine` of `v` over the block, in every thread: warpReduce, then the
/// warps' results through `shared` (a slot per warp), combined in warp
/// order, so the result depends on the launch's shape only. blockDim.x is a
/// multiple of 32 and blockDim.y is 1. It holds two __syncthreads: every
/// thread of the block must call it, the same number of times.
template <typename V, typename F>
__device__ inline V blockReduce(V v, V *shared, F combine) {
  v = warpReduce(v, combine);
  __syncthreads(); // the previous call's readers are done with `shared`
  if (threadIdx.x % 32 == 0)
    shared[threadIdx.x / 32] = v;
  __syncthreads();
  V result = shared[0];
  for (int w = 1; w < int(blockDim.x / 32); ++w)
    result = combine(result, shared[w]);
  return result;
}

/// Runs `launch` with the element type T of `dtype` (f32, f16 or bf16).
template <typename F> bool withFloat(DType dtype, F launch) {
  switch (dtype) {
  case DType::F32: launch(float()); return true;
  case DType::F16: launch(__half()); return true;
  case DType::BF16: launch(__nv_bfloat16()); return true;
  default: return false;
  }
}

} // namespace tandem::rt::cuda

#endif // TANDEM_RUNTIME_LIB_CUDA_CUDASUPPORT_CUH
