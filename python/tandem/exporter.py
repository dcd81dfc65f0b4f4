"""`tandem.export`: an nn.Module and example inputs → `prefix.mlir` (the
tandem dialect) and `prefix.safetensors` (its parameters and buffers).

The module is traced with `torch.export` in eval mode and decomposed to core
ATen; `lowering.LOWERINGS` maps each ATen op onto the dialect. Ops traced
inside `tandem.device_guard(...)` carry `tandem.pin`. Every op carries the
location of the model's source line that made it, and the module path
(`layer1.0.conv1`). Both files are written only when the whole export
succeeded.
"""
import contextlib
import inspect
import os
import sysconfig
import tempfile
import threading
import traceback

import torch

from . import mlir
from .arguments import non_dense_layout, path_argument
from .errors import ExportError
from .folding import fold_constant, plan_batch_norm_folds
from .lowering import LOWERINGS, Context, Unavailable, tensor_type
from .sources import TORCH_DIR, describe, location_of, short_path
from .mlir import Value
from .weights import is_supported, write_safetensors

PIN_KEY = "tandem_pin"
MAX_GPU_ORDINAL = (1 << 31) - 1
# torch.export keeps global state while it traces (the fake-tensor mode
# stack, node-meta annotations): one export at a time in this process.
TRACE_LOCK = threading.RLock()


def check_device(device) -> str:
    """`device` as device_guard takes it ("cpu", "gpu", "gpu:N"), in its
    canonical spelling, or an ExportError naming the argument."""
    if not isinstance(device, str):
        raise ExportError(f"device_guard: device must be a string ('cpu', 'gpu' or "
                          f"'gpu:N'), got {type(device).__name__}")
    kind, sep, ordinal = device.partition(":")
    if kind in ("cpu", "gpu") and not sep:
        return device
    if (kind == "gpu" and ordinal.isascii() and ordinal.isdigit()
            and int(ordinal) <= MAX_GPU_ORDINAL):
        return f"gpu:{int(ordinal)}"
    raise ExportError(f"device_guard: unknown device {device!r}: expected 'cpu', "
                      f"'gpu' or 'gpu:N' (N from 0 to {MAX_GPU_ORDINAL})")


def device_guard(device: str = "cpu"):
    """Ops traced inside run on `device` ("cpu", "gpu" or "gpu:N"): they carry
    `tandem.pin`, which placement never overrides (PaddlePaddle's
    device_guard). Outside an export it does nothing. A wrong device is an
    ExportError when device_guard is called, not at export."""
    device = check_device(device)
    annotate = getattr(torch.fx.traceback, "annotate", None)
    if annotate is None:
        raise ExportError("tandem.device_guard needs a PyTorch with "
                          "torch.fx.traceback.annotate; this is PyTorch "
                          f"{torch.__version__}")
    return _pinned(annotate, device)


@contextlib.contextmanager
def _pinned(annotate, device):
    with annotate({PIN_KEY: device}):
        yield


def trace(module, example_args):
    """torch.export in eval mode, decomposed to core ATen; scaled dot-product
    attention, roll and adaptive average pooling are kept whole (the
    lowering package spells them out)."""
    if not hasattr(torch, "export") or not hasattr(torch.export,
                                                     "default_decompositions"):
        raise ExportError("tandem.export needs a PyTorch whose torch.export "
                          "has default_decompositions; this is PyTorch "
                          f"{torch.__version__}")
    training = {m: m.training for m in module.modules()}
    module.eval()
    try:
        with torch.fx.traceback.preserve_node_meta():
            program = torch.export.export(module, tuple(example_args),
                                          strict=False)
        table = torch.export.default_decompositions()
        # Kept whole: their lowerings are shorter than PyTorch's
        # decompositions (roll's goes through a modulo Tandem lacks, adaptive
        # pooling's through as_strided views).
        for kept in (torch.ops.aten.scaled_dot_product_attention.default,
                     torch.ops.aten.roll.default,
                     torch.ops.aten.adaptive_avg_pool2d.default,
                     torch.ops.aten._adaptive_avg_pool2d.default):
            if kept in table:
                del table[kept]
        return program.run_decompositions(table)
    except ExportError:
        raise
    except Exception as error:
        raise ExportError(explain_trace_failure(module, error)) from error
    finally:
        for submodule, mode in training.items():
            submodule.train(mode)


def explain_trace_failure(module, error) -> str:
    text = str(error).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    kind = type(error).__name__
    name = type(module).__name__
    where = failing_line(error)
    if "data-dependent" in text or "DataDependent" in kind:
        return (f"torch.export cannot trace {name}{where}: its control flow "
                f"depends on tensor values (data-dependent), which a static "
                f"graph cannot express: {first}")
    return f"torch.export cannot trace {name}{where}: {kind}: {first}"


# Frames of these folders are never the model's own line: PyTorch, this
# package and Python's standard library (inspect, contextlib...), though
# installed packages (torchvision) are.
NOT_THE_MODEL = tuple(os.path.join(folder, "") for folder in (
    TORCH_DIR, os.path.dirname(os.path.abspath(__file__))))
STDLIB = os.path.join(sysconfig.get_paths()["stdlib"], "")


def is_model_frame(filename: str) -> bool:
    if filename.startswith("<"):  # <string>, <frozen ...>
        return False
    filename = os.path.abspath(filename)
    if filename.startswith(NOT_THE_MODEL):
        return False
    if filename.startswith(STDLIB):
        rest = filename[len(STDLIB):]
        return rest.startswith(("site-packages", "dist-packages"))
    return True


def failing_line(error) -> str:
    """` at file:line (code)` for the model's innermost frame in the
    exception's traceback, or ''."""
    own = [frame for frame in traceback.extract_tb(error.__traceback__)
           if is_model_frame(frame.filename)]
    if not own:
        return ""
    frame = own[-1]
    code = f" ({frame.line.strip()})" if frame.line else ""
    return f" at {short_path(frame.filename)}:{frame.lineno}{code}"


class Exporter:
    def __init__(self, program):
        self.program = program
        self.builder = mlir.FunctionBuilder()
        self.cx = Context(self.builder)
        self.weights = {}  # name → tensor the graph reads
        self.aten_ops = set()  # the overloads lowered
        self.folds = {}  # node → BatchNormFold (folding.py)
        self.constants = {}  # node → its tensor, for the model's constants
        self.cx.add_weight = self.folded_weight

    def run(self):
        signature = self.program.graph_signature
        kinds = {spec.arg.name: spec for spec in signature.input_specs}
        for spec in signature.output_specs:
            if spec.kind.name != "USER_OUTPUT":
                raise ExportError(f"the module changes {spec.kind.name.lower()} "
                                  f"'{spec.target}' while it runs; Tandem "
                                  "exports pure inference (eval mode)")
        constants = {spec.arg.name: spec for spec in signature.input_specs
                     if spec.kind.name in ("PARAMETER", "BUFFER",
                                           "CONSTANT_TENSOR")}

        def tensor_of(node):
            spec = constants.get(getattr(node, "name", None))
            if spec is None:
                return None, None
            tensor = self.program.state_dict.get(spec.target)
            if tensor is None:
                tensor = self.program.constants.get(spec.target)
            return spec.target, tensor
        self.folds = plan_batch_norm_folds(self.program, tensor_of)
        for node in self.program.graph.nodes:
            if node.op == "placeholder":
                self.cx.values[node] = self.placeholder(node, kinds[node.name])
            elif node.op == "call_function":
                self.cx.values[node] = self.call(node)
            elif node.op == "output":
                self.output(node)
            else:
                raise ExportError(f"unexpected graph node {node.op} {node.target}")

    def placeholder(self, node, spec):
        kind = spec.kind.name
        fake = node.meta.get("val")
        if kind == "USER_INPUT":
            if not isinstance(fake, torch.Tensor):
                raise ExportError(f"input '{node.name}' is {fake!r}, not a tensor: "
                                  "Tandem models take tensors only")
            try:
                return self.builder.add_argument(tensor_type(fake))
            except ExportError as error:
                raise ExportError(f"input '{node.name}': {error}") from None
        if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
            name = spec.target
            tensor = self.program.state_dict.get(name)
            if tensor is None:
                tensor = self.program.constants.get(name)
            if tensor is None:
                raise ExportError(f"no value for {kind.lower()} '{name}'")
            if kind == "CONSTANT_TENSOR":
                name = "constant." + name
            try:
                type = tensor_type(tensor)
            except ExportError as error:
                raise ExportError(f"{kind.lower()} '{name}': {error}") from None
            self.weights[name] = tensor
            self.constants[node] = tensor
            return self.weight_value(name, tensor, type)
        raise ExportError(f"input '{node.name}' of kind {kind} is not supported")

    def convert(self, arg):
        """A node argument with graph nodes replaced by their values."""
        if isinstance(arg, torch.fx.Node):
            value = self.cx.values[arg]
            if isinstance(value, Unavailable):
                raise self.cx.error(f"the model uses {value.what}, which Tandem "
                                    "does not compute")
            return value
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.convert(a) for a in arg)
        return arg

    def call(self, node):
        lowering = LOWERINGS.get(node.target)
        self.cx.node = node
        if lowering is None:
            raise ExportError(f"unsupported op {describe(node)}: Tandem has no "
                              "lowering for it")
        self.aten_ops.add(node.target)
        self.cx.location = location_of(node)
        self.cx.pin = node.meta.get("custom", {}).get(PIN_KEY) \
            if isinstance(node.meta.get("custom"), dict) else None
        fold = self.folds.get(node)
        if fold is not None and node is fold.batch_norm:
            # Folded into the convolution or linear, whose result is the
            # norm's.
            return [self.cx.values[fold.producer],
                    Unavailable("the batch mean of batch_norm"),
                    Unavailable("the batch deviation of batch_norm")]
        folded = self.fold(node)
        if folded is not None:
            return folded
        if fold is not None and fold.rows is not None:
            # A linear with the norm folded in: the rows times the folded
            # weight (read as it is, no transpose) plus the folded bias.
            return self.cx.emit(
                "tandem.linear",
                [self.convert(fold.rows),
                 self.folded_weight(fold.weight_name, fold.weight),
                 self.folded_weight(fold.bias_name, fold.bias)],
                self.cx.result_type())
        args = self.convert(node.args)
        kwargs = {k: self.convert(v) for k, v in node.kwargs.items()}
        if fold is not None:
            args = list(args)
            args[1] = self.folded_weight(fold.weight_name, fold.weight)
            args[2] = self.folded_weight(fold.bias_name, fold.bias)
        try:
            return lowering(self.cx, *args, **kwargs)
        except ExportError:
            raise
        except Exception as error:  # a lowering's own bug: still say where
            raise ExportError(f"{describe(node)}: cannot lower it: "
                              f"{type(error).__name__}: {error}") from error

    def fold(self, node):
        """`node`'s value as a weight when it is computed from the model's
        constants alone (folding.fold_constant), else None."""
        def constant(arg):
            if isinstance(arg, torch.fx.Node):
                return self.constants.get(arg, arg)
            if isinstance(arg, (list, tuple)):
                return type(arg)(constant(a) for a in arg)
            return arg
        known = {id(t) for t in self.constants.values()}
        value = fold_constant(node, constant(node.args),
                              {k: constant(v) for k, v in node.kwargs.items()},
                              lambda t: id(t) in known)
        if value is None or not is_supported(value):
            return None
        try:
            tensor_type(value)
        except ExportError:
            return None
        self.constants[node] = value
        return self.folded_weight("folded." + node.name, value)

    def folded_weight(self, name, tensor):
        """A weight the export computed (folding.py), read like the model's
        own (under a name no tensor of the model has)."""
        while name in self.weights or name in self.program.state_dict:
            name += "_"
        self.weights[name] = tensor
        return self.weight_value(name, tensor, tensor_type(tensor))

    def weight_value(self, name, tensor, type):
        """A tandem.weight reading `name`, whose value lowerings may fold
        (Context.folded)."""
        value = self.builder.create("tandem.weight", [], type,
                                    {"name": mlir.string(name)},
                                    mlir.Location(name=name))
        self.cx.weight_values[value.name] = (name, tensor)
        return value

    def output(self, node):
        results = []
        for k, arg in enumerate(node.args[0]):
            value = self.convert(arg) if isinstance(arg, torch.fx.Node) else arg
            if not isinstance(value, Value):
                raise ExportError(f"output {k} is {value!r}, not a tensor: Tandem "
                                  "models return tensors only")
            results.append(value)
        if not results:
            raise ExportError("the module returns no tensor")
        self.builder.set_results(results)

    def weights_file_contents(self):
        """Every parameter and buffer of a supported dtype under its
        state_dict name, plus the constants and folded weights the graph
        reads (not those a later fold superseded: a batch-norm-folded
        kernel of which only the depth slices are read)."""
        tensors = {name: t for name, t in self.program.state_dict.items()
                   if is_supported(t)}
        read = {self.cx.weight_values[op.result.name][0]
                for op in self.builder.live_operations()
                if op.result.name in self.cx.weight_values}
        tensors.update({name: t for name, t in self.weights.items()
                        if name in read or name in tensors})
        return tensors


def export(module: torch.nn.Module, example_args, prefix: str):
    """Writes `prefix.mlir` and `prefix.safetensors`; returns both paths.

    `example_args` is a tensor or a tuple (or list) of tensors: the shapes
    and dtypes `@main` takes. `prefix` is a path (str or os.PathLike) with
    the file name's stem, e.g. "out/model". Raises ExportError (and writes
    nothing) when the module cannot be exported, an argument is wrong or the
    files cannot be written."""
    prefix = check_prefix(prefix)
    export_model(module, example_args, prefix)
    return prefix + ".mlir", prefix + ".safetensors"


def export_model(module, example_args, prefix: str) -> "Exporter":
    """export()'s work; returns the Exporter, which knows @main's argument
    and result types and the ATen ops it lowered (what tandem.compile
    needs besides the files)."""
    prefix = check_prefix(prefix)
    example_args = normalize_example_args(module, example_args)
    check_writable(prefix)  # before the trace it would waste
    with TRACE_LOCK:
        exporter = Exporter(trace(module, example_args))
        exporter.run()
    write_both(prefix + ".mlir", header(module, example_args) +
               exporter.builder.print(), prefix + ".safetensors",
               exporter.weights_file_contents())
    return exporter


def check_prefix(prefix) -> str:
    """The output prefix as a str path, or an ExportError naming it."""
    if isinstance(prefix, str) and not prefix:
        raise ExportError("prefix is empty: give a path such as 'out/model' "
                          "(the files are prefix.mlir and prefix.safetensors)")
    prefix = path_argument("prefix", prefix, ExportError, example="out/model")
    separators = tuple(s for s in (os.sep, os.altsep) if s)
    if prefix.endswith(separators) or os.path.basename(prefix) in (".", ".."):
        raise ExportError(f"prefix '{prefix}' names a folder: give a path inside "
                          f"it, such as '{os.path.join(prefix, 'model')}'")
    return prefix


def check_writable(prefix: str):
    """Fails early, before the trace, where the files plainly cannot go: a
    folder on the way that is a file, an output path that is a folder."""
    folder = os.path.dirname(os.path.abspath(prefix))
    existing = folder
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ExportError(f"cannot write {prefix}.mlir: {existing} is a file, not a "
                          "folder")
    for path in (prefix + ".mlir", prefix + ".safetensors"):
        if os.path.isdir(path):
            raise ExportError(f"cannot write {path}: it is a folder")


def normalize_example_args(module, example_args):
    """The example inputs as a tuple of tensors, or an ExportError."""
    if isinstance(module, type) and issubclass(module, torch.nn.Module):
        raise ExportError(f"module must be an nn.Module instance, got the class "
                          f"{module.__name__} (create one: {module.__name__}(...))")
    if not isinstance(module, torch.nn.Module):
        raise ExportError(f"module must be an nn.Module, got {type(module).__name__}")
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    elif isinstance(example_args, list):
        example_args = tuple(example_args)
    elif not isinstance(example_args, tuple):
        raise ExportError(f"example_args must be a tensor or a tuple or list of "
                          f"tensors, got {type(example_args).__name__}")
    for k, arg in enumerate(example_args):
        if not isinstance(arg, torch.Tensor):
            raise ExportError(f"example_args[{k}] is {type(arg).__name__}, not a "
                              "tensor (Tandem models take a flat tuple of tensors)")
        layout = non_dense_layout(arg)
        if layout:
            raise ExportError(f"example_args[{k}] is a {layout} tensor: Tandem "
                              "compiles dense tensors (pass .to_dense())")
    check_forward_takes(module, example_args)
    check_weights_have_data(module)
    return example_args


def check_forward_takes(module, example_args):
    """A clear error when forward() cannot take that many tensors."""
    try:
        signature = inspect.signature(module.forward)
    except (TypeError, ValueError):  # a builtin or an odd callable: let export say
        return
    try:
        signature.bind(*example_args)
    except TypeError as error:
        raise ExportError(f"example_args: {len(example_args)} tensor(s) do not fit "
                          f"{type(module).__name__}.forward{signature}: {error}") \
            from None


def check_weights_have_data(module):
    """Parameters and buffers on the meta device (or sparse ones) have no
    values to write into the weights file."""
    named = list(module.named_parameters()) + list(module.named_buffers())
    for name, tensor in named:
        if tensor.is_meta:
            raise ExportError(f"parameter or buffer '{name}' is on the meta device: "
                              "it has no values to write; load the weights first "
                              "(e.g. load_state_dict(state, assign=True))")
        if tensor.layout != torch.strided:
            raise ExportError(f"parameter or buffer '{name}' is a {tensor.layout} "
                              "tensor: Tandem needs dense weights")


def header(module, example_args) -> str:
    shapes = ", ".join(f"{tuple(a.shape)} {a.dtype}" for a in example_args)
    return (f"// Exported by tandem.export from {type(module).__name__} "
            f"(torch {torch.__version__}), inputs: {shapes}\n")


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def write_both(mlir_path, text, weights_path, tensors):
    """Writes both files through temporary names, so that a failure leaves
    neither half-written; an ExportError names the file that could not be
    written."""
    directory = os.path.dirname(os.path.abspath(mlir_path))
    temporaries = []
    current = mlir_path
    try:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as error:
            raise ExportError(f"cannot write {mlir_path}: cannot create the folder "
                              f"{directory}: {error.strerror or error}") from None
        for path, write in ((mlir_path, lambda p: write_text(p, text)),
                            (weights_path, lambda p: write_safetensors(p, tensors))):
            current = path
            handle, temporary = tempfile.mkstemp(
                dir=os.path.dirname(os.path.abspath(path)),
                prefix=os.path.basename(path) + ".")
            os.close(handle)
            temporaries.append((temporary, path))
            write(temporary)
            os.chmod(temporary, 0o666 & ~current_umask())  # mkstemp made it 0600
        for temporary, path in temporaries:
            current = path
            os.replace(temporary, path)
        temporaries = []
    except OSError as error:
        raise ExportError(f"cannot write {current}: {error.strerror or error}") \
            from None
    finally:
        for temporary, _ in temporaries:
            if os.path.exists(temporary):
                os.unlink(temporary)
