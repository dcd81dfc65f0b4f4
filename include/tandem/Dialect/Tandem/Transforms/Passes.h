//===- Passes.h - tandem passes ---------------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_H
#define TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tandem {

#define GEN_PASS_DECL
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"

} // namespace mlir::tandem

#endif // TANDEM_DIALECT_TANDEM_TRANSFORMS_PASSES_H
