//===- TandemOps.h - tandem ops ---------------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMOPS_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "tandem/Dialect/Tandem/IR/TandemAttrs.h"
#include "tandem/Dialect/Tandem/IR/TandemDialect.h"
#include "tandem/Dialect/Tandem/IR/TandemInterfaces.h"
#include "tandem/Dialect/Tandem/IR/TandemTraits.h"

#define GET_OP_CLASSES
#include "tandem/Dialect/Tandem/IR/TandemOps.h.inc"

namespace mlir::tandem {

/// Where `value` lives, when the IR says so: a function argument arrives on
/// the CPU, a transfer's result is on its destination, and an op's result is
/// where its `tandem.device` attribute puts it. Null when unknown.
DeviceAttr getPlacedDevice(Value value);

/// Whether `op` may be part of a fused group (tandem.fused): an elementwise
/// op that the generated kernels compute: the float arithmetic and unary
/// functions on f32, a compare of f32 values (its i1 mask), a select of f32
/// values and a cast between f32 and i1.
bool isFusible(Operation *op);

/// Whether `op` is a constant that a fused group computes in its body
/// instead of reading it (an f32 tandem.fill, of any shape that broadcasts
/// to the group's): a splat in registers, where it would be an input.
bool isFusedConstant(Operation *op);

/// The name reports, profiles and drawings give `op`: its op name, but a
/// fused group is named by its ops ("fused(linear+relu)").
std::string displayName(Operation *op);

/// The most inputs a fused group takes: each is a parameter of its GPU
/// kernel, and PTX allows 4352 bytes of them (8 per pointer).
constexpr size_t kMaxFusedInputs = 256;

/// Whether `op` may start a fused group as the producer of its epilogue: a
/// GEMM or a convolution (linear, matmul, conv2d) on f32, which runs its
/// prebuilt kernel into the group's buffer.
bool isEpilogueProducer(Operation *op);

/// Whether `op` may end a fused group: a softmax or layer_norm on f32, which
/// runs its prebuilt kernel in place on the group's buffer after the
/// generated kernel (their kernels read each element of a row before
/// writing it; log_softmax's CPU kernel does not), or a reduction that
/// folds the group's values as rows (isRowReduction).
bool isGroupConsumer(Operation *op);

/// Whether `op` is a reduce_sum, reduce_mean, reduce_max or reduce_min on
/// f32 over the trailing axes of its input, folding 1 to 32768 elements
/// into each output (reductionFusesRows in the runtime's
/// CpuKernelPaths.h): the reductions a fused group may end with. The
/// group's result is then the reduction's, and the values its kernel
/// computes never reach memory.
bool isRowReduction(Operation *op);

/// The elements a row reduction (isRowReduction) folds into each output;
/// 0 for any other op.
int64_t rowReductionLength(Operation *op);

} // namespace mlir::tandem

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMOPS_H
