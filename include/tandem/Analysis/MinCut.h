//===- MinCut.h - s-t minimum cut -------------------------------*- C++ -*-===//
//
// Dinic's max-flow on integer capacities, for the placement graph. Iterative
// (no recursion), so million-node graphs do not exhaust the stack.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_MINCUT_H
#define TANDEM_ANALYSIS_MINCUT_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlir::tandem {

class MinCutGraph {
public:
  /// Capacities at or above this are never cut.
  static constexpr int64_t kInfinity = int64_t(1) << 60;

  explicit MinCutGraph(int numNodes = 0);

  int addNode();
  /// Room for `nodes` nodes and `edges` addEdge calls in all, so that
  /// building a large graph does not reallocate as it grows.
  void reserve(std::size_t nodes, std::size_t edges);
  int getNumNodes() const { return static_cast<int>(firstEdge.size()); }
  /// A directed edge `from` → `to`; cutting it (from on the source side, to
  /// on the sink side) costs `capacity`.
  void addEdge(int from, int to, int64_t capacity);

  /// Computes a minimum cut between `source` and `sink`; returns its value.
  int64_t solve(int source, int sink);

  /// After solve(): true if `node` is on the source side of the cut. Of
  /// all minimum cuts this is the one with the smallest sink side: a node
  /// goes to the sink side only if the cut's value requires it.
  bool onSourceSide(int node) const { return !reachesSink[node]; }

private:
  bool buildLevels(int source, int sink);
  int64_t augment(int source, int sink);

  struct Edge {
    int to;
    int next;
    int64_t capacity;
  };
  std::vector<Edge> edges;
  std::vector<int> firstEdge, level, current;
  std::vector<bool> reachesSink;
};

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_MINCUT_H
