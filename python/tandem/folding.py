"""Inference rewrites done at export, where the weights' values are known.

Constant subgraphs are computed once here: an ATen op whose tensor operands
are all constants of the model (parameters, buffers, constant tensors, or
results folded before it), that is not random and whose result is no larger
than its operands together, is run by PyTorch at export and its result
becomes a weight (`folded.<node>`); a transposed weight, a scaled
parameter or a slice of a positional table then costs nothing per run. (A
weight's transpose that a GEMM reads is left to the lowering, which makes
the pair a tandem.linear reading the weight as it is.)

Batch norm in eval mode after a convolution is folded into it: with
s = gamma / sqrt(var + eps), the convolution's weight becomes W * s (per
output channel) and its bias (b - mean) * s + beta, so the compiled program
has no batch_norm op (one pass over the activations fewer, and one buffer
fewer). The folded tensors are computed once here, in float64, and written
to the weights file beside the originals under `<weight>.bn_folded` names.
"""
import torch

aten = torch.ops.aten

_BATCH_NORM = aten._native_batch_norm_legit_no_training.default
_CONVOLUTION = aten.convolution.default
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


class BatchNormFold:
    """A convolution node and the batch norm it absorbs."""

    def __init__(self, convolution, batch_norm, weight, bias, weight_name,
                 bias_name):
        self.convolution = convolution
        self.batch_norm = batch_norm
        self.weight, self.bias = weight, bias
        self.weight_name, self.bias_name = weight_name, bias_name


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


def plan_batch_norm_folds(program, tensor_of):
    """The (convolution, batch norm) pairs of `program` that fold: the batch
    norm reads the convolution's result, which nothing else reads; the
    convolution is not transposed; every parameter involved is a constant
    tensor of the model (`tensor_of(node)` gives it, or (None, None) for
    what is not one) of one float dtype. Returns {node: BatchNormFold} for
    both nodes of each pair."""
    folds = {}
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target is not _BATCH_NORM:
            continue
        conv = node.args[0]
        if (not isinstance(conv, torch.fx.Node) or conv.target is not _CONVOLUTION
                or len(conv.users) != 1 or conv.args[6]):
            continue
        weight_name, weight = tensor_of(conv.args[1])
        bias_name, bias = (None, None) if conv.args[2] is None \
            else tensor_of(conv.args[2])
        gamma, beta, mean, var = (
            (None, None) if a is None else tensor_of(a) for a in node.args[1:5])
        if weight is None or mean[1] is None or var[1] is None or \
                (conv.args[2] is not None and bias is None) or \
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
        fold = BatchNormFold(conv, node, folded_weight, folded_bias,
                             weight_name + ".bn_folded",
                             (bias_name or weight_name) + ".bn_folded_bias")
        folds[conv] = folds[node] = fold
    return folds
