"""Indexing: embedding, embedding bags, index_select and advanced indexing
(one index tensor, or several: x[rows, cols]), as tandem.embedding,
tandem.embedding_bag and tandem.gather; scatter, scatter_add and index_put
as one-hot selections."""
import math

import torch

from .. import mlir
from . import Unavailable, aten, lowers, normalize_axis
from ..mlir import TensorType, Value
from .views import constant_pad, transpose

@lowers(aten.embedding.default)
def _embedding(cx, table, ids, *unused):
    return cx.emit("tandem.embedding", [table, ids], cx.result_type())


BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


@lowers(aten._embedding_bag.default, aten._embedding_bag_forward_only.default,
        aten.embedding_bag.default, aten.embedding_bag.padding_idx)
def _embedding_bag(cx, table, ids, offsets, scale_grad_by_freq=False, mode=0,
                   sparse=False, per_sample_weights=None,
                   include_last_offset=False, padding_idx=-1):
    """nn.EmbeddingBag and F.embedding_bag: 2-D ids arrive flattened with
    offsets 0, n, 2n... (an arange); 1-D ids with the caller's offsets."""
    out = cx.result_type(0)
    operands = [table, ids, offsets]
    if per_sample_weights is not None:
        operands.append(cx.cast(per_sample_weights, out.element))
    padding = int(padding_idx) if padding_idx is not None else -1
    if padding < -1:
        padding += table.type.shape[0]
    result = cx.emit("tandem.embedding_bag", operands, out, {
        "mode": mlir.string(BAG_MODES[int(mode)]),
        "padding_idx": mlir.i64(padding),
        "include_last_offset": mlir.boolean(include_last_offset)})
    return [result] + [Unavailable(f"the {what} of embedding_bag") for what in
                       ("bag positions", "bag sizes", "indices of the maxima")]


@lowers(aten.index_select.default)
def _index_select(cx, x, dim, index):
    return cx.emit("tandem.gather", [x, index], cx.result_type(),
                   {"axis": mlir.i64(normalize_axis(dim, x.type.rank))})


@lowers(aten.index.Tensor)
def _index(cx, x, indices):
    present = [k for k, index in enumerate(indices) if index is not None]
    if any(indices[k].type.element == "i1" for k in present):
        raise cx.error("boolean-mask indexing gives a data-dependent shape")
    if len(present) == 1:
        return cx.emit("tandem.gather", [x, indices[present[0]]], cx.result_type(),
                       {"axis": mlir.i64(present[0])})
    return several_indices(cx, x, [(k, indices[k]) for k in present])


def wrap_negative(cx, index, size):
    """index as i64, a negative entry counting from the end of an axis of
    `size` (PyTorch's indexing)."""
    index = cx.cast(index, "i64")
    negative = cx.compare("lt", index, cx.scalar(0, "i64"))
    shifted = cx.emit("tandem.add", [index, cx.scalar(size, "i64")], index.type)
    return cx.emit("tandem.select", [negative, shifted, index], index.type)


def several_indices(cx, x, indexed):
    """x[i, j] (NumPy's advanced indexing over several axes): the indexed
    axes moved to the front and flattened into one, gathered with one
    linear index (each index wrapped where negative, broadcast together);
    the broadcast axes stand where the indexed axes stood when those are
    adjacent, else first."""
    out = cx.result_type()
    shape = x.type.shape
    axes = [k for k, _ in indexed]
    rest = [k for k in range(x.type.rank) if k not in axes]
    sizes = [shape[k] for k in axes]
    broadcast = tuple(torch.broadcast_shapes(*(i.type.shape for _, i in indexed)))
    index_type = out.with_shape(broadcast).with_element("i64")
    linear = None
    for (axis, index), stride in zip(indexed, [math.prod(sizes[n + 1:])
                                               for n in range(len(sizes))]):
        index = wrap_negative(cx, index, shape[axis])
        if index.type.shape != broadcast:
            index = cx.emit("tandem.broadcast_to", [index], index_type)
        if stride != 1:
            index = cx.emit("tandem.mul", [index, cx.scalar(stride, "i64")],
                            index_type)
        linear = index if linear is None else cx.emit("tandem.add", [linear, index],
                                                      index_type)
    front = cx.reshape(transpose(cx, x, axes + rest),
                       (math.prod(sizes),) + tuple(shape[k] for k in rest))
    picked = cx.emit("tandem.gather", [front, linear], out.with_shape(
        broadcast + tuple(shape[k] for k in rest)), {"axis": mlir.i64(0)})
    adjacent = axes == list(range(axes[0], axes[-1] + 1))
    if not adjacent or axes[0] == 0:
        return picked
    # The broadcast axes back where the indexed ones were.
    width, before = len(broadcast), axes[0]
    perm = (list(range(width, width + before)) + list(range(width)) +
            list(range(width + before, picked.type.rank)))
    return transpose(cx, picked, perm)


def scatter(cx, x, axis, index, src, accumulate, out):
    """x with src written (or, with `accumulate`, added) along `axis` at
    the positions `index` names (torch.scatter / scatter_add: index and
    src may cover less than x in the other axes). Spelled with a one-hot
    comparison of each index against the axis's positions, [..., K, N]:
    meant for the small axes of routing (experts, classes). Where several
    indices name one position, scatter keeps the last (PyTorch leaves it
    open), scatter_add adds them all. An index outside [0, N) stops the
    run, as PyTorch raises."""
    size = x.type.shape[axis]
    rank = x.type.rank
    to_last = [d for d in range(rank) if d != axis] + [axis]
    back = [to_last.index(d) for d in range(rank)]
    index = cx.cast(index, "i64")
    src = cx.cast(src, out.element)
    if src.type.shape != index.type.shape:  # only index's extent is read
        src = cx.emit("tandem.slice", [src], src.type.with_shape(index.type.shape), {
            "starts": mlir.i64_array([0] * rank),
            "limits": mlir.i64_array(index.type.shape),
            "strides": mlir.i64_array([1] * rank)})
    checked_index = index
    index = transpose(cx, index, to_last)
    src = transpose(cx, src, to_last)
    region = index.type.shape[:-1]
    picks = index.type.shape[-1]
    onehot_shape = region + (picks, size)
    positions = cx.emit("tandem.iota", [], index.type.with_shape(onehot_shape),
                        {"axis": mlir.i64(rank)})
    hits = cx.compare("eq", cx.reshape(index, region + (picks, 1)), positions)
    column = cx.reshape(src, region + (picks, 1))
    spread_type = out.with_shape(onehot_shape)
    zero = cx.scalar(0, out.element)
    summed_type = out.with_shape(region + (size,))

    def total(mask):
        chosen = cx.emit("tandem.select", [mask, column, zero], spread_type)
        return cx.emit("tandem.reduce_sum", [chosen], summed_type,
                       {"axes": mlir.i64_array([rank - 1]), "keepdims": "false"})
    written = None
    if accumulate:
        values = total(hits)
    else:  # the last index naming each position
        order = cx.emit("tandem.iota", [], index.type.with_shape(onehot_shape),
                        {"axis": mlir.i64(rank - 1)})
        last = cx.emit("tandem.reduce_max", [cx.emit(
            "tandem.select", [hits, order, cx.scalar(-1, "i64")], order.type)],
            index.type.with_shape(region + (size,)),
            {"axes": mlir.i64_array([rank - 1]), "keepdims": "false"})
        written = cx.compare("ge", last, cx.scalar(0, "i64"))
        is_last = cx.compare("eq", order, cx.reshape(last, region + (1, size)))
        values = total(cx.logical_and(hits, is_last))
    # Beyond index's extent in the other axes: nothing written.
    target = tuple(x.type.shape[d] for d in to_last)
    pads = []
    for have, want in zip(reversed(region + (size,)), reversed(target)):
        pads += [0, want - have]
    values = constant_pad(cx, values, pads, 0)
    base = transpose(cx, cx.cast(x, out.element), to_last)
    if accumulate:
        result = cx.emit("tandem.add", [base, values], base.type)
    else:
        written = constant_pad(cx, written, pads, False)
        result = cx.emit("tandem.select", [written, values, base], base.type)
    return transpose(cx, checked_in_range(cx, result, checked_index, size), back)


def checked_in_range(cx, result, index, size):
    """result, times a one that depends on a lookup of every index in a table
    of `size` rows: the run stops, naming the op's line, at an index outside
    [0, size) (as PyTorch raises), where a one-hot comparison or a take from
    a flattened tensor alone would be silently wrong. Times one: -0 and NaN
    stay what they are."""
    count = math.prod(index.type.shape)
    if count == 0:
        return result
    table = cx.fill(1.0, TensorType((size, 1), "f32"))
    probe = cx.emit("tandem.embedding", [table, cx.reshape(index, (count,))],
                    TensorType((count, 1), "f32"))
    one = cx.emit("tandem.reduce_max", [probe], TensorType((), "f32"),
                  {"axes": mlir.i64_array([0, 1]), "keepdims": "false"})
    return cx.emit("tandem.mul", [result, cx.cast(one, result.type.element)],
                   result.type)


@lowers(aten.gather.default)
def _gather(cx, x, dim, index, sparse_grad=False):
    """torch.gather: out[..., j, ...] = x[..., index[..., j, ...], ...] along
    `dim`: one take from x flattened, at each element's own linear index.
    An index outside [0, n) stops the run, as PyTorch raises."""
    out = cx.result_type()
    axis = normalize_axis(dim, x.type.rank)
    shape = index.type.shape
    index = cx.cast(index, "i64")
    index_type = index.type
    strides = [math.prod(x.type.shape[d + 1:]) for d in range(x.type.rank)]
    linear = None
    for d in range(x.type.rank):
        coordinate = index if d == axis else cx.emit(
            "tandem.iota", [], index_type, {"axis": mlir.i64(d)})
        term = cx.emit("tandem.mul", [coordinate, cx.scalar(strides[d], "i64")],
                       index_type) if strides[d] != 1 else coordinate
        linear = term if linear is None else cx.emit("tandem.add", [linear, term],
                                                     index_type)
    flat = cx.reshape(x, (math.prod(x.type.shape),))
    picked = cx.emit("tandem.gather", [flat, cx.reshape(linear, (math.prod(shape),))],
                     out.with_shape((math.prod(shape),)), {"axis": mlir.i64(0)})
    return checked_in_range(cx, cx.reshape(picked, shape), index, x.type.shape[axis])


@lowers(aten.scatter.src, aten.scatter.value)
def _scatter(cx, x, dim, index, src):
    out = cx.result_type()
    if not isinstance(src, Value):
        src = cx.fill(src, index.type.with_element(out.element))
    return scatter(cx, x, normalize_axis(dim, x.type.rank), index, src, False, out)


@lowers(aten.scatter_add.default)
def _scatter_add(cx, x, dim, index, src):
    return scatter(cx, x, normalize_axis(dim, x.type.rank), index, src, True,
                   cx.result_type())


@lowers(aten.index_put.default)
def _index_put(cx, x, indices, values, accumulate=False):
    """x[i] = v (or += v) for one integer index tensor on one axis, as a
    scatter along it; x[mask] = v with a boolean mask and one value, as a
    select."""
    out = cx.result_type()
    present = [k for k, index in enumerate(indices) if index is not None]
    if len(present) != 1:
        raise cx.error("index_put with several index tensors is not supported")
    axis, index = present[0], indices[present[0]]
    if index.type.element == "i1":
        if accumulate or math.prod(values.type.shape) != 1 or axis != 0:
            raise cx.error("x[mask] = v is supported for one value, not "
                           "accumulated")
        mask = index
        if mask.type.rank < x.type.rank:
            mask = cx.emit("tandem.broadcast_to", [cx.reshape(
                mask, mask.type.shape + (1,) * (x.type.rank - mask.type.rank))],
                x.type.with_element("i1"))
        value = cx.reshape(cx.cast(values, out.element), ())
        return cx.emit("tandem.select", [mask, value, cx.cast(x, out.element)], out)
    flat = wrap_negative(cx, cx.reshape(index, (math.prod(index.type.shape),)),
                         x.type.shape[axis])  # x[-1] is the last
    shape = x.type.shape[:axis] + flat.type.shape + x.type.shape[axis + 1:]
    spread = cx.reshape(flat, (1,) * axis + flat.type.shape +
                        (1,) * (x.type.rank - axis - 1))
    full_index = cx.emit("tandem.broadcast_to", [spread], spread.type.with_shape(shape))
    rows = cx.cast(values, out.element)
    if rows.type.shape != shape:
        indexed_shape = x.type.shape[:axis] + index.type.shape + x.type.shape[axis + 1:]
        if rows.type.shape != indexed_shape:
            rows = cx.emit("tandem.broadcast_to", [cx.reshape(
                rows, (1,) * (len(indexed_shape) - rows.type.rank) + rows.type.shape)],
                rows.type.with_shape(indexed_shape))
        rows = cx.reshape(rows, shape)
    return scatter(cx, x, axis, full_index, rows, bool(accumulate), out)
