//===- TandemViews.cpp - view ops read as strided accesses ----------------===//
//
// A chain of views is composed over "atoms": each dimension of the view is a
// list of (size, stride) factors, outermost first. A reshape regroups the
// atoms of all dimensions into the new ones, splitting an atom where a new
// dimension ends inside it; a transpose permutes the dimensions; a slice
// narrows a dimension that is one atom; a broadcast adds atoms of stride 0.
// The chain is one strided access when each final dimension is one run of
// atoms. Atoms let a chain pass through a shape that is not strided itself,
// as attention's head split does: [S, B, H*D] -> [S, B*H, D] (B and H do not
// merge) -> transposed -> [B, H, S, D] (strided again).
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/Tandem/IR/TandemViews.h"

#include "tandem/Dialect/Tandem/IR/TandemOps.h"
#include "tandem/Dialect/Tandem/IR/TandemShapes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tandem;

bool tandem::isViewOp(Operation *op) {
  return isa_and_nonnull<ReshapeOp, TransposeOp, SliceOp, BroadcastToOp>(op);
}

bool tandem::isDataMovingView(Operation *op) {
  return isViewOp(op) && !isa<ReshapeOp>(op);
}

namespace {

/// `size` indices `stride` elements apart.
struct Atom {
  int64_t size, stride;
};

/// A dimension of the view: its atoms, outermost first, none of size 1.
using Dim = SmallVector<Atom, 2>;

/// Merges neighbouring atoms that are one run: the outer one's stride is
/// the inner one's extent.
void mergeRuns(SmallVectorImpl<Atom> &atoms) {
  SmallVector<Atom> merged;
  for (Atom atom : atoms) {
    if (!merged.empty() && merged.back().stride == atom.size * atom.stride)
      merged.back() = {merged.back().size * atom.size, atom.stride};
    else
      merged.push_back(atom);
  }
  atoms.assign(merged.begin(), merged.end());
}

int64_t sizeOf(const Dim &dim) {
  int64_t size = 1;
  for (Atom atom : dim)
    size *= atom.size;
  return size;
}

class ViewLayout {
public:
  explicit ViewLayout(ArrayRef<int64_t> shape) : dims(shape.size()) {
    int64_t stride = 1;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] != 1)
        dims[d].push_back({shape[d], stride});
      stride *= shape[d];
    }
  }

  LogicalResult reshape(ArrayRef<int64_t> shape) {
    SmallVector<Atom> atoms;
    for (Dim &dim : dims)
      atoms.append(dim.begin(), dim.end());
    mergeRuns(atoms);
    SmallVector<Dim> result(shape.size());
    // Innermost first: each new dimension takes whole atoms from the end,
    // and the outer part of one it ends inside stays for the next.
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      for (int64_t need = shape[d]; need > 1;) {
        if (atoms.empty())
          return failure();
        Atom &atom = atoms.back();
        if (atom.size <= need) {
          if (need % atom.size != 0)
            return failure();
          result[d].insert(result[d].begin(), atom);
          need /= atom.size;
          atoms.pop_back();
          continue;
        }
        if (atom.size % need != 0)
          return failure();
        result[d].insert(result[d].begin(), Atom{need, atom.stride});
        atom = {atom.size / need, atom.stride * need};
        need = 1;
      }
    }
    if (!atoms.empty())
      return failure();
    dims = std::move(result);
    return success();
  }

  void transpose(ArrayRef<int64_t> perm) {
    SmallVector<Dim> result;
    for (int64_t from : perm)
      result.push_back(dims[from]);
    dims = std::move(result);
  }

  LogicalResult slice(ArrayRef<int64_t> starts, ArrayRef<int64_t> limits,
                      ArrayRef<int64_t> steps) {
    for (auto [d, dim] : llvm::enumerate(dims)) {
      int64_t start = starts[d], limit = limits[d], step = steps[d];
      if (start == 0 && limit == sizeOf(dim) && step == 1)
        continue;
      // As the slice's verifier counts, without overflowing for any step.
      if (limit <= start)
        return failure();
      int64_t size = (limit - start - 1) / step + 1;
      if (dim.empty()) // one index: start is 0
        continue;
      mergeRuns(dim);
      if (dim.size() != 1)
        return failure(); // a window of a dimension that is not one run
      offset += start * dim.front().stride;
      if (size == 1)
        dim.clear();
      else
        dim.front() = {size, dim.front().stride * step};
    }
    return success();
  }

  void broadcastTo(ArrayRef<int64_t> shape) {
    SmallVector<Dim> result(shape.size());
    size_t lead = shape.size() - dims.size();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (d >= lead && !dims[d - lead].empty())
        result[d] = dims[d - lead];
      else if (shape[d] != 1)
        result[d].push_back({shape[d], 0});
    }
    dims = std::move(result);
  }

  /// Every dimension's runs, outermost first: a shape and strides whose
  /// row-major order is the view's.
  void refined(SmallVectorImpl<int64_t> &shape,
               SmallVectorImpl<int64_t> &strides) {
    for (Dim &dim : dims) {
      mergeRuns(dim);
      for (Atom atom : dim) {
        shape.push_back(atom.size);
        strides.push_back(atom.stride);
      }
    }
  }

  /// Each dimension's stride, if each is one run.
  FailureOr<SmallVector<int64_t>> strides() {
    SmallVector<int64_t> result;
    for (Dim &dim : dims) {
      mergeRuns(dim);
      if (dim.size() > 1)
        return failure();
      result.push_back(dim.empty() ? 0 : dim.front().stride);
    }
    return result;
  }

  int64_t offset = 0;

private:
  SmallVector<Dim> dims;
};

bool hasElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasStaticShape() && shaped.getNumElements() > 0;
}

} // namespace

FailureOr<StridedAccess> tandem::composeViews(Value base,
                                              ArrayRef<Operation *> views,
                                              ViewReading reading) {
  Value end = views.empty() ? base : views.back()->getResult(0);
  auto endType = dyn_cast<ShapedType>(end.getType());
  if (!endType || !endType.hasStaticShape())
    return failure();
  StridedAccess access;
  access.base = base;
  access.shape.assign(endType.getShape().begin(), endType.getShape().end());
  // Nothing is read of a view without elements: any strides do.
  if (endType.getNumElements() == 0) {
    access.strides.assign(access.shape.size(), 0);
    return access;
  }
  if (!hasElements(base.getType()))
    return failure();
  ViewLayout layout(cast<ShapedType>(base.getType()).getShape());
  for (Operation *view : views) {
    if (!hasElements(view->getResult(0).getType()))
      return failure();
    ArrayRef<int64_t> shape =
        cast<ShapedType>(view->getResult(0).getType()).getShape();
    LogicalResult applied =
        llvm::TypeSwitch<Operation *, LogicalResult>(view)
            .Case([&](ReshapeOp) { return layout.reshape(shape); })
            .Case([&](TransposeOp transpose) {
              layout.transpose(transpose.getPerm());
              return success();
            })
            .Case([&](SliceOp slice) {
              return layout.slice(slice.getStarts(), slice.getLimits(),
                                  slice.getEffectiveStrides());
            })
            .Case([&](BroadcastToOp) {
              layout.broadcastTo(shape);
              return success();
            })
            .Default([](Operation *) { return failure(); });
    if (failed(applied))
      return failure();
  }
  access.offset = layout.offset;
  if (reading == ViewReading::Refined) {
    access.shape.clear();
    layout.refined(access.shape, access.strides);
    return access;
  }
  FailureOr<SmallVector<int64_t>> strides = layout.strides();
  if (failed(strides))
    return failure();
  access.strides = std::move(*strides);
  return access;
}

SmallVector<Operation *>
tandem::viewChainOf(Value value, function_ref<bool(Operation *)> follow) {
  SmallVector<Operation *> chain;
  for (Operation *op = value.getDefiningOp(); isViewOp(op) && follow(op);
       op = op->getOperand(0).getDefiningOp())
    chain.push_back(op);
  std::reverse(chain.begin(), chain.end());
  return chain;
}
