//===- place-summary.cpp - a downstream user of the installed Tandem ------===//
//
// Parses a model, runs Tandem's placement pipeline through the C++ API and
// prints how many ops went to each device: what another project's tool
// would do with the dialect and its passes.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/Transforms/Passes.h"
#include "tandem/InitAll.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: place-summary MODEL.mlir GPU-MEMORY\n");
    return 2;
  }
  mlir::DialectRegistry registry;
  mlir::tandem::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  mlir::tandem::PlacementPipelineOptions options;
  options.gpuMemory = argv[2];
  options.deviceProfile = "v100-32gb";
  mlir::tandem::buildPlacementPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return 1;
  int gpu = 0, cpu = 0;
  module->walk([&](mlir::Operation *op) {
    if (op->getNumResults() != 1 || !op->getDialect() ||
        op->getDialect()->getNamespace() != "tandem")
      return;
    mlir::tandem::DeviceAttr device =
        mlir::tandem::getPlacedDevice(op->getResult(0));
    (device && device.isGPU() ? gpu : cpu) += 1;
  });
  std::printf("placed: %d ops on the gpu, %d on the cpu\n", gpu, cpu);
  return 0;
}
