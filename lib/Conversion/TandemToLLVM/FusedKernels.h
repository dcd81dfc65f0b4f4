//===- FusedKernels.h - generated CPU code of fused groups ------*- C++ -*-===//
//
// Each tandem.fused group becomes one function of the compiled model,
//
//   void kernel(void *const *operands, void *result, int64_t begin, int64_t end)
//
// (image::FusedKernel), which computes the result's elements [begin, end)
// with the group's body evaluated per element in registers: vector loads of
// the inputs, the body's ops as arith/math ops on vector<8xf32>, one vector
// store; a scalar loop finishes each row. The runtime's thread pool calls it
// on chunks of the result. A group that starts with a GEMM or convolution
// has its product in the result buffer when the kernel runs (the runtime
// ran the producer's own kernel there): the kernel reads it from there and
// writes the epilogue's value over it. A group that ends in a reduction
// computes the reduction's input: the runtime passes a base pointer that
// puts element `begin` in its scratch, and folds the rows itself.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_CONVERSION_TANDEMTOLLVM_FUSEDKERNELS_H
#define TANDEM_LIB_CONVERSION_TANDEMTOLLVM_FUSEDKERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"

namespace mlir::tandem {

/// Emits `fused`'s kernel as a func.func named `name` at the end of
/// `module`, in the func, scf, arith, math and llvm dialects.
void generateFusedKernel(ModuleOp module, FusedOp fused, StringRef name);

/// Emits `fused`'s GPU kernel as a func.func named `name` at the end of
/// `module` (a module of GPU code alone), marked kGpuKernelAttrName:
///
///   kernel(const float *input0, ..., float *result, int64_t count)
///
/// a grid-stride loop of one element per thread, the body as the CPU
/// kernel computes it on one element; where the group ends in a reduction,
/// of one output per warp (`count` outputs), its lanes folding the row and
/// combined by shuffles.
void generateFusedGpuKernel(ModuleOp module, FusedOp fused, StringRef name);

/// The unit attribute that marks a generated function as a GPU kernel (the
/// NVVM translation's name: it becomes the kernel's PTX entry).
inline constexpr llvm::StringLiteral kGpuKernelAttrName = "nvvm.kernel";

/// How the generated CPU kernels compute the math functions LLVM has no
/// instruction for (exp, log, erf) on their vectors.
enum class VectorMath {
  Libm,       ///< libm once per lane, as the prebuilt kernels do
  LibmvecAvx2 ///< glibc's libmvec, 8 lanes a call (AVX2; link -lmvec)
};

/// Lowers the generated kernels (and anything else left in the func, scf,
/// arith, math and vector dialects) to the LLVM dialect; exp, log and erf on
/// 8-lane vectors become calls as `vectorMath` says, the rest of them libm
/// calls (erf) or LLVM intrinsics.
LogicalResult lowerGeneratedKernelsToLLVM(
    ModuleOp module, VectorMath vectorMath = VectorMath::Libm);

} // namespace mlir::tandem

#endif // TANDEM_LIB_CONVERSION_TANDEMTOLLVM_FUSEDKERNELS_H
