"""The ONNX operators Tandem imports, each computed with PyTorch ops (which
`torch.export` then traces and the ATen lowering maps onto the dialect).

Each function takes the node (attributes, static inputs) and its tensor
inputs in ONNX's order; inputs listed in `static=` are read from the node
instead (they must be known when the model is compiled). Semantics follow
the ONNX operator specification for opset 13 onwards; where an attribute
changed into an input (Squeeze's axes at 13, the reductions' at 18), both
spellings are read.
"""
import math

import torch
import torch.nn.functional as F

from .node import OnnxError, operator

INT_BOUND = 1 << 62  # ends beyond this (INT64_MAX and kin) mean "to the end"


def onnx_dtype(node, code):
    from .model import dtype_of
    return dtype_of(int(code), f"{node.describe()}: the type")


def axis_of(node, axis, rank):
    axis = int(axis)
    if not -rank <= axis < max(rank, 1):
        raise OnnxError(node, f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


# -- elementwise ---------------------------------------------------------------

UNARY = {
    "Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh,
    "Exp": torch.exp, "Log": torch.log, "Sqrt": torch.sqrt,
    "Reciprocal": torch.reciprocal, "Neg": torch.neg, "Abs": torch.abs,
    "Erf": torch.erf, "Floor": torch.floor, "Ceil": torch.ceil,
    "Round": torch.round, "Not": torch.logical_not, "Sin": torch.sin,
    "Cos": torch.cos, "Sign": torch.sign, "IsNaN": torch.isnan,
    "Softplus": F.softplus, "Softsign": F.softsign, "Mish": F.mish,
    "HardSwish": F.hardswish,
}
for _name, _function in UNARY.items():
    operator(_name)(lambda node, x, f=_function: f(x))


@operator("Identity", "Dropout")
def identity(node, x, *unused):
    # Dropout's ratio and training_mode inputs: inference ignores them
    # (a training_mode known to be true is refused).
    if node.op_type == "Dropout" and node.has_input(2):
        training = node.static_value(2)
        if training is None or any(training[1]):
            raise OnnxError(node, "dropout in training mode: Tandem compiles "
                                  "inference")
    return x


def integer_division(a, b):
    if a.dtype.is_floating_point:
        return torch.div(a, b)
    return torch.div(a, b, rounding_mode="trunc")  # ONNX's integer Div


BINARY = {
    "Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": integer_division,
    "Equal": torch.eq, "Less": torch.lt, "LessOrEqual": torch.le,
    "Greater": torch.gt, "GreaterOrEqual": torch.ge,
    "And": torch.logical_and, "Or": torch.logical_or, "Xor": torch.logical_xor,
}
for _name, _function in BINARY.items():
    operator(_name)(lambda node, a, b, f=_function: f(a, b))


@operator("Pow")
def power(node, base, exponent):
    # The result has the base's type whatever the exponent's.
    return torch.pow(base, exponent).to(base.dtype)


@operator("Mod")
def modulo(node, a, b):
    return torch.fmod(a, b) if node.attr("fmod", 0) else torch.remainder(a, b)


@operator("Max", "Min", "Sum", "Mean")
def variadic(node, *xs):
    xs = [x for x in xs if x is not None]
    combine = {"Max": torch.maximum, "Min": torch.minimum, "Sum": torch.add,
               "Mean": torch.add}[node.op_type]
    result = xs[0]
    for x in xs[1:]:
        result = combine(result, x)
    return result / len(xs) if node.op_type == "Mean" and len(xs) > 1 else result


@operator("Where")
def where(node, condition, x, y):
    return torch.where(condition, x, y)


@operator("Cast")
def cast(node, x):
    return x.to(onnx_dtype(node, node.attr("to")))


@operator("CastLike")
def cast_like(node, x, target):
    return x.to(target.dtype)


@operator("Clip", static=(1, 2))
def clip(node, x, *unused):
    low, high = node.scalar(1), node.scalar(2)
    if low is None and high is None:
        return x
    return torch.clamp(x, low, high)


@operator("LeakyRelu")
def leaky_relu(node, x):
    return F.leaky_relu(x, node.attr("alpha", 0.01))


@operator("Elu")
def elu(node, x):
    return F.elu(x, node.attr("alpha", 1.0))


@operator("Celu")
def celu(node, x):
    return F.celu(x, node.attr("alpha", 1.0))


@operator("Selu")
def selu(node, x):
    alpha = node.attr("alpha", 1.67326319217681884765625)
    gamma = node.attr("gamma", 1.05070102214813232421875)
    return F.elu(x, alpha) * gamma


@operator("HardSigmoid")
def hard_sigmoid(node, x):
    alpha, beta = node.attr("alpha", 0.2), node.attr("beta", 0.5)
    if math.isclose(alpha, 1 / 6, rel_tol=1e-6) and beta == 0.5:
        return F.hardsigmoid(x)
    return torch.clamp(x * alpha + beta, 0.0, 1.0)


@operator("ThresholdedRelu")
def thresholded_relu(node, x):
    return torch.where(x > node.attr("alpha", 1.0), x, torch.zeros_like(x))


@operator("Gelu")
def gelu(node, x):
    return F.gelu(x, approximate=node.attr("approximate", "none"))


@operator("PRelu")
def prelu(node, x, slope):
    return torch.where(x >= 0, x, x * slope)


# -- linear algebra ------------------------------------------------------------

@operator("MatMul")
def matmul(node, a, b):
    return torch.matmul(a, b)


@operator("Gemm")
def gemm(node, a, b, c=None):
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    trans_a, trans_b = node.attr("transA", 0), node.attr("transB", 0)
    if (trans_b and not trans_a and alpha == 1.0 and beta == 1.0 and
            (c is None or c.dim() == 1)):
        return F.linear(a, b, c)  # nn.Linear as exporters write it
    product = torch.matmul(a.t() if trans_a else a, b.t() if trans_b else b)
    if alpha != 1.0:
        product = product * alpha
    if c is None or beta == 0.0:
        return product
    return product + (c * beta if beta != 1.0 else c)


@operator("Einsum")
def einsum(node, *xs):
    return torch.einsum(node.attr("equation"), *xs)


# -- convolution and pooling ---------------------------------------------------

def spatial_pads(node, x, kernel, strides, dilations):
    """(begin, end) padding per spatial axis from `pads` or `auto_pad`."""
    spatial = x.dim() - 2
    auto = node.attr("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begins, ends = [], []
        for size, k, s, d in zip(x.shape[2:], kernel, strides, dilations):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small, large = total // 2, total - total // 2
            begins.append(small if auto == "SAME_UPPER" else large)
            ends.append(large if auto == "SAME_UPPER" else small)
        return begins, ends
    if auto == "VALID":
        return [0] * spatial, [0] * spatial
    if auto != "NOTSET":
        raise OnnxError(node, f"unknown auto_pad '{auto}'")
    pads = node.ints_attr("pads", [0] * (2 * spatial))
    return pads[:spatial], pads[spatial:]


def torch_pad_order(begins, ends):
    """ONNX's (begins, ends) per axis as F.pad's list: last axis first."""
    order = []
    for begin, end in zip(reversed(begins), reversed(ends)):
        order += [begin, end]
    return order


CONVOLUTIONS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


@operator("Conv")
def conv(node, x, weight, bias=None):
    spatial = x.dim() - 2
    if spatial not in CONVOLUTIONS:
        raise OnnxError(node, f"a {spatial}-D convolution is not supported")
    kernel = node.ints_attr("kernel_shape", list(weight.shape[2:]))
    strides = node.ints_attr("strides", [1] * spatial)
    dilations = node.ints_attr("dilations", [1] * spatial)
    begins, ends = spatial_pads(node, x, kernel, strides, dilations)
    padding = begins
    if begins != ends:  # asymmetric: pad first
        x = F.pad(x, torch_pad_order(begins, ends))
        padding = [0] * spatial
    return CONVOLUTIONS[spatial](x, weight, bias, strides, padding, dilations,
                                 node.attr("group", 1))


@operator("ConvTranspose")
def conv_transpose(node, x, weight, bias=None):
    spatial = x.dim() - 2
    transposed = {1: F.conv_transpose1d, 2: F.conv_transpose2d,
                  3: F.conv_transpose3d}.get(spatial)
    if transposed is None:
        raise OnnxError(node, f"a {spatial}-D transposed convolution is not supported")
    if node.attr("auto_pad", "NOTSET") != "NOTSET" or "output_shape" in node.attributes:
        raise OnnxError(node, "auto_pad and output_shape are not supported on "
                              "ConvTranspose: give pads")
    strides = node.ints_attr("strides", [1] * spatial)
    dilations = node.ints_attr("dilations", [1] * spatial)
    output_padding = node.ints_attr("output_padding", [0] * spatial)
    pads = node.ints_attr("pads", [0] * (2 * spatial))
    begins, ends = pads[:spatial], pads[spatial:]
    y = transposed(x, weight, bias, strides, 0, output_padding,
                   node.attr("group", 1), dilations)
    if any(begins) or any(ends):  # padding crops the full output
        index = [slice(None), slice(None)]
        index += [slice(b, size - e) for b, e, size in zip(begins, ends, y.shape[2:])]
        y = y[tuple(index)]
    return y


def pool_geometry(node, x):
    spatial = x.dim() - 2
    kernel = node.ints_attr("kernel_shape")
    if kernel is None or len(kernel) != spatial:
        raise OnnxError(node, f"kernel_shape must list {spatial} sizes")
    strides = node.ints_attr("strides", [1] * spatial)
    dilations = node.ints_attr("dilations", [1] * spatial)
    begins, ends = spatial_pads(node, x, kernel, strides, dilations)
    return spatial, kernel, strides, dilations, begins, ends


@operator("MaxPool")
def max_pool(node, x):
    spatial, kernel, strides, dilations, begins, ends = pool_geometry(node, x)
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[spatial]
    padding = begins
    if begins != ends or any(2 * b > k for b, k in zip(begins, kernel)):
        x = F.pad(x, torch_pad_order(begins, ends), value=-math.inf)
        padding = [0] * spatial
    return pool(x, kernel, strides, padding, dilations,
                ceil_mode=bool(node.attr("ceil_mode", 0)))


@operator("AveragePool")
def average_pool(node, x):
    spatial, kernel, strides, dilations, begins, ends = pool_geometry(node, x)
    if any(d != 1 for d in dilations):
        raise OnnxError(node, "dilated average pooling is not supported")
    pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[spatial]
    ceil_mode = bool(node.attr("ceil_mode", 0))
    include_pad = bool(node.attr("count_include_pad", 0))
    if begins == ends and all(2 * b <= k for b, k in zip(begins, kernel)):
        return pool(x, kernel, strides, begins, ceil_mode, include_pad)
    padded = F.pad(x, torch_pad_order(begins, ends))
    total = pool(padded, kernel, strides, 0, ceil_mode, True)
    if include_pad:
        return total
    # Excluding the padding: divide by the share of each window that lies
    # on the input (a pool of ones padded the same way).
    ones = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype, device=x.device)
    share = pool(F.pad(ones, torch_pad_order(begins, ends)), kernel, strides, 0,
                 ceil_mode, True)
    return total / share


@operator("GlobalAveragePool")
def global_average_pool(node, x):
    return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)


@operator("GlobalMaxPool")
def global_max_pool(node, x):
    return x.amax(dim=tuple(range(2, x.dim())), keepdim=True)


# -- normalization -------------------------------------------------------------

@operator("BatchNormalization")
def batch_norm(node, x, scale, bias, mean, var):
    if node.attr("training_mode", 0):
        raise OnnxError(node, "batch normalization in training mode: Tandem "
                              "compiles inference")
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0,
                        node.attr("epsilon", 1e-5))


@operator("InstanceNormalization")
def instance_norm(node, x, scale, bias):
    return F.instance_norm(x, weight=scale, bias=bias,
                           eps=node.attr("epsilon", 1e-5))


@operator("LayerNormalization")
def layer_norm(node, x, scale, bias=None):
    axis = axis_of(node, node.attr("axis", -1), x.dim())
    shape = tuple(x.shape[axis:])
    if tuple(scale.shape) != shape:
        scale = scale.expand(shape)
    if bias is not None and tuple(bias.shape) != shape:
        bias = bias.expand(shape)
    return F.layer_norm(x, shape, scale, bias, node.attr("epsilon", 1e-5))


@operator("GroupNormalization")
def group_norm(node, x, scale, bias):
    groups = node.attr("num_groups")
    channels = x.shape[1]
    if node.opset < 21 and scale.shape[0] == groups and groups != channels:
        # Opset 18's scale and bias are per group: spread them per channel.
        per = channels // groups
        scale = scale.reshape(groups, 1).expand(groups, per).reshape(channels)
        bias = bias.reshape(groups, 1).expand(groups, per).reshape(channels)
    return F.group_norm(x, groups, scale, bias, node.attr("epsilon", 1e-5))


@operator("Softmax", "LogSoftmax")
def softmax(node, x):
    axis = axis_of(node, node.attr("axis", -1), x.dim())
    function = torch.softmax if node.op_type == "Softmax" else torch.log_softmax
    return function(x, axis)


# -- shapes and views ----------------------------------------------------------

@operator("Shape", shape_only=True)
def shape(node, x):
    dims = list(x.shape)
    rank = len(dims)
    start, end = node.attr("start", 0), node.attr("end", rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return torch.tensor(dims[start:end], dtype=torch.int64)


@operator("Size", shape_only=True)
def size(node, x):
    return torch.tensor(x.numel(), dtype=torch.int64)


@operator("Constant")
def constant(node):
    for name in ("value_float", "value_int"):
        if name in node.attributes:
            dtype = torch.float32 if name == "value_float" else torch.int64
            return torch.tensor(node.attributes[name], dtype=dtype)
    for name in ("value_floats", "value_ints"):
        if name in node.attributes:
            dtype = torch.float32 if name == "value_floats" else torch.int64
            return torch.tensor(list(node.attributes[name]), dtype=dtype)
    if "value" in node.attributes:
        return node.tensor_attr("value")
    raise OnnxError(node, "a Constant without a tensor value (sparse or string "
                          "constants are not supported)")


@operator("ConstantOfShape", static=(0,))
def constant_of_shape(node, unused):
    shape = node.ints(0)
    value = node.tensor_attr("value") if "value" in node.attributes else \
        torch.zeros(1, dtype=torch.float32)
    return torch.full(shape, value.reshape(-1)[0].item(), dtype=value.dtype)


@operator("Range", static=(0, 1, 2))
def range_(node, *unused):
    # The result has the inputs' type.
    return torch.arange(node.scalar(0), node.scalar(1), node.scalar(2),
                        dtype=node.static_dtype(0))


@operator("Reshape", static=(1,))
def reshape(node, x, unused):
    target = node.ints(1)
    allow_zero = node.attr("allowzero", 0)
    shape = [x.shape[k] if d == 0 and not allow_zero and k < x.dim() else d
             for k, d in enumerate(target)]
    return x.reshape(shape)


@operator("Flatten")
def flatten(node, x):
    axis = int(node.attr("axis", 1))  # in [-rank, rank]
    if not -x.dim() <= axis <= x.dim():
        raise OnnxError(node, f"axis {axis} is out of range for rank {x.dim()}")
    axis = axis + x.dim() if axis < 0 else axis
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


def axes_input_or_attribute(node, k, changed_at):
    """Axes read from input k (opset >= changed_at) or from the attribute."""
    if node.opset >= changed_at:
        return node.ints(k)
    return node.ints_attr("axes")


@operator("Squeeze", static=(1,))
def squeeze(node, x, unused=None):
    axes = axes_input_or_attribute(node, 1, 13)
    if axes is None:
        axes = [k for k, d in enumerate(x.shape) if d == 1]
    axes = {axis_of(node, a, x.dim()) for a in axes}
    for a in axes:
        if x.shape[a] != 1:
            raise OnnxError(node, f"cannot squeeze axis {a} of size {x.shape[a]}")
    return x.reshape([d for k, d in enumerate(x.shape) if k not in axes])


@operator("Unsqueeze", static=(1,))
def unsqueeze(node, x, unused=None):
    axes = axes_input_or_attribute(node, 1, 13)
    rank = x.dim() + len(axes)
    axes = sorted(axis_of(node, a, rank) for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return x.reshape(shape)


@operator("Transpose")
def transpose(node, x):
    perm = node.ints_attr("perm", list(reversed(range(x.dim()))))
    return x.permute(perm)


@operator("Concat")
def concat(node, *xs):
    xs = [x for x in xs if x is not None]
    return torch.cat(xs, axis_of(node, node.attr("axis"), xs[0].dim()))


@operator("Split", static=(1,), outputs=1 << 16)
def split(node, x, unused=None):
    axis = axis_of(node, node.attr("axis", 0), x.dim())
    sizes = node.ints(1) if node.opset >= 13 else node.ints_attr("split")
    if sizes is None:
        parts = node.attr("num_outputs", len(node.outputs))
        step = -(-x.shape[axis] // parts)
        sizes = [min(step, x.shape[axis] - k * step) for k in range(parts)]
    return list(torch.split(x, sizes, axis))


def slice_axis(x, axis, start, end, step):
    size = x.shape[axis]
    index = [slice(None)] * x.dim()
    if step > 0:
        start = min(max(start + size if start < 0 else start, 0), size)
        end = min(max(end + size if end < 0 else end, 0), size)
        index[axis] = slice(start, max(start, end), step)
        return x[tuple(index)]
    # A negative step: the same elements taken from the flipped axis.
    start = min(max(start + size if start < 0 else start, 0), size - 1)
    end = min(max(end + size if end < 0 else end, -1), size - 1)
    first, last = size - 1 - start, size - 1 - end
    index[axis] = slice(first, max(first, last), -step)
    return x.flip(axis)[tuple(index)]


@operator("Slice", static=(1, 2, 3, 4))
def slice_(node, x, *unused):
    starts, ends = node.ints(1), node.ints(2)
    axes = node.ints(3) or list(range(len(starts)))
    steps = node.ints(4) or [1] * len(starts)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        if step == 0:
            raise OnnxError(node, "a slice step of 0")
        x = slice_axis(x, axis_of(node, axis, x.dim()), start, end, step)
    return x


@operator("Gather")
def gather(node, data, indices):
    axis = axis_of(node, node.attr("axis", 0), data.dim())
    size = data.shape[axis]
    known = node.static_value(1)
    if known is not None:
        shape, flat = known
        if any(not -size <= i < size for i in flat):
            raise OnnxError(node, f"an index is out of range for axis {axis} of "
                                  f"size {size}")
        if not shape:
            return data.select(axis, int(flat[0]) % size)
        if any(i < 0 for i in flat):
            indices = torch.where(indices < 0, indices + size, indices)
    flat = torch.index_select(data, axis, indices.reshape(-1))
    return flat.reshape(tuple(data.shape[:axis]) + tuple(indices.shape) +
                        tuple(data.shape[axis + 1:]))


@operator("GatherND")
def gather_nd(node, data, indices):
    """Each index tuple (the last axis of `indices`) picks a slice of `data`
    after its first `batch_dims` axes: one gather of rows of `data`
    flattened over the batch and indexed axes."""
    batch = node.attr("batch_dims", 0)
    depth = indices.shape[-1]
    batch_shape = tuple(data.shape[:batch])
    indexed = tuple(data.shape[batch:batch + depth])
    rest = tuple(data.shape[batch + depth:])
    strides = [math.prod(indexed[j + 1:]) for j in range(depth)]
    sizes = torch.tensor(indexed, dtype=indices.dtype, device=indices.device)
    wrapped = torch.where(indices < 0, indices + sizes, indices)
    linear = (wrapped * torch.tensor(strides, dtype=indices.dtype,
                                     device=indices.device)).sum(-1)
    if batch:
        count = math.prod(batch_shape)
        offsets = torch.arange(count, dtype=indices.dtype, device=indices.device)
        offsets = offsets.reshape(batch_shape + (1,) * (linear.dim() - batch))
        linear = linear + offsets * math.prod(indexed)
    rows = data.reshape((math.prod(batch_shape) * math.prod(indexed),) + rest)
    picked = torch.index_select(rows, 0, linear.reshape(-1))
    return picked.reshape(tuple(indices.shape[:-1]) + rest)


@operator("ScatterND")
def scatter_nd(node, data, indices, updates):
    """`data` with the slices that `indices` names replaced by `updates`
    (or combined with them: reduction add, mul, max, min)."""
    reduction = node.attr("reduction", "none")
    index = tuple(torch.where(i < 0, i + size, i) for i, size in
                  zip(indices.unbind(-1), data.shape))
    if reduction == "none":
        return torch.index_put(data, index, updates)
    if reduction == "add":
        return torch.index_put(data, index, updates, accumulate=True)
    combine = {"mul": torch.mul, "max": torch.maximum, "min": torch.minimum}.get(
        reduction)
    if combine is None:
        raise OnnxError(node, f"unknown reduction '{reduction}'")
    return torch.index_put(data, index, combine(data[index], updates))


@operator("ScatterElements")
def scatter_elements(node, data, indices, updates):
    axis = axis_of(node, node.attr("axis", 0), data.dim())
    size = data.shape[axis]
    indices = torch.where(indices < 0, indices + size, indices)  # ONNX allows them
    reduction = node.attr("reduction", "none")
    if reduction == "none":
        return torch.scatter(data, axis, indices, updates)
    if reduction == "add":
        return torch.scatter_add(data, axis, indices, updates)
    raise OnnxError(node, f"ScatterElements with reduction '{reduction}' is not "
                          "supported (none and add are)")


@operator("TopK", static=(1,), outputs=2)
def top_k(node, x, unused):
    k = int(node.scalar(1))
    axis = axis_of(node, node.attr("axis", -1), x.dim())
    values, indices = torch.topk(x, k, axis, largest=bool(node.attr("largest", 1)),
                                 sorted=True)
    return values, indices


@operator("GatherElements")
def gather_elements(node, data, indices):
    return torch.gather(data, axis_of(node, node.attr("axis", 0), data.dim()),
                        indices)


@operator("Expand", static=(1,))
def expand(node, x, unused):
    return x.expand(torch.broadcast_shapes(tuple(x.shape), tuple(node.ints(1))))


@operator("Tile", static=(1,))
def tile(node, x, unused):
    return x.repeat(node.ints(1))


@operator("Pad", static=(1, 2, 3))
def pad(node, x, *unused):
    pads = node.ints(1)
    value = node.scalar(2, 0)
    axes = node.ints(3) if node.has_input(3) else list(range(x.dim()))
    axes = [axis_of(node, a, x.dim()) for a in axes]
    begins, ends = [0] * x.dim(), [0] * x.dim()
    for k, axis in enumerate(axes):
        begins[axis], ends[axis] = pads[k], pads[len(axes) + k]
    mode = node.attr("mode", "constant")
    modes = {"constant": "constant", "reflect": "reflect", "edge": "replicate",
             "wrap": "circular"}
    if mode not in modes:
        raise OnnxError(node, f"unknown pad mode '{mode}'")
    order = torch_pad_order(begins, ends)
    while order and order[-1] == 0 and order[-2] == 0:  # leading axes unpadded
        order = order[:-2]
    if not order:
        return x
    if mode == "constant":
        return F.pad(x, order, value=value)
    # PyTorch pads the last one to three axes of a tensor with one or two
    # axes before them: view the others as one.
    padded = len(order) // 2
    if padded > 3:
        raise OnnxError(node, f"{mode} padding of {padded} axes is not supported "
                              "(up to 3)")
    leading = x.shape[:x.dim() - padded]
    view = x.reshape((1, math.prod(leading)) + tuple(x.shape[x.dim() - padded:]))
    result = F.pad(view, order, mode=modes[mode])
    return result.reshape(tuple(leading) + tuple(result.shape[2:]))


@operator("Resize", static=(1, 2, 3))
def resize(node, x, *unused):
    mode = node.attr("mode", "nearest")
    transform = node.attr("coordinate_transformation_mode", "half_pixel")
    if node.attr("antialias", 0) or node.has_input(1) and transform == "tf_crop_and_resize":
        raise OnnxError(node, "antialiased or cropping resizes are not supported")
    scales = node.floats(2)
    sizes = node.ints(3)
    axes = node.ints_attr("axes")
    if axes is not None:
        raise OnnxError(node, "Resize with axes is not supported")
    if node.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise OnnxError(node, "Resize with keep_aspect_ratio_policy "
                              f"'{node.attr('keep_aspect_ratio_policy')}' is not supported "
                              "(stretch is)")
    if node.attr("exclude_outside", 0) or node.attr("cubic_coeff_a", -0.75) != -0.75:
        raise OnnxError(node, "cubic Resize with exclude_outside or a cubic_coeff_a "
                              "other than -0.75 (PyTorch's) is not supported")
    if sizes is None and not scales:
        raise OnnxError(node, "Resize needs scales or sizes")
    spatial = x.dim() - 2
    if sizes is not None:
        if list(sizes[:2]) != list(x.shape[:2]):
            raise OnnxError(node, "Resize of the batch or channel axis is not "
                                  "supported")
        options = {"size": sizes[2:]}
    else:
        factors = scales
        if factors[:2] != [1.0, 1.0]:
            raise OnnxError(node, "Resize of the batch or channel axis is not "
                                  "supported")
        options = {"scale_factor": factors[2:]}
    if mode == "nearest":
        nearest = node.attr("nearest_mode", "round_prefer_floor")
        if transform == "asymmetric" and nearest == "floor":
            return F.interpolate(x, mode="nearest", **options)
        if transform in ("half_pixel", "pytorch_half_pixel") and \
                nearest == "round_prefer_ceil":
            return F.interpolate(x, mode="nearest-exact", **options)
        raise OnnxError(node, f"nearest resizing with coordinate_transformation_mode "
                              f"'{transform}' and nearest_mode '{nearest}' is not "
                              "supported (asymmetric + floor, as PyTorch's "
                              "'nearest', is)")
    if mode in ("linear", "cubic"):
        if transform == "pytorch_half_pixel" and sizes is not None and 1 in sizes[2:]:
            raise OnnxError(node, "pytorch_half_pixel resizing to a size of 1 (which "
                                  "samples coordinate 0) is not supported")
        align = {"align_corners": True, "half_pixel": False,
                 "pytorch_half_pixel": False}.get(transform)
        if align is None:
            raise OnnxError(node, f"{mode} resizing with coordinate_transformation_"
                                  f"mode '{transform}' is not supported")
        torch_mode = {1: "linear", 2: "bilinear", 3: "trilinear"}[spatial] \
            if mode == "linear" else "bicubic"
        return F.interpolate(x, mode=torch_mode, align_corners=align, **options)
    raise OnnxError(node, f"unknown resize mode '{mode}'")


@operator("GridSample")
def grid_sample(node, x, grid):
    mode = {"linear": "bilinear", "cubic": "bicubic"}.get(
        node.attr("mode", "bilinear"), node.attr("mode", "bilinear"))
    return F.grid_sample(x, grid, mode=mode,
                         padding_mode=node.attr("padding_mode", "zeros"),
                         align_corners=bool(node.attr("align_corners", 0)))


@operator("DepthToSpace")
def depth_to_space(node, x):
    n, c, h, w = x.shape
    b = node.attr("blocksize")
    if node.attr("mode", "DCR") == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), h * b, w * b)


@operator("SpaceToDepth")
def space_to_depth(node, x):
    n, c, h, w = x.shape
    b = node.attr("blocksize")
    y = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


# -- reductions ----------------------------------------------------------------

def reduced_axes(node, x):
    changed_at = 13 if node.op_type == "ReduceSum" else 18
    axes = axes_input_or_attribute(node, 1, changed_at)
    if not axes:
        if node.attr("noop_with_empty_axes", 0):
            return None
        axes = list(range(x.dim()))
    return tuple(sorted({axis_of(node, a, x.dim()) for a in axes}))


REDUCTIONS = {
    "ReduceMean": lambda x, d, k: torch.mean(x, d, k),
    "ReduceSum": lambda x, d, k: torch.sum(x, d, k),
    "ReduceMax": lambda x, d, k: torch.amax(x, d, k),
    "ReduceMin": lambda x, d, k: torch.amin(x, d, k),
    "ReduceProd": None,  # one axis at a time, below
    "ReduceL1": lambda x, d, k: torch.sum(torch.abs(x), d, k),
    "ReduceL2": lambda x, d, k: torch.sqrt(torch.sum(x * x, d, k)),
    "ReduceSumSquare": lambda x, d, k: torch.sum(x * x, d, k),
    "ReduceLogSumExp": lambda x, d, k: torch.logsumexp(x, d, k),
}


@operator(*REDUCTIONS, static=(1,))
def reduce(node, x, unused=None):
    axes = reduced_axes(node, x)
    if axes is None:
        return x
    keep = bool(node.attr("keepdims", 1))
    if node.op_type == "ReduceProd":
        result = x
        for axis in reversed(axes):
            result = torch.prod(result, axis, keepdim=keep)
        return result.to(x.dtype)
    if node.op_type == "ReduceMean" and not x.dtype.is_floating_point:
        count = math.prod(x.shape[a] for a in axes)
        return torch.div(torch.sum(x, axes, keep), count,
                         rounding_mode="trunc").to(x.dtype)
    return REDUCTIONS[node.op_type](x, axes, keep).to(x.dtype)  # ONNX keeps it


@operator("ArgMax", "ArgMin")
def arg_extreme(node, x):
    axis = axis_of(node, node.attr("axis", 0), x.dim())
    keep = bool(node.attr("keepdims", 1))
    function = torch.argmax if node.op_type == "ArgMax" else torch.argmin
    if node.attr("select_last_index", 0):
        return x.shape[axis] - 1 - function(x.flip(axis), axis, keep)
    return function(x, axis, keep)


@operator("CumSum", static=(1,))
def cumsum(node, x, unused):
    axis = axis_of(node, node.scalar(1), x.dim())
    y = x.flip(axis) if node.attr("reverse", 0) else x
    total = torch.cumsum(y, axis).to(x.dtype)  # ONNX keeps the type
    if node.attr("exclusive", 0):
        shifted = [slice(None)] * x.dim()
        shifted[axis] = slice(0, x.shape[axis] - 1)
        zero_shape = list(x.shape)
        zero_shape[axis] = 1
        total = torch.cat([torch.zeros(zero_shape, dtype=total.dtype,
                                       device=total.device),
                           total[tuple(shifted)]], axis)
    return total.flip(axis) if node.attr("reverse", 0) else total


@operator("Trilu", static=(1,))
def trilu(node, x, unused=None):
    k = node.scalar(1, 0)
    return torch.triu(x, k) if node.attr("upper", 1) else torch.tril(x, k)
