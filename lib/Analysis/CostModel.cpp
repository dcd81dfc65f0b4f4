//===- CostModel.cpp - time of ops and transfers --------------------------===//

#include "tandem/Analysis/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

double tandem::estimateOpTimeUs(const WorkEstimate &work, Type elementType,
                                const ProcessorProfile &processor) {
  if (work.flops == 0 && work.bytesRead == 0 && work.bytesWritten == 0)
    return 0;
  double computeSeconds = work.flops / processor.flopsFor(elementType);
  double memorySeconds =
      double(work.bytesRead + work.bytesWritten) / processor.memoryBandwidth;
  return processor.dispatchUs + std::max(computeSeconds, memorySeconds) * 1e6;
}

std::optional<double> tandem::estimateOpTimeUs(Operation *op, DeviceKind kind,
                                               const DeviceProfile &profile) {
  auto work = dyn_cast<WorkEstimateOpInterface>(op);
  auto support = dyn_cast<DeviceSupportOpInterface>(op);
  if (!work || !support || !support.canRunOn(kind))
    return std::nullopt;
  const ProcessorProfile *processor =
      kind == DeviceKind::CPU ? &profile.cpu
                              : (profile.gpu ? &*profile.gpu : nullptr);
  if (!processor)
    return std::nullopt;
  // The rate is chosen by what the op computes: its result's element type.
  Type elementType = op->getNumResults()
                         ? getElementTypeOrSelf(op->getResult(0).getType())
                         : Float32Type::get(op->getContext());
  return estimateOpTimeUs(work.estimateWork(), elementType, *processor);
}

double tandem::estimateTransferTimeUs(int64_t bytes, const LinkProfile &link) {
  return link.latencyUs + double(bytes) / link.bandwidth * 1e6;
}
