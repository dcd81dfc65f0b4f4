//===- Gemm.cu - matmul and linear on the GPU through cuBLAS --------------===//
//
// The Gemm family of OpKinds.def on the GPU: cuBLAS's GemmEx (f32, f16,
// bf16; f32 accumulation); a batched matmul is one strided batched GEMM
// when each operand is batched in order or shared by every batch, else one
// call per batch. No
// kernel of ours: linear's bias is broadcast into the result with
// DataMovement.cu's strided copy before the GEMM accumulates onto it.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"

#include <string>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

/// `batches` products C_i (m x n) = A_i (m x k) · op(B_i) + beta · C_i,
/// row-major, A_i at a + i·strideA elements (0: one A for every batch), the
/// same for B, C_i at c + i·m·n: one cuBLAS call. Empty products are handled
/// here (cuBLAS refuses a leading dimension of 0): nothing to write when m
/// or n is 0, and C = beta · C, i.e. zeros or the bias already in C, when k
/// is 0.
/// On call's stream, with its cuBLAS handle; errors in call.error.
bool gemm(const KernelCall &call, bool transposeB, int64_t m, int64_t n,
          int64_t k, DType dtype, const void *a, const void *b, void *c,
          float beta, int64_t batches = 1, int64_t strideA = 0,
          int64_t strideB = 0) {
  std::string &error = call.error;
  cudaDataType type;
  switch (dtype) {
  case DType::F32: type = CUDA_R_32F; break;
  case DType::F16: type = CUDA_R_16F; break;
  case DType::BF16: type = CUDA_R_16BF; break;
  default:
    error = std::string("no CUDA GEMM on ") + dtypeName(dtype);
    return false;
  }
  if (m == 0 || n == 0 || batches == 0)
    return true;
  if (k == 0)
    return beta != 0.0f ||
           check(cudaMemsetAsync(c, 0,
                                 size_t(batches) * size_t(m) * size_t(n) *
                                     dtypeSize(dtype),
                                 call.stream()),
                 "zeroing an empty product", error);
  constexpr int64_t kMaxBlasSize = 2147483647; // cuBLAS takes int sizes
  if (m > kMaxBlasSize || n > kMaxBlasSize || k > kMaxBlasSize ||
      batches > kMaxBlasSize) {
    error = "a GEMM of " + std::to_string(m) + "x" + std::to_string(k) +
            " by " + std::to_string(k) + "x" + std::to_string(n) +
            " exceeds cuBLAS's 32-bit sizes";
    return false;
  }
  // f32 in TF32 only when asked for (--allow-tf32): it is a loss of
  // precision, not a free speed-up. f16/bf16 use tensor cores either way.
  cublasComputeType_t compute = dtype == DType::F32 && call.device.allowTf32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  // Row-major C = A·op(B) is column-major Cᵀ = op(B)ᵀ·Aᵀ.
  float alpha = 1.0f;
  cublasOperation_t opB = transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int ldb = transposeB ? int(k) : int(n);
  if (batches == 1)
    return checkBlas(cublas().gemmEx(call.device.blas, opB, CUBLAS_OP_N, int(n),
                                     int(m), int(k), &alpha, b, type, ldb, a,
                                     type, int(k), &beta, c, type, int(n),
                                     compute, CUBLAS_GEMM_DEFAULT),
                     error);
  return checkBlas(cublas().gemmStridedBatchedEx(
                       call.device.blas, opB, CUBLAS_OP_N, int(n), int(m), int(k),
                       &alpha, b, type, ldb, strideB, a, type, int(k), strideA,
                       &beta, c, type, int(n), m * n, int(batches),
                       compute, CUBLAS_GEMM_DEFAULT),
                   error);
}

/// The batch stride of an operand whose batch dimensions broadcast to
/// `batch` with element strides `strides` (in units of whole matrices): 0
/// when one matrix serves every batch, 1 when each batch has its own, in
/// order; -1 otherwise (a partial broadcast, one GEMM per batch).
int64_t uniformBatchStride(const std::vector<int64_t> &strides,
                           const std::vector<int64_t> &batch) {
  bool none = true, dense = true;
  std::vector<int64_t> rowMajor = rowMajorStrides(batch);
  for (size_t d = 0; d < batch.size(); ++d) {
    if (batch[d] == 1)
      continue;
    none &= strides[d] == 0;
    dense &= strides[d] == rowMajor[d];
  }
  return none ? 0 : dense ? 1 : -1;
}

/// Batched over the broadcast leading dimensions, one GEMM per batch.
bool runMatmul(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  DType dtype = out.dtype;
  size_t ra = ops[0].shape.size(), rb = ops[1].shape.size();
  int64_t m = ops[0].shape[ra - 2], k = ops[0].shape[ra - 1],
          cols = ops[1].shape[rb - 1];
  std::vector<int64_t> batch(out.shape.begin(), out.shape.end() - 2),
      aBatch(ops[0].shape.begin(), ops[0].shape.end() - 2),
      bBatch(ops[1].shape.begin(), ops[1].shape.end() - 2);
  std::vector<int64_t> sa = broadcastStrides(aBatch, batch),
                       sb = broadcastStrides(bBatch, batch);
  int64_t batches = countOf(batch);
  // Both operands batched in order or shared by every batch: one strided
  // batched GEMM. Otherwise one GEMM per batch.
  int64_t uniformA = uniformBatchStride(sa, batch),
          uniformB = uniformBatchStride(sb, batch);
  if (uniformA >= 0 && uniformB >= 0) {
    if (!gemm(call, false, m, cols, k, dtype, ops[0].data, ops[1].data,
              out.data, 0.0f, batches, uniformA * m * k, uniformB * k * cols))
      return false;
    return launched(call.error);
  }
  std::vector<int64_t> index(batch.size(), 0);
  size_t width = dtypeSize(dtype);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ia += index[d] * sa[d];
      ib += index[d] * sb[d];
    }
    if (!gemm(call, false, m, cols, k, dtype,
              static_cast<const uint8_t *>(ops[0].data) + ia * m * k * width,
              static_cast<const uint8_t *>(ops[1].data) + ib * k * cols * width,
              static_cast<uint8_t *>(out.data) + i * m * cols * width, 0.0f))
      return false;
    for (size_t d = batch.size(); d-- > 0;) {
      if (++index[d] < batch[d])
        break;
      index[d] = 0;
    }
  }
  return launched(call.error);
}

/// x·wᵀ (+ bias): w is (out features, in features).
bool runLinear(const KernelCall &call) {
  const std::vector<TensorView> &ops = call.ops;
  const TensorView &out = call.out;
  int64_t k = ops[0].shape.back(), cols = ops[1].shape[0];
  int64_t rows = cols ? countOf(out.shape) / cols : 0;
  bool bias = img::readAttrs<img::LinearAttrs>(call.attrs).hasBias != 0;
  if (bias) { // broadcast the bias into the result, then accumulate
    Layout layout = layoutOf(out.shape, {broadcastStrides(ops[2].shape, out.shape)});
    if (!launchStridedCopy(call.grid, call.block, call.stream(), layout, call.n, 0,
                           static_cast<const uint8_t *>(ops[2].data),
                           static_cast<uint8_t *>(out.data), call.item))
      return call.unsupported();
  }
  if (!gemm(call, true, rows, cols, k, out.dtype, ops[0].data, ops[1].data,
            out.data, bias ? 1.0f : 0.0f))
    return false;
  return launched(call.error);
}

} // namespace

void cuda::registerGemmKernels(CudaKernelTable &table) {
  table.add(img::kMatmul, runMatmul);
  table.add(img::kLinear, runLinear);
}
