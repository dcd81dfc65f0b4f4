"""Linear algebra: mm/addmm/bmm/matmul (as tandem.linear where the weight is
a transposed matrix), baddbmm, linear and scaled dot-product attention."""
import math

from .. import mlir
from . import aten, lowers
from .elementwise import scaled_operand
from .sources import diagonal_mask
from .views import transpose

def transposed_matrix(cx, value):
    """If `value` is the transpose of a matrix (how ATen spells the weight of
    nn.Linear), that matrix; else None."""
    op = cx.builder.producer(value)
    if (op is not None and op.name == "tandem.transpose" and
            op.attributes["perm"] == mlir.i64_array([1, 0])):
        return op.operands[0]
    return None


def broadcast_transposed_matrix(cx, value):
    """If `value` is a transposed matrix broadcast over batch dimensions (how
    ATen spells torch.matmul(x3d, w.t())), that matrix; else None."""
    op = cx.builder.producer(value)
    if op is not None and op.name == "tandem.broadcast_to":
        return transposed_matrix(cx, op.operands[0])
    return None


@lowers(aten.mm.default)
def _mm(cx, a, b):
    out = cx.result_type()
    weight = transposed_matrix(cx, b)
    if weight is not None:
        return cx.emit("tandem.linear", [a, weight], out)
    return cx.emit("tandem.matmul", [a, b], out)


@lowers(aten.addmm.default)
def _addmm(cx, bias, a, b, beta=1, alpha=1):
    out = cx.result_type()
    weight = transposed_matrix(cx, b)
    if (weight is not None and beta == 1 and alpha == 1 and
            bias.type.shape == (out.shape[1],)):
        return cx.emit("tandem.linear", [a, weight, bias], out)
    product = cx.emit("tandem.matmul", [a, b], out)
    return cx.emit("tandem.add", [scaled_operand(cx, product, alpha, out.element),
                                  scaled_operand(cx, bias, beta, out.element)], out)


@lowers(aten.bmm.default, aten.matmul.default)
def _bmm(cx, a, b):
    if a.type.rank < 2 or b.type.rank < 2:
        raise cx.error("matmul of a rank-1 operand: reshape it to a matrix")
    out = cx.result_type()
    weight = broadcast_transposed_matrix(cx, b)
    if weight is not None:  # x[B, M, K] · expand(wᵀ) is nn.Linear on 3-D x
        return cx.emit("tandem.linear", [a, weight], out)
    return cx.emit("tandem.matmul", [a, b], out)


@lowers(aten.baddbmm.default)
def _baddbmm(cx, bias, a, b, beta=1, alpha=1):
    out = cx.result_type()
    product = cx.emit("tandem.matmul", [a, b], out)
    if beta == 0:
        return scaled_operand(cx, product, alpha, out.element)
    return cx.emit("tandem.add", [scaled_operand(cx, product, alpha, out.element),
                                  scaled_operand(cx, bias, beta, out.element)], out)


@lowers(aten.linear.default)
def _linear(cx, x, weight, bias=None):
    operands = [x, weight] + ([bias] if bias is not None else [])
    return cx.emit("tandem.linear", operands, cx.result_type())


@lowers(aten.scaled_dot_product_attention.default)
def _sdpa(cx, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
          scale=None, enable_gqa=False):
    """softmax(q·kᵀ·scale + mask)·v, the math form."""
    if dropout_p:
        raise cx.error("attention dropout: Tandem exports eval mode only")
    if enable_gqa:
        raise cx.error("grouped-query attention (enable_gqa) is not supported")
    e = q.type.element
    length, source = q.type.shape[-2], k.type.shape[-2]
    scores_shape = q.type.shape[:-1] + (source,)
    scores_type = q.type.with_shape(scores_shape)
    keys = transpose(cx, k, list(range(k.type.rank - 2)) +
                     [k.type.rank - 1, k.type.rank - 2])
    scores = cx.emit("tandem.matmul", [q, keys], scores_type)
    factor = scale if scale is not None else 1.0 / math.sqrt(q.type.shape[-1])
    scores = cx.emit("tandem.mul", [scores, cx.scalar(factor, e)], scores_type)
    if is_causal:
        allowed = diagonal_mask(cx, (length, source), 0, "le")
        scores = cx.emit("tandem.select", [allowed, scores,
                                           cx.scalar(-math.inf, e)], scores_type)
    if attn_mask is not None:
        if attn_mask.type.element == "i1":
            scores = cx.emit("tandem.select", [attn_mask, scores,
                                               cx.scalar(-math.inf, e)],
                             scores_type)
        else:
            scores = cx.emit("tandem.add", [scores, cx.cast(attn_mask, e)],
                             scores_type)
    weights = cx.emit("tandem.softmax", [scores], scores_type,
                      {"axis": mlir.i64(-1)})
    return cx.emit("tandem.matmul", [weights, v], cx.result_type())
