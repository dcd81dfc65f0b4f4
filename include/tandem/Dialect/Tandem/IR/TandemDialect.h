//===- TandemDialect.h - The tandem dialect ---------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_H
#define TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tandem/Dialect/Tandem/IR/TandemDialect.h.inc"

#endif // TANDEM_DIALECT_TANDEM_IR_TANDEMDIALECT_H
