//===- TandemInterfaces.cpp - work and device contracts -------------------===//
//
// The work estimate of every op whose estimate is not elementwise. The
// formulas are documented with each op in TandemOps.td; the conventions in
// TandemInterfaces.td.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/IR/TandemInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectRegistry.h"
#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "tandem/runtime/CpuKernelPaths.h"
#include "tandem/runtime/ModelImage.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::tandem;

#include "tandem/Dialect/Tandem/IR/TandemInterfaces.cpp.inc"

bool mlir::tandem::fitsGpuKernels(Operation *op) {
  auto fits = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return !tensor || tensor.getRank() <= ::tandem::image::kMaxGpuRank;
  };
  return llvm::all_of(op->getOperandTypes(), fits) &&
         llvm::all_of(op->getResultTypes(), fits);
}

static bool isF32Type(Type type) {
  return cast<ShapedType>(type).getElementType().isF32();
}

// (Here beside the runtime's headers: TandemOps.cpp defines tandem::
// names, which ::tandem from them would make ambiguous.)
int64_t mlir::tandem::rowReductionLength(Operation *op) {
  if (!isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op) ||
      !llvm::all_of(op->getOperandTypes(), isF32Type) ||
      !isF32Type(op->getResult(0).getType()))
    return 0;
  ArrayRef<int64_t> shape =
      cast<ShapedType>(op->getOperand(0).getType()).getShape();
  int64_t rank = shape.size();
  llvm::SmallBitVector reduced(rank);
  for (int64_t axis : op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef())
    reduced.set(axis < 0 ? axis + rank : axis);
  // The reduced axes are the last ones: each output folds a contiguous run.
  int64_t count = 1, first = rank - int64_t(reduced.count());
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced.test(d) != (d >= first))
      return 0;
    if (d >= first)
      count *= shape[d];
  }
  return !reduced.none() && ::tandem::rt::reductionFusesRows(count) ? count
                                                                    : 0;
}

bool mlir::tandem::isRowReduction(Operation *op) {
  return rowReductionLength(op) != 0;
}

// Tensors are bounded (kMaxTensorBytes), but products of their sizes are
// not: counts saturate at INT64_MAX rather than overflow.
static int64_t times(int64_t a, int64_t b) {
  int64_t product;
  return llvm::MulOverflow(a, b, product) ? std::numeric_limits<int64_t>::max()
                                          : product;
}

static int64_t plus(int64_t a, int64_t b) {
  int64_t sum;
  return llvm::AddOverflow(a, b, sum) ? std::numeric_limits<int64_t>::max()
                                      : sum;
}

static int64_t bytesOf(Value value) { return getNumBytes(value.getType()); }

static int64_t elementsOf(Value value) {
  return getNumElements(value.getType());
}

static int64_t bytesOf(ValueRange values) {
  int64_t total = 0;
  for (Value value : values)
    total = plus(total, bytesOf(value));
  return total;
}

/// Work of an op that reads all its operands and writes all its results.
static WorkEstimate readAllWriteAll(Operation *op, int64_t flops) {
  return {flops, bytesOf(op->getOperands()), bytesOf(op->getResults())};
}

/// Work of an op that moves data only: `read` bytes in, its results out.
static WorkEstimate dataMovement(Operation *op, int64_t read) {
  return {0, read, bytesOf(op->getResults())};
}

WorkEstimate mlir::tandem::estimateElementwiseWork(Operation *op,
                                             int64_t flopsPerElement) {
  int64_t elements = 0;
  for (Value result : op->getResults())
    elements = plus(elements, elementsOf(result));
  return readAllWriteAll(op, times(flopsPerElement, elements));
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

WorkEstimate WeightOp::estimateWork() { return {}; }
WorkEstimate FillOp::estimateWork() { return dataMovement(*this, 0); }
WorkEstimate IotaOp::estimateWork() { return dataMovement(*this, 0); }

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, normalization
//===----------------------------------------------------------------------===//

WorkEstimate MatmulOp::estimateWork() {
  // The result holds B·M·N elements, each a K-long dot product.
  int64_t k = getA().getType().getShape().back();
  return readAllWriteAll(*this, times(times(2, elementsOf(getResult())), k));
}

WorkEstimate LinearOp::estimateWork() {
  // The result holds R·N elements, each a K-long dot product plus the bias.
  int64_t k = getW().getType().getShape()[1];
  int64_t outputs = elementsOf(getResult());
  return readAllWriteAll(
      *this, plus(times(times(2, outputs), k), getB() ? outputs : 0));
}

WorkEstimate Conv2dOp::estimateWork() {
  // Each of the N·O·OH·OW outputs sums (C/groups)·kH·kW products.
  ArrayRef<int64_t> w = getW().getType().getShape();
  int64_t outputs = elementsOf(getResult());
  int64_t window = times(times(w[1], w[2]), w[3]);
  return readAllWriteAll(
      *this, plus(times(times(2, outputs), window), getB() ? outputs : 0));
}

int64_t Conv2dOp::getGpuWorkspaceBytes() {
  // Enough for one group's explicit im2col matrix ((C/groups)·kH·kW·OH·OW
  // per image), which covers the implicit-GEMM algorithms' small needs;
  // capped, because cuDNN always has an algorithm that needs none. A 1x1,
  // stride-1, unpadded convolution reads its input as the GEMM's matrix
  // already: none.
  constexpr int64_t kMaxWorkspaceBytes = int64_t(32) << 20;
  ArrayRef<int64_t> x = getX().getType().getShape();
  ArrayRef<int64_t> w = getW().getType().getShape();
  ArrayRef<int64_t> y = getResult().getType().getShape();
  bool pointwise = w[2] == 1 && w[3] == 1 &&
                   llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }) &&
                   llvm::all_of(getPadding(), [](int64_t p) { return p == 0; });
  if (pointwise)
    return 0;
  int64_t elements =
      times(times(times(x[0], w[1]), times(w[2], w[3])), times(y[2], y[3]));
  int64_t elementBytes = bytesOf(getX()) / std::max<int64_t>(elementsOf(getX()), 1);
  int64_t bytes = times(elements, elementBytes);
  return std::min(bytes, kMaxWorkspaceBytes);
}

/// Each output reads a kH x kW window.
static WorkEstimate poolingWork(Operation *op, ArrayRef<int64_t> kernel) {
  return readAllWriteAll(op, times(times(elementsOf(op->getResult(0)),
                                         kernel[0]),
                                   kernel[1]));
}

WorkEstimate MaxPool2dOp::estimateWork() {
  return poolingWork(*this, getKernel());
}

WorkEstimate AvgPool2dOp::estimateWork() {
  return poolingWork(*this, getKernel());
}

WorkEstimate BatchNormOp::estimateWork() {
  int64_t channels = getScale().getType().getShape()[0];
  return readAllWriteAll(*this,
                         plus(times(2, elementsOf(getX())), times(4, channels)));
}

WorkEstimate LayerNormOp::estimateWork() {
  return readAllWriteAll(*this, times(8, elementsOf(getX())));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// One operation per input element.
static WorkEstimate reductionWork(Operation *op) {
  return readAllWriteAll(op, elementsOf(op->getOperand(0)));
}

WorkEstimate ReduceSumOp::estimateWork() { return reductionWork(*this); }
WorkEstimate ReduceMeanOp::estimateWork() { return reductionWork(*this); }
WorkEstimate ReduceMaxOp::estimateWork() { return reductionWork(*this); }
WorkEstimate ReduceMinOp::estimateWork() { return reductionWork(*this); }
WorkEstimate ArgmaxOp::estimateWork() { return reductionWork(*this); }

//===----------------------------------------------------------------------===//
// Shape and indexing: data movement only
//===----------------------------------------------------------------------===//

WorkEstimate ReshapeOp::estimateWork() { return {}; }
WorkEstimate TransposeOp::estimateWork() { return readAllWriteAll(*this, 0); }
WorkEstimate ConcatOp::estimateWork() { return readAllWriteAll(*this, 0); }
WorkEstimate BroadcastToOp::estimateWork() { return readAllWriteAll(*this, 0); }
WorkEstimate TransferOp::estimateWork() { return readAllWriteAll(*this, 0); }
WorkEstimate ShapeOp::estimateWork() { return dataMovement(*this, 0); }

WorkEstimate SliceOp::estimateWork() {
  return dataMovement(*this, bytesOf(getResult()));
}

// Lookups read their indices and the rows they select, never the whole
// table: this is why a huge embedding is cheap wherever its table lives.
WorkEstimate EmbeddingOp::estimateWork() {
  return dataMovement(*this, plus(bytesOf(getIds()), bytesOf(getResult())));
}

// A bag reads only its rows, like a lookup, and adds them up.
WorkEstimate EmbeddingBagOp::estimateWork() {
  RankedTensorType table = getTable().getType();
  int64_t rows = times(elementsOf(getIds()), table.getShape()[1]);
  int64_t rowBytes = times(rows, table.getElementTypeBitWidth() / 8);
  int64_t read = plus(plus(bytesOf(getIds()), bytesOf(getOffsets())), rowBytes);
  if (getWeights())
    read = plus(read, bytesOf(getWeights()));
  WorkEstimate work = dataMovement(*this, read);
  work.flops = getWeights() ? times(2, rows) : rows;
  return work;
}

WorkEstimate GatherOp::estimateWork() {
  return dataMovement(*this,
                      plus(bytesOf(getIndices()), bytesOf(getResult())));
}

WorkEstimate DynamicSliceOp::estimateWork() {
  return dataMovement(*this,
                      plus(bytesOf(getOffsets()), bytesOf(getResult())));
}

//===----------------------------------------------------------------------===//
// Upstream ops
//===----------------------------------------------------------------------===//

namespace {
/// A constant is materialized once, like a fill: it writes its result.
struct ConstantWorkModel
    : WorkEstimateOpInterface::ExternalModel<ConstantWorkModel,
                                             arith::ConstantOp> {
  WorkEstimate estimateWork(Operation *op) const {
    return dataMovement(op, 0);
  }
};

/// A constant can be materialized on any device.
struct ConstantDeviceModel
    : DeviceSupportOpInterface::ExternalModel<ConstantDeviceModel,
                                              arith::ConstantOp> {};
} // namespace

void mlir::tandem::registerUpstreamOpInterfaceModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    arith::ConstantOp::attachInterface<ConstantWorkModel, ConstantDeviceModel>(
        *context);
  });
  registerRuntimeOpInterfaceModels(registry);
}
