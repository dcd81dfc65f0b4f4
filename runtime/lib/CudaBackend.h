//===- CudaBackend.h - the CUDA backend of the runtime ----------*- C++ -*-===//
//
// GPU-placed ops on a CUDA GPU: one arena in device memory (allocated once),
// resident weights uploaded at load, transfers through pinned staging
// buffers, cuBLAS for GEMMs and kernels of ours for everything else, all
// enqueued in order on one stream per loaded model; the host waits only
// where it reads a result back. Built
// whenever nvcc is present (runtime/lib/cuda/: the device and copies, the
// dispatch, a file of kernels per kernel family); elsewhere
// CudaBackendNone.cpp says CUDA is not built in.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_CUDABACKEND_H
#define TANDEM_RUNTIME_LIB_CUDABACKEND_H

#include "cpu/CpuKernels.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::rt::cuda {

/// One runtime's GPU: its arena, the stream its ops and copies run on in
/// order, its cuBLAS handle, its pinned staging buffers and the position
/// its checking kernels record a failure at. Each loaded model has its own
/// (two models in one process share nothing but the CUDA context).
struct Device;

/// True if this runtime has CUDA and a GPU is visible; else `why` says not.
bool available(std::string &why);

/// One line per visible GPU: name, memory, compute capability (honours
/// CUDA_VISIBLE_DEVICES), or why there is none.
std::string describeDevices();

/// Sets up GPU 0 with an arena of `arenaBytes`; null with `error` if not.
/// With `allowTf32`, f32 GEMMs and convolutions run on tensor cores in TF32 (each input
/// rounded to 10 mantissa bits, products summed in f32): several times
/// faster, with relative errors near 1e-3 instead of 1e-6.
Device *start(int64_t arenaBytes, bool allowTf32, std::string &error);
/// Loads the model's generated GPU kernels: `ptx` holds tandem_fused_N for
/// each N of `onGpu` (of numKernels in the model's table).
bool loadGeneratedKernels(Device *device, const std::string &ptx,
                          const std::vector<int64_t> &onGpu,
                          int64_t numKernels, std::string &error);
/// Waits for the device's work and frees what start allocated.
void stop(Device *device);
void *arena(Device *device);

/// Copies between host and device memory in stream order, after the ops
/// enqueued before. toDevice returns once the host bytes have been read
/// (the DMA may still run); toHost returns once they have been written.
bool toDevice(Device *device, void *deviceData, const void *host, size_t bytes,
              std::string &error);
bool toHost(Device *device, void *host, const void *deviceData, size_t bytes,
            std::string &error);

/// Enqueues op `kind` on the device's stream, on device buffers (host
/// operands, such as dynamic_slice's offsets, are host pointers), without
/// waiting for it: a kernel that fails while it runs is reported by the
/// next synchronize (or toHost). Ops that must read back what they found
/// (an index out of range) wait for themselves.
bool runKernel(Device *device, int64_t kind,
               const std::vector<TensorView> &operands,
               const TensorView &result, const std::vector<int64_t> &attrs,
               std::string &error);

/// Waits until everything enqueued on the device (on each of its streams)
/// has finished; false with `error` if any of it failed.
bool synchronize(Device *device, std::string &error);

/// True iff runKernel has a kernel for op `kind` (which may still refuse
/// some element types). Needs no GPU. Transfer has none (toDevice and toHost
/// are its copies), nor has Shape (a CPU-only op).
bool hasKernel(int64_t kind);

//===----------------------------------------------------------------------===//
// Scheduled runs: one stream per queue, events for the waits
//===----------------------------------------------------------------------===//
//
// A scheduled model (its image carries queues and waits) runs the GPU's
// compute ops on the device's stream and its copies on one stream per copy
// engine; each op records an event when it is done, and a stream waits for
// another queue's op by waiting for its event (cudaStreamWaitEvent), the
// host only where it must (hostWaitFor).

/// The GPU-side queues of a schedule, numbered as the image numbers them.
enum class GpuQueue : int64_t { Compute = 1, HostToDevice = 2, DeviceToHost = 3 };

/// Page-locks `bytes` at `host` so that copies from and to it are
/// asynchronous DMAs (cudaHostRegister; read-only memory, such as the mapped
/// weights file, where the GPU can take it read-only). False with `why`
/// where the driver refuses: copies of that memory are then staged.
bool pinHostMemory(Device *device, const void *host, size_t bytes,
                   bool readOnly, std::string &why);

/// Readies the events of a scheduled image of `ops` ops; with `timing`,
/// each op also records a start event, so that its GPU time can be read
/// after the run (opSeconds).
bool prepareSchedule(Device *device, size_t ops, bool timing,
                     std::string &error);

/// Makes `queue`'s stream wait, on the GPU, for op `waited` to be done.
bool streamWaitFor(Device *device, GpuQueue queue, size_t waited,
                   std::string &error);
/// Blocks the calling thread until op `op` is done on the GPU.
bool hostWaitFor(Device *device, size_t op, std::string &error);
/// Records that op `op` starts (when timing) and is done on `queue`'s
/// stream, around what is enqueued between the two calls.
bool recordStart(Device *device, GpuQueue queue, size_t op, std::string &error);
bool recordDone(Device *device, GpuQueue queue, size_t op, std::string &error);
/// The seconds op `op` took on the GPU in the last run, and when it started
/// after the run's first op started; after a synchronize.
bool opSeconds(Device *device, size_t op, size_t first, double &start,
               double &seconds, std::string &error);

/// A copy enqueued on a copy engine's stream without waiting, where its
/// host memory is pinned; staged through that engine's own pinned buffers
/// otherwise (the host then waits for the DMAs of its bytes).
bool copyOnQueue(Device *device, GpuQueue queue, void *dst, const void *src,
                 size_t bytes, std::string &error);

/// CUDA graphs of a scheduled run's GPU side: captured once from the
/// streams (the copy engines' streams joined to the compute stream's
/// capture), then launched as one graph on later runs. endGraphCapture
/// fails, leaving no graph and nothing run, where something enqueued
/// during the capture cannot be captured.
bool beginGraphCapture(Device *device, std::string &error);
bool endGraphCapture(Device *device, std::string &error);
bool launchGraph(Device *device, std::string &error);
void dropGraph(Device *device);

} // namespace tandem::rt::cuda

#endif // TANDEM_RUNTIME_LIB_CUDABACKEND_H
