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

#include <optional>
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

/// An op a fused group runs with a prebuilt kernel: its kind, its operands
/// and its own attribute words.
struct FusedPart {
  int64_t kind;
  std::vector<TensorView> operands;
  std::vector<int64_t> attrs;
  /// Which of the group's operands each of `operands` is (-1: the group's
  /// result), for bindFusedParts.
  std::vector<int> sources;
};

/// The GEMM or convolution a fused group starts with (run into the group's
/// result before the generated kernel) and the row normalization it ends
/// with (run after it, in place: its first operand is the result), where it
/// has them (`attrs`: image::FusedAttrs and what follows, checked by the
/// image reader). Both backends run them.
struct FusedParts {
  std::optional<FusedPart> producer, consumer;
};
FusedParts fusedParts(const std::vector<TensorView> &operands,
                      const TensorView &result,
                      const std::vector<int64_t> &attrs);

/// Points the parts' operands at a call's buffers (the parts decoded once,
/// at load, from the same group: a call then allocates nothing).
void bindFusedParts(FusedParts &parts, const std::vector<TensorView> &operands,
                    const TensorView &result);

/// Runs a fused group (`attrs`: image::FusedAttrs and what follows; `parts`:
/// fusedParts of it, bound to this call's buffers): the GEMM or convolution
/// it starts with, if any, into the result, then its generated kernel over
/// the result's elements, split across the thread pool, then the
/// normalization it ends with, if any, in place. False with `error` if a
/// prebuilt kernel fails.
bool runFusedGroup(image::FusedKernel kernel,
                   const std::vector<TensorView> &operands,
                   const TensorView &result, const std::vector<int64_t> &attrs,
                   const FusedParts &parts, std::string &error);

/// Frees the convolutions' scratch buffers that no call holds (they are
/// kept from call to call and grown as needed; the last model to close
/// gives them back).
void releaseScratch();

/// Whether the CPU backend has a kernel for `kind` (false outside the kinds
/// of OpKinds.def).
bool hasCpuKernel(int64_t kind);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_CPU_CPUKERNELS_H
