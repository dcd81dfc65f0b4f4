//===- TandemRuntime.cpp - how the runtime executes each op ---------------===//
//
// The attribute words each op writes into the model image
// (RuntimeOpInterface::writeRuntimeAttrs), in the layout ImageAttrs.h gives
// its kind, and the interface's model for `arith.constant`. Ops without
// attributes need nothing here: their kind comes from Tandem_RunsAs in
// TandemOps.td.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "tandem/runtime/ModelImage.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tandem;
namespace img = ::tandem::image;

namespace {

/// An axis attribute, negative ones counted from the end.
int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// A number as a fill stores it: a double (booleans as 0 or 1).
double fillValue(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  auto i = cast<IntegerAttr>(value);
  return i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                  : double(i.getInt());
}

template <typename Attrs>
LogicalResult write(const Attrs &attrs, std::vector<int64_t> &words) {
  img::writeAttrs(attrs, words);
  return success();
}

LogicalResult writeAxis(int64_t axis, int64_t rank,
                        std::vector<int64_t> &words) {
  return write(img::AxisAttrs{normalizedAxis(axis, rank)}, words);
}

/// The bytes of a dense constant as the runtime lays the tensor out (i1 as
/// one byte per element), packed 8 to a word.
void writeConstantBytes(DenseElementsAttr dense, std::vector<int64_t> &words) {
  Type element = dense.getElementType();
  size_t item = element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  std::vector<uint8_t> bytes;
  for (Attribute value : dense.getValues<Attribute>()) {
    uint64_t bits = 0;
    if (auto f = dyn_cast<FloatAttr>(value))
      bits = f.getValue().bitcastToAPInt().getZExtValue();
    else
      bits = cast<IntegerAttr>(value).getValue().getZExtValue();
    for (size_t b = 0; b < item; ++b)
      bytes.push_back((bits >> (8 * b)) & 0xff);
  }
  size_t at = words.size();
  words.resize(at + (bytes.size() + 7) / 8, 0);
  std::memcpy(words.data() + at, bytes.data(), bytes.size());
}

/// `arith.constant`, which folds leave in tandem IR: a splat runs as a fill,
/// any other dense tensor (the frontend's interpolation taps) travels in the
/// image.
struct ConstantRuntimeModel
    : public RuntimeOpInterface::ExternalModel<ConstantRuntimeModel,
                                               arith::ConstantOp> {
  int64_t getRuntimeKind(Operation *op) const {
    auto dense =
        dyn_cast<DenseElementsAttr>(cast<arith::ConstantOp>(op).getValue());
    return dense && !dense.isSplat() ? img::kConstant : img::kFill;
  }
  LogicalResult writeRuntimeAttrs(Operation *op,
                                  std::vector<int64_t> &words) const {
    auto dense =
        dyn_cast<DenseElementsAttr>(cast<arith::ConstantOp>(op).getValue());
    if (!dense)
      return op->emitError("tandem-compile lowers dense tensor constants only");
    if (dense.isSplat())
      return write(img::FillAttrs{fillValue(dense.getSplatValue<Attribute>())},
                   words);
    writeConstantBytes(dense, words);
    return success();
  }
};

} // namespace

static_assert(int64_t(RuntimeKind::Constant) == img::kConstant &&
                  int64_t(RuntimeKind::Transfer) == img::kTransfer,
              "the dialect and the image number kinds from one list");

void mlir::tandem::registerRuntimeOpInterfaceModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    arith::ConstantOp::attachInterface<ConstantRuntimeModel>(*context);
  });
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

LogicalResult FillOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return write(img::FillAttrs{fillValue(getValue())}, words);
}

LogicalResult IotaOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeAxis(getAxis(), getType().getRank(), words);
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return write(img::CompareAttrs{int64_t(getPredicate())}, words);
}

LogicalResult FusedOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  auto kernel = (*this)->getAttrOfType<IntegerAttr>(
      TandemDialect::kKernelAttrName);
  if (!kernel)
    return emitOpError("has no generated kernel: --convert-tandem-to-llvm "
                       "numbers each group's kernel ('")
           << TandemDialect::kKernelAttrName << "')";
  // Operations per element of the epilogue, for the thread pool's split: a
  // libm call is worth tens of arithmetic operations.
  // A group of views only copies: one operation per element.
  Operation *producer = getProducer(), *consumer = getConsumer();
  int64_t cost = 0;
  for (Operation &op : getBodyOps())
    if (&op != producer && &op != consumer && !isViewOp(&op))
      cost += isa<ExpOp, LogOp, TanhOp, SigmoidOp, GeluOp, SiluOp, ErfOp,
                  PowOp>(op)
                  ? 40
                  : 1;
  cost = std::max<int64_t>(cost, 1);
  img::FusedAttrs attrs{kernel.getInt(), cost, -1, 0, -1, 0};
  if (producer) {
    attrs.producerKind = cast<RuntimeOpInterface>(producer).getRuntimeKind();
    attrs.producerOperands = producer->getNumOperands();
  }
  if (consumer) {
    attrs.consumerKind = cast<RuntimeOpInterface>(consumer).getRuntimeKind();
    attrs.consumerOperands = consumer->getNumOperands() - 1;
  }
  if (failed(write(attrs, words)))
    return failure();
  // Each part's operand indices (the consumer's first operand is the
  // group's result), then its own attribute words.
  auto writePart = [&](Operation *part, size_t firstOperand) {
    for (Value operand : part->getOperands().drop_front(firstOperand))
      words.push_back(cast<BlockArgument>(operand).getArgNumber());
    return cast<RuntimeOpInterface>(part).writeRuntimeAttrs(words);
  };
  if (producer) {
    // The producer's workspace is the group's, planned on the group.
    if (Attribute offset =
            (*this)->getAttr(TandemDialect::kWorkspaceOffsetAttrName))
      producer->setAttr(TandemDialect::kWorkspaceOffsetAttrName, offset);
    if (failed(writePart(producer, 0)))
      return failure();
  }
  if (!consumer)
    return success();
  // A reduction's one word: the elements it folds into each output (its
  // trailing axes).
  if (int64_t length = rowReductionLength(consumer)) {
    words.push_back(length);
    return success();
  }
  return writePart(consumer, 1);
}

LogicalResult LinearOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return write(img::LinearAttrs{getB() ? 1 : 0}, words);
}

LogicalResult Conv2dOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  img::Conv2dAttrs attrs;
  llvm::copy(getStrides(), attrs.strides);
  llvm::copy(getPadding(), attrs.padding);
  llvm::copy(getDilation(), attrs.dilation);
  attrs.groups = getGroupsAttr().getInt();
  attrs.hasBias = getB() ? 1 : 0;
  // Planned by --tandem-plan-memory for a GPU convolution only.
  auto offset = (*this)->getAttrOfType<IntegerAttr>(
      TandemDialect::kWorkspaceOffsetAttrName);
  attrs.workspaceOffset = offset ? offset.getInt() : 0;
  attrs.workspaceBytes = offset ? getGpuWorkspaceBytes() : 0;
  return write(attrs, words);
}

template <typename PoolOp>
static LogicalResult writePool(PoolOp pool, std::vector<int64_t> &words) {
  img::Pool2dAttrs attrs;
  llvm::copy(pool.getKernel(), attrs.kernel);
  llvm::copy(pool.getEffectiveStrides(), attrs.strides);
  llvm::copy(pool.getPadding(), attrs.padding);
  return write(attrs, words);
}

LogicalResult MaxPool2dOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writePool(*this, words);
}

LogicalResult AvgPool2dOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writePool(*this, words);
}

LogicalResult BatchNormOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return write(img::EpsilonAttrs{getEpsilon().convertToDouble()}, words);
}

LogicalResult SoftmaxOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeAxis(getAxis(), getType().getRank(), words);
}

LogicalResult LogSoftmaxOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeAxis(getAxis(), getType().getRank(), words);
}

LogicalResult LayerNormOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  int64_t axis = normalizedAxis(getAxis(), getType().getRank());
  return write(img::AxisEpsilonAttrs{axis, getEpsilon().convertToDouble()},
               words);
}

LogicalResult L2NormalizeOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  int64_t axis = normalizedAxis(getAxis(), getType().getRank());
  return write(img::AxisEpsilonAttrs{axis, getEpsilon().convertToDouble()},
               words);
}

//===----------------------------------------------------------------------===//
// Reductions: the reduced axes, normalized
//===----------------------------------------------------------------------===//

template <typename ReduceOp>
static LogicalResult writeReduce(ReduceOp reduce, std::vector<int64_t> &words) {
  int64_t rank = reduce.getX().getType().getRank();
  for (int64_t axis : reduce.getAxes())
    words.push_back(normalizedAxis(axis, rank));
  return success();
}

LogicalResult ReduceSumOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeReduce(*this, words);
}
LogicalResult ReduceMeanOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeReduce(*this, words);
}
LogicalResult ReduceMaxOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeReduce(*this, words);
}
LogicalResult ReduceMinOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeReduce(*this, words);
}

LogicalResult CumsumOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeAxis(getAxis(), getX().getType().getRank(), words);
}

LogicalResult ArgmaxOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeAxis(getAxis(), getX().getType().getRank(), words);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingBagOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  int64_t mode = llvm::StringSwitch<int64_t>(getMode())
                     .Case("sum", 0)
                     .Case("mean", 1)
                     .Default(2);
  return write(img::EmbeddingBagAttrs{mode, getPaddingIdxAttr().getInt(),
                                      getIncludeLastOffset() ? 1 : 0,
                                      getWeights() ? 1 : 0},
               words);
}

LogicalResult TransposeOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  llvm::append_range(words, getPerm());
  return success();
}

LogicalResult ConcatOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeAxis(getAxis(), getType().getRank(), words);
}

LogicalResult SliceOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  llvm::append_range(words, getStarts());
  llvm::append_range(words, getEffectiveStrides());
  return success();
}

LogicalResult GatherOp::writeRuntimeAttrs(std::vector<int64_t> &words) {
  return writeAxis(getAxis(), getX().getType().getRank(), words);
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

Value ReshapeOp::getViewSource() { return getX(); }
