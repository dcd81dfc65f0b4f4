"""One ONNX node as the importer runs it: its attributes, the inputs that
must be known at import time (a Reshape's shape, a Slice's bounds), and the
operator that computes it in PyTorch."""
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple

import torch

from ..errors import ExportError

CONTROL_FLOW = ("If", "Loop", "Scan", "SequenceMap")


@dataclass(frozen=True)
class Operator:
    """How an ONNX operator runs: `compute(node, *inputs)` with PyTorch ops
    (None for absent inputs and for the positions in `static_inputs`, which
    it reads with node.ints()/node.static_value()); `shape_only` operators
    read only their input's shape, so they are static whatever it is;
    `outputs` is how many of the node's outputs it computes."""
    compute: Callable
    static_inputs: Tuple[int, ...] = ()
    shape_only: bool = False
    outputs: int = 1


OPERATORS: Dict[str, Operator] = {}


def operator(*names, static=(), shape_only=False, outputs=1):
    def register(compute):
        for name in names:
            OPERATORS[name] = Operator(compute, tuple(static), shape_only, outputs)
        return compute
    return register


class OnnxError(ExportError):
    """An error that names the ONNX node it is about."""

    def __init__(self, node: "Node", message: str):
        super().__init__(f"{node.describe()}: {message}")


class Node:
    def __init__(self, proto, index: int, opset: int, source: str):
        import onnx.helper
        self.proto = proto
        self.index = index
        self.opset = opset
        self.source = source
        self.op_type = proto.op_type
        self.domain = proto.domain
        self.name = proto.name or f"{proto.op_type}_{index}"
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attributes = {a.name: onnx.helper.get_attribute_value(a)
                           for a in proto.attribute}
        self.operator: Optional[Operator] = None
        self.static = False  # every output known at import time
        self._static: Dict[int, torch.Tensor] = {}

    def describe(self) -> str:
        return (f"ONNX node '{self.name}' ({self.op_type}, node {self.index} of "
                f"{self.source})")

    def check_supported(self):
        if self.domain not in ("", "ai.onnx"):
            raise OnnxError(self, f"operator domain '{self.domain}' is not ONNX's "
                                  "own; Tandem imports the standard operators only")
        if self.op_type in CONTROL_FLOW:
            raise OnnxError(self, "control flow (a subgraph run at run time) is "
                                  "not supported: Tandem compiles static graphs; "
                                  "export the model without it (e.g. with fixed "
                                  "shapes and no data-dependent branches)")
        self.operator = OPERATORS.get(self.op_type)
        if self.operator is None:
            raise OnnxError(self, f"Tandem has no import for the operator "
                                  f"{self.op_type}")
        for k, name in enumerate(self.outputs):
            if name and k >= self.operator.outputs:
                raise OnnxError(self, f"its output {k} ('{name}') is not computed "
                                      f"by Tandem's {self.op_type}; export the model "
                                      "without it")

    # -- attributes --
    def attr(self, name, default=None):
        value = self.attributes.get(name, default)
        if isinstance(value, bytes):
            value = value.decode()
        return value

    def ints_attr(self, name, default=None):
        value = self.attributes.get(name)
        return [int(v) for v in value] if value is not None else default

    def tensor_attr(self, name) -> torch.Tensor:
        import onnx.numpy_helper
        return torch.from_numpy(onnx.numpy_helper.to_array(
            self.attributes[name]).copy())

    # -- inputs known at import time --
    # Kept as Python lists: the module's forward runs under torch.export,
    # where reading a tensor's data would be a data-dependent value.
    def bind_static(self, values: Dict[int, torch.Tensor]):
        self._static = {k: (tuple(v.shape), v.reshape(-1).tolist())
                        for k, v in values.items()}
        self._static_dtypes = {k: v.dtype for k, v in values.items()}

    def static_dtype(self, k: int):
        self.static_input(k)  # known at import, or the error saying so
        return self._static_dtypes[k]

    def has_input(self, k: int) -> bool:
        return k < len(self.inputs) and bool(self.inputs[k])

    def static_value(self, k: int):
        """(shape, flat list of values) of input k where it is known at
        import time, else None (absent, or computed at run time)."""
        return self._static.get(k)

    def static_input(self, k: int):
        """(shape, flat list) of input k, which must be known at import
        time; None when absent."""
        if not self.has_input(k):
            return None
        value = self._static.get(k)
        if value is None:
            raise OnnxError(self, f"its input {k} ('{self.inputs[k]}') is computed "
                                  "at run time; Tandem needs it known when the "
                                  "model is compiled (static shapes)")
        return value

    def ints(self, k: int):
        value = self.static_input(k)
        return None if value is None else [int(v) for v in value[1]]

    def floats(self, k: int):
        value = self.static_input(k)
        return None if value is None else [float(v) for v in value[1]]

    def scalar(self, k: int, default=None):
        value = self.static_input(k)
        if value is None:
            return default
        if len(value[1]) != 1:
            raise OnnxError(self, f"its input {k} ('{self.inputs[k]}') must be a "
                                  f"single value, has shape {value[0]}")
        return value[1][0]

    # -- running --
    def run(self, args):
        """The node's outputs (a list) from its inputs (PyTorch tensors, None
        for absent or static ones)."""
        args = list(args) + [None] * (len(self.inputs) - len(args))
        try:
            result = self.operator.compute(self, *args)
        except ExportError:
            raise
        except Exception as error:  # a wrong attribute, a shape PyTorch refuses
            first = (str(error).strip().splitlines() or [""])[0]
            raise OnnxError(self, f"cannot compute it: {type(error).__name__}: "
                                  f"{first}") from error
        return list(result) if isinstance(result, (tuple, list)) else [result]
