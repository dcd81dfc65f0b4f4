"""Sources: tensors made from nothing but their shape (full, zeros, ones,
empty, arange) and the triangular masks of triu/tril."""
from .. import mlir
from ..mlir import TensorType, Value
from . import LOWERINGS, aten, lowers

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
