"""`tandem.compile`: export a module, compile it with `tandem-compile
--emit=lib` and call the compiled model from Python through ctypes.

The library exports `tandem_model_load(weights, backend, error, size)`,
`tandem_model_infer(inputs, outputs, error, size)` (caller-owned buffers of
the model's shapes, in order) and `tandem_model_unload()`; see
docs/runtime.md. A library holds one loaded model (its handle is a global of
the library), so each compile makes a library of its own path: the dynamic
loader hands back the library already loaded under a path, whatever the
file holds now.
"""
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import torch

from .arguments import non_dense_layout, path_argument
from .errors import CompileError, RuntimeFailure
from .lowering import TORCH_ELEMENTS

try:
    import _ctypes
except ImportError:  # pragma: no cover - CPython always has it
    _ctypes = None

DTYPES = {element: dtype for dtype, element in TORCH_ELEMENTS.items()}
BACKENDS = ("auto", "sim", "cuda")
ERROR_SIZE = 4096

# The libraries loaded by open CompiledModels of this process (real paths):
# loading one twice would hand back the same library, whose one model slot is
# taken.
_loaded_libraries = set()
_loaded_lock = threading.Lock()


def find_compiler() -> str:
    """tandem-compile: $TANDEM_COMPILE, else PATH, else `<sys.prefix>/bin`
    (pip installed this package into the prefix or virtual environment that
    `cmake --install` put the tools in), else `P/bin` when this package is
    installed as `P/lib/python3/site-packages/tandem` (`cmake --install
    --prefix P`), else this repository's build/bin when it runs from the
    repository's python/ folder."""
    explicit = os.environ.get("TANDEM_COMPILE")
    if explicit:
        if not os.path.exists(explicit):
            raise CompileError(f"TANDEM_COMPILE={explicit}: no such file")
        if os.path.isdir(explicit):
            raise CompileError(f"TANDEM_COMPILE={explicit} is a folder, not the "
                               "tandem-compile program")
        if not os.access(explicit, os.X_OK):
            raise CompileError(f"TANDEM_COMPILE={explicit} is not executable")
        return explicit
    on_path = shutil.which("tandem-compile")
    if on_path:
        return on_path
    candidates = compiler_candidates()
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    raise CompileError("tandem-compile not found (looked on PATH and at " +
                       ", ".join(str(c) for c in candidates) + "): set "
                       "TANDEM_COMPILE, put it on PATH, install the tools "
                       "(cmake --install) into this Python's prefix, or build "
                       "the repository (scripts/setup.sh)")


def compiler_candidates():
    """Where find_compiler looks after $TANDEM_COMPILE and PATH, in order."""
    package = Path(__file__).resolve().parent
    candidates = [Path(sys.prefix) / "bin" / "tandem-compile"]
    if package.parent.name in ("site-packages", "dist-packages"):
        # Installed: P/lib/python3/site-packages/tandem -> P/bin
        candidates.append(package.parents[3] / "bin" / "tandem-compile")
    else:
        # In the repository: <repository>/python/tandem -> <repository>/build/bin
        candidates.append(package.parents[1] / "build" / "bin" / "tandem-compile")
    unique = []
    for candidate in candidates:
        if candidate not in unique:
            unique.append(candidate)
    return unique


def compiler_options(gpu_memory=None, device_profile=None, strategy="auto"):
    """tandem-compile's flags for these options, or a CompileError naming
    the option; the values themselves (a size, a profile, a strategy) are
    tandem-compile's to judge."""
    flags = []
    if gpu_memory is not None:
        flags.append(f"--gpu-memory={format_budget(gpu_memory)}")
    if device_profile is not None:
        if not isinstance(device_profile, (str, bytes, os.PathLike)):
            raise CompileError(
                "device_profile must be a builtin profile name (h200, "
                "a100-80gb, v100-32gb, host) or the path of a .json profile, "
                f"got {type(device_profile).__name__}")
        device_profile = path_argument("device_profile", device_profile, CompileError)
        flags.append(f"--device-profile={device_profile}")
    if not isinstance(strategy, str):
        raise CompileError(f"strategy must be a string such as 'auto' (auto, exact, "
                           f"mincut, greedy, all-cpu, all-gpu), got "
                           f"{type(strategy).__name__}")
    if not strategy or "\0" in strategy:
        raise CompileError(f"strategy {strategy!r}: expected auto, exact, mincut, "
                           "greedy, all-cpu or all-gpu")
    flags.append(f"--strategy={strategy}")
    return flags


def file_identity(path):
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_size)


def run_compiler(mlir_path, output, emit="lib", gpu_memory=None,
                 device_profile=None, strategy="auto", report=None,
                 extra_flags=()):
    """Runs tandem-compile; a CompileError when it cannot run, fails, or
    exits 0 without writing `output` (and `report`, when asked for).
    `extra_flags` go to tandem-compile as they are (e.g. --fuse=false)."""
    command = [find_compiler(), os.fspath(mlir_path), "-o", os.fspath(output),
               f"--emit={emit}"]
    command += compiler_options(gpu_memory, device_profile, strategy)
    command += list(extra_flags)
    if report is not None:
        report = path_argument("report", report, CompileError)
        command.append(f"--report={report}")
    written = {path: file_identity(path) for path in (output, report) if path}
    try:
        done = subprocess.run(command, capture_output=True, text=True,
                              errors="replace")
    except OSError as error:
        raise CompileError(f"cannot run {command[0]}: {error.strerror or error}") \
            from None
    diagnostic = done.stderr.strip()
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        raise CompileError(f"tandem-compile was killed by {name} while compiling "
                           f"{mlir_path}" + (f":\n{diagnostic}" if diagnostic else ""))
    if done.returncode != 0:
        raise CompileError(f"tandem-compile failed on {mlir_path}:\n"
                           f"{diagnostic or f'exit status {done.returncode}, no message'}")
    for path, before in written.items():
        after = file_identity(path)
        if after is None or after == before or not os.path.isfile(path):
            raise CompileError(f"{command[0]} exited 0 but did not write {path} "
                               f"(compiling {mlir_path})")
    return done


def timed_mean_us(command):
    """Runs a compiled executable (`command`: its path and arguments, with
    --repeat of at least 2) with --timing; the mean microseconds of its runs
    after the first, from the line its driver prints."""
    done = subprocess.run(list(command) + ["--timing"], check=True,
                          capture_output=True, text=True)
    match = re.search(r"later runs: mean ([0-9.]+) us", done.stdout)
    if not match:
        raise RuntimeError(f"{command[0]} printed no --timing line of runs "
                           f"after the first (--repeat below 2?)")
    return float(match.group(1))


def check_backend(backend):
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise RuntimeFailure(f"unknown backend {str(backend)!r}: expected one of "
                             f"{', '.join(BACKENDS)}")


def format_budget(budget) -> str:
    """4 << 30 or "4GiB" → what --gpu-memory takes."""
    if isinstance(budget, bool) or not isinstance(budget, (int, str)):
        raise CompileError(f"gpu_memory must be bytes (int) or a size string "
                           f"like '4GiB', got {budget!r}")
    if isinstance(budget, int) and budget < 0:
        raise CompileError(f"gpu_memory must not be negative, got {budget}")
    if isinstance(budget, str) and (not budget.strip() or "\0" in budget):
        raise CompileError(f"gpu_memory {budget!r} is not a size: expected bytes "
                           "(int) or a size string like '4GiB'")
    return str(budget)


def _still_mapped_deleted(path) -> bool:
    """Whether this process still maps an older, since replaced file of
    `path` (Linux): the loader would hand that one back for `path`."""
    try:
        with open("/proc/self/maps") as maps:
            return any(line.rstrip("\n").endswith(path + " (deleted)") for line in maps)
    except OSError:
        return False


def _dlclose(library):
    handle = getattr(library, "_handle", None)
    close = getattr(_ctypes, "dlclose", None) or getattr(_ctypes, "FreeLibrary", None)
    if handle and close:
        close(handle)


class CompiledModel:
    """A model compiled into a shared library and loaded into this process.

    Call it with tensors of the example shapes and dtypes; it returns a tensor
    (one result) or a tuple. `report` is the placement report (JSON, as
    `tandem-compile --report` writes it); `mlir_path`, `weights_path` and
    `library_path` are the files it was built from.

    Calls from several threads are safe and run one at a time (a lock per
    model); use several compiled models to run in parallel. close() (or
    `with`) unloads the model and its library; after it, calls raise
    RuntimeFailure. A library holds one model at a time: loading a library
    that an open CompiledModel of this process holds is a RuntimeFailure."""

    def __init__(self, library_path, weights_path, mlir_path, input_types,
                 output_types, report, backend, aten_ops=(), owned_folder=None):
        # What close() looks at first, so that it works after a failed
        # __init__ (and __del__ calls it).
        self._lock = threading.RLock()
        self._library = None
        self._entry_points = None
        self._registered = None
        self._loaded = False
        self._owned_folder = owned_folder  # a temporary folder close() removes
        check_backend(backend)
        library_path = path_argument("library_path", library_path, RuntimeFailure)
        weights_path = path_argument("weights_path", weights_path, RuntimeFailure,
                                     empty_ok=True)
        self.library_path = library_path
        self.weights_path = weights_path
        self.mlir_path = mlir_path
        self.input_types = list(input_types)
        self.output_types = list(output_types)
        self.report = report
        self.backend = backend
        self.aten_ops = set(aten_ops)  # what the export lowered
        self._load()

    def _load(self):
        path = self.library_path
        real = os.path.realpath(path)
        if not os.path.isfile(real):
            raise RuntimeFailure(f"cannot load {path}: no such file")
        with _loaded_lock:
            if real in _loaded_libraries:
                raise RuntimeFailure(
                    f"cannot load {path}: another open CompiledModel of this "
                    "process holds that library, and a library holds one model; "
                    "close that one first, or compile again (each compile makes "
                    "a library of its own)")
            if _still_mapped_deleted(real):
                raise RuntimeFailure(
                    f"cannot load {path}: this process still maps an older "
                    "library of that path, since replaced, and the loader would "
                    "hand that one back; load it from a new path")
            _loaded_libraries.add(real)
            self._registered = real
        try:
            choose_blas_core()
            try:
                self._library = ctypes.CDLL(real, mode=ctypes.RTLD_LOCAL)
            except OSError as error:
                reason = str(error)
                if reason.startswith(real + ": "):  # the loader repeats the path
                    reason = reason[len(real) + 2:]
                raise RuntimeFailure(f"cannot load {path}: {reason}") from None
            try:
                load = self._library.tandem_model_load
                infer = self._library.tandem_model_infer
                unload = self._library.tandem_model_unload
            except AttributeError:
                raise RuntimeFailure(
                    f"cannot load {path}: not a Tandem model library (it has no "
                    "tandem_model_load; build one with tandem-compile "
                    "--emit=lib)") from None
            load.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                             ctypes.c_int64]
            load.restype = ctypes.c_int
            infer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                              ctypes.c_int64]
            infer.restype = ctypes.c_int
            unload.argtypes = []
            unload.restype = None
            error = ctypes.create_string_buffer(ERROR_SIZE)
            status = load(os.fsencode(self.weights_path), self.backend.encode(),
                          error, len(error))
            if status != 0:
                raise RuntimeFailure(f"cannot load {path}: "
                                     f"{error.value.decode(errors='replace')}")
            self._entry_points = (infer, unload)
            self._loaded = True
        except BaseException:
            self._release()  # a failed load leaves nothing loaded
            raise

    def devices(self):
        """{"cpu": n, "gpu": n}: how many ops the placement put on each."""
        counts = {}
        for op in (self.report or {}).get("ops", []):
            counts[op["device"]] = counts.get(op["device"], 0) + 1
        return counts

    def _inputs(self, args):
        """The arguments as dense, contiguous CPU tensors of the compiled
        shapes and dtypes, or a RuntimeFailure naming the input."""
        if len(args) != len(self.input_types):
            raise RuntimeFailure(f"the model takes {len(self.input_types)} "
                                 f"tensor(s), got {len(args)}")
        inputs = []
        for k, (arg, declared) in enumerate(zip(args, self.input_types)):
            if not isinstance(arg, torch.Tensor):
                raise RuntimeFailure(f"input {k} is {type(arg).__name__}, not a "
                                     "tensor")
            layout = non_dense_layout(arg)
            if layout:
                raise RuntimeFailure(f"input {k} is a {layout} tensor; the model "
                                     "takes dense tensors (call .to_dense())")
            if arg.is_meta:
                raise RuntimeFailure(f"input {k} is a meta tensor, which has no data")
            expected = DTYPES[declared.element]
            if tuple(arg.shape) != declared.shape or arg.dtype != expected:
                raise RuntimeFailure(
                    f"input {k} is {tuple(arg.shape)} {arg.dtype}; the model was "
                    f"compiled for {declared.shape} {expected}")
            try:
                tensor = arg.detach().to("cpu").contiguous()
                tensor.data_ptr()
            except Exception as error:  # noqa: BLE001  vmap, fake tensors...
                first = (str(error).strip().splitlines() or [""])[0]
                raise RuntimeFailure(
                    f"input {k}: cannot read its data ({type(error).__name__}: "
                    f"{first}); a compiled model runs on real tensors, not under "
                    "torch.vmap, torch.func or fake-tensor modes") from None
            inputs.append(tensor)
        return inputs

    def __call__(self, *args):
        if not self._loaded:
            raise RuntimeFailure("the model was closed")
        inputs = self._inputs(args)
        outputs = [torch.empty(t.shape, dtype=DTYPES[t.element])
                   for t in self.output_types]
        input_array = (ctypes.c_void_p * max(1, len(inputs)))(
            *[t.data_ptr() for t in inputs])
        output_array = (ctypes.c_void_p * max(1, len(outputs)))(
            *[t.data_ptr() for t in outputs])
        error = ctypes.create_string_buffer(ERROR_SIZE)  # one per call
        with self._lock:  # one call at a time; close() waits for it
            if not self._loaded:
                raise RuntimeFailure("the model was closed")
            infer, _ = self._entry_points
            status = infer(input_array, output_array, error, len(error))
        if status != 0:
            raise RuntimeFailure(error.value.decode(errors="replace"))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _release(self):
        """Closes the library (dlclose, so that its mapping goes) and forgets
        it; the model must be unloaded already."""
        library, self._library = self._library, None
        self._entry_points = None
        try:
            if library is not None:
                _dlclose(library)
        finally:
            if self._registered is not None:
                with _loaded_lock:
                    _loaded_libraries.discard(self._registered)
                self._registered = None

    def close(self):
        """Unloads the model, closes its library and removes the temporary
        folder compile() made for it (a workdir given to compile() stays).
        Waits for a call in progress; safe to call twice."""
        lock = getattr(self, "_lock", None)
        if lock is None:  # __init__ failed before anything was loaded
            return
        with lock:
            try:
                if self._loaded:
                    self._loaded = False
                    _, unload = self._entry_points
                    unload()
            finally:
                self._release()
                folder, self._owned_folder = self._owned_folder, None
                if folder:
                    shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001  interpreter shutdown
            pass


def choose_blas_core():
    """Names the OpenBLAS kernels this CPU's features allow
    (OPENBLAS_CORETYPE) before a model's library loads OpenBLAS, unless the
    user named some: Debian 12's OpenBLAS falls back to generic SSE3
    kernels, 4-5x slower, on CPUs newer than itself. (A compiled executable
    does the same for itself: runtime/lib/cpu/BlasCore.cpp.) Has no effect
    where this process has loaded OpenBLAS already."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((line.split(":", 1)[1].split() for line in cpuinfo
                          if line.startswith("flags")), [])
    except OSError:
        return
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= set(flags):
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif {"avx2", "fma"} <= set(flags):
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"


def make_folder(workdir):
    """The folder one compile writes into: a new temporary folder (True:
    close() removes it) or a new sub-folder `model-XXXXXXXX` of `workdir`
    (False: it stays), so that no two compiles share a library path."""
    if workdir is None:
        return tempfile.mkdtemp(prefix="tandem-"), True
    workdir = path_argument("workdir", workdir, CompileError)
    if os.path.exists(workdir) and not os.path.isdir(workdir):
        raise CompileError(f"workdir {workdir} is a file, not a folder")
    try:
        os.makedirs(workdir, exist_ok=True)
    except OSError as error:
        raise CompileError(f"workdir {workdir}: cannot create it: "
                           f"{error.strerror or error}") from None
    try:
        folder = tempfile.mkdtemp(prefix="model-", dir=workdir)
    except OSError as error:
        raise CompileError(f"workdir {workdir} is not writable: "
                           f"{error.strerror or error}") from None
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(folder, 0o777 & ~mask)  # mkdtemp made it 0700
    return folder, False


def read_report(path):
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        raise CompileError(f"tandem-compile wrote no readable placement report "
                           f"{path}: {error}") from None
    if not isinstance(report, dict):
        raise CompileError(f"the placement report {path} is not a JSON object")
    return report


def compile(module, example_args, gpu_memory=None, device_profile=None,
            strategy="auto", backend="auto", workdir=None):
    """Exports `module`, compiles it and returns a CompiledModel.

    gpu_memory: the GPU budget (bytes, or a string such as "4GiB"; default
    the profile's memory); device_profile: a builtin profile (h200,
    a100-80gb, v100-32gb, host) or a JSON path; strategy: as tandem-compile's;
    backend: "auto" (cuda when a GPU is present, else sim), "sim" or "cuda";
    workdir: where the files go: each compile writes model.mlir,
    model.safetensors, model.so and model.placement.json into a new
    sub-folder workdir/model-XXXXXXXX, which stays (default: a temporary
    folder, removed when the model is closed or collected)."""
    from .exporter import export_model
    # Every argument is checked before the export and compilation it would
    # waste.
    check_backend(backend)
    compiler_options(gpu_memory, device_profile, strategy)
    find_compiler()
    folder, owned = make_folder(workdir)
    try:
        prefix = os.path.join(folder, "model")
        exporter = export_model(module, example_args, prefix)
        library_path, report_path = prefix + ".so", prefix + ".placement.json"
        run_compiler(prefix + ".mlir", library_path, "lib", gpu_memory,
                     device_profile, strategy, report_path)
        report = read_report(report_path)
        return CompiledModel(library_path, prefix + ".safetensors",
                             prefix + ".mlir",
                             [a.type for a in exporter.builder.arguments],
                             [r.type for r in exporter.builder.results], report,
                             backend, exporter.aten_ops,
                             folder if owned else None)
    except BaseException:
        if owned:
            shutil.rmtree(folder, ignore_errors=True)
        else:  # the files stay to look at; an empty folder does not
            try:
                os.rmdir(folder)
            except OSError:
                pass
        raise
