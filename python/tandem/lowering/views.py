"""Casts, copies and views: dtype conversion, reshapes, transposes, slices
and splits, repeat/flip/roll, padding, upsampling, cat and stack."""
import math

from .. import mlir
from ..mlir import TensorType, Value
from . import LOWERINGS, aten, lowers, normalize_axis

@lowers(aten._to_copy.default, aten.to.dtype, aten.to.dtype_layout,
        aten.type_as.default)
def _to(cx, x, *unused, **unused_kw):
    return cx.cast(x, cx.result_type().element)


def identity(cx, x, *unused, **unused_kw):
    return x


for _overload in (aten.clone.default, aten.contiguous.default, aten.alias.default,
                  aten.detach.default, aten.lift_fresh_copy.default,
                  aten.lift_fresh.default):
    LOWERINGS[_overload] = identity


@lowers(aten.dropout.default)
def _dropout(cx, x, p=0.5, train=False):
    if train:
        raise cx.error("dropout in training mode: Tandem exports eval mode only")
    return x


def reshape_to_result(cx, x, *unused, **unused_kw):
    return cx.reshape(x, cx.result_type().shape)


for _overload in (aten.view.default, aten._unsafe_view.default,
                  aten.reshape.default, aten.squeeze.default, aten.squeeze.dim,
                  aten.squeeze.dims, aten.unsqueeze.default, aten.flatten.using_ints,
                  aten.unflatten.int, aten.view_as.default):
    LOWERINGS[_overload] = reshape_to_result


@lowers(aten.copy.default)
def _copy(cx, x, src, non_blocking=False):
    """The functional form of x.copy_(src): src in x's shape and type (how a
    decomposition writes into a slice, e.g. circular padding)."""
    out = cx.result_type()
    src = cx.cast(src, out.element)
    if src.type.shape == out.shape:
        return src
    return cx.emit("tandem.broadcast_to", [src], out)


@lowers(aten.expand.default, aten.expand_as.default, aten.broadcast_to.default)
def _expand(cx, x, *unused):
    out = cx.result_type()
    if x.type.shape == out.shape:
        return x
    return cx.emit("tandem.broadcast_to", [x], out)


def transpose(cx, x, perm):
    perm = [normalize_axis(p, x.type.rank) for p in perm]
    if perm == list(range(x.type.rank)):
        return x
    shape = tuple(x.type.shape[p] for p in perm)
    return cx.emit("tandem.transpose", [x], x.type.with_shape(shape),
                   {"perm": mlir.i64_array(perm)})


@lowers(aten.permute.default)
def _permute(cx, x, dims):
    return transpose(cx, x, dims)


@lowers(aten.t.default, aten.numpy_T.default)
def _t(cx, x):
    return transpose(cx, x, list(reversed(range(x.type.rank))))


@lowers(aten.transpose.int)
def _transpose(cx, x, a, b):
    perm = list(range(x.type.rank))
    a, b = normalize_axis(a, x.type.rank), normalize_axis(b, x.type.rank)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(cx, x, perm)


def slice_along(cx, x, axis, start, limit, stride=1):
    if start == 0 and limit == x.type.shape[axis] and stride == 1:
        return x
    starts = [0] * x.type.rank
    limits = list(x.type.shape)
    strides = [1] * x.type.rank
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    shape = list(x.type.shape)
    shape[axis] = max(0, (limit - start + stride - 1) // stride)
    return cx.emit("tandem.slice", [x], x.type.with_shape(shape),
                   {"starts": mlir.i64_array(starts),
                    "limits": mlir.i64_array(limits),
                    "strides": mlir.i64_array(strides)})


@lowers(aten.slice.Tensor)
def _slice(cx, x, dim=0, start=None, end=None, step=1):
    axis = normalize_axis(dim, x.type.rank)
    size = x.type.shape[axis]

    def bound(value, default):
        if value is None:
            return default
        value = int(value)
        if value < 0:
            value += size
        return min(max(value, 0), size)

    start, end = bound(start, 0), bound(end, size)
    if step < 1:
        raise cx.error(f"slice step {step} (must be positive)")
    return slice_along(cx, x, axis, start, max(start, end), int(step))


@lowers(aten.slice_scatter.default)
def _slice_scatter(cx, x, source, dim=0, start=None, end=None, step=1):
    """x with x[start:end] along `dim` replaced by `source`: the slices
    before and after, and `source` between them, concatenated."""
    out = cx.result_type()
    axis = normalize_axis(dim, x.type.rank)
    size = x.type.shape[axis]
    start = 0 if start is None else min(max(start + (size if start < 0 else 0), 0), size)
    stop = start + source.type.shape[axis] * step
    if step != 1:
        raise cx.error("slice_scatter with a step is not supported")
    parts = [slice_along(cx, x, axis, 0, start), cx.cast(source, out.element),
             slice_along(cx, x, axis, stop, size)]
    parts = [p for p in parts if p.type.shape[axis] > 0]
    if len(parts) == 1:
        return parts[0]
    return cx.emit("tandem.concat", [cx.cast(p, out.element) for p in parts], out,
                   {"axis": mlir.i64(axis)})


@lowers(aten.select.int)
def _select(cx, x, dim, index):
    axis = normalize_axis(dim, x.type.rank)
    index = int(index) + (x.type.shape[axis] if index < 0 else 0)
    row = slice_along(cx, x, axis, index, index + 1)
    return cx.reshape(row, cx.result_type().shape)


def split_sizes(cx, x, sizes, dim):
    axis = normalize_axis(dim, x.type.rank)
    parts, start = [], 0
    for size in sizes:
        parts.append(slice_along(cx, x, axis, start, start + size))
        start += size
    return parts


@lowers(aten.split.Tensor)
def _split(cx, x, size, dim=0):
    total = x.type.shape[normalize_axis(dim, x.type.rank)]
    sizes = [min(size, total - start) for start in range(0, total, size)]
    return split_sizes(cx, x, sizes, dim)


@lowers(aten.split_with_sizes.default)
def _split_with_sizes(cx, x, sizes, dim=0):
    return split_sizes(cx, x, sizes, dim)


@lowers(aten.chunk.default)
def _chunk(cx, x, chunks, dim=0):
    total = x.type.shape[normalize_axis(dim, x.type.rank)]
    return _split(cx, x, -(-total // chunks), dim)


@lowers(aten.unbind.int)
def _unbind(cx, x, dim=0):
    axis = normalize_axis(dim, x.type.rank)
    shape = [d for k, d in enumerate(x.type.shape) if k != axis]
    return [cx.reshape(part, shape) for part in
            split_sizes(cx, x, [1] * x.type.shape[axis], axis)]


@lowers(aten.repeat.default)
def _repeat(cx, x, repeats):
    """Tiles x: each dim d repeated r times is a broadcast of [1, d] to
    [r, d], folded back into one dim of r·d."""
    out = cx.result_type()
    repeats = [int(r) for r in repeats]
    shape = (1,) * (len(repeats) - x.type.rank) + x.type.shape
    interleaved = [d for dim in shape for d in (1, dim)]
    tiled = [d for r, dim in zip(repeats, shape) for d in (r, dim)]
    spread = cx.reshape(x, interleaved)
    if tuple(tiled) != tuple(interleaved):
        spread = cx.emit("tandem.broadcast_to", [spread],
                         x.type.with_shape(tiled))
    return cx.reshape(spread, out.shape)


@lowers(aten.flip.default)
def _flip(cx, x, dims):
    return flip(cx, x, dims)


def flip(cx, x, dims):
    """Gathers each flipped axis with the indices n−1, n−2, …, 0."""
    for dim in dims:
        axis = normalize_axis(dim, x.type.rank)
        size = x.type.shape[axis]
        if size <= 1:
            continue
        index_type = TensorType((size,), "i64")
        counting = cx.emit("tandem.iota", [], index_type, {"axis": mlir.i64(0)})
        reversed_ = cx.emit("tandem.sub", [cx.scalar(size - 1, "i64"), counting],
                            index_type)
        x = cx.emit("tandem.gather", [x, reversed_], x.type,
                    {"axis": mlir.i64(axis)})
    return x


@lowers(aten.roll.default)
def _roll(cx, x, shifts, dims=()):
    """Each shifted axis as the concatenation of its two slices."""
    shifts = [int(s) for s in shifts] if not isinstance(shifts, int) else [shifts]
    dims = [int(d) for d in dims] if not isinstance(dims, int) else [dims]
    shape = x.type.shape
    if not dims:  # roll the flattened tensor
        flat = cx.reshape(x, (math.prod(shape),))
        return cx.reshape(roll_axis(cx, flat, 0, shifts[0]), shape)
    for shift, dim in zip(shifts, dims):
        x = roll_axis(cx, x, normalize_axis(dim, x.type.rank), shift)
    return x


def roll_axis(cx, x, axis, shift):
    size = x.type.shape[axis]
    shift = shift % size if size else 0
    if shift == 0:
        return x
    tail = slice_along(cx, x, axis, size - shift, size)
    head = slice_along(cx, x, axis, 0, size - shift)
    return cx.emit("tandem.concat", [tail, head], x.type, {"axis": mlir.i64(axis)})


@lowers(aten.constant_pad_nd.default)
def _constant_pad(cx, x, pad, value=0):
    return cx.cast(constant_pad(cx, x, pad, value), cx.result_type().element)


def constant_pad(cx, x, pad, value=0):
    """F.pad with a constant: pads are (left, right) pairs from the last
    dimension backwards; positive ones concatenate fills, negative ones
    slice."""
    pad = [int(p) for p in pad]
    for k in range(len(pad) // 2):
        axis = x.type.rank - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        size = x.type.shape[axis]
        x = slice_along(cx, x, axis, max(0, -left), size - max(0, -right))
        parts = []
        for amount in (left, None, right):
            if amount is None:
                parts.append(x)
            elif amount > 0:
                shape = list(x.type.shape)
                shape[axis] = amount
                parts.append(cx.fill(value, x.type.with_shape(shape)))
        if len(parts) > 1:
            shape = list(x.type.shape)
            shape[axis] = sum(p.type.shape[axis] for p in parts)
            x = cx.emit("tandem.concat", parts, x.type.with_shape(shape),
                        {"axis": mlir.i64(axis)})
    return x


@lowers(aten.upsample_nearest2d.vec, aten.upsample_nearest2d.default)
def _upsample_nearest(cx, x, *unused):
    """Nearest upsampling by whole factors: each pixel broadcast to an
    s_h × s_w block."""
    out = cx.result_type()
    n, c, h, w = x.type.shape
    oh, ow = out.shape[2:]
    if oh % h or ow % w:
        raise cx.error(f"nearest upsampling from {h}x{w} to {oh}x{ow}: only "
                       "whole factors are supported")
    sh, sw = oh // h, ow // w
    spread = cx.reshape(x, (n, c, h, 1, w, 1))
    spread = cx.emit("tandem.broadcast_to", [spread],
                     x.type.with_shape((n, c, h, sh, w, sw)))
    return cx.reshape(spread, out.shape)


def constant(cx, values, element) -> Value:
    """A small 1-D tensor known at export time, as an arith.constant (which
    tandem-compile lowers; placement sees it as free to put anywhere)."""
    values = list(values)
    if element in ("i64", "i32"):
        text = ", ".join(str(int(v)) for v in values)
    else:
        text = ", ".join(mlir.typed_scalar(v, "f32").split(" : ")[0] for v in values)
    type = TensorType((len(values),), element)
    return cx.emit("arith.constant", [], type,
                   {"value": f"dense<[{text}]> : {type}"})


def linear_taps(in_size, out_size, align_corners, scale):
    """For each output position along one axis: the two input positions it
    blends and the weight of the second (PyTorch's upsample_bilinear2d)."""
    lows, highs, weights = [], [], []
    for dst in range(out_size):
        if align_corners:
            src = dst * (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        else:
            ratio = 1.0 / scale if scale else in_size / out_size
            src = max((dst + 0.5) * ratio - 0.5, 0.0)
        low = min(int(math.floor(src)), in_size - 1)
        high = min(low + 1, in_size - 1)
        lows.append(low)
        highs.append(high)
        weights.append(src - low)
    return lows, highs, weights


@lowers(aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default)
def _upsample_bilinear(cx, x, output_size, align_corners, scales=None,
                       *more_scales):
    """Bilinear interpolation as two separable passes: along each axis, a
    gather of the lower and upper neighbours blended by constant weights."""
    out = cx.result_type()
    if not out.is_float:
        raise cx.error("bilinear upsampling of integers is not supported")
    if cx.node.target == aten.upsample_bilinear2d.default:
        scales = [more_scales[0] if more_scales else None, scales]
    scales = list(scales) if scales else [None, None]
    y = x
    for k, axis in enumerate((2, 3)):
        size, target = y.type.shape[axis], out.shape[axis]
        if size == target and not align_corners and not scales[k]:
            continue
        lows, highs, weights = linear_taps(size, target, align_corners, scales[k])
        shape = list(y.type.shape)
        shape[axis] = target
        gathered = y.type.with_shape(shape)
        low = cx.emit("tandem.gather", [y, constant(cx, lows, "i64")], gathered,
                      {"axis": mlir.i64(axis)})
        high = cx.emit("tandem.gather", [y, constant(cx, highs, "i64")], gathered,
                       {"axis": mlir.i64(axis)})
        blend_shape = [1] * len(shape)
        blend_shape[axis] = target
        weight = cx.reshape(cx.cast(constant(cx, weights, "f32"), out.element),
                            blend_shape)
        step = cx.emit("tandem.mul", [cx.emit("tandem.sub", [high, low], gathered),
                                      weight], gathered)
        y = cx.emit("tandem.add", [low, step], gathered)
    return y


@lowers(aten.cat.default)
def _cat(cx, tensors, dim=0):
    out = cx.result_type()
    axis = normalize_axis(dim, out.rank)
    parts = [cx.cast(t, out.element) for t in tensors
             if t.type.rank == out.rank and t.type.shape[axis] > 0]
    if len(parts) == 1:
        return parts[0]
    return cx.emit("tandem.concat", parts, out, {"axis": mlir.i64(axis)})


@lowers(aten.stack.default)
def _stack(cx, tensors, dim=0):
    out = cx.result_type()
    axis = normalize_axis(dim, out.rank)
    parts = []
    for t in tensors:
        shape = list(t.type.shape)
        shape.insert(axis, 1)
        parts.append(cx.reshape(cx.cast(t, out.element), shape))
    if len(parts) == 1:
        return parts[0]
    return cx.emit("tandem.concat", parts, out, {"axis": mlir.i64(axis)})
