//===- TandemOps.cpp - tandem op verifiers and syntax ---------------------===//
//
// Each verifier checks the shape rule of its op (the IR contract) and names the
// rule it finds broken. Element types and attribute kinds are checked by the
// constraints generated from TandemOps.td.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemViews.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::tandem;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return tensorTypeOf(value).getShape();
}

/// Checks that `op`'s single result has shape `expected`; `rule` says where
/// the expected shape comes from.
static LogicalResult verifyResultShape(Operation *op,
                                       ArrayRef<int64_t> expected,
                                       StringRef rule) {
  ArrayRef<int64_t> actual = shapeOf(op->getResult(0));
  if (actual == expected)
    return success();
  return op->emitOpError() << "result shape " << formatShape(actual)
                           << " does not match " << formatShape(expected)
                           << " (" << rule << ")";
}

/// Normalizes `axis` against `rank`, or reports it out of range.
static FailureOr<int64_t> verifyAxis(Operation *op, int64_t axis,
                                     int64_t rank, StringRef what = "axis") {
  if (std::optional<int64_t> normalized = normalizeAxis(axis, rank))
    return *normalized;
  InFlightDiagnostic diag = op->emitOpError()
                            << what << " " << axis
                            << " is out of range for a rank-" << rank
                            << " operand";
  if (rank > 0)
    diag << " (expected " << -rank << " to " << rank - 1 << ")";
  return diag;
}

/// Checks that an operand has exactly `rank` dimensions.
static LogicalResult verifyRank(Operation *op, Value value, StringRef name,
                                int64_t rank) {
  int64_t actual = tensorTypeOf(value).getRank();
  if (actual == rank)
    return success();
  return op->emitOpError() << name << " must have rank " << rank
                           << ", got rank " << actual;
}

/// Checks that every entry of a (height, width) attribute is at least `min`.
/// Window sizes, strides, padding and dilation are at most this, so that
/// the index arithmetic of every kernel stays far from overflow.
static constexpr int64_t kMaxWindowParameter = (int64_t(1) << 31) - 1;

static LogicalResult verifyWindowParameters(Operation *op, ArrayRef<int64_t> values,
                                   StringRef name, int64_t min) {
  for (int64_t value : values) {
    if (value < min)
      return op->emitOpError() << name << " must be at least " << min
                               << ", got " << formatShape(values);
    if (value > kMaxWindowParameter)
      return op->emitOpError() << name << " must be at most "
                               << kMaxWindowParameter << ", got "
                               << formatShape(values);
  }
  return success();
}

static LogicalResult verifyElementTypesMatch(Operation *op, Value a,
                                             StringRef aName, Value b,
                                             StringRef bName) {
  Type aType = tensorTypeOf(a).getElementType();
  Type bType = tensorTypeOf(b).getElementType();
  if (aType == bType)
    return success();
  return op->emitOpError() << aName << " and " << bName
                           << " must share one element type, got " << aType
                           << " and " << bType;
}

static LogicalResult verifyNonNegativeEpsilon(Operation *op, APFloat epsilon) {
  if (!epsilon.isNegative() && !epsilon.isNaN())
    return success();
  return op->emitOpError() << "epsilon must be a non-negative number, got "
                           << epsilon.convertToDouble();
}

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

LogicalResult tandem::OpTrait::impl::verifyAddressableTensors(Operation *op) {
  auto check = [&](Type type, StringRef what,
                   unsigned index) -> LogicalResult {
    if (getCheckedNumBytes(type))
      return success();
    return op->emitOpError()
           << what << " #" << index << " (" << type
           << ") takes more than 2^48 bytes (256 TiB), the most a tensor may";
  };
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", index)))
      return failure();
  return success();
}

LogicalResult tandem::OpTrait::impl::verifyBroadcastsOperands(Operation *op) {
  SmallVector<int64_t> broadcast;
  bool first = true;
  for (Value operand : op->getOperands()) {
    ArrayRef<int64_t> shape = shapeOf(operand);
    if (first) {
      broadcast.assign(shape.begin(), shape.end());
      first = false;
      continue;
    }
    std::optional<SmallVector<int64_t>> joined =
        broadcastShapes(broadcast, shape);
    if (!joined)
      return op->emitOpError()
             << "operand shapes " << formatShape(broadcast) << " and "
             << formatShape(shape)
             << " are not broadcast-compatible (NumPy rules: right-aligned, "
                "each pair of dimensions equal or one of them 1)";
    broadcast = std::move(*joined);
  }
  return verifyResultShape(op, broadcast, "the broadcast of the operand shapes");
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `T` when both operands and the result have type T, else `T1, T2 -> T3`.
static ParseResult parseBroadcastTypes(OpAsmParser &parser, Type &lhs,
                                       Type &rhs, Type &result) {
  if (parser.parseType(lhs))
    return failure();
  if (failed(parser.parseOptionalComma())) {
    rhs = result = lhs;
    return success();
  }
  return failure(parser.parseType(rhs) || parser.parseArrow() ||
                 parser.parseType(result));
}

static void printBroadcastTypes(OpAsmPrinter &printer, Operation *, Type lhs,
                                Type rhs, Type result) {
  if (lhs == rhs && rhs == result) {
    printer << lhs;
    return;
  }
  printer << lhs << ", " << rhs << " -> " << result;
}

/// A bare predicate keyword: `lt`.
static ParseResult parseComparePredicate(OpAsmParser &parser,
                                         ComparePredicateAttr &predicate) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseOptionalKeyword(&keyword))
    return parser.emitError(loc, "expected a comparison predicate: eq, ne, "
                                 "lt, le, gt or ge");
  std::optional<ComparePredicate> value = symbolizeComparePredicate(keyword);
  if (!value)
    return parser.emitError(loc, "unknown comparison predicate '")
           << keyword << "': expected eq, ne, lt, le, gt or ge";
  predicate = ComparePredicateAttr::get(parser.getContext(), *value);
  return success();
}

static void printComparePredicate(OpAsmPrinter &printer, Operation *,
                                  ComparePredicateAttr predicate) {
  printer << stringifyComparePredicate(predicate.getValue());
}

/// A device written in full: `#tandem.device<gpu>`.
static ParseResult parseDevice(OpAsmParser &parser, DeviceAttr &device) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  if (parser.parseAttribute(attr))
    return failure();
  device = dyn_cast<DeviceAttr>(attr);
  if (!device)
    return parser.emitError(loc, "expected a #tandem.device attribute, got ")
           << attr;
  return success();
}

static void printDevice(OpAsmPrinter &printer, Operation *, DeviceAttr device) {
  printer.printAttribute(device);
}

/// A queue in brackets: `<gpu>`.
static ParseResult parseQueue(OpAsmParser &parser, QueueKindAttr &queue) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseOptionalKeyword(&keyword))
    return parser.emitError(loc, "expected a queue: <cpu>, <gpu>, <h2d> or "
                                 "<d2h>");
  std::optional<QueueKind> value = symbolizeQueueKind(keyword);
  if (!value)
    return parser.emitError(loc, "unknown queue '")
           << keyword << "': expected cpu, gpu, h2d or d2h";
  queue = QueueKindAttr::get(parser.getContext(), *value);
  return parser.parseGreater();
}

static void printQueue(OpAsmPrinter &printer, Operation *, QueueKindAttr queue) {
  printer << '<' << stringifyQueueKind(queue.getValue()) << '>';
}

//===----------------------------------------------------------------------===//
// Schedule
//===----------------------------------------------------------------------===//

LogicalResult WaitOp::verify() {
  if (getValues().empty())
    return emitOpError("waits for nothing: name at least one value");
  return success();
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty 'name': the key of the tensor in the "
                       "weights file");
  // The name is looked up as a C string in the weights file's header.
  if (getName().contains('\0'))
    return emitOpError("'name' contains a NUL character, which no weights "
                       "file key can hold");
  return success();
}

LogicalResult FillOp::verify() {
  if (!isa<FloatAttr, IntegerAttr>(getValue()))
    return emitOpError() << "value must be a number, got " << getValue();
  Type valueType = getValue().getType();
  Type elementType = getType().getElementType();
  if (valueType != elementType)
    return emitOpError() << "value is typed " << valueType
                         << " but the result's element type is "
                         << elementType << " (they must match)";
  return success();
}

LogicalResult IotaOp::verify() {
  return verifyAxis(*this, getAxisAttr().getInt(), getType().getRank());
}

//===----------------------------------------------------------------------===//
// Select
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::verify() {
  if (failed(verifyElementTypesMatch(*this, getA(), "a", getB(), "b")) ||
      failed(verifyElementTypesMatch(*this, getA(), "a", getResult(),
                                     "the result")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getA()), b = shapeOf(getB());
  if (a.size() < 2 || b.size() < 2)
    return emitOpError() << "operands must have rank >= 2 ([..., M, K] and "
                            "[..., K, N]), got shapes "
                         << formatShape(a) << " and " << formatShape(b);
  int64_t m = a[a.size() - 2], k = a.back();
  int64_t kB = b[b.size() - 2], n = b.back();
  if (k != kB)
    return emitOpError() << "contracting dimensions differ: a is "
                         << formatShape(a) << " (K = " << k << ") but b is "
                         << formatShape(b) << " (K = " << kB << ")";
  std::optional<SmallVector<int64_t>> batch =
      broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (!batch)
    return emitOpError() << "batch dimensions " << formatShape(a.drop_back(2))
                         << " and " << formatShape(b.drop_back(2))
                         << " are not broadcast-compatible";
  SmallVector<int64_t> expected = *batch;
  expected.append({m, n});
  return verifyResultShape(*this, expected, "broadcast batch + [M, N]");
}

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getX());
  if (x.empty())
    return emitOpError("x must have rank >= 1 ([..., K])");
  if (failed(verifyRank(*this, getW(), "w", 2)))
    return failure();
  ArrayRef<int64_t> w = shapeOf(getW());
  if (w[1] != x.back())
    return emitOpError() << "w must be [N, K] with K = " << x.back()
                         << " (x's last dimension), got " << formatShape(w);
  if (getB()) {
    ArrayRef<int64_t> b = shapeOf(getB());
    if (b.size() != 1 || b[0] != w[0])
      return emitOpError() << "b must be [N] = [" << w[0] << "], got "
                           << formatShape(b);
  }
  SmallVector<int64_t> expected(x.drop_back());
  expected.push_back(w[0]);
  return verifyResultShape(*this, expected, "x's leading dimensions + [N]");
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Output size of a sliding window along one dimension (floor mode).
static int64_t windowOutputSize(int64_t input, int64_t kernel, int64_t stride,
                                int64_t padding, int64_t dilation) {
  // Parameters are below 2^31 and sizes below 2^48: no overflow here.
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = input + 2 * padding;
  if (padded < span)
    return 0;
  return (padded - span) / stride + 1;
}

LogicalResult Conv2dOp::verify() {
  if (failed(verifyRank(*this, getX(), "x (NCHW)", 4)) ||
      failed(verifyRank(*this, getW(), "w (OIHW)", 4)) ||
      failed(verifyWindowParameters(*this, getStrides(), "strides", 1)) ||
      failed(verifyWindowParameters(*this, getPadding(), "padding", 0)) ||
      failed(verifyWindowParameters(*this, getDilation(), "dilation", 1)))
    return failure();
  ArrayRef<int64_t> x = shapeOf(getX()), w = shapeOf(getW());
  int64_t groups = getGroupsAttr().getInt();
  if (groups < 1)
    return emitOpError() << "groups must be at least 1, got " << groups;
  if (x[1] % groups != 0 || w[0] % groups != 0)
    return emitOpError() << "groups (" << groups
                         << ") must divide the input channels (" << x[1]
                         << ") and the output channels (" << w[0] << ")";
  if (w[1] != x[1] / groups)
    return emitOpError() << "w must have C / groups = " << x[1] / groups
                         << " input channels (dimension 1), got "
                         << formatShape(w);
  if (getB()) {
    ArrayRef<int64_t> b = shapeOf(getB());
    if (b.size() != 1 || b[0] != w[0])
      return emitOpError() << "b must be [O] = [" << w[0] << "], got "
                           << formatShape(b);
  }
  SmallVector<int64_t> expected = {x[0], w[0]};
  for (int i = 0; i < 2; ++i) {
    int64_t size = windowOutputSize(x[2 + i], w[2 + i], getStrides()[i],
                                    getPadding()[i], getDilation()[i]);
    if (size < 1)
      return emitOpError() << "the dilated kernel " << formatShape(w.drop_front(2))
                           << " does not fit in the padded input "
                           << formatShape(x.drop_front(2));
    expected.push_back(size);
  }
  return verifyResultShape(*this, expected,
                           "[N, O, OH, OW] from the input, kernel, strides, "
                           "padding and dilation");
}

/// The rule shared by max_pool2d and avg_pool2d.
static LogicalResult verifyPool2d(Operation *op, Value x,
                                  ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> padding) {
  if (failed(verifyRank(op, x, "x (NCHW)", 4)) ||
      failed(verifyWindowParameters(op, kernel, "kernel", 1)) ||
      failed(verifyWindowParameters(op, strides, "strides", 1)) ||
      failed(verifyWindowParameters(op, padding, "padding", 0)))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (2 * padding[i] > kernel[i])
      return op->emitOpError() << "padding " << formatShape(padding)
                               << " must be at most half the kernel "
                               << formatShape(kernel);
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> expected = {shape[0], shape[1]};
  for (int i = 0; i < 2; ++i) {
    int64_t size =
        windowOutputSize(shape[2 + i], kernel[i], strides[i], padding[i], 1);
    if (size < 1)
      return op->emitOpError() << "the kernel " << formatShape(kernel)
                               << " does not fit in the padded input "
                               << formatShape(shape.drop_front(2));
    expected.push_back(size);
  }
  return verifyResultShape(op, expected,
                           "[N, C, OH, OW] from the input, kernel, strides "
                           "and padding");
}

LogicalResult MaxPool2dOp::verify() {
  return verifyPool2d(*this, getX(), getKernel(), getEffectiveStrides(),
                      getPadding());
}

LogicalResult AvgPool2dOp::verify() {
  return verifyPool2d(*this, getX(), getKernel(), getEffectiveStrides(),
                      getPadding());
}

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getX());
  if (x.size() < 2)
    return emitOpError() << "x must have rank >= 2 ([N, C, ...]), got "
                         << formatShape(x);
  std::pair<Value, StringRef> params[] = {{getScale(), "scale"},
                                          {getBias(), "bias"},
                                          {getMean(), "mean"},
                                          {getVar(), "var"}};
  for (auto [value, name] : params) {
    ArrayRef<int64_t> shape = shapeOf(value);
    if (shape.size() != 1 || shape[0] != x[1])
      return emitOpError() << name << " must be [C] = [" << x[1]
                           << "] (x's dimension 1), got "
                           << formatShape(shape);
  }
  if (failed(verifyNonNegativeEpsilon(*this, getEpsilon())))
    return failure();
  return verifyResultShape(*this, x, "the shape of x");
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxisAttr().getInt(), getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxisAttr().getInt(), getType().getRank());
}

LogicalResult L2NormalizeOp::verify() {
  if (failed(verifyAxis(*this, getAxisAttr().getInt(), getType().getRank())))
    return failure();
  return verifyNonNegativeEpsilon(*this, getEpsilon());
}

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getX());
  FailureOr<int64_t> axis = verifyAxis(*this, getAxisAttr().getInt(), x.size());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> normalized = x.drop_front(*axis);
  for (auto [value, name] : {std::pair<Value, StringRef>{getGamma(), "gamma"},
                             {getBeta(), "beta"}}) {
    if (shapeOf(value) != normalized)
      return emitOpError() << name << " must have the normalized shape "
                           << formatShape(normalized) << " (x's dimensions "
                           << *axis << ".." << x.size() - 1 << "), got "
                           << formatShape(shapeOf(value));
  }
  if (failed(verifyNonNegativeEpsilon(*this, getEpsilon())))
    return failure();
  return verifyResultShape(*this, x, "the shape of x");
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The shape left after reducing `axes` (already normalized) of `shape`.
static SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                         const llvm::SmallBitVector &reduced,
                                         bool keepdims) {
  SmallVector<int64_t> result;
  for (auto [index, dim] : llvm::enumerate(shape)) {
    if (!reduced.test(index))
      result.push_back(dim);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

/// max, min and argmax have no value for an empty set (NumPy and PyTorch
/// raise): a zero-length reduced axis with results to compute is an error.
static LogicalResult verifyNotEmptyReduction(Operation *op,
                                             ArrayRef<int64_t> shape,
                                             const llvm::SmallBitVector &reduced) {
  bool emptyAxis = false, emptyResult = false;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (size == 0)
      (reduced.test(d) ? emptyAxis : emptyResult) = true;
  }
  if (emptyAxis && !emptyResult)
    return op->emitOpError()
           << "reduces a dimension of size 0: " << op->getName()
           << " of no elements has no value";
  return success();
}

static LogicalResult verifyReduction(Operation *op, Value x,
                                     ArrayRef<int64_t> axes, bool keepdims,
                                     bool hasIdentity = true) {
  ArrayRef<int64_t> shape = shapeOf(x);
  if (axes.empty())
    return op->emitOpError("axes must list at least one dimension");
  llvm::SmallBitVector reduced(shape.size());
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = verifyAxis(op, axis, shape.size());
    if (failed(normalized))
      return failure();
    if (reduced.test(*normalized))
      return op->emitOpError() << "axes " << formatShape(axes)
                               << " name dimension " << *normalized
                               << " more than once";
    reduced.set(*normalized);
  }
  if (!hasIdentity && failed(verifyNotEmptyReduction(op, shape, reduced)))
    return failure();
  return verifyResultShape(op, reducedShape(shape, reduced, keepdims),
                           keepdims ? "x's shape with the reduced axes as 1"
                                    : "x's shape without the reduced axes");
}

LogicalResult ReduceSumOp::verify() {
  return verifyReduction(*this, getX(), getAxes(), getKeepdims());
}
LogicalResult ReduceMeanOp::verify() {
  return verifyReduction(*this, getX(), getAxes(), getKeepdims());
}
LogicalResult ReduceMaxOp::verify() {
  return verifyReduction(*this, getX(), getAxes(), getKeepdims(),
                         /*hasIdentity=*/false);
}
LogicalResult ReduceMinOp::verify() {
  return verifyReduction(*this, getX(), getAxes(), getKeepdims(),
                         /*hasIdentity=*/false);
}

LogicalResult CumsumOp::verify() {
  return verifyAxis(*this, getAxisAttr().getInt(), shapeOf(getX()).size());
}

LogicalResult ArgmaxOp::verify() {
  ArrayRef<int64_t> shape = shapeOf(getX());
  FailureOr<int64_t> axis =
      verifyAxis(*this, getAxisAttr().getInt(), shape.size());
  if (failed(axis))
    return failure();
  llvm::SmallBitVector reduced(shape.size());
  reduced.set(*axis);
  if (failed(verifyNotEmptyReduction(*this, shape, reduced)))
    return failure();
  return verifyResultShape(*this, reducedShape(shape, reduced, getKeepdims()),
                           getKeepdims() ? "x's shape with the axis as 1"
                                         : "x's shape without the axis");
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  int64_t in = getX().getType().getNumElements();
  int64_t out = getType().getNumElements();
  if (in != out)
    return emitOpError() << "cannot reshape " << formatShape(shapeOf(getX()))
                         << " (" << in << " elements) into "
                         << formatShape(getType().getShape()) << " (" << out
                         << " elements): the element count must not change";
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> shape = shapeOf(getX());
  ArrayRef<int64_t> perm = getPerm();
  if (perm.size() != shape.size())
    return emitOpError() << "perm " << formatShape(perm) << " has "
                         << perm.size() << " entries but x has rank "
                         << shape.size();
  llvm::SmallBitVector seen(shape.size());
  SmallVector<int64_t> expected;
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= static_cast<int64_t>(shape.size()) || seen.test(dim))
      return emitOpError() << "perm " << formatShape(perm)
                           << " is not a permutation of 0.." << shape.size() - 1;
    seen.set(dim);
    expected.push_back(shape[dim]);
  }
  return verifyResultShape(*this, expected, "x's dimensions permuted by perm");
}

LogicalResult ConcatOp::verify() {
  // SameOperandsAndResultElementType has already required one input.
  ArrayRef<int64_t> first = shapeOf(getInputs().front());
  FailureOr<int64_t> axis =
      verifyAxis(*this, getAxisAttr().getInt(), first.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected(first);
  expected[*axis] = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    ArrayRef<int64_t> shape = shapeOf(input);
    bool agrees = shape.size() == first.size();
    for (size_t d = 0; agrees && d < shape.size(); ++d)
      agrees = d == static_cast<size_t>(*axis) || shape[d] == first[d];
    if (!agrees)
      return emitOpError() << "input " << index << " has shape "
                           << formatShape(shape) << " but input 0 has "
                           << formatShape(first)
                           << ": all dimensions but the axis (" << *axis
                           << ") must agree";
    expected[*axis] += shape[*axis];
  }
  return verifyResultShape(*this, expected,
                           "the inputs joined along the axis");
}

SmallVector<int64_t> SliceOp::getEffectiveStrides() {
  if (std::optional<ArrayRef<int64_t>> strides = getStrides())
    return SmallVector<int64_t>(*strides);
  return SmallVector<int64_t>(getStarts().size(), 1);
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> shape = shapeOf(getX());
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits();
  SmallVector<int64_t> strides = getEffectiveStrides();
  if (starts.size() != shape.size() || limits.size() != shape.size() ||
      strides.size() != shape.size())
    return emitOpError() << "starts, limits and strides need one entry per "
                            "dimension of x (rank "
                         << shape.size() << "), got " << starts.size() << ", "
                         << limits.size() << " and " << strides.size();
  SmallVector<int64_t> expected;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (starts[d] < 0 || starts[d] > limits[d] || limits[d] > shape[d])
      return emitOpError() << "dimension " << d << ": need 0 <= start ("
                           << starts[d] << ") <= limit (" << limits[d]
                           << ") <= size (" << shape[d] << ")";
    if (strides[d] < 1)
      return emitOpError() << "dimension " << d
                           << ": stride must be at least 1, got " << strides[d];
    // ceil((limit - start) / stride), without overflow for large strides.
    int64_t extent = limits[d] - starts[d];
    expected.push_back(extent == 0 ? 0 : (extent - 1) / strides[d] + 1);
  }
  return verifyResultShape(*this, expected,
                           "ceil((limit - start) / stride) per dimension");
}

LogicalResult BroadcastToOp::verify() {
  ArrayRef<int64_t> from = shapeOf(getX()), to = getType().getShape();
  if (!isBroadcastableTo(from, to))
    return emitOpError() << "x's shape " << formatShape(from)
                         << " does not broadcast to " << formatShape(to)
                         << " (NumPy rules: right-aligned, each dimension 1 "
                            "or equal)";
  return success();
}

LogicalResult ShapeOp::verify() {
  int64_t rank = getX().getType().getRank();
  return verifyResultShape(*this, {rank}, "one entry per dimension of x");
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  if (failed(verifyRank(*this, getTable(), "table ([V, D])", 2)) ||
      failed(verifyElementTypesMatch(*this, getTable(), "table", getResult(),
                                     "the result")))
    return failure();
  SmallVector<int64_t> expected(shapeOf(getIds()));
  expected.push_back(shapeOf(getTable())[1]);
  return verifyResultShape(*this, expected, "ids.shape + [D]");
}

LogicalResult EmbeddingBagOp::verify() {
  if (failed(verifyRank(*this, getTable(), "table ([V, D])", 2)) ||
      failed(verifyRank(*this, getIds(), "ids ([L])", 1)) ||
      failed(verifyRank(*this, getOffsets(), "offsets", 1)) ||
      failed(verifyElementTypesMatch(*this, getTable(), "table", getResult(),
                                     "the result")))
    return failure();
  StringRef mode = getMode();
  if (mode != "sum" && mode != "mean" && mode != "max")
    return emitOpError() << "mode must be \"sum\", \"mean\" or \"max\", got \""
                         << mode << "\"";
  int64_t length = shapeOf(getIds())[0];
  if (Value weights = getWeights()) {
    if (mode != "sum")
      return emitOpError() << "weights go with mode \"sum\" only, not \""
                           << mode << "\"";
    if (failed(verifyRank(*this, weights, "weights ([L])", 1)) ||
        failed(verifyElementTypesMatch(*this, getTable(), "table", weights,
                                       "weights")))
      return failure();
    if (shapeOf(weights)[0] != length)
      return emitOpError() << "weights has " << shapeOf(weights)[0]
                           << " entries for " << length << " ids";
  }
  int64_t rows = shapeOf(getTable())[0];
  int64_t padding = getPaddingIdxAttr().getInt();
  if (padding < -1 || padding >= rows)
    return emitOpError() << "padding_idx " << padding
                         << " is not a row of the table (0 to " << rows - 1
                         << ") or -1 (none)";
  int64_t bags = shapeOf(getOffsets())[0] - (getIncludeLastOffset() ? 1 : 0);
  if (bags < 0)
    return emitOpError() << "include_last_offset needs at least one offset";
  return verifyResultShape(*this, {bags, shapeOf(getTable())[1]},
                           getIncludeLastOffset() ? "[len(offsets) - 1, D]"
                                                  : "[len(offsets), D]");
}

LogicalResult GatherOp::verify() {
  if (failed(verifyElementTypesMatch(*this, getX(), "x", getResult(),
                                     "the result")))
    return failure();
  ArrayRef<int64_t> x = shapeOf(getX());
  FailureOr<int64_t> axis = verifyAxis(*this, getAxisAttr().getInt(), x.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected(x.take_front(*axis));
  llvm::append_range(expected, shapeOf(getIndices()));
  llvm::append_range(expected, x.drop_front(*axis + 1));
  return verifyResultShape(
      *this, expected, "x.shape[:axis] + indices.shape + x.shape[axis+1:]");
}

LogicalResult DynamicSliceOp::verify() {
  if (failed(verifyElementTypesMatch(*this, getX(), "x", getResult(),
                                     "the result")))
    return failure();
  ArrayRef<int64_t> x = shapeOf(getX());
  int64_t rank = x.size();
  ArrayRef<int64_t> offsets = shapeOf(getOffsets());
  if (offsets.size() != 1 || offsets[0] != rank)
    return emitOpError() << "offsets must be a 1-D tensor with one entry per "
                            "dimension of x ([" << rank << "]), got "
                         << formatShape(offsets);
  ArrayRef<int64_t> sizes = getSizes();
  if (static_cast<int64_t>(sizes.size()) != rank)
    return emitOpError() << "sizes " << formatShape(sizes)
                         << " needs one entry per dimension of x (rank "
                         << rank << ")";
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] < 0 || sizes[d] > x[d])
      return emitOpError() << "dimension " << d << ": size " << sizes[d]
                           << " must be between 0 and " << x[d];
  return verifyResultShape(*this, sizes, "sizes");
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

static Type elementOf(Type type) {
  return cast<ShapedType>(type).getElementType();
}

static bool isF32Tensor(Type type) { return elementOf(type).isF32(); }

/// Whether every operand and result of `op` holds f32.
static bool isAllF32(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), isF32Tensor) &&
         llvm::all_of(op->getResultTypes(), isF32Tensor);
}

bool tandem::isFusible(Operation *op) {
  // A mask lives in the kernel as a lane mask; it is loaded from and never
  // stored as the runtime's bytes (the group's result is f32).
  auto isF32OrBool = [](Type type) {
    return isF32Tensor(type) || elementOf(type).isInteger(1);
  };
  // Compares of floats give masks, selects choose floats by them, casts
  // turn masks into 0/1 floats and floats into masks (x != 0).
  if (isa<CompareOp>(op))
    return llvm::all_of(op->getOperandTypes(), isF32Tensor);
  if (isa<SelectOp>(op))
    return isF32Tensor(op->getResult(0).getType());
  if (isa<CastOp>(op))
    return isF32OrBool(op->getOperand(0).getType()) &&
           isF32OrBool(op->getResult(0).getType());
  if (!isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PowOp, NegOp,
           AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ReluOp,
           GeluOp, SiluOp, ErfOp, FloorOp, CeilOp, RoundOp, TruncOp>(op))
    return false;
  return isAllF32(op);
}

bool tandem::isFusedConstant(Operation *op) {
  auto fill = dyn_cast<FillOp>(op);
  return fill && isF32Tensor(fill.getResult().getType());
}

std::string tandem::displayName(Operation *op) {
  auto fused = dyn_cast<FusedOp>(op);
  if (!fused)
    return op->getName().getStringRef().str();
  // A reshape relabels a buffer: it is named only in a group of reshapes.
  // A constant is no work.
  SmallVector<StringRef> names;
  for (Operation &inner : fused.getBodyOps())
    if (!isa<ReshapeOp>(inner) && !isFusedConstant(&inner))
      names.push_back(inner.getName().stripDialect());
  if (names.empty())
    names.push_back(ReshapeOp::getOperationName().split('.').second);
  return "fused(" + llvm::join(names, "+") + ")";
}

bool tandem::isEpilogueProducer(Operation *op) {
  return isa<LinearOp, MatmulOp, Conv2dOp>(op) && isAllF32(op);
}

bool tandem::isGroupConsumer(Operation *op) {
  return (isa<SoftmaxOp, LogSoftmaxOp, L2NormalizeOp, LayerNormOp>(op) &&
          isAllF32(op)) ||
         isRowReduction(op);
}

Operation *FusedOp::getConsumer() {
  Operation *last = getYielded().getDefiningOp();
  return last && last->getBlock() == &getBody().front() &&
                 isGroupConsumer(last)
             ? last
             : nullptr;
}

bool FusedOp::isViewsOnly() {
  return llvm::all_of(getBodyOps(), [](Operation &op) { return isViewOp(&op); });
}

Value FusedOp::getKernelValue() {
  Operation *consumer = getConsumer();
  return consumer ? consumer->getOperand(0) : getYielded();
}

Operation *FusedOp::getProducer() {
  Block &body = getBody().front();
  return !body.empty() && isEpilogueProducer(&body.front()) ? &body.front()
                                                           : nullptr;
}

bool FusedOp::isReadPerElement(unsigned index) {
  Operation *producer = getProducer(), *consumer = getConsumer();
  return llvm::any_of(getBody().front().getArgument(index).getUsers(),
                      [&](Operation *user) {
                        return user != producer && user != consumer;
                      });
}

Value FusedOp::getYielded() {
  return cast<YieldOp>(getBody().front().getTerminator()).getValue();
}

/// A view in a fused group reads an input or another view, and a chain
/// that the group's ops read is one strided access of the input
/// (TandemViews.h).
static LogicalResult verifyFusedView(Operation *view, ViewReading reading) {
  Value operand = view->getOperand(0);
  if (!isa<BlockArgument>(operand) && !isViewOp(operand.getDefiningOp()))
    return view->emitOpError(
        "reads a value the group computes: a view in a fused group reads "
        "an input or another view (the kernel reads inputs through views, "
        "it does not materialize values to view them)");
  // The chain's end is what the kernel reads; the views before it need not
  // be strided themselves.
  if (llvm::all_of(view->getUsers(), isViewOp))
    return success();
  SmallVector<Operation *> chain =
      viewChainOf(view->getResult(0), [](Operation *) { return true; });
  if (failed(composeViews(chain.front()->getOperand(0), chain, reading)))
    return view->emitOpError(
        "ends a chain of views that is not one strided access of the "
        "group's input (a reshape merges dimensions that a transpose or a "
        "slice has separated): the chain must be materialized");
  return success();
}

static constexpr const char kNotFusibleMessage[] =
    "cannot be part of a fused group: only the float arithmetic and unary "
    "functions on f32 are, compares of f32, selects of f32, casts between "
    "f32 and i1, fills of f32, view ops on the inputs, a GEMM or convolution "
    "as the first op and a softmax, log_softmax, l2_normalize, layer_norm "
    "or reduction over trailing axes as the last";

LogicalResult FusedOp::verifyRegions() {
  Block &body = getBody().front();
  if (getInputs().size() > kMaxFusedInputs)
    return emitOpError() << "has " << getInputs().size()
                         << " inputs, over the " << kMaxFusedInputs
                         << " a group's GPU kernel can take as parameters";
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("the body's arguments must have the types of the "
                       "inputs, in order");
  Operation *producer = getProducer(), *consumer = getConsumer();
  // What the kernel computes: the result, or a reduction's input.
  ArrayRef<int64_t> shape =
      shapeOf(consumer ? consumer->getOperand(0) : getResult());
  // What no group computes is named before any shape is checked against
  // the group's (a reduction over leading axes is not the group's consumer,
  // so the group's shape would be its result's).
  for (Operation &op : getBodyOps())
    if (&op != producer && &op != consumer && !isViewOp(&op) &&
        !isFusedConstant(&op) && !isFusible(&op))
      return op.emitOpError(kNotFusibleMessage);
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    // Every input is a kernel parameter, and a buffer kept live for it.
    if (body.getArgument(index).use_empty())
      return emitOpError() << "input #" << index
                           << " is unused in its fused group: every input "
                              "is read by the group's ops";
    for (Operation *user : body.getArgument(index).getUsers())
      if (user != producer && user != consumer && !isViewOp(user) &&
          !isBroadcastableTo(shapeOf(input), shape))
        return emitOpError() << "input #" << index << " of shape "
                             << formatShape(shapeOf(input))
                             << " does not broadcast to the group's shape "
                             << formatShape(shape);
  }
  if (!getResult().getType().getElementType().isF32())
    return emitOpError() << "gives " << getResult().getType()
                         << ": a fused group's kernel writes f32 (masks and "
                            "other values stay inside it)";
  if (getYielded().getType() != getResult().getType())
    return emitOpError() << "yields " << getYielded().getType()
                         << " but its result is " << getResult().getType();
  if (isa<BlockArgument>(getYielded()))
    return emitOpError("yields one of its inputs: a group yields a value "
                       "its ops compute");
  if (producer) {
    if (consumer && isRowReduction(consumer))
      return consumer->emitOpError(
          "ends a fused group that starts with a GEMM or convolution: the "
          "product is written to the group's buffer, which holds the "
          "reduction's outputs");
    if (producer->getResult(0).getType() != getResult().getType())
      return producer->emitOpError()
             << "gives " << producer->getResult(0).getType()
             << ", but the fused group it starts is "
             << getResult().getType()
             << ": a producer's product is the group's buffer";
    for (Value operand : producer->getOperands())
      if (!isa<BlockArgument>(operand))
        return producer->emitOpError("starts a fused group: its operands "
                                     "must be the group's inputs");
    if (&body.front() == getYielded().getDefiningOp())
      return emitOpError("holds a GEMM or convolution alone: a group with a "
                         "producer has an epilogue");
  }
  // A group of views alone reads its chain over a refinement of its shape.
  ViewReading viewReading =
      isViewsOnly() ? ViewReading::Refined : ViewReading::PerDimension;
  for (Operation &op : getBodyOps()) {
    for (NamedAttribute attr : op.getDiscardableAttrs())
      if (attr.getName() == TandemDialect::kDeviceAttrName ||
          attr.getName() == TandemDialect::kPinAttrName)
        return op.emitOpError()
               << "carries '" << attr.getName().strref()
               << "' inside a fused group: the group is placed as one, and "
                  "carries it";
    if (op.use_empty())
      return op.emitOpError("is unused in its fused group: every op of a "
                            "group feeds its result");
    if (&op == producer)
      continue;
    if (&op == consumer) {
      // Its input is what the kernel computes; the rest it reads itself.
      Operation *input = op.getOperand(0).getDefiningOp();
      if (!input || input == producer || isViewOp(input))
        return op.emitOpError(
            "ends a fused group: its input must be computed by the group's "
            "elementwise ops (the generated kernel computes it, and the "
            "normalization or reduction runs on it)");
      if (!llvm::all_of(op.getOperands().drop_front(),
                        [](Value v) { return isa<BlockArgument>(v); }))
        return op.emitOpError("ends a fused group: its operands other than "
                              "its input must be the group's inputs");
      continue;
    }
    if (isViewOp(&op)) {
      if (failed(verifyFusedView(&op, viewReading)))
        return failure();
      continue;
    }
    // A constant broadcasts to its readers, as an input: their verifiers
    // say so.
    if (isFusedConstant(&op))
      continue;
    if (shapeOf(op.getResult(0)) != shape)
      return op.emitOpError()
             << "has shape " << formatShape(shapeOf(op.getResult(0)))
             << " in a fused group of shape " << formatShape(shape)
             << ": only the group's inputs may broadcast";
  }
  return success();
}

WorkEstimate FusedOp::estimateWork() {
  WorkEstimate work;
  for (Operation &op : getBodyOps())
    work.flops += cast<WorkEstimateOpInterface>(op).estimateWork().flops;
  // The body's values stay in registers: only the inputs are read and the
  // result written.
  work.bytesWritten = getCheckedNumBytes(getResult().getType()).value_or(0);
  // An input read through views alone is read where the views pick it: at
  // most one element of it per element the kernel computes and view.
  int64_t kernelBytes =
      getCheckedNumBytes(getKernelValue().getType()).value_or(0);
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    int64_t bytes = getCheckedNumBytes(input.getType()).value_or(0);
    Value argument = getBody().front().getArgument(index);
    if (llvm::all_of(argument.getUsers(), isViewOp))
      bytes = std::min<int64_t>(
          bytes, kernelBytes *
                     int64_t(std::distance(argument.getUses().begin(),
                                           argument.getUses().end())));
    work.bytesRead += bytes;
  }
  return work;
}

//===----------------------------------------------------------------------===//
// Device support
//===----------------------------------------------------------------------===//

bool ShapeOp::canRunOn(DeviceKind kind) {
  // The shape is a host-side query: its result lives with the host.
  return kind == DeviceKind::CPU;
}

int64_t FusedOp::getGpuWorkspaceBytes() {
  Operation *producer = getProducer();
  return producer
             ? cast<DeviceSupportOpInterface>(producer).getGpuWorkspaceBytes()
             : 0;
}

bool FusedOp::canRunOn(DeviceKind kind) {
  if (kind == DeviceKind::GPU && !fitsGpuKernels(*this))
    return false;
  // The views are index arithmetic in the generated kernel, on either
  // device.
  return llvm::all_of(getBodyOps(), [&](Operation &op) {
    return isViewOp(&op) || cast<DeviceSupportOpInterface>(op).canRunOn(kind);
  });
}

bool DynamicSliceOp::isHostOperand(unsigned operandIndex) {
  // The offsets decide the copy's source address, which the host computes.
  return operandIndex == getOffsetsMutable().getOperandNumber();
}

#define GET_OP_CLASSES
#include "tandem/Dialect/Tandem/IR/TandemOps.cpp.inc"
