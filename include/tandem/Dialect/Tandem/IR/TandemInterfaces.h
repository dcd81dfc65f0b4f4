//===- TandemInterfaces.h - work and device contracts -----------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMINTERFACES_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMINTERFACES_H

#include "mlir/IR/OpDefinition.h"
#include "tandem/Dialect/Tandem/IR/TandemAttrs.h"

#include <cstdint>
#include <vector>

namespace mlir {
class DialectRegistry;

namespace tandem {

/// What one execution of an op costs in arithmetic and memory traffic.
struct WorkEstimate {
  int64_t flops = 0;
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;

  bool operator==(const WorkEstimate &other) const {
    return flops == other.flops && bytesRead == other.bytesRead &&
           bytesWritten == other.bytesWritten;
  }
};

/// The work of an op that computes every result element from the matching
/// operand elements: `flopsPerElement` per result element, each operand read
/// once, each result written once.
WorkEstimate estimateElementwiseWork(Operation *op, int64_t flopsPerElement);

/// True if every operand and result of `op` has a rank the GPU kernels take
/// (image::kMaxGpuRank): the device rule every op's canRunOn(GPU) starts from.
bool fitsGpuKernels(Operation *op);

/// Attaches the work, device and runtime contracts to the upstream ops
/// Tandem IR may contain (`arith.constant`, which `tandem.shape` folds into).
void registerUpstreamOpInterfaceModels(DialectRegistry &registry);
/// The runtime contract's part of it (TandemRuntime.cpp).
void registerRuntimeOpInterfaceModels(DialectRegistry &registry);

} // namespace tandem
} // namespace mlir

#include "tandem/Dialect/Tandem/IR/TandemInterfaces.h.inc"

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMINTERFACES_H
