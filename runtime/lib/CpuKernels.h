//===- CpuKernels.h - the CPU kernels of the runtime -------------*- C++ -*-===//

#ifndef TANDEM_RUNTIME_LIB_CPUKERNELS_H
#define TANDEM_RUNTIME_LIB_CPUKERNELS_H

#include "tandem/runtime/Tensor.h"

#include <string>
#include <vector>

namespace tandem::rt {

struct TensorView {
  DType dtype;
  std::vector<int64_t> shape;
  void *data;
};

/// Runs op `kind` (tandem::image::OpKind) on the CPU. Returns false with
/// `error` if the kernel does not support the element type.
bool runCpuKernel(int64_t kind, const std::vector<TensorView> &operands,
                  const TensorView &result, const std::vector<int64_t> &attrs,
                  std::string &error);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_CPUKERNELS_H
