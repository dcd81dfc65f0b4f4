"""Indexing: embedding, embedding bags, index_select and advanced indexing
(one index tensor, or several: x[rows, cols]), as tandem.embedding,
tandem.embedding_bag and tandem.gather."""
import math

import torch

from .. import mlir
from . import Unavailable, aten, lowers, normalize_axis
from .views import transpose

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
        index = cx.cast(index, "i64")
        negative = cx.emit("tandem.compare", [index, cx.scalar(0, "i64")],
                           index.type.with_element("i1"),
                           {"predicate": "#tandem.predicate<lt>"})
        index = cx.emit("tandem.select", [negative, cx.emit(
            "tandem.add", [index, cx.scalar(shape[axis], "i64")], index.type), index],
            index.type)
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
