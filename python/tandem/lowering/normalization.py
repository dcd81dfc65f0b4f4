"""Normalization: softmax and log_softmax, layer, batch (eval mode, and
over the batch's own statistics, which is how instance norm arrives) and
group norm."""
from .. import mlir
from ..mlir import TensorType
from . import Unavailable, aten, lowers, normalize_axis

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


@lowers(aten._native_batch_norm_legit.no_stats)
def _batch_norm_batch_statistics(cx, x, weight, bias, training, momentum, epsilon):
    """Batch norm over the batch's own statistics: each channel normalized
    over every other axis. This is how instance norm arrives (its input
    viewed as [1, N·C, ...]): a layer norm over each channel's row of a
    [C, N·spatial] view (the batch moved behind the channels where N > 1),
    then the per-channel scale and shift."""
    out = cx.result_type(0)
    shape = x.type.shape
    batch, channels = shape[0], shape[1]
    spatial = 1
    for d in shape[2:]:
        spatial *= d
    rows = cx.reshape(x, (batch, channels, spatial))
    if batch > 1:
        rows = cx.emit("tandem.transpose", [rows],
                       rows.type.with_shape((channels, batch, spatial)),
                       {"perm": mlir.i64_array([1, 0, 2])})
    width = batch * spatial
    rows = cx.reshape(rows, (channels, width))
    normalized = cx.emit("tandem.layer_norm", [
        rows, cx.fill(1.0, TensorType((width,), out.element)),
        cx.fill(0.0, TensorType((width,), out.element))], rows.type,
        {"axis": mlir.i64(1), "epsilon": mlir.float32(epsilon)})
    if batch > 1:
        normalized = cx.emit("tandem.transpose",
                             [cx.reshape(normalized, (channels, batch, spatial))],
                             normalized.type.with_shape((batch, channels, spatial)),
                             {"perm": mlir.i64_array([1, 0, 2])})
    y = cx.reshape(normalized, shape)
    return [per_channel_affine(cx, y, weight, bias, out),
            Unavailable("the batch mean of batch_norm"),
            Unavailable("the batch deviation of batch_norm")]


def per_channel_affine(cx, y, weight, bias, out):
    """y · weight + bias with both broadcast along axis 1."""
    per_channel = (y.type.shape[1],) + (1,) * (y.type.rank - 2)
    if weight is not None:
        y = cx.emit("tandem.mul", [y, cx.reshape(weight, per_channel)], out)
    if bias is not None:
        y = cx.emit("tandem.add", [y, cx.reshape(bias, per_channel)], out)
    return y


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
    y = per_channel_affine(cx, cx.reshape(normalized, shape), weight, bias, out)
    return [y, Unavailable("the mean saved by group_norm"),
            Unavailable("the reciprocal deviation saved by group_norm")]
