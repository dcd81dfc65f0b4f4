//===- MakespanBound.cpp - a certified lower bound on the makespan --------===//

#include "tandem/Analysis/MakespanBound.h"

#include "PlacementSearch.h"

#include "tandem/Analysis/QueueProgramBuilder.h"
#include "llvm/ADT/BitVector.h"

#include <array>
#include <cmath>
#include <optional>
#include <queue>

using namespace mlir;
using namespace mlir::tandem;

namespace {

constexpr double kNever = 1e300;

/// The GPU bytes `op`'s own buffers take while it runs there: its
/// workspace, its results, and each buffer its operands read (a value read
/// through views counts as the value whose buffer it shares, once), less
/// the operand buffers `countedElsewhere` says are accounted for apart.
template <typename Predicate>
int64_t ownGpuBytes(const PlacementProblem &problem, const PlacementOp &op,
                    Predicate countedElsewhere) {
  auto viewRoot = [&](int value) {
    for (int producer = problem.values[value].producer;
         producer >= 0 && problem.ops[producer].aliasesOperand;
         producer = problem.values[value].producer)
      value = problem.ops[producer].operands.front();
    return value;
  };
  int64_t bytes = alignBufferSize(op.gpuWorkspaceBytes);
  llvm::SmallVector<int, 8> seen;
  for (int value : op.operands) {
    int shared = viewRoot(value);
    if (countedElsewhere(shared) || llvm::is_contained(seen, shared))
      continue;
    seen.push_back(shared);
    bytes += alignBufferSize(problem.values[shared].bytes);
  }
  for (int value : op.results)
    bytes += alignBufferSize(problem.values[value].bytes);
  return bytes;
}

/// The devices `op` may run on in some placement within the budget: its
/// pin and its device support allow it, and on the GPU what it reads and
/// writes there at once fits the budget.
std::array<bool, 2> allowedDevices(const PlacementProblem &problem,
                                   const PlacementOp &op) {
  std::array<bool, 2> allowed{};
  for (int device = 0; device < 2; ++device) {
    DeviceKind kind = device ? DeviceKind::GPU : DeviceKind::CPU;
    allowed[device] = op.canRunOn(kind) && (!op.pin || *op.pin == kind);
  }
  if (allowed[1]) {
    // Operands that share a buffer (views of one value) count once; a
    // view's result is its operand's buffer.
    auto none = [](int) { return false; };
    int64_t bytes = op.aliasesOperand ? 0 : ownGpuBytes(problem, op, none);
    allowed[1] = bytes <= problem.gpuBudgetBytes;
  }
  return allowed;
}

/// Per op and device (0: CPU, 1: GPU), microseconds; kNever where the op
/// cannot run there.
using PerDevice = std::vector<std::array<double, 2>>;

/// The time a value takes to reach device `to` from the other one.
double copyToUs(const PlacementProblem &problem, int value, int to) {
  const PlacementValue &moved = problem.values[value];
  return to ? moved.h2dUs : moved.d2hUs;
}

/// Work one queue must run: from no earlier than `releaseUs`, for `us`, and
/// followed by at least `tailUs` before the run can end.
struct QueueJob {
  double releaseUs, us, tailUs;
};

/// The least makespan of one queue running `jobs` when it may interrupt
/// them (Jackson's preemptive schedule: at each release, the released job
/// with the longest tail runs), so a lower bound of every schedule that runs
/// them one at a time. It is the largest, over any subset of the jobs, of
/// their least release, their summed times and their least tail.
double preemptiveQueueUs(std::vector<QueueJob> jobs) {
  llvm::sort(jobs, [](const QueueJob &a, const QueueJob &b) {
    return a.releaseUs < b.releaseUs;
  });
  // Released and unfinished: (tail, time left).
  std::priority_queue<std::pair<double, double>> ready;
  double now = 0, longest = 0;
  size_t next = 0;
  while (next < jobs.size() || !ready.empty()) {
    if (ready.empty())
      now = std::max(now, jobs[next].releaseUs);
    for (; next < jobs.size() && jobs[next].releaseUs <= now; ++next)
      ready.push({jobs[next].tailUs, jobs[next].us});
    auto [tail, left] = ready.top();
    ready.pop();
    double release = next < jobs.size() ? jobs[next].releaseUs : kNever;
    if (now + left <= release) {
      now += left;
      longest = std::max(longest, now + tail);
    } else {
      ready.push({tail, left - (release - now)});
      now = release;
    }
  }
  return longest;
}

/// The longest path from the inputs to the results, each op on the device
/// that finishes it first and a copy paid where the path changes device.
/// With `starts`, also each op's earliest start on each device.
double chainBoundUs(const PlacementProblem &problem,
                    const std::vector<std::array<bool, 2>> &allowed,
                    PerDevice *starts = nullptr) {
  // Per value, the earliest it can be ready on each device (0: CPU, 1: GPU):
  // produced there, or produced on the other and copied over. Each op picks
  // its device on its own, so this is below every placement's chain.
  std::vector<std::array<double, 2>> ready(problem.values.size(), {0, 0});
  if (starts)
    starts->assign(problem.ops.size(), {kNever, kNever});
  auto readyOn = [&](int value, int device) {
    return std::min(ready[value][device],
                    ready[value][1 - device] + copyToUs(problem, value, device));
  };
  for (auto [index, value] : llvm::enumerate(problem.values))
    if (value.isArgument()) // arrives on the host
      ready[index] = {0, value.h2dUs};
  double longest = 0;
  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    if (op.isWeight)
      continue; // resident or mapped: ready everywhere from the start
    if (op.aliasesOperand) {
      for (int value : op.results)
        ready[value] = ready[op.operands.front()];
      continue;
    }
    std::array<double, 2> finish{kNever, kNever};
    for (int device = 0; device < 2; ++device) {
      if (!allowed[index][device])
        continue;
      double start = 0;
      for (int value : op.operands)
        start = std::max(start, readyOn(value, device));
      for (int value : op.hostOperands)
        start = std::max(start, readyOn(value, 0));
      finish[device] = start + (device ? op.gpuUs : op.cpuUs);
      if (starts)
        (*starts)[index][device] = start;
    }
    for (int value : op.results)
      for (int device = 0; device < 2; ++device)
        ready[value][device] = std::min(
            finish[device],
            finish[1 - device] + copyToUs(problem, value, device));
    longest = std::max(longest, std::min(finish[0], finish[1]));
  }
  for (auto [index, value] : llvm::enumerate(problem.values))
    if (value.isResult)
      longest = std::max(longest, readyOn(index, 0));
  return longest;
}

/// Per op and device, what any schedule that runs the op there must spend
/// before and after it: `start`, its earliest start there (the chain
/// bound's forward pass), and `after`, the least the rest of the longest
/// path through its results takes to the program's end (the same pass
/// backwards: each later op on its better device, copies paid where the
/// path changes device, a result copied to the host). The start is kNever
/// where it cannot run (and for weights, which take no time on a queue and
/// have no span), and both are 0 for views (no time, never ruled out).
struct OpSpans {
  PerDevice start, after;
  bool empty() const { return start.empty(); }
};

/// The spans of every op; empty where some op (not a view) can run nowhere.
OpSpans opSpans(const PlacementProblem &problem,
                const std::vector<std::array<bool, 2>> &allowed) {
  OpSpans spans;
  chainBoundUs(problem, allowed, &spans.start);
  spans.after.assign(problem.ops.size(), {0, 0});
  // A view's readers on the other device may get a copy of the view or of
  // the value it views (the builder copies whichever is read there): the
  // cheaper of the two along the chain of views.
  PerDevice copyUs(problem.values.size());
  for (size_t value = 0; value < problem.values.size(); ++value)
    copyUs[value] = {copyToUs(problem, value, 0), copyToUs(problem, value, 1)};
  for (const PlacementOp &op : problem.ops)
    if (op.aliasesOperand)
      for (int value : op.results)
        for (int to = 0; to < 2; ++to)
          copyUs[value][to] =
              std::min(copyUs[value][to], copyUs[op.operands.front()][to]);
  // Per value and the device it is on: the least time from then to the end
  // that its readers need.
  PerDevice needs(problem.values.size(), {0, 0});
  for (auto [index, value] : llvm::enumerate(problem.values))
    if (value.isResult)
      needs[index] = {0, copyUs[index][0]};
  for (int index = int(problem.ops.size()) - 1; index >= 0; --index) {
    const PlacementOp &op = problem.ops[index];
    if (op.isWeight)
      continue;
    if (op.aliasesOperand) { // a view: its readers are its operand's
      spans.start[index] = {0, 0};
      int source = op.operands.front();
      for (int value : op.results)
        for (int device = 0; device < 2; ++device)
          needs[source][device] =
              std::max(needs[source][device], needs[value][device]);
      continue;
    }
    if (!allowed[index][0] && !allowed[index][1])
      return {};
    // From the op's start on each device to the end.
    std::array<double, 2> rest{kNever, kNever};
    for (int device = 0; device < 2; ++device) {
      if (!allowed[index][device])
        continue;
      double tail = 0;
      for (int value : op.results)
        tail = std::max(tail, needs[value][device]);
      rest[device] = (device ? op.gpuUs : op.cpuUs) + tail;
      spans.after[index][device] = tail;
    }
    // What each operand needs from the op, per device it is on: a copy to
    // where the op reads it, then the op's rest on its better device.
    auto need = [&](int value, std::optional<int> readOn) {
      for (int from = 0; from < 2; ++from) {
        double least = kNever;
        for (int device = 0; device < 2; ++device) {
          if (rest[device] == kNever)
            continue;
          int at = readOn ? *readOn : device;
          least = std::min(least,
                           rest[device] + (at != from ? copyUs[value][at] : 0));
        }
        needs[value][from] = std::max(needs[value][from], least);
      }
    };
    for (int value : op.operands)
      need(value, std::nullopt);
    for (int value : op.hostOperands)
      need(value, 0);
  }
  return spans;
}

/// The load relaxation, as the dual of
///   min T  s.t.  C0 + sum x c <= T,  G0 + sum (1 - x) g <= T,
///                W0 + sum (1 - x) w <= B + rho T,  0 <= x <= 1
/// over the free ops (x: the CPU's fraction of an op; w: the weight bytes
/// it reads, each weight's bytes shared among its readers; rho: the most
/// weight bytes the link moves per microsecond). With multipliers
/// (a, b, k / rho) on the three rows, a + b + k <= 1, every such point
/// bounds T from below.
class LoadBound {
public:
  LoadBound(const PlacementProblem &problem,
            const std::vector<std::array<bool, 2>> &allowed) {
    // The bytes of each weight value, shared among its readers.
    std::vector<double> share(problem.values.size(), 0);
    for (auto [index, value] : llvm::enumerate(problem.values)) {
      if (!value.isWeight || value.consumers.empty())
        continue;
      share[index] = double(value.bytes) / double(value.consumers.size());
      if (value.h2dUs > 0)
        rho = std::max(rho, double(value.bytes) / value.h2dUs);
    }
    for (auto [index, op] : llvm::enumerate(problem.ops)) {
      if (op.isWeight)
        continue;
      double weightBytes = 0;
      for (int value : op.operands)
        weightBytes += share[value];
      bool cpu = allowed[index][0], gpu = allowed[index][1];
      if (cpu && gpu) {
        free.push_back({op.cpuUs, op.gpuUs, weightBytes});
        gpuTotal += op.gpuUs;
        weightTotal += weightBytes;
      } else if (cpu) {
        cpuFixed += op.cpuUs;
      } else if (gpu) {
        gpuTotal += op.gpuUs;
        weightTotal += weightBytes;
      }
    }
    overBudget = weightTotal - double(problem.gpuBudgetBytes);
  }

  /// The dual's value at (a, b, k), a + b + k <= 1.
  double at(double a, double b, double k) const {
    double lambda = rho > 0 ? k / rho : 0;
    double value = a * cpuFixed + b * gpuTotal + lambda * overBudget;
    for (const Op &op : free)
      value -= std::max(0.0, b * op.gpuUs + lambda * op.weightBytes -
                                 a * op.cpuUs);
    return value;
  }

  /// The best dual point found: a grid over the simplex, then a pattern
  /// search around the best point (the dual is concave).
  double best(BoundEffort effort) const {
    bool withWeights = rho > 0 && overBudget > 0;
    bool fine = effort != BoundEffort::Quick;
    const int kGrid = fine ? 16 : 4;
    const double kFinestStep = fine ? 1e-7 : 1e-3;
    const int kRounds = fine ? 64 : 8;
    double bestValue = 0, bestA = 0, bestB = 0, bestK = 0;
    auto consider = [&](double a, double b, double k) {
      if (a < 0 || b < 0 || k < 0 || a + b + k > 1 + 1e-12)
        return false;
      double value = at(a, b, k);
      if (value <= bestValue)
        return false;
      bestValue = value;
      bestA = a, bestB = b, bestK = k;
      return true;
    };
    for (int i = 0; i <= kGrid; ++i)
      for (int j = 0; i + j <= kGrid; ++j)
        consider(double(i) / kGrid, double(j) / kGrid,
                 withWeights ? double(kGrid - i - j) / kGrid : 0);
    for (double step = 0.5 / kGrid; step > kFinestStep; step /= 2) {
      bool moved = true;
      for (int round = 0; moved && round < kRounds; ++round) {
        moved = false;
        double a = bestA, b = bestB, k = bestK;
        const double moves[6][3] = {{step, -step, 0}, {-step, step, 0},
                                    {step, 0, -step}, {-step, 0, step},
                                    {0, step, -step}, {0, -step, step}};
        for (const auto &move : moves)
          if (withWeights || (move[2] == 0))
            moved |= consider(a + move[0], b + move[1], k + move[2]);
      }
    }
    return bestValue;
  }

private:
  struct Op {
    double cpuUs, gpuUs, weightBytes;
  };
  std::vector<Op> free;
  double cpuFixed = 0, gpuTotal = 0, weightTotal = 0, overBudget = 0;
  double rho = 0;
};

/// The memory term's bisection prices every op at each of many dual points:
/// beyond this many ops it is left out.
constexpr size_t kMaxMemoryBoundOps = 4096;

/// The memory relaxation: the load relaxation's fractional placement, with
/// GPU memory counted over time as well as at once. In any schedule of
/// makespan T the GPU's bytes stay within the budget B at every moment, so
/// the bytes held, integrated over time, are at most B T; and they are at
/// least: every resident weight's bytes for the whole run, each GPU op's
/// own buffers (operands that are not weights, results, workspace) while it
/// runs (the GPU runs one op at a time), and each streamed weight's bytes
/// while it is copied and while each of its GPU readers runs. With T fixed
/// the rows are linear:
///   CPU:   C0 + sum x c <= T           GPU:  G0 + sum (1 - x) g <= T
///   link:  sum s_w h_w <= T            path: sum_P x c + (1 - x) g <= T
///   area:  (sum r_w b_w T + sum s_w b_w (h_w + g_readers)
///           + sum (1 - x) g A) / B <= T
/// (r_w, s_w: weight w resident or streamed, at least the GPU's share of
/// each reader; P: one dependency path, the longest at each op's faster
/// device). An op may not go to a device where every schedule running it
/// there is longer than T (its OpSpans): an op far slower on the CPU than
/// the whole makespan cannot take a fraction of the GPU's load there. The
/// ops left only one device then run one at a time on its queue, each from
/// its start and followed by its after (preemptiveQueueUs).
/// Where some point of the dual, the multipliers (a, b, k, p, m) summing to
/// 1, is positive at T, no fractional placement, and so no placement and
/// schedule, finishes by T. The bound is the largest T shown so, by
/// bisection.
class MemoryBound {
public:
  MemoryBound(const PlacementProblem &problem,
              const std::vector<std::array<bool, 2>> &allowed)
      : budget(double(problem.gpuBudgetBytes)) {
    OpSpans spans = opSpans(problem, allowed);
    // Weight values: their bytes, copy time, readers, and whether they can
    // be resident (the weight op may go to the GPU) or streamed (it may
    // stay on the host).
    std::vector<int> weightIndex(problem.values.size(), -1);
    for (auto [index, op] : llvm::enumerate(problem.ops)) {
      if (!op.isWeight)
        continue;
      for (int value : op.results) {
        const PlacementValue &weight = problem.values[value];
        if (weight.consumers.empty())
          continue;
        Weight entry{double(alignBufferSize(weight.bytes)), weight.h2dUs,
                     double(weight.consumers.size()), allowed[index][1],
                     allowed[index][0]};
        if (!entry.streamable && entry.residentOk) {
          // Resident whatever the placement: its bytes for the whole run.
          residentFixedBytes += entry.bytes;
          continue;
        }
        weightIndex[value] = int(weights.size());
        weights.push_back(entry);
      }
    }
    // The longest path at each op's faster device (copies left out).
    std::vector<double> ready(problem.values.size(), 0);
    std::vector<int> via(problem.values.size(), -1), pathPrev(problem.ops.size(), -1);
    std::vector<double> finish(problem.ops.size(), 0);
    int last = -1;
    double longest = -1;
    for (auto [index, op] : llvm::enumerate(problem.ops)) {
      if (op.isWeight)
        continue;
      double start = 0;
      int prev = -1;
      for (llvm::ArrayRef<int> list : {llvm::ArrayRef<int>(op.operands),
                                       llvm::ArrayRef<int>(op.hostOperands)})
        for (int value : list)
          if (ready[value] > start || (prev < 0 && via[value] >= 0)) {
            start = std::max(start, ready[value]);
            prev = via[value];
          }
      double fastest = kNever;
      if (allowed[index][0])
        fastest = op.cpuUs;
      if (allowed[index][1])
        fastest = std::min(fastest, op.gpuUs);
      if (fastest == kNever)
        fastest = 0;
      finish[index] = start + fastest;
      pathPrev[index] = prev;
      for (int value : op.results) {
        ready[value] = finish[index];
        via[value] = int(index);
      }
      if (finish[index] > longest) {
        longest = finish[index];
        last = int(index);
      }
    }
    std::vector<bool> onPath(problem.ops.size(), false);
    for (int op = last; op >= 0; op = pathPrev[op])
      onPath[op] = true;

    for (auto [index, op] : llvm::enumerate(problem.ops)) {
      if (op.isWeight)
        continue;
      // A view on neither device (one fit nowhere else) takes no time.
      if (!allowed[index][0] && !allowed[index][1])
        continue;
      Op entry;
      entry.cpuUs = allowed[index][0] ? op.cpuUs : kNever;
      entry.gpuUs = allowed[index][1] ? op.gpuUs : kNever;
      entry.onPath = onPath[index];
      if (!spans.empty()) {
        entry.startUs = spans.start[index];
        entry.afterUs = spans.after[index];
      }
      // Its own buffers while it runs; a weight's bytes are counted as
      // resident or streamed.
      if (allowed[index][1] && !op.aliasesOperand)
        entry.heldBytes = double(ownGpuBytes(problem, op, [&](int value) {
          return problem.values[value].isWeight;
        }));
      if (allowed[index][1])
        for (int value : op.operands)
          if (weightIndex[value] >= 0 &&
              !llvm::is_contained(entry.weights, weightIndex[value]))
            entry.weights.push_back(weightIndex[value]);
      ops.push_back(std::move(entry));
    }
  }

  /// The largest makespan this relaxation rules out, at least `floor`
  /// (where it rules out none above `floor`, `floor`).
  double best(double floor) {
    if (budget <= 0 || floor <= 0)
      return floor;
    if (!rulesOut(floor))
      return floor;
    double lo = floor, hi = floor * 2;
    while (rulesOut(hi)) {
      lo = hi;
      hi *= 2;
      if (hi > kMaxOpUs)
        return lo;
    }
    for (int step = 0; step < 40 && hi - lo > 1e-6 * lo; ++step) {
      double mid = 0.5 * (lo + hi);
      (rulesOut(mid) ? lo : hi) = mid;
    }
    return lo;
  }

private:
  struct Weight {
    double bytes, copyUs, readers;
    bool residentOk, streamable;
  };
  struct Op {
    double cpuUs = 0, gpuUs = 0, heldBytes = 0;
    /// Its span on the CPU, on the GPU (OpSpans): no schedule of makespan
    /// T runs it on a device where start + time + after is above T.
    std::array<double, 2> startUs{0, 0}, afterUs{0, 0};
    bool fitsOn(int device, double T) const {
      double us = device ? gpuUs : cpuUs;
      return us != kNever && startUs[device] + us + afterUs[device] <= T;
    }
    bool onPath = false;
    llvm::SmallVector<int, 2> weights;
  };
  static constexpr int kMultipliers = 5; // a, b, k, p, m
  using Point = std::array<double, kMultipliers>;

  /// The dual's value at `point` for makespan `T`.
  double at(const Point &point, double T) const {
    auto [a, b, k, p, m] = point;
    double perByte = m / budget;
    double value = -T + perByte * residentFixedBytes * T;
    double window = spanWindow(T);
    for (const Op &op : ops) {
      double onCpu = kNever, onGpu = kNever;
      if (op.fitsOn(0, window))
        onCpu = (a + (op.onPath ? p : 0)) * op.cpuUs;
      if (op.fitsOn(1, window)) {
        onGpu = (b + (op.onPath ? p : 0)) * op.gpuUs +
                perByte * op.gpuUs * op.heldBytes;
        for (int index : op.weights) {
          const Weight &weight = weights[index];
          double resident = weight.residentOk
                                ? perByte * weight.bytes * T / weight.readers
                                : kNever;
          double streamed =
              weight.streamable
                  ? (k * weight.copyUs +
                     perByte * weight.bytes * weight.copyUs) /
                            weight.readers +
                        perByte * weight.bytes * op.gpuUs
                  : kNever;
          onGpu += std::min(resident, streamed);
        }
      }
      value += std::min(onCpu, onGpu);
    }
    return value;
  }

  /// Rounding in the sums must not rule a device out at the makespan of a
  /// schedule that runs the op there.
  static double spanWindow(double T) { return T * (1 + 1e-9); }

  /// Whether the ops that fit only one device by T (Op::fitsOn) cannot all
  /// run on its queue by T, one at a time, each from its start there and
  /// followed by its after (preemptiveQueueUs). An op that fits neither
  /// rules T out.
  bool queueRulesOut(double T) const {
    double window = spanWindow(T);
    std::array<std::vector<QueueJob>, 2> left;
    for (const Op &op : ops) {
      bool cpu = op.fitsOn(0, window), gpu = op.fitsOn(1, window);
      if (!cpu && !gpu)
        return true;
      if (cpu && gpu)
        continue;
      int device = gpu;
      left[device].push_back({op.startUs[device], device ? op.gpuUs : op.cpuUs,
                              op.afterUs[device]});
    }
    for (std::vector<QueueJob> &jobs : left)
      if (!jobs.empty() && preemptiveQueueUs(std::move(jobs)) > window)
        return true;
    return false;
  }

  /// Whether some dual point is positive at T: a grid over the simplex,
  /// then a pattern search, starting from the last point that was.
  bool rulesOut(double T) {
    if (queueRulesOut(T))
      return true;
    double bestValue = at(last, T);
    Point bestPoint = last;
    auto consider = [&](const Point &point) {
      for (double x : point)
        if (x < 0)
          return false;
      double value = at(point, T);
      if (value <= bestValue)
        return false;
      bestValue = value, bestPoint = point;
      return true;
    };
    const int kGrid = 6;
    for (int a = 0; a <= kGrid; ++a)
      for (int b = 0; a + b <= kGrid; ++b)
        for (int k = 0; a + b + k <= kGrid; ++k)
          for (int p = 0; a + b + k + p <= kGrid; ++p)
            consider({double(a) / kGrid, double(b) / kGrid, double(k) / kGrid,
                      double(p) / kGrid,
                      double(kGrid - a - b - k - p) / kGrid});
    for (double step = 0.5 / kGrid; bestValue <= 0 && step > 1e-6;
         step /= 2) {
      bool moved = true;
      for (int round = 0; moved && bestValue <= 0 && round < 32; ++round) {
        moved = false;
        Point from = bestPoint;
        for (int i = 0; i < kMultipliers; ++i)
          for (int j = 0; j < kMultipliers; ++j) {
            if (i == j)
              continue;
            Point to = from;
            to[i] += step, to[j] -= step;
            moved |= consider(to);
          }
      }
    }
    if (bestValue > 0)
      last = bestPoint;
    return bestValue > 0;
  }

  double budget;
  double residentFixedBytes = 0;
  std::vector<Weight> weights;
  std::vector<Op> ops;
  Point last{0, 0, 0, 0, 1};
};

/// Beyond this many items a placement's memory test looks only at each
/// item's own buffers (the happens-before sets are quadratic).
constexpr size_t kMaxOrderedItems = 2048;

/// The longest a queue of `program` keeps the run going, in any schedule:
/// its items one at a time, each from its earliest start (`finish` less its
/// time: lower bounds of the finish times) and followed by its longest path
/// to the end (preemptiveQueueUs).
double busiestSpanUs(const QueueProgram &program,
                     const std::vector<double> &finish) {
  size_t count = program.items.size();
  // Inputs come before their readers: one pass from the end.
  std::vector<double> after(count, 0);
  for (size_t index = count; index-- > 0;) {
    const QueueItem &item = program.items[index];
    for (int32_t input : item.inputs)
      after[input] = std::max(after[input], item.us + after[index]);
  }
  std::array<std::vector<QueueJob>, kNumQueues> queues;
  for (auto [index, item] : llvm::enumerate(program.items))
    queues[item.queue].push_back({finish[index] - item.us, item.us, after[index]});
  double longest = 0;
  for (std::vector<QueueJob> &jobs : queues)
    longest = std::max(longest, preemptiveQueueUs(std::move(jobs)));
  return longest;
}

/// The bound of one placement under every schedule of its queue program,
/// or nullopt where no schedule of it can fit `budget`: the GPU bytes some
/// item certainly needs while it runs (every resident weight, its own
/// buffers and workspace, and every buffer written before it and read after
/// it in every order the data allows) exceed the budget.
std::optional<double> placementBoundUs(const PlacementProblem &problem,
                                       const Placement &placement,
                                       int64_t budget) {
  QueueProgram program = buildQueueProgram(problem, placement);
  size_t count = program.items.size();
  // An item starts after its inputs end, in any schedule, and after the
  // items it must follow (below); a queue runs one item at a time.
  std::vector<double> finish(count, 0);
  std::vector<llvm::SmallVector<int32_t, 2>> startsAfter(count);
  double longest = 0;
  // One pass in the items' order, raising each finish to what its inputs
  // and the items it follows allow; says whether any moved.
  auto relax = [&] {
    bool moved = false;
    for (size_t index = 0; index < count; ++index) {
      const QueueItem &item = program.items[index];
      double start = 0;
      for (int32_t input : item.inputs)
        start = std::max(start, finish[input]);
      for (int32_t before : startsAfter[index])
        start = std::max(start, finish[before]);
      if (start + item.us > finish[index] * (1 + 1e-12)) {
        finish[index] = start + item.us;
        longest = std::max(longest, finish[index]);
        moved = true;
      }
    }
    return moved;
  };
  relax();
  // The paths and the queues, once the finish times have stopped moving.
  auto bound = [&] { return std::max(longest, busiestSpanUs(program, finish)); };
  if (!problem.hasGpu)
    return bound();
  // Items are in block order, inputs before readers: the ancestors of each.
  bool ordered = count <= kMaxOrderedItems;
  std::vector<llvm::BitVector> before;
  if (ordered) {
    before.assign(count, llvm::BitVector(count));
    for (size_t index = 0; index < count; ++index)
      for (int32_t input : program.items[index].inputs) {
        before[index] |= before[input];
        before[index].set(input);
      }
  }
  auto precedes = [&](int32_t first, size_t item) {
    return ordered && before[item].test(first);
  };
  int64_t resident = 0;
  std::vector<int64_t> need(count, 0);
  for (const ArenaBuffer &buffer : program.buffers) {
    if (buffer.arena != Arena::GPU)
      continue;
    int64_t bytes = alignBufferSize(buffer.bytes);
    if (buffer.writer < 0) {
      resident += bytes;
      continue;
    }
    // Its writer and readers need it; so does every item after its writer
    // and before one of its readers (or the end, for a result).
    need[buffer.writer] += bytes;
    for (int32_t reader : buffer.readers)
      if (reader != buffer.writer)
        need[reader] += bytes;
    if (!ordered || buffer.isWorkspace)
      continue;
    for (size_t index = buffer.writer + 1; index < count; ++index) {
      if (!precedes(buffer.writer, index) ||
          llvm::is_contained(buffer.readers, int32_t(index)))
        continue;
      bool readAfter = buffer.heldToEnd;
      for (int32_t reader : buffer.readers)
        readAfter |= precedes(int32_t(index), reader);
      if (readAfter)
        need[index] += bytes;
    }
  }
  int64_t most = resident;
  for (int64_t bytes : need)
    most = std::max(most, resident + bytes);
  if (most > budget)
    return std::nullopt;
  if (!ordered)
    return bound();
  // A buffer is live from its writer's start to its last reader's end, so
  // an item that runs before one of its readers, unordered with its writer,
  // either has the buffer beside it or has finished before the writer
  // starts. Where the two do not fit together, the writer starts after the
  // item: a weight's copy is not prefetched past a layer that fills the
  // budget on its own.
  bool constrained = false;
  for (const ArenaBuffer &buffer : program.buffers) {
    if (buffer.arena != Arena::GPU || buffer.writer < 0 || buffer.isWorkspace)
      continue;
    int64_t bytes = alignBufferSize(buffer.bytes);
    for (size_t index = 0; index < count; ++index) {
      int32_t item = int32_t(index);
      if (item == buffer.writer || precedes(buffer.writer, index) ||
          precedes(item, buffer.writer) ||
          llvm::is_contained(buffer.readers, item) ||
          resident + need[index] + bytes <= budget)
        continue;
      if (llvm::any_of(buffer.readers,
                       [&](int32_t reader) { return precedes(item, reader); })) {
        startsAfter[buffer.writer].push_back(item);
        constrained = true;
      }
    }
  }
  // The new orderings may point backwards in the items' order: passes until
  // nothing moves (each pass's finish times are lower bounds already).
  for (int pass = 0; constrained && pass < 8; ++pass)
    constrained = relax();
  return bound();
}

/// True if no completion of `pinned`'s pins can fit its budget: the weights
/// fixed on the GPU (resident), with the buffers some op fixed there reads
/// and writes while it runs (a weight it reads needs its bytes there,
/// resident or streamed), exceed it.
bool surelyOverBudget(const PlacementProblem &pinned) {
  auto onGpu = [](const PlacementOp &op) {
    return op.isFixed() && op.fixedDevice();
  };
  auto isResident = [&](int value) {
    int producer = pinned.values[value].producer;
    return producer >= 0 && pinned.ops[producer].isWeight &&
           onGpu(pinned.ops[producer]);
  };
  int64_t resident = 0;
  for (const PlacementOp &op : pinned.ops)
    if (op.isWeight && onGpu(op))
      for (int value : op.results)
        resident += alignBufferSize(pinned.values[value].bytes);
  int64_t most = 0;
  for (const PlacementOp &op : pinned.ops)
    if (!op.isWeight && !op.aliasesOperand && onGpu(op))
      most = std::max(most, ownGpuBytes(pinned, op, isResident));
  return resident + most > pinned.gpuBudgetBytes;
}

/// The placements term: the least placementBoundUs over the placements of
/// the free ops, by branch and bound. A node fixes the ops decided so far as
/// pins; where the chain and load bound of that problem is no lower than the
/// least found, no completion of it can be lower. nullopt where too many
/// ops are free, the search ran out of nodes, or nothing can fit.
std::optional<double> placementsBoundUs(const PlacementProblem &problem,
                                        double globalUs,
                                        std::optional<double> fittingUs) {
  std::vector<int> freeOps;
  for (auto [index, op] : llvm::enumerate(problem.ops))
    if (!op.isFixed())
      freeOps.push_back(index);
  if (!problem.hasGpu || int(freeOps.size()) > kMaxEnumeratedFreeOps)
    return std::nullopt;
  // The weights first, largest first: deciding residency early is what
  // lets the memory test prune.
  auto weightBytes = [&](int op) {
    int64_t bytes = 0;
    if (problem.ops[op].isWeight)
      for (int value : problem.ops[op].results)
        bytes += problem.values[value].bytes;
    return bytes;
  };
  llvm::stable_sort(freeOps, [&](int a, int b) {
    return weightBytes(a) > weightBytes(b);
  });
  // A placement known to fit bounds the least from above (its own bound is
  // below its makespan), and so do the leanest and the fullest placement
  // where they fit: the search prunes from its first nodes.
  double least = fittingUs.value_or(kNever);
  for (const Placement &start :
       {problem.leastGpuPlacement(), problem.mostGpuPlacement()})
    if (std::optional<double> us =
            placementBoundUs(problem, start, problem.gpuBudgetBytes))
      least = std::min(least, *us);
  auto prune = [&](const PlacementProblem &pinned, size_t depth) {
    // Done once the least reaches the chain and load bound: no higher.
    return least <= globalUs || surelyOverBudget(pinned) ||
           (depth > 0 && least < kNever &&
            computeMakespanBound(pinned, BoundEffort::Quick).us() >= least);
  };
  auto leaf = [&](const Placement &placement) {
    if (std::optional<double> us =
            placementBoundUs(problem, placement, problem.gpuBudgetBytes))
      least = std::min(least, *us);
  };
  int64_t nodes = 0;
  bool finished = search::searchPinnedPlacements(
      problem, freeOps, kMaxEnumeratedNodes, nodes, prune, leaf,
      [](int) { return uint8_t(1); });
  if (!finished || least == kNever)
    return std::nullopt;
  return least;
}

} // namespace

MakespanBound tandem::computeMakespanBound(const PlacementProblem &problem,
                                           BoundEffort effort,
                                           std::optional<double> fittingUs) {
  std::vector<std::array<bool, 2>> allowed;
  allowed.reserve(problem.ops.size());
  for (const PlacementOp &op : problem.ops) {
    allowed.push_back(allowedDevices(problem, op));
    if (!problem.hasGpu)
      allowed.back()[1] = false;
  }
  MakespanBound bound;
  bound.chainUs = chainBoundUs(problem, allowed);
  bound.loadUs = LoadBound(problem, allowed).best(effort);
  double chainAndLoadUs = std::max(bound.chainUs, bound.loadUs);
  if (effort == BoundEffort::Exhaustive && problem.hasGpu &&
      problem.ops.size() <= kMaxMemoryBoundOps)
    bound.memoryUs = MemoryBound(problem, allowed).best(chainAndLoadUs);
  if (effort == BoundEffort::Exhaustive)
    bound.placementsUs =
        placementsBoundUs(problem, chainAndLoadUs, fittingUs);
  // Rounding in the sums must not lift a bound above a makespan it equals.
  bound.chainUs *= 1 - 1e-12;
  bound.loadUs *= 1 - 1e-9;
  bound.memoryUs *= 1 - 1e-9;
  if (bound.placementsUs)
    *bound.placementsUs *= 1 - 1e-12;
  return bound;
}
