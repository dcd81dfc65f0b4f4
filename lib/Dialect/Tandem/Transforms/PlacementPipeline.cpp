//===- PlacementPipeline.cpp - --tandem-placement-pipeline ----------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tandem;

void tandem::buildPlacementPipeline(OpPassManager &pm,
                                    const PlacementPipelineOptions &options) {
  // No cleanup after placement: --tandem-place folds and merges duplicates
  // itself before it prices, so the emitted IR is the program its report
  // describes, and a cleanup here could only make them differ.
  PlaceOptions place;
  place.gpuMemory = options.gpuMemory;
  place.deviceProfile = options.deviceProfile;
  place.strategy = options.strategy;
  place.report = options.report;
  place.explain = options.explain;
  place.objective = options.objective;
  pm.addPass(createPlace(place));
  pm.addPass(createInsertTransfers());
  ScheduleOptions schedule;
  schedule.deviceProfile = options.deviceProfile;
  schedule.window = options.scheduleWindow;
  // The schedule is added to a report written to a file (not to a stream).
  if (options.report != "-")
    schedule.report = options.report;
  pm.addPass(createSchedule(schedule));
  // Last, so offsets describe the final IR.
  pm.addPass(createPlanMemory());
}

void tandem::addPrePlacementCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSinkSources());
}

void tandem::registerPlacementPipeline() {
  PassPipelineRegistration<PlacementPipelineOptions>(
      "tandem-placement-pipeline",
      "Place every op under the GPU budget, insert the transfers, schedule "
      "the queues and plan memory (tandem-place, tandem-insert-transfers, "
      "tandem-schedule, tandem-plan-memory); "
      "takes tandem-place's options",
      buildPlacementPipeline);
}
