//===- CpuKernels.h - the CPU kernels of the runtime ------------*- C++ -*-===//
//
// What the executor asks of the CPU backend: run an op of the model image on
// host buffers. The kernels themselves live in one file per kernel family
// (OpKinds.def assigns each kind its family); cpu/CpuKernels.cpp dispatches.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_CPU_CPUKERNELS_H
#define TANDEM_RUNTIME_LIB_CPU_CPUKERNELS_H

#include "tandem/runtime/ModelImage.h"
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

/// Runs a fused group (`attrs`: image::FusedAttrs and what follows): the
/// GEMM or convolution it starts with, if any, into the result, then its
/// generated kernel over the result's elements, split across the thread
/// pool. False with `error` if the producer's kernel fails.
bool runFusedGroup(image::FusedKernel kernel,
                   const std::vector<TensorView> &operands,
                   const TensorView &result, const std::vector<int64_t> &attrs,
                   std::string &error);

/// Whether the CPU backend has a kernel for `kind` (false outside the kinds
/// of OpKinds.def).
bool hasCpuKernel(int64_t kind);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_CPU_CPUKERNELS_H
