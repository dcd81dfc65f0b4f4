//===- Calibration.h - measuring this machine's devices ---------*- C++ -*-===//

#ifndef TANDEM_TOOLS_CALIBRATION_H
#define TANDEM_TOOLS_CALIBRATION_H

#include <cstdint>
#include <string>

namespace tandem_calibrate {

/// What one processor sustains, in the units of DeviceProfile.
struct ProcessorRates {
  std::string name;
  double f32Flops = 0, f16Flops = 0, bf16Flops = 0, intOps = 0;
  double memoryBandwidth = 0; // bytes/s
  double dispatchUs = 0;
  int64_t memoryBytes = 0;
};

struct LinkRates {
  double latencyUs = 0, bandwidth = 0;
};

struct GpuCalibration {
  bool present = false;
  std::string error; // why no GPU was measured
  ProcessorRates gpu;
  LinkRates h2dPinned, h2dPageable, d2hPinned, d2hPageable;
};

/// Measures the CPU: OpenBLAS sgemm, a multithreaded streaming triad, the
/// cost of dispatching one empty task to a thread pool, physical memory.
ProcessorRates calibrateCpu(bool quick);

/// Measures GPU 0 when there is one: cuBLAS GEMM in f32/f16/bf16 on random
/// matrices, device copy bandwidth, the cost of a launch and the synchronize
/// the runtime issues after it, and host/device copies (plain cudaMemcpy of
/// pageable memory; "pinned": the runtime's staged copies; bandwidth from
/// 256 MiB copies, latency from 4-byte ones).
GpuCalibration calibrateGpu(bool quick);

} // namespace tandem_calibrate

#endif // TANDEM_TOOLS_CALIBRATION_H
