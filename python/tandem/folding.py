"""Inference rewrites done at export, where the weights' values are known.

Constant subgraphs are computed once here: an ATen op whose tensor operands
are all constants of the model (parameters, buffers, constant tensors, or
results folded before it), that is not random and whose result is no larger
than its operands together, is run by PyTorch at export and its result
becomes a weight (`folded.<node>`); a transposed weight, a scaled
parameter or a slice of a positional table then costs nothing per run. (A
weight's transpose that a GEMM reads is left to the lowering, which makes
the pair a tandem.linear reading the weight as it is.)

Batch norm in eval mode after a convolution, or after a linear layer on
rows (nn.Linear then nn.BatchNorm1d over its features), is folded into it:
with s = gamma / sqrt(var + eps), the weight becomes W * s (per output
channel or feature) and the bias (b - mean) * s + beta, so the compiled
program has no batch_norm op (one pass over the activations fewer, and one
buffer fewer). The folded tensors are computed once here, in float64, and
written to the weights file beside the originals under `<weight>.bn_folded`
names.
"""
import torch

aten = torch.ops.aten

_BATCH_NORM = aten._native_batch_norm_legit_no_training.default
_CONVOLUTION = aten.convolution.default
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


_MM = aten.mm.default
_ADDMM = aten.addmm.default


class BatchNormFold:
    """A convolution or linear node (`producer`) and the batch norm it
    absorbs; `rows` is a linear's input node (None for a convolution)."""

    def __init__(self, producer, batch_norm, weight, bias, weight_name,
                 bias_name, rows=None):
        self.producer = producer
        self.batch_norm = batch_norm
        self.weight, self.bias = weight, bias
        self.weight_name, self.bias_name = weight_name, bias_name
        self.rows = rows


# A weight's transpose read by a GEMM is how ATen spells nn.Linear: the
# lowering makes the pair one tandem.linear, which reads the weight as it is
# (no copy), so such a transpose is left to it.
_TRANSPOSES = {aten.t.default, aten.permute.default, aten.transpose.int}
_GEMM_READERS = {aten.mm.default, aten.addmm.default, aten.bmm.default,
                 aten.matmul.default, aten.expand.default}


def fold_constant(node, args, kwargs, is_constant):
    """The value of `node` computed now, or None where it does not fold:
    `args` and `kwargs` hold the node's operands with each constant one as
    its tensor, and `is_constant(value)` says which values those are."""
    if node.op != "call_function" or not isinstance(node.target,
                                                     torch._ops.OpOverload):
        return None
    if node.target in _TRANSPOSES and any(user.target in _GEMM_READERS
                                          for user in node.users):
        return None
    if torch.Tag.nondeterministic_seeded in node.target.tags:
        return None
    tensors = [a for a in list(args) + list(kwargs.values())
               for a in (a if isinstance(a, (list, tuple)) else [a])
               if isinstance(a, torch.Tensor)]
    others = [a for a in list(args) + list(kwargs.values())
              for a in (a if isinstance(a, (list, tuple)) else [a])
              if not isinstance(a, (torch.Tensor, int, float, bool, str,
                                    type(None), torch.dtype, torch.device,
                                    torch.layout, torch.memory_format))]
    if not tensors or others or not all(is_constant(t) for t in tensors):
        return None
    try:
        with torch.no_grad():
            value = node.target(*args, **kwargs)
    except Exception:  # noqa: BLE001  left to the lowering, which says why
        return None
    if not isinstance(value, torch.Tensor) or \
            value.numel() > sum(t.numel() for t in tensors):
        return None
    return value.contiguous()


def _linear_parts(gemm, tensor_of):
    """(rows, (weight name, weight), (bias name, bias) or (None, None)) of an
    mm or addmm node that is nn.Linear on rows (x · Wᵀ + b, W a constant
    matrix of the model), else None."""
    if gemm.target is _MM:
        rows, transposed, bias = gemm.args[0], gemm.args[1], None
    else:
        if gemm.kwargs.get("beta", 1) != 1 or gemm.kwargs.get("alpha", 1) != 1 \
                or len(gemm.args) > 3:
            return None
        bias, rows, transposed = gemm.args[:3]
    if not isinstance(transposed, torch.fx.Node) or \
            transposed.target not in (aten.t.default, aten.permute.default) or \
            (transposed.target is aten.permute.default and
             list(transposed.args[1]) != [1, 0]):
        return None
    weight = tensor_of(transposed.args[0])
    if weight[1] is None or weight[1].dim() != 2:
        return None
    if bias is None:
        return rows, weight, (None, None)
    bias = tensor_of(bias)
    if bias[1] is None or tuple(bias[1].shape) != (weight[1].shape[0],):
        return None
    return rows, weight, bias


def plan_batch_norm_folds(program, tensor_of):
    """The (convolution or linear, batch norm) pairs of `program` that fold:
    the batch norm reads the producer's result, which nothing else reads; a
    convolution is not transposed; a linear's result is rows of features
    (2-D: the norm's channels are its features); every parameter involved
    is a constant tensor of the model (`tensor_of(node)` gives it, or
    (None, None) for what is not one) of one float dtype. Returns
    {node: BatchNormFold} for both nodes of each pair."""
    folds = {}
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target is not _BATCH_NORM:
            continue
        producer = node.args[0]
        if not isinstance(producer, torch.fx.Node) or len(producer.users) != 1:
            continue
        rows = None
        if producer.target is _CONVOLUTION and not producer.args[6]:
            weight_name, weight = tensor_of(producer.args[1])
            bias_node = producer.args[2]
            bias_name, bias = (None, None) if bias_node is None \
                else tensor_of(bias_node)
            if bias_node is not None and bias is None:
                continue
        elif producer.target in (_MM, _ADDMM):
            value = producer.meta.get("val")
            parts = _linear_parts(producer, tensor_of)
            if parts is None or not isinstance(value, torch.Tensor) or \
                    value.dim() != 2:
                continue
            rows, (weight_name, weight), (bias_name, bias) = parts
        else:
            continue
        gamma, beta, mean, var = (
            (None, None) if a is None else tensor_of(a) for a in node.args[1:5])
        if weight is None or mean[1] is None or var[1] is None or \
                (node.args[1] is not None and gamma[1] is None) or \
                (node.args[2] is not None and beta[1] is None):
            continue
        tensors = [t for t in (weight, bias, gamma[1], beta[1], mean[1], var[1])
                   if t is not None]
        if any(t.dtype != weight.dtype for t in tensors) or \
                weight.dtype not in _FLOATS:
            continue
        epsilon = float(node.args[6])
        scale = var[1].double().add(epsilon).rsqrt()
        if gamma[1] is not None:
            scale = scale * gamma[1].double()
        shift = -mean[1].double() * scale
        if bias is not None:
            shift = shift + bias.double() * scale
        if beta[1] is not None:
            shift = shift + beta[1].double()
        shape = (-1,) + (1,) * (weight.dim() - 1)
        folded_weight = (weight.double() * scale.reshape(shape)).to(weight.dtype)
        folded_bias = shift.to(weight.dtype)
        fold = BatchNormFold(producer, node, folded_weight, folded_bias,
                             weight_name + ".bn_folded",
                             (bias_name or weight_name) + ".bn_folded_bias",
                             rows)
        folds[producer] = folds[node] = fold
    return folds
