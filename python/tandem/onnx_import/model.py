"""Reading an ONNX model: the file (or ModelProto or bytes), its checks
(opset, operators, control flow), its inputs' static shapes, and the
traversal that decides which values are known at import time.

Values of an ONNX graph are of two kinds here:
- static: known while importing: initializers, Constant nodes, the shapes of
  tensors (every shape is static in Tandem) and whatever is computed from
  only these (the shape arithmetic exporters write: Shape -> Gather ->
  Concat -> Reshape). They are computed once, on the CPU, with the same
  PyTorch code that runs the node in the model;
- dynamic: depends on a model input. These become the traced model.

The traversal runs every dynamic node on the meta device, so shapes and
dtypes are known for every value without computing or allocating anything.
"""
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import torch

from ..errors import ExportError
from . import operators  # noqa: F401  (registers the operators)
from .node import Node, OnnxError

# ONNX TensorProto element types Tandem computes with (and those it folds
# at import time only).
ONNX_DTYPES = {1: torch.float32, 10: torch.float16, 16: torch.bfloat16,
               7: torch.int64, 6: torch.int32, 9: torch.bool,
               11: torch.float64, 2: torch.uint8, 3: torch.int8,
               5: torch.int16, 12: torch.uint32, 13: torch.uint64}
COMPUTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int64,
                   torch.int32, torch.bool)
MIN_OPSET = 13


def dtype_of(elem_type: int, what: str):
    if elem_type not in ONNX_DTYPES:
        raise ExportError(f"{what} has ONNX element type {elem_type}, which "
                          "Tandem does not support (float, float16, bfloat16, "
                          "int64, int32, bool)")
    return ONNX_DTYPES[elem_type]


def load(model, what: str = ""):
    """An onnx.ModelProto from a path, bytes or a ModelProto, checked; an
    ExportError saying what is wrong otherwise."""
    import onnx
    if isinstance(model, onnx.ModelProto):
        source = what or "the ONNX model"
    elif isinstance(model, (bytes, bytearray)):
        source = what or "the ONNX bytes"
        model = parse(bytes(model), source)
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        source = path
        model = read_file(path)
    else:
        raise ExportError(f"expected the path of an .onnx file, its bytes or an "
                          f"onnx.ModelProto, got {type(model).__name__}")
    check(model, source)
    return model


def parse(data: bytes, source: str):
    import onnx
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError and kin
        raise ExportError(f"{source} is not an ONNX model (truncated or not "
                          f"a protobuf): {error}") from None
    if not model.graph.node and not model.graph.output:
        raise ExportError(f"{source} is not an ONNX model: it has no graph")
    return model


def read_file(path: str):
    import onnx
    if not os.path.exists(path):
        raise ExportError(f"no ONNX file {path}")
    if not os.path.isfile(path):
        raise ExportError(f"{path} is not a regular file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as error:
        raise ExportError(f"cannot read {path}: {error.strerror or error}") from None
    model = parse(data, path)
    folder = os.path.dirname(os.path.abspath(path))
    for tensor in external_tensors(model):
        location = external_location(tensor)
        if not os.path.isfile(os.path.join(folder, location)):
            raise ExportError(f"{path}: initializer '{tensor.name}' keeps its data "
                              f"in the external file '{location}', which is not "
                              f"in {folder}")
    try:
        onnx.external_data_helper.load_external_data_for_model(model, folder)
    except Exception as error:
        raise ExportError(f"{path}: cannot load its external data: "
                          f"{type(error).__name__}: {error}") from None
    return model


def external_tensors(model):
    import onnx
    return [t for t in onnx.external_data_helper._get_all_tensors(model)
            if t.data_location == onnx.TensorProto.EXTERNAL]


def external_location(tensor) -> str:
    for entry in tensor.external_data:
        if entry.key == "location":
            return entry.value
    return "?"


def check(model, source: str):
    import onnx
    opset = default_opset(model)
    newest = onnx.defs.onnx_opset_version()
    if opset is None:
        raise ExportError(f"{source} imports no version of the default ONNX "
                          "operator set")
    if opset < MIN_OPSET:
        raise ExportError(f"{source} is opset {opset}; Tandem imports opset "
                          f"{MIN_OPSET} to {newest} (convert it with "
                          f"onnx.version_converter.convert_version(model, "
                          f"{MIN_OPSET}))")
    if opset > newest:
        raise ExportError(f"{source} is opset {opset}, newer than the onnx "
                          f"package here knows ({newest}): upgrade onnx")
    try:
        onnx.checker.check_model(model)
    except Exception as error:  # onnx.checker.ValidationError
        first = (str(error).strip().splitlines() or [""])[0]
        # An operator version the onnx package has since deprecated (as
        # GroupNormalization-18) is still well defined: imported as written.
        # So is a graph input or output without a shape: ONNX Runtime runs
        # it, and the shape comes from the shapes given.
        tolerated = ("is deprecated in domain_version",
                     "Field 'shape' of 'type' is required but missing")
        if not any(t in first for t in tolerated):
            raise ExportError(f"{source} is not a valid ONNX model: {first}") \
                from None


def default_opset(model) -> Optional[int]:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return None


def inline_functions(model):
    """Model-local functions (what some exporters wrap modules in) inlined
    into the main graph."""
    if not model.functions:
        return model
    import onnx.inliner
    return onnx.inliner.inline_local_functions(model)


@dataclass
class ValueInfo:
    """What the import knows of one ONNX value: a meta tensor (shape and
    dtype), and its contents when it is static."""
    meta: torch.Tensor
    static: Optional[torch.Tensor] = None


@dataclass
class Graph:
    """The ONNX graph as the module runs it."""
    source: str  # the file, for locations and messages
    inputs: List[str]
    input_types: List[torch.Tensor]  # meta tensors of the inputs
    outputs: List[str]
    nodes: List[Node]  # every node, in topological order
    values: Dict[str, ValueInfo] = field(default_factory=dict)
    initializer_names: set = field(default_factory=set)

    @property
    def dynamic_nodes(self) -> List[Node]:
        return [n for n in self.nodes if not n.static]


def graph_input_shapes(model, shapes, source) -> List[torch.Tensor]:
    """The graph inputs (not initializers) as meta tensors, each dimension
    static: from the model, or from `shapes` where it has none."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    given = normalize_shapes(shapes, inputs)
    metas = []
    for k, info in enumerate(inputs):
        kind = info.type.WhichOneof("value")
        if kind != "tensor_type":
            raise ExportError(f"input '{info.name}' is an ONNX {kind}, not a tensor")
        tensor_type = info.type.tensor_type
        dtype = dtype_of(tensor_type.elem_type, f"input '{info.name}'")
        if dtype not in COMPUTED_DTYPES:
            raise ExportError(f"input '{info.name}' is {dtype}; Tandem models take "
                              "float32, float16, bfloat16, int64, int32 or bool")
        model_dims = None
        if tensor_type.HasField("shape"):  # a dim_value (0 included) is static
            model_dims = [d.dim_value if d.HasField("dim_value") else
                          (d.dim_param or None) for d in tensor_type.shape.dim]
        shape = given.get(info.name)
        if shape is None:
            if model_dims is None:
                raise ExportError(f"input '{info.name}' has no shape in the model: "
                                  "give it (--shape, or shapes=)")
            for axis, dim in enumerate(model_dims):
                if not isinstance(dim, int) or dim < 0:
                    name = f" '{dim}'" if isinstance(dim, str) else ""
                    raise ExportError(
                        f"input '{info.name}' has a dynamic dimension{name} (axis "
                        f"{axis} of {describe_dims(model_dims)}): Tandem compiles "
                        "static shapes; give the input's shape (--shape, or "
                        "shapes=)")
            shape = model_dims
        elif model_dims is not None:
            agree = len(model_dims) == len(shape) and all(
                not isinstance(m, int) or m == s for m, s in zip(model_dims, shape))
            if not agree:
                raise ExportError(f"input '{info.name}' is {describe_dims(model_dims)}"
                                  f" in the model; the shape given, "
                                  f"{describe_dims(shape)}, does not fit it")
        metas.append(torch.empty(tuple(shape), dtype=dtype, device="meta"))
    return [i.name for i in inputs], metas


def describe_dims(dims) -> str:
    return "x".join(str(d) if d is not None else "?" for d in dims) or "a scalar"


def normalize_shapes(shapes, inputs) -> Dict[str, Sequence[int]]:
    """`shapes` (None, a list in input order, or a dict by input name) as a
    dict by input name."""
    if shapes is None:
        return {}
    names = [i.name for i in inputs]
    if isinstance(shapes, dict):
        unknown = [n for n in shapes if n not in names]
        if unknown:
            raise ExportError(f"shapes names '{unknown[0]}', which is not an input "
                              f"of the model (its inputs: {', '.join(names)})")
        items = shapes.items()
    else:
        shapes = list(shapes)
        if len(shapes) != len(names):
            raise ExportError(f"{len(shapes)} shape(s) given for the model's "
                              f"{len(names)} input(s) ({', '.join(names)})")
        items = zip(names, shapes)
    result = {}
    for name, shape in items:
        try:
            dims = tuple(int(d) for d in shape)
            exact = all(int(d) == d for d in shape)
        except (TypeError, ValueError):
            dims, exact = None, False
        if not exact:
            raise ExportError(f"the shape of input '{name}' must be a sequence of "
                              f"whole numbers, got {shape!r}")
        if any(d <= 0 for d in dims):
            raise ExportError(f"the shape of input '{name}' must have positive "
                              f"dimensions, got {describe_dims(dims)}")
        result[name] = dims
    return result


def build_graph(model, shapes, source: str) -> Graph:
    """Checks every node, then walks the graph: static values computed on the
    CPU, dynamic ones on the meta device."""
    import onnx.numpy_helper
    model = inline_functions(model)
    opset = default_opset(model)
    names, metas = graph_input_shapes(model, shapes, source)
    nodes = [Node(proto, k, opset, source) for k, proto in
             enumerate(model.graph.node)]
    for node in nodes:  # refuse before any work
        node.check_supported()
    graph = Graph(source, names, metas, [o.name for o in model.graph.output],
                  nodes)
    for name, meta in zip(names, metas):
        graph.values[name] = ValueInfo(meta)
    for tensor in model.graph.initializer:
        array = onnx.numpy_helper.to_array(tensor)
        value = torch.from_numpy(array.copy()) if array.dtype != object else None
        if value is None:
            raise ExportError(f"initializer '{tensor.name}' holds strings")
        graph.values[tensor.name] = ValueInfo(value.to("meta"), value)
        graph.initializer_names.add(tensor.name)
    for node in nodes:
        run_at_import(graph, node)
    for name in graph.outputs:
        if name not in graph.values:
            raise ExportError(f"{source}: the graph output '{name}' is made by "
                              "no node")
    check_declared_outputs(model, graph, source)
    return graph


def check_declared_outputs(model, graph, source):
    """Each graph output's shape and type as the model declares them (where
    it does) against what the import computed: a disagreement is an error,
    never a silently different result."""
    for info in model.graph.output:
        tensor_type = info.type.tensor_type if info.type.HasField("tensor_type") \
            else None
        meta = graph.values[info.name].meta
        if tensor_type is None:
            continue
        if tensor_type.elem_type and tensor_type.elem_type in ONNX_DTYPES and \
                ONNX_DTYPES[tensor_type.elem_type] != meta.dtype:
            raise ExportError(f"{source}: output '{info.name}' is declared "
                              f"{ONNX_DTYPES[tensor_type.elem_type]}, Tandem computes "
                              f"{meta.dtype}")
        if not tensor_type.HasField("shape"):
            continue
        declared = [d.dim_value if d.HasField("dim_value") else None
                    for d in tensor_type.shape.dim]
        computed = list(meta.shape)
        if len(declared) != len(computed) or any(
                d is not None and d != c for d, c in zip(declared, computed)):
            raise ExportError(f"{source}: output '{info.name}' is declared "
                              f"{describe_dims(declared)}, Tandem computes "
                              f"{describe_dims(computed)}")


def run_at_import(graph: Graph, node: Node):
    inputs = []
    for name in node.inputs:
        if not name:
            inputs.append(None)
        elif name not in graph.values:
            raise OnnxError(node, f"reads '{name}', which no earlier node, "
                                  "input or initializer makes (the graph is not "
                                  "in topological order)")
        else:
            inputs.append(graph.values[name])
    node.bind_static({k: info.static for k, info in enumerate(inputs)
                      if info is not None and info.static is not None})
    tensor_positions = [k for k, info in enumerate(inputs)
                        if info is not None and k not in node.operator.static_inputs]
    node.static = node.operator.shape_only or all(
        inputs[k].static is not None for k in tensor_positions)
    if node.static:
        args = [info.static if info is not None and info.static is not None
                else (info.meta if info is not None else None) for info in inputs]
    else:
        args = [info.meta if info is not None else None for info in inputs]
    args = [a if k not in node.operator.static_inputs else None
            for k, a in enumerate(args)]
    results = node.run(args)
    for name, result in zip(node.outputs, results):
        if not name:
            continue
        if not isinstance(result, torch.Tensor):
            raise OnnxError(node, "produced no tensor")
        if node.static:
            graph.values[name] = ValueInfo(result.to("meta"), result)
        else:
            if result.dtype not in COMPUTED_DTYPES:
                raise OnnxError(node, f"computes a {result.dtype} tensor at run "
                                      "time; Tandem computes float32, float16, "
                                      "bfloat16, int64, int32 and bool")
            graph.values[name] = ValueInfo(result)
