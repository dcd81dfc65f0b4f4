"""Comparisons, where/masked_fill as tandem.select, and the logical ops on
masks."""
from . import LOWERINGS, aten, lowers
from .elementwise import promoted_element

def compare(predicate):
    def lower(cx, x, y):
        element = promoted_element(x, y)
        return cx.emit("tandem.compare",
                       [cx.operand(x, element), cx.operand(y, element)],
                       cx.result_type(),
                       {"predicate": f"#tandem.predicate<{predicate}>"})
    return lower


for _predicate in ("eq", "ne", "lt", "le", "gt", "ge"):
    for _overload in ("Tensor", "Scalar"):
        LOWERINGS[getattr(getattr(aten, _predicate), _overload)] = compare(_predicate)


@lowers(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther,
        aten.where.Scalar)
def _where(cx, condition, a, b):
    out = cx.result_type()
    return cx.emit("tandem.select", [cx.operand(condition, "i1"),
                                     cx.operand(a, out.element),
                                     cx.operand(b, out.element)], out)


@lowers(aten.masked_fill.Scalar, aten.masked_fill.Tensor)
def _masked_fill(cx, x, mask, value):
    out = cx.result_type()
    return cx.emit("tandem.select", [cx.operand(mask, "i1"),
                                     cx.operand(value, out.element),
                                     cx.cast(x, out.element)], out)


def as_bool(cx, x):
    return cx.emit("tandem.compare", [x, cx.scalar(0, x.type.element)],
                   x.type.with_element("i1"),
                   {"predicate": "#tandem.predicate<ne>"}) \
        if x.type.element != "i1" else x


@lowers(aten.logical_not.default, aten.bitwise_not.default)
def _logical_not(cx, x):
    if cx.node.target == aten.bitwise_not.default and x.type.element != "i1":
        raise cx.error("bitwise_not of integers is not in the tandem dialect")
    return cx.emit("tandem.compare", [as_bool(cx, x), cx.scalar(False, "i1")],
                   cx.result_type(), {"predicate": "#tandem.predicate<eq>"})


@lowers(aten.logical_and.default, aten.bitwise_and.Tensor)
def _logical_and(cx, x, y):
    out = cx.result_type()
    if out.element != "i1":
        raise cx.error("bitwise_and of integers is not in the tandem dialect")
    return cx.emit("tandem.select", [as_bool(cx, x), as_bool(cx, y),
                                     cx.scalar(False, "i1")], out)


@lowers(aten.logical_or.default, aten.bitwise_or.Tensor)
def _logical_or(cx, x, y):
    out = cx.result_type()
    if out.element != "i1":
        raise cx.error("bitwise_or of integers is not in the tandem dialect")
    return cx.emit("tandem.select", [as_bool(cx, x), cx.scalar(True, "i1"),
                                     as_bool(cx, y)], out)


@lowers(aten.isnan.default)
def _isnan(cx, x):
    """x != x: true only for NaN (false for every integer)."""
    return cx.emit("tandem.compare", [x, x], cx.result_type(),
                   {"predicate": "#tandem.predicate<ne>"})
