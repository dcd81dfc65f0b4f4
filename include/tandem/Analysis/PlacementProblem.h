//===- PlacementProblem.h - the two-device placement problem ----*- C++ -*-===//
//
// Placement seen as a graph: ops with a time on each device, and the values
// between them with a transfer time per direction. The semantics (fixed by
// the placement model of docs/placement.md):
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
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tandem {

constexpr double kUnreachable = std::numeric_limits<double>::infinity();
/// The longest time the cost model may give one op (about 3 years): a
/// profile that prices an op beyond it is refused, so that no schedule's sums
/// overflow.
constexpr double kMaxOpUs = 1e14;

struct PlacementOp {
  /// Microseconds per run on each device; kUnreachable where it cannot run.
  double cpuUs = 0, gpuUs = kUnreachable;
  /// The user's fixed choice, if any.
  std::optional<DeviceKind> pin;
  /// Indices into PlacementProblem::values: the operands read on the op's
  /// own device, those read on the host whatever the op's device (the
  /// device contract's host operands), and the results.
  /// Small lists kept inline (no allocation of their own for the usual
  /// one to three entries), so a pass over every op reads them in order.
  llvm::SmallVector<int, 3> operands;
  llvm::SmallVector<int, 0> hostOperands;
  llvm::SmallVector<int, 1> results;
  bool isWeight = false;
  /// A reshape: placed on the GPU, its result is its operand's GPU buffer
  /// (the memory plan gives it no buffer of its own), which then lives until
  /// the result's last use.
  bool aliasesOperand = false;
  /// Scratch GPU memory the op uses while it runs on the GPU (a library's
  /// workspace): a buffer of its own, live at the op's point only.
  int64_t gpuWorkspaceBytes = 0;

  bool canRunOn(DeviceKind kind) const {
    return kind == DeviceKind::CPU ? cpuUs != kUnreachable
                                   : gpuUs != kUnreachable;
  }
  bool isFixed() const { return pin || !canRunOn(DeviceKind::CPU) ||
                                !canRunOn(DeviceKind::GPU); }
  /// For a fixed op, the device it must be on: 0 CPU, 1 GPU.
  uint8_t fixedDevice() const {
    return pin ? *pin == DeviceKind::GPU : !canRunOn(DeviceKind::CPU);
  }
};

struct PlacementValue {
  int64_t bytes = 0;
  /// The producing op, or -1-k for function argument k.
  int producer = -1;
  /// Ops that read it as an ordinary operand (on their own device), sorted
  /// (inline for up to two, as PlacementOp's lists).
  llvm::SmallVector<int, 2> consumers;
  /// Ops that read it on the host, sorted (from their hostOperands).
  llvm::SmallVector<int, 0> hostConsumers;
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

/// What the passes over every value (PlacementProblem::evaluate, the GPU
/// buffers) read of one, packed: a pass over 100k values then reads a few
/// MiB that stay in cache instead of the whole PlacementValue array.
struct PackedPlacementValue {
  int64_t bytes;
  int32_t producer;
  /// Its consumers: PlacementProblem's packed list [firstConsumer,
  /// endConsumer).
  int32_t firstConsumer, endConsumer;
  bool isWeight, neededOnCpu;
  /// Its producer is a reshape (PlacementOp::aliasesOperand).
  bool producedByAlias;
};

/// The values one GPU buffer holds: one, or a value and the GPU reshapes of
/// it that alias its buffer (inline for the one, so listing the buffers of
/// a large graph allocates nothing per buffer).
using BufferMembers = llvm::SmallVector<int, 1>;

class PlacementProblem {
public:
  std::vector<PlacementOp> ops;
  std::vector<PlacementValue> values;
  int64_t gpuBudgetBytes = 0;
  bool hasGpu = true;

  /// Fills in the sorted consumer and host-consumer lists from the ops'
  /// operands, and the packed copy the hot loops read; call after adding
  /// ops and values, and again after changing which values an op reads, a
  /// value's size, producer or flags (weight, result), or which ops are
  /// reshapes (changing pins and times needs no call).
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
  /// GPU reshapes of it that alias its buffer. The GPU ops' workspaces come
  /// last, in op order, holding no value (as --tandem-plan-memory lays them
  /// out).
  std::vector<BufferLifetime>
  gpuBuffers(const Placement &placement,
             std::vector<BufferMembers> *members = nullptr) const;

  /// Appends the workspace buffer of each GPU-placed op that has one.
  void appendWorkspaces(const Placement &placement,
                        std::vector<BufferLifetime> &buffers,
                        std::vector<BufferMembers> *members) const;

  /// The bytes of the GPU arena once the placement's GPU buffers are laid
  /// out (planMemory), as --tandem-plan-memory will lay them out.
  int64_t arenaBytes(const Placement &placement) const;

  /// True if the placement's GPU buffers, laid out, fit the budget: what
  /// the budget bounds. The peak of live bytes is a lower bound of the
  /// arena, checked first because it is cheaper.
  bool fitsBudget(const Placement &placement) const;
  bool fitsBudget(const Placement &placement, const PlacementCost &cost) const {
    return fitsWithin(placement, cost, gpuBudgetBytes);
  }
  /// As fitsBudget, under another budget.
  bool fitsWithin(const Placement &placement, const PlacementCost &cost,
                  int64_t budget) const;
  /// As fitsWithin, for a placement not yet evaluated: its buffers are
  /// collected once, for the peak and the layout both.
  bool fitsWithin(const Placement &placement, int64_t budget) const;

  /// "N bytes of GPU memory": the laid-out arena of a placement, and, when
  /// fragmentation makes it larger than the peak of live bytes, that peak.
  std::string describeGpuMemory(const Placement &placement,
                                const PlacementCost &cost) const;

  /// The placement that keeps everything it may on the CPU: the least GPU
  /// memory any placement can use.
  Placement leastGpuPlacement() const;

  /// Everything on the GPU that can run there and is not pinned to the CPU:
  /// the `all-gpu` baseline.
  Placement mostGpuPlacement() const;

  /// Change in total time if op `op` moved to the other device.
  double flipDeltaUs(int op, Placement &placement) const;

  /// What moving the ops `moved` to the other device changes: the total
  /// time, and the GPU bytes live at `point`. Computed from the values they
  /// touch alone, so far cheaper than two evaluations.
  struct MoveEffect {
    double deltaUs;
    int64_t deltaBytes;
  };
  MoveEffect moveEffect(Placement &placement, llvm::ArrayRef<int> moved,
                        int64_t point) const;

private:
  /// The GPU buffers of the values `indices` (increasing, so a reshape's
  /// result comes after its operand), appended to `buffers`; `bufferOf`
  /// maps a value to its buffer and is filled in; `onUse` sees where each
  /// value is read.
  template <typename Indices, typename BufferOf, typename OnUse>
  void collectGpuBuffers(const Placement &placement, const Indices &indices,
                         BufferOf &bufferOf,
                         std::vector<BufferLifetime> &buffers,
                         std::vector<BufferMembers> *members,
                         OnUse onUse) const;
  /// The GPU bytes the buffers of one alias group keep live at `point`.
  int64_t aliasGroupBytesAt(int group, const Placement &placement,
                            int64_t point) const;

  /// Values that can share one GPU buffer (a value and the reshapes of it,
  /// transitively), by value and by group; filled in by finalize().
  std::vector<int> aliasGroupOf;
  std::vector<std::vector<int>> aliasGroupMembers;
  /// `values` packed, and every value's consumers end to end; filled in
  /// by finalize().
  std::vector<PackedPlacementValue> packedValues;
  std::vector<int32_t> packedConsumers;
};

enum class PlacementStrategy { Auto, Exact, MinCut, Greedy, AllCpu, AllGpu };

std::optional<PlacementStrategy> parsePlacementStrategy(llvm::StringRef name);
llvm::StringRef stringifyPlacementStrategy(PlacementStrategy strategy);

/// What `auto` and `exact` minimize: the serial time (the sum of every op
/// and copy, the program run one op at a time) or the makespan of the
/// schedule --tandem-schedule makes of the placement (the four queues
/// running at once).
enum class PlacementObjective { Serial, Makespan };

std::optional<PlacementObjective> parsePlacementObjective(llvm::StringRef name);
llvm::StringRef stringifyPlacementObjective(PlacementObjective objective);

/// The makespan a placement is priced at under the problem's budget: the
/// queue program --tandem-insert-transfers makes of it, with the widest
/// window for the whole program whose GPU arena fits. --tandem-schedule
/// starts from that window and widens copies where the budget has room, so
/// it predicts this or less.
struct MakespanPrediction {
  double us = 0;
  int64_t window = 1;
};
MakespanPrediction predictMakespan(const PlacementProblem &problem,
                                   const Placement &placement);

struct PlacementResult {
  Placement placement;
  PlacementCost cost;
  /// For `exact`: the proven optimum.
  std::optional<double> optimalUs;
  /// A proven lower bound on the time of every placement within the budget
  /// (for `auto` and `exact`): the unconstrained optimum, the Lagrangian
  /// bound, or what branch and bound left unexplored. Equal to the
  /// placement's time when it is proven optimal.
  std::optional<double> lowerBoundUs;
  /// Under the makespan objective: the predicted makespan of the
  /// placement's schedule, and for `exact` the proven optimum over every
  /// placement and schedule window.
  std::optional<double> makespanUs, optimalMakespanUs;
  /// Statistics, for the curious and the benchmark.
  int minCutSolves = 0;
  int64_t searchNodes = 0;
  /// Placements whose makespan was predicted.
  int64_t makespanEvaluations = 0;
};

/// Limits of the `exact` search.
struct ExactSearchLimits {
  int maxFreeOps = 64;
  int64_t maxNodes = 200000;
  /// Under the makespan objective `exact` branches on each free op.
  int maxMakespanFreeOps = 20;
  /// Under the makespan objective `auto` finishes with exact's branch and
  /// bound, to the end, where at most this many ops are free (0: auto's own
  /// search alone, for tests). It is never cut short: an answer that
  /// depended on where a search stopped could get slower with more memory.
  int autoBranchAndBoundOps = 16;
};

/// No placement fits the budget. Carries the ops that must be on the GPU
/// (pinned there, or able to run only there) and keep memory alive at the
/// peak of the leanest placement, so a tool can name them.
class BudgetError : public llvm::ErrorInfo<BudgetError> {
public:
  static char ID;
  BudgetError(std::string message, std::vector<std::pair<int, int64_t>> ops)
      : message(std::move(message)), opsAtPeak(std::move(ops)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

  std::string message;
  /// (op index, GPU bytes it keeps alive at the peak), largest first.
  std::vector<std::pair<int, int64_t>> opsAtPeak;
};

/// Solves `problem` with `strategy`. The budget bounds the GPU arena once
/// the placement's buffers are laid out (what --tandem-plan-memory does),
/// so `auto`, `exact`, `all-cpu` and `all-gpu` never return a placement
/// over it; `greedy` and `mincut` may (they are baselines that ignore
/// activations, or the budget). Errors: no feasible placement under the
/// budget (a BudgetError naming what the pinned and GPU-only ops need),
/// `all-cpu` or `all-gpu` over budget, `exact` beyond its limits.
///
/// Under the makespan objective, `auto` starts from its serial answer and
/// keeps the placement within the budget whose schedule is predicted
/// fastest among the problem's frontier and local moves from the best of
/// them; `exact` proves the optimum by branch and bound. Every strategy
/// then reports its placement's makespan.
llvm::Expected<PlacementResult>
solvePlacement(const PlacementProblem &problem, PlacementStrategy strategy,
               const ExactSearchLimits &limits = {},
               PlacementObjective objective = PlacementObjective::Serial);

/// The unconstrained optimum of the time plus, if `pointPenalties` is given,
/// a Lagrangian price on GPU memory: every byte certainly live on the GPU
/// at program point t costs pointPenalties[t] microseconds. Exact (to the
/// picosecond) without penalties. `fixed`, if given, forces ops to a device
/// (-1: free, 0: CPU, 1: GPU).
Placement solveMinCut(const PlacementProblem &problem,
                      const std::vector<double> *pointPenalties = nullptr,
                      const std::vector<int8_t> *fixed = nullptr);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_PLACEMENTPROBLEM_H
