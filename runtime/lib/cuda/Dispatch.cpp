//===- Dispatch.cpp - which CUDA kernel runs an op ------------------------===//
//
// runKernel looks the op's kind up in a table that each family file fills
// (registerXxxKernels), so a kind has a CUDA kernel exactly where a family
// file registered one, and hasKernel can say so. Building the table is
// plain host code, done on first use: asking needs no GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"

#include <algorithm>
#include <string>

using namespace tandem::rt;
using namespace tandem::rt::cuda;
namespace img = tandem::image;

namespace {

CudaKernelTable buildTable() {
  CudaKernelTable table;
  registerDataMovementKernels(table);
  registerElementwiseKernels(table);
  registerGemmKernels(table);
  registerConvKernels(table);
  registerNormKernels(table);
  registerReduceKernels(table);
  registerGeneratedKernels(table);
  return table;
}

/// The kernel of `kind`, or null.
KernelFn kernelFor(int64_t kind) {
  static const CudaKernelTable table = buildTable();
  return kind >= 0 && kind < img::kNumOpKinds ? table.byKind[kind] : nullptr;
}

} // namespace

bool cuda::hasKernel(int64_t kind) { return kernelFor(kind) != nullptr; }

bool cuda::runKernel(Device *device, int64_t kind,
                     const std::vector<TensorView> &ops,
                     const TensorView &out, const std::vector<int64_t> &a,
                     std::string &error) {
  OnDevice onDevice;
  // An error an earlier call left (cudaGetLastError reports the last error
  // of any call) must not be taken for this op's launch failing.
  cudaGetLastError();
  int64_t n = countOf(out.shape);
  int item = int(dtypeSize(out.dtype));
  // The kernels' layouts hold kMaxRank dimensions: an operand of higher
  // rank (a reduction's input) would overrun them.
  bool tooHigh = out.shape.size() > size_t(kMaxRank);
  for (const TensorView &operand : ops)
    tooHigh |= operand.shape.size() > size_t(kMaxRank);
  if (tooHigh) {
    error = "the CUDA backend handles tensors of rank at most " +
            std::to_string(kMaxRank);
    return false;
  }
  KernelCall call{*device, kind, ops, out, a, n, item, blocksFor(n),
                  dim3(unsigned(kThreadsPerBlock)), error};
  KernelFn run = kernelFor(kind);
  if (!run)
    return call.unsupported();
  return run(call);
}
