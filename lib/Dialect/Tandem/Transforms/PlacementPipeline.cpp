//===- PlacementPipeline.cpp - --tandem-placement-pipeline ----------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tandem;

void tandem::buildPlacementPipeline(OpPassManager &pm,
                                    const PlacementPipelineOptions &options) {
  // Fold first, so no op placement sees is about to disappear.
  pm.addPass(createCanonicalizerPass());
  PlaceOptions place;
  place.gpuMemory = options.gpuMemory;
  place.deviceProfile = options.deviceProfile;
  place.strategy = options.strategy;
  place.report = options.report;
  place.explain = options.explain;
  pm.addPass(createPlace(place));
  pm.addPass(createInsertTransfers());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Last, so offsets describe the final IR.
  pm.addPass(createPlanMemory());
}

void tandem::registerPlacementPipeline() {
  PassPipelineRegistration<PlacementPipelineOptions>(
      "tandem-placement-pipeline",
      "Place every op under the GPU budget, insert the transfers and plan "
      "memory (canonicalize, tandem-place, tandem-insert-transfers, "
      "canonicalize, cse, tandem-plan-memory); takes tandem-place's options",
      buildPlacementPipeline);
}
