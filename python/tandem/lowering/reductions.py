"""Reductions: sum, mean, variance, min/max, any/all, the 2-norm, argmax, cumsum."""
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
