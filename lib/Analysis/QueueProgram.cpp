//===- QueueProgram.cpp - waits, lifetimes and times of a schedule --------===//

#include "tandem/Analysis/QueueProgram.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// The window CPU-arena queues keep: the CPU arena has no budget, but a
/// buffer a copy reads can be reused only once an item of the CPU queue is
/// known to start after the copy.
constexpr int64_t kCpuArenaWindow = 8;

constexpr int kCpu = int(QueueKind::CPU), kGpu = int(QueueKind::GPU),
              kH2d = int(QueueKind::H2D);

bool onArena(int queue, Arena arena) {
  // The copy engines touch both arenas; each compute queue its own.
  return arena == Arena::GPU ? queue != kCpu : queue != kGpu;
}

/// The window between two queues, or 0 if they share no arena (only data
/// orders them): the GPU arena's queues use `gpuWindow`, the CPU arena's
/// kCpuArenaWindow; the copy engines share both.
int64_t windowBetween(int a, int b, int64_t gpuWindow) {
  int64_t window = 0;
  if (onArena(a, Arena::GPU) && onArena(b, Arena::GPU))
    window = gpuWindow;
  if (onArena(a, Arena::CPU) && onArena(b, Arena::CPU))
    window = window ? std::min(window, kCpuArenaWindow) : kCpuArenaWindow;
  return window;
}

/// For each of `subset` (increasing item indices), the items [first, last]
/// of the subset it may overlap in time: every subset item before `first`
/// completes before it starts, every one after `last` starts after it
/// completes.
std::vector<std::pair<int32_t, int32_t>>
overlapWindows(llvm::ArrayRef<int32_t> subset,
               const std::vector<QueueClocks::Stamp> &stamps) {
  // The subset's positions by queue, in order.
  std::array<std::vector<int32_t>, kNumQueues> byQueue;
  for (auto [position, item] : llvm::enumerate(subset))
    byQueue[stamps[item].queue].push_back(position);
  std::vector<std::pair<int32_t, int32_t>> windows(subset.size());
  for (auto [position, item] : llvm::enumerate(subset))
    windows[position] = {item, item};
  // Along one queue an item's clocks and index only grow, so for each pair
  // of queues both boundaries below only move forward: one sweep per pair.
  for (const std::vector<int32_t> &own : byQueue) {
    for (const std::vector<int32_t> &queue : byQueue) {
      size_t notDone = 0, after = 0;
      for (int32_t position : own) {
        const QueueClocks::Stamp &stamp = stamps[subset[position]];
        // The first item of `queue` that does not complete before this one
        // starts: its index is past the item's clock for the queue.
        while (notDone < queue.size()) {
          const QueueClocks::Stamp &other = stamps[subset[queue[notDone]]];
          if (other.index > stamp.clock[other.queue])
            break;
          ++notDone;
        }
        // One past the last that does not start after this one completes.
        while (after < queue.size() &&
               stamps[subset[queue[after]]].clock[stamp.queue] < stamp.index)
          ++after;
        auto &[first, last] = windows[position];
        if (notDone < queue.size())
          first = std::min(first, subset[queue[notDone]]);
        if (after > 0)
          last = std::max(last, subset[queue[after - 1]]);
      }
    }
  }
  return windows;
}

/// Whether the GPU arena of the program, under its waits, laid out as
/// --tandem-plan-memory will, fits `budget`.
bool gpuArenaFits(const QueueProgram &program, int64_t budget) {
  std::vector<BufferLifetime> lifetimes = program.arenaLifetimes(Arena::GPU);
  // The bytes live at once bound any layout from below: over the budget,
  // no layout is needed to say it does not fit.
  return peakLiveBytes(lifetimes) <= budget &&
         planMemory(lifetimes).arenaBytes <= budget;
}

/// Widens the windows of the program's host-to-device copies, one copy at a
/// time in block order, beyond `windows.back()` (the one every item keeps):
/// each copy takes a wider window of `windows` whose GPU arena, with the
/// copies before it as widened, fits `budget`. A wider window lets the copy
/// wait for less and no other item for more, so no widening lengthens the
/// makespan. A copy for which the next wider window does not fit costs one
/// try; for the others the search starts at the window the last widened
/// copy took (neighbours mostly take the same) and steps wider while it
/// fits, or narrower until it does. At most `effort` / items tries. Leaves
/// the program's waits those of the result; returns how many copies were
/// widened.
int64_t widenCopyWindows(QueueProgram &program, int64_t budget,
                         llvm::ArrayRef<int64_t> windows, int64_t effort) {
  const size_t base = windows.size() - 1;
  const int64_t items = int64_t(program.items.size());
  int64_t tries = effort / std::max<int64_t>(items, 1);
  std::vector<int64_t> copyWindows(items, 0);
  auto fits = [&](int32_t copy, size_t level) {
    --tries;
    copyWindows[copy] = windows[level];
    program.chooseWaits(windows[base], copyWindows);
    bool fitting = gpuArenaFits(program, budget);
    if (!fitting)
      copyWindows[copy] = 0;
    return fitting;
  };
  int64_t widened = 0;
  size_t level = 0; // where the next copy's search starts
  for (int32_t copy = 0; copy < items && tries > 0; ++copy) {
    const QueueItem &item = program.items[copy];
    // A copy the base window cannot hold back, or that takes no time,
    // gains nothing.
    if (item.queue != kH2d || item.us <= 0 || copy < windows[base])
      continue;
    // Where even the next wider window does not fit, a wider one rarely
    // will (the arena mostly grows with the window): one try.
    if (!fits(copy, base - 1))
      continue;
    size_t found = base - 1;
    if (level < found && tries > 0) {
      if (fits(copy, level)) {
        found = level;
      } else {
        for (size_t narrower = level + 1; narrower < base - 1 && tries > 0;
             ++narrower)
          if (fits(copy, narrower)) {
            found = narrower;
            break;
          }
      }
    }
    // From where the last widened copy stood (or wider), step wider.
    while (found > 0 && found <= level && tries > 0 && fits(copy, found - 1))
      --found;
    copyWindows[copy] = windows[found];
    ++widened;
    level = found;
  }
  program.chooseWaits(windows[base], copyWindows);
  return widened;
}

} // namespace

llvm::ArrayRef<int64_t> tandem::getDefaultScheduleWindows() {
  static const int64_t windows[] = {kUnboundedWindow, 64, 32, 16, 8, 6, 4,
                                    3, 2, 1};
  return windows;
}

void QueueProgram::chooseWaits(int64_t gpuWindow,
                               llvm::ArrayRef<int64_t> copyWindows) {
  assert((copyWindows.empty() || copyWindows.size() == items.size()) &&
         "one copy window per item");
  concurrent = true;
  std::array<std::vector<int32_t>, kNumQueues> issued;
  std::vector<QueueClocks::Stamp> stamps(items.size());
  QueueClocks clocks;
  llvm::SmallVector<int32_t, 8> needed;
  for (int32_t index = 0; index < int32_t(items.size()); ++index) {
    QueueItem &item = items[index];
    int queue = item.queue;
    needed.clear();
    for (int32_t input : item.inputs)
      if (items[input].queue != queue)
        needed.push_back(input);
    int64_t ownGpuWindow = gpuWindow;
    if (queue == kH2d && !copyWindows.empty() && copyWindows[index] != 0)
      ownGpuWindow = copyWindows[index];
    for (int other = 0; other < kNumQueues; ++other) {
      int64_t window =
          other == queue ? 0 : windowBetween(queue, other, ownGpuWindow);
      if (window == 0 || window == kUnboundedWindow || index < window)
        continue;
      // The last item of `other` at least `window` items before this one.
      auto after = llvm::partition_point(issued[other], [&](int32_t k) {
        return k <= index - window;
      });
      if (after != issued[other].begin())
        needed.push_back(*std::prev(after));
    }
    // The latest first: waiting for it often implies the others.
    llvm::sort(needed, std::greater<int32_t>());
    item.waits.clear();
    for (int32_t producer : needed) {
      if (clocks.knows(queue, stamps[producer]))
        continue;
      clocks.wait(queue, stamps[producer]);
      item.waits.push_back(producer);
    }
    stamps[index] = clocks.issue(queue);
    issued[queue].push_back(index);
  }
}

std::vector<QueueClocks::Stamp> QueueProgram::stampItems() const {
  std::vector<QueueClocks::Stamp> stamps(items.size());
  QueueClocks clocks;
  for (auto [index, item] : llvm::enumerate(items)) {
    // Unscheduled, every item is on one queue: block order.
    int queue = concurrent ? item.queue : 0;
    if (concurrent)
      for (int32_t waited : item.waits)
        clocks.wait(queue, stamps[waited]);
    stamps[index] = clocks.issue(queue);
  }
  return stamps;
}

std::vector<BufferLifetime>
QueueProgram::arenaLifetimes(Arena arena, std::vector<int> *indices) const {
  // The items that touch the arena, and their overlap windows among them.
  std::vector<char> touches(items.size(), 0);
  for (const ArenaBuffer &buffer : buffers) {
    if (buffer.arena != arena)
      continue;
    if (buffer.writer >= 0)
      touches[buffer.writer] = 1;
    for (int32_t reader : buffer.readers)
      touches[reader] = 1;
  }
  std::vector<int32_t> subset;
  for (int32_t index = 0; index < int32_t(items.size()); ++index)
    if (touches[index])
      subset.push_back(index);
  std::vector<std::pair<int32_t, int32_t>> windows =
      overlapWindows(subset, stampItems());
  std::vector<int32_t> slot(items.size(), -1);
  for (auto [position, item] : llvm::enumerate(subset))
    slot[item] = position;

  std::vector<BufferLifetime> lifetimes;
  lifetimes.reserve(buffers.size());
  if (indices)
    indices->clear();
  for (auto [index, buffer] : llvm::enumerate(buffers)) {
    if (buffer.arena != arena)
      continue;
    BufferLifetime lifetime;
    lifetime.bytes = buffer.bytes;
    if (buffer.writer < 0) {
      lifetime.first = 0;
      lifetime.last = getEndPoint();
    } else {
      auto [first, last] = windows[slot[buffer.writer]];
      if (!buffer.isWorkspace)
        for (int32_t reader : buffer.readers)
          last = std::max(last, windows[slot[reader]].second);
      lifetime.first = int64_t(first) + 1;
      lifetime.last = buffer.heldToEnd ? getEndPoint() : int64_t(last) + 1;
    }
    lifetimes.push_back(lifetime);
    if (indices)
      indices->push_back(index);
  }
  return lifetimes;
}

int64_t QueueProgram::gpuArenaBytes() const {
  return planMemory(arenaLifetimes(Arena::GPU)).arenaBytes;
}

SimulatedSchedule tandem::simulateQueueProgram(const QueueProgram &program) {
  SimulatedSchedule times;
  size_t count = program.items.size();
  times.startUs.resize(count);
  times.endUs.resize(count);
  std::array<double, kNumQueues> queueFree{}, queueReady{};
  for (size_t index = 0; index < count; ++index) {
    const QueueItem &item = program.items[index];
    int lane = program.concurrent ? item.queue : 0;
    if (program.concurrent)
      for (int32_t waited : item.waits) {
        queueReady[lane] = std::max(queueReady[lane], times.endUs[waited]);
        ++times.waits;
      }
    double start = std::max(queueFree[lane], queueReady[lane]);
    double end = start + item.us;
    queueFree[lane] = end;
    times.startUs[index] = start;
    times.endUs[index] = end;
    times.busyUs[item.queue] += item.us;
    times.serialUs += item.us;
    times.makespanUs = std::max(times.makespanUs, end);
  }
  // Copy time hidden under compute: the part of each copy's interval that
  // the union of the compute intervals covers. Each queue's items start in
  // program order (a queue runs one item at a time, and all items run on
  // one lane when not concurrent), so the compute intervals come by start
  // from merging the CPU's and the GPU's.
  std::vector<std::pair<double, double>> cpu, gpu;
  for (size_t index = 0; index < count; ++index) {
    int queue = program.items[index].queue;
    if (queue == kCpu || queue == kGpu)
      (queue == kCpu ? cpu : gpu)
          .push_back({times.startUs[index], times.endUs[index]});
  }
  std::vector<std::pair<double, double>> compute(cpu.size() + gpu.size());
  std::merge(cpu.begin(), cpu.end(), gpu.begin(), gpu.end(), compute.begin());
  assert(llvm::is_sorted(compute) && "a queue's items start in order");
  std::vector<std::pair<double, double>> busy;
  for (auto interval : compute) {
    if (!busy.empty() && interval.first <= busy.back().second)
      busy.back().second = std::max(busy.back().second, interval.second);
    else
      busy.push_back(interval);
  }
  for (size_t index = 0; index < count; ++index) {
    int queue = program.items[index].queue;
    if (queue == kCpu || queue == kGpu)
      continue;
    double start = times.startUs[index], end = times.endUs[index];
    auto it = llvm::lower_bound(busy, std::make_pair(start, -1e300));
    if (it != busy.begin())
      --it;
    for (; it != busy.end() && it->first < end; ++it)
      times.hiddenCopyUs +=
          std::max(0.0, std::min(it->second, end) - std::max(it->first, start));
  }
  return times;
}

WindowChoice tandem::chooseScheduleWindow(QueueProgram &program,
                                          std::optional<int64_t> gpuBudgetBytes,
                                          llvm::ArrayRef<int64_t> windows,
                                          int64_t hint,
                                          int64_t wideningEffort) {
  // A wider window only drops waits (an item waits for an earlier item of
  // the same queue), so it never lengthens the makespan: the widest window
  // that fits is the fastest. It also keeps buffers live longer, so the
  // arena grows with the window: the widest that fits is found by
  // bisection, the widest tried first.
  assert(!windows.empty() && llvm::is_sorted(windows, std::greater<int64_t>()) &&
         "windows widest first");
  // Every GPU buffer at once within the budget: every window fits.
  int64_t allBuffers = 0;
  for (const ArenaBuffer &buffer : program.buffers)
    if (buffer.arena == Arena::GPU)
      allBuffers += alignBufferSize(buffer.bytes);
  auto fits = [&](size_t index) {
    if (windows[index] == 1 || !gpuBudgetBytes || allBuffers <= *gpuBudgetBytes)
      return true; // its arena is laid out once chosen
    program.chooseWaits(windows[index]);
    return gpuArenaFits(program, *gpuBudgetBytes);
  };
  // The first that fits in [low, high); high = size: none does, and the
  // narrowest is taken, keeping the least memory.
  auto firstFitting = [&](size_t low, size_t high) {
    while (low < high) {
      size_t middle = (low + high) / 2;
      if (fits(middle))
        high = middle;
      else
        low = middle + 1;
    }
    return low;
  };
  // Start at the hint (a similar program's window): it and the next wider
  // one settle it, where programs differ little.
  size_t start = 0;
  if (hint != 0)
    for (size_t index = 0; index < windows.size(); ++index)
      if (windows[index] == hint)
        start = index;
  size_t chosen;
  if (!fits(start))
    chosen = firstFitting(start + 1, windows.size());
  else if (start == 0 || !fits(start - 1))
    chosen = start;
  else
    chosen = firstFitting(0, start - 1);
  chosen = std::min(chosen, windows.size() - 1);
  WindowChoice choice;
  choice.window = windows[chosen];
  // Only a budget that refused a wider window leaves copies to widen.
  if (gpuBudgetBytes && chosen > 0 && allBuffers > *gpuBudgetBytes)
    choice.widenedCopies =
        widenCopyWindows(program, *gpuBudgetBytes,
                         windows.take_front(chosen + 1), wideningEffort);
  else
    program.chooseWaits(choice.window);
  choice.makespanUs = simulateQueueProgram(program).makespanUs;
  return choice;
}
