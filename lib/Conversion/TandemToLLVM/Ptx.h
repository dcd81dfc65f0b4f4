//===- Ptx.h - GPU kernels of the LLVM dialect to PTX -----------*- C++ -*-===//
//
// The generated GPU kernels (FusedKernels.h) are compiled in process: their
// module is lowered to the LLVM and NVVM dialects, translated to LLVM IR,
// linked with the CUDA toolkit's libdevice for the math functions (as nvcc
// does), optimized and turned into PTX by LLVM's NVPTX backend. The runtime
// loads the PTX when a model starts (the driver compiles it for the GPU at
// hand).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_CONVERSION_TANDEMTOLLVM_PTX_H
#define TANDEM_LIB_CONVERSION_TANDEMTOLLVM_PTX_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::tandem {

/// The GPU architecture the PTX targets: the oldest the runtime supports
/// (compute capability 8.0); newer GPUs compile it for themselves.
inline constexpr llvm::StringLiteral kPtxArchitecture = "sm_80";

/// Compiles `module` (func.func kernels marked as GPU kernels, in the func,
/// scf, arith, math and NVVM dialects) to PTX; an error on the module when
/// it cannot (no NVPTX target, no libdevice where a math function needs it).
FailureOr<std::string> compileToPtx(ModuleOp module);

} // namespace mlir::tandem

#endif // TANDEM_LIB_CONVERSION_TANDEMTOLLVM_PTX_H
