//===- PlacementMakespan.cpp - placement for the schedule's makespan ------===//
//
// Under the makespan objective a placement is priced by the schedule
// --tandem-schedule will make of it: the same QueueProgram, built from the
// problem instead of the IR, with the widest window whose GPU arena fits.
// The pass then widens copies where the budget has room, which can only
// shorten it: the price is what the emitted schedule takes at most.
//
// `auto` prices every point of the problem's frontier whose arena fits the
// budget: placements that keep less on the GPU leave memory for streamed
// weights to be prefetched, and put work on the CPU that can run beside the
// GPU. Each is offered with a ladder of its largest resident weights
// streamed instead (room for prefetching, within the point's own memory);
// so is every placement greedy can return. At a ladder of memory levels
// taken from the problem alone, the best of these within the level is
// improved by local moves (an op to the other device, alone or with the
// weights only it reads) while they shorten the makespan within the level.
// The budget decides only how many levels are searched (up to the first
// above it: every placement a search there steps through that fits the
// budget is a candidate) and the final pricing, so a larger budget only adds
// candidates and widens windows: `auto` is never slower with more memory.
// A move is first priced
// with no window at all (only data orders the queues), a bound below its
// makespan under any window, so most moves cost one simulation. The effort
// is rationed by the size of the program, so placement stays near-linear.
//
// `exact` is a branch and bound over the free ops (up to
// ExactSearchLimits::maxMakespanFreeOps) in program order: a node fixes the
// ops decided so far as pins and is pruned when the makespan bound of that
// problem (MakespanBound.h) is no better than the best placement found; a
// leaf is priced as above. It ends with the optimum over placements and
// windows of the schedule's block order.
//
//===----------------------------------------------------------------------===//

#include "PlacementFrontier.h"
#include "PlacementSearch.h"

#include "tandem/Analysis/MakespanBound.h"
#include "tandem/Analysis/QueueProgramBuilder.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Parallel.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <random>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::search;

namespace {

/// The makespan of `program` (a placement's queue program; its waits are
/// chosen here) with the widest window that fits `budget`.
MakespanPrediction predictWithin(const PlacementProblem &problem,
                                 QueueProgram &program, int64_t budget,
                                 int64_t hintWindow = 0) {
  std::optional<int64_t> limit;
  if (problem.hasGpu)
    limit = budget;
  // Copies are not widened here: the widening is greedy, so with a larger
  // budget it can end slower, and the search promises never to. The pass
  // widens the chosen placement's copies, which only shortens its schedule.
  WindowChoice choice = chooseScheduleWindow(
      program, limit, getDefaultScheduleWindows(), hintWindow,
      /*wideningEffort=*/0);
  return {choice.makespanUs, choice.window};
}

MakespanPrediction predictWithin(const PlacementProblem &problem,
                                 const Placement &placement, int64_t budget,
                                 int64_t hintWindow = 0) {
  QueueProgram program = buildQueueProgram(problem, placement);
  return predictWithin(problem, program, budget, hintWindow);
}

} // namespace

MakespanPrediction tandem::predictMakespan(const PlacementProblem &problem,
                                           const Placement &placement) {
  return predictWithin(problem, placement, problem.gpuBudgetBytes);
}

namespace {

/// Improvements below this share of the makespan are noise, not progress.
constexpr double kRelativeEpsilon = 1e-9;

/// The fastest schedule found among the placements offered, all judged
/// within one GPU budget.
class MakespanSearch {
public:
  MakespanSearch(const PlacementProblem &problem, int64_t budget)
      : problem(problem), budget(budget) {}

  /// The makespan of a placement's queue `program` with only data ordering
  /// the queues (its waits are replaced): no window makes it shorter.
  double unwindowedUs(QueueProgram &program) {
    spend(1);
    program.chooseWaits(kUnboundedWindow);
    return simulateQueueProgram(program).makespanUs;
  }

  /// Takes `placement` if it fits the budget and its schedule is faster
  /// than the best so far.
  /// Of equal makespans, the one with less work in all (the serial time)
  /// wins: it leaves the queues more room for the next move.
  bool offer(const Placement &placement) {
    // Built once for both the quick test and the windows.
    std::optional<QueueProgram> program;
    double quickUs = 0;
    if (found()) {
      program = buildQueueProgram(problem, placement);
      quickUs = unwindowedUs(*program);
      if (quickUs > tieThreshold())
        return false;
    }
    spend(2);
    PlacementCost cost = problem.evaluate(placement);
    // No window makes it faster than with none: a tie it loses on work is
    // lost before its windows are tried.
    if (program && !wouldWin(quickUs, cost.totalUs()))
      return false;
    if (problem.hasGpu && !problem.fitsWithin(placement, cost, budget))
      return false;
    spend(3);
    ++evaluations;
    if (!program)
      program = buildQueueProgram(problem, placement);
    MakespanPrediction predicted =
        predictWithin(problem, *program, budget, bestWindow);
    double us = predicted.us;
    if (!wouldWin(us, cost.totalUs()))
      return false;
    best = placement;
    if (archive)
      archive->push_back(placement);
    bestUs = us;
    bestSerialUs = cost.totalUs();
    bestWindow = predicted.window;
    return true;
  }

  using Priced = PricedPlacement;
  static Priced price(const PlacementProblem &problem,
                      const Placement &placement) {
    Priced priced;
    priced.placement = placement;
    QueueProgram program = buildQueueProgram(problem, placement);
    program.chooseWaits(kUnboundedWindow);
    priced.unwindowedUs = simulateQueueProgram(program).makespanUs;
    PlacementCost cost = problem.evaluate(placement);
    priced.serialUs = cost.totalUs();
    priced.peak = problem.hasGpu ? cost.peakGpuBytes : 0;
    if (!problem.hasGpu)
      priced.arena = 0;
    return priced;
  }

  /// offer() for a placement priced already: only its windows are left.
  bool offer(Priced &priced) {
    if (!wouldWin(priced.unwindowedUs, priced.serialUs))
      return false;
    if (priced.peak > budget)
      return false;
    if (priced.arena < 0) {
      spend(2);
      priced.arena = problem.arenaBytes(priced.placement);
    }
    if (priced.arena > budget)
      return false;
    spend(3);
    ++evaluations;
    MakespanPrediction predicted =
        predictWithin(problem, priced.placement, budget, bestWindow);
    double us = predicted.us;
    if (!wouldWin(us, priced.serialUs))
      return false;
    best = priced.placement;
    bestUs = us;
    bestSerialUs = priced.serialUs;
    bestWindow = predicted.window;
    return true;
  }

  /// Offers `candidates` (sorted by their unwindowed makespan) until the
  /// rest cannot beat the best, or until `limit` of them fit.
  void offerAll(std::vector<Priced> &candidates, size_t limit = SIZE_MAX) {
    size_t fitting = 0;
    for (Priced &candidate : candidates) {
      if (found() && candidate.unwindowedUs > tieThreshold())
        break;
      if (candidate.peak > budget)
        continue;
      if (fitting++ == limit)
        break;
      offer(candidate);
    }
  }

  bool found() const { return !best.empty(); }
  bool exhausted() const { return work >= allowance; }
  /// Sets the work this search may do, in simulations of the program.
  void allow(int64_t simulations) { allowance = work + simulations; }

  /// Local moves from the best placement while they improve it.
  void improveLocally();
  /// Iterated local search: from the best, a few ops moved at random, then
  /// local moves; kept if better; until the allowance is spent. The
  /// generator is seeded by the caller, so the search is deterministic.
  void perturbAndImprove(uint64_t seed);

  const PlacementProblem &problem;
  /// What every placement offered must fit, and the windows are chosen in.
  const int64_t budget;
  /// If set, receives every placement offer() takes (local search's path).
  std::vector<Placement> *archive = nullptr;
  Placement best;
  double bestUs = 0, bestSerialUs = 0;
  int64_t bestWindow = 0; // its schedule's window: the next one's hint
  int64_t evaluations = 0;

private:
  /// Whether a placement with makespan `us` and serial time `serialUs`
  /// beats the best so far: faster, or as fast with less work in all.
  bool wouldWin(double us, double serialUs) const {
    return !found() || (us <= tieThreshold() &&
                        (us < threshold() ||
                         serialUs < bestSerialUs * (1 - kRelativeEpsilon)));
  }
  double threshold() const { return bestUs * (1 - kRelativeEpsilon); }
  double tieThreshold() const { return bestUs * (1 + kRelativeEpsilon); }
  void spend(int64_t simulations) { work += simulations; }

  int64_t work = 0, allowance = INT64_MAX;
};

void MakespanSearch::improveLocally() {
  // The weights each op reads that only it reads: moving the op with them
  // keeps a weight from staying resident for a reader that left.
  std::vector<std::vector<int>> ownWeights(problem.ops.size());
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    if (op.isWeight || op.isFixed())
      continue;
    for (int value : op.operands) {
      const PlacementValue &operand = problem.values[value];
      if (operand.isWeight && operand.consumers.size() == 1 &&
          !problem.ops[operand.producer].isFixed())
        ownWeights[index].push_back(operand.producer);
    }
  }
  // Moves of `index`: the op alone; with its own weights; with its readers
  // that are on its device; with its producers that are on its device
  // (a group that moves together pays no copies between its members).
  auto tryMoves = [&](int index) {
    auto move = [&](Placement &moved, int op, uint8_t to) {
      if (problem.ops[op].isFixed())
        return;
      moved[op] = to;
      for (int weight : ownWeights[op])
        moved[weight] = to;
    };
    uint8_t from = best[index], to = from ^ 1;
    Placement moved = best;
    moved[index] = to;
    if (offer(moved))
      return true;
    move(moved, index, to);
    if (moved != best && offer(moved))
      return true;
    Placement readers = moved;
    for (int value : problem.ops[index].results)
      for (int consumer : problem.values[value].consumers)
        if (best[consumer] == from)
          move(readers, consumer, to);
    if (readers != moved && offer(readers))
      return true;
    Placement producers = moved;
    for (int value : problem.ops[index].operands) {
      const PlacementValue &operand = problem.values[value];
      if (!operand.isArgument() && !operand.isWeight &&
          best[operand.producer] == from)
        move(producers, operand.producer, to);
    }
    return producers != moved && offer(producers);
  };
  bool improved = true;
  while (improved && !exhausted()) {
    improved = false;
    for (size_t index = 0; index < problem.ops.size() && !exhausted();
         ++index) {
      const PlacementOp &op = problem.ops[index];
      if (op.isFixed() || op.isWeight)
        continue;
      improved |= tryMoves(index);
    }
    // A weight alone: resident or streamed.
    for (size_t index = 0; index < problem.ops.size() && !exhausted();
         ++index) {
      const PlacementOp &op = problem.ops[index];
      if (op.isFixed() || !op.isWeight)
        continue;
      Placement moved = best;
      moved[index] ^= 1;
      improved |= offer(moved);
    }
    if (improved)
      continue;
    // Stuck: two ops at once, where the graph is small enough (a step
    // through a worse placement that single moves cannot take).
    constexpr size_t kMaxPairOps = 64;
    std::vector<int> movable;
    for (auto [index, op] : llvm::enumerate(problem.ops))
      if (!op.isFixed() && !op.isWeight)
        movable.push_back(index);
    if (movable.size() > kMaxPairOps)
      break;
    for (size_t a = 0; a < movable.size() && !improved && !exhausted(); ++a)
      for (size_t b = a + 1; b < movable.size() && !improved && !exhausted();
           ++b) {
        Placement moved = best;
        moved[movable[a]] ^= 1;
        moved[movable[b]] ^= 1;
        improved = offer(moved);
      }
  }
}

void MakespanSearch::perturbAndImprove(uint64_t seed) {
  std::vector<int> movable;
  for (auto [index, op] : llvm::enumerate(problem.ops))
    if (!op.isFixed())
      movable.push_back(index);
  if (movable.empty() || !found())
    return;
  std::mt19937_64 random(seed);
  constexpr int kMaxKicks = 160;
  for (int kick = 0; kick < kMaxKicks && !exhausted(); ++kick) {
    MakespanSearch trial(problem, budget);
    trial.allowance = allowance - work;
    Placement kicked = best;
    int moves = 2 + int(random() % 3);
    for (int k = 0; k < moves; ++k)
      kicked[movable[random() % movable.size()]] ^= 1;
    trial.offer(kicked);
    if (trial.found())
      trial.improveLocally();
    work += trial.work;
    evaluations += trial.evaluations;
    if (trial.found())
      offer(trial.best);
  }
}

/// Which rungs a streaming ladder has (see streamingLadder).
enum class LadderRungs {
  /// Its 1, 2, 4, ... largest resident weights streamed, then all: dense
  /// near the placement's own residency.
  FromResident,
  /// All but a half, a quarter, an eighth and a sixteenth of them streamed,
  /// then all: dense near streaming everything, for large graphs whose
  /// frontier has no ladders of its own.
  FromStreamed,
};

/// The placement with its largest free resident weights streamed instead,
/// more at each rung: each trades resident bytes for memory a prefetch
/// window can use, and needs no more memory in program order than the
/// placement itself (a streamed weight lives from its copy to its last
/// reader, a resident one for the whole run).
std::vector<Placement> streamingLadder(const PlacementProblem &problem,
                                       const Placement &placement,
                                       LadderRungs rungs) {
  std::vector<int> resident;
  for (auto [index, op] : llvm::enumerate(problem.ops))
    if (op.isWeight && !op.isFixed() && placement[index])
      resident.push_back(index);
  auto bytesOf = [&](int op) {
    int64_t bytes = 0;
    for (int value : problem.ops[op].results)
      bytes += problem.values[value].bytes;
    return bytes;
  };
  // Largest first; of equal ones, the later first (the earlier a weight is
  // read, the less time its copy has to hide behind).
  llvm::stable_sort(resident, [&](int a, int b) {
    int64_t bytesA = bytesOf(a), bytesB = bytesOf(b);
    return bytesA != bytesB ? bytesA > bytesB : a > b;
  });
  std::vector<size_t> counts;
  size_t all = resident.size();
  if (rungs == LadderRungs::FromResident) {
    for (size_t count = 1; count < all; count *= 2)
      counts.push_back(count);
  } else {
    for (size_t kept = all / 2; kept >= 1 && counts.size() < 4; kept /= 2)
      counts.push_back(all - kept);
  }
  if (all > 0)
    counts.push_back(all);
  std::vector<Placement> ladder;
  Placement variant = placement;
  size_t streamed = 0;
  for (size_t count : counts) {
    if (count <= streamed)
      continue;
    for (; streamed < count; ++streamed)
      variant[resident[streamed]] = 0;
    ladder.push_back(variant);
  }
  return ladder;
}

/// The branch and bound prices its nodes near the root with the full bound
/// (where pruning saves most), deeper with the quick one.
constexpr size_t kFullBoundDepth = 6;

/// The branch and bound of `exact`: returns false if it stopped at
/// `maxNodes` before proving the optimum.
bool branchAndBound(MakespanSearch &search, llvm::ArrayRef<int> freeOps,
                    int64_t maxNodes, int64_t &nodes) {
  auto prune = [&](const PlacementProblem &pinned, size_t depth) {
    return search.found() &&
           computeMakespanBound(pinned, depth < kFullBoundDepth
                                            ? BoundEffort::Full
                                            : BoundEffort::Quick)
                   .us() >= search.bestUs * (1 - 1e-9);
  };
  auto leaf = [&](const Placement &placement) { search.offer(placement); };
  // The best placement's device first: it finds good leaves early.
  auto firstDevice = [&](int op) {
    return search.found() ? search.best[op] : uint8_t(1);
  };
  return searchPinnedPlacements(search.problem, freeOps, maxNodes, nodes,
                                prune, leaf, firstDevice);
}

/// Earliest-finish-time list scheduling in program order (as HEFT does
/// with a fixed order): each op goes to the device where, given the queues
/// so far and the copies its operands would need, it finishes first.
/// Weights are resident for their GPU readers (memory is not looked at),
/// views stay with their operand. Its own timeline is an estimate; the
/// placement is priced like any other.
Placement earliestFinishPlacement(const PlacementProblem &problem) {
  Placement placement(problem.ops.size(), 0);
  // Per value: when it is ready on each device (kUnreachable: not there).
  std::vector<std::array<double, 2>> ready(problem.values.size(),
                                           {kUnreachable, kUnreachable});
  std::array<double, 4> queueFree{}; // cpu, gpu, h2d, d2h
  auto copyQueue = [](int to) { return to ? 2 : 3; };
  auto copyUs = [&](int value, int to) {
    return to ? problem.values[value].h2dUs : problem.values[value].d2hUs;
  };
  // When `value` would be ready on `device`, copying it there if need be;
  // commits the copy when `commit`.
  auto readyOn = [&](int value, int device, std::array<double, 4> &queues,
                     bool commit) {
    if (ready[value][device] != kUnreachable)
      return ready[value][device];
    int queue = copyQueue(device);
    double start = std::max(queues[queue], ready[value][1 - device]);
    double end = start + copyUs(value, device);
    queues[queue] = end;
    if (commit)
      ready[value][device] = end;
    return end;
  };
  for (auto [index, value] : llvm::enumerate(problem.values))
    if (value.isArgument())
      ready[index][0] = 0;
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    if (op.isWeight) {
      // Readable anywhere: mapped on the host, resident on the GPU.
      for (int value : op.results)
        ready[value] = {0, 0};
      continue;
    }
    if (op.aliasesOperand) {
      int source = op.operands.front();
      int device = ready[source][1] < ready[source][0] ? 1 : 0;
      placement[index] = device;
      for (int value : op.results)
        ready[value] = ready[source];
      continue;
    }
    std::array<double, 2> finish{kUnreachable, kUnreachable};
    for (int device = 0; device < 2; ++device) {
      DeviceKind kind = device ? DeviceKind::GPU : DeviceKind::CPU;
      if (!op.canRunOn(kind) || (op.pin && *op.pin != kind))
        continue;
      std::array<double, 4> queues = queueFree;
      double start = queues[device];
      for (int value : op.operands)
        start = std::max(start, readyOn(value, device, queues, false));
      for (int value : op.hostOperands)
        start = std::max(start, readyOn(value, 0, queues, false));
      finish[device] = start + (device ? op.gpuUs : op.cpuUs);
    }
    int device = finish[1] < finish[0] ? 1 : 0;
    placement[index] = device;
    for (int value : op.operands)
      readyOn(value, device, queueFree, true);
    for (int value : op.hostOperands)
      readyOn(value, 0, queueFree, true);
    queueFree[device] = finish[device];
    for (int value : op.results) {
      ready[value] = {kUnreachable, kUnreachable};
      ready[value][device] = finish[device];
    }
  }
  // A weight goes where its readers are: resident if one is on the GPU.
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    if (!op.isWeight || op.isFixed())
      continue;
    bool gpuReader = false;
    for (int value : op.results)
      for (int consumer : problem.values[value].consumers)
        gpuReader |= placement[consumer] == 1;
    placement[index] = gpuReader;
  }
  for (auto [index, op] : llvm::enumerate(problem.ops))
    if (op.isFixed())
      placement[index] = op.fixedDevice();
  return placement;
}

/// An upper bound on any placement's GPU arena: every buffer and workspace
/// at once.
int64_t everyBufferBytes(const PlacementProblem &problem) {
  int64_t bytes = 0;
  for (const PlacementValue &value : problem.values)
    bytes += alignBufferSize(value.bytes);
  for (const PlacementOp &op : problem.ops)
    bytes += alignBufferSize(op.gpuWorkspaceBytes);
  return bytes;
}

/// The memory levels local search runs at: the frontier's arenas (at most
/// 16 of them, evenly spread), a geometric grid below the one level that
/// every placement fits (each a fifth below the next, down to a quarter of
/// the smallest frontier arena above zero), and that level. They depend on the problem alone, never on its
/// budget.
std::vector<int64_t> searchLevels(const PlacementProblem &problem,
                                  const Frontier &frontier) {
  constexpr size_t kMaxFrontierLevels = 16;
  constexpr int kMaxGridLevels = 96;
  constexpr double kGridRatio = 1.1;
  std::vector<int64_t> arenas;
  for (const FrontierPoint &point : frontier.getPoints())
    if (arenas.empty() || arenas.back() != point.arena)
      arenas.push_back(point.arena);
  std::vector<int64_t> levels;
  size_t kept = std::min(arenas.size(), kMaxFrontierLevels);
  for (size_t k = 0; k < kept; ++k)
    levels.push_back(arenas[k * arenas.size() / kept]);
  int64_t every = everyBufferBytes(problem);
  int64_t smallest = every;
  for (int64_t arena : arenas)
    if (arena > 0)
      smallest = std::min(smallest, arena);
  double level = double(every);
  for (int step = 0; step < kMaxGridLevels && level >= double(smallest) / 4;
       ++step, level /= kGridRatio)
    levels.push_back(int64_t(level));
  levels.push_back(every);
  llvm::sort(levels);
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  return levels;
}

/// `auto` under the makespan objective, into `search` (judged at the
/// problem's budget). Each memory level L (searchLevels) gets a placement
/// R(L): the fastest within L of the frontier's points up to L, their
/// streaming ladders, greedy's prefixes and the previous level's R, then
/// improved by local moves within L. The answer is the fastest at the
/// budget of every R(L) with L within it, every placement the searches of
/// the levels up to the first above it stepped through that fits it, every
/// frontier point within it, their ladders and greedy's prefixes: a set that
/// only grows with the budget, each member no slower with more memory.
/// How much searching a problem of its size affords: pricing a placement
/// costs a simulation and, where the budget may bind, a layout (quadratic in
/// the buffers up to a few thousand), so the effort falls with the square
/// of the size. In one place, like the serial search's SearchEffort.
struct MakespanEffort {
  /// The frontier points whose streaming ladders are candidates, greedy's
  /// prefixes sampled, and whether local search runs at memory levels.
  size_t ladderPoints;
  int greedyPrefixes;
  bool levels;
  /// At most this many memory levels, each started from this many of the
  /// fastest candidates that fit it.
  size_t maxLevels, levelCandidates;
  /// Work units (simulations) of the local searches in all; and of a
  /// second, longer round of them (0: none).
  int64_t allowance, longerAllowance;

  static MakespanEffort forSize(int64_t size) {
    MakespanEffort effort;
    effort.ladderPoints = size <= 2000 ? SIZE_MAX : 0;
    effort.greedyPrefixes =
        int(std::clamp<int64_t>(200000 / std::max<int64_t>(size, 1), 4, 256));
    effort.levels = size <= 20000;
    effort.maxLevels = size <= 500 ? 96 : size <= 2000 ? 24 : 8;
    effort.levelCandidates =
        size_t(std::clamp<int64_t>(20000 / std::max<int64_t>(size, 1), 2, 12));
    auto allowance = [&](double work) {
      return std::clamp<int64_t>(
          int64_t(work / (double(size) * double(std::max<int64_t>(size, 1)))),
          32, 40000);
    };
    effort.allowance = allowance(1.5e8);
    // Between the smallest graphs (searched to the cap already) and the
    // large ones (a few moves a level): sixteen times the moves. A round of
    // its own after the first, so that it only adds candidates: more moves
    // from the same starts can end in another local optimum, and a worse one.
    effort.longerAllowance = allowance(2.4e9);
    if (effort.longerAllowance <= effort.allowance)
      effort.longerAllowance = 0;
    return effort;
  }
};

} // namespace

search::SideCandidates::SideCandidates(const PlacementProblem &problem)
    : pricing(std::async(std::launch::async, [&problem] {
        MakespanEffort effort = MakespanEffort::forSize(
            problem.ops.size() + problem.values.size());
        std::vector<Placement> placements =
            greedyPrefixes(problem, effort.greedyPrefixes);
        Placement earliest = earliestFinishPlacement(problem);
        for (Placement &variant :
             streamingLadder(problem, earliest, LadderRungs::FromResident))
          placements.push_back(std::move(variant));
        // Where the frontier's points get no ladders, everything on the GPU
        // gets one: on a long chain whose first op is faster on the CPU
        // (the earliest-finish placement then stays there), streaming
        // nearly every weight is what fits a budget and keeps the GPU busy.
        if (effort.ladderPoints == 0)
          for (Placement &variant :
               streamingLadder(problem, problem.mostGpuPlacement(),
                               LadderRungs::FromStreamed))
            placements.push_back(std::move(variant));
        placements.push_back(std::move(earliest));
        std::vector<PricedPlacement> priced(placements.size());
        llvm::parallelFor(0, placements.size(), [&](size_t i) {
          priced[i] = MakespanSearch::price(problem, placements[i]);
        });
        return priced;
      })) {}

search::SideCandidates::~SideCandidates() {
  if (pricing.valid())
    pricing.wait();
}

std::vector<PricedPlacement> search::SideCandidates::take() {
  return pricing.get();
}

namespace {

void improveAtLevels(const PlacementProblem &problem, MakespanSearch &search,
                     std::vector<PricedPlacement> &candidates,
                     const std::vector<int64_t> &levels,
                     const Placement &earliest, int64_t perLevel,
                     size_t levelCandidates);

void searchForMakespan(const PlacementProblem &problem,
                       MakespanSearch &search, FrontierCache &frontierCache,
                       SideCandidates &side) {
  int64_t size = problem.ops.size() + problem.values.size();
  MakespanEffort effort = MakespanEffort::forSize(size);
  const Frontier &frontier = frontierCache.get();
  std::vector<Placement> placements;
  size_t laddered = 0;
  for (const FrontierPoint &point : frontier.getPoints()) {
    placements.push_back(point.placement);
    if (laddered++ < effort.ladderPoints)
      for (Placement &variant : streamingLadder(problem, point.placement,
                                                LadderRungs::FromResident))
        placements.push_back(std::move(variant));
  }
  // Each priced once (its makespan with no window, its memory in program
  // order), fastest first: a search at any budget offers them in this order
  // and stops where the rest cannot win. (Side by side: each pricing is a
  // pass over the whole graph, on its own placement.)
  std::vector<MakespanSearch::Priced> candidates(placements.size());
  llvm::parallelFor(0, placements.size(), [&](size_t i) {
    candidates[i] = MakespanSearch::price(problem, placements[i]);
  });
  // Every placement greedy can return, so `auto` is never behind it; the
  // earliest-finish placement (the last) and its ladder.
  std::vector<MakespanSearch::Priced> sideCandidates = side.take();
  Placement earliest = sideCandidates.back().placement;
  for (MakespanSearch::Priced &priced : sideCandidates)
    candidates.push_back(std::move(priced));
  llvm::stable_sort(candidates, [](const auto &a, const auto &b) {
    return a.unwindowedUs < b.unwindowedUs;
  });
  search.offerAll(candidates);
  if (!effort.levels)
    return;

  // The allowance is shared by the levels, with at least a few moves each.
  std::vector<int64_t> levels = searchLevels(problem, frontier);
  if (levels.size() > effort.maxLevels) {
    // Evenly spread, the top one (every placement fits) kept.
    std::vector<int64_t> kept;
    for (size_t k = 0; k < effort.maxLevels; ++k)
      kept.push_back(levels[(k + 1) * levels.size() / effort.maxLevels - 1]);
    levels = std::move(kept);
  }
  for (int64_t allowance : {effort.allowance, effort.longerAllowance})
    if (allowance > 0)
      improveAtLevels(problem, search, candidates, levels, earliest,
                      std::max<int64_t>(
                          8, allowance / std::max<size_t>(1, levels.size())),
                      effort.levelCandidates);
}

/// The local searches at memory `levels` (ascending) for `search`, each
/// with `perLevel` work units, started from the fastest
/// `levelCandidates` of `candidates` that fit it and more (below).
void improveAtLevels(const PlacementProblem &problem, MakespanSearch &search,
                     std::vector<PricedPlacement> &candidates,
                     const std::vector<int64_t> &levels,
                     const Placement &earliest, int64_t perLevel,
                     size_t levelCandidates) {
  int64_t budget = search.budget;
  // Local search from several starts per level: the best candidate within
  // the level, and the most different ones (everything on the CPU, the
  // earliest-finish placement, the best of the previous level), since a
  // move of one or two ops does not cross from one to another.
  Placement leastGpu = problem.leastGpuPlacement();
  Placement carried;
  // Every placement the local searches step through: those of a level
  // above the budget that fit it are candidates too. Levels are searched up
  // to the first above the budget, so a larger budget searches the same
  // levels or more: the candidates only grow with the budget.
  std::vector<Placement> stepped;
  for (int64_t level : levels) {
    bool aboveBudget = level > budget;
    MakespanSearch local(problem, level);
    // The fastest few that fit the level start it (the answer at the budget
    // weighs them all).
    local.offerAll(candidates, levelCandidates);
    if (!carried.empty())
      local.offer(carried);
    if (!local.found()) {
      if (aboveBudget)
        break;
      continue; // below what the pinned and GPU-only ops need
    }
    std::vector<Placement> starts = {local.best, leastGpu, earliest};
    if (!carried.empty())
      starts.push_back(carried);
    for (const Placement &start : starts) {
      MakespanSearch from(problem, level);
      from.archive = &stepped;
      from.offer(start);
      if (!from.found())
        continue;
      from.allow(perLevel / int64_t(starts.size()));
      from.improveLocally();
      from.perturbAndImprove(uint64_t(level) * 31 + (&start - starts.data()));
      local.offer(from.best);
      search.evaluations += from.evaluations;
    }
    search.evaluations += local.evaluations;
    carried = local.best;
    search.offer(carried);
    if (aboveBudget)
      break;
  }
  for (const Placement &placement : stepped)
    search.offer(placement);
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

bool search::searchesForMakespan(const PlacementProblem &problem,
                                 PlacementStrategy strategy) {
  return problem.hasGpu && (strategy == PlacementStrategy::Auto ||
                            strategy == PlacementStrategy::Exact);
}

llvm::Expected<PlacementResult>
search::improveForMakespan(const PlacementProblem &problem,
                           PlacementStrategy strategy, PlacementResult serial,
                           const ExactSearchLimits &limits,
                           FrontierCache &frontier, SideCandidates *side) {
  PlacementResult result = std::move(serial);
  if (!searchesForMakespan(problem, strategy)) {
    result.makespanUs = predictMakespan(problem, result.placement).us;
    result.makespanEvaluations = 1;
    if (strategy == PlacementStrategy::Exact)
      result.optimalMakespanUs = result.makespanUs; // the only placement
    return result;
  }
  std::vector<int> freeOps;
  for (auto [index, op] : llvm::enumerate(problem.ops))
    if (!op.isFixed())
      freeOps.push_back(index);
  if (strategy == PlacementStrategy::Exact &&
      int(freeOps.size()) > limits.maxMakespanFreeOps)
    return makeError(llvm::formatv(
        "strategy 'exact' with the makespan objective takes at most {0} ops "
        "free to move; this graph has {1}: use strategy 'auto' (or the "
        "serial objective)",
        limits.maxMakespanFreeOps, freeOps.size()));

  MakespanSearch search(problem, problem.gpuBudgetBytes);
  assert(side && "the makespan search needs its side candidates");
  searchForMakespan(problem, search, frontier, *side);
  // No frontier point fits (a repaired placement): the serial answer.
  if (!search.found())
    search.offer(result.placement);
  if (strategy == PlacementStrategy::Exact) {
    int64_t nodes = 0;
    if (!branchAndBound(search, freeOps, limits.maxNodes, nodes))
      return makeError(llvm::formatv(
          "strategy 'exact' with the makespan objective gave up after {0} "
          "search nodes without proving the optimum: the graph is too big "
          "for it; use strategy 'auto'",
          limits.maxNodes));
    result.searchNodes += nodes;
    result.optimalMakespanUs = search.bestUs;
  } else if (int(freeOps.size()) <= limits.autoBranchAndBoundOps) {
    // Few enough ops to finish the branch and bound from the heuristic's
    // answer: the optimum, which never gets slower with more memory.
    MakespanSearch tree = search;
    int64_t nodes = 0;
    // Room for the whole tree: it always ends.
    int64_t wholeTree = int64_t(2) << freeOps.size();
    if (branchAndBound(tree, freeOps, wholeTree, nodes)) {
      search.best = tree.best;
      search.bestUs = tree.bestUs;
    }
    result.searchNodes += nodes;
  }
  result.placement = search.best;
  result.cost = problem.evaluate(result.placement);
  result.makespanUs = search.bestUs;
  result.makespanEvaluations = search.evaluations;
  result.optimalUs.reset(); // the serial optimum is another placement's
  return result;
}
