//===- Passes.h - tandem conversion passes ----------------------*- C++ -*-===//

#ifndef TANDEM_CONVERSION_PASSES_H
#define TANDEM_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tandem {

#define GEN_PASS_DECL
#include "tandem/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tandem/Conversion/Passes.h.inc"

} // namespace mlir::tandem

#endif // TANDEM_CONVERSION_PASSES_H
