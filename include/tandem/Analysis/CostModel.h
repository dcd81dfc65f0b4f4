//===- CostModel.h - time of ops and transfers ------------------*- C++ -*-===//
//
// A roofline with a fixed start-up cost: an op takes its device's dispatch
// overhead plus the larger of its compute time and its memory time. A
// transfer takes the link's latency plus bytes over bandwidth. An op that
// does no work at all (a weight, a reshape) costs nothing anywhere: there is
// nothing to launch.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_COSTMODEL_H
#define TANDEM_ANALYSIS_COSTMODEL_H

#include "tandem/Analysis/DeviceProfile.h"
#include "tandem/Dialect/Tandem/IR/TandemInterfaces.h"

namespace mlir::tandem {

/// Microseconds one execution of `work` takes on `processor`, for an op whose
/// result element type is `elementType`.
double estimateOpTimeUs(const WorkEstimate &work, Type elementType,
                        const ProcessorProfile &processor);

/// Microseconds one execution of `op` takes on `kind`, or std::nullopt when
/// the op cannot run there (or the profile has no such device).
std::optional<double> estimateOpTimeUs(Operation *op, DeviceKind kind,
                                       const DeviceProfile &profile);

/// Microseconds to move `bytes` over `link`.
double estimateTransferTimeUs(int64_t bytes, const LinkProfile &link);

} // namespace mlir::tandem

#endif // TANDEM_ANALYSIS_COSTMODEL_H
