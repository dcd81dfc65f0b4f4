//===- PlacementCut.cpp - placement as an s-t minimum cut -----------------===//
//
// Stone's construction (1977): the source side is the CPU, the sink side
// the GPU. Op i has an edge source -> i of its GPU time and i -> sink of its
// CPU time. Each value has a chain of auxiliary "needed on the GPU" nodes,
// one per consumer (one without prices): node s is on the GPU side iff a
// consumer from the s-th on runs there, so the h2d copy is paid once (edge
// producer -> node 0) and, with prices, the GPU bytes live from the
// previous consumer's point to this one's are charged on node s. One
// "needed on the CPU" node pays the d2h copy once.
//
// Prices make the cut a Lagrangian relaxation of the budget. They charge
// only bytes that are certainly live (pricedGpuBytes), so the relaxation's
// value is a true lower bound: a GPU reshape's extension of its operand's
// buffer and the copy-out point of a result no GPU op reads are left
// unpriced rather than charged twice.
//
//===----------------------------------------------------------------------===//

#include "PlacementSearch.h"

#include "tandem/Analysis/MinCut.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::search;

namespace {

/// Capacities are integer picoseconds; a finite capacity is capped well
/// below infinity so sums of finite capacities never reach it.
constexpr double kPicosecondsPerUs = 1e6;
constexpr int64_t kMaxFinite = int64_t(1) << 50;

struct CapacityScale {
  bool capped = false;
  int64_t operator()(double us) {
    if (us == kUnreachable)
      return MinCutGraph::kInfinity;
    double ps = us * kPicosecondsPerUs;
    if (ps >= double(kMaxFinite)) {
      capped = true;
      return kMaxFinite;
    }
    return static_cast<int64_t>(std::llround(ps));
  }
};

int64_t alignedResultBytes(const PlacementProblem &problem,
                           const PlacementOp &op) {
  int64_t bytes = 0;
  for (int value : op.results)
    bytes += alignBufferSize(problem.values[value].bytes);
  return bytes;
}

/// Where the GPU memory of a value's consumer chain starts: its copy (or,
/// produced on the GPU, the point after its producer's own).
int64_t chainStart(const PlacementValue &value) {
  return value.isArgument() ? 0 : 2 * int64_t(value.producer) + 2;
}

/// The chain of a weight or a reshape result is charged only when its
/// producer is on the CPU: otherwise the weight is resident (charged on the
/// op) or the reshape aliases its operand's buffer (left unpriced).
bool chainChargedOnlyFromCpu(const PlacementProblem &problem,
                             const PlacementValue &value) {
  return !value.isArgument() &&
         (value.isWeight || problem.ops[value.producer].aliasesOperand);
}

/// The points at which a GPU op's own results are priced: a resident weight
/// for the whole run, another op at its own point, a reshape never.
std::optional<std::pair<int64_t, int64_t>>
opPricedSpan(const PlacementProblem &problem, int index) {
  const PlacementOp &op = problem.ops[index];
  if (op.aliasesOperand)
    return std::nullopt;
  if (op.isWeight)
    return std::make_pair(int64_t(0), problem.getNumPoints() - 1);
  return std::make_pair(2 * int64_t(index) + 1, 2 * int64_t(index) + 1);
}

} // namespace

CutGraph::CutGraph(const PlacementProblem &problem,
                   const std::vector<double> *prices)
    : graph(problem.ops.size() + 2), numOps(problem.ops.size()),
      source(numOps), sink(numOps + 1) {
  CapacityScale capacity;
  auto addEdge = [&](int from, int to, double us) {
    int64_t c = capacity(us);
    finiteEdges += c > 0 && c < MinCutGraph::kInfinity;
    graph.addEdge(from, to, c);
  };

  // The price of keeping `bytes` on the GPU over points [first, last].
  std::vector<double> prefix;
  if (prices) {
    prefix.assign(prices->size() + 1, 0);
    for (size_t t = 0; t < prices->size(); ++t)
      prefix[t + 1] = prefix[t] + (*prices)[t];
  }
  auto price = [&](int64_t bytes, int64_t first, int64_t last) {
    if (prefix.empty() || last < first)
      return 0.0;
    return double(bytes) * (prefix[last + 1] - prefix[first]);
  };

  // Two edges per op; per value a node and an edge for its copy to the GPU
  // (a node and two edges per reader where memory is priced), an edge per
  // reader, and the same again for its copy to the CPU.
  size_t nodes = problem.ops.size() + 2, edges = 2 * problem.ops.size();
  for (const PlacementValue &value : problem.values) {
    size_t readers = value.consumers.size();
    nodes += 2 + (prices ? readers : 0);
    edges += 3 + 2 * readers + (prices ? 2 * readers : 0);
  }
  graph.reserve(nodes, edges);

  for (auto [index, op] : llvm::enumerate(problem.ops)) {
    bool cpuAllowed =
        op.canRunOn(DeviceKind::CPU) && (!op.pin || *op.pin == DeviceKind::CPU);
    bool gpuAllowed =
        op.canRunOn(DeviceKind::GPU) && (!op.pin || *op.pin == DeviceKind::GPU);
    double gpuUs = op.gpuUs;
    if (auto span = opPricedSpan(problem, index))
      gpuUs += price(alignedResultBytes(problem, op), span->first,
                     span->second);
    // Its workspace, at its own point, is its alone.
    int64_t point = 2 * int64_t(index) + 1;
    if (op.gpuWorkspaceBytes > 0)
      gpuUs += price(alignBufferSize(op.gpuWorkspaceBytes), point, point);
    addEdge(source, index, gpuAllowed ? gpuUs : kUnreachable);
    addEdge(index, sink, cpuAllowed ? op.cpuUs : kUnreachable);
  }
  for (const PlacementValue &value : problem.values) {
    int producer = value.isArgument() ? source : value.producer;
    if (!value.consumers.empty()) {
      size_t chain = prefix.empty() ? 1 : value.consumers.size();
      int64_t segmentStart = chainStart(value);
      int64_t bytes = alignBufferSize(value.bytes);
      int chargeFrom =
          chainChargedOnlyFromCpu(problem, value) ? producer : source;
      int previous = -1;
      for (size_t s = 0; s < chain; ++s) {
        int needed = graph.addNode();
        if (s == 0)
          addEdge(producer, needed, value.h2dUs);
        else
          graph.addEdge(previous, needed, MinCutGraph::kInfinity);
        size_t end = prefix.empty() ? value.consumers.size() : s + 1;
        for (size_t c = s; c < end; ++c)
          graph.addEdge(needed, value.consumers[c], MinCutGraph::kInfinity);
        if (!prefix.empty()) {
          int64_t segmentEnd = 2 * int64_t(value.consumers[s]) + 1;
          addEdge(chargeFrom, needed, price(bytes, segmentStart, segmentEnd));
          segmentStart = segmentEnd + 1;
        }
        previous = needed;
      }
    }
    if (!value.isArgument() && !value.isWeight &&
        (!value.consumers.empty() || value.neededOnCpu())) {
      // Needed on the CPU: on the source side as soon as one reader is.
      int needed = graph.addNode();
      addEdge(needed, producer, value.d2hUs);
      for (int consumer : value.consumers)
        graph.addEdge(consumer, needed, MinCutGraph::kInfinity);
      if (value.neededOnCpu())
        graph.addEdge(source, needed, MinCutGraph::kInfinity);
    }
  }
  capped = capacity.capped;
}

void CutGraph::fix(int op, bool onGpu) {
  // An infinite edge beside the op's own: cutting the other side is
  // forbidden. Capacity only grows, so the flow found so far stays valid.
  if (onGpu)
    graph.addEdge(op, sink, MinCutGraph::kInfinity);
  else
    graph.addEdge(source, op, MinCutGraph::kInfinity);
}

Cut CutGraph::solve() {
  flow += graph.solve(source, sink);
  Cut cut;
  cut.placement.resize(numOps);
  for (int op = 0; op < numOps; ++op)
    cut.placement[op] = !graph.onSourceSide(op);
  // Each capacity was rounded by at most half a picosecond.
  cut.valueUs = (double(flow) - 0.5 * double(finiteEdges)) / kPicosecondsPerUs;
  cut.exact = !capped && flow < MinCutGraph::kInfinity;
  return cut;
}

Cut search::solveCut(const PlacementProblem &problem,
                     const std::vector<double> *prices, const Fixing *fixed) {
  CutGraph graph(problem, prices);
  if (fixed)
    for (auto [op, device] : llvm::enumerate(*fixed))
      if (device >= 0)
        graph.fix(op, device == 1);
  return graph.solve();
}

std::vector<int64_t> search::pricedGpuBytes(const PlacementProblem &problem,
                                            const Placement &placement) {
  int64_t numPoints = problem.getNumPoints();
  std::vector<int64_t> delta(numPoints + 1, 0);
  auto charge = [&](int64_t bytes, int64_t first, int64_t last) {
    if (last < first)
      return;
    delta[first] += bytes;
    delta[last + 1] -= bytes;
  };
  for (size_t index = 0; index < problem.ops.size(); ++index) {
    if (!placement[index])
      continue;
    if (auto span = opPricedSpan(problem, index))
      charge(alignedResultBytes(problem, problem.ops[index]), span->first,
             span->second);
    int64_t point = 2 * int64_t(index) + 1;
    charge(alignBufferSize(problem.ops[index].gpuWorkspaceBytes), point, point);
  }
  for (const PlacementValue &value : problem.values) {
    int lastGpu = -1;
    for (int consumer : value.consumers)
      if (placement[consumer])
        lastGpu = consumer;
    if (lastGpu < 0)
      continue;
    if (chainChargedOnlyFromCpu(problem, value) && placement[value.producer])
      continue;
    charge(alignBufferSize(value.bytes), chainStart(value),
           2 * int64_t(lastGpu) + 1);
  }
  std::vector<int64_t> bytes(numPoints);
  int64_t live = 0;
  for (int64_t t = 0; t < numPoints; ++t)
    bytes[t] = live += delta[t];
  return bytes;
}

double search::lagrangianBound(const PlacementProblem &problem, const Cut &cut,
                               const std::vector<double> &prices) {
  double charged = 0;
  for (double price : prices)
    charged += price;
  return cut.valueUs - charged * double(problem.gpuBudgetBytes);
}

Placement tandem::solveMinCut(const PlacementProblem &problem,
                              const std::vector<double> *pointPenalties,
                              const std::vector<int8_t> *fixed) {
  return solveCut(problem, pointPenalties, fixed).placement;
}
