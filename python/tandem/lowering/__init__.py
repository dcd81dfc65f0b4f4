"""ATen → tandem: one lowering per ATen op the frontend understands.

Each lowering receives the node's arguments with graph nodes replaced by the
tandem values already built for them, emits tandem ops through the context
and returns the node's value (a list of values for ops with several results).
What the dialect lacks is decomposed here into what it has (addmm into linear
or matmul + add, hardtanh into maximum/minimum, triu into iota/compare/select,
scaled dot-product attention into its matmuls and softmax...).

`LOWERINGS` maps each ATen overload to its lowering; an op missing from it is
an error naming the op and the model's source line.

This module holds what every lowering shares (the Context, the `lowers`
registry, element types, axis helpers); the lowerings themselves live in one
module per kind of op (elementwise, logic, views, linalg, conv,
normalization, reductions, sources, indexing, sampling, noops), all imported at the end
of this file so that their @lowers decorators fill LOWERINGS.
"""
import torch

from .. import mlir
from ..errors import ExportError
from ..mlir import TensorType, Value
from ..sources import describe

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
        # Weights whose values the export knows: value name -> (weight name,
        # tensor); and how to add one (set by the exporter).
        self.weight_values = {}
        self.add_weight = None
        self._folded = {}  # (weight, its shape, suffix) -> the weight folded

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

    # -- weights --
    def folded(self, value: Value, compute, suffix):
        """`compute(tensor)` run now, at export, on the tensor of `value`
        where it is a weight of the model (a parameter, a buffer or a
        weight folded before), its result a new weight named after it with
        `suffix`; else None, and the lowering emits the ops that compute it
        in every run. (A lowering's own transform of a weight, such as a
        3-D kernel's depth slices, is then no op of the compiled model.)"""
        known = self.weight_values.get(value.name)
        if known is None or self.add_weight is None:
            return None
        # A module applied twice (a shared kernel) folds its weight once; the
        # suffix says what the result depends on besides the weight.
        name, tensor = known
        key = (name, tuple(tensor.shape), suffix)
        if key not in self._folded:
            with torch.no_grad():
                result = compute(tensor).contiguous()
            self._folded[key] = self.add_weight(f"{name}.{suffix}", result)
        return self._folded[key]

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

    def compare(self, predicate, a: Value, b: Value) -> Value:
        """The i1 mask `a <predicate> b` (eq ne lt le gt ge), broadcast."""
        shape = tuple(torch.broadcast_shapes(a.type.shape, b.type.shape))
        return self.emit("tandem.compare", [a, b], TensorType(shape, "i1"),
                         {"predicate": f"#tandem.predicate<{predicate}>"})

    def logical_and(self, a: Value, b: Value) -> Value:
        """a ∧ b for two masks of a's shape."""
        return self.emit("tandem.select", [a, b, self.scalar(False, "i1")], a.type)

    def reshape(self, x: Value, shape) -> Value:
        shape = tuple(int(d) for d in shape)
        if x.type.shape == shape:
            return x
        result = self.emit("tandem.reshape", [x], x.type.with_shape(shape))
        # A weight seen through a reshape (a 1-D kernel as a 2-D one) is
        # still one a lowering may fold.
        known = self.weight_values.get(x.name)
        if known is not None:
            self.weight_values[result.name] = (known[0], known[1].reshape(shape))
        return result


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


def repeated(value, count, default=None):
    """An int, or a list of one or `count` ints, as a `count`-tuple (the
    window and stride arguments of PyTorch's 1-, 2- and 3-D ops)."""
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        value = default
    if isinstance(value, int):
        return (value,) * count
    value = [int(v) for v in value]
    return tuple(value * count) if len(value) == 1 else tuple(value[:count])


def pair(value, default=None):
    """An int or a list of one or two ints as (h, w)."""
    return repeated(value, 2, default)


# The lowerings, one module per kind of op. Imported last: they import the
# names above from this package, and importing them is what registers them.
from . import (elementwise, logic, views, linalg, conv,  # noqa: E402
               normalization, reductions, sources, indexing, sampling, noops)

SECTIONS = (elementwise, logic, views, linalg, conv, normalization, reductions,
            sources, indexing, sampling, noops)
