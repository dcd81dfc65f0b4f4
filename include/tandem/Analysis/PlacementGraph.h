//===- PlacementGraph.h - a function as a placement problem -----*- C++ -*-===//

#ifndef TANDEM_ANALYSIS_PLACEMENTGRAPH_H
#define TANDEM_ANALYSIS_PLACEMENTGRAPH_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "tandem/Analysis/PlacementProblem.h"

#include <optional>

namespace mlir::tandem {

/// A function's placement problem, with the IR each index stands for.
struct PlacementGraph {
  PlacementProblem problem;
  /// Op index → the op (program order of the function's body).
  std::vector<Operation *> ops;
  /// Value index → the value (arguments first, then op results).
  std::vector<Value> values;
  /// When the function is already placed (its ops carry `tandem.device`,
  /// or it has `tandem.transfer` ops), the devices the IR gives its ops.
  std::optional<Placement> given;
};

/// True if `func` is already placed: an op carries `tandem.device`, or the
/// function has `tandem.transfer` ops.
bool isPlaced(FunctionOpInterface func);

/// Builds the problem for the body of `func`, pricing every op and value
/// with `profile` under `gpuBudgetBytes`. In an already placed function a
/// `tandem.transfer` is not an op of the problem: its readers read the
/// value it copies, and the placement prices the copy. Emits an error on
/// `func` (and fails) for IR placement cannot handle: an op without the work
/// and device contracts, a pin to a GPU other than 0 or to a missing GPU,
/// more than one block, a placed function with an op left unplaced or placed
/// against its pin.
FailureOr<PlacementGraph> buildPlacementGraph(FunctionOpInterface func,
                                              const DeviceProfile &profile,
                                              int64_t gpuBudgetBytes);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_PLACEMENTGRAPH_H
