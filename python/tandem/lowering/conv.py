"""Convolution (conv1d through conv2d) and pooling: max and average pooling
with ceil_mode and PyTorch's divisors, adaptive average pooling (of any sizes:
by avg_pool2d where the output divides the input, else as two GEMMs with
constant averaging matrices)."""
import math

from .. import mlir
from . import Unavailable, aten, lowers, pair
from .elementwise import scaled_operand
from .views import constant

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
        return _adaptive_by_matmuls(cx, x, out)
    kernel = (height // oh, width // ow)
    return cx.emit("tandem.avg_pool2d", [x], out,
                   {"kernel": mlir.i64_array(kernel),
                    "strides": mlir.i64_array(kernel)})


def averaging_matrix(in_size, out_size):
    """Row i averages PyTorch's adaptive window for output i: inputs
    floor(i·in/out) up to ceil((i+1)·in/out), which overlap where out does
    not divide in."""
    rows = []
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -(-((i + 1) * in_size) // out_size)
        rows.append([1.0 / (end - start) if start <= k < end else 0.0
                     for k in range(in_size)])
    return rows


def _adaptive_by_matmuls(cx, x, out):
    # Windows that do not tile the input (vgg's 7x7 from a small image, any
    # size PyTorch allows): the average over a window is separable, so it is
    # A_h · x · A_wᵀ with constant averaging matrices, two GEMMs.
    n, channels, height, width = x.type.shape
    oh, ow = out.shape[2:]
    def matrix(rows, shape):
        flat = constant(cx, [v for row in rows for v in row], "f32")
        return cx.cast(cx.reshape(flat, shape), out.element)
    columns = [list(c) for c in zip(*averaging_matrix(width, ow))]  # W x OW
    across = cx.emit("tandem.matmul", [x, matrix(columns, (width, ow))],
                     out.with_shape((n, channels, height, ow)))
    return cx.emit("tandem.matmul", [matrix(averaging_matrix(height, oh), (oh, height)),
                                     across], out)
