//===- CostModel.cpp - time of ops and transfers --------------------------===//

#include "tandem/Analysis/CostModel.h"

#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/runtime/CpuKernelPaths.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

/// A dense convolution with at most this many input channels per group is
/// a network's stem (conv_stem).
static constexpr int64_t kStemChannels = 4;
// (The definitions below say mlir::tandem: CpuKernelPaths.h brings in the runtime's
// ::tandem namespace, which a bare tandem:: would make ambiguous.)

/// The family of what a group runs before its consumer (softmax, layer
/// norm): its producer's (GEMM, convolution), else transcendental if its body
/// holds an exp-like function, else elementwise; a group of views alone as
/// its costliest view.
static CostFamily kernelFamilyOf(FusedOp fused) {
  if (Operation *producer = fused.getProducer())
    return costFamilyOf(producer);
  Operation *consumer = fused.getConsumer();
  auto has = [&](CostFamily family) {
    return llvm::any_of(fused.getBodyOps(), [&](Operation &op) {
      return &op != consumer && costFamilyOf(&op) == family;
    });
  };
  if (has(CostFamily::Transcendental))
    return CostFamily::Transcendental;
  if (!fused.isViewsOnly())
    return CostFamily::Elementwise;
  return has(CostFamily::Transpose) ? CostFamily::Transpose
                                    : CostFamily::DataMovement;
}

CostFamily mlir::tandem::costFamilyOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, CostFamily>(op)
      .Case<MatmulOp, LinearOp>([](auto product) {
        // A product of a few rows (a recurrent step, a decoder's token, a
        // batch-1 head) is bound by reading its weight, as the runtime
        // runs it (in blocks along its long side).
        auto result = cast<ShapedType>(product.getResult().getType());
        int64_t columns = result.getShape().back();
        bool skinny = result.hasStaticShape() && columns > 0 &&
                      result.getNumElements() / columns <=
                          ::tandem::rt::kSkinnyGemmWidth;
        return skinny ? CostFamily::GemmSkinny : CostFamily::Gemm;
      })
      .Case([](Conv2dOp conv) {
        auto filter = cast<ShapedType>(conv.getW().getType());
        // A depthwise filter has one input channel per group; the runtime
        // runs it as a direct stencil, not im2col + GEMM.
        if (conv.getGroups() > 1 && filter.getDimSize(1) == 1)
          return CostFamily::ConvDepthwise;
        if (conv.getGroups() > 1)
          return CostFamily::ConvGrouped;
        if (filter.getDimSize(2) == 1 && filter.getDimSize(3) == 1)
          return CostFamily::Conv1x1;
        // An image's first layer (RGB, RGBA, grey): a product of depth
        // C x kh x kw, too shallow for the GEMM's rate, and columns many
        // times its input's bytes.
        if (filter.getDimSize(1) <= kStemChannels)
          return CostFamily::ConvStem;
        return CostFamily::Conv;
      })
      .Case<MaxPool2dOp, AvgPool2dOp>([](auto) { return CostFamily::Pool; })
      .Case<SoftmaxOp, LogSoftmaxOp>([](auto) { return CostFamily::Softmax; })
      .Case<LayerNormOp, L2NormalizeOp, BatchNormOp>(
          [](auto) { return CostFamily::Normalization; })
      .Case<ExpOp, LogOp, TanhOp, SigmoidOp, GeluOp, SiluOp, ErfOp, PowOp>(
          [](auto) { return CostFamily::Transcendental; })
      // A fused group is priced as its costliest kind of op: its GEMM or
      // convolution, else its normalization, else what its kernel runs.
      .Case([](FusedOp fused) {
        Operation *consumer = fused.getConsumer();
        return consumer && !fused.getProducer() ? costFamilyOf(consumer)
                                                : kernelFamilyOf(fused);
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp,
            CumsumOp>([](auto) { return CostFamily::Reduction; })
      .Case<EmbeddingOp, EmbeddingBagOp, GatherOp>(
          [](auto) { return CostFamily::Gather; })
      .Case([](TransposeOp transpose) {
        // Moving the innermost axis reads with a stride; keeping it copies
        // whole rows.
        ArrayRef<int64_t> perm = transpose.getPerm();
        return !perm.empty() && perm.back() != int64_t(perm.size()) - 1
                   ? CostFamily::Transpose
                   : CostFamily::DataMovement;
      })
      .Case<ConcatOp, SliceOp, BroadcastToOp, DynamicSliceOp,
            FillOp, IotaOp, ShapeOp, ReshapeOp, TransferOp, arith::ConstantOp>(
          [](auto) { return CostFamily::DataMovement; })
      // Arithmetic, compare, select, cast, sqrt and rsqrt.
      .Default([](Operation *) { return CostFamily::Elementwise; });
}

bool mlir::tandem::kernelRunsInPhases(CostFamily family, DeviceKind kind) {
  return kind == DeviceKind::CPU &&
         (family == CostFamily::Conv || family == CostFamily::ConvStem ||
          family == CostFamily::ConvGrouped);
}

/// Seconds `flops` of `elementType` take at `cost`'s share of the
/// processor's rate.
static double computeSeconds(int64_t flops, Type elementType,
                             const FamilyCost &cost,
                             const ProcessorProfile &processor) {
  return flops / (processor.flopsFor(elementType) * cost.computeEfficiency);
}

double mlir::tandem::estimateOpTimeUs(const WorkEstimate &work,
                                      Type elementType, CostFamily family,
                                      const ProcessorProfile &processor,
                                      bool onCallingThread, bool inPhases) {
  if (work.flops == 0 && work.bytesRead == 0 && work.bytesWritten == 0)
    return 0;
  const FamilyCost &cost = processor.family(family);
  double fixedUs = onCallingThread && cost.inlineFixedUs ? *cost.inlineFixedUs
                                                         : cost.fixedUs;
  double memorySeconds = double(work.bytesRead + work.bytesWritten) /
                         (processor.memoryBandwidth * cost.memoryEfficiency);
  return fixedUs +
         kernelBodyUs(computeSeconds(work.flops, elementType, cost, processor),
                      memorySeconds, inPhases) *
             1e6;
}

/// Bytes a kernel moves beyond its operands and result, on `kind`: the CPU
/// convolution writes its im2col matrix ((C/groups)·kH·kW rows of
/// N·OH·OW columns per group) and its GEMM reads it back, and where a GEMM
/// takes more than one image (convImagesPerGemm) the product is written once
/// more and scattered to NCHW.
/// (The depthwise stencil reads its input directly.)
static int64_t kernelTrafficBytes(Operation *op, CostFamily family,
                                  DeviceKind kind) {
  auto conv = dyn_cast<Conv2dOp>(op);
  if (auto fused = dyn_cast<FusedOp>(op)) // a convolution and its epilogue
    conv = dyn_cast_or_null<Conv2dOp>(fused.getProducer());
  if (!conv || kind != DeviceKind::CPU || family == CostFamily::ConvDepthwise)
    return 0;
  auto filter = cast<ShapedType>(conv.getW().getType());
  auto result = cast<ShapedType>(conv.getResult().getType());
  // In doubles: a huge (rejected later, or never run) shape must not
  // overflow; the sum is capped far below what int64 holds.
  double elementBytes = (result.getElementTypeBitWidth() + 7) / 8;
  double rows = double(filter.getDimSize(1)) * filter.getDimSize(2) *
                filter.getDimSize(3) * conv.getGroups();
  double images = result.getDimSize(0);
  double pixels = double(result.getDimSize(2)) * result.getDimSize(3);
  // A 1x1 convolution the kernel multiplies in place moves neither.
  ArrayRef<int64_t> strides = conv.getStrides(), padding = conv.getPadding();
  const int64_t stride[2] = {strides[0], strides[1]},
                pad[2] = {padding[0], padding[1]};
  if (::tandem::rt::convMultipliesInPlace(
          filter.getDimSize(2), filter.getDimSize(3), stride, pad,
          result.getDimSize(0), result.getDimSize(2) * result.getDimSize(3)))
    return 0;
  double columns = 2 * rows * images * pixels * elementBytes;
  // (Groups side by side share the caches, which the cost model, not
  // knowing the threads, leaves out: it asks for one group's columns.)
  int64_t imagesPerGemm = ::tandem::rt::convImagesPerGemm(
      filter.getDimSize(1) * filter.getDimSize(2) * filter.getDimSize(3),
      result.getDimSize(2) * result.getDimSize(3), result.getDimSize(0), 1);
  double scatter =
      imagesPerGemm > 1 ? 2 * double(result.getNumElements()) * elementBytes
                        : 0;
  return int64_t(std::min(columns + scatter, 0x1p60));
}

/// Operations a kernel spends beyond its op's FLOPs, on `kind`, counted as
/// FLOPs: the CPU's stencils (the depthwise convolution and the pools) run
/// one loop over an output row per plane, output row and window tap, and
/// each loop's set-up costs about what 24 multiply-adds do (fitted to
/// depthwise shapes from 7x7 to 112x112 outputs: 4.3 ns a loop beside
/// 0.18 ns a multiply-add on the CI machine), which weighs most on narrow
/// rows. (A depthwise convolution over rows under 32 wide runs its channels
/// side by side instead: CpuKernelPaths.h.)
static int64_t kernelOverheadFlops(Operation *op, CostFamily family,
                                   DeviceKind kind) {
  if (kind != DeviceKind::CPU ||
      (family != CostFamily::ConvDepthwise && family != CostFamily::Pool))
    return 0;
  // A fused group runs its producer's stencil (then the epilogue on it).
  if (auto fused = dyn_cast<FusedOp>(op))
    op = fused.getProducer();
  if (!isa_and_nonnull<Conv2dOp, MaxPool2dOp, AvgPool2dOp>(op))
    return 0;
  constexpr double kFlopsPerLoop = 48;
  auto result = cast<ShapedType>(op->getResult(0).getType());
  // Over narrow outputs a depthwise convolution runs its channels side by
  // side, pixel by pixel: no loop per row.
  if (isa<Conv2dOp>(op) &&
      ::tandem::rt::depthwiseRunsChannelsSideBySide(result.getDimSize(3)))
    return 0;
  ArrayRef<int64_t> window =
      llvm::TypeSwitch<Operation *, ArrayRef<int64_t>>(op)
          .Case([](Conv2dOp conv) {
            return cast<ShapedType>(conv.getW().getType()).getShape().drop_front(2);
          })
          .Case<MaxPool2dOp, AvgPool2dOp>([](auto pool) { return pool.getKernel(); });
  double loops = double(result.getDimSize(0)) * result.getDimSize(1) *
                 result.getDimSize(2) * window[0] * window[1];
  return int64_t(std::min(loops * kFlopsPerLoop, 0x1p60));
}

/// Whether the CPU runs `op` whole on the calling thread, waking no worker:
/// a linear or matmul product (a group's producer, a batched matmul's
/// FLOPs in all) too small to split, by the runtime's rule
/// (CpuKernelPaths.h).
static bool runsOnCallingThread(Operation *op, CostFamily family,
                                DeviceKind kind) {
  if (kind != DeviceKind::CPU || !isGemmFamily(family))
    return false;
  if (auto fused = dyn_cast<FusedOp>(op))
    op = fused.getProducer();
  auto product = dyn_cast_or_null<WorkEstimateOpInterface>(op);
  return product && isa<LinearOp, MatmulOp>(op) &&
         ::tandem::rt::gemmRunsOnCallingThread(
             double(product.estimateWork().flops));
}

std::optional<double>
mlir::tandem::estimateOpTimeUs(Operation *op, DeviceKind kind,
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
  CostFamily family = costFamilyOf(op);
  WorkEstimate estimate = work.estimateWork();
  // A group's softmax or layer norm runs after the rest of the group, as its
  // own pass over the result (a kernel of its own on the GPU, a loop over
  // the rows on the CPU): priced by its own family, the rest by the group's
  // producer or body. A reduction ending a group folds the values as the
  // kernel computes them (blocks in L1 on the CPU, registers on the GPU), in
  // the same dispatch: its arithmetic alone, at its family's rate.
  double consumerUs = 0;
  if (auto fused = dyn_cast<FusedOp>(op)) {
    if (Operation *consumer = fused.getConsumer()) {
      WorkEstimate consumerWork =
          cast<WorkEstimateOpInterface>(consumer).estimateWork();
      CostFamily consumerFamily = costFamilyOf(consumer);
      consumerUs =
          isRowReduction(consumer)
              ? computeSeconds(consumerWork.flops, elementType,
                               processor->family(consumerFamily), *processor) *
                    1e6
              : estimateOpTimeUs(consumerWork, elementType, consumerFamily,
                                 *processor);
      estimate.flops = std::max<int64_t>(0, estimate.flops - consumerWork.flops);
      family = kernelFamilyOf(fused);
    }
  }
  int64_t traffic = kernelTrafficBytes(op, family, kind);
  estimate.bytesRead += traffic / 2;
  estimate.bytesWritten += traffic - traffic / 2;
  estimate.flops += kernelOverheadFlops(op, family, kind);
  return estimateOpTimeUs(estimate, elementType, family, *processor,
                          runsOnCallingThread(op, family, kind),
                          kernelRunsInPhases(family, kind)) +
         consumerUs;
}

double mlir::tandem::estimateTransferTimeUs(int64_t bytes,
                                            const LinkProfile &link) {
  return link.latencyUs + double(bytes) / link.bandwidth * 1e6;
}
