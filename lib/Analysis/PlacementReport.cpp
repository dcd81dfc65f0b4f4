//===- PlacementReport.cpp - the JSON placement report --------------------===//

#include "tandem/Analysis/PlacementReport.h"

#include "tandem/Analysis/MakespanBound.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Support/Format.h"

using namespace mlir;
using namespace mlir::tandem;
using llvm::json::Array;
using llvm::json::Object;
using JSONValue = llvm::json::Value;

static JSONValue timeOrNull(double us) {
  return us == kUnreachable ? JSONValue(nullptr) : JSONValue(us);
}

llvm::json::Value tandem::makePlacementReport(const PlacementGraph &graph,
                                              const PlacementResult &result,
                                              llvm::StringRef strategy,
                                              PlacementObjective objective,
                                              const DeviceProfile &profile,
                                              llvm::StringRef functionName) {
  const PlacementProblem &problem = graph.problem;
  const PlacementCost &cost = result.cost;

  Array ops;
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    ops.push_back(Object{
        {"id", int64_t(index)},
        {"name", displayName(graph.ops[index])},
        {"loc", formatLocation(graph.ops[index]->getLoc())},
        {"device", result.placement[index] ? "gpu" : "cpu"},
        {"pinned", op.pin.has_value()},
        {"cpu_us", timeOrNull(op.cpuUs)},
        {"gpu_us", timeOrNull(op.gpuUs)}});
  }

  Array values;
  for (auto [index, value] : llvm::enumerate(problem.values)) {
    Array consumers;
    for (int consumer : value.consumers)
      consumers.push_back(consumer);
    if (value.isResult)
      consumers.push_back(-1);
    Array hostConsumers;
    for (int consumer : value.hostConsumers)
      hostConsumers.push_back(consumer);
    // A weight is readable on the host wherever it is placed: it never
    // needs a device-to-host copy.
    double d2hUs = value.isWeight ? 0.0 : value.d2hUs;
    values.push_back(Object{{"id", int64_t(index)},
                            {"producer", value.producer},
                            {"bytes", value.bytes},
                            {"weight", value.isWeight},
                            {"consumers", std::move(consumers)},
                            {"host_operand_of", std::move(hostConsumers)},
                            {"h2d_us", value.h2dUs},
                            {"d2h_us", d2hUs}});
  }

  auto orNull = [](std::optional<double> us) {
    return us ? JSONValue(*us) : JSONValue(nullptr);
  };
  double makespan = result.makespanUs
                        ? *result.makespanUs
                        : predictMakespan(problem, result.placement).us;
  int64_t arena = problem.arenaBytes(result.placement);
  std::optional<double> fittingUs;
  if (arena <= problem.gpuBudgetBytes || !problem.hasGpu)
    fittingUs = makespan;
  MakespanBound bound =
      computeMakespanBound(problem, BoundEffort::Exhaustive, fittingUs);
  bool bySerial = objective == PlacementObjective::Serial;
  return Object{
      {"strategy", strategy},
      {"objective", stringifyPlacementObjective(objective)},
      {"device_profile", profile.name},
      // Which figures priced the ops: users should see at once whether the
      // profile was calibrated on their machine.
      {"cost_model",
       Object{{"source", profile.source},
              {"cpu_families", profile.cpu.familySource},
              {"gpu_families", profile.gpu ? JSONValue(profile.gpu->familySource)
                                           : JSONValue(nullptr)}}},
      {"function", functionName},
      {"gpu_memory_budget_bytes", problem.gpuBudgetBytes},
      {"peak_gpu_bytes", cost.peakGpuBytes},
      {"gpu_arena_bytes", arena},
      {"predicted_us", Object{{"total", bySerial ? cost.totalUs() : makespan},
                              {"serial", cost.totalUs()},
                              {"makespan", makespan},
                              {"cpu_compute", cost.cpuComputeUs},
                              {"gpu_compute", cost.gpuComputeUs},
                              {"transfer", cost.transferUs}}},
      {"optimal_us",
       orNull(bySerial ? result.optimalUs : result.optimalMakespanUs)},
      {"lower_bound_us",
       bySerial ? orNull(result.lowerBoundUs) : JSONValue(bound.us())},
      {"serial_lower_bound_us", orNull(result.lowerBoundUs)},
      {"makespan_lower_bound_us", bound.us()},
      {"makespan_bound_terms_us",
       Object{{"chain", bound.chainUs},
              {"load", bound.loadUs},
              {"memory", bound.memoryUs},
              {"placements", orNull(bound.placementsUs)}}},
      {"transfers", Object{{"h2d_count", cost.h2dCount},
                           {"d2h_count", cost.d2hCount},
                           {"h2d_bytes", cost.h2dBytes},
                           {"d2h_bytes", cost.d2hBytes}}},
      {"ops", std::move(ops)},
      {"values", std::move(values)}};
}
