//===- CostModel.h - time of ops and transfers ------------------*- C++ -*-===//
//
// A roofline per op family: an op takes its family's fixed cost on its
// device plus the larger of its compute time and its memory time (their sum
// where its kernel does one, then the other: kernelRunsInPhases), at the
// fractions of the device's sustained rates the family's kernels reach. A
// transfer takes the link's latency plus bytes
// over bandwidth. An op that does no work at all (a weight, a reshape)
// costs nothing anywhere: the runtime runs nothing for it.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_COSTMODEL_H
#define TANDEM_ANALYSIS_COSTMODEL_H

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Dialect/Tandem/IR/TandemInterfaces.h"

#include <algorithm>

namespace mlir::tandem {

/// The family `op` is priced as: the rule in one place, so that the
/// calibration, the report and the runtime's profile name the same families.
CostFamily costFamilyOf(Operation *op);

/// Whether `family`'s kernels on `kind` move their bytes and then compute,
/// so that the two times add instead of overlapping: the CPU's im2col
/// convolutions copy their columns, then multiply them. (Fitted to the
/// calibration's dense convolutions, the sum's error was 0.63x the max's,
/// and densenet121's 3x3 convolutions, 128 -> 32 channels, were priced at
/// half their time by the max.)
bool kernelRunsInPhases(CostFamily family, DeviceKind kind);

/// A kernel's time beyond its fixed cost, from its compute and memory times.
inline double kernelBodyUs(double computeUs, double memoryUs, bool inPhases) {
  return inPhases ? computeUs + memoryUs : std::max(computeUs, memoryUs);
}

/// Microseconds one execution of `work` takes on `processor`, for an op of
/// `family` whose result element type is `elementType`; `onCallingThread`:
/// a CPU op that runs whole on the calling thread, which pays the family's
/// inline fixed cost (FamilyCost::inlineFixedUs) where the profile has one;
/// `inPhases`: kernelRunsInPhases.
double estimateOpTimeUs(const WorkEstimate &work, Type elementType,
                        CostFamily family, const ProcessorProfile &processor,
                        bool onCallingThread = false, bool inPhases = false);

/// Microseconds one execution of `op` takes on `kind`, or std::nullopt when
/// the op cannot run there (or the profile has no such device).
std::optional<double> estimateOpTimeUs(Operation *op, DeviceKind kind,
                                       const DeviceProfile &profile);

/// Microseconds to move `bytes` over `link`.
double estimateTransferTimeUs(int64_t bytes, const LinkProfile &link);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_COSTMODEL_H
