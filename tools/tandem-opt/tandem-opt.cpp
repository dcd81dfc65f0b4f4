//===- tandem-opt.cpp - the Tandem optimizer driver -----------------------===//
//
// MlirOptMain with every Tandem dialect and pass registered, plus the
// upstream ones the pipeline uses.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tandem/InitAll.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tandem::registerAllDialects(registry);
  mlir::tandem::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Tandem optimizer driver: the tandem dialect and its passes\n",
      registry));
}
