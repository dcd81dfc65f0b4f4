//===- MemoryPlanner.cpp - greedy-by-size static offsets ------------------===//

#include "tandem/Analysis/MemoryPlanner.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <numeric>

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

/// Whether `n` program points from `low` to `high` are dense enough that an
/// array over the range (a counting sort, a sum per point) beats sorting.
bool pointsAreDense(int64_t low, int64_t high, size_t n) {
  return uint64_t(high) - uint64_t(low) <= 4 * uint64_t(n) + 64;
}

/// Indices 0..n-1 ordered by `key`, ties by index: a counting sort where the
/// keys span a range near n (program points), a comparison sort otherwise.
template <typename Key>
std::vector<uint32_t> orderByKey(size_t n, Key key) {
  std::vector<uint32_t> order(n);
  if (n == 0)
    return order;
  int64_t low = INT64_MAX, high = INT64_MIN;
  for (size_t i = 0; i < n; ++i) {
    low = std::min(low, key(i));
    high = std::max(high, key(i));
  }
  if (pointsAreDense(low, high, n)) {
    std::vector<uint32_t> start(size_t(high - low) + 2, 0);
    for (size_t i = 0; i < n; ++i)
      ++start[size_t(key(i) - low) + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (size_t i = 0; i < n; ++i)
      order[start[size_t(key(i) - low)]++] = uint32_t(i);
    return order;
  }
  std::vector<std::pair<int64_t, uint32_t>> keyed(n);
  for (size_t i = 0; i < n; ++i)
    keyed[i] = {key(i), uint32_t(i)};
  llvm::sort(keyed);
  for (size_t i = 0; i < n; ++i)
    order[i] = keyed[i].second;
  return order;
}

/// Best fit in program order: free what died, take the smallest free block
/// that fits, grow the arena otherwise. O(n log n), for large graphs.
MemoryPlan planBestFit(const std::vector<BufferLifetime> &buffers) {
  MemoryPlan plan;
  size_t n = buffers.size();
  plan.offsets.assign(n, 0);
  std::vector<uint32_t> byFirst =
      orderByKey(n, [&](size_t i) { return buffers[i].first; });
  // A lifetime that ends before it starts is taken to end where it starts,
  // so that no buffer is freed before it is placed.
  auto end = [&](size_t i) {
    return std::max(buffers[i].first, buffers[i].last);
  };
  std::vector<uint32_t> byLast = orderByKey(n, end);

  // The free blocks by offset and by size (the smallest that fits, the
  // first freed among equals). Their tree nodes are recycled: placing a
  // buffer usually frees a block and adds back its remainder.
  using ByOffset = std::map<int64_t, int64_t>; // offset -> size
  using BySize = std::multimap<int64_t, int64_t>; // size -> offset
  ByOffset freeByOffset;
  BySize freeBySize;
  std::vector<ByOffset::node_type> spareByOffset;
  std::vector<BySize::node_type> spareBySize;
  auto eraseFree = [&](ByOffset::iterator block) {
    auto range = freeBySize.equal_range(block->second);
    for (auto it = range.first; it != range.second; ++it)
      if (it->second == block->first) {
        spareBySize.push_back(freeBySize.extract(it));
        break;
      }
    auto next = std::next(block);
    spareByOffset.push_back(freeByOffset.extract(block));
    return next;
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
    if (spareByOffset.empty()) {
      freeByOffset.emplace_hint(next, offset, size);
    } else {
      ByOffset::node_type node = std::move(spareByOffset.back());
      spareByOffset.pop_back();
      node.key() = offset;
      node.mapped() = size;
      freeByOffset.insert(next, std::move(node));
    }
    if (spareBySize.empty()) {
      freeBySize.insert({size, offset});
    } else {
      BySize::node_type node = std::move(spareBySize.back());
      spareBySize.pop_back();
      node.key() = size;
      node.mapped() = offset;
      freeBySize.insert(std::move(node)); // after its equals, as insert does
    }
  };

  size_t freed = 0;
  for (uint32_t index : byFirst) {
    const BufferLifetime &buffer = buffers[index];
    // Every buffer that ended before this one starts began earlier still,
    // so it is placed: free them, by end.
    for (; freed < n && end(byLast[freed]) < buffer.first; ++freed) {
      uint32_t dead = byLast[freed];
      if (buffers[dead].bytes > 0)
        addFree(plan.offsets[dead], alignBufferSize(buffers[dead].bytes));
    }
    // A buffer of no bytes takes no room (offset 0): a free block of size 0
    // would sit at the offset of a live buffer.
    if (buffer.bytes <= 0)
      continue;
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
  // The bytes live at a point are the sum of +size at each `first` and
  // -size after each `last` up to it; frees and allocations at one point
  // are summed before the point is compared, and the first point with the
  // most is reported.
  if (buffers.empty())
    return {};
  int64_t low = INT64_MAX, high = INT64_MIN;
  for (const BufferLifetime &buffer : buffers) {
    low = std::min({low, buffer.first, buffer.last + 1});
    high = std::max({high, buffer.first, buffer.last + 1});
  }
  LivePeak peak;
  int64_t live = 0;
  // Dense points: a sum per point in one array (no sort).
  if (pointsAreDense(low, high, buffers.size())) {
    std::vector<int64_t> delta(size_t(high - low) + 1, 0);
    for (const BufferLifetime &buffer : buffers) {
      int64_t size = alignBufferSize(buffer.bytes);
      delta[size_t(buffer.first - low)] += size;
      delta[size_t(buffer.last + 1 - low)] -= size;
    }
    for (size_t at = 0; at < delta.size(); ++at) {
      live += delta[at];
      if (live > peak.bytes)
        peak = {live, low + int64_t(at)};
    }
    return peak;
  }
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * buffers.size());
  for (const BufferLifetime &buffer : buffers) {
    int64_t size = alignBufferSize(buffer.bytes);
    events.push_back({buffer.first, size});
    events.push_back({buffer.last + 1, -size});
  }
  llvm::sort(events);
  for (size_t i = 0; i < events.size(); ++i) {
    live += events[i].second;
    bool lastAtPoint =
        i + 1 == events.size() || events[i + 1].first != events[i].first;
    if (lastAtPoint && live > peak.bytes)
      peak = {live, events[i].first};
  }
  return peak;
}
