//===- FusedKernels.cpp - generated CPU code of fused groups --------------===//
//
// A fused group's result is walked as rows: its shape, without dimensions of
// 1, is collapsed wherever every input either spans both neighbouring
// dimensions or is broadcast along both, so that along the last (collapsed)
// dimension each input is contiguous or a single repeated value. A chunk
// [begin, end) of the result's elements covers parts of some rows; per row
// the inputs' offsets are computed once, then a vector loop and a scalar
// tail evaluate the body. The body's ops compute exactly what the prebuilt
// CPU kernels compute (runtime/lib/cpu/Elementwise.cpp), in the same order
// of operations, so a fused model gives the bits an unfused one gives.
//
//===----------------------------------------------------------------------===//

#include "FusedKernels.h"

#include "tandem/Dialect/Tandem/IR/TandemViews.h"
#include "tandem/runtime/ModelImage.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// f32 lanes per vector: one AVX register.
constexpr int64_t kVectorWidth = 8;

/// A value the kernel loads: an input read by the body's elementwise ops,
/// directly or through view ops (TandemViews.h), per element of the result.
struct Leaf {
  Value value;    ///< the block argument, or the last view's result
  unsigned input; ///< which of the group's inputs it reads
  StridedAccess access; ///< where it reads the input's buffer

  /// Whether it is an i1 mask (a compare's, read by a select or a cast).
  bool isMask() const {
    return getElementTypeOrSelf(value.getType()).isInteger(1);
  }
  /// How its elements are stored: f32 as they are, a mask as the runtime's
  /// bytes (0 or 1).
  Type storageType() const {
    return isMask() ? IntegerType::get(value.getContext(), 8)
                    : getElementTypeOrSelf(value.getType());
  }
  /// Bytes of one stored element: the loads' alignment.
  unsigned storageBytes() const {
    return storageType().getIntOrFloatBitWidth() / 8;
  }
  /// `stored` (one element or a vector of them, as loaded) as the body
  /// reads it: a mask's bytes != 0, as the CPU kernels read a bool.
  Value fromStorage(OpBuilder &b, Location loc, Value stored) const {
    if (!isMask())
      return stored;
    Value zero = b.create<arith::ConstantOp>(
        loc, stored.getType(), b.getZeroAttr(stored.getType()));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, stored,
                                   zero);
  }
};

/// The result walked as rows: `dims` (the collapsed shape; the last is the
/// row) and, per leaf, its element stride along each (0: broadcast).
struct RowLayout {
  SmallVector<Leaf> leaves;
  SmallVector<int64_t> dims;
  SmallVector<SmallVector<int64_t>> strides;

  int64_t rowLength() const { return dims.back(); }
};

/// The values the body's elementwise ops (and the value the kernel writes)
/// read from the inputs: block arguments and the results of view chains on
/// them, each with its access read as `reading` says. The producer's and
/// consumer's own operands are not among them: they read them themselves.
SmallVector<Leaf> leavesOf(FusedOp fused, ViewReading reading) {
  llvm::SetVector<Value> values;
  auto isLeaf = [](Value value) {
    return isa<BlockArgument>(value) || isViewOp(value.getDefiningOp());
  };
  Operation *producer = fused.getProducer(), *consumer = fused.getConsumer();
  for (Operation &op : fused.getBodyOps())
    if (&op != producer && &op != consumer && !isViewOp(&op))
      for (Value operand : op.getOperands())
        if (isLeaf(operand))
          values.insert(operand);
  if (isLeaf(fused.getKernelValue()))
    values.insert(fused.getKernelValue());
  SmallVector<Leaf> leaves;
  for (Value value : values) {
    SmallVector<Operation *> chain =
        viewChainOf(value, [](Operation *) { return true; });
    auto base =
        cast<BlockArgument>(chain.empty() ? value : chain.front()->getOperand(0));
    // The verifier has checked that every chain is one strided access.
    leaves.push_back(
        {value, base.getArgNumber(), *composeViews(base, chain, reading)});
  }
  return leaves;
}

RowLayout layoutOf(FusedOp fused) {
  // What the kernel computes: the result's shape, or a reduction's input's.
  SmallVector<int64_t> shape(
      cast<ShapedType>(fused.getKernelValue().getType()).getShape());
  // A group of views alone reads its one leaf over a refinement of the
  // result's shape (ViewReading::Refined): the result is contiguous, so the
  // kernel may walk it in any refinement's row-major order.
  ViewReading reading = fused.isViewsOnly() ? ViewReading::Refined
                                              : ViewReading::PerDimension;
  RowLayout layout;
  layout.leaves = leavesOf(fused, reading);
  size_t numLeaves = layout.leaves.size();
  if (reading == ViewReading::Refined)
    shape = layout.leaves.front().access.shape;
  int64_t rank = shape.size();
  // Per leaf, the stride of each result dimension (its view's strides,
  // NumPy's right-aligned broadcasting: a stretched dimension has stride 0).
  SmallVector<SmallVector<int64_t>> full(numLeaves);
  for (auto [k, leaf] : llvm::enumerate(layout.leaves)) {
    const StridedAccess &access = leaf.access;
    full[k].assign(rank, 0);
    int64_t lead = rank - int64_t(access.shape.size());
    for (int64_t d = std::max<int64_t>(lead, 0); d < rank; ++d)
      if (access.shape[d - lead] != 1)
        full[k][d] = access.strides[d - lead];
  }
  layout.strides.resize(numLeaves);
  for (int64_t d = 0; d < rank; ++d) {
    if (shape[d] == 1)
      continue; // one index only: no stride matters
    // The previous (collapsed) dimension and this one are one when each
    // leaf steps over this one's extent from one index of the other to the
    // next (or is broadcast along both).
    bool merges = !layout.dims.empty();
    for (size_t k = 0; merges && k < numLeaves; ++k)
      merges = layout.strides[k].back() == full[k][d] * shape[d];
    if (merges) {
      layout.dims.back() *= shape[d];
      for (size_t k = 0; k < numLeaves; ++k)
        layout.strides[k].back() = full[k][d];
      continue;
    }
    layout.dims.push_back(shape[d]);
    for (size_t k = 0; k < numLeaves; ++k)
      layout.strides[k].push_back(full[k][d]);
  }
  if (layout.dims.empty()) { // every dimension is 1: one element
    layout.dims.push_back(1);
    for (auto &strides : layout.strides)
      strides.push_back(0);
  }
  return layout;
}

/// Each leaf's element offset at the start of row `row`, from the row's
/// index in the outer dimensions.
SmallVector<Value> rowOffsetsOf(OpBuilder &b, Location loc,
                                const RowLayout &layout, Value row) {
  auto index = [&](int64_t value) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(value));
  };
  SmallVector<Value> offsets;
  for (const Leaf &leaf : layout.leaves)
    offsets.push_back(index(leaf.access.offset));
  Value rest = row;
  for (int64_t d = int64_t(layout.dims.size()) - 2; d >= 0; --d) {
    Value size = index(layout.dims[d]);
    Value at = d == 0 ? rest : b.create<arith::RemSIOp>(loc, rest, size);
    for (size_t k = 0; k < offsets.size(); ++k)
      if (int64_t stride = layout.strides[k][d])
        offsets[k] = b.create<arith::AddIOp>(
            loc, offsets[k], b.create<arith::MulIOp>(loc, at, index(stride)));
    if (d > 0)
      rest = b.create<arith::DivSIOp>(loc, rest, size);
  }
  return offsets;
}

/// Emits the body of a fused group on one element or one vector of them.
class BodyEmitter {
public:
  BodyEmitter(OpBuilder &builder, Location loc, Type type)
      : b(builder), loc(loc), type(type) {}

  /// The value the kernel writes (FusedOp::getKernelValue), given the
  /// leaves' values (in the order of `leaves`) and, for a group that starts
  /// with a GEMM or convolution, its product's.
  Value emit(FusedOp fused, ArrayRef<Leaf> leaves, ValueRange leafValues,
             Value product) {
    IRMapping values;
    for (auto [leaf, value] : llvm::zip(leaves, leafValues))
      values.map(leaf.value, value);
    Operation *producer = fused.getProducer();
    if (producer)
      values.map(producer->getResult(0), product);
    // The kernel computes the consumer's input; the consumer runs after.
    Operation *consumer = fused.getConsumer();
    Value computed = fused.getKernelValue();
    for (Operation &op : fused.getBodyOps()) {
      // The views are in the leaves' offsets and strides.
      if (&op == producer || &op == consumer || isViewOp(&op))
        continue;
      SmallVector<Value> operands;
      for (Value operand : op.getOperands())
        operands.push_back(values.lookup(operand));
      values.map(op.getResult(0), emitOp(&op, operands));
    }
    return values.lookup(computed);
  }

private:
  Value constant(float value) {
    auto element = b.getF32FloatAttr(value);
    if (auto vector = dyn_cast<VectorType>(type))
      return b.create<arith::ConstantOp>(
          loc, vector, DenseElementsAttr::get(vector, ArrayRef<Attribute>{element}));
    return b.create<arith::ConstantOp>(loc, type, element);
  }
  Value cmp(arith::CmpFPredicate predicate, Value x, Value y) {
    return b.create<arith::CmpFOp>(loc, predicate, x, y);
  }
  Value select(Value condition, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, condition, x, y);
  }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(loc, x, y); }
  Value neg(Value x) { return b.create<arith::NegFOp>(loc, x); }
  Value exp(Value x) { return b.create<math::ExpOp>(loc, x); }
  Value sqrt(Value x) { return b.create<math::SqrtOp>(loc, x); }
  /// 1 / (1 + e^-x), the logistic function as the CPU kernels compute it.
  Value logisticDenominator(Value x) { return add(constant(1), exp(neg(x))); }

  /// NaN if either is NaN, else std::max (x < y ? y : x) or std::min
  /// (y < x ? y : x): the CPU kernel's nanAware.
  Value extremum(Value x, Value y, bool max) {
    Value pick = max ? select(cmp(arith::CmpFPredicate::OLT, x, y), y, x)
                     : select(cmp(arith::CmpFPredicate::OLT, y, x), y, x);
    return select(cmp(arith::CmpFPredicate::UNO, x, y),
                  constant(std::numeric_limits<float>::quiet_NaN()), pick);
  }

  /// The CPU kernel's fastTanh (Eigen's 13/6 rational approximation),
  /// operation for operation.
  Value tanh(Value v) {
    const float bound = 7.90531110763549805f;
    Value x = select(cmp(arith::CmpFPredicate::OLT, v, constant(-bound)),
                     constant(-bound),
                     select(cmp(arith::CmpFPredicate::OLT, constant(bound), v),
                            constant(bound), v));
    Value x2 = mul(x, x);
    auto horner = [&](std::initializer_list<float> coefficients) {
      auto it = coefficients.begin();
      Value p = constant(*it++);
      for (; it != coefficients.end(); ++it)
        p = add(mul(p, x2), constant(*it));
      return p;
    };
    Value p = horner({-2.76076847742355e-16f, 2.00018790482477e-13f,
                      -8.60467152213735e-11f, 5.12229709037114e-08f,
                      1.48572235717979e-05f, 6.37261928875436e-04f,
                      4.89352455891786e-03f});
    Value q = horner({1.19825839466702e-06f, 1.18534705686654e-04f,
                      2.26843463243900e-03f, 4.89352518554385e-03f});
    Value r = div(mul(x, p), q);
    Value tiny = cmp(arith::CmpFPredicate::OLT,
                     b.create<math::AbsFOp>(loc, v), constant(0.0004f));
    return select(tiny, v, r);
  }

  static arith::CmpFPredicate comparePredicateOf(ComparePredicate predicate) {
    switch (predicate) {
    case ComparePredicate::eq: return arith::CmpFPredicate::OEQ;
    case ComparePredicate::ne: return arith::CmpFPredicate::UNE;
    case ComparePredicate::lt: return arith::CmpFPredicate::OLT;
    case ComparePredicate::le: return arith::CmpFPredicate::OLE;
    case ComparePredicate::gt: return arith::CmpFPredicate::OGT;
    case ComparePredicate::ge: return arith::CmpFPredicate::OGE;
    }
    llvm_unreachable("a compare's predicate is one of six");
  }

  /// A cast between f32 and i1 as the CPU kernel's castElement: a mask
  /// reads as 0 or 1, a float as a mask is x != 0 (NaN too).
  Value castValue(CastOp cast, Value x) {
    bool fromMask = cast.getX().getType().getElementType().isInteger(1);
    bool toMask = cast.getResult().getType().getElementType().isInteger(1);
    if (fromMask == toMask)
      return x;
    if (fromMask)
      return b.create<arith::UIToFPOp>(loc, type, x);
    return cmp(arith::CmpFPredicate::UNE, x, constant(0));
  }

  Value emitOp(Operation *op, ArrayRef<Value> x) {
    return llvm::TypeSwitch<Operation *, Value>(op)
        .Case([&](AddOp) { return add(x[0], x[1]); })
        .Case([&](SubOp) { return b.create<arith::SubFOp>(loc, x[0], x[1]); })
        .Case([&](MulOp) { return mul(x[0], x[1]); })
        .Case([&](DivOp) { return div(x[0], x[1]); })
        .Case([&](MaximumOp) { return extremum(x[0], x[1], true); })
        .Case([&](MinimumOp) { return extremum(x[0], x[1], false); })
        .Case([&](PowOp) { return b.create<math::PowFOp>(loc, x[0], x[1]); })
        .Case([&](NegOp) { return neg(x[0]); })
        .Case([&](AbsOp) { return b.create<math::AbsFOp>(loc, x[0]); })
        .Case([&](ExpOp) { return exp(x[0]); })
        .Case([&](LogOp) { return b.create<math::LogOp>(loc, x[0]); })
        .Case([&](SqrtOp) { return sqrt(x[0]); })
        .Case([&](RsqrtOp) { return div(constant(1), sqrt(x[0])); })
        .Case([&](TanhOp) { return tanh(x[0]); })
        .Case([&](SigmoidOp) {
          return div(constant(1), logisticDenominator(x[0]));
        })
        .Case([&](SiluOp) { return div(x[0], logisticDenominator(x[0])); })
        .Case([&](ReluOp) {
          // v > 0 or NaN keeps v (reluOf).
          return select(cmp(arith::CmpFPredicate::UGT, x[0], constant(0)),
                        x[0], constant(0));
        })
        .Case([&](GeluOp) {
          Value erf = b.create<math::ErfOp>(
              loc, mul(x[0], constant(0.70710678118654752f)));
          return mul(mul(constant(0.5f), x[0]), add(constant(1), erf));
        })
        .Case([&](ErfOp) { return b.create<math::ErfOp>(loc, x[0]); })
        .Case([&](FloorOp) { return b.create<math::FloorOp>(loc, x[0]); })
        .Case([&](CeilOp) { return b.create<math::CeilOp>(loc, x[0]); })
        // nearbyint in the default rounding mode: halves to even.
        .Case([&](RoundOp) { return b.create<math::RoundEvenOp>(loc, x[0]); })
        .Case([&](TruncOp) { return b.create<math::TruncOp>(loc, x[0]); })
        // C++'s comparisons of floats (comparePredicate): NaN is unequal to
        // everything, itself included, and unordered for the rest.
        .Case([&](CompareOp compare) {
          return cmp(comparePredicateOf(compare.getPredicate()), x[0], x[1]);
        })
        .Case([&](SelectOp) { return select(x[0], x[1], x[2]); })
        .Case([&](CastOp cast) { return castValue(cast, x[0]); })
        .Case([&](FillOp fill) {
          return constant(
              float(cast<FloatAttr>(fill.getValue()).getValueAsDouble()));
        })
        .Default([&](Operation *) -> Value {
          llvm_unreachable("the fused op's verifier admits fusible ops only");
        });
  }

  OpBuilder &b;
  Location loc;
  Type type;
};

/// Whether `fused` copies a transposed block: a group of views alone whose
/// rows read their leaf strided while the rows next to each other are next
/// to each other in it (the second-to-last dimension has stride 1, and
/// whole tiles of kVectorWidth rows fit in it). Row by row, each row would
/// load one element per cache line (all lines in one cache set where the
/// stride is a multiple of 4 KiB); the tiles load rows of the source whole.
bool isTransposeTiled(FusedOp fused, const RowLayout &layout) {
  if (!fused.isViewsOnly() || layout.leaves.size() != 1 ||
      layout.dims.size() < 2 || layout.rowLength() < kVectorWidth)
    return false;
  ArrayRef<int64_t> strides = layout.strides.front();
  int64_t rank = layout.dims.size();
  return strides[rank - 1] != 1 && strides[rank - 2] == 1 &&
         layout.dims[rank - 2] % kVectorWidth == 0;
}

/// The lanes of `lhs` and `rhs` (indices 0-7 and 8-15) that `mask` picks.
Value shuffle(OpBuilder &b, Location loc, Value lhs, Value rhs,
              ArrayRef<int64_t> mask) {
  return b.create<vector::ShuffleOp>(loc, lhs, rhs, mask);
}

/// The 8 x 8 transpose of `columns` (vector i holds column i of 8 rows):
/// the rows, in three rounds of shuffles that map onto AVX's unpack,
/// shufps and vperm2f128.
SmallVector<Value> transpose8x8(OpBuilder &b, Location loc,
                                ArrayRef<Value> columns) {
  static_assert(kVectorWidth == 8, "the shuffles below are for 8 lanes");
  SmallVector<Value> pairs, quads, rows(8);
  for (int k = 0; k < 8; k += 2) {
    pairs.push_back(shuffle(b, loc, columns[k], columns[k + 1],
                            {0, 8, 1, 9, 4, 12, 5, 13}));
    pairs.push_back(shuffle(b, loc, columns[k], columns[k + 1],
                            {2, 10, 3, 11, 6, 14, 7, 15}));
  }
  // pairs: (0,1) low, (0,1) high, (2,3) low, (2,3) high, then 4-7 alike.
  for (int half = 0; half < 8; half += 4)
    for (int k = 0; k < 2; ++k) {
      Value lhs = pairs[half + k], rhs = pairs[half + 2 + k];
      quads.push_back(shuffle(b, loc, lhs, rhs, {0, 1, 8, 9, 4, 5, 12, 13}));
      quads.push_back(shuffle(b, loc, lhs, rhs, {2, 3, 10, 11, 6, 7, 14, 15}));
    }
  // quads[k] holds rows k and k + 4 of columns 0-3, quads[4 + k] of 4-7.
  for (int k = 0; k < 4; ++k) {
    rows[k] =
        shuffle(b, loc, quads[k], quads[4 + k], {0, 1, 2, 3, 8, 9, 10, 11});
    rows[k + 4] =
        shuffle(b, loc, quads[k], quads[4 + k], {4, 5, 6, 7, 12, 13, 14, 15});
  }
  return rows;
}

/// Copies rows [tilesBegin, tilesEnd) (whole tiles of kVectorWidth) of a
/// transposed block (isTransposeTiled): per tile and 8 columns, 8 loads of
/// 8 source elements side by side, a transpose in registers and 8 stores;
/// the columns past the last multiple of 8 element by element.
void emitTransposeTiles(OpBuilder &b, Location loc, const RowLayout &layout,
                        Value source, Value result, Value tilesBegin,
                        Value tilesEnd) {
  Type f32 = b.getF32Type();
  auto vector = VectorType::get({kVectorWidth}, f32);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto index = [&](int64_t value) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(value));
  };
  auto add = [&](Value x, Value y) -> Value {
    return b.create<arith::AddIOp>(loc, x, y);
  };
  auto mul = [&](Value x, int64_t y) -> Value {
    return b.create<arith::MulIOp>(loc, x, index(y));
  };
  auto at = [&](Value base, Value offset) -> Value {
    return b.create<LLVM::GEPOp>(loc, ptr, f32, base, ValueRange{offset});
  };
  int64_t length = layout.rowLength(), stride = layout.strides.front().back();
  int64_t wholeColumns = length / kVectorWidth * kVectorWidth;
  auto tiles =
      b.create<scf::ForOp>(loc, tilesBegin, tilesEnd, index(kVectorWidth));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tiles.getBody());
  Value row = tiles.getInductionVar();
  // Row row + r of the tile reads from `offset` + r: the rows are next to
  // each other in the source.
  Value offset = rowOffsetsOf(b, loc, layout, row).front();
  Value rowStart = mul(row, length);
  b.create<scf::ForOp>(
      loc, index(0), index(wholeColumns), index(kVectorWidth), ValueRange{},
      [&](OpBuilder &builder, Location, Value column, ValueRange) {
        OpBuilder::InsertionGuard inBody(b);
        b.setInsertionPoint(builder.getInsertionBlock(),
                            builder.getInsertionPoint());
        SmallVector<Value> columns;
        for (int64_t c = 0; c < kVectorWidth; ++c)
          columns.push_back(b.create<LLVM::LoadOp>(
              loc, vector,
              at(source, add(offset, mul(add(column, index(c)), stride))),
              /*alignment=*/4));
        SmallVector<Value> rows = transpose8x8(b, loc, columns);
        for (int64_t r = 0; r < kVectorWidth; ++r)
          b.create<LLVM::StoreOp>(
              loc, rows[r],
              at(result, add(add(rowStart, mul(index(r), length)), column)),
              /*alignment=*/4);
        b.create<scf::YieldOp>(loc);
      });
  b.create<scf::ForOp>(
      loc, index(wholeColumns), index(length), index(1), ValueRange{},
      [&](OpBuilder &builder, Location, Value column, ValueRange) {
        OpBuilder::InsertionGuard inBody(b);
        b.setInsertionPoint(builder.getInsertionBlock(),
                            builder.getInsertionPoint());
        for (int64_t r = 0; r < kVectorWidth; ++r) {
          Value value = b.create<LLVM::LoadOp>(
              loc, f32,
              at(source, add(add(offset, index(r)), mul(column, stride))),
              /*alignment=*/4);
          b.create<LLVM::StoreOp>(
              loc, value,
              at(result, add(add(rowStart, mul(index(r), length)), column)),
              /*alignment=*/4);
        }
        b.create<scf::YieldOp>(loc);
      });
}

/// Threads that fold one output of a group that ends in a reduction on the
/// GPU (the runtime launches that many an output): a warp, combined by
/// shuffles.
constexpr int64_t kWarpSize = ::tandem::image::kFusedReductionThreads;

/// How a group's reduction folds on the GPU, as the CPU's reduction does: a
/// sum (and a mean) in f64, a max or a min in f32 with NaN tracked beside it
/// (NaN wins).
class GpuRowFold {
public:
  GpuRowFold(OpBuilder &b, Location loc, Operation *reduction)
      : b(b), loc(loc), sum(isa<ReduceSumOp, ReduceMeanOp>(reduction)),
        max(isa<ReduceMaxOp>(reduction)),
        mean(isa<ReduceMeanOp>(reduction)) {}

  /// The fold's starting values: (accumulator, NaN seen).
  SmallVector<Value> identity() {
    Value acc =
        sum ? constant(b.getF64FloatAttr(0.0))
            : constant(b.getF32FloatAttr(
                  max ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity()));
    return {acc, constant(b.getBoolAttr(false))};
  }

  /// `state` with the f32 `value` folded in.
  SmallVector<Value> add(ValueRange state, Value value) {
    if (sum)
      return {b.create<arith::AddFOp>(
                  loc, state[0],
                  b.create<arith::ExtFOp>(loc, b.getF64Type(), value)),
              state[1]};
    Value nan = b.create<arith::OrIOp>(
        loc, state[1],
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, value, value));
    return {pick(state[0], value), nan};
  }

  /// Two partial folds as one (a lane's and its shuffle partner's).
  SmallVector<Value> combine(ValueRange state, ValueRange other) {
    return {sum ? b.create<arith::AddFOp>(loc, state[0], other[0]).getResult()
                : pick(state[0], other[0]),
            b.create<arith::OrIOp>(loc, state[1], other[1])};
  }

  /// The output of `length` elements' fold, in f32.
  Value finish(ValueRange state, int64_t length) {
    if (!sum)
      return b.create<arith::SelectOp>(
          loc, state[1],
          constant(b.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN())),
          state[0]);
    Value acc = state[0];
    if (mean)
      acc = b.create<arith::DivFOp>(loc, acc,
                                    constant(b.getF64FloatAttr(double(length))));
    return b.create<arith::TruncFOp>(loc, b.getF32Type(), acc);
  }

private:
  Value constant(TypedAttr value) {
    return b.create<arith::ConstantOp>(loc, value);
  }
  /// The max or min of two f32s, NaN aside (it is tracked apart).
  Value pick(Value acc, Value value) {
    Value wins = b.create<arith::CmpFOp>(
        loc, max ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
        value, acc);
    return b.create<arith::SelectOp>(loc, wins, value, acc);
  }

  OpBuilder &b;
  Location loc;
  bool sum, max, mean;
};

/// `value` (f32, f64 or i1) from the lane `offset` away in a butterfly, on
/// every lane of a full warp (64-bit values as two 32-bit halves).
Value shuffleXor(OpBuilder &b, Location loc, Value value, int64_t offset) {
  Type i32 = b.getI32Type();
  auto constant = [&](int32_t v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(v));
  };
  Value all = constant(-1), by = constant(int32_t(offset)),
        clamp = constant(kWarpSize - 1);
  auto shuffle = [&](Value word) -> Value {
    return b.create<NVVM::ShflOp>(loc, word.getType(), all, word, by, clamp,
                                  NVVM::ShflKind::bfly, UnitAttr());
  };
  Type type = value.getType();
  if (type.isF32())
    return shuffle(value);
  if (type.isInteger(1))
    return b.create<arith::TruncIOp>(
        loc, type, shuffle(b.create<arith::ExtUIOp>(loc, i32, value)));
  auto halves = VectorType::get({2}, i32);
  Value split = b.create<LLVM::BitcastOp>(loc, halves, value);
  Value joined = b.create<LLVM::PoisonOp>(loc, halves);
  for (int64_t k = 0; k < 2; ++k) {
    Value at = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(k));
    joined = b.create<LLVM::InsertElementOp>(
        loc, joined,
        shuffle(b.create<LLVM::ExtractElementOp>(loc, split, at)), at);
  }
  return b.create<LLVM::BitcastOp>(loc, type, joined);
}

} // namespace

void mlir::tandem::generateFusedKernel(ModuleOp module, FusedOp fused,
                                 StringRef name) {
  MLIRContext *context = module.getContext();
  Location loc = fused.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  auto vector = VectorType::get({kVectorWidth}, f32);
  auto kernel = b.create<func::FuncOp>(
      loc, name, b.getFunctionType({ptr, ptr, i64, i64}, {}));
  Block *entry = kernel.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value operandArray = entry->getArgument(0), result = entry->getArgument(1),
        begin = entry->getArgument(2), end = entry->getArgument(3);

  auto index = [&](int64_t value) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(value));
  };
  auto elementAt = [&](Value base, Value offset, Type element) -> Value {
    return b.create<LLVM::GEPOp>(loc, ptr, element, base, ValueRange{offset});
  };
  RowLayout layout = layoutOf(fused);
  size_t numInputs = fused.getInputs().size();
  SmallVector<Value> bases;
  for (size_t k = 0; k < numInputs; ++k) {
    Value slot = b.create<LLVM::GEPOp>(loc, ptr, ptr, operandArray,
                                       ArrayRef<LLVM::GEPArg>{int32_t(k)});
    bases.push_back(b.create<LLVM::LoadOp>(loc, ptr, slot));
  }

  // Rows [begin / C, ceil(end / C)).
  Value rowLength = index(layout.rowLength());
  Value firstRow = b.create<arith::DivSIOp>(loc, begin, rowLength);
  Value rowsEnd = b.create<arith::DivSIOp>(
      loc, b.create<arith::AddIOp>(loc, end, index(layout.rowLength() - 1)),
      rowLength);
  // Evaluates the body over row `row`'s part of [begin, end).
  auto emitRow = [&](Value row) {
    Value rowStart = b.create<arith::MulIOp>(loc, row, rowLength);
    Value first = b.create<arith::MaxSIOp>(
        loc, b.create<arith::SubIOp>(loc, begin, rowStart), index(0));
    Value last = b.create<arith::MinSIOp>(
        loc, b.create<arith::SubIOp>(loc, end, rowStart), rowLength);

    SmallVector<Value> rowOffsets = rowOffsetsOf(b, loc, layout, row);
    // A leaf broadcast along the row is one value for the whole row (a
    // mask's byte read as a mask once).
    size_t numLeaves = layout.leaves.size();
    SmallVector<Value> rowValues(numLeaves);
    for (size_t k = 0; k < numLeaves; ++k) {
      const Leaf &leaf = layout.leaves[k];
      if (layout.strides[k].back() == 0)
        rowValues[k] = leaf.fromStorage(
            b, loc,
            b.create<LLVM::LoadOp>(
                loc, leaf.storageType(),
                elementAt(bases[leaf.input], rowOffsets[k], leaf.storageType()),
                leaf.storageBytes()));
    }

    // Evaluates the body at [column, column + width) of the row.
    auto emitColumns = [&](OpBuilder &builder, Value column, Type type) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(builder.getInsertionBlock(),
                          builder.getInsertionPoint());
      SmallVector<Value> values;
      for (size_t k = 0; k < numLeaves; ++k) {
        if (Value row = rowValues[k]) {
          values.push_back(
              type == f32
                  ? row
                  : b.create<vector::SplatOp>(
                        loc, VectorType::get({kVectorWidth}, row.getType()),
                        row));
          continue;
        }
        const Leaf &leaf = layout.leaves[k];
        Type stored = leaf.storageType();
        // One element, or a vector of them where `type` is one.
        Type loaded = type == f32 ? stored
                                  : VectorType::get({kVectorWidth}, stored);
        Value base = bases[leaf.input];
        int64_t stride = layout.strides[k].back();
        auto load = [&](Type lanes, Value at) -> Value {
          return b.create<LLVM::LoadOp>(
              loc, lanes,
              elementAt(base,
                        b.create<arith::AddIOp>(
                            loc, rowOffsets[k],
                            b.create<arith::MulIOp>(loc, at, index(stride))),
                        stored),
              leaf.storageBytes());
        };
        if (type == f32 || stride == 1) {
          values.push_back(leaf.fromStorage(b, loc, load(loaded, column)));
          continue;
        }
        // A leaf strided along the row (a transposed view): one lane at a
        // time.
        Value lanes = b.create<LLVM::PoisonOp>(loc, loaded);
        for (int64_t lane = 0; lane < kVectorWidth; ++lane)
          lanes = b.create<LLVM::InsertElementOp>(
              loc, lanes,
              load(stored, b.create<arith::AddIOp>(loc, column, index(lane))),
              index(lane));
        values.push_back(leaf.fromStorage(b, loc, lanes));
      }
      // The product of a GEMM or convolution the group starts with is in the
      // result buffer already: the epilogue runs in place.
      Value at = elementAt(
          result, b.create<arith::AddIOp>(loc, rowStart, column), f32);
      Value product;
      if (fused.getProducer())
        product = b.create<LLVM::LoadOp>(loc, type, at, /*alignment=*/4);
      Value value =
          BodyEmitter(b, loc, type).emit(fused, layout.leaves, values, product);
      b.create<LLVM::StoreOp>(loc, value, at, /*alignment=*/4);
    };
    // Whole vectors, then the rest one by one.
    Value vectorEnd = b.create<arith::AddIOp>(
        loc, first,
        b.create<arith::MulIOp>(
            loc,
            b.create<arith::DivSIOp>(loc,
                                     b.create<arith::SubIOp>(loc, last, first),
                                     index(kVectorWidth)),
            index(kVectorWidth)));
    b.create<scf::ForOp>(
        loc, first, vectorEnd, index(kVectorWidth), ValueRange{},
        [&](OpBuilder &builder, Location, Value column, ValueRange) {
          emitColumns(builder, column, vector);
          builder.create<scf::YieldOp>(loc);
        });
    b.create<scf::ForOp>(
        loc, vectorEnd, last, index(1), ValueRange{},
        [&](OpBuilder &builder, Location, Value column, ValueRange) {
          emitColumns(builder, column, f32);
          builder.create<scf::YieldOp>(loc);
        });
  };
  auto emitRowLoop = [&](Value from, Value to) {
    auto rows = b.create<scf::ForOp>(loc, from, to, index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rows.getBody());
    emitRow(rows.getInductionVar());
  };
  if (!isTransposeTiled(fused, layout)) {
    emitRowLoop(firstRow, rowsEnd);
    b.create<func::ReturnOp>(loc);
    return;
  }
  // Whole tiles of kVectorWidth rows inside [begin, end), the rows before
  // and after them one at a time.
  Value tile = index(kVectorWidth);
  Value wholeBegin = b.create<arith::DivSIOp>(
      loc, b.create<arith::AddIOp>(loc, begin, index(layout.rowLength() - 1)),
      rowLength);
  Value wholeEnd = b.create<arith::DivSIOp>(loc, end, rowLength);
  Value tilesBegin = b.create<arith::MinSIOp>(
      loc,
      b.create<arith::MulIOp>(
          loc,
          b.create<arith::DivSIOp>(
              loc,
              b.create<arith::AddIOp>(loc, wholeBegin, index(kVectorWidth - 1)),
              tile),
          tile),
      rowsEnd);
  Value tilesEnd = b.create<arith::MaxSIOp>(
      loc, tilesBegin,
      b.create<arith::MulIOp>(
          loc, b.create<arith::DivSIOp>(loc, wholeEnd, tile), tile));
  emitRowLoop(firstRow, tilesBegin);
  emitTransposeTiles(b, loc, layout, bases[layout.leaves.front().input], result,
                     tilesBegin, tilesEnd);
  emitRowLoop(tilesEnd, rowsEnd);
  b.create<func::ReturnOp>(loc);
}

void mlir::tandem::generateFusedGpuKernel(ModuleOp module, FusedOp fused,
                                    StringRef name) {
  MLIRContext *context = module.getContext();
  Location loc = fused.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  size_t numInputs = fused.getInputs().size();
  SmallVector<Type> arguments(numInputs + 1, ptr);
  arguments.push_back(i64);
  auto kernel =
      b.create<func::FuncOp>(loc, name, b.getFunctionType(arguments, {}));
  kernel->setAttr(kGpuKernelAttrName, b.getUnitAttr());
  Block *entry = kernel.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value result = entry->getArgument(numInputs),
        count = entry->getArgument(numInputs + 1);
  auto index = [&](int64_t value) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(value));
  };
  auto wide = [&](Value value) -> Value {
    return b.create<arith::ExtUIOp>(loc, i64, value);
  };
  Type i32 = b.getI32Type();
  // A grid-stride loop: any grid covers every element.
  Value threads = wide(b.create<NVVM::BlockDimXOp>(loc, i32));
  Value first = b.create<arith::AddIOp>(
      loc,
      b.create<arith::MulIOp>(loc, wide(b.create<NVVM::BlockIdXOp>(loc, i32)),
                              threads),
      wide(b.create<NVVM::ThreadIdXOp>(loc, i32)));
  Value stride = b.create<arith::MulIOp>(
      loc, wide(b.create<NVVM::GridDimXOp>(loc, i32)), threads);
  RowLayout layout = layoutOf(fused);
  // The value the body computes at `element` of the kernel's values (a
  // producer's product is in the result already, at the same element).
  auto valueAt = [&](Value element) -> Value {
    Value row =
        b.create<arith::DivSIOp>(loc, element, index(layout.rowLength()));
    Value column = b.create<arith::SubIOp>(
        loc, element,
        b.create<arith::MulIOp>(loc, row, index(layout.rowLength())));
    SmallVector<Value> offsets = rowOffsetsOf(b, loc, layout, row);
    SmallVector<Value> values;
    for (auto [k, leaf] : llvm::enumerate(layout.leaves)) {
      Value offset = offsets[k];
      if (int64_t stride = layout.strides[k].back())
        offset = b.create<arith::AddIOp>(
            loc, offset, b.create<arith::MulIOp>(loc, column, index(stride)));
      Value address = b.create<LLVM::GEPOp>(loc, ptr, leaf.storageType(),
                                            entry->getArgument(leaf.input),
                                            ValueRange{offset});
      values.push_back(leaf.fromStorage(
          b, loc,
          b.create<LLVM::LoadOp>(loc, leaf.storageType(), address,
                                 leaf.storageBytes())));
    }
    Value product;
    if (fused.getProducer())
      product = b.create<LLVM::LoadOp>(
          loc, f32,
          b.create<LLVM::GEPOp>(loc, ptr, f32, result, ValueRange{element}),
          4);
    return BodyEmitter(b, loc, f32).emit(fused, layout.leaves, values,
                                         product);
  };
  Operation *consumer = fused.getConsumer();
  int64_t length = consumer ? rowReductionLength(consumer) : 0;
  if (!length) {
    auto elements = b.create<scf::ForOp>(loc, first, count, stride);
    b.setInsertionPointToStart(elements.getBody());
    Value element = elements.getInductionVar();
    b.create<LLVM::StoreOp>(
        loc, valueAt(element),
        b.create<LLVM::GEPOp>(loc, ptr, f32, result, ValueRange{element}), 4);
    b.setInsertionPointAfter(elements);
    b.create<func::ReturnOp>(loc);
    return;
  }
  // A group that ends in a reduction: a warp per output (the runtime
  // launches 32 threads an output, in blocks of whole warps), each lane
  // folding every 32nd element of the row, the lanes' folds then combined
  // by a butterfly of shuffles; lane 0 writes the output. The loop over
  // outputs steps by warps, so a warp's lanes stay together for the
  // shuffles.
  GpuRowFold fold(b, loc, consumer);
  Value warpSize = index(kWarpSize);
  Value lane = b.create<arith::RemUIOp>(
      loc, wide(b.create<NVVM::ThreadIdXOp>(loc, i32)), warpSize);
  auto outputs = b.create<scf::ForOp>(
      loc, b.create<arith::DivUIOp>(loc, first, warpSize), count,
      b.create<arith::DivUIOp>(loc, stride, warpSize));
  b.setInsertionPointToStart(outputs.getBody());
  Value output = outputs.getInductionVar();
  Value rowStart = b.create<arith::MulIOp>(loc, output, index(length));
  auto lanes = b.create<scf::ForOp>(
      loc, lane, index(length), warpSize, fold.identity(),
      [&](OpBuilder &builder, Location, Value column, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(builder.getInsertionBlock(),
                            builder.getInsertionPoint());
        b.create<scf::YieldOp>(
            loc, fold.add(state, valueAt(b.create<arith::AddIOp>(
                                     loc, rowStart, column))));
      });
  SmallVector<Value> state(lanes.getResults());
  for (int64_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    SmallVector<Value> other;
    for (Value part : state)
      other.push_back(shuffleXor(b, loc, part, offset));
    state = fold.combine(state, other);
  }
  Value first0 = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, lane,
                                         index(0));
  Value outputValue = fold.finish(state, length);
  b.create<scf::IfOp>(loc, first0, [&](OpBuilder &builder, Location) {
    builder.create<LLVM::StoreOp>(
        loc, outputValue,
        builder.create<LLVM::GEPOp>(loc, ptr, f32, result, ValueRange{output}),
        4);
    builder.create<scf::YieldOp>(loc);
  });
  b.setInsertionPointAfter(outputs);
  b.create<func::ReturnOp>(loc);
}

/// glibc's libmvec names (the x86-64 vector function ABI: 'd' is AVX2, N8
/// the lanes, v one vector argument) of exp, log and erf on 8 floats.
static StringRef libmvecAvx2Name(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](math::ExpOp) { return "_ZGVdN8v_expf"; })
      .Case([](math::LogOp) { return "_ZGVdN8v_logf"; })
      .Case([](math::ErfOp) { return "_ZGVdN8v_erff"; })
      .Default([](Operation *) { return StringRef(); });
}

/// Replaces exp, log and erf on vector<8xf32> by calls of libmvec's AVX2
/// variants (one call for 8 lanes instead of 8 libm calls).
static void callLibmvecAvx2(ModuleOp module) {
  auto lanes = VectorType::get({8}, Float32Type::get(module.getContext()));
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (!libmvecAvx2Name(op).empty() && op->getResultTypes() == TypeRange{lanes})
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    StringRef name = libmvecAvx2Name(op);
    OpBuilder b(module.getBodyRegion());
    if (!module.lookupSymbol(name))
      b.create<func::FuncOp>(module.getLoc(), name,
                             b.getFunctionType({lanes}, {lanes}))
          .setPrivate();
    b.setInsertionPoint(op);
    Value call = b.create<func::CallOp>(op->getLoc(), name, TypeRange{lanes},
                                        op->getOperands())
                     .getResult(0);
    op->getResult(0).replaceAllUsesWith(call);
    op->erase();
  }
}

LogicalResult mlir::tandem::lowerGeneratedKernelsToLLVM(ModuleOp module,
                                                  VectorMath vectorMath) {
  MLIRContext *context = module.getContext();
  if (vectorMath == VectorMath::LibmvecAvx2)
    callLibmvecAvx2(module);
  {
    // erf has no LLVM intrinsic: a call of libm's erff per lane, as the
    // prebuilt kernels make. (The other math ops become LLVM intrinsics.)
    SmallVector<Operation *> erfs;
    module.walk([&](math::ErfOp erf) { erfs.push_back(erf); });
    RewritePatternSet patterns(context);
    populateMathToLibmConversionPatterns(patterns);
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    bool changed = false;
    if (!erfs.empty() &&
        failed(applyOpPatternsAndFold(erfs, std::move(patterns), config,
                                      &changed)))
      return module.emitError("could not lower the generated kernels' erf "
                              "to libm calls");
  }
  LLVMConversionTarget target(*context);
  target.addLegalOp<ModuleOp>();
  target.addLegalDialect<NVVM::NVVMDialect>();
  LLVMTypeConverter converter(context);
  RewritePatternSet patterns(context);
  populateSCFToControlFlowConversionPatterns(patterns);
  arith::populateArithToLLVMConversionPatterns(converter, patterns);
  populateMathToLLVMConversionPatterns(converter, patterns);
  populateVectorToLLVMConversionPatterns(converter, patterns);
  cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
  populateFuncToLLVMConversionPatterns(converter, patterns);
  // func.func's discardable attributes stay on the llvm.func.
  if (failed(applyFullConversion(module, target, std::move(patterns))))
    return module.emitError("could not lower the generated kernels to the "
                            "LLVM dialect");
  return success();
}
