"""`tandem.compile`: export a module, compile it with `tandem-compile
--emit=lib` and call the compiled model from Python through ctypes.

The library exports `tandem_model_load(weights, backend, error, size)`,
`tandem_model_infer(inputs, outputs, error, size)` (caller-owned buffers of
the model's shapes, in order) and `tandem_model_unload()`; see
docs/runtime.md.
"""
import ctypes
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import torch

from .errors import CompileError, RuntimeFailure
from .lowering import TORCH_ELEMENTS

DTYPES = {element: dtype for dtype, element in TORCH_ELEMENTS.items()}
BACKENDS = ("auto", "sim", "cuda")


def find_compiler() -> str:
    """tandem-compile: $TANDEM_COMPILE, else PATH, else this repository's
    build folder."""
    explicit = os.environ.get("TANDEM_COMPILE")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise CompileError(f"TANDEM_COMPILE={explicit} is not an executable")
        return explicit
    on_path = shutil.which("tandem-compile")
    if on_path:
        return on_path
    built = Path(__file__).resolve().parents[2] / "build" / "bin" / "tandem-compile"
    if built.exists():
        return str(built)
    raise CompileError("tandem-compile not found: set TANDEM_COMPILE, put it on "
                       "PATH, or build the repository (scripts/setup.sh)")


def run_compiler(mlir_path, output, emit="lib", gpu_memory=None,
                 device_profile=None, strategy="auto", report=None):
    command = [find_compiler(), mlir_path, "-o", output, f"--emit={emit}",
               f"--strategy={strategy}"]
    if gpu_memory is not None:
        command.append(f"--gpu-memory={format_budget(gpu_memory)}")
    if device_profile is not None:
        command.append(f"--device-profile={device_profile}")
    if report is not None:
        command.append(f"--report={report}")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(f"tandem-compile failed on {mlir_path}:\n"
                           f"{done.stderr.strip()}")
    return done


def check_backend(backend):
    if backend not in BACKENDS:
        raise RuntimeFailure(f"unknown backend '{backend}': expected one of "
                             f"{', '.join(BACKENDS)}")


def format_budget(budget) -> str:
    """4 << 30 or "4GiB" → what --gpu-memory takes."""
    if isinstance(budget, bool) or not isinstance(budget, (int, str)):
        raise CompileError(f"gpu_memory must be bytes (int) or a size string "
                           f"like '4GiB', got {budget!r}")
    if isinstance(budget, int) and budget < 0:
        raise CompileError(f"gpu_memory must not be negative, got {budget}")
    return str(budget)


class CompiledModel:
    """A model compiled into a shared library and loaded into this process.

    Call it with tensors of the example shapes and dtypes; it returns a tensor
    (one result) or a tuple. `report` is the placement report (JSON, as
    `tandem-compile --report` writes it); `mlir_path`, `weights_path` and
    `library_path` are the files it was built from."""

    def __init__(self, library_path, weights_path, mlir_path, input_types,
                 output_types, report, backend, aten_ops=(), owned_folder=None):
        check_backend(backend)
        self.library_path = library_path
        self.weights_path = weights_path
        self.mlir_path = mlir_path
        self.input_types = input_types
        self.output_types = output_types
        self.report = report
        self.backend = backend
        self.aten_ops = set(aten_ops)  # what the export lowered
        self._owned_folder = owned_folder  # a temporary folder close() removes
        self._loaded = False
        self._error = ctypes.create_string_buffer(4096)
        self._library = ctypes.CDLL(library_path, mode=ctypes.RTLD_LOCAL)
        self._library.tandem_model_load.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64]
        self._library.tandem_model_infer.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]
        self._library.tandem_model_unload.argtypes = []
        status = self._library.tandem_model_load(
            weights_path.encode(), backend.encode(), self._error, len(self._error))
        if status != 0:
            raise RuntimeFailure(f"cannot load {library_path}: "
                                 f"{self._error.value.decode(errors='replace')}")
        self._loaded = True

    def devices(self):
        """{"cpu": n, "gpu": n}: how many ops the placement put on each."""
        counts = {}
        for op in (self.report or {}).get("ops", []):
            counts[op["device"]] = counts.get(op["device"], 0) + 1
        return counts

    def __call__(self, *args):
        if not self._loaded:
            raise RuntimeFailure("the model was closed")
        if len(args) != len(self.input_types):
            raise RuntimeFailure(f"the model takes {len(self.input_types)} "
                                 f"tensor(s), got {len(args)}")
        inputs = []
        for k, (arg, declared) in enumerate(zip(args, self.input_types)):
            if not isinstance(arg, torch.Tensor):
                raise RuntimeFailure(f"input {k} is {type(arg).__name__}, not a "
                                     "tensor")
            expected = DTYPES[declared.element]
            if tuple(arg.shape) != declared.shape or arg.dtype != expected:
                raise RuntimeFailure(
                    f"input {k} is {tuple(arg.shape)} {arg.dtype}; the model was "
                    f"compiled for {declared.shape} {expected}")
            inputs.append(arg.detach().to("cpu").contiguous())
        outputs = [torch.empty(t.shape, dtype=DTYPES[t.element])
                   for t in self.output_types]
        input_array = (ctypes.c_void_p * max(1, len(inputs)))(
            *[t.data_ptr() for t in inputs])
        output_array = (ctypes.c_void_p * len(outputs))(
            *[t.data_ptr() for t in outputs])
        status = self._library.tandem_model_infer(
            input_array, output_array, self._error, len(self._error))
        if status != 0:
            raise RuntimeFailure(self._error.value.decode(errors="replace"))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def close(self):
        """Unloads the model and removes the temporary folder compile() made
        for it (a workdir given to compile() stays)."""
        if self._loaded:
            self._library.tandem_model_unload()
            self._loaded = False
        if self._owned_folder:
            shutil.rmtree(self._owned_folder, ignore_errors=True)
            self._owned_folder = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def compile(module, example_args, gpu_memory=None, device_profile=None,
            strategy="auto", backend="auto", workdir=None):
    """Exports `module`, compiles it and returns a CompiledModel.

    gpu_memory: the GPU budget (bytes, or a string such as "4GiB"; default
    the profile's memory); device_profile: a builtin profile (h200,
    a100-80gb, v100-32gb, host) or a JSON path; strategy: as tandem-compile's;
    backend: "auto" (cuda when a GPU is present, else sim), "sim" or "cuda";
    workdir: where the files go (default: a temporary folder, removed when
    the model is closed or collected)."""
    from .exporter import export_model
    check_backend(backend)  # before the export and compilation it would waste
    owned_folder = None
    if workdir is None:
        workdir = owned_folder = tempfile.mkdtemp(prefix="tandem-")
    os.makedirs(workdir, exist_ok=True)
    try:
        prefix = os.path.join(workdir, "model")
        exporter = export_model(module, example_args, prefix)
        library_path, report_path = prefix + ".so", prefix + ".placement.json"
        run_compiler(prefix + ".mlir", library_path, "lib", gpu_memory,
                     device_profile, strategy, report_path)
        with open(report_path) as f:
            report = json.load(f)
        return CompiledModel(library_path, prefix + ".safetensors",
                             prefix + ".mlir",
                             [a.type for a in exporter.builder.arguments],
                             [r.type for r in exporter.builder.results], report,
                             backend, exporter.aten_ops, owned_folder)
    except BaseException:
        if owned_folder:
            shutil.rmtree(owned_folder, ignore_errors=True)
        raise
