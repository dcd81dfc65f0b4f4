"""Reductions: sum, mean, variance, min/max, any/all, the 2-norm, argmax,
cumsum, topk."""
import math

from .. import mlir
from ..mlir import TensorType
from . import aten, lowers, normalize_axis

def reduction_axes(x, dims):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(x.type.rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({normalize_axis(d, x.type.rank) for d in dims})


def reduce(cx, name, x, dims, keepdim, out):
    axes = reduction_axes(x, dims)
    if not axes:  # a rank-0 tensor: nothing to reduce
        return cx.cast(x, out.element)
    if out.element == "i1":
        raise cx.error("a min/max/sum of a boolean tensor is not supported")
    return cx.emit(name, [cx.cast(x, out.element)], out,
                   {"axes": mlir.i64_array(axes), "keepdims": mlir.boolean(keepdim)})


@lowers(aten.sum.dim_IntList, aten.sum.default)
def _sum(cx, x, dims=None, keepdim=False, dtype=None):
    return reduce(cx, "tandem.reduce_sum", x, dims, keepdim, cx.result_type())


@lowers(aten.mean.dim, aten.mean.default)
def _mean(cx, x, dims=None, keepdim=False, dtype=None):
    return reduce(cx, "tandem.reduce_mean", x, dims, keepdim, cx.result_type())


def variance(cx, x, dims, correction, keepdim, out):
    """Σ(x − mean)² / (n − correction) over `dims`; also the mean."""
    axes = reduction_axes(x, dims)
    count = math.prod(x.type.shape[a] for a in axes)
    correction = 1 if correction is None else correction
    x = cx.cast(x, out.element)
    kept = tuple(1 if k in axes else d for k, d in enumerate(x.type.shape))
    mean = reduce(cx, "tandem.reduce_mean", x, axes, True, x.type.with_shape(kept))
    deviation = cx.emit("tandem.sub", [x, mean], x.type)
    squares = cx.emit("tandem.mul", [deviation, deviation], x.type)
    total = reduce(cx, "tandem.reduce_sum", squares, axes, keepdim, out)
    var = cx.emit("tandem.div", [total, cx.scalar(max(count - correction, 0),
                                                  out.element)], out)
    return var, cx.reshape(mean, out.shape)


@lowers(aten.var.correction, aten.var.dim)
def _var(cx, x, dims=None, *rest, correction=None, keepdim=False):
    if cx.node.target == aten.var.dim:  # (x, dims, unbiased, keepdim)
        unbiased = rest[0] if rest else True
        keepdim = rest[1] if len(rest) > 1 else keepdim
        correction = 1 if unbiased else 0
    return variance(cx, x, dims, correction, keepdim, cx.result_type())[0]


@lowers(aten.var_mean.correction)
def _var_mean(cx, x, dims=None, correction=None, keepdim=False):
    return list(variance(cx, x, dims, correction, keepdim, cx.result_type(0)))


@lowers(aten.amax.default)
def _amax(cx, x, dims=(), keepdim=False):
    return reduce(cx, "tandem.reduce_max", x, dims, keepdim, cx.result_type())


@lowers(aten.amin.default)
def _amin(cx, x, dims=(), keepdim=False):
    return reduce(cx, "tandem.reduce_min", x, dims, keepdim, cx.result_type())


@lowers(aten.max.default)
def _max_all(cx, x):
    return reduce(cx, "tandem.reduce_max", x, None, False, cx.result_type())


@lowers(aten.min.default)
def _min_all(cx, x):
    return reduce(cx, "tandem.reduce_min", x, None, False, cx.result_type())


def any_or_all(cx, x, dims, keepdim, name):
    """any/all of a mask as max/min over its 0/1 values."""
    out = cx.result_type()
    numbers = cx.cast(x, "f32")
    reduced = reduce(cx, name, numbers, dims, keepdim, out.with_element("f32"))
    return cx.emit("tandem.compare", [reduced, cx.scalar(0.0, "f32")], out,
                   {"predicate": "#tandem.predicate<ne>"})


@lowers(aten.any.dim, aten.any.dims, aten.any.default)
def _any(cx, x, dims=None, keepdim=False):
    return any_or_all(cx, x, dims, keepdim, "tandem.reduce_max")


@lowers(aten.all.dim, aten.all.dims, aten.all.default)
def _all(cx, x, dims=None, keepdim=False):
    return any_or_all(cx, x, dims, keepdim, "tandem.reduce_min")


@lowers(aten.linalg_vector_norm.default)
def _vector_norm(cx, x, order=2, dims=None, keepdim=False, dtype=None):
    if order != 2:
        raise cx.error(f"vector norm of order {order}: Tandem lowers the 2-norm")
    out = cx.result_type()
    x = cx.cast(x, out.element)
    squares = cx.emit("tandem.mul", [x, x], x.type)
    total = reduce(cx, "tandem.reduce_sum", squares, dims, keepdim, out)
    return cx.emit("tandem.sqrt", [total], out)


@lowers(aten.argmax.default)
def _argmax(cx, x, dim=None, keepdim=False):
    out = cx.result_type()
    if dim is None:
        x = cx.reshape(x, (math.prod(x.type.shape),))
        flat = cx.emit("tandem.argmax", [x], TensorType((), "i64"),
                       {"axis": mlir.i64(0)})
        return cx.reshape(flat, out.shape)
    return cx.emit("tandem.argmax", [x], out, {
        "axis": mlir.i64(normalize_axis(dim, x.type.rank)),
        "keepdims": mlir.boolean(keepdim)})


@lowers(aten.argmin.default)
def _argmin(cx, x, dim=None, keepdim=False):
    """The argmax of a reversed order: -x for floats (NaN stays NaN, the
    extreme either way, as in PyTorch), -1 - x for integers (never
    overflows)."""
    if x.type.element in ("f32", "f16", "bf16"):
        flipped = cx.emit("tandem.neg", [x], x.type)
    elif x.type.element in ("i64", "i32"):
        flipped = cx.emit("tandem.sub", [cx.scalar(-1, x.type.element), x], x.type)
    else:
        raise cx.error("argmin of booleans is not supported")
    return _argmax(cx, flipped, dim, keepdim)


@lowers(aten.max.dim)
def _max_dim(cx, x, dim, keepdim=False):
    axis = normalize_axis(dim, x.type.rank)
    values = reduce(cx, "tandem.reduce_max", x, [axis], keepdim, cx.result_type(0))
    indices = cx.emit("tandem.argmax", [x], cx.result_type(1), {
        "axis": mlir.i64(axis), "keepdims": mlir.boolean(keepdim)})
    return [values, indices]


@lowers(aten.cumsum.default)
def _cumsum(cx, x, dim, dtype=None):
    # The result's element type is PyTorch's: integers and booleans widen
    # to i64 unless `dtype` says otherwise.
    out = cx.result_type()
    x = cx.cast(x, out.element)
    if x.type.rank == 0:  # a scalar's running sum is itself
        return x
    return cx.emit("tandem.cumsum", [x], out,
                   {"axis": mlir.i64(normalize_axis(dim, x.type.rank))})


MAX_TOPK = 64


@lowers(aten.topk.default)
def _topk(cx, x, k, dim=-1, largest=True, sorted=True):
    """k rounds, each taking the largest entry not yet taken (ties go to the
    first index, where PyTorch leaves their order open): its value is the
    maximum of what is left, its index the first such entry not taken. NaN
    is the largest entry, also for the smallest k (taken as the largest of
    −x, NaN last). O(k·n) per row: meant for small k (mixture-of-experts
    routing, beam search), refused above MAX_TOPK."""
    values_type, indices_type = cx.result_type(0), cx.result_type(1)
    k = int(k)
    if k > MAX_TOPK:
        raise cx.error(f"topk with k = {k}: Tandem takes k up to {MAX_TOPK} "
                       "(k rounds of a maximum over the axis)")
    if k == 0:
        return [cx.fill(0, values_type), cx.fill(0, indices_type)]
    axis = normalize_axis(dim, x.type.rank)
    element = values_type.element
    is_float = element in ("f32", "f16", "bf16")
    x = cx.cast(x, element)
    mask_type = x.type.with_element("i1")
    kept_shape = list(x.type.shape)
    kept_shape[axis] = 1
    kept = x.type.with_shape(kept_shape)

    def reduce_max(value, type):
        return cx.emit("tandem.reduce_max", [value], type,
                       {"axes": mlir.i64_array([axis]), "keepdims": "true"})

    nan = cx.compare("ne", x, x) if is_float else None
    if not largest:
        if not is_float:
            raise cx.error("topk(largest=False) of integers is not supported")
        x = cx.emit("tandem.neg", [x], x.type)
    lowest = cx.scalar(-math.inf if is_float else
                       -(1 << (63 if element == "i64" else 31)), element)
    if nan is not None and not largest:  # NaN last: ranked apart, below all
        x = cx.emit("tandem.select", [nan, lowest, x], x.type)
    positions = cx.emit("tandem.iota", [], x.type.with_element("i64"),
                        {"axis": mlir.i64(axis)})
    taken = None
    values, indices = [], []
    for _ in range(k):
        free = (cx.compare("eq", taken, cx.scalar(False, "i1"))
                if taken is not None else None)
        left = x if taken is None else cx.emit("tandem.select", [taken, lowest, x],
                                               x.type)
        best = reduce_max(left, kept)
        # The free entries equal to the best (NaN where the best is NaN);
        # the first of them is this round's.
        matches = cx.compare("eq", left, best)
        if is_float and largest:
            nan_best = cx.compare("ne", best, best)
            matches = cx.emit("tandem.select", [
                nan_best, cx.compare("ne", left, left), matches], mask_type)
        if is_float and not largest:  # a NaN only once no number is left
            number = cx.logical_and(matches,
                                    cx.compare("eq", nan, cx.scalar(False, "i1")))
            if free is not None:
                number = cx.logical_and(number, free)
            any_number = cx.compare("gt", reduce_max(cx.cast(number, "i32"),
                                                     kept.with_element("i32")),
                                    cx.scalar(0, "i32"))
            nan_left = nan if free is None else cx.logical_and(nan, free)
            matches = cx.emit("tandem.select", [any_number, number, nan_left],
                              mask_type)
            best = cx.emit("tandem.select", [any_number, best,
                                             cx.scalar(math.nan, element)], kept)
        elif free is not None:
            matches = cx.logical_and(matches, free)
        index = cx.emit("tandem.argmax", [cx.cast(matches, "i32")],
                        kept.with_element("i64"),
                        {"axis": mlir.i64(axis), "keepdims": "true"})
        chosen = cx.compare("eq", positions, index)
        taken = chosen if taken is None else cx.emit(
            "tandem.select", [taken, cx.scalar(True, "i1"), chosen], mask_type)
        values.append(best)
        indices.append(index)

    def joined(parts, type):
        if len(parts) == 1:
            return cx.cast(parts[0], type.element)
        return cx.cast(cx.emit("tandem.concat", parts, type.with_element(
            parts[0].type.element), {"axis": mlir.i64(axis)}), type.element)
    result = joined(values, values_type)
    if not largest:
        result = cx.emit("tandem.neg", [result], values_type)
    return [result, joined(indices, indices_type)]
