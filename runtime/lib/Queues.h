//===- Queues.h - a scheduled model's queues run concurrently ---*- C++ -*-===//
//
// On the sim backend, a scheduled model (--tandem-schedule) runs each queue
// of its schedule (CPU, GPU, host-to-device, device-to-host) on a worker
// thread of its own: an op starts once its queue's earlier ops and the ops
// it waits for have completed, so a wait missing from the schedule is a
// real race. A race detector checks every op as it starts: each operand's
// producer has completed, and the bytes it writes belong to no buffer that
// is still live (written, with readers still to run). --sim-jitter adds
// random delays per queue to shake out missing waits.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_QUEUES_H
#define TANDEM_RUNTIME_LIB_QUEUES_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct TandemRuntime;

namespace tandem::rt {

class QueueExecutor;

/// Starts one worker per queue for `rt`'s scheduled image.
std::shared_ptr<QueueExecutor> startQueues(TandemRuntime &rt,
                                           std::optional<uint64_t> jitterSeed);
/// Hands op `index` to its queue; `operands` is copied.
void submit(QueueExecutor &queues, int32_t index, void **operands,
            void *result);
/// Waits until every submitted op has completed: the end of a run.
void drain(QueueExecutor &queues);

// On the CUDA backend (CudaQueues.cpp): the GPU-side queues are streams,
// their waits events, and the CPU queue a worker thread; a run with GPU
// work only is captured once as a CUDA graph and replayed.
class CudaQueueExecutor;

/// Starts the executor of `rt`'s scheduled image on its GPU; null with
/// `error` if its events cannot be made.
std::shared_ptr<CudaQueueExecutor> startCudaQueues(TandemRuntime &rt,
                                                   std::string &error);
void submit(CudaQueueExecutor &queues, int32_t index, void **operands,
            void *result);
/// Ends a run: waits for its CPU ops and every stream, keeping a failure in
/// rt.failure.
void finishCudaRun(CudaQueueExecutor &queues);
/// Forgets a run an exception cut short.
void resetCudaRun(CudaQueueExecutor &queues);
/// "CUDA graph: ..." for the profile: how many runs a graph carried, or why
/// none did.
std::string describeCudaGraphs(const CudaQueueExecutor &queues);

} // namespace tandem::rt

#endif // TANDEM_RUNTIME_LIB_QUEUES_H
