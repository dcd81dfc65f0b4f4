//===- MinCut.cpp - Dinic's max-flow --------------------------------------===//

#include "tandem/Analysis/MinCut.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

MinCutGraph::MinCutGraph(int numNodes) : firstEdge(numNodes, -1) {}

int MinCutGraph::addNode() {
  firstEdge.push_back(-1);
  return static_cast<int>(firstEdge.size()) - 1;
}

void MinCutGraph::reserve(size_t nodes, size_t edgeCount) {
  firstEdge.reserve(nodes);
  edges.reserve(2 * edgeCount); // each with its residual twin
}

void MinCutGraph::addEdge(int from, int to, int64_t capacity) {
  if (capacity <= 0 || from == to)
    return;
  capacity = std::min(capacity, kInfinity);
  // Forward edge and its residual twin, adjacent so `index ^ 1` finds one
  // from the other.
  edges.push_back({to, firstEdge[from], capacity});
  firstEdge[from] = static_cast<int>(edges.size()) - 1;
  edges.push_back({from, firstEdge[to], 0});
  firstEdge[to] = static_cast<int>(edges.size()) - 1;
}

bool MinCutGraph::buildLevels(int source, int sink) {
  std::fill(level.begin(), level.end(), -1);
  std::vector<int> queue;
  queue.reserve(firstEdge.size());
  level[source] = 0;
  queue.push_back(source);
  for (size_t head = 0; head < queue.size(); ++head) {
    int node = queue[head];
    for (int e = firstEdge[node]; e != -1; e = edges[e].next) {
      if (edges[e].capacity > 0 && level[edges[e].to] < 0) {
        level[edges[e].to] = level[node] + 1;
        queue.push_back(edges[e].to);
      }
    }
  }
  return level[sink] >= 0;
}

int64_t MinCutGraph::augment(int source, int sink) {
  // One blocking flow, by iterative depth-first search along level edges.
  int64_t total = 0;
  std::vector<int> path; // edges from the source to the current node
  int node = source;
  while (true) {
    if (node == sink) {
      int64_t bottleneck = MinCutGraph::kInfinity;
      for (int e : path)
        bottleneck = std::min(bottleneck, edges[e].capacity);
      for (int e : path) {
        edges[e].capacity -= bottleneck;
        edges[e ^ 1].capacity += bottleneck;
      }
      total += bottleneck;
      // Restart from the source: saturated edges are skipped by `current`.
      path.clear();
      node = source;
      continue;
    }
    int &e = current[node];
    while (e != -1 && (edges[e].capacity == 0 ||
                       level[edges[e].to] != level[node] + 1))
      e = edges[e].next;
    if (e != -1) {
      path.push_back(e);
      node = edges[e].to;
      continue;
    }
    // Dead end: retreat, and never enter this node again in this phase.
    if (node == source)
      return total;
    level[node] = -2;
    int back = path.back();
    path.pop_back();
    node = edges[back ^ 1].to;
    current[node] = edges[current[node]].next;
  }
}

int64_t MinCutGraph::solve(int source, int sink) {
  level.assign(firstEdge.size(), -1);
  int64_t flow = 0;
  while (buildLevels(source, sink)) {
    current = firstEdge;
    flow += augment(source, sink);
    if (flow >= kInfinity)
      break;
  }
  // The sink side: the nodes that still reach the sink in the residual
  // graph. Everything else (ties included) stays on the source side.
  reachesSink.assign(firstEdge.size(), false);
  std::vector<int> queue = {sink};
  reachesSink[sink] = true;
  for (size_t head = 0; head < queue.size(); ++head) {
    int node = queue[head];
    for (int e = firstEdge[node]; e != -1; e = edges[e].next) {
      // edges[e ^ 1] runs from edges[e].to to `node`.
      int from = edges[e].to;
      if (!reachesSink[from] && edges[e ^ 1].capacity > 0) {
        reachesSink[from] = true;
        queue.push_back(from);
      }
    }
  }
  return flow;
}
