//===- Gemm.cpp - the CPU's matrix products -------------------------------===//
//
// The Gemm family of OpKinds.def: batched matmul (batch dimensions
// broadcast) and linear, both as OpenBLAS SGEMMs on f32.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

using namespace tandem::rt;
using namespace tandem::rt::cpu;

namespace {

void matmulF32(const TensorView &a, const TensorView &b, const TensorView &out) {
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
  // An empty product is zeros (BLAS refuses a leading dimension of 0 and
  // writes nothing).
  if (k == 0) {
    std::fill(z, z + countOf(out.shape), 0.0f);
    return;
  }
  if (m == 0 || n == 0)
    return;
  forEachBroadcast(batch, strides, [&](uint64_t i, const int64_t *o) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                x + o[0] * m * k, k, y + o[1] * k * n, n, 0.0f, z + i * m * n,
                n);
  });
}

void linearF32(const TensorView &x, const TensorView &w, const TensorView *b,
               const TensorView &out) {
  int64_t k = x.shape.back(), n = w.shape[0];
  int64_t rows = n ? countOf(out.shape) / n : 0;
  float *z = static_cast<float *>(out.data);
  if (b)
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(z + r * n, b->data, n * sizeof(float));
  else if (k == 0) // an empty product: zeros
    std::fill(z, z + rows * n, 0.0f);
  if (rows && n && k)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, k, 1.0f,
                static_cast<const float *>(x.data), k,
                static_cast<const float *>(w.data), k, b ? 1.0f : 0.0f, z, n);
}

bool matmulKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &,
                  std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  matmulF32(ops[0], ops[1], out);
  return true;
}

bool linearKernel(int64_t, const std::vector<TensorView> &ops,
                  const TensorView &out, const std::vector<int64_t> &attrs,
                  std::string &error) {
  if (out.dtype != DType::F32)
    return unsupported(out.dtype, error);
  bool hasBias = img::readAttrs<img::LinearAttrs>(attrs).hasBias;
  linearF32(ops[0], ops[1], hasBias ? &ops[2] : nullptr, out);
  return true;
}

} // namespace

void cpu::registerGemmKernels(CpuKernelTable &table) {
  table[img::kMatmul] = matmulKernel;
  table[img::kLinear] = linearKernel;
}
