//===- PlacementProblem.h - the two-device placement problem ----*- C++ -*-===//
//
// Placement seen as a graph: ops with a time on each device, and the values
// between them with a transfer time per direction. The semantics (fixed by
// DESIGN.md §3 and issue 3):
//
// - function arguments arrive on the CPU; results are returned on the CPU;
// - a host operand is read on the CPU whatever its consumer's device;
// - a value moves at most once per destination device, right after its
//   producer, however many consumers it has there;
// - a weight is always readable on the CPU (the weights file is mapped in
//   host memory); on the GPU it is either resident (the weight op placed on
//   the GPU: uploaded once, no per-run cost, GPU memory for the whole run) or
//   streamed (the weight op on the CPU: one transfer per run, GPU memory from
//   the transfer to its last GPU consumer).
//
// Program points, for GPU memory: argument transfers happen at point 0, op i
// runs at point 2i+1 and the transfers of its results happen at point 2i+2.
// A buffer is live from the point that writes it to the last point that
// reads it, inclusive. This is exactly the order --tandem-insert-transfers
// produces, so the peak here is the peak --tandem-plan-memory sees.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_PLACEMENTPROBLEM_H
#define TANDEM_ANALYSIS_PLACEMENTPROBLEM_H

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Analysis/MemoryPlanner.h"
#include "tandem/Dialect/Tandem/IR/TandemAttrs.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tandem {

constexpr double kUnreachable = std::numeric_limits<double>::infinity();

struct PlacementOp {
  /// Microseconds per run on each device; kUnreachable where it cannot run.
  double cpuUs = 0, gpuUs = kUnreachable;
  /// The user's fixed choice, if any.
  std::optional<DeviceKind> pin;
  /// Indices into PlacementProblem::values.
  std::vector<int> operands, results;
  bool isWeight = false;
  /// A reshape: placed on the GPU, its result is its operand's GPU buffer
  /// (the memory plan gives it no buffer of its own), which then lives until
  /// the result's last use.
  bool aliasesOperand = false;

  bool canRunOn(DeviceKind kind) const {
    return kind == DeviceKind::CPU ? cpuUs != kUnreachable
                                   : gpuUs != kUnreachable;
  }
  bool isFixed() const { return pin || !canRunOn(DeviceKind::CPU) ||
                                !canRunOn(DeviceKind::GPU); }
};

struct PlacementValue {
  int64_t bytes = 0;
  /// The producing op, or -1-k for function argument k.
  int producer = -1;
  /// Ops that read it as an ordinary operand (on their own device), sorted.
  std::vector<int> consumers;
  /// Ops that read it on the host, sorted.
  std::vector<int> hostConsumers;
  bool isResult = false;
  bool isWeight = false;
  double h2dUs = 0, d2hUs = 0;

  bool isArgument() const { return producer < 0; }
  /// Read on the CPU whatever the placement.
  bool neededOnCpu() const { return isResult || !hostConsumers.empty(); }
};

/// Device of each op: 0 = CPU, 1 = GPU.
using Placement = std::vector<uint8_t>;

struct PlacementCost {
  double cpuComputeUs = 0, gpuComputeUs = 0, transferUs = 0;
  int64_t h2dCount = 0, d2hCount = 0, h2dBytes = 0, d2hBytes = 0;
  /// Most GPU bytes live at one program point, and that point.
  int64_t peakGpuBytes = 0;
  int64_t peakPoint = 0;

  double totalUs() const { return cpuComputeUs + gpuComputeUs + transferUs; }
};

class PlacementProblem {
public:
  std::vector<PlacementOp> ops;
  std::vector<PlacementValue> values;
  int64_t gpuBudgetBytes = 0;
  bool hasGpu = true;

  /// Fills in sorted consumer lists; call after adding ops and values.
  void finalize();

  int64_t getNumPoints() const { return 2 * int64_t(ops.size()) + 1; }

  /// Total time and GPU memory of a placement; `livePerPoint`, if given,
  /// receives the GPU bytes live at each program point.
  PlacementCost evaluate(const Placement &placement,
                         std::vector<int64_t> *livePerPoint = nullptr) const;

  /// Transfer time of one value under a placement.
  double transferUs(int value, const Placement &placement) const;

  /// The GPU buffers of a placement with their lifetimes; `members`, if
  /// given, receives the values each buffer holds: one, or a value and the
  /// GPU reshapes of it that alias its buffer.
  std::vector<BufferLifetime>
  gpuBuffers(const Placement &placement,
             std::vector<std::vector<int>> *members = nullptr) const;

  /// True if the placement fits the GPU budget.
  bool fitsBudget(const Placement &placement) const {
    return evaluate(placement).peakGpuBytes <= gpuBudgetBytes;
  }

  /// The placement that keeps everything it may on the CPU: the least GPU
  /// memory any placement can use.
  Placement leastGpuPlacement() const;

  /// Change in total time if op `op` moved to the other device.
  double flipDeltaUs(int op, Placement &placement) const;
};

enum class PlacementStrategy { Auto, Exact, MinCut, Greedy, AllCpu, AllGpu };

std::optional<PlacementStrategy> parsePlacementStrategy(llvm::StringRef name);
llvm::StringRef stringifyPlacementStrategy(PlacementStrategy strategy);

struct PlacementResult {
  Placement placement;
  PlacementCost cost;
  /// For `exact`: the proven optimum.
  std::optional<double> optimalUs;
  /// Statistics, for the curious and the benchmark.
  int minCutSolves = 0;
  int64_t searchNodes = 0;
};

/// Limits of the `exact` search.
struct ExactSearchLimits {
  int maxFreeOps = 64;
  int64_t maxNodes = 200000;
};

/// Solves `problem` with `strategy`, the budget bounding the peak of live
/// GPU bytes. Errors: no feasible placement under the budget (naming the
/// least GPU memory needed), `all-gpu` over budget, `exact` beyond its
/// limits.
llvm::Expected<PlacementResult>
solvePlacement(const PlacementProblem &problem, PlacementStrategy strategy,
               const ExactSearchLimits &limits = {});

/// As solvePlacement, then lays the GPU buffers out (planMemory) and, for
/// `auto` and `exact`, when fragmentation makes the arena overshoot the
/// budget, tightens the peak budget by the overshoot and solves again. What
/// --tandem-place uses: its placements always plan within the budget.
llvm::Expected<PlacementResult>
solvePlacementWithinArena(const PlacementProblem &problem,
                          PlacementStrategy strategy,
                          const ExactSearchLimits &limits = {});

/// The unconstrained optimum of the time plus, if `pointPenalties` is given,
/// a Lagrangian price on GPU memory: every byte live on the GPU at program
/// point t costs pointPenalties[t] microseconds. Exact (to the nanosecond)
/// without penalties. `fixed`, if given, forces ops to a device (-1: free,
/// 0: CPU, 1: GPU).
Placement solveMinCut(const PlacementProblem &problem,
                      const std::vector<double> *pointPenalties = nullptr,
                      const std::vector<int8_t> *fixed = nullptr);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_PLACEMENTPROBLEM_H
