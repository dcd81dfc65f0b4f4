"""ATen → tandem: one lowering per ATen op the frontend understands.

Each lowering receives the node's arguments with graph nodes replaced by the
tandem values already built for them, emits tandem ops through the context
and returns the node's value (a list of values for ops with several results).
What the dialect lacks is decomposed here into what it has (addmm into linear
or matmul + add, hardtanh into maximum/minimum, triu into iota/compare/select,
scaled dot-product attention into its matmuls and softmax...).

`LOWERINGS` maps each ATen overload to its lowering; an op missing from it is
an error naming the op and the model's source line.
"""
import math
import operator

import torch

from . import mlir
from .errors import ExportError
from .mlir import TensorType, Value
from .sources import describe

aten = torch.ops.aten

TORCH_ELEMENTS = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.bool: "i1",
}


def element_of(dtype) -> str:
    if dtype not in TORCH_ELEMENTS:
        raise ExportError(f"dtype {dtype} is not supported by Tandem "
                          "(float32, float16, bfloat16, int64, int32, bool)")
    return TORCH_ELEMENTS[dtype]


def tensor_type(fake) -> TensorType:
    """The static tensor type of a traced (fake) tensor."""
    shape = []
    for dim in fake.shape:
        if not isinstance(dim, int):
            try:
                dim = int(dim)
            except Exception:
                raise ExportError(f"dynamic shape {tuple(fake.shape)}: Tandem "
                                  "compiles static shapes only; export with "
                                  "fixed example shapes") from None
        shape.append(dim)
    return TensorType(tuple(shape), element_of(fake.dtype))


class Unavailable:
    """A result of an ATen op that Tandem does not compute (the indices of
    max_pool2d, the saved mean of layer_norm): an error only if used."""

    def __init__(self, what):
        self.what = what


class Context:
    """What a lowering sees: the function being built, the node being lowered
    (its source location, its result types, its device pin)."""

    def __init__(self, builder: mlir.FunctionBuilder):
        self.builder = builder
        self.values = {}  # graph node -> its value (a list for several results)
        self.node = None
        self.location = mlir.UNKNOWN
        self.pin = None  # a device name from tandem.device_guard

    # -- types of the node being lowered --
    def result_type(self, index=None) -> TensorType:
        fake = self.node.meta.get("val")
        if index is not None:
            fake = fake[index]
        if not isinstance(fake, torch.Tensor):
            raise self.error("produces a non-tensor value")
        return tensor_type(fake)

    def error(self, message) -> ExportError:
        return ExportError(f"{describe(self.node)}: {message}")

    # -- building --
    def emit(self, name, operands, type, attributes=None) -> Value:
        attributes = dict(attributes or {})
        if self.pin is not None:
            attributes["tandem.pin"] = mlir.device(self.pin)
        return self.builder.create(name, operands, type, attributes,
                                   self.location)

    def fill(self, value, type: TensorType) -> Value:
        return self.emit("tandem.fill", [], type,
                         {"value": mlir.typed_scalar(value, type.element)})

    def scalar(self, value, element) -> Value:
        return self.fill(value, TensorType((), element))

    def cast(self, value: Value, element) -> Value:
        if value.type.element == element:
            return value
        return self.emit("tandem.cast", [value], value.type.with_element(element))

    def operand(self, x, element) -> Value:
        """A tensor or a Python number as a value of element type `element`."""
        if isinstance(x, Value):
            return self.cast(x, element)
        if isinstance(x, (bool, int, float)):
            return self.scalar(x, element)
        raise self.error(f"unexpected operand {x!r}")

    def reshape(self, x: Value, shape) -> Value:
        shape = tuple(int(d) for d in shape)
        if x.type.shape == shape:
            return x
        return self.emit("tandem.reshape", [x], x.type.with_shape(shape))


LOWERINGS = {}


def lowers(*overloads):
    def register(function):
        for overload in overloads:
            LOWERINGS[overload] = function
        return function
    return register


def normalize_axis(axis, rank):
    axis = int(axis)
    return axis + rank if axis < 0 else axis


def pair(value, default=None):
    """An int or a list of one or two ints as (h, w)."""
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        value = default
    if isinstance(value, int):
        return (value, value)
    value = [int(v) for v in value]
    return (value[0], value[0]) if len(value) == 1 else (value[0], value[1])


# -- elementwise --------------------------------------------------------------

def binary(cx, name, x, y):
    out = cx.result_type()
    return cx.emit(name, [cx.operand(x, out.element), cx.operand(y, out.element)],
                   out)


def promoted_element(x, y) -> str:
    """The element type both operands of a comparison are brought to."""
    values = [v for v in (x, y) if isinstance(v, Value)]
    dtypes = [dtype for dtype, element in TORCH_ELEMENTS.items()
              if element in (v.type.element for v in values)]
    dtype = dtypes[0]
    for other in dtypes[1:]:
        dtype = torch.promote_types(dtype, other)
    scalars = [v for v in (x, y) if not isinstance(v, Value)]
    if any(isinstance(s, float) for s in scalars) and not dtype.is_floating_point:
        dtype = torch.float32
    return TORCH_ELEMENTS[dtype]


def with_alpha(cx, name, x, y, alpha):
    """x (op) alpha·y: PyTorch's add/sub with their `alpha`."""
    if alpha != 1:
        y = scaled_operand(cx, y, alpha, cx.result_type().element)
    return binary(cx, name, x, y)


@lowers(aten.add.Tensor, aten.add.Scalar)
def _add(cx, x, y, alpha=1):
    return with_alpha(cx, "tandem.add", x, y, alpha)


@lowers(aten.sub.Tensor, aten.sub.Scalar)
def _sub(cx, x, y, alpha=1):
    return with_alpha(cx, "tandem.sub", x, y, alpha)


@lowers(aten.rsub.Tensor, aten.rsub.Scalar)
def _rsub(cx, x, y, alpha=1):
    return with_alpha(cx, "tandem.sub", y, x, alpha)


def scaled_operand(cx, y, factor, element):
    """y * factor (a value or a number)."""
    if not isinstance(y, Value):
        return y * factor
    y = cx.cast(y, element)
    return cx.emit("tandem.mul", [y, cx.scalar(factor, element)], y.type)


def elementwise(name):
    def lower(cx, x, y):
        return binary(cx, name, x, y)
    return lower


for _overloads, _name in [
        ((aten.mul.Tensor, aten.mul.Scalar), "tandem.mul"),
        ((aten.div.Tensor, aten.div.Scalar), "tandem.div"),
        ((aten.maximum.default,), "tandem.maximum"),
        ((aten.minimum.default,), "tandem.minimum"),
        ((aten.pow.Tensor_Tensor,), "tandem.pow")]:
    for _overload in _overloads:
        LOWERINGS[_overload] = elementwise(_name)


@lowers(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(cx, x, y, rounding_mode=None):
    if rounding_mode is not None:
        raise cx.error(f"division with rounding_mode='{rounding_mode}' is not "
                       "in the tandem dialect")
    return binary(cx, "tandem.div", x, y)


@lowers(aten.pow.Tensor_Scalar)
def _pow_scalar(cx, x, exponent):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    if exponent == 1:
        return x
    if exponent == 2:
        return cx.emit("tandem.mul", [x, x], out)
    if exponent == 0.5 and out.is_float:
        return cx.emit("tandem.sqrt", [x], out)
    return binary(cx, "tandem.pow", x, exponent)


@lowers(aten.pow.Scalar)
def _pow_base(cx, base, x):
    return binary(cx, "tandem.pow", base, x)


@lowers(aten.reciprocal.default)
def _reciprocal(cx, x):
    return binary(cx, "tandem.div", 1.0, x)


def unary(name):
    def lower(cx, x, *unused):
        out = cx.result_type()
        return cx.emit(name, [cx.cast(x, out.element)], out)
    return lower


for _overload, _name in [
        (aten.neg.default, "tandem.neg"), (aten.abs.default, "tandem.abs"),
        (aten.exp.default, "tandem.exp"), (aten.log.default, "tandem.log"),
        (aten.sqrt.default, "tandem.sqrt"), (aten.rsqrt.default, "tandem.rsqrt"),
        (aten.tanh.default, "tandem.tanh"), (aten.sigmoid.default, "tandem.sigmoid"),
        (aten.relu.default, "tandem.relu"), (aten.silu.default, "tandem.silu")]:
    LOWERINGS[_overload] = unary(_name)


@lowers(aten.gelu.default)
def _gelu(cx, x, approximate="none"):
    out = cx.result_type()
    if approximate == "none":
        return cx.emit("tandem.gelu", [x], out)
    # The tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
    e = out.element
    cube = cx.emit("tandem.mul", [cx.emit("tandem.mul", [x, x], out), x], out)
    inner = cx.emit("tandem.add", [x, cx.emit("tandem.mul", [
        cube, cx.scalar(0.044715, e)], out)], out)
    t = cx.emit("tandem.tanh", [cx.emit("tandem.mul", [
        inner, cx.scalar(math.sqrt(2 / math.pi), e)], out)], out)
    half_x = cx.emit("tandem.mul", [x, cx.scalar(0.5, e)], out)
    return cx.emit("tandem.mul", [half_x, cx.emit("tandem.add", [
        t, cx.scalar(1.0, e)], out)], out)


def clamp(cx, x, low, high):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    if low is not None:
        x = cx.emit("tandem.maximum", [x, cx.operand(low, out.element)], out)
    if high is not None:
        x = cx.emit("tandem.minimum", [x, cx.operand(high, out.element)], out)
    return x


@lowers(aten.hardtanh.default)
def _hardtanh(cx, x, low=-1.0, high=1.0):
    return clamp(cx, x, low, high)


@lowers(aten.clamp.default, aten.clamp.Tensor)
def _clamp(cx, x, low=None, high=None):
    return clamp(cx, x, low, high)


@lowers(aten.clamp_min.default, aten.clamp_min.Tensor)
def _clamp_min(cx, x, low):
    return clamp(cx, x, low, None)


@lowers(aten.clamp_max.default, aten.clamp_max.Tensor)
def _clamp_max(cx, x, high):
    return clamp(cx, x, None, high)


@lowers(aten.hardsigmoid.default)
def _hardsigmoid(cx, x):
    out = cx.result_type()
    shifted = cx.emit("tandem.add", [cx.emit("tandem.div", [
        x, cx.scalar(6.0, out.element)], out), cx.scalar(0.5, out.element)], out)
    return clamp(cx, shifted, 0.0, 1.0)


@lowers(aten.hardswish.default)
def _hardswish(cx, x):
    return cx.emit("tandem.mul", [x, _hardsigmoid(cx, x)], cx.result_type())


@lowers(aten.leaky_relu.default)
def _leaky_relu(cx, x, slope=0.01):
    out = cx.result_type()
    positive = cx.emit("tandem.compare", [x, cx.scalar(0, out.element)],
                       out.with_element("i1"), {"predicate": "#tandem.predicate<gt>"})
    scaled_x = cx.emit("tandem.mul", [x, cx.scalar(slope, out.element)], out)
    return cx.emit("tandem.select", [positive, x, scaled_x], out)


@lowers(aten.log1p.default)
def _log1p(cx, x):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    return cx.emit("tandem.log", [cx.emit("tandem.add", [
        x, cx.scalar(1.0, out.element)], out)], out)


@lowers(aten.expm1.default)
def _expm1(cx, x):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    return cx.emit("tandem.sub", [cx.emit("tandem.exp", [x], out),
                                  cx.scalar(1.0, out.element)], out)


@lowers(aten.elu.default)
def _elu(cx, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """scale·x where x > 0, else scale·alpha·(exp(input_scale·x) − 1)."""
    out = cx.result_type()
    e = out.element
    positive = cx.emit("tandem.compare", [x, cx.scalar(0, e)],
                       out.with_element("i1"), {"predicate": "#tandem.predicate<gt>"})
    grown = cx.emit("tandem.exp", [scaled_operand(cx, x, input_scale, e)], out)
    negative = scaled_operand(cx, cx.emit("tandem.sub", [grown, cx.scalar(1.0, e)],
                                          out), scale * alpha, e)
    return cx.emit("tandem.select", [positive, scaled_operand(cx, x, scale, e),
                                     negative], out)


# -- compare, select, logic ---------------------------------------------------

def compare(predicate):
    def lower(cx, x, y):
        element = promoted_element(x, y)
        return cx.emit("tandem.compare",
                       [cx.operand(x, element), cx.operand(y, element)],
                       cx.result_type(),
                       {"predicate": f"#tandem.predicate<{predicate}>"})
    return lower


for _predicate in ("eq", "ne", "lt", "le", "gt", "ge"):
    for _overload in ("Tensor", "Scalar"):
        LOWERINGS[getattr(getattr(aten, _predicate), _overload)] = compare(_predicate)


@lowers(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther,
        aten.where.Scalar)
def _where(cx, condition, a, b):
    out = cx.result_type()
    return cx.emit("tandem.select", [cx.operand(condition, "i1"),
                                     cx.operand(a, out.element),
                                     cx.operand(b, out.element)], out)


@lowers(aten.masked_fill.Scalar, aten.masked_fill.Tensor)
def _masked_fill(cx, x, mask, value):
    out = cx.result_type()
    return cx.emit("tandem.select", [cx.operand(mask, "i1"),
                                     cx.operand(value, out.element),
                                     cx.cast(x, out.element)], out)


def as_bool(cx, x):
    return cx.emit("tandem.compare", [x, cx.scalar(0, x.type.element)],
                   x.type.with_element("i1"),
                   {"predicate": "#tandem.predicate<ne>"}) \
        if x.type.element != "i1" else x


@lowers(aten.logical_not.default, aten.bitwise_not.default)
def _logical_not(cx, x):
    if cx.node.target == aten.bitwise_not.default and x.type.element != "i1":
        raise cx.error("bitwise_not of integers is not in the tandem dialect")
    return cx.emit("tandem.compare", [as_bool(cx, x), cx.scalar(False, "i1")],
                   cx.result_type(), {"predicate": "#tandem.predicate<eq>"})


@lowers(aten.logical_and.default, aten.bitwise_and.Tensor)
def _logical_and(cx, x, y):
    out = cx.result_type()
    if out.element != "i1":
        raise cx.error("bitwise_and of integers is not in the tandem dialect")
    return cx.emit("tandem.select", [as_bool(cx, x), as_bool(cx, y),
                                     cx.scalar(False, "i1")], out)


@lowers(aten.logical_or.default, aten.bitwise_or.Tensor)
def _logical_or(cx, x, y):
    out = cx.result_type()
    if out.element != "i1":
        raise cx.error("bitwise_or of integers is not in the tandem dialect")
    return cx.emit("tandem.select", [as_bool(cx, x), cx.scalar(True, "i1"),
                                     as_bool(cx, y)], out)


# -- casts, copies, views -----------------------------------------------------

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
    """F.pad with a constant: pads are (left, right) pairs from the last
    dimension backwards; positive ones concatenate fills, negative ones
    slice."""
    out = cx.result_type()
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
    return cx.cast(x, out.element)


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


# -- linear algebra -----------------------------------------------------------

def transposed_matrix(cx, value):
    """If `value` is the transpose of a matrix (how ATen spells the weight of
    nn.Linear), that matrix; else None."""
    op = cx.builder.producer(value)
    if (op is not None and op.name == "tandem.transpose" and
            op.attributes["perm"] == mlir.i64_array([1, 0])):
        return op.operands[0]
    return None


def broadcast_transposed_matrix(cx, value):
    """If `value` is a transposed matrix broadcast over batch dimensions (how
    ATen spells torch.matmul(x3d, w.t())), that matrix; else None."""
    op = cx.builder.producer(value)
    if op is not None and op.name == "tandem.broadcast_to":
        return transposed_matrix(cx, op.operands[0])
    return None


@lowers(aten.mm.default)
def _mm(cx, a, b):
    out = cx.result_type()
    weight = transposed_matrix(cx, b)
    if weight is not None:
        return cx.emit("tandem.linear", [a, weight], out)
    return cx.emit("tandem.matmul", [a, b], out)


@lowers(aten.addmm.default)
def _addmm(cx, bias, a, b, beta=1, alpha=1):
    out = cx.result_type()
    weight = transposed_matrix(cx, b)
    if (weight is not None and beta == 1 and alpha == 1 and
            bias.type.shape == (out.shape[1],)):
        return cx.emit("tandem.linear", [a, weight, bias], out)
    product = cx.emit("tandem.matmul", [a, b], out)
    return cx.emit("tandem.add", [scaled_operand(cx, product, alpha, out.element),
                                  scaled_operand(cx, bias, beta, out.element)], out)


@lowers(aten.bmm.default, aten.matmul.default)
def _bmm(cx, a, b):
    if a.type.rank < 2 or b.type.rank < 2:
        raise cx.error("matmul of a rank-1 operand: reshape it to a matrix")
    out = cx.result_type()
    weight = broadcast_transposed_matrix(cx, b)
    if weight is not None:  # x[B, M, K] · expand(wᵀ) is nn.Linear on 3-D x
        return cx.emit("tandem.linear", [a, weight], out)
    return cx.emit("tandem.matmul", [a, b], out)


@lowers(aten.baddbmm.default)
def _baddbmm(cx, bias, a, b, beta=1, alpha=1):
    out = cx.result_type()
    product = cx.emit("tandem.matmul", [a, b], out)
    if beta == 0:
        return scaled_operand(cx, product, alpha, out.element)
    return cx.emit("tandem.add", [scaled_operand(cx, product, alpha, out.element),
                                  scaled_operand(cx, bias, beta, out.element)], out)


@lowers(aten.linear.default)
def _linear(cx, x, weight, bias=None):
    operands = [x, weight] + ([bias] if bias is not None else [])
    return cx.emit("tandem.linear", operands, cx.result_type())


@lowers(aten.scaled_dot_product_attention.default)
def _sdpa(cx, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
          scale=None, enable_gqa=False):
    """softmax(q·kᵀ·scale + mask)·v, the math form."""
    if dropout_p:
        raise cx.error("attention dropout: Tandem exports eval mode only")
    if enable_gqa:
        raise cx.error("grouped-query attention (enable_gqa) is not supported")
    e = q.type.element
    length, source = q.type.shape[-2], k.type.shape[-2]
    scores_shape = q.type.shape[:-1] + (source,)
    scores_type = q.type.with_shape(scores_shape)
    keys = transpose(cx, k, list(range(k.type.rank - 2)) +
                     [k.type.rank - 1, k.type.rank - 2])
    scores = cx.emit("tandem.matmul", [q, keys], scores_type)
    factor = scale if scale is not None else 1.0 / math.sqrt(q.type.shape[-1])
    scores = cx.emit("tandem.mul", [scores, cx.scalar(factor, e)], scores_type)
    if is_causal:
        allowed = diagonal_mask(cx, (length, source), 0, "le")
        scores = cx.emit("tandem.select", [allowed, scores,
                                           cx.scalar(-math.inf, e)], scores_type)
    if attn_mask is not None:
        if attn_mask.type.element == "i1":
            scores = cx.emit("tandem.select", [attn_mask, scores,
                                               cx.scalar(-math.inf, e)],
                             scores_type)
        else:
            scores = cx.emit("tandem.add", [scores, cx.cast(attn_mask, e)],
                             scores_type)
    weights = cx.emit("tandem.softmax", [scores], scores_type,
                      {"axis": mlir.i64(-1)})
    return cx.emit("tandem.matmul", [weights, v], cx.result_type())


# -- convolution and pooling --------------------------------------------------

@lowers(aten.convolution.default)
def _convolution(cx, x, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups):
    if transposed:
        raise cx.error("transposed convolution (ConvTranspose) is not in the "
                       "tandem dialect")
    out = cx.result_type()
    if x.type.rank == 3:  # conv1d as a conv2d of height 1
        x = cx.reshape(x, x.type.shape[:2] + (1,) + x.type.shape[2:])
        weight = cx.reshape(weight, weight.type.shape[:2] + (1,) +
                            weight.type.shape[2:])
        stride, padding, dilation = ([1] + list(stride), [0] + list(padding),
                                     [1] + list(dilation))
        result2d = out.with_shape(out.shape[:2] + (1,) + out.shape[2:])
        return cx.reshape(_conv2d(cx, x, weight, bias, stride, padding, dilation,
                                  groups, result2d), out.shape)
    if x.type.rank != 4:
        raise cx.error(f"{x.type.rank - 2}-D convolution: Tandem has conv2d "
                       "(and conv1d through it)")
    return _conv2d(cx, x, weight, bias, stride, padding, dilation, groups, out)


def _conv2d(cx, x, weight, bias, stride, padding, dilation, groups, out):
    operands = [x, weight] + ([bias] if bias is not None else [])
    return cx.emit("tandem.conv2d", operands, out, {
        "strides": mlir.i64_array(pair(stride)),
        "padding": mlir.i64_array(pair(padding)),
        "dilation": mlir.i64_array(pair(dilation)),
        "groups": mlir.i64(groups)})


def pool_attributes(cx, x, kernel, stride, padding, ceil_mode, out):
    kernel = pair(kernel)
    stride = pair(stride, kernel)
    padding = pair(padding, 0)
    floor_shape = tuple(
        (x.type.shape[2 + k] + 2 * padding[k] - kernel[k]) // stride[k] + 1
        for k in range(2))
    if ceil_mode and floor_shape != out.shape[2:]:
        raise cx.error("ceil_mode=True changes the output size here; Tandem "
                       "pools with floor rounding")
    return {"kernel": mlir.i64_array(kernel), "strides": mlir.i64_array(stride),
            "padding": mlir.i64_array(padding)}


@lowers(aten.max_pool2d_with_indices.default)
def _max_pool2d_with_indices(cx, x, kernel, stride=None, padding=0, dilation=1,
                             ceil_mode=False):
    out = cx.result_type(0)
    return [_max_pool(cx, x, kernel, stride, padding, dilation, ceil_mode, out),
            Unavailable("the indices of max_pool2d")]


@lowers(aten.max_pool2d.default)
def _max_pool2d(cx, x, kernel, stride=None, padding=0, dilation=1,
                ceil_mode=False):
    return _max_pool(cx, x, kernel, stride, padding, dilation, ceil_mode,
                     cx.result_type())


def _max_pool(cx, x, kernel, stride, padding, dilation, ceil_mode, out):
    if pair(dilation) != (1, 1):
        raise cx.error("dilated max pooling is not in the tandem dialect")
    if ceil_mode:
        # The windows ceil rounding adds see -inf past the bottom and right
        # edges: pad there, and pool with floor rounding.
        x = pad_for_ceil_mode(cx, x, kernel, stride, padding, out)
    return cx.emit("tandem.max_pool2d", [x], out,
                   pool_attributes(cx, x, kernel, stride, padding, False, out))


def pad_for_ceil_mode(cx, x, kernel, stride, padding, out, fill=-math.inf):
    """x with `fill` rows and columns past its bottom and right edges, as many
    as the windows ceil rounding adds reach."""
    kernel, stride, padding = pair(kernel), pair(stride, pair(kernel)), pair(padding, 0)
    for k, axis in enumerate((2, 3)):
        # Rows the last window needs beyond the symmetric padding.
        need = (out.shape[axis] - 1) * stride[k] + kernel[k] - 2 * padding[k]
        extra = need - x.type.shape[axis]
        if extra > 0:
            shape = list(x.type.shape)
            shape[axis] = extra
            wall = cx.fill(fill, x.type.with_shape(shape))
            shape[axis] = x.type.shape[axis] + extra
            x = cx.emit("tandem.concat", [x, wall], x.type.with_shape(shape),
                        {"axis": mlir.i64(axis)})
    return x


@lowers(aten.avg_pool2d.default)
def _avg_pool2d(cx, x, kernel, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """tandem.avg_pool2d divides every window by kh·kw. PyTorch's divisor
    varies where windows overhang (ceil_mode) or skip padding
    (count_include_pad=False), but always as a product of a row and a column
    factor: the pooled result is rescaled by those, as constants."""
    out = cx.result_type()
    kernel = pair(kernel)
    stride = pair(stride, kernel)
    padding = pair(padding, 0)
    pooled_input = x
    if ceil_mode:  # zeros past the bottom and right edges add nothing
        pooled_input = pad_for_ceil_mode(cx, x, kernel, stride, padding, out,
                                         fill=0.0)
    y = cx.emit("tandem.avg_pool2d", [pooled_input], out,
                pool_attributes(cx, pooled_input, kernel, stride, padding, False,
                                out))
    if divisor_override is not None:
        return scaled_operand(cx, y, kernel[0] * kernel[1] / divisor_override,
                              out.element)
    for k, axis in enumerate((2, 3)):
        size = x.type.shape[axis]
        divisors = []
        for o in range(out.shape[axis]):
            start = o * stride[k] - padding[k]
            end = min(start + kernel[k], size + padding[k])
            if not count_include_pad:
                start, end = max(start, 0), min(end, size)
            divisors.append(end - start)
        if all(d == kernel[k] for d in divisors):
            continue
        factors = [kernel[k] / d if d > 0 else math.nan for d in divisors]
        shape = [1, 1, 1, 1]
        shape[axis] = len(factors)
        factor = cx.reshape(cx.cast(constant(cx, factors, "f32"), out.element),
                            shape)
        y = cx.emit("tandem.mul", [y, factor], out)
    return y


@lowers(aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default)
def _adaptive_avg_pool2d(cx, x, output_size):
    out = cx.result_type()
    height, width = x.type.shape[2:]
    oh, ow = out.shape[2:]
    if (oh, ow) == (1, 1):
        return cx.emit("tandem.reduce_mean", [x], out,
                       {"axes": mlir.i64_array([2, 3]), "keepdims": "true"})
    if height % oh or width % ow:
        raise cx.error(f"adaptive average pooling from {height}x{width} to "
                       f"{oh}x{ow}: only whole divisions map to avg_pool2d")
    kernel = (height // oh, width // ow)
    return cx.emit("tandem.avg_pool2d", [x], out,
                   {"kernel": mlir.i64_array(kernel),
                    "strides": mlir.i64_array(kernel)})


# -- normalization ------------------------------------------------------------

@lowers(aten._softmax.default, aten.softmax.int, aten._safe_softmax.default)
def _softmax(cx, x, dim, *unused):
    out = cx.result_type()
    return cx.emit("tandem.softmax", [cx.cast(x, out.element)], out,
                   {"axis": mlir.i64(normalize_axis(dim, x.type.rank))})


@lowers(aten._log_softmax.default, aten.log_softmax.int)
def _log_softmax(cx, x, dim, *unused):
    out = cx.result_type()
    return cx.emit("tandem.log_softmax", [cx.cast(x, out.element)], out,
                   {"axis": mlir.i64(normalize_axis(dim, x.type.rank))})


def parameter_or(cx, value, fill, shape, element):
    return value if value is not None else cx.fill(fill, TensorType(tuple(shape),
                                                                   element))


@lowers(aten.native_layer_norm.default)
def _native_layer_norm(cx, x, normalized_shape, weight, bias, epsilon):
    out = cx.result_type(0)
    return [layer_norm(cx, x, normalized_shape, weight, bias, epsilon, out),
            Unavailable("the mean saved by layer_norm"),
            Unavailable("the reciprocal deviation saved by layer_norm")]


@lowers(aten.layer_norm.default)
def _layer_norm(cx, x, normalized_shape, weight=None, bias=None, epsilon=1e-5,
                *unused):
    return layer_norm(cx, x, normalized_shape, weight, bias, epsilon,
                      cx.result_type())


def layer_norm(cx, x, normalized_shape, weight, bias, epsilon, out):
    shape = [int(d) for d in normalized_shape]
    gamma = parameter_or(cx, weight, 1.0, shape, out.element)
    beta = parameter_or(cx, bias, 0.0, shape, out.element)
    return cx.emit("tandem.layer_norm", [x, gamma, beta], out, {
        "axis": mlir.i64(x.type.rank - len(shape)),
        "epsilon": mlir.float32(epsilon)})


@lowers(aten._native_batch_norm_legit_no_training.default)
def _batch_norm_no_training(cx, x, weight, bias, mean, var, momentum, epsilon):
    out = cx.result_type(0)
    return [batch_norm(cx, x, weight, bias, mean, var, epsilon, out),
            Unavailable("the batch mean of batch_norm"),
            Unavailable("the batch deviation of batch_norm")]


def require_running_statistics(cx, training, mean):
    if training or mean is None:
        raise cx.error("batch_norm with batch statistics (training mode): "
                       "Tandem exports eval mode only")


@lowers(aten.native_batch_norm.default, aten._native_batch_norm_legit.default)
def _native_batch_norm(cx, x, weight, bias, mean, var, training, momentum,
                       epsilon):
    require_running_statistics(cx, training, mean)
    return _batch_norm_no_training(cx, x, weight, bias, mean, var, momentum,
                                   epsilon)


@lowers(aten.batch_norm.default)
def _batch_norm(cx, x, weight, bias, mean, var, training, momentum, epsilon,
                *unused):
    require_running_statistics(cx, training, mean)
    return batch_norm(cx, x, weight, bias, mean, var, epsilon, cx.result_type())


def batch_norm(cx, x, weight, bias, mean, var, epsilon, out):
    channels = [x.type.shape[1]]
    scale = parameter_or(cx, weight, 1.0, channels, out.element)
    shift = parameter_or(cx, bias, 0.0, channels, out.element)
    return cx.emit("tandem.batch_norm", [x, scale, shift, mean, var], out,
                   {"epsilon": mlir.float32(epsilon)})


@lowers(aten.native_group_norm.default)
def _native_group_norm(cx, x, weight, bias, n, channels, spatial, groups, epsilon):
    """Each group's channels and positions normalized together: a layer norm
    over [N, G, C/G·HW], then the per-channel scale and shift."""
    out = cx.result_type(0)
    shape = x.type.shape
    per_group = (channels // groups) * spatial
    grouped = cx.reshape(x, (shape[0], groups, per_group))
    ones = cx.fill(1.0, TensorType((per_group,), out.element))
    zeros = cx.fill(0.0, TensorType((per_group,), out.element))
    normalized = cx.emit("tandem.layer_norm", [grouped, ones, zeros],
                         grouped.type, {"axis": mlir.i64(2),
                                        "epsilon": mlir.float32(epsilon)})
    y = cx.reshape(normalized, shape)
    per_channel = (channels,) + (1,) * (len(shape) - 2)
    if weight is not None:
        y = cx.emit("tandem.mul", [y, cx.reshape(weight, per_channel)], out)
    if bias is not None:
        y = cx.emit("tandem.add", [y, cx.reshape(bias, per_channel)], out)
    return [y, Unavailable("the mean saved by group_norm"),
            Unavailable("the reciprocal deviation saved by group_norm")]


# -- reductions ---------------------------------------------------------------

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


# -- sources ------------------------------------------------------------------

def filled(cx, value, *unused, **unused_kw):
    return cx.fill(value, cx.result_type())


@lowers(aten.full.default)
def _full(cx, size, value, **unused):
    return filled(cx, value)


@lowers(aten.full_like.default)
def _full_like(cx, x, value, **unused):
    return filled(cx, value)


@lowers(aten.new_full.default)
def _new_full(cx, x, size, value, **unused):
    return filled(cx, value)


@lowers(aten.scalar_tensor.default)
def _scalar_tensor(cx, value, **unused):
    return filled(cx, value)


for _overload, _value in [
        (aten.zeros.default, 0), (aten.ones.default, 1),
        (aten.zeros_like.default, 0), (aten.ones_like.default, 1),
        (aten.new_zeros.default, 0), (aten.new_ones.default, 1),
        # Uninitialized memory in PyTorch; zeros here, so that runs repeat.
        (aten.empty.memory_format, 0), (aten.empty_like.default, 0),
        (aten.new_empty.default, 0)]:
    LOWERINGS[_overload] = (lambda value: lambda cx, *a, **k: filled(cx, value))(
        _value)


@lowers(aten.arange.default, aten.arange.start, aten.arange.start_step)
def _arange(cx, *args, **unused):
    start, step = 0, 1
    if len(args) >= 2:
        start = args[0]
    if len(args) >= 3:
        step = args[2]
    out = cx.result_type()
    counting = cx.emit("tandem.iota", [], out, {"axis": mlir.i64(0)})
    if step != 1:
        counting = cx.emit("tandem.mul", [counting, cx.scalar(step, out.element)],
                           out)
    if start != 0:
        counting = cx.emit("tandem.add", [counting, cx.scalar(start, out.element)],
                           out)
    return counting


def diagonal_mask(cx, shape, diagonal, predicate) -> Value:
    """The i1 mask of a rows × columns grid where column − row compares to
    `diagonal` (le 0: causal attention; triu/tril)."""
    grid = TensorType(tuple(shape), "i64")
    rows = cx.emit("tandem.iota", [], grid, {"axis": mlir.i64(0)})
    cols = cx.emit("tandem.iota", [], grid, {"axis": mlir.i64(1)})
    offset = cx.emit("tandem.sub", [cols, rows], grid)
    return cx.emit("tandem.compare", [offset, cx.scalar(diagonal, "i64")],
                   grid.with_element("i1"),
                   {"predicate": f"#tandem.predicate<{predicate}>"})


def triangle(cx, x, diagonal, predicate):
    """Keeps the elements whose column − row compares to `diagonal`."""
    out = cx.result_type()
    keep = diagonal_mask(cx, out.shape[-2:], diagonal, predicate)
    return cx.emit("tandem.select", [keep, x, cx.scalar(0, out.element)], out)


@lowers(aten.triu.default)
def _triu(cx, x, diagonal=0):
    return triangle(cx, x, diagonal, "ge")


@lowers(aten.tril.default)
def _tril(cx, x, diagonal=0):
    return triangle(cx, x, diagonal, "le")


# -- indexing -----------------------------------------------------------------

@lowers(aten.embedding.default)
def _embedding(cx, table, ids, *unused):
    return cx.emit("tandem.embedding", [table, ids], cx.result_type())


@lowers(aten.index_select.default)
def _index_select(cx, x, dim, index):
    return cx.emit("tandem.gather", [x, index], cx.result_type(),
                   {"axis": mlir.i64(normalize_axis(dim, x.type.rank))})


@lowers(aten.index.Tensor)
def _index(cx, x, indices):
    present = [k for k, index in enumerate(indices) if index is not None]
    if len(present) != 1:
        raise cx.error("advanced indexing with several index tensors is not "
                       "supported (one index tensor, on any dimension)")
    index = indices[present[0]]
    if index.type.element == "i1":
        raise cx.error("boolean-mask indexing gives a data-dependent shape")
    return cx.emit("tandem.gather", [x, index], cx.result_type(),
                   {"axis": mlir.i64(present[0])})


# -- no-ops -------------------------------------------------------------------

def no_value(cx, *unused, **unused_kw):
    return None


for _overload in (aten._assert_tensor_metadata.default, aten._assert_scalar.default,
                  aten.sym_constrain_range_for_size.default,
                  aten.sym_constrain_range.default):
    LOWERINGS[_overload] = no_value


@lowers(operator.getitem)
def _getitem(cx, values, index):
    # An Unavailable item is an error only where something uses it.
    return values[index]
