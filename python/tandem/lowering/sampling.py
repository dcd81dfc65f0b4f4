"""Sampling at computed positions: grid_sample (spatial transformers, optical
flow warps) as gathers of the input's pixels at the grid's corners, blended
by the bilinear weights, each step as ATen's grid_sampler_2d computes it."""
from .. import mlir
from ..mlir import TensorType
from . import aten, lowers
from .views import slice_along, transpose

BILINEAR, NEAREST = 0, 1
ZEROS, BORDER = 0, 1


class Emitter:
    """Elementwise ops on values of one shape, spelled as arithmetic."""

    def __init__(self, cx, type):
        self.cx, self.type = cx, type

    def op(self, name, *operands, type=None):
        return self.cx.emit(name, list(operands), type or self.type)

    def const(self, value):
        return self.cx.scalar(value, self.type.element)

    def add(self, a, b):
        return self.op("tandem.add", a, b)

    def sub(self, a, b):
        return self.op("tandem.sub", a, b)

    def mul(self, a, b):
        return self.op("tandem.mul", a, b)



@lowers(aten.grid_sampler_2d.default)
def _grid_sampler_2d(cx, x, grid, interpolation, padding, align_corners):
    """x [N, C, H, W], grid [N, Ho, Wo, 2] of (x, y) in [-1, 1] →
    [N, C, Ho, Wo]: each output the input at that position, bilinear (the
    four neighbours) or nearest (half to even), outside the image zeros or
    the border's value. A NaN position gives NaN with border padding (what
    PyTorch gives there depends on which of its kernels runs) and zeros
    with zeros padding, as PyTorch does."""
    out = cx.result_type()
    if interpolation not in (BILINEAR, NEAREST):
        raise cx.error("bicubic grid sampling is not supported (bilinear and "
                       "nearest are)")
    if padding not in (ZEROS, BORDER):
        raise cx.error("grid sampling with padding_mode='reflection' is not "
                       "supported (zeros and border are)")
    n, channels, height, width = x.type.shape
    _, rows, columns, _ = grid.type.shape
    grid = cx.cast(grid, out.element)
    plane = TensorType((n, rows, columns), out.element)
    e = Emitter(cx, plane)

    def coordinate(axis, size):
        """The grid's axis-th coordinate in pixels, clipped for border."""
        g = cx.reshape(slice_along(cx, grid, 3, axis, axis + 1), plane.shape)
        if align_corners:  # ((g + 1) / 2) · (size − 1)
            pixels = e.mul(e.op("tandem.div", e.add(g, e.const(1.0)), e.const(2.0)),
                           e.const(size - 1.0))
        else:  # ((g + 1) · size − 1) / 2
            pixels = e.op("tandem.div", e.sub(e.mul(e.add(g, e.const(1.0)),
                                                    e.const(float(size))),
                                              e.const(1.0)), e.const(2.0))
        if padding == BORDER:
            pixels = e.op("tandem.minimum", e.op("tandem.maximum", pixels,
                                                 e.const(0.0)),
                          e.const(size - 1.0))
        return pixels

    ix, iy = coordinate(0, width), coordinate(1, height)
    # Flattened [N·H·W, C] rows, picked by n·H·W + y·W + x.
    rows_of_x = cx.reshape(transpose(cx, x, [0, 2, 3, 1]), (n * height * width, channels))
    index_type = plane.with_element("i64")
    batch = cx.emit("tandem.iota", [], index_type, {"axis": mlir.i64(0)})
    base = cx.emit("tandem.mul", [batch, cx.scalar(height * width, "i64")], index_type)

    def corner(px, py):
        """The input at integer-valued positions (px, py), zeros outside."""
        inside = None
        for value, size in ((px, width), (py, height)):
            for test in (cx.compare("ge", value, e.const(0.0)),
                         cx.compare("le", value, e.const(size - 1.0))):
                inside = test if inside is None else cx.logical_and(inside, test)
        clamped = [cx.cast(e.op("tandem.minimum", e.op("tandem.maximum", value,
                                                       e.const(0.0)),
                                e.const(size - 1.0)), "i64")
                   for value, size in ((px, width), (py, height))]
        linear = cx.emit("tandem.add", [base, cx.emit("tandem.add", [
            cx.emit("tandem.mul", [clamped[1], cx.scalar(width, "i64")], index_type),
            clamped[0]], index_type)], index_type)
        picked = cx.emit("tandem.gather", [rows_of_x, linear],
                         TensorType((n, rows, columns, channels), out.element),
                         {"axis": mlir.i64(0)})
        mask = cx.reshape(inside, (n, rows, columns, 1))
        zeros = cx.scalar(0.0, out.element)
        return cx.emit("tandem.select", [mask, picked, zeros], picked.type)

    def spread(weight):
        return cx.reshape(weight, (n, rows, columns, 1))

    if interpolation == NEAREST:
        total = corner(e.op("tandem.round", ix), e.op("tandem.round", iy))
    else:
        x0, y0 = e.op("tandem.floor", ix), e.op("tandem.floor", iy)
        x1, y1 = e.add(x0, e.const(1.0)), e.add(y0, e.const(1.0))
        wx0, wx1 = e.sub(x1, ix), e.sub(ix, x0)
        wy0, wy1 = e.sub(y1, iy), e.sub(iy, y0)
        total = None
        for px, py, weight in ((x0, y0, e.mul(wx0, wy0)), (x1, y0, e.mul(wx1, wy0)),
                               (x0, y1, e.mul(wx0, wy1)), (x1, y1, e.mul(wx1, wy1))):
            term = corner(px, py)
            term = cx.emit("tandem.mul", [term, spread(weight)], term.type)
            total = term if total is None else cx.emit("tandem.add", [total, term],
                                                        term.type)
    return transpose(cx, total, [0, 3, 1, 2])
