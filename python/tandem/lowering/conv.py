"""Convolution (conv1d through conv2d; transposed convolution decomposed
onto them) and pooling: max and average pooling with ceil_mode and PyTorch's
divisors, adaptive average pooling (of any sizes: by avg_pool2d where the
output divides the input, else as two GEMMs with constant averaging
matrices)."""
import math

from .. import mlir
from . import Unavailable, aten, lowers, pair, repeated
from .elementwise import scaled_operand
from .views import constant, constant_pad, flip, slice_along, transpose

@lowers(aten.convolution.default)
def _convolution(cx, x, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups):
    out = cx.result_type()
    if transposed:
        return _conv_transpose(cx, x, weight, bias, stride, padding, dilation,
                               output_padding, groups, out)
    if x.type.rank == 3:  # conv1d as a conv2d of height 1
        x = cx.reshape(x, x.type.shape[:2] + (1,) + x.type.shape[2:])
        weight = cx.reshape(weight, weight.type.shape[:2] + (1,) +
                            weight.type.shape[2:])
        stride, padding, dilation = ([1] + list(stride), [0] + list(padding),
                                     [1] + list(dilation))
        result2d = out.with_shape(out.shape[:2] + (1,) + out.shape[2:])
        return cx.reshape(_conv2d(cx, x, weight, bias, stride, padding, dilation,
                                  groups, result2d), out.shape)
    if x.type.rank == 5:
        return _conv3d(cx, x, weight, bias, stride, padding, dilation, groups, out)
    if x.type.rank != 4:
        raise cx.error(f"{x.type.rank - 2}-D convolution: Tandem has conv2d "
                       "(and conv1d and conv3d through it)")
    return _conv2d(cx, x, weight, bias, stride, padding, dilation, groups, out)


def triple(value, default=None):
    """An int or a list of one or three ints as (d, h, w)."""
    return repeated(value, 3, default)


def depth_taps(cx, x, taps, stride, dilation, padding, depth_out, fill=0.0):
    """For each tap t of a depth window, the frames it meets at every output
    depth, as [N·D_out, C, H, W] (x: [N, C, D, H, W], padded in depth by
    `padding` frames of `fill`)."""
    n, channels, _, height, width = x.type.shape
    if padding:
        x = constant_pad(cx, x, [0, 0, 0, 0, padding, padding], fill)
    frames = transpose(cx, x, [0, 2, 1, 3, 4])  # [N, D, C, H, W]
    result = []
    for t in range(taps):
        start = t * dilation
        picked = slice_along(cx, frames, 1, start,
                             start + (depth_out - 1) * stride + 1, stride)
        result.append(cx.reshape(picked, (n * depth_out, channels, height, width)))
    return result


def from_frames(cx, y, n, depth_out):
    """[N·D_out, C, H, W] back to [N, C, D_out, H, W]."""
    _, channels, height, width = y.type.shape
    frames = cx.reshape(y, (n, depth_out, channels, height, width))
    return transpose(cx, frames, [0, 2, 1, 3, 4])


def _conv3d(cx, x, weight, bias, stride, padding, dilation, groups, out):
    """3-D convolution as a sum over the kernel's depth taps of 2-D
    convolutions of the frames each tap meets (the batch and output depth
    folded together): the same multiply-adds as a 3-D kernel."""
    stride, padding, dilation = triple(stride), triple(padding), triple(dilation)
    n, depth_out = x.type.shape[0], out.shape[2]
    outputs, per_group, taps, kh, kw = weight.type.shape
    planes = out.with_shape((n * depth_out, outputs) + out.shape[3:])
    total = None
    for t, frames in enumerate(depth_taps(cx, x, taps, stride[0], dilation[0],
                                          padding[0], depth_out)):
        # A weight's depth slices are cut once, at export.
        kernel = cx.folded(weight, lambda w, t=t: w[:, :, t], f"depth{t}") or \
            cx.reshape(slice_along(cx, weight, 2, t, t + 1),
                       (outputs, per_group, kh, kw))
        y = _conv2d(cx, frames, kernel, bias if t == 0 else None, stride[1:],
                    padding[1:], dilation[1:], groups, planes)
        total = y if total is None else cx.emit("tandem.add", [total, y], planes)
    return from_frames(cx, total, n, depth_out)


@lowers(aten.max_pool3d_with_indices.default, aten.max_pool3d.default)
def _max_pool3d(cx, x, kernel, stride=None, padding=0, dilation=1,
                ceil_mode=False):
    """Each frame max-pooled in 2-D, then the maximum over each depth
    window's frames."""
    multiple = cx.node.target == aten.max_pool3d_with_indices.default
    out = cx.result_type(0 if multiple else None)
    kernel = triple(kernel)
    stride = triple(stride, kernel)
    padding, dilation = triple(padding), triple(dilation)
    if ceil_mode or dilation != (1, 1, 1):
        raise cx.error("3-D max pooling with ceil_mode or dilation is not "
                       "supported")
    n, depth_out = x.type.shape[0], out.shape[2]
    pooled = None
    for frames in depth_taps(cx, x, kernel[0], stride[0], 1, padding[0],
                             depth_out, fill=-math.inf):
        planes = frames.type.with_shape(frames.type.shape[:2] + out.shape[3:])
        y = _max_pool(cx, frames, kernel[1:], stride[1:], padding[1:], 1, False,
                      planes)
        pooled = y if pooled is None else cx.emit("tandem.maximum", [pooled, y],
                                                  planes)
    result = from_frames(cx, pooled, n, depth_out)
    return [result, Unavailable("the indices of max_pool3d")] if multiple else result


@lowers(aten.avg_pool3d.default)
def _avg_pool3d(cx, x, kernel, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """Each frame average-pooled in 2-D (with PyTorch's divisors in height
    and width), then the frames of each depth window averaged with the depth
    divisor: PyTorch's divisor is the product of the three."""
    out = cx.result_type()
    kernel = triple(kernel)
    stride = triple(stride, kernel)
    padding = triple(padding)
    if ceil_mode or divisor_override is not None:
        raise cx.error("3-D average pooling with ceil_mode or divisor_override "
                       "is not supported")
    n, depth, depth_out = x.type.shape[0], x.type.shape[2], out.shape[2]
    total = None
    for frames in depth_taps(cx, x, kernel[0], stride[0], 1, padding[0], depth_out):
        planes = frames.type.with_shape(frames.type.shape[:2] + out.shape[3:])
        y = avg_pool2d(cx, frames, kernel[1:], stride[1:], padding[1:], False,
                       count_include_pad, None, planes)
        total = y if total is None else cx.emit("tandem.add", [total, y], planes)
    divisors = window_divisors(depth, depth_out, kernel[0], stride[0], padding[0],
                               count_include_pad)
    result = from_frames(cx, total, n, depth_out)
    factor = cx.reshape(cx.cast(constant(cx, [1.0 / d for d in divisors], "f32"),
                                out.element), (1, 1, depth_out, 1, 1))
    return cx.emit("tandem.mul", [result, factor], out)


def _conv_transpose(cx, x, weight, bias, stride, padding, dilation,
                    output_padding, groups, out):
    """ConvTranspose1d/2d, decomposed exactly onto what the dialect has. A
    kernel as large as its stride (UNet's 2x2, stride 2) places one block
    per input pixel: a GEMM over the channels, then the blocks interleaved.
    Any other is the convolution it is the gradient of: the input spread
    by the stride (zeros between its pixels), padded by the kernel's extent
    less the padding, convolved with the kernel flipped and its in and out
    channels swapped (stride^2 more multiply-adds than a dedicated kernel
    would do, most of them by zero)."""
    if x.type.rank == 3:  # 1-D as 2-D of height 1
        as_2d = cx.reshape(x, x.type.shape[:2] + (1,) + x.type.shape[2:])
        kernel = cx.reshape(weight, weight.type.shape[:2] + (1,) +
                            weight.type.shape[2:])
        result = _conv_transpose(
            cx, as_2d, kernel, bias, [1] + list(stride), [0] + list(padding),
            [1] + list(dilation), [0] + list(output_padding), groups,
            out.with_shape(out.shape[:2] + (1,) + out.shape[2:]))
        return cx.reshape(result, out.shape)
    if x.type.rank != 4:
        raise cx.error(f"{x.type.rank - 2}-D transposed convolution: Tandem has "
                       "it in 1-D and 2-D")
    stride, padding = pair(stride), pair(padding)
    dilation, extra = pair(dilation), pair(output_padding)
    kernel = weight.type.shape[2:]
    if groups == 1 and dilation == (1, 1) and tuple(kernel) == stride:
        y = _transpose_blocks(cx, x, weight)
    else:  # padding, output_padding and bias all go into the convolution
        return _transpose_as_convolution(cx, x, weight, bias, stride, dilation,
                                         groups, padding, extra, out)
    # The padding crops the full result; output_padding grows it at the
    # bottom and right (rows no input reaches: the bias alone).
    y = constant_pad(cx, y, [-padding[1], extra[1] - padding[1],
                             -padding[0], extra[0] - padding[0]])
    if bias is not None:
        y = cx.emit("tandem.add", [y, cx.reshape(bias, (out.shape[1], 1, 1))], out)
    return y


def _transpose_blocks(cx, x, weight):
    """Kernel = stride: y[n, o, i·s+a, j·t+b] = Σ_c x[n, c, i, j]·w[c, o, a, b]."""
    n, channels, height, width = x.type.shape
    _, outputs, kh, kw = weight.type.shape
    rows = cx.reshape(transpose(cx, x, [0, 2, 3, 1]), (n * height * width, channels))
    matrix = cx.reshape(weight, (channels, outputs * kh * kw))
    blocks = cx.emit("tandem.matmul", [rows, matrix], rows.type.with_shape(
        (n * height * width, outputs * kh * kw)))
    blocks = cx.reshape(blocks, (n, height, width, outputs, kh, kw))
    placed = transpose(cx, blocks, [0, 3, 1, 4, 2, 5])
    return cx.reshape(placed, (n, outputs, height * kh, width * kw))


def _transpose_as_convolution(cx, x, weight, bias, stride, dilation, groups,
                              padding, extra, out):
    n, channels, height, width = x.type.shape
    _, per_group, kh, kw = weight.type.shape
    if stride != (1, 1):  # zeros between the pixels: [n, c, h, s, w, t]
        spread = cx.reshape(x, (n, channels, height, 1, width, 1))
        spread = constant_pad(cx, spread, [0, stride[1] - 1, 0, 0,
                                           0, stride[0] - 1])
        x = cx.reshape(spread, (n, channels, height * stride[0], width * stride[1]))
    # Around it, the kernel's extent less the padding; the spread input's
    # last stride - 1 rows and columns of zeros are not part of it.
    reach = [dilation[k] * (weight.type.shape[2 + k] - 1) - padding[k]
             for k in range(2)]
    x = constant_pad(cx, x, [reach[1], reach[1] + extra[1] - (stride[1] - 1),
                             reach[0], reach[0] + extra[0] - (stride[0] - 1)])
    # [c_in, c_out/g, kh, kw] -> [c_out, c_in/g, kh, kw], flipped (once, at
    # export, where the weight is the model's).
    def swap(w):
        w = w.reshape(groups, channels // groups, per_group, kh, kw)
        return w.transpose(1, 2).reshape(groups * per_group, channels // groups,
                                         kh, kw).flip(2, 3)
    swapped = cx.folded(weight, swap, f"flipped.g{groups}")
    if swapped is None:
        swapped = cx.reshape(weight, (groups, channels // groups, per_group, kh, kw))
        swapped = transpose(cx, swapped, [0, 2, 1, 3, 4])
        swapped = cx.reshape(swapped, (groups * per_group, channels // groups, kh, kw))
        swapped = flip(cx, swapped, [2, 3])
    return _conv2d(cx, x, swapped, bias, (1, 1), (0, 0), dilation, groups, out)


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
    return avg_pool2d(cx, x, kernel, stride, padding, ceil_mode, count_include_pad,
                      divisor_override, cx.result_type())


def window_divisors(size, count, kernel, stride, padding, count_include_pad):
    """PyTorch's average-pooling divisor of each of `count` windows along an
    axis of `size`: the window clipped to the padded axis, or to the axis
    itself without count_include_pad."""
    divisors = []
    for o in range(count):
        start = o * stride - padding
        end = min(start + kernel, size + padding)
        if not count_include_pad:
            start, end = max(start, 0), min(end, size)
        divisors.append(end - start)
    return divisors


def avg_pool2d(cx, x, kernel, stride, padding, ceil_mode, count_include_pad,
               divisor_override, out):
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
        divisors = window_divisors(x.type.shape[axis], out.shape[axis], kernel[k],
                                   stride[k], padding[k], count_include_pad)
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
    return adaptive_avg_pool2d(cx, x, cx.result_type())


def adaptive_avg_pool2d(cx, x, out):
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


@lowers(aten._adaptive_avg_pool3d.default, aten.adaptive_avg_pool3d.default)
def _adaptive_avg_pool3d(cx, x, output_size):
    """Separable: PyTorch's depth windows averaged by a constant matrix (one
    GEMM), then each output depth's frames pooled in 2-D."""
    out = cx.result_type()
    n, channels, depth, height, width = x.type.shape
    od, oh, ow = out.shape[2:]
    if (od, oh, ow) == (1, 1, 1):
        return cx.emit("tandem.reduce_mean", [x], out,
                       {"axes": mlir.i64_array([2, 3, 4]), "keepdims": "true"})
    frames = x
    if od != depth:
        flat = constant(cx, [v for row in averaging_matrix(depth, od) for v in row],
                        "f32")
        averaging = cx.cast(cx.reshape(flat, (od, depth)), out.element)
        frames = cx.emit("tandem.matmul", [averaging, cx.reshape(
            x, (n, channels, depth, height * width))],
            out.with_shape((n, channels, od, height * width)))
    planes = cx.reshape(frames, (n, channels * od, height, width))
    pooled = adaptive_avg_pool2d(cx, planes, out.with_shape(
        (n, channels * od, oh, ow)))
    return cx.reshape(pooled, out.shape)


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
