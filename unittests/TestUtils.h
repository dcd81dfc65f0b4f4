//===- TestUtils.h - helpers shared by the unit tests -----------*- C++ -*-===//

#ifndef TANDEM_UNITTESTS_TESTUTILS_H
#define TANDEM_UNITTESTS_TESTUTILS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "tandem/InitAll.h"

#include <gtest/gtest.h>

namespace tandem_test {

/// A context with every dialect a Tandem tool registers.
class TandemTest : public ::testing::Test {
protected:
  TandemTest() {
    mlir::DialectRegistry registry;
    mlir::tandem::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source` (one function body of ops) and returns the first op
  /// named `opName`, failing the test if there is none.
  template <typename OpTy>
  OpTy parseFirst(llvm::StringRef source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module) << "failed to parse:\n" << source.str();
    OpTy found;
    if (module)
      module->walk([&](OpTy op) {
        if (!found)
          found = op;
      });
    EXPECT_TRUE(found) << "no " << OpTy::getOperationName().str();
    return found;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

} // namespace tandem_test

#endif // TANDEM_UNITTESTS_TESTUTILS_H
