"""Inference rewrites done at export, where the weights' values are known.

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
