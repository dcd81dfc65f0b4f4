//===- ThreadPool.h - parallel loops for the CPU kernels --------*- C++ -*-===//

#ifndef TANDEM_RUNTIME_LIB_THREADPOOL_H
#define TANDEM_RUNTIME_LIB_THREADPOOL_H

#include <cstdint>
#include <functional>

namespace tandem::rt {

/// Runs body(begin, end) over [0, count) split into chunks across the
/// runtime's worker threads (one per hardware thread, started on first use);
/// runs inline when the work is too small to pay for the hand-off, or when
/// called from inside a pool task: `costPerItem` is a rough count of
/// operations per item.
void parallelFor(int64_t count, int64_t costPerItem,
                 const std::function<void(int64_t, int64_t)> &body);

/// How many threads a parallelFor called here would use: the pool's size,
/// or 1 inside one of its tasks (where loops run inline).
int64_t poolThreads();

/// Stops the worker threads (they start again on the next parallelFor):
/// what unloading a compiled model's library needs. A parallelFor running
/// on another thread finishes first, on the workers it started with.
void stopWorkers();

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_THREADPOOL_H
