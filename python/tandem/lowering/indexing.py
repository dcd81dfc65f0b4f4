"""Indexing: embedding, index_select and single-tensor advanced indexing, as
tandem.embedding and tandem.gather."""
from .. import mlir
from . import aten, lowers, normalize_axis

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
