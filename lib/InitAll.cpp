//===- InitAll.cpp - everything a Tandem tool registers -------------------===//

#include "tandem/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tandem/Conversion/Passes.h"
#include "tandem/Dialect/Tandem/IR/TandemDialect.h"
#include "tandem/Dialect/Tandem/IR/TandemInterfaces.h"
#include "tandem/Dialect/Tandem/Transforms/Passes.h"

void mlir::tandem::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TandemDialect, arith::ArithDialect, func::FuncDialect,
                  LLVM::LLVMDialect>();
  registerUpstreamOpInterfaceModels(registry);
}

void mlir::tandem::registerAllPasses() {
  registerTandemPasses();
  registerPlacementPipeline();
  registerTandemConversionPasses();
  // Upstream passes the pipelines use.
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
}
