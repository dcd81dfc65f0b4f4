//===- PlacementReport.h - the JSON placement report ------------*- C++ -*-===//
//
// Keys (read by tools and tests; docs/placement.md describes each):
// strategy, objective, device_profile, function, gpu_memory_budget_bytes,
// peak_gpu_bytes, gpu_arena_bytes,
// predicted_us {total, serial, makespan, cpu_compute, gpu_compute, transfer},
// optimal_us, lower_bound_us, serial_lower_bound_us, makespan_lower_bound_us,
// makespan_bound_terms_us {chain, load, placements},
// transfers {h2d_count, d2h_count, h2d_bytes, d2h_bytes},
// ops [{id, name, loc, device, pinned, cpu_us, gpu_us}],
// values [{id, producer, bytes, weight, consumers, host_operand_of, h2d_us,
// d2h_us}].
// predicted_us.total is the objective's value (the makespan once
// --tandem-schedule has run), lower_bound_us bounds it and optimal_us is
// `exact`'s optimum of it. predicted_us.serial is recomputable from ops and
// values alone.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_PLACEMENTREPORT_H
#define TANDEM_ANALYSIS_PLACEMENTREPORT_H

#include "tandem/Analysis/PlacementGraph.h"
#include "llvm/Support/JSON.h"

namespace mlir::tandem {

llvm::json::Value makePlacementReport(const PlacementGraph &graph,
                                      const PlacementResult &result,
                                      llvm::StringRef strategy,
                                      PlacementObjective objective,
                                      const DeviceProfile &profile,
                                      llvm::StringRef functionName);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_PLACEMENTREPORT_H
