//===- Place.cpp - choose a device for every op ---------------------------===//

#include "tandem/Dialect/Tandem/Transforms/Passes.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Support/Format.h"
#include "tandem/Analysis/PlacementGraph.h"
#include "tandem/Analysis/PlacementReport.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Support/OutputFile.h"
#include "tandem/Dialect/Tandem/IR/TandemSchedule.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlir::tandem {
#define GEN_PASS_DEF_PLACE
#include "tandem/Dialect/Tandem/Transforms/Passes.h.inc"
} // namespace mlir::tandem

using namespace mlir;
using namespace mlir::tandem;

namespace {

llvm::StringRef deviceName(bool onGpu) { return onGpu ? "gpu" : "cpu"; }

/// The remark of --tandem-place=explain: where the op went, what it costs on
/// each device, the copies its results need, and what decided it.
void explain(const PlacementGraph &graph, Placement &placement, int index) {
  const PlacementProblem &problem = graph.problem;
  const PlacementOp &op = problem.ops[index];
  bool onGpu = placement[index];
  std::string text;
  llvm::raw_string_ostream os(text);
  auto time = [](double us) {
    return us == kUnreachable ? std::string("n/a")
                              : llvm::formatv("{0:F3} us", us).str();
  };
  os << "on " << deviceName(onGpu) << ": cpu " << time(op.cpuUs) << ", gpu "
     << time(op.gpuUs);
  for (int value : op.results) {
    double us = problem.transferUs(value, placement);
    if (us > 0)
      os << "; its result moves to " << deviceName(!onGpu) << " ("
         << formatBytes(problem.values[value].bytes)
         << llvm::formatv(", {0:F3} us)", us);
  }
  for (int value : op.operands) {
    const PlacementValue &operand = problem.values[value];
    bool producedOnGpu = !operand.isArgument() && placement[operand.producer];
    if (producedOnGpu != onGpu && !(operand.isWeight && !onGpu))
      os << "; reads an operand moved from " << deviceName(producedOnGpu)
         << " (" << formatBytes(operand.bytes) << ")";
  }
  os << "; ";
  if (op.pin) {
    os << "pinned by tandem.pin";
  } else if (!op.canRunOn(onGpu ? DeviceKind::CPU : DeviceKind::GPU)) {
    os << "it can run only on the " << deviceName(onGpu);
  } else {
    double delta = problem.flipDeltaUs(index, placement);
    bool fitsOnGpu = true;
    if (!onGpu) {
      placement[index] = 1;
      fitsOnGpu = problem.fitsBudget(placement);
      placement[index] = 0;
    }
    if (!fitsOnGpu) {
      os << "on the gpu it would not fit the GPU memory budget";
      if (delta != 0)
        os << llvm::formatv(" (and would {0} {1:F3} us)",
                            delta > 0 ? "add" : "save", std::fabs(delta));
    } else if (delta > 0) {
      os << llvm::formatv("moving it to the {0} would add {1:F3} us",
                          deviceName(!onGpu), delta);
    } else if (delta < 0) {
      os << llvm::formatv("the {0} would save {1:F3} us but the GPU memory "
                          "budget binds",
                          deviceName(!onGpu), -delta);
    } else {
      os << "both devices cost the same";
    }
  }
  graph.ops[index]->emitRemark(os.str());
}

struct Place : tandem::impl::PlaceBase<Place> {
  using PlaceBase::PlaceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<DeviceProfile> profile = loadDeviceProfile(deviceProfile);
    if (!profile) {
      module.emitError(llvm::toString(profile.takeError()));
      return signalPassFailure();
    }
    std::optional<PlacementObjective> goal = parsePlacementObjective(objective);
    if (!goal) {
      module.emitError() << "unknown objective '" << objective
                         << "': expected makespan or serial";
      return signalPassFailure();
    }
    std::optional<PlacementStrategy> chosen = parsePlacementStrategy(strategy);
    if (!chosen) {
      module.emitError() << "unknown placement strategy '" << strategy
                         << "': expected auto, exact, mincut, greedy, "
                            "all-cpu or all-gpu";
      return signalPassFailure();
    }
    int64_t budget = profile->gpu ? profile->gpu->memoryBytes : 0;
    if (!gpuMemory.empty()) {
      llvm::Expected<int64_t> parsed = parseByteSize(gpuMemory);
      if (!parsed) {
        module.emitError() << "gpu-memory: "
                           << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      budget = *parsed;
    }

    FunctionOpInterface reported = getReportedFunction(module);
    for (FunctionOpInterface func : getModelFunctions(module)) {
      // Price the IR that will be emitted: fold and merge duplicates first,
      // so no later cleanup changes what the report describes. A function
      // that is already placed is kept as it is.
      if (!isPlaced(func))
        cleanup->run(func);
      // A scheduled function is placed again from its devices; the
      // schedule is made again after the transfers.
      clearSchedule(func);
      FailureOr<PlacementGraph> graph =
          buildPlacementGraph(func, *profile, budget);
      if (failed(graph))
        return signalPassFailure();
      llvm::Expected<PlacementResult> result =
          graph->given ? keepGivenPlacement(*graph, func)
                       : solvePlacement(graph->problem, *chosen, {}, *goal);
      if (!result) {
        reportFailure(*graph, func, result.takeError());
        return signalPassFailure();
      }
      const PlacementProblem &problem = graph->problem;
      if (!problem.fitsBudget(result->placement, result->cost))
        func.emitWarning() << "strategy '" << strategy << "' uses "
                           << problem.describeGpuMemory(result->placement,
                                                        result->cost)
                           << ", over the budget of " << budget << " bytes";

      MLIRContext *context = &getContext();
      for (auto [index, op] : llvm::enumerate(graph->ops))
        op->setAttr(TandemDialect::kDeviceAttrName,
                    result->placement[index] ? DeviceAttr::getGPU(context)
                                             : DeviceAttr::getCPU(context));
      func->setAttr(TandemDialect::kGpuMemoryBudgetAttrName,
                    IntegerAttr::get(IntegerType::get(context, 64), budget));
      if (explain)
        for (size_t index = 0; index < graph->ops.size(); ++index)
          ::explain(*graph, result->placement, index);
      llvm::StringRef strategyName =
          graph->given ? "given" : stringifyPlacementStrategy(*chosen);
      if (!report.empty() && func == reported &&
          failed(writeReport(*graph, *result, strategyName, *goal, *profile,
                             func)))
        return signalPassFailure();
    }
  }

  LogicalResult initialize(MLIRContext *context) override {
    cleanup.emplace(context);
    return success();
  }

  /// An already placed function keeps its devices: priced as it is, and
  /// refused if it does not fit the budget.
  llvm::Expected<PlacementResult>
  keepGivenPlacement(const PlacementGraph &graph, FunctionOpInterface func) {
    const PlacementProblem &problem = graph.problem;
    PlacementResult result;
    result.placement = *graph.given;
    result.cost = problem.evaluate(result.placement);
    if (!problem.fitsBudget(result.placement, result.cost))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("it is already placed, and its placement needs {0}, "
                        "over the budget of {1} bytes",
                        problem.describeGpuMemory(result.placement,
                                                  result.cost),
                        problem.gpuBudgetBytes));
    return result;
  }

  /// The solver's error on the function; for a placement over the budget, a
  /// note on each op that keeps the most GPU memory alive at its peak.
  void reportFailure(const PlacementGraph &graph, FunctionOpInterface func,
                     llvm::Error error) {
    llvm::handleAllErrors(
        std::move(error),
        [&](const BudgetError &budgetError) {
          InFlightDiagnostic diag = func.emitError()
                                    << "cannot place @" << func.getName()
                                    << ": " << budgetError.message;
          constexpr size_t kMaxNotes = 8;
          for (auto [op, bytes] : llvm::ArrayRef(budgetError.opsAtPeak)
                                      .take_front(kMaxNotes)) {
            const PlacementOp &placed = graph.problem.ops[op];
            Diagnostic &note =
                diag.attachNote(graph.ops[op]->getLoc());
            if (placed.pin == DeviceKind::GPU)
              note << "pinned to the GPU, ";
            else if (!placed.canRunOn(DeviceKind::CPU))
              note << "able to run only on the GPU, ";
            note << "it keeps " << bytes << " bytes (" << formatBytes(bytes)
                 << ") alive at the peak";
          }
        },
        [&](const llvm::ErrorInfoBase &other) {
          func.emitError() << "cannot place @" << func.getName() << ": "
                           << other.message();
        });
  }

  std::optional<PrePlacementCleanup> cleanup;

  LogicalResult writeReport(const PlacementGraph &graph,
                            const PlacementResult &result,
                            llvm::StringRef strategyName,
                            PlacementObjective goal,
                            const DeviceProfile &profile,
                            FunctionOpInterface func) {
    llvm::json::Value json = makePlacementReport(
        graph, result, strategyName, goal, profile, func.getName());
    if (llvm::Error error = writeFileAtomically(
            report, [&](llvm::raw_ostream &os) {
              os << llvm::formatv("{0:2}\n", json);
            }))
      return func.emitError()
             << "placement report: " << llvm::toString(std::move(error));
    return success();
  }
};

} // namespace

SmallVector<FunctionOpInterface> tandem::getModelFunctions(ModuleOp module) {
  SmallVector<FunctionOpInterface> functions;
  for (auto func : module.getOps<FunctionOpInterface>())
    if (!func.isExternal())
      functions.push_back(func);
  return functions;
}

FunctionOpInterface tandem::getReportedFunction(ModuleOp module) {
  // An at-load function (--tandem-fold-at-load) is part of its model.
  SmallVector<FunctionOpInterface> functions;
  for (FunctionOpInterface func : getModelFunctions(module))
    if (!func->hasAttr(TandemDialect::kAtLoadAttrName))
      functions.push_back(func);
  for (FunctionOpInterface func : functions)
    if (func.getName() == "main")
      return func;
  return functions.size() == 1 ? functions.front() : FunctionOpInterface();
}
