"""Where an exported op comes from: the model's source line (from the
node's stack trace, skipping PyTorch's own frames) and its module path, for
op locations and for messages."""
import os
import re
from dataclasses import dataclass
from typing import Optional

import torch

from . import mlir

TORCH_DIR = os.path.dirname(torch.__file__)


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    code: str


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in [^\n]*\n'
                    r'(?P<code>[^\n]*)?')


def source_frame(node) -> Optional[Frame]:
    """The innermost frame of the node's stack trace outside PyTorch itself:
    the model's own line."""
    trace = node.meta.get("stack_trace") if hasattr(node, "meta") else None
    if not trace:
        return None
    frames = [Frame(m["file"], int(m["line"]), (m["code"] or "").strip())
              for m in _FRAME.finditer(trace + "\n")]
    if not frames:
        return None
    own = [f for f in frames if not f.file.startswith(TORCH_DIR)]
    frame = (own or frames)[-1]
    return Frame(short_path(frame.file), frame.line, frame.code)


def short_path(path: str) -> str:
    """A source path as people read it: from the package root for installed
    packages (torchvision/models/resnet.py), relative to the working folder
    for the user's own files."""
    marker = "site-packages" + os.sep
    if marker in path:
        return path.split(marker, 1)[1]
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def module_path(node) -> str:
    """`layer1.0.conv1` for an op traced in that submodule."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"\._modules\['([^']+)'\]", r".\1", path)
    return path.strip(".")


# The annotation an op traced from an ONNX node carries (tandem.onnx_import):
# the node's name, file, position and operator, joined by NUL.
ONNX_NODE_KEY = "tandem_onnx_node"


def onnx_origin(node):
    """(name, file, position, operator) of the ONNX node `node` was traced
    from, or None."""
    custom = node.meta.get("custom") if hasattr(node, "meta") else None
    if not isinstance(custom, dict) or ONNX_NODE_KEY not in custom:
        return None
    return tuple(custom[ONNX_NODE_KEY].split("\0"))


def location_of(node) -> mlir.Location:
    origin = onnx_origin(node)
    if origin is not None:
        name, file, position, _ = origin
        return mlir.Location(file, int(position), 0, name)
    frame = source_frame(node)
    name = module_path(node)
    if frame is None:
        return mlir.Location(name=name) if name else mlir.UNKNOWN
    return mlir.Location(frame.file, frame.line, 0, name)


def user_call(node) -> str:
    """The PyTorch call an ATen op was decomposed from, as the user wrote it
    (`F.pad`'s `pad()`, `x.sort()`'s `Tensor.sort()`), where its name is not
    the op's own; else ''."""
    meta = getattr(node, "meta", None) or {}
    torch_fn = meta.get("torch_fn")
    if not (isinstance(torch_fn, tuple) and len(torch_fn) == 2):
        return ""
    kind, _, function = str(torch_fn[1]).partition(".")
    if function.startswith("__"):  # operators: only indexing says more
        return {"__getitem__": "x[...]", "__setitem__": "x[...] = v"}.get(function, "")
    op_name = str(getattr(node, "target", "")).split(".")
    base = op_name[1].strip("_") if len(op_name) > 1 else ""
    if not function or base.startswith(function):
        return ""
    return {"function": f"{function}()", "method": f"Tensor.{function}()",
            "method_descriptor": f"Tensor.{function}()",
            "builtin_function_or_method": f"torch.{function}()"}.get(
        kind, f"{kind}.{function}()")


def describe(node) -> str:
    """`aten.op (from the PyTorch call f()) at file:line (source)` for
    messages."""
    target = getattr(node, "target", node)
    name = str(target)
    call = user_call(node) if node is not None else ""
    if call:
        name += f" (from the PyTorch call {call})"
    origin = onnx_origin(node) if node is not None else None
    if origin is not None:
        node_name, file, position, op_type = origin
        return (f"{name} from ONNX node '{node_name}' ({op_type}, node "
                f"{position} of {file})")
    frame = source_frame(node) if node is not None else None
    if frame is None:
        return name
    where = f"{name} at {frame.file}:{frame.line}"
    return where + (f" ({frame.code})" if frame.code else "")
