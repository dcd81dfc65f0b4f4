//===- PlacementBenchmark.cpp - quality and scale of placement ------------===//
//
// Prints two tables (a program, not a test; the figures are in
// docs/placement.md):
//
// 1. Quality: on random graphs and model-shaped graphs, under budgets from
//    unconstrained to tight, the predicted time of auto against the proven
//    optimum (exact) and of the baselines (greedy, all-cpu, all-gpu)
//    against auto.
// 2. Scale: the placement pipeline on model-shaped graphs of 1k to 1M ops,
//    as a ratio to parsing and verifying the same text, in one process.
//
// Usage: tandem-bench-placement [--max-ops N] [--quick] [--scale-only]
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/PlacementGraph.h"
#include "RandomPlacementProblems.h"
#include "tandem/Dialect/Tandem/Transforms/Passes.h"
#include "tandem/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

using namespace mlir;
using namespace mlir::tandem;

namespace {

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

//===----------------------------------------------------------------------===//
// Model-shaped graphs
//===----------------------------------------------------------------------===//

/// An MLP tower: `layers` linear+relu layers of width `width` at `batch`.
std::string mlpTower(int batch, int width, int layers) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("func.func @main(%x: tensor<{0}x{1}xf32>) -> "
                      "tensor<{0}x{1}xf32> {{\n",
                      batch, width);
  std::string previous = "%x";
  for (int i = 0; i < layers; ++i) {
    os << llvm::formatv(
        "  %w{0} = tandem.weight \"l{0}.w\" : tensor<{2}x{2}xf32>\n"
        "  %b{0} = tandem.weight \"l{0}.b\" : tensor<{2}xf32>\n"
        "  %h{0} = tandem.linear {3}, %w{0}, %b{0} : (tensor<{1}x{2}xf32>, "
        "tensor<{2}x{2}xf32>, tensor<{2}xf32>) -> tensor<{1}x{2}xf32>\n"
        "  %a{0} = tandem.relu %h{0} : tensor<{1}x{2}xf32>\n",
        i, batch, width, previous);
    previous = llvm::formatv("%a{0}", i);
  }
  os << llvm::formatv("  return {0} : tensor<{1}x{2}xf32>\n}\n", previous,
                      batch, width);
  return text;
}

/// A transformer encoder block at (batch, seq, model) with `heads` folded
/// into the batch.
std::string transformerBlock(int seq, int model) {
  return llvm::formatv(R"(
func.func @main(%x: tensor<{0}x{1}xf32>) -> tensor<{0}x{1}xf32> {{
  %g = tandem.weight "ln1.g" : tensor<{1}xf32>
  %be = tandem.weight "ln1.b" : tensor<{1}xf32>
  %n = tandem.layer_norm %x, %g, %be {{axis = -1 : i64} : (tensor<{0}x{1}xf32>, tensor<{1}xf32>, tensor<{1}xf32>) -> tensor<{0}x{1}xf32>
  %wq = tandem.weight "q.w" : tensor<{1}x{1}xf32>
  %wk = tandem.weight "k.w" : tensor<{1}x{1}xf32>
  %wv = tandem.weight "v.w" : tensor<{1}x{1}xf32>
  %q = tandem.linear %n, %wq : (tensor<{0}x{1}xf32>, tensor<{1}x{1}xf32>) -> tensor<{0}x{1}xf32>
  %k = tandem.linear %n, %wk : (tensor<{0}x{1}xf32>, tensor<{1}x{1}xf32>) -> tensor<{0}x{1}xf32>
  %v = tandem.linear %n, %wv : (tensor<{0}x{1}xf32>, tensor<{1}x{1}xf32>) -> tensor<{0}x{1}xf32>
  %kt = tandem.transpose %k {{perm = array<i64: 1, 0>} : tensor<{0}x{1}xf32> -> tensor<{1}x{0}xf32>
  %s = tandem.matmul %q, %kt : (tensor<{0}x{1}xf32>, tensor<{1}x{0}xf32>) -> tensor<{0}x{0}xf32>
  %p = tandem.softmax %s {{axis = -1 : i64} : tensor<{0}x{0}xf32>
  %o = tandem.matmul %p, %v : (tensor<{0}x{0}xf32>, tensor<{0}x{1}xf32>) -> tensor<{0}x{1}xf32>
  %wo = tandem.weight "o.w" : tensor<{1}x{1}xf32>
  %proj = tandem.linear %o, %wo : (tensor<{0}x{1}xf32>, tensor<{1}x{1}xf32>) -> tensor<{0}x{1}xf32>
  %r1 = tandem.add %x, %proj : tensor<{0}x{1}xf32>
  %g2 = tandem.weight "ln2.g" : tensor<{1}xf32>
  %b2 = tandem.weight "ln2.b" : tensor<{1}xf32>
  %n2 = tandem.layer_norm %r1, %g2, %b2 {{axis = -1 : i64} : (tensor<{0}x{1}xf32>, tensor<{1}xf32>, tensor<{1}xf32>) -> tensor<{0}x{1}xf32>
  %w1 = tandem.weight "ff1.w" : tensor<{2}x{1}xf32>
  %f1 = tandem.linear %n2, %w1 : (tensor<{0}x{1}xf32>, tensor<{2}x{1}xf32>) -> tensor<{0}x{2}xf32>
  %ge = tandem.gelu %f1 : tensor<{0}x{2}xf32>
  %w2 = tandem.weight "ff2.w" : tensor<{1}x{2}xf32>
  %f2 = tandem.linear %ge, %w2 : (tensor<{0}x{2}xf32>, tensor<{1}x{2}xf32>) -> tensor<{0}x{1}xf32>
  %r2 = tandem.add %r1, %f2 : tensor<{0}x{1}xf32>
  return %r2 : tensor<{0}x{1}xf32>
}
)",
                       seq, model, 4 * model);
}

/// A small CNN: conv, batch norm, relu and pooling stages, then a classifier.
std::string smallCnn(int batch) {
  return llvm::formatv(R"(
func.func @main(%x: tensor<{0}x3x64x64xf32>) -> tensor<{0}x10xf32> {{
  %w1 = tandem.weight "c1.w" : tensor<32x3x3x3xf32>
  %c1 = tandem.conv2d %x, %w1 {{padding = array<i64: 1, 1>} : (tensor<{0}x3x64x64xf32>, tensor<32x3x3x3xf32>) -> tensor<{0}x32x64x64xf32>
  %s1 = tandem.weight "bn1.s" : tensor<32xf32>
  %n1 = tandem.batch_norm %c1, %s1, %s1, %s1, %s1 : (tensor<{0}x32x64x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<{0}x32x64x64xf32>
  %r1 = tandem.relu %n1 : tensor<{0}x32x64x64xf32>
  %p1 = tandem.max_pool2d %r1 {{kernel = array<i64: 2, 2>} : tensor<{0}x32x64x64xf32> -> tensor<{0}x32x32x32xf32>
  %w2 = tandem.weight "c2.w" : tensor<64x32x3x3xf32>
  %c2 = tandem.conv2d %p1, %w2 {{padding = array<i64: 1, 1>} : (tensor<{0}x32x32x32xf32>, tensor<64x32x3x3xf32>) -> tensor<{0}x64x32x32xf32>
  %s2 = tandem.weight "bn2.s" : tensor<64xf32>
  %n2 = tandem.batch_norm %c2, %s2, %s2, %s2, %s2 : (tensor<{0}x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<{0}x64x32x32xf32>
  %r2 = tandem.relu %n2 : tensor<{0}x64x32x32xf32>
  %p2 = tandem.avg_pool2d %r2 {{kernel = array<i64: 32, 32>} : tensor<{0}x64x32x32xf32> -> tensor<{0}x64x1x1xf32>
  %f = tandem.reshape %p2 : tensor<{0}x64x1x1xf32> -> tensor<{0}x64xf32>
  %wf = tandem.weight "fc.w" : tensor<10x64xf32>
  %y = tandem.linear %f, %wf : (tensor<{0}x64xf32>, tensor<10x64xf32>) -> tensor<{0}x10xf32>
  return %y : tensor<{0}x10xf32>
}
)",
                       batch);
}

/// `blocks` residual blocks (weight, linear, relu, add): 4 ops each.
std::string residualChain(int blocks) {
  std::string text;
  text.reserve(size_t(blocks) * 400);
  llvm::raw_string_ostream os(text);
  os << "func.func @main(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {\n";
  std::string previous = "%x";
  for (int i = 0; i < blocks; ++i) {
    os << "  %w" << i << " = tandem.weight \"b" << i
       << ".w\" : tensor<256x256xf32>\n"
       << "  %l" << i << " = tandem.linear " << previous << ", %w" << i
       << " : (tensor<1024x256xf32>, tensor<256x256xf32>) -> "
          "tensor<1024x256xf32>\n"
       << "  %r" << i << " = tandem.relu %l" << i << " : tensor<1024x256xf32>\n"
       << "  %a" << i << " = tandem.add " << previous << ", %r" << i
       << " : tensor<1024x256xf32>\n";
    previous = "%a" + std::to_string(i);
  }
  os << "  return " << previous << " : tensor<1024x256xf32>\n}\n";
  return text;
}

//===----------------------------------------------------------------------===//
// Quality
//===----------------------------------------------------------------------===//

struct QualityRow {
  std::string graph;
  size_t ops;
  std::string budget;
  double exactUs, autoUs;
  std::optional<double> greedyUs, cpuUs, gpuUs;
  bool greedyFits, gpuFits;
};

void printQualityRow(const QualityRow &row) {
  auto ratio = [&](std::optional<double> us, bool fits) -> std::string {
    if (!us)
      return "error";
    std::string text = llvm::formatv("{0:F3}", *us / row.autoUs);
    return fits ? text : text + "*";
  };
  llvm::outs() << llvm::formatv(
      "{0,-32} {1,4} {2,-8} {3,12:F1} {4,9:F4} {5,9} {6,9} {7,9}\n",
      row.graph, row.ops, row.budget, row.exactUs, row.autoUs / row.exactUs,
      ratio(row.greedyUs, row.greedyFits), ratio(row.cpuUs, true),
      ratio(row.gpuUs, row.gpuFits));
}

/// Solves `problem` with every strategy; nullopt if exact is out of reach.
std::optional<QualityRow> compare(const std::string &graph,
                                  const std::string &budget,
                                  const PlacementProblem &problem) {
  llvm::Expected<PlacementResult> exact =
      solvePlacement(problem, PlacementStrategy::Exact);
  if (!exact) {
    llvm::consumeError(exact.takeError());
    return std::nullopt;
  }
  QualityRow row{graph, problem.ops.size(), budget, exact->cost.totalUs(),
                 0, {}, {}, {}, true, true};
  row.autoUs = llvm::cantFail(solvePlacement(problem, PlacementStrategy::Auto))
                   .cost.totalUs();
  // Greedy and all-gpu may break the budget; they are shown with a '*'.
  PlacementResult greedy =
      llvm::cantFail(solvePlacement(problem, PlacementStrategy::Greedy));
  row.greedyUs = greedy.cost.totalUs();
  row.greedyFits = problem.fitsBudget(greedy.placement, greedy.cost);
  row.cpuUs = llvm::cantFail(solvePlacement(problem, PlacementStrategy::AllCpu))
                  .cost.totalUs();
  PlacementProblem unlimited = problem;
  unlimited.gpuBudgetBytes = int64_t(1) << 62;
  PlacementResult gpu =
      llvm::cantFail(solvePlacement(unlimited, PlacementStrategy::AllGpu));
  row.gpuUs = gpu.cost.totalUs();
  row.gpuFits = problem.fitsBudget(gpu.placement, gpu.cost);
  return row;
}

void runQuality(MLIRContext &context, bool quick) {
  llvm::outs() << "== Quality: predicted time, auto against the proven "
                  "optimum and the baselines against auto\n"
               << "   (budget: the fraction of the way from the least GPU "
                  "memory any placement needs to what the unconstrained "
                  "optimum uses; '*': the baseline breaks the budget)\n\n";
  llvm::outs() << llvm::formatv(
      "{0,-32} {1,4} {2,-8} {3,12} {4,9} {5,9} {6,9} {7,9}\n", "graph", "ops",
      "budget", "exact us", "auto/opt", "greedy/a", "cpu/auto", "gpu/auto");

  double worst = 1, sum = 0;
  int rows = 0, optimal = 0;
  auto record = [&](const std::optional<QualityRow> &row) {
    if (!row)
      return;
    printQualityRow(*row);
    double ratio = row->autoUs / row->exactUs;
    worst = std::max(worst, ratio);
    sum += ratio;
    ++rows;
    optimal += ratio <= 1 + 1e-9;
  };
  auto withBudgets = [&](const std::string &name, PlacementProblem problem) {
    // Budgets bound the laid-out arena.
    int64_t least = problem.arenaBytes(problem.leastGpuPlacement());
    int64_t free = problem.arenaBytes(solveMinCut(problem));
    for (double fraction : {1.0, 0.75, 0.5, 0.25, 0.0}) {
      if (fraction < 1 && free <= least)
        break;
      problem.gpuBudgetBytes =
          fraction == 1.0 ? std::max(problem.gpuBudgetBytes, free)
                          : least + int64_t(fraction * (free - least));
      record(compare(name, fraction == 1.0 ? "free"
                                           : llvm::formatv("{0:F2}", fraction)
                                                 .str(),
                     problem));
    }
  };

  struct Model {
    std::string name, text, profile;
  };
  std::vector<Model> models = {
      {"mlp 13-16-32-1 b128", mlpTower(128, 16, 3), "h200"},
      {"mlp 1024x4 b256", mlpTower(256, 1024, 4), "v100-32gb"},
      {"mlp 4096x6 b64", mlpTower(64, 4096, 6), "v100-32gb"},
      {"transformer s512 d768", transformerBlock(512, 768), "a100-80gb"},
      {"transformer s128 d256", transformerBlock(128, 256), "v100-32gb"},
      {"cnn b32", smallCnn(32), "v100-32gb"},
      {"cnn b1", smallCnn(1), "h200"},
  };
  for (const Model &model : models) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(model.text, &context);
    if (!module) {
      llvm::errs() << "benchmark model '" << model.name << "' does not parse\n";
      continue;
    }
    // What --tandem-place prices: the IR after its cleanup.
    PassManager cleanup(&context);
    addPrePlacementCleanup(cleanup);
    if (failed(cleanup.run(*module)))
      continue;
    DeviceProfile profile = *getBuiltinProfile(model.profile);
    auto func = *module->getOps<FunctionOpInterface>().begin();
    FailureOr<PlacementGraph> graph =
        buildPlacementGraph(func, profile, profile.gpu->memoryBytes);
    if (succeeded(graph))
      withBudgets(model.name + " " + model.profile, graph->problem);
  }
  std::mt19937 rng(12345);
  int randomGraphs = quick ? 10 : 40;
  for (int i = 0; i < randomGraphs; ++i) {
    int size = 10 + (i * 7) % 31;
    withBudgets(llvm::formatv("random #{0}", i).str(),
                makeRandomPlacementProblem(rng, size));
  }
  llvm::outs() << llvm::formatv(
      "\n{0} problems: auto/optimum mean {1:F4}, worst {2:F4}; auto optimal "
      "in {3} of them\n\n",
      rows, sum / std::max(rows, 1), worst, optimal);
}

//===----------------------------------------------------------------------===//
// Scale
//===----------------------------------------------------------------------===//

void runScale(MLIRContext &context, int64_t maxOps) {
  llvm::outs() << "== Scale: the placement pipeline (place, insert "
                  "transfers, plan memory) against parsing and verifying the "
                  "same text\n\n";
  llvm::outs() << llvm::formatv("{0,9} {1,-8} {2,11} {3,11} {4,11} {5,8} {6,12}\n",
                                "ops", "budget", "parse s", "pipeline s",
                                "place s", "ratio", "place ratio");
  for (int64_t ops : {1000, 10000, 100000, 1000000}) {
    if (ops > maxOps)
      break;
    std::string text = residualChain(ops / 4);
    // Unconstrained, then with a budget of a third of the weights.
    int64_t weights = int64_t(ops / 4) * 256 * 256 * 4;
    for (auto [name, budget] :
         {std::pair<const char *, int64_t>{"free", 0},
          {"1/3 w", weights / 3}}) {
      double start = seconds();
      OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
      double parsed = seconds();
      if (!module)
        return;
      PassManager pm(&context);
      PlacementPipelineOptions options;
      options.deviceProfile = "h200";
      if (budget)
        options.gpuMemory = std::to_string(budget);
      buildPlacementPipeline(pm, options);
      double before = seconds();
      bool ok = succeeded(pm.run(*module));
      double after = seconds();
      // The place pass alone, on a fresh copy.
      OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(text, &context);
      PassManager placeOnly(&context);
      PlaceOptions place;
      place.deviceProfile = "h200";
      if (budget)
        place.gpuMemory = std::to_string(budget);
      placeOnly.addPass(createPlace(place));
      double placeStart = seconds();
      ok &= succeeded(placeOnly.run(*again));
      double placeEnd = seconds();
      llvm::outs() << llvm::formatv(
          "{0,9} {1,-8} {2,11:F3} {3,11:F3} {4,11:F3} {5,8:F2} {6,12:F2}{7}\n",
          ops, name, parsed - start, after - before, placeEnd - placeStart,
          (after - before) / (parsed - start),
          (placeEnd - placeStart) / (parsed - start), ok ? "" : "  FAILED");
      llvm::outs().flush();
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  int64_t maxOps = 1000000;
  bool quick = false, scaleOnly = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--max-ops") && i + 1 < argc) {
      maxOps = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--scale-only")) {
      scaleOnly = true;
    } else if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
      maxOps = std::min<int64_t>(maxOps, 10000);
    } else {
      llvm::errs() << "usage: tandem-bench-placement [--max-ops N] [--quick] "
                      "[--scale-only]\n";
      return 1;
    }
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.disableMultithreading();
  if (!scaleOnly)
    runQuality(context, quick);
  runScale(context, maxOps);
  return 0;
}
