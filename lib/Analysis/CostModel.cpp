//===- CostModel.cpp - time of ops and transfers --------------------------===//

#include "tandem/Analysis/CostModel.h"

#include "tandem/Dialect/Tandem/IR/TandemOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

CostFamily tandem::costFamilyOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, CostFamily>(op)
      .Case<MatmulOp, LinearOp>([](auto) { return CostFamily::Gemm; })
      .Case([](Conv2dOp conv) {
        auto filter = cast<ShapedType>(conv.getW().getType());
        // A depthwise filter has one input channel per group; the runtime
        // runs it as a direct stencil, not im2col + GEMM.
        if (conv.getGroups() > 1 && filter.getDimSize(1) == 1)
          return CostFamily::ConvDepthwise;
        if (filter.getDimSize(2) == 1 && filter.getDimSize(3) == 1)
          return CostFamily::Conv1x1;
        return CostFamily::Conv;
      })
      .Case<MaxPool2dOp, AvgPool2dOp>([](auto) { return CostFamily::Pool; })
      .Case<SoftmaxOp, LogSoftmaxOp>([](auto) { return CostFamily::Softmax; })
      .Case<LayerNormOp, L2NormalizeOp, BatchNormOp>(
          [](auto) { return CostFamily::Normalization; })
      .Case<ExpOp, LogOp, TanhOp, SigmoidOp, GeluOp, SiluOp, ErfOp, PowOp>(
          [](auto) { return CostFamily::Transcendental; })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp,
            CumsumOp>([](auto) { return CostFamily::Reduction; })
      .Case<EmbeddingOp, GatherOp>([](auto) { return CostFamily::Gather; })
      .Case<TransposeOp, ConcatOp, SliceOp, BroadcastToOp, DynamicSliceOp,
            FillOp, IotaOp, ShapeOp, ReshapeOp, TransferOp, arith::ConstantOp>(
          [](auto) { return CostFamily::DataMovement; })
      // Arithmetic, compare, select, cast, sqrt and rsqrt.
      .Default([](Operation *) { return CostFamily::Elementwise; });
}

double tandem::estimateOpTimeUs(const WorkEstimate &work, Type elementType,
                                CostFamily family,
                                const ProcessorProfile &processor) {
  if (work.flops == 0 && work.bytesRead == 0 && work.bytesWritten == 0)
    return 0;
  const FamilyCost &cost = processor.family(family);
  double computeSeconds = work.flops / (processor.flopsFor(elementType) *
                                        cost.computeEfficiency);
  double memorySeconds = double(work.bytesRead + work.bytesWritten) /
                         (processor.memoryBandwidth * cost.memoryEfficiency);
  return cost.fixedUs + std::max(computeSeconds, memorySeconds) * 1e6;
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
  return estimateOpTimeUs(work.estimateWork(), elementType, costFamilyOf(op),
                          *processor);
}

double tandem::estimateTransferTimeUs(int64_t bytes, const LinkProfile &link) {
  return link.latencyUs + double(bytes) / link.bandwidth * 1e6;
}
