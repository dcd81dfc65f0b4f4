//===- DeviceProfile.h - what a machine's devices can do --------*- C++ -*-===//
//
// A device profile describes one machine: its CPU, optionally one GPU, and
// the PCIe link between them. Placement prices ops and transfers from it.
// Builtin profiles carry the source of every figure; others are JSON files
// written by tandem-calibrate (format in docs/device-profiles.md).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_DEVICEPROFILE_H
#define TANDEM_ANALYSIS_DEVICEPROFILE_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tandem {

/// What kind of work an op does, as the cost model prices it: the kernels of
/// each family reach their own fraction of a processor's roofline and pay
/// their own fixed cost per op (costFamilyOf in CostModel.h assigns them).
enum class CostFamily {
  Gemm,          // matmul, linear
  GemmSkinny,    // matmul, linear of at most kSkinnyGemmWidth rows
  Conv,          // dense convolution (im2col + GEMM)
  ConvGrouped,   // grouped, not depthwise: a small GEMM per group
  ConvDepthwise, // one group per input channel
  Conv1x1,       // a 1x1 kernel: a GEMM over the pixels
  ConvStem,      // dense, at most 4 input channels (an image's first layer)
  Pool,          // max and average pooling windows
  Elementwise,   // arithmetic, compare, select, cast, sqrt
  Transcendental, // exp, log, tanh, sigmoid, gelu, silu, erf, pow
  Reduction,     // reduce_*, argmax, cumsum
  Softmax,       // softmax, log_softmax: an exp per element, three passes
  Normalization, // layer_norm, l2_normalize, batch_norm
  Transpose,     // a transpose that moves the innermost axis (strided reads)
  DataMovement,  // other transposes, concat, slice, broadcast, fill, iota, constant
  Gather,        // embedding, gather
};
constexpr int kNumCostFamilies = int(CostFamily::Gather) + 1;

/// Whether `family` is a product's (gemm or gemm_skinny): the families whose
/// small products run on the calling thread (inline_fixed_us).
inline bool isGemmFamily(CostFamily family) {
  return family == CostFamily::Gemm || family == CostFamily::GemmSkinny;
}

/// The family's name in profiles and reports ("conv_depthwise").
llvm::StringRef costFamilyName(CostFamily family);
/// The family named `name`, or std::nullopt.
std::optional<CostFamily> parseCostFamily(llvm::StringRef name);

/// How one family of kernels runs on one processor: an op takes fixedUs
/// plus the larger of its compute time (FLOPs at the processor's rate times
/// computeEfficiency) and its memory time (bytes at its bandwidth times
/// memoryEfficiency).
struct FamilyCost {
  /// The achieved fractions of the processor's FLOP rate and of its memory
  /// bandwidth; above 1 where the family's working set lives in cache.
  double computeEfficiency = 1, memoryEfficiency = 1;
  /// The fixed cost of one op as the runtime pays it (dispatch, launch,
  /// synchronize, the kernel's own start-up), microseconds.
  double fixedUs = 0;
  /// The fixed cost of a CPU GEMM too small to split over the thread pool,
  /// which runs whole on the calling thread and wakes no worker
  /// (CpuKernelPaths.h), where the profile gives one; else fixedUs.
  std::optional<double> inlineFixedUs;
};

/// Sustained rates of one processor (CPU or GPU).
struct ProcessorProfile {
  std::string name;
  /// Sustained FLOP/s by element type of the op's result.
  double f32Flops = 0, f16Flops = 0, bf16Flops = 0, intOps = 0;
  /// Sustained memory bandwidth, bytes/s.
  double memoryBandwidth = 0;
  /// Fixed cost of starting one op (a kernel launch on a GPU, a dispatch to
  /// the thread pool on a CPU), microseconds.
  double dispatchUs = 0;
  /// Memory capacity, bytes.
  int64_t memoryBytes = 0;
  /// Per CostFamily: its efficiency and fixed cost. A profile that does not
  /// give a family prices it at the roofline plus dispatchUs.
  std::array<FamilyCost, kNumCostFamilies> families;
  /// What the family figures are: "calibrated" (fitted to runs of this
  /// runtime's kernels by tandem-calibrate), or where the defaults come from.
  std::string familySource;

  /// The rate for ops whose result has `elementType`.
  double flopsFor(Type elementType) const;
  const FamilyCost &family(CostFamily family) const {
    return families[size_t(family)];
  }
  FamilyCost &family(CostFamily family) { return families[size_t(family)]; }
  /// Every family at the roofline with `fixedUs` (what a profile without
  /// family figures means).
  void setUniformFamilies(double fixedUs);
};

/// One direction of the host/device link.
struct LinkProfile {
  double latencyUs = 0;
  /// Bytes/s.
  double bandwidth = 0;
};

struct DeviceProfile {
  std::string name;
  /// Where the figures come from.
  std::string source;
  ProcessorProfile cpu;
  std::optional<ProcessorProfile> gpu;
  LinkProfile h2dPinned, h2dPageable, d2hPinned, d2hPageable;
  /// Transfers go through pinned staging buffers (the runtime's default).
  bool pinnedTransfers = true;

  const LinkProfile &h2d() const {
    return pinnedTransfers ? h2dPinned : h2dPageable;
  }
  const LinkProfile &d2h() const {
    return pinnedTransfers ? d2hPinned : d2hPageable;
  }
};

/// Names of the builtin profiles: h200, a100-80gb, v100-32gb, host.
std::vector<llvm::StringRef> getBuiltinProfileNames();

/// A builtin profile by name, or std::nullopt.
std::optional<DeviceProfile> getBuiltinProfile(llvm::StringRef name);

/// A builtin name, or else the path of a JSON profile. Errors name the
/// problem: an unknown name, an unreadable file, a malformed field.
llvm::Expected<DeviceProfile> loadDeviceProfile(llvm::StringRef nameOrPath);

/// Parses a profile from JSON text; `origin` names it in errors.
llvm::Expected<DeviceProfile> parseDeviceProfile(llvm::StringRef json,
                                                 llvm::StringRef origin);

/// The JSON form of a profile (what tandem-calibrate writes).
llvm::json::Value toJSON(const DeviceProfile &profile);

/// Parses a byte count: "4096", "4GiB", "512 MiB", "1.5GiB", "2GB".
llvm::Expected<int64_t> parseByteSize(llvm::StringRef text);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_DEVICEPROFILE_H
