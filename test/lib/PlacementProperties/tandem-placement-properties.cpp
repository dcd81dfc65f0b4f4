//===- tandem-placement-properties.cpp - placement property tests ---------===//
//
// Sweeps the GPU budget over model-shaped and random graphs and checks what
// placement promises, for every strategy at every budget, under the
// objective given (--objective: makespan, the default, or serial):
//
//   refusal    auto and exact place every budget at which all-CPU fits
//   budget     a placement that is returned is laid out within the budget
//   monotone   auto and exact are never slower with more memory (0.1%)
//   baselines  auto is no slower than all-cpu, greedy, all-gpu and mincut
//              where those fit the budget; exact is no slower than auto
//   optimum    exact equals the brute-force optimum (small graphs)
//   bound      the makespan lower bound is below every makespan within the
//              budget (and below exact's optimum)
//   report     the report recomputes to its own serial time, and describes
//              the IR the pipeline emits: devices, transfers, peak, arena;
//              the queue program the pass makes of the placement (its
//              window, then copies widened) is the one the emitted IR
//              runs, item by item, with the same waits and makespan, and
//              is never slower than placement priced
//   feedback   the pipeline run on its own output changes nothing
//
// Prints the placements tried, the violations per property and the slowest
// placement, and exits 1 if any property was violated.
//
// Usage: tandem-placement-properties [options] [model.mlir ...]
//
//===----------------------------------------------------------------------===//

#include "RandomModels.h"

#include "tandem/Analysis/ArenaBuffers.h"
#include "tandem/Analysis/MakespanBound.h"
#include "tandem/Analysis/MemoryPlanner.h"
#include "tandem/Analysis/PlacementGraph.h"
#include "tandem/Analysis/QueueProgramBuilder.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "tandem/Dialect/Tandem/Transforms/Passes.h"
#include "tandem/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace mlir;
using namespace mlir::tandem;

namespace cl = llvm::cl;

static cl::list<std::string> modelFiles(cl::Positional,
                                        cl::desc("[model.mlir ...]"));
static cl::opt<int> numBudgets("budgets",
                               cl::desc("Budgets per graph and profile"),
                               cl::init(50));
static cl::opt<int> numRandom("random", cl::desc("Random graphs to generate"),
                              cl::init(40));
static cl::opt<int> minRandomOps("min-ops", cl::desc("Smallest random graph"),
                                 cl::init(6));
static cl::opt<int> maxRandomOps("max-ops", cl::desc("Largest random graph"),
                                 cl::init(60));
static cl::opt<unsigned> seed("seed", cl::desc("Random seed"), cl::init(1));
static cl::list<std::string>
    profileNames("profile", cl::desc("Device profiles (default: all builtin)"));
static cl::opt<int> bruteForceOps(
    "brute-force-ops",
    cl::desc("Check exact against enumeration up to this many free ops"),
    cl::init(12));
static cl::opt<int> exactOps("exact-ops",
                             cl::desc("Run exact up to this many free ops"),
                             cl::init(64));
static cl::opt<int> exactMakespanOps(
    "exact-makespan-ops",
    cl::desc("Under the makespan objective, run exact up to this many free "
             "ops (its branch and bound costs more than the serial one's)"),
    cl::init(14));
static cl::opt<int> irEvery(
    "ir-every",
    cl::desc("Check the report against the emitted IR at every Nth budget"),
    cl::init(1));
static cl::opt<bool> verbose("v", cl::desc("Print every violation"));
static cl::opt<bool> trace("trace",
                           cl::desc("Print every placement's time and bound"));
static cl::list<std::string>
    strategyNames("strategy", cl::desc("Strategies to run (default: all)"));
static cl::list<int64_t> fixedBudgets(
    "budget", cl::desc("Check these budgets instead of a sweep"));
static cl::opt<bool> skipPipeline(
    "no-pipeline", cl::desc("Skip the report-vs-IR and feedback checks"));
static cl::opt<std::string>
    objectiveName("objective",
                  cl::desc("What auto and exact minimize: makespan or serial"),
                  cl::init("makespan"));
static cl::opt<std::string>
    dumpDir("dump-random",
            cl::desc("Also write each random graph to DIR/random-N.mlir"));

namespace {

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr PlacementStrategy kStrategies[] = {
    PlacementStrategy::Auto,   PlacementStrategy::Exact,
    PlacementStrategy::AllCpu, PlacementStrategy::Greedy,
    PlacementStrategy::AllGpu, PlacementStrategy::MinCut};

/// Counts of what was tried and what failed.
struct Tally {
  int64_t placements = 0, pipelines = 0, budgetSweeps = 0, skipped = 0;
  std::map<std::string, int64_t> violations;
  std::map<std::string, std::string> firstExample;
  double slowestSeconds = 0;
  std::string slowestWhat;

  void violate(const std::string &property, const std::string &what) {
    if (violations[property]++ == 0)
      firstExample[property] = what;
    if (verbose)
      llvm::errs() << "violation [" << property << "] " << what << "\n";
  }
};

PlacementObjective objective = PlacementObjective::Makespan;

struct Outcome {
  bool placed = false;
  /// The objective's value; the serial time; the predicted makespan, and
  /// the schedule window it was priced with.
  double totalUs = 0, serialUs = 0, makespanUs = 0;
  int64_t makespanWindow = 1;
  int64_t peak = 0, arena = 0;
  Placement placement;
  std::string error;
};

int64_t arenaOf(const PlacementProblem &problem, const Placement &placement) {
  return planMemory(problem.gpuBuffers(placement)).arenaBytes;
}

int countFreeOps(const PlacementProblem &problem) {
  int free = 0;
  for (const PlacementOp &op : problem.ops)
    free += !op.isFixed();
  return free;
}

/// The best placement laid out within the budget, by enumeration.
std::optional<double> bruteForce(const PlacementProblem &problem) {
  std::vector<int> free;
  Placement placement = problem.leastGpuPlacement();
  for (auto [index, op] : llvm::enumerate(problem.ops))
    if (!op.isFixed())
      free.push_back(index);
  std::optional<double> best;
  for (uint64_t mask = 0; mask < (uint64_t(1) << free.size()); ++mask) {
    for (auto [bit, op] : llvm::enumerate(free))
      placement[op] = (mask >> bit) & 1;
    PlacementCost cost = problem.evaluate(placement);
    if (cost.peakGpuBytes > problem.gpuBudgetBytes ||
        arenaOf(problem, placement) > problem.gpuBudgetBytes)
      continue;
    double us = objective == PlacementObjective::Serial
                    ? cost.totalUs()
                    : predictMakespan(problem, placement).us;
    if (!best || us < *best)
      best = us;
  }
  return best;
}

/// The GPU bytes an emitted function keeps live at its peak, from its
/// buffers' lifetimes under its schedule (independently of the offsets the
/// planner gave them): a buffer lives from the first op its writer may run
/// beside to the last op its readers may, a reshape extends its operand's
/// buffer, a GPU weight lives for the whole run, a workspace at its op.
int64_t irPeakGpuBytes(func::FuncOp func) {
  FailureOr<FunctionBuffers> buffers =
      collectArenaBuffers(func.getBody().front());
  return failed(buffers) ? -1 : peakLiveBytes(buffers->gpu.lifetimes);
}

/// The first difference between two queue programs, if any.
std::optional<std::string> compareQueuePrograms(const QueueProgram &ir,
                                                const QueueProgram &priced) {
  if (ir.items.size() != priced.items.size())
    return llvm::formatv("the IR runs {0} queue items, placement priced {1}",
                         ir.items.size(), priced.items.size())
        .str();
  for (size_t i = 0; i < ir.items.size(); ++i) {
    const QueueItem &a = ir.items[i], &b = priced.items[i];
    if (a.queue != b.queue || a.inputs != b.inputs || a.waits != b.waits ||
        std::fabs(a.us - b.us) > 1e-9 * std::max(1.0, a.us))
      return llvm::formatv("queue item {0} differs between the IR and the "
                           "program placement priced (queue {1} vs {2}, {3} "
                           "vs {4} us, {5} vs {6} inputs, {7} vs {8} waits)",
                           i, a.queue, b.queue, a.us, b.us, a.inputs.size(),
                           b.inputs.size(), a.waits.size(), b.waits.size())
          .str();
  }
  if (ir.buffers.size() != priced.buffers.size())
    return llvm::formatv("the IR has {0} arena buffers, placement priced {1}",
                         ir.buffers.size(), priced.buffers.size())
        .str();
  for (size_t i = 0; i < ir.buffers.size(); ++i) {
    const ArenaBuffer &a = ir.buffers[i], &b = priced.buffers[i];
    if (a.arena != b.arena || a.bytes != b.bytes || a.writer != b.writer ||
        a.readers != b.readers || a.heldToEnd != b.heldToEnd ||
        a.isWorkspace != b.isWorkspace)
      return llvm::formatv("arena buffer {0} differs between the IR and the "
                           "program placement priced",
                           i)
          .str();
  }
  return std::nullopt;
}

/// The schedule --tandem-schedule makes of `placement`, built from the
/// problem: the window placement priced it with, then the copies widened
/// where the budget allows; `program` receives it.
WindowChoice scheduleLikeThePass(const PlacementProblem &problem,
                                 const Placement &placement,
                                 QueueProgram &program) {
  program = buildQueueProgram(problem, placement);
  std::optional<int64_t> budget;
  if (problem.hasGpu)
    budget = problem.gpuBudgetBytes;
  return chooseScheduleWindow(program, budget, getDefaultScheduleWindows());
}

class PropertyChecker {
public:
  PropertyChecker(MLIRContext &context, Tally &tally)
      : context(context), tally(tally) {}

  void checkGraph(const std::string &name, const std::string &text,
                  const std::string &profileName);

private:
  MLIRContext &context;
  Tally &tally;

  Outcome place(const PlacementProblem &problem, PlacementStrategy strategy,
                const std::string &what);
  void checkPipeline(ModuleOp prepared, const std::string &profileName,
                     int64_t budget, PlacementStrategy strategy,
                     const Outcome &outcome, const std::string &what);
  /// The emitted, scheduled function's queue program against `scheduled`,
  /// the one the pass makes of the outcome's placement (scheduleLikeThePass,
  /// which chose `choice`).
  std::optional<std::string>
  compareWithPlacementProgram(func::FuncOp func, const Outcome &outcome,
                              const QueueProgram &scheduled,
                              const WindowChoice &choice);

public:
  /// The problem being swept, and the profile, for the comparison above.
  const PlacementProblem *problem = nullptr;
  const DeviceProfile *profile = nullptr;
};

std::optional<std::string>
PropertyChecker::compareWithPlacementProgram(func::FuncOp func,
                                             const Outcome &outcome,
                                             const QueueProgram &scheduled,
                                             const WindowChoice &choice) {
  FailureOr<BlockQueueProgram> ir =
      buildQueueProgram(func.getBody().front(), profile);
  if (failed(ir))
    return std::string("the emitted IR has no queue program");
  if (choice.window != outcome.makespanWindow)
    return llvm::formatv("the pass chose the window {0}, placement priced {1}",
                         choice.window, outcome.makespanWindow)
        .str();
  if (choice.makespanUs > outcome.makespanUs * (1 + 1e-9))
    return llvm::formatv("the pass's schedule takes {0} us, longer than the "
                         "{1} us placement priced",
                         choice.makespanUs, outcome.makespanUs)
        .str();
  return compareQueuePrograms(ir->program, scheduled);
}

Outcome PropertyChecker::place(const PlacementProblem &problem,
                               PlacementStrategy strategy,
                               const std::string &what) {
  Outcome outcome;
  double start = seconds();
  llvm::Expected<PlacementResult> result =
      solvePlacement(problem, strategy, {}, objective);
  double elapsed = seconds() - start;
  ++tally.placements;
  if (elapsed > tally.slowestSeconds) {
    tally.slowestSeconds = elapsed;
    tally.slowestWhat = what;
  }
  if (!result) {
    outcome.error = llvm::toString(result.takeError());
    return outcome;
  }
  outcome.placed = true;
  outcome.placement = result->placement;
  if (trace)
    llvm::errs() << llvm::formatv(
        "trace {0}: {1:F2} us, bound {2:F2}, {3} cuts, {4} nodes, {5:F3} s\n",
        what, result->cost.totalUs(), result->lowerBoundUs.value_or(-1),
        result->minCutSolves, result->searchNodes, elapsed);
  PlacementCost cost = problem.evaluate(result->placement);
  outcome.serialUs = cost.totalUs();
  MakespanPrediction prediction = predictMakespan(problem, result->placement);
  outcome.makespanUs = prediction.us;
  outcome.makespanWindow = prediction.window;
  bool bySerial = objective == PlacementObjective::Serial;
  outcome.totalUs = bySerial ? outcome.serialUs : outcome.makespanUs;
  outcome.peak = cost.peakGpuBytes;
  outcome.arena = arenaOf(problem, result->placement);
  auto differs = [](double a, double b) {
    return std::fabs(a - b) > 1e-9 * std::max(1.0, std::fabs(b));
  };
  if (differs(result->cost.totalUs(), outcome.serialUs))
    tally.violate("report", what + ": the result's cost is not its "
                                   "placement's");
  if (!bySerial &&
      (!result->makespanUs || differs(*result->makespanUs, outcome.makespanUs)))
    tally.violate("report", what + ": the result's makespan is not its "
                                   "placement's");
  std::optional<double> optimal =
      bySerial ? result->optimalUs : result->optimalMakespanUs;
  if (strategy == PlacementStrategy::Exact &&
      (!optimal || differs(*optimal, outcome.totalUs)))
    tally.violate("report", what + ": exact's optimal_us is not its total");
  if (outcome.arena <= problem.gpuBudgetBytes) {
    double bound = computeMakespanBound(problem).us();
    if (bound > outcome.makespanUs * (1 + 1e-9) + 1e-9)
      tally.violate("bound", what + llvm::formatv(": bound {0} us above the "
                                                  "makespan {1} us",
                                                  bound, outcome.makespanUs)
                                        .str());
  }
  return outcome;
}

/// The objective recomputed from the report's ops and values alone.
std::optional<std::string> checkReportArithmetic(const llvm::json::Object &r) {
  const llvm::json::Array *ops = r.getArray("ops");
  const llvm::json::Array *values = r.getArray("values");
  if (!ops || !values)
    return "no ops or values";
  std::vector<std::string> device;
  double total = 0;
  for (const llvm::json::Value &op : *ops) {
    const llvm::json::Object &o = *op.getAsObject();
    std::string d = o.getString("device")->str();
    device.push_back(d);
    std::optional<double> us = o.getNumber(d == "gpu" ? "gpu_us" : "cpu_us");
    if (!us)
      return "an op is on a device it cannot run on";
    total += *us;
  }
  int64_t h2d = 0, d2h = 0, h2dBytes = 0, d2hBytes = 0;
  for (const llvm::json::Value &value : *values) {
    const llvm::json::Object &v = *value.getAsObject();
    int64_t producer = *v.getInteger("producer");
    std::string home = producer < 0 ? "cpu" : device[producer];
    std::set<std::string> needed;
    for (const llvm::json::Value &c : *v.getArray("consumers")) {
      int64_t consumer = *c.getAsInteger();
      needed.insert(consumer == -1 ? "cpu" : device[consumer]);
    }
    if (!v.getArray("host_operand_of")->empty())
      needed.insert("cpu");
    bool weight = *v.getBoolean("weight");
    int64_t bytes = *v.getInteger("bytes");
    for (const std::string &where : needed) {
      if (where == home)
        continue;
      if (where == "gpu") {
        total += *v.getNumber("h2d_us");
        ++h2d;
        h2dBytes += bytes;
      } else if (!weight) {
        total += *v.getNumber("d2h_us");
        ++d2h;
        d2hBytes += bytes;
      }
    }
  }
  double predicted = *r.getObject("predicted_us")->getNumber("serial");
  if (std::fabs(total - predicted) > 1e-6 * std::max(1.0, predicted))
    return llvm::formatv("recomputed {0} us, predicted {1} us", total,
                         predicted)
        .str();
  const llvm::json::Object &t = *r.getObject("transfers");
  if (h2d != *t.getInteger("h2d_count") || d2h != *t.getInteger("d2h_count") ||
      h2dBytes != *t.getInteger("h2d_bytes") ||
      d2hBytes != *t.getInteger("d2h_bytes"))
    return "the transfer totals disagree with the values";
  return std::nullopt;
}

/// Runs the placement pipeline on a copy of `prepared` and compares the
/// report with the emitted IR; then runs it again on its own output.
void PropertyChecker::checkPipeline(ModuleOp prepared,
                                    const std::string &profileName,
                                    int64_t budget, PlacementStrategy strategy,
                                    const Outcome &outcome,
                                    const std::string &what) {
  llvm::SmallString<128> reportPath;
  if (llvm::sys::fs::createTemporaryFile("tandem-properties", "json",
                                         reportPath))
    return tally.violate("harness", "cannot create a temporary file");
  auto runPipeline = [&](ModuleOp module) {
    PassManager pm(&context);
    PlacementPipelineOptions options;
    options.gpuMemory = std::to_string(budget);
    options.deviceProfile = profileName;
    options.strategy = stringifyPlacementStrategy(strategy).str();
    options.objective = stringifyPlacementObjective(objective).str();
    options.report = reportPath.str().str();
    buildPlacementPipeline(pm, options);
    return pm.run(module);
  };
  auto readReport = [&]() -> std::optional<llvm::json::Value> {
    auto buffer = llvm::MemoryBuffer::getFile(reportPath);
    if (!buffer)
      return std::nullopt;
    llvm::Expected<llvm::json::Value> parsed =
        llvm::json::parse((*buffer)->getBuffer());
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return std::nullopt;
    }
    return std::move(*parsed);
  };

  OwningOpRef<ModuleOp> module = prepared.clone();
  ++tally.pipelines;
  bool ok;
  {
    // The harness expects failures for some strategies; keep them quiet.
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
      return success();
    });
    ok = succeeded(runPipeline(*module));
  }
  if (!ok) {
    // Baselines may break the budget; plan-memory then refuses them.
    if (outcome.placed && outcome.arena <= budget)
      tally.violate("report", what + ": the pipeline fails where the solver "
                                     "placed");
    llvm::sys::fs::remove(reportPath);
    return;
  }
  if (!outcome.placed) {
    tally.violate("report",
                  what + ": the pipeline places where the solver refused");
    llvm::sys::fs::remove(reportPath);
    return;
  }
  std::optional<llvm::json::Value> report = readReport();
  if (!report || !report->getAsObject()) {
    tally.violate("report", what + ": no report");
    return;
  }
  const llvm::json::Object &r = *report->getAsObject();
  if (std::optional<std::string> problem = checkReportArithmetic(r))
    tally.violate("report", what + ": " + *problem);

  // The emitted IR: devices of the model's ops, transfers, arena, peak.
  auto func = *module->getOps<func::FuncOp>().begin();
  std::vector<std::string> devices;
  int64_t h2d = 0, d2h = 0, h2dBytes = 0, d2hBytes = 0;
  Operation *previous = nullptr;
  for (Operation &op : func.getBody().front()) {
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      int64_t bytes = getNumBytes(transfer.getType());
      if (transfer.getTo().isGPU()) {
        ++h2d;
        h2dBytes += bytes;
      } else {
        ++d2h;
        d2hBytes += bytes;
      }
      previous = &op;
      continue;
    }
    // The CPU clone of a GPU weight read on the host is not a model op.
    auto weight = dyn_cast<WeightOp>(op);
    auto previousWeight = dyn_cast_or_null<WeightOp>(previous);
    previous = &op;
    if (weight && previousWeight &&
        weight.getName() == previousWeight.getName() &&
        getPlacedDevice(weight.getResult()).isCPU() &&
        getPlacedDevice(previousWeight.getResult()).isGPU())
      continue;
    if (op.hasTrait<mlir::OpTrait::IsTerminator>() || isa<WaitOp>(op))
      continue;
    DeviceAttr device = op.getNumResults()
                            ? getPlacedDevice(op.getResult(0))
                            : op.getAttrOfType<DeviceAttr>("tandem.device");
    devices.push_back(device && device.isGPU() ? "gpu" : "cpu");
  }
  const llvm::json::Array &ops = *r.getArray("ops");
  bool sameDevices = ops.size() == devices.size();
  for (size_t i = 0; sameDevices && i < ops.size(); ++i)
    sameDevices = ops[i].getAsObject()->getString("device")->str() ==
                  devices[i];
  if (!sameDevices)
    tally.violate("report", what + llvm::formatv(": the report's devices ({0} "
                                                 "ops) are not the IR's ({1})",
                                                 ops.size(), devices.size())
                                       .str());
  const llvm::json::Object &t = *r.getObject("transfers");
  if (h2d != *t.getInteger("h2d_count") || d2h != *t.getInteger("d2h_count") ||
      h2dBytes != *t.getInteger("h2d_bytes") ||
      d2hBytes != *t.getInteger("d2h_bytes"))
    tally.violate(
        "report",
        what + llvm::formatv(": copies in the report h2d {0} ({1} B) d2h {2} "
                             "({3} B), in the IR h2d {4} ({5} B) d2h {6} ({7} "
                             "B)",
                             *t.getInteger("h2d_count"),
                             *t.getInteger("h2d_bytes"),
                             *t.getInteger("d2h_count"),
                             *t.getInteger("d2h_bytes"), h2d, h2dBytes, d2h,
                             d2hBytes)
                   .str());
  auto arenaAttr = func->getAttrOfType<IntegerAttr>("tandem.gpu_arena_bytes");
  int64_t irArena = arenaAttr ? arenaAttr.getInt() : -1;
  if (irArena != *r.getInteger("gpu_arena_bytes"))
    tally.violate("report", what + llvm::formatv(": arena {0} B in the report, "
                                                 "{1} B in the IR",
                                                 *r.getInteger("gpu_arena_bytes"),
                                                 irArena)
                                       .str());
  if (irArena > budget)
    tally.violate("budget", what + ": the emitted arena is over the budget");
  int64_t irPeak = irPeakGpuBytes(func);
  if (irPeak != *r.getInteger("peak_gpu_bytes"))
    tally.violate("report", what + llvm::formatv(": peak {0} B in the report, "
                                                 "{1} B in the IR",
                                                 *r.getInteger("peak_gpu_bytes"),
                                                 irPeak)
                                       .str());
  double reported = *r.getObject("predicted_us")->getNumber("serial");
  if (std::fabs(reported - outcome.serialUs) >
      1e-6 * std::max(1.0, outcome.serialUs))
    tally.violate("report", what + ": the pipeline's placement is not the "
                                   "solver's");
  // The schedule the IR runs is the one placement priced, its copies
  // widened by the pass.
  double makespan = *r.getObject("predicted_us")->getNumber("makespan");
  QueueProgram scheduled;
  WindowChoice choice =
      scheduleLikeThePass(*problem, outcome.placement, scheduled);
  double passUs = choice.makespanUs;
  if (std::fabs(makespan - passUs) > 1e-6 * std::max(1.0, passUs))
    tally.violate("report",
                  what + llvm::formatv(": the schedule's makespan {0} us is "
                                       "not the one the pass makes of the "
                                       "placement, {1} us",
                                       makespan, passUs)
                             .str());
  if (std::optional<std::string> mismatch =
          compareWithPlacementProgram(func, outcome, scheduled, choice))
    tally.violate("report", what + ": " + *mismatch);

  // Fed back: the same IR and the same report.
  std::string once;
  {
    llvm::raw_string_ostream os(once);
    module->print(os);
  }
  llvm::json::Value firstReport = *report;
  bool againOk;
  {
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
      return success();
    });
    againOk = succeeded(runPipeline(*module));
  }
  if (!againOk) {
    tally.violate("feedback", what + ": the pipeline refuses its own output");
  } else {
    std::string twice;
    llvm::raw_string_ostream os(twice);
    module->print(os);
    if (once != twice)
      tally.violate("feedback", what + ": the pipeline changes its own "
                                       "output");
    std::optional<llvm::json::Value> again = readReport();
    auto field = [](const llvm::json::Value &v, llvm::StringRef key) {
      const llvm::json::Object *o = v.getAsObject();
      const llvm::json::Value *f = o ? o->get(key) : nullptr;
      return f ? llvm::formatv("{0}", *f).str() : std::string();
    };
    if (!again || field(*again, "predicted_us") !=
                      field(firstReport, "predicted_us") ||
        field(*again, "transfers") != field(firstReport, "transfers") ||
        field(*again, "gpu_arena_bytes") !=
            field(firstReport, "gpu_arena_bytes"))
      tally.violate("feedback", what + ": the report of the fed-back output "
                                       "differs");
  }
  llvm::sys::fs::remove(reportPath);
}

void PropertyChecker::checkGraph(const std::string &name,
                                 const std::string &text,
                                 const std::string &profileName) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module) {
    tally.violate("harness", name + " does not parse");
    return;
  }
  // What --tandem-place sees inside the pipeline.
  {
    PassManager pm(&context);
    addPrePlacementCleanup(pm);
    if (failed(pm.run(*module))) {
      tally.violate("harness", name + ": canonicalization fails");
      return;
    }
  }
  llvm::Expected<DeviceProfile> profile = loadDeviceProfile(profileName);
  if (!profile) {
    tally.violate("harness", llvm::toString(profile.takeError()));
    return;
  }
  auto func = *module->getOps<func::FuncOp>().begin();
  FailureOr<PlacementGraph> graph = failure();
  {
    // A model with GPU pins cannot be placed on a profile without a GPU:
    // skipped, not a violation.
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
      return success();
    });
    graph = buildPlacementGraph(func, *profile, int64_t(1) << 60);
  }
  if (failed(graph)) {
    ++tally.skipped;
    return;
  }
  PlacementProblem problem = graph->problem;
  int freeOps = countFreeOps(problem);
  this->problem = &problem;
  this->profile = &*profile;

  // From the tightest budget (all-CPU laid out) to what the unconstrained
  // optimum needs, and a little beyond.
  Placement least = problem.leastGpuPlacement();
  int64_t tightest = std::max(problem.evaluate(least).peakGpuBytes,
                              arenaOf(problem, least));
  Placement free = solveMinCut(problem);
  int64_t loosest = std::max(problem.evaluate(free).peakGpuBytes,
                             arenaOf(problem, free));
  std::vector<int64_t> budgets;
  if (!problem.hasGpu) {
    budgets = {0, int64_t(1) << 30};
  } else {
    int steps = std::max(2, int(numBudgets));
    for (int i = 0; i < steps; ++i)
      budgets.push_back(tightest + (loosest - tightest) * i / (steps - 1));
    budgets.push_back(loosest + loosest / 10 + 4096);
    if (tightest > 0)
      budgets.insert(budgets.begin(), tightest - 1);
    budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
  }
  if (!fixedBudgets.empty())
    budgets.assign(fixedBudgets.begin(), fixedBudgets.end());
  ++tally.budgetSweeps;

  double sweepStart = seconds();
  auto reportSweep = llvm::make_scope_exit([&] {
    if (verbose)
      llvm::errs() << llvm::formatv("sweep {0} on {1}: {2} ops, {3} free, {4} "
                                    "budgets, {5:F1} s\n",
                                    name, profileName, problem.ops.size(),
                                    freeOps, budgets.size(),
                                    seconds() - sweepStart);
  });
  std::map<PlacementStrategy, std::optional<double>> previousUs;
  for (auto [budgetIndex, budget] : llvm::enumerate(budgets)) {
    problem.gpuBudgetBytes = budget;
    std::string where = llvm::formatv("{0} on {1} at {2} B", name, profileName,
                                      budget)
                            .str();
    std::map<PlacementStrategy, Outcome> outcomes;
    bool allCpuFits = tightest <= budget;
    for (PlacementStrategy strategy : kStrategies) {
      int exactLimit = objective == PlacementObjective::Makespan
                           ? std::min<int>(exactOps, exactMakespanOps)
                           : exactOps;
      if (strategy == PlacementStrategy::Exact && freeOps > exactLimit)
        continue;
      if (!strategyNames.empty() &&
          !llvm::is_contained(strategyNames,
                              stringifyPlacementStrategy(strategy).str()))
        continue;
      std::string what =
          where + " (" + stringifyPlacementStrategy(strategy).str() + ")";
      Outcome outcome = place(problem, strategy, what);
      bool promised = strategy == PlacementStrategy::Auto ||
                      strategy == PlacementStrategy::Exact;
      if (promised && !outcome.placed && allCpuFits)
        tally.violate("refusal", what + ": " + outcome.error);
      if (promised && outcome.placed && outcome.arena > budget)
        tally.violate("budget", what + llvm::formatv(": arena {0} B",
                                                     outcome.arena)
                                           .str());
      if (promised && outcome.placed) {
        std::optional<double> &before = previousUs[strategy];
        if (before && outcome.totalUs > *before * 1.001)
          tally.violate("monotone",
                        what + llvm::formatv(": {0} us, {1} us at a smaller "
                                             "budget",
                                             outcome.totalUs, *before)
                                   .str());
        if (!before || outcome.totalUs < *before)
          before = outcome.totalUs;
      }
      if (!skipPipeline && (budgetIndex % std::max(1, int(irEvery)) == 0 ||
                            budgetIndex + 1 == budgets.size()))
        checkPipeline(*module, profileName, budget, strategy, outcome, what);
      outcomes[strategy] = std::move(outcome);
    }
    const Outcome &automatic = outcomes[PlacementStrategy::Auto];
    if (automatic.placed) {
      for (PlacementStrategy baseline :
           {PlacementStrategy::AllCpu, PlacementStrategy::Greedy,
            PlacementStrategy::AllGpu, PlacementStrategy::MinCut}) {
        const Outcome &other = outcomes[baseline];
        if (other.placed && other.arena <= budget &&
            automatic.totalUs > other.totalUs * (1 + 1e-9) + 1e-9)
          tally.violate(
              "baselines",
              where + llvm::formatv(": auto {0} us, {1} {2} us",
                                    automatic.totalUs,
                                    stringifyPlacementStrategy(baseline),
                                    other.totalUs)
                          .str());
      }
    }
    auto exact = outcomes.find(PlacementStrategy::Exact);
    if (exact != outcomes.end() && exact->second.placed && automatic.placed &&
        exact->second.totalUs > automatic.totalUs * (1 + 1e-9) + 1e-9)
      tally.violate("baselines",
                    where + llvm::formatv(": exact {0} us, auto {1} us",
                                          exact->second.totalUs,
                                          automatic.totalUs)
                                .str());
    if (exact != outcomes.end() && exact->second.placed &&
        exact->second.arena <= budget) {
      // The report's bound, its placements term included.
      double bound =
          computeMakespanBound(problem, BoundEffort::Exhaustive).us();
      double optimum = objective == PlacementObjective::Makespan
                           ? exact->second.totalUs
                           : exact->second.makespanUs;
      if (bound > optimum * (1 + 1e-9) + 1e-9)
        tally.violate("bound", where + llvm::formatv(": bound {0} us above "
                                                     "exact's makespan {1} us",
                                                     bound, optimum)
                                           .str());
    }
    if (exact != outcomes.end() && freeOps <= bruteForceOps && problem.hasGpu) {
      std::optional<double> optimum = bruteForce(problem);
      bool agree = optimum ? exact->second.placed &&
                                 std::fabs(exact->second.totalUs - *optimum) <=
                                     1e-6 * std::max(1.0, *optimum)
                           : !exact->second.placed;
      if (!agree)
        tally.violate("optimum",
                      where + llvm::formatv(": exact {0}, brute force {1}",
                                            exact->second.placed
                                                ? std::to_string(
                                                      exact->second.totalUs)
                                                : "refuses",
                                            optimum ? std::to_string(*optimum)
                                                    : "none fits")
                                  .str());
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv,
                              "Tandem placement property tests\n");
  std::optional<PlacementObjective> parsed =
      parsePlacementObjective(objectiveName);
  if (!parsed) {
    llvm::errs() << "unknown objective '" << objectiveName
                 << "': expected makespan or serial\n";
    return 2;
  }
  objective = *parsed;
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);

  std::vector<std::pair<std::string, std::string>> graphs;
  for (const std::string &file : modelFiles) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer) {
      llvm::errs() << "cannot read " << file << "\n";
      return 2;
    }
    graphs.push_back({llvm::sys::path::filename(file).str(),
                      (*buffer)->getBuffer().str()});
  }
  std::mt19937 rng(seed);
  for (int i = 0; i < numRandom; ++i) {
    int ops = minRandomOps +
              int(rng() % unsigned(std::max(1, maxRandomOps - minRandomOps + 1)));
    graphs.push_back({llvm::formatv("random#{0}({1} ops)", i, ops).str(),
                      makeRandomModel(rng, ops)});
    if (!dumpDir.empty()) {
      std::error_code error;
      llvm::raw_fd_ostream os(
          llvm::formatv("{0}/random-{1}.mlir", dumpDir, i).str(), error);
      if (!error)
        os << graphs.back().second;
    }
  }
  std::vector<std::string> profiles(profileNames.begin(), profileNames.end());
  if (profiles.empty())
    for (llvm::StringRef name : getBuiltinProfileNames())
      profiles.push_back(name.str());

  Tally tally;
  PropertyChecker checker(context, tally);
  double start = seconds();
  for (const auto &[name, text] : graphs)
    for (const std::string &profile : profiles)
      checker.checkGraph(name, text, profile);

  llvm::outs() << llvm::formatv(
      "{0} graphs x {1} profiles: {2} budget sweeps, {3} placements, {4} "
      "pipeline runs checked against their reports, in {5:F1} s\n",
      graphs.size(), profiles.size(), tally.budgetSweeps, tally.placements,
      tally.pipelines, seconds() - start);
  if (tally.skipped)
    llvm::outs() << llvm::formatv("{0} graph/profile pairs skipped (GPU pins "
                                  "on a profile without a GPU)\n",
                                  tally.skipped);
  llvm::outs() << llvm::formatv("slowest placement: {0:F3} s ({1})\n",
                                tally.slowestSeconds, tally.slowestWhat);
  int64_t total = 0;
  for (const char *property : {"refusal", "budget", "monotone", "baselines",
                               "optimum", "bound", "report", "feedback",
                               "harness"}) {
    int64_t count = tally.violations[property];
    total += count;
    llvm::outs() << llvm::formatv("{0,-10} {1} violations", property, count);
    if (count)
      llvm::outs() << "; first: " << tally.firstExample[property];
    llvm::outs() << "\n";
  }
  llvm::outs() << llvm::formatv("{0} violations in all\n", total);
  return total ? 1 : 0;
}
