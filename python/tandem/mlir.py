"""A small builder for one `func.func @main` in the tandem dialect, printed in
MLIR's generic form (the spelling the IR contract fixes and `tandem-opt` always
parses).

It knows nothing of PyTorch: values are typed SSA names, ops are a name, some
operands, attributes and one result type. Ops no output depends on are
dropped when the function is printed.
"""
import math
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

FLOAT_TYPES = ("f32", "f16", "bf16")
INTEGER_TYPES = ("i64", "i32")


@dataclass(frozen=True)
class TensorType:
    shape: Tuple[int, ...]
    element: str  # f32 f16 bf16 i64 i32 i1

    def __str__(self):
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.element}>"

    @property
    def rank(self):
        return len(self.shape)

    @property
    def is_float(self):
        return self.element in FLOAT_TYPES

    def with_shape(self, shape):
        return TensorType(tuple(int(d) for d in shape), self.element)

    def with_element(self, element):
        return TensorType(self.shape, element)


@dataclass(frozen=True)
class Value:
    name: str  # without the %
    type: TensorType


# -- attributes ---------------------------------------------------------------

def i64(value: int) -> str:
    return f"{int(value)} : i64"


def i64_array(values: Sequence[int]) -> str:
    if not values:
        return "array<i64>"
    return "array<i64: " + ", ".join(str(int(v)) for v in values) + ">"


def boolean(value: bool) -> str:
    return "true" if value else "false"


def string(value: str) -> str:
    return '"' + escape(value) + '"'


def device(name: str) -> str:
    """`cpu`, `gpu` or `gpu:N` as a #tandem.device attribute."""
    kind, _, ordinal = name.partition(":")
    if kind not in ("cpu", "gpu") or (ordinal and not ordinal.isdigit()):
        raise ValueError(f"unknown device '{name}': expected cpu, gpu or gpu:N")
    if kind == "gpu" and ordinal and ordinal != "0":
        return f"#tandem.device<gpu, {ordinal}>"
    return f"#tandem.device<{kind}>"


def typed_scalar(value, element: str) -> str:
    """`value` as a typed attribute of element type `element`."""
    if element == "i1":
        return boolean(bool(value))
    if element in INTEGER_TYPES:
        return f"{int(value)} : {element}"
    value = float(value)
    if element == "f32" and math.isfinite(value):
        # Nine significant digits round-trip every f32.
        return f"{struct.unpack('<f', struct.pack('<f', value))[0]:.9e} : f32"
    return f"{_float_bits(value, element)} : {element}"


def float32(value: float) -> str:
    return typed_scalar(value, "f32")


def _float_bits(value: float, element: str) -> str:
    """The bit pattern MLIR accepts for any float, finite or not."""
    if element == "f32":
        return "0x%08X" % struct.unpack("<I", struct.pack("<f", value))[0]
    if element == "f16":
        return "0x%04X" % struct.unpack("<H", struct.pack("<e", value))[0]
    # bf16: the top half of the f32, rounded to nearest even.
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if math.isnan(value):
        return "0x7FC0"
    bits += 0x7FFF + ((bits >> 16) & 1)
    return "0x%04X" % ((bits >> 16) & 0xFFFF)


def escape(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\' or not (32 <= ord(ch) < 127):
            out.extend("\\%02X" % b for b in ch.encode())
        else:
            out.append(ch)
    return "".join(out)


# -- locations ----------------------------------------------------------------

@dataclass(frozen=True)
class Location:
    file: str = "-"
    line: int = 0
    column: int = 0
    name: str = ""  # the module path, e.g. "layer1.0.conv1"

    def __str__(self):
        inner = f"{string(self.file)}:{self.line}:{self.column}"
        if self.name and self.file == "-":
            return f"loc({string(self.name)})"
        if self.name:
            return f"loc({string(self.name)}({inner}))"
        return f"loc({inner})"


UNKNOWN = Location()


@dataclass
class Operation:
    name: str
    operands: List[Value]
    attributes: Dict[str, str]
    result: Optional[Value]
    location: Location


@dataclass
class FunctionBuilder:
    """Builds `func.func @main(args) -> results` op by op."""
    arguments: List[Value] = field(default_factory=list)
    operations: List[Operation] = field(default_factory=list)
    results: List[Value] = field(default_factory=list)
    _next: int = 0
    _producers: Dict[str, Operation] = field(default_factory=dict)

    def producer(self, value: Value) -> Optional[Operation]:
        """The op that defines `value` (None for arguments)."""
        return self._producers.get(value.name)

    def _fresh(self) -> str:
        self._next += 1
        return f"v{self._next - 1}"

    def add_argument(self, type: TensorType) -> Value:
        value = Value(f"arg{len(self.arguments)}", type)
        self.arguments.append(value)
        return value

    def create(self, name: str, operands: Sequence[Value], type: TensorType,
               attributes: Optional[Dict[str, str]] = None,
               location: Location = UNKNOWN) -> Value:
        result = Value(self._fresh(), type)
        op = Operation(name, list(operands), dict(attributes or {}), result,
                       location)
        self.operations.append(op)
        self._producers[result.name] = op
        return result

    def set_results(self, results: Sequence[Value]):
        self.results = list(results)

    def live_operations(self) -> List[Operation]:
        """The ops the results depend on, in program order."""
        needed = {value.name for value in self.results}
        live = []
        for op in reversed(self.operations):
            if op.result.name in needed:
                live.append(op)
                needed.update(operand.name for operand in op.operands)
        live.reverse()
        return live

    def print(self) -> str:
        args = ", ".join(f"%{a.name}: {a.type}" for a in self.arguments)
        result_types = ", ".join(str(r.type) for r in self.results)
        if len(self.results) != 1:
            result_types = f"({result_types})"
        lines = [f"func.func @main({args}) -> {result_types} {{"]
        for op in self.live_operations():
            operands = ", ".join(f"%{o.name}" for o in op.operands)
            attrs = ""
            if op.attributes:
                attrs = " {" + ", ".join(f"{k} = {v}" for k, v in
                                        op.attributes.items()) + "}"
            in_types = ", ".join(str(o.type) for o in op.operands)
            lines.append(f'  %{op.result.name} = "{op.name}"({operands}){attrs}'
                         f" : ({in_types}) -> {op.result.type} {op.location}")
        returned = ", ".join(f"%{r.name}" for r in self.results)
        returned_types = ", ".join(str(r.type) for r in self.results)
        lines.append(f"  func.return {returned} : {returned_types}")
        lines.append("}")
        return "\n".join(lines) + "\n"
