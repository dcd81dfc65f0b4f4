//===- TandemAttrs.h - tandem attributes and enums --------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMATTRS_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "tandem/Dialect/Tandem/IR/TandemEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tandem/Dialect/Tandem/IR/TandemAttrs.h.inc"

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMATTRS_H
