//===- PlacementGraph.h - a function as a placement problem -----*- C++ -*-===//

#ifndef TANDEM_ANALYSIS_PLACEMENTGRAPH_H
#define TANDEM_ANALYSIS_PLACEMENTGRAPH_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "tandem/Analysis/PlacementProblem.h"

namespace mlir::tandem {

/// A function's placement problem, with the IR each index stands for.
struct PlacementGraph {
  PlacementProblem problem;
  /// Op index → the op (program order of the function's body).
  std::vector<Operation *> ops;
  /// Value index → the value (arguments first, then op results).
  std::vector<Value> values;
};

/// Builds the problem for the body of `func`, pricing every op and value
/// with `profile` under `gpuBudgetBytes`. Emits an error on `func` (and
/// fails) for IR placement cannot handle: an op without the work and device
/// contracts, a pin to a GPU other than 0 or to a missing GPU, more than one
/// block.
FailureOr<PlacementGraph> buildPlacementGraph(FunctionOpInterface func,
                                              const DeviceProfile &profile,
                                              int64_t gpuBudgetBytes);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_PLACEMENTGRAPH_H
