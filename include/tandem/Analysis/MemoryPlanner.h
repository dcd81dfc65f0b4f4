//===- MemoryPlanner.h - static offsets for buffers with lifetimes -*- C++ -*-===//
//
// Static offsets for buffers with known lifetimes: greedy-by-size (as in
// TFLite's arena planner) for up to a few thousand buffers, best fit in
// program order beyond that.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_MEMORYPLANNER_H
#define TANDEM_ANALYSIS_MEMORYPLANNER_H

#include <cstdint>
#include <vector>

namespace mlir::tandem {

struct BufferLifetime {
  int64_t bytes = 0;
  /// First and last program point (inclusive) at which the buffer is live.
  int64_t first = 0, last = 0;
};

struct MemoryPlan {
  /// Offset of each buffer, in the order given.
  std::vector<int64_t> offsets;
  /// Bytes the arena needs: the highest offset + size.
  int64_t arenaBytes = 0;
};

/// Buffers are aligned to this many bytes.
constexpr int64_t kBufferAlignment = 64;

/// Assigns offsets to `buffers` so that no two buffers live at one point
/// overlap.
MemoryPlan planMemory(const std::vector<BufferLifetime> &buffers);

/// The most bytes live at any one point (each rounded up to the alignment),
/// a lower bound for any plan's arena, and the first point where they are.
struct LivePeak {
  int64_t bytes = 0;
  int64_t point = 0;
};
LivePeak findLivePeak(const std::vector<BufferLifetime> &buffers);

/// findLivePeak(buffers).bytes.
inline int64_t peakLiveBytes(const std::vector<BufferLifetime> &buffers) {
  return findLivePeak(buffers).bytes;
}

/// `bytes` rounded up to kBufferAlignment.
inline int64_t alignBufferSize(int64_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_MEMORYPLANNER_H
