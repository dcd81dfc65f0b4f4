"""ONNX models in: an ONNX graph becomes an nn.Module that computes it with
PyTorch ops, which the PyTorch frontend then exports like any other model.

    module, example_args = tandem.load_onnx("model.onnx")
    tandem.import_onnx("model.onnx", "out/model")   # out/model.mlir + .safetensors
    run = tandem.compile(module, example_args, gpu_memory="4GiB")

Going through PyTorch keeps one lowering onto the dialect (the ATen one, with
its peepholes and tests) rather than two. The importer's own work is the ONNX
semantics (attributes, opset differences, broadcasting, padding rules),
the static shape arithmetic exporters write (computed once at import), and
errors that name the ONNX node. Initializers become the module's buffers, so
they are the weights file's tensors (named after the initializers, with
characters other than letters, digits and '_' written as '_'); constants
that hold one value everywhere become fills rather than weights.

Every op of the exported IR carries its ONNX node's name and place:
loc("NODE_NAME"("model.onnx":N:0)), N being the node's position in the
graph (from 0, as in error messages).
"""
import contextlib
import os
import re

import torch

from ..errors import ExportError
from ..sources import ONNX_NODE_KEY
from .model import Graph, build_graph, load


class OnnxModule(torch.nn.Module):
    """Runs an ONNX graph with PyTorch ops. Static values that the run reads
    are buffers (or fills, where they hold one value)."""

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph
        self._nodes = graph.dynamic_nodes
        read = set(graph.outputs)
        for node in self._nodes:
            read.update(name for k, name in enumerate(node.inputs)
                        if name and k not in node.operator.static_inputs)
        self._constants = {}  # value name -> ("buffer", name) or ("fill", ...)
        taken = set()
        for name, info in graph.values.items():
            if info.static is None or name not in read:
                continue
            self._constants[name] = self._constant(name, info.static, taken)

    def _constant(self, name, value, taken):
        flat = value.reshape(-1)
        same = flat.numel() and bool((flat == flat[0]).all())
        if same and value.dtype.is_floating_point:  # -0.0 == 0.0, NaN != NaN
            same = bool((torch.signbit(flat) == torch.signbit(flat[0])).all())
        if same:
            return ("fill", tuple(value.shape), flat[0].item(), value.dtype)
        buffer = buffer_name(name, taken)
        taken.add(buffer)
        self.register_buffer(buffer, value.contiguous())
        return ("buffer", buffer)

    def _value_of(self, name):
        kind, *rest = self._constants[name]
        if kind == "buffer":
            return getattr(self, rest[0])
        shape, value, dtype = rest
        return torch.full(shape, value, dtype=dtype)

    def forward(self, *inputs):
        graph = self.graph
        values = dict(zip(graph.inputs, inputs))
        annotate = getattr(torch.fx.traceback, "annotate", None)
        for node in self._nodes:
            context = annotate({ONNX_NODE_KEY: node_annotation(node)}) \
                if annotate is not None else contextlib.nullcontext()
            with context:  # the node's ops, and the constants it reads first
                args = [self._read(values, name)
                        if name and k not in node.operator.static_inputs else None
                        for k, name in enumerate(node.inputs)]
                results = node.run(args)
            for name, result in zip(node.outputs, results):
                if name:
                    values[name] = result
        outputs = tuple(self._read(values, name) for name in graph.outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def _read(self, values, name):
        if name not in values:  # a static value, made where it is first read
            values[name] = self._value_of(name)
        return values[name]


def buffer_name(name: str, taken) -> str:
    """An ONNX value name as a buffer name: letters, digits and '_'."""
    base = re.sub(r"[^0-9A-Za-z_]", "_", name) or "value"
    if base[0].isdigit():
        base = "_" + base
    candidate, k = base, 1
    while candidate in taken:
        candidate, k = f"{base}_{k}", k + 1
    return candidate


def node_annotation(node) -> str:
    """What an exported op's location is made of: the node's name, the file
    and its position, joined by NUL (never in either)."""
    return "\0".join((node.name, os.path.basename(node.source), str(node.index),
                      node.op_type))


def load_onnx(model, shapes=None):
    """(module, example_args) for an ONNX model: `model` is a path, the
    file's bytes or an onnx.ModelProto; `shapes` gives the inputs' shapes
    where the model leaves a dimension dynamic (a list in input order, or a
    dict by input name). The example arguments are zeros of the inputs'
    shapes and types. Raises ExportError naming the problem (a file that is
    not ONNX, an operator or opset Tandem does not import, a dynamic
    dimension without a shape, missing external data)."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ExportError("importing ONNX models needs the onnx package: "
                          "pip install onnx") from None
    source = os.fspath(model) if isinstance(model, (str, os.PathLike)) else "model.onnx"
    graph = build_graph(load(model), shapes, source)
    module = OnnxModule(graph)
    example_args = tuple(torch.zeros(meta.shape, dtype=meta.dtype)
                         for meta in graph.input_types)
    return module, example_args


def import_onnx(model, prefix, shapes=None):
    """Writes `prefix.mlir` (the tandem dialect) and `prefix.safetensors`
    (the initializers) for an ONNX model; returns both paths. See
    load_onnx for `model` and `shapes`."""
    from ..exporter import export
    module, example_args = load_onnx(model, shapes)
    return export(module, example_args, prefix)
