//===- MemoryPlanner.cpp - greedy-by-size static offsets ------------------===//

#include "tandem/Analysis/MemoryPlanner.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>

using namespace mlir;
using namespace mlir::tandem;

namespace {
/// TFLite's greedy-by-size: largest first, each at the lowest offset where it
/// overlaps no placed buffer whose lifetime intersects its own. The tightest
/// plans, but quadratic in the number of buffers.
MemoryPlan planGreedyBySize(const std::vector<BufferLifetime> &buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Ties by earlier start, for a deterministic plan.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });

  // Placed buffers sorted by offset; each new buffer takes the first gap
  // among those whose lifetimes intersect its own.
  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferLifetime &buffer = buffers[index];
    int64_t size = alignBufferSize(buffer.bytes);
    int64_t offset = 0;
    for (size_t other : placed) {
      const BufferLifetime &o = buffers[other];
      if (o.last < buffer.first || buffer.last < o.first)
        continue;
      int64_t otherStart = plan.offsets[other];
      if (otherStart >= offset + size)
        break; // the gap before `other` is large enough
      offset = std::max(offset, otherStart + alignBufferSize(o.bytes));
    }
    plan.offsets[index] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + size);
    auto position = std::upper_bound(
        placed.begin(), placed.end(), offset,
        [&](int64_t value, size_t other) { return value < plan.offsets[other]; });
    placed.insert(position, index);
  }
  return plan;
}

/// Best fit in program order: free what died, take the smallest free block
/// that fits, grow the arena otherwise. O(n log n), for large graphs.
MemoryPlan planBestFit(const std::vector<BufferLifetime> &buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].first < buffers[b].first;
  });

  std::map<int64_t, int64_t> freeByOffset;           // offset -> size
  std::multimap<int64_t, int64_t> freeBySize;        // size -> offset
  auto eraseFree = [&](std::map<int64_t, int64_t>::iterator block) {
    auto range = freeBySize.equal_range(block->second);
    for (auto it = range.first; it != range.second; ++it)
      if (it->second == block->first) {
        freeBySize.erase(it);
        break;
      }
    return freeByOffset.erase(block);
  };
  auto addFree = [&](int64_t offset, int64_t size) {
    // Coalesce with the neighbours on both sides.
    auto next = freeByOffset.lower_bound(offset);
    if (next != freeByOffset.end() && next->first == offset + size) {
      size += next->second;
      next = eraseFree(next);
    }
    if (next != freeByOffset.begin()) {
      auto previous = std::prev(next);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        size += previous->second;
        eraseFree(previous);
      }
    }
    freeByOffset[offset] = size;
    freeBySize.insert({size, offset});
  };

  using Ending = std::pair<int64_t, size_t>; // (last, buffer)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> live;
  for (size_t index : order) {
    const BufferLifetime &buffer = buffers[index];
    while (!live.empty() && live.top().first < buffer.first) {
      size_t dead = live.top().second;
      live.pop();
      addFree(plan.offsets[dead], alignBufferSize(buffers[dead].bytes));
    }
    int64_t size = alignBufferSize(buffer.bytes);
    auto fit = freeBySize.lower_bound(size);
    int64_t offset;
    if (fit != freeBySize.end()) {
      offset = fit->second;
      int64_t blockSize = fit->first;
      eraseFree(freeByOffset.find(offset));
      if (blockSize > size)
        addFree(offset + size, blockSize - size);
    } else if (!freeByOffset.empty() &&
               std::prev(freeByOffset.end())->first +
                       std::prev(freeByOffset.end())->second ==
                   plan.arenaBytes) {
      // Extend the free block at the top of the arena.
      offset = std::prev(freeByOffset.end())->first;
      eraseFree(std::prev(freeByOffset.end()));
    } else {
      offset = plan.arenaBytes;
    }
    plan.offsets[index] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + size);
    live.push({buffer.last, index});
  }
  return plan;
}
} // namespace

MemoryPlan tandem::planMemory(const std::vector<BufferLifetime> &buffers) {
  // Greedy-by-size packs tighter; past a few thousand buffers its quadratic
  // search costs more than the memory it saves.
  constexpr size_t kGreedyBySizeLimit = 4096;
  if (buffers.size() <= kGreedyBySizeLimit)
    return planGreedyBySize(buffers);
  return planBestFit(buffers);
}

LivePeak tandem::findLivePeak(const std::vector<BufferLifetime> &buffers) {
  // Sweep over lifetime boundaries: +size at `first`, -size after `last`;
  // at one point, frees sort before allocations of the next.
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * buffers.size());
  for (const BufferLifetime &buffer : buffers) {
    int64_t size = alignBufferSize(buffer.bytes);
    events.push_back({buffer.first, size});
    events.push_back({buffer.last + 1, -size});
  }
  llvm::sort(events);
  LivePeak peak;
  int64_t live = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    live += events[i].second;
    bool lastAtPoint =
        i + 1 == events.size() || events[i + 1].first != events[i].first;
    if (lastAtPoint && live > peak.bytes)
      peak = {live, events[i].first};
  }
  return peak;
}
