//===- Calibration.h - measuring this machine's devices ---------*- C++ -*-===//

#ifndef TANDEM_TOOLS_CALIBRATION_H
#define TANDEM_TOOLS_CALIBRATION_H

#include "tandem/Analysis/DeviceProfile.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

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

/// One op family's fit to the calibration run.
struct FamilyFit {
  mlir::tandem::CostFamily family{};
  mlir::tandem::FamilyCost cost;
  size_t samples = 0;
  /// The largest measured / fitted ratio (or its inverse) over its samples.
  double worstRatio = 1;
};

/// One op of the calibration run: its family, its compute and memory times
/// at the measured rates, the time it took (the best round's average
/// without the round's first call) and
/// the time its family's fit gives it.
struct CalibrationSample {
  std::string family, name;
  double computeUs = 0, memoryUs = 0, measuredUs = 0, fittedUs = 0;
  /// A GEMM small enough to run whole on the calling thread (its fixed cost
  /// is fitted apart: FamilyCost::inlineFixedUs).
  bool onCallingThread = false;
  /// Its family's kernels copy, then compute (kernelRunsInPhases).
  bool inPhases = false;
};

struct FamilyCalibration {
  std::vector<FamilyFit> fits;
  std::vector<CalibrationSample> samples;
  /// Rounds of `repeat` runs of the large ops' program, of `smallRepeat`
  /// of the small ops'.
  int rounds = 0, repeat = 0, smallRepeat = 0;
};

/// Compiles a model of representative ops of every family with `compiler`
/// (tandem-compile) under `rates` (the CPU's measured rates), runs it on the
/// CPU, and fits each family's efficiency and fixed cost to its ops' times
/// (FamilyCalibration.cpp says how). `saveModel`, unless empty, is where the
/// calibration model's MLIR is also written.
llvm::Expected<FamilyCalibration>
calibrateFamilies(const mlir::tandem::DeviceProfile &rates,
                  llvm::StringRef compiler, bool quick,
                  llvm::StringRef saveModel);

} // namespace tandem_calibrate

#endif // TANDEM_TOOLS_CALIBRATION_H
