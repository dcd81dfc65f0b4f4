"""Misuse of the Python API: every argument of tandem.export, tandem.compile,
tandem.device_guard, a CompiledModel (its construction and its call) and
`python3 -m tandem`, given wrong types and values.

Each case must raise a tandem.TandemError subclass, or a TypeError or
ValueError raised by the package itself whose message names the argument;
never an exception from deep inside (os, ctypes, torch, importlib...), never
a silent success, never a wrong answer. Cases marked "works" are inputs that
must be accepted and give PyTorch's answer. Prints one line per case:

    family what: ErrorClass: message        (as expected)
    family what: ok                         (a "works" case)
    family what: FAILED: ...                (a bug)

then a summary line per family. Exits 1 when any case FAILED.

    check_api_misuse.py SCRATCH_FOLDER
"""
import contextlib
import gc
import io
import os
import pathlib
import subprocess
import sys
import traceback

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")
sys.path.insert(0, PYTHON_DIR)
import tandem  # noqa: E402
import tandem.__main__ as cli  # noqa: E402

PACKAGE_DIR = os.path.dirname(os.path.abspath(tandem.__file__))
scratch = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "misuse-scratch")
os.makedirs(scratch, exist_ok=True)
os.chdir(scratch)
counts = {}  # family -> [cases, failed]
failed_cases = []


def normalize(text) -> str:
    text = " ".join(str(text).split())
    return text.replace(scratch, "<scratch>")


def record(family, ok):
    entry = counts.setdefault(family, [0, 0])
    entry[0] += 1
    if not ok:
        entry[1] += 1


def raised_by_package(error) -> bool:
    """Whether the innermost frame of the error's traceback is the package's
    own code (a deliberate raise), not a library it called."""
    frames = traceback.extract_tb(error.__traceback__)
    return (bool(frames) and
            os.path.abspath(frames[-1].filename).startswith(PACKAGE_DIR) and
            (frames[-1].line or "").lstrip().startswith("raise "))


def fails(family, what, call, python_error=False):
    """`call` must raise a TandemError, or a TypeError/ValueError of the
    package's own (python_error: Python's own argument check, e.g. an
    unknown keyword)."""
    label = f"{family} {what}"
    try:
        call()
    except tandem.TandemError as error:
        print(f"{label}: {type(error).__name__}: {normalize(error)}")
        record(family, True)
        return
    except (TypeError, ValueError) as error:
        if python_error or raised_by_package(error):
            print(f"{label}: {type(error).__name__}: {normalize(error)}")
            record(family, True)
            return
        where = traceback.extract_tb(error.__traceback__)[-1]
        print(f"{label}: FAILED: {type(error).__name__} from "
              f"{os.path.basename(where.filename)}:{where.lineno}: {normalize(error)}")
    except BaseException as error:  # noqa: B036  anything else is a bug
        frames = traceback.extract_tb(error.__traceback__)
        where = (f" from {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}"
                 if frames else "")
        print(f"{label}: FAILED: {type(error).__name__}{where}: {normalize(error)}")
    else:
        print(f"{label}: FAILED: no error")
    record(family, False)
    failed_cases.append(label)


def works(family, what, call):
    """`call` must succeed and return True (its answer is right)."""
    label = f"{family} {what}"
    try:
        right = call()
    except BaseException as error:  # noqa: B036
        frames = traceback.extract_tb(error.__traceback__)
        where = (f" from {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}"
                 if frames else "")
        print(f"{label}: FAILED: {type(error).__name__}{where}: {normalize(error)}")
        right = None
    else:
        print(f"{label}: {'ok' if right else 'FAILED: wrong answer'}")
    record(family, bool(right))
    if not right:
        failed_cases.append(label)


@contextlib.contextmanager
def environment(name, value):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def mapped(path) -> int:
    """How many of this process's mappings come from `path`."""
    path = os.path.realpath(path)
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if line.rstrip("\n").endswith(path))


torch.manual_seed(0)
x = torch.randn(2, 4)
linear = nn.Linear(4, 3).eval()
with torch.no_grad():
    expected = linear(x)
a_file = write(os.path.join(scratch, "a-file"), "not a folder\n")
a_folder = os.path.join(scratch, "a-folder")
os.makedirs(a_folder, exist_ok=True)


def exported(module, args, prefix):
    """export() accepted the arguments and wrote both files it returned."""
    paths = tandem.export(module, args, prefix)
    return all(os.path.isfile(path) for path in paths)

# -- tandem.export(module, example_args, prefix) -------------------------------
E = "export"
prefix = os.path.join(scratch, "e", "model")
fails(E, "module None", lambda: tandem.export(None, (x,), prefix))
fails(E, "module a function", lambda: tandem.export(lambda t: t, (x,), prefix))
fails(E, "module the class nn.Linear", lambda: tandem.export(nn.Linear, (x,), prefix))
fails(E, "module a string", lambda: tandem.export("resnet18", (x,), prefix))
fails(E, "example_args None", lambda: tandem.export(linear, None, prefix))
fails(E, "example_args 3.0", lambda: tandem.export(linear, 3.0, prefix))
fails(E, "example_args a string", lambda: tandem.export(linear, "x", prefix))
fails(E, "example_args a dict", lambda: tandem.export(linear, {"x": x}, prefix))
fails(E, "example_args a numpy array", lambda: tandem.export(linear, x.numpy(), prefix))
fails(E, "example_args (tensor, int)", lambda: tandem.export(linear, (x, 3), prefix))
fails(E, "example_args nested tuple", lambda: tandem.export(linear, ((x,),), prefix))
fails(E, "example_args a meta tensor", lambda: tandem.export(
    linear, (torch.empty(2, 4, device="meta"),), prefix))
fails(E, "example_args a sparse tensor", lambda: tandem.export(
    linear, (x.to_sparse(),), prefix))
fails(E, "example_args complex", lambda: tandem.export(
    nn.ReLU(), (torch.randn(2, 4, dtype=torch.complex64),), prefix))
fails(E, "example_args too few for forward", lambda: tandem.export(linear, (), prefix))
fails(E, "prefix None", lambda: tandem.export(linear, (x,), None))
fails(E, "prefix 3", lambda: tandem.export(linear, (x,), 3))
fails(E, "prefix empty", lambda: tandem.export(linear, (x,), ""))
fails(E, "prefix a folder (trailing slash)", lambda: tandem.export(
    linear, (x,), a_folder + os.sep))
fails(E, "prefix with a NUL", lambda: tandem.export(linear, (x,), prefix + "\0x"))
fails(E, "prefix under a regular file", lambda: tandem.export(
    linear, (x,), os.path.join(a_file, "model")))
fails(E, "prefix under /etc/passwd", lambda: tandem.export(linear, (x,), "/etc/passwd/x"))
fails(E, "prefix in an unwritable folder", lambda: tandem.export(
    linear, (x,), "/proc/tandem-model"))
os.makedirs(os.path.join(scratch, "e", "taken.mlir"), exist_ok=True)
fails(E, "prefix.mlir is a folder", lambda: tandem.export(
    linear, (x,), os.path.join(scratch, "e", "taken")))
fails(E, "weights on the meta device", lambda: tandem.export(
    nn.Linear(4, 3, device="meta"), (x,), prefix))
left = sorted(os.listdir(os.path.join(scratch, "e")))
print(f"{E} files left behind: {left}")
record(E, left == ["taken.mlir"])  # the folder made above
works(E, "example_args a single tensor", lambda: exported(linear, x, prefix + "-single"))
works(E, "example_args a list", lambda: exported(linear, [x], prefix + "-list"))
works(E, "example_args requires grad (non-leaf)", lambda: exported(
    linear, (torch.randn(2, 4, requires_grad=True) * 2,), prefix + "-grad"))
works(E, "prefix a pathlib.Path", lambda: exported(
    linear, (x,), pathlib.Path(prefix + "-path")))

# -- tandem.compile(module, example_args, gpu_memory, device_profile, strategy,
#    backend, workdir) and $TANDEM_COMPILE ------------------------------------
C = "compile"
work = os.path.join(scratch, "c")


def compile_linear(*args, **kwargs):
    kwargs.setdefault("backend", "sim")
    kwargs.setdefault("workdir", work)
    run = tandem.compile(linear, *args, **kwargs)
    run.close()
    return run


fails(C, "module None", lambda: tandem.compile(None, (x,), backend="sim", workdir=work))
fails(C, "example_args None", lambda: compile_linear(None))
fails(C, "example_args 3.0", lambda: compile_linear(3.0))
fails(C, "gpu_memory True", lambda: compile_linear((x,), gpu_memory=True))
fails(C, "gpu_memory 1.5", lambda: compile_linear((x,), gpu_memory=1.5))
fails(C, "gpu_memory -1", lambda: compile_linear((x,), gpu_memory=-1))
fails(C, "gpu_memory a list", lambda: compile_linear((x,), gpu_memory=[1]))
fails(C, "gpu_memory 'lots'", lambda: compile_linear((x,), gpu_memory="lots"))
fails(C, "gpu_memory ''", lambda: compile_linear((x,), gpu_memory=""))
fails(C, "device_profile 3", lambda: compile_linear((x,), device_profile=3))
fails(C, "device_profile ''", lambda: compile_linear((x,), device_profile=""))
fails(C, "device_profile 'tpu'", lambda: compile_linear((x,), device_profile="tpu"))
fails(C, "device_profile a missing .json", lambda: compile_linear(
    (x,), device_profile=os.path.join(scratch, "missing.json")))
fails(C, "strategy None", lambda: compile_linear((x,), strategy=None))
fails(C, "strategy 3", lambda: compile_linear((x,), strategy=3))
fails(C, "strategy 'fastest'", lambda: compile_linear((x,), strategy="fastest"))
fails(C, "backend 'tpu'", lambda: compile_linear((x,), backend="tpu"))
fails(C, "backend None", lambda: compile_linear((x,), backend=None))
fails(C, "backend 3", lambda: compile_linear((x,), backend=3))
fails(C, "workdir a file", lambda: compile_linear((x,), workdir=a_file))
fails(C, "workdir under a file", lambda: compile_linear(
    (x,), workdir=os.path.join(a_file, "sub")))
fails(C, "workdir unwritable (/proc)", lambda: compile_linear((x,), workdir="/proc"))
fails(C, "workdir 3", lambda: compile_linear((x,), workdir=3))
fails(C, "workdir empty", lambda: compile_linear((x,), workdir=""))
fails(C, "unknown keyword", lambda: compile_linear((x,), gpu_mem="1GiB"),
      python_error=True)
compiler_folder = os.path.join(scratch, "compilers")
os.makedirs(compiler_folder, exist_ok=True)
fake = {
    "a folder": compiler_folder,
    "missing": os.path.join(compiler_folder, "missing"),
    "not executable": write(os.path.join(compiler_folder, "plain"), "#!/bin/sh\n"),
    "exits 0, writes nothing": write(os.path.join(compiler_folder, "true"),
                                     "#!/bin/sh\nexit 0\n", 0o755),
    "killed by SIGSEGV": write(os.path.join(compiler_folder, "segv"),
                               "#!/bin/sh\nkill -SEGV $$\n", 0o755),
    # Writes the library (garbage) and a report.
    "writes a garbage library": write(
        os.path.join(compiler_folder, "garbage"),
        "#!/bin/sh\nout=$3\necho garbage > \"$out\"\n"
        "for a in \"$@\"; do case $a in --report=*) echo '{\"ops\": []}' > "
        "\"${a#--report=}\";; esac; done\n", 0o755),
    # Writes a real shared library without the model's entry points.
    "writes a library without entry points": write(
        os.path.join(compiler_folder, "empty-lib"),
        "#!/bin/sh\nout=$3\ncc -shared -x c /dev/null -o \"$out\" || exit 1\n"
        "for a in \"$@\"; do case $a in --report=*) echo '{\"ops\": []}' > "
        "\"${a#--report=}\";; esac; done\n", 0o755),
    # Writes the library (a real one) but a report that is not JSON.
    "writes a bad report": write(
        os.path.join(compiler_folder, "bad-report"),
        "#!/bin/sh\n\"$REAL_TANDEM_COMPILE\" \"$@\" || exit 1\n"
        "for a in \"$@\"; do case $a in --report=*) echo 'not json' > "
        "\"${a#--report=}\";; esac; done\n", 0o755),
}
os.environ["REAL_TANDEM_COMPILE"] = tandem.find_compiler()
for what, program in fake.items():
    with environment("TANDEM_COMPILE", program):
        fails(C, f"TANDEM_COMPILE {what}", lambda: compile_linear((x,)))
libraries = [os.path.join(root, name) for root, _, names in os.walk(work)
             for name in names if name.endswith(".so")]
still = sum(mapped(library) for library in libraries)
print(f"{C} libraries still mapped: {still}")
record(C, still == 0)


def compiled_right(*args, **kwargs):
    kwargs.setdefault("backend", "sim")
    run = tandem.compile(linear, *args, **kwargs)
    try:
        return torch.allclose(run(x), expected, atol=1e-6)
    finally:
        run.close()


works(C, "example_args a single tensor", lambda: compiled_right(x, workdir=work))
works(C, "workdir a pathlib.Path", lambda: compiled_right((x,), workdir=pathlib.Path(work)))
works(C, "gpu_memory an int", lambda: compiled_right((x,), gpu_memory=1 << 30,
                                                     workdir=work))

# -- tandem.device_guard(device) ------------------------------------------------
D = "device_guard"
for what, device in [("'tpu'", "tpu"), ("3", 3), ("None", None), ("'GPU'", "GPU"),
                     ("'gpu:'", "gpu:"), ("'gpu:x'", "gpu:x"), ("'gpu:-1'", "gpu:-1"),
                     ("'cpu:1'", "cpu:1"), ("' gpu'", " gpu"),
                     ("'gpu:99999999999999999999'", "gpu:99999999999999999999")]:
    def enter(device=device):
        with tandem.device_guard(device):
            pass
    fails(D, f"device {what}", enter)


class GuardedBadly(nn.Module):
    def forward(self, t):
        with tandem.device_guard("npu"):
            return t + 1


fails(D, "inside forward with 'npu'", lambda: tandem.export(
    GuardedBadly(), (x,), os.path.join(scratch, "d", "model")))


def guard_outside_export():
    with tandem.device_guard("gpu:0"):
        return torch.equal(linear(x), expected)


works(D, "outside an export", guard_outside_export)

# -- a CompiledModel: its call ---------------------------------------------------
R = "call"
run = tandem.compile(linear, (x,), backend="sim", workdir=os.path.join(scratch, "r"))
fails(R, "no input", lambda: run())
fails(R, "two inputs", lambda: run(x, x))
fails(R, "an int", lambda: run(3))
fails(R, "None", lambda: run(None))
fails(R, "a list", lambda: run([[0.0] * 4] * 2))
fails(R, "a numpy array", lambda: run(x.numpy()))
fails(R, "wrong shape", lambda: run(torch.randn(3, 4)))
fails(R, "wrong dtype (float64)", lambda: run(x.double()))
fails(R, "complex", lambda: run(torch.randn(2, 4, dtype=torch.complex64)))
fails(R, "a meta tensor", lambda: run(torch.empty(2, 4, device="meta")))
fails(R, "a sparse tensor", lambda: run(x.to_sparse()))
fails(R, "a sparse CSR tensor", lambda: run(x.to_sparse_csr()))
fails(R, "a keyword argument", lambda: run(input=x), python_error=True)
fails(R, "under torch.vmap", lambda: torch.vmap(run)(torch.randn(5, 2, 4)))
works(R, "requires grad, non-leaf", lambda: torch.allclose(
    run(x.clone().requires_grad_() * 1), expected, atol=1e-6))
works(R, "non-contiguous (transposed)", lambda: torch.allclose(
    run(x.t().contiguous().t()), expected, atol=1e-6))
works(R, "a strided slice", lambda: torch.allclose(
    run(torch.cat([x, x], 1)[:, ::2]), linear(torch.cat([x, x], 1)[:, ::2]), atol=1e-6))
works(R, "expanded (stride 0)", lambda: torch.allclose(
    run(x[:1].expand(2, 4)), linear(x[:1].expand(2, 4)), atol=1e-6))
works(R, "an nn.Parameter", lambda: torch.allclose(
    run(nn.Parameter(x.clone())), expected, atol=1e-6))
works(R, "under inference_mode", lambda: torch.inference_mode()(
    lambda: torch.allclose(run(x), expected, atol=1e-6))())
run.close()
works(R, "close twice", lambda: run.close() is None)
fails(R, "after close", lambda: run(x))

# -- a CompiledModel: its construction ------------------------------------------
M = "load"
good = tandem.compile(linear, (x,), backend="sim", workdir=os.path.join(scratch, "m"))
library, weights = good.library_path, good.weights_path
good_args = dict(library_path=library, weights_path=weights, mlir_path=good.mlir_path,
                 input_types=good.input_types, output_types=good.output_types,
                 report=good.report, backend="sim")
good.close()


def load(**changes):
    arguments = dict(good_args, **changes)
    return tandem.CompiledModel(**arguments)


empty_library = os.path.join(scratch, "empty.so")
subprocess.run(["cc", "-shared", "-x", "c", "/dev/null", "-o", empty_library], check=True)
fails(M, "library missing", lambda: load(library_path=os.path.join(scratch, "none.so")))
fails(M, "library not a library", lambda: load(library_path=a_file))
fails(M, "library without entry points", lambda: load(library_path=empty_library))
fails(M, "library None", lambda: load(library_path=None))
fails(M, "weights missing", lambda: load(weights_path=os.path.join(scratch, "none")))
fails(M, "weights None", lambda: load(weights_path=None))
fails(M, "weights not safetensors", lambda: load(weights_path=a_file))
fails(M, "backend 'tpu'", lambda: load(backend="tpu"))
print(f"{M} mapped after failed loads: {mapped(library)}")
record(M, mapped(library) == 0)
first = load()
fails(M, "same library twice at once", lambda: load())
works(M, "the first still right", lambda: torch.allclose(first(x), expected, atol=1e-6))
first.close()
print(f"{M} mapped after close: {mapped(library)}")
record(M, mapped(library) == 0)
works(M, "again after close", lambda: (lambda m: (torch.allclose(m(x), expected, atol=1e-6),
                                                  m.close())[0])(load()))
unraisable = []
sys.unraisablehook = lambda info: unraisable.append(info)
try:
    load(weights_path=a_file)
except tandem.TandemError:
    pass
gc.collect()
print(f"{M} errors from __del__ after failed loads: {len(unraisable)}")
record(M, not unraisable)

# -- python3 -m tandem ------------------------------------------------------------
X = "cli"
models = os.path.join(HERE, "models.py")
factories = os.path.join(scratch, "factories")
os.makedirs(os.path.join(factories, "folder.py"), exist_ok=True)
write(os.path.join(factories, "syntax.py"), "def make(:\n    pass\n")
write(os.path.join(factories, "raises_on_import.py"), "raise RuntimeError('no GPU here')\n")
write(os.path.join(factories, "broken_package_module.py"), "import nonexistent_thing_xyz\n")
write(os.path.join(factories, "factories.py"), """
import sys
import torch
from torch import nn
def raises(): return 1 / 0
def needs_args(width): return nn.Linear(width, 2)
def returns_none(): return None
def returns_three(): return nn.ReLU(), (torch.zeros(2),), 3
def returns_bad_args(): return nn.ReLU(), 3.0
def exits(): sys.exit(3)
not_callable = 3
""")
sys.path.insert(0, factories)


def cli_fails(what, argv):
    """main(argv) must return non-zero (or argparse's exit 2) with one
    `tandem: error:` line (or argparse's usage error) and no traceback."""
    label = f"{X} {what}"
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = cli.main(argv)
    except SystemExit as exit:
        status = exit.code
    except BaseException as error:  # noqa: B036
        frames = traceback.extract_tb(error.__traceback__)
        where = (f" from {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}"
                 if frames else "")
        print(f"{label}: FAILED: {type(error).__name__}{where}: {normalize(error)}")
        record(X, False)
        failed_cases.append(label)
        return
    lines = [line for line in err.getvalue().splitlines() if "error:" in line]
    if status in (0, None) or not lines or "Traceback" in err.getvalue():
        print(f"{label}: FAILED: exit {status}: {normalize(err.getvalue())}")
        record(X, False)
        failed_cases.append(label)
        return
    print(f"{label}: exit {status}: {normalize(lines[-1])}")
    record(X, True)


out = os.path.join(scratch, "x", "model")
mlp = f"{models}:mlp"
cli_fails("--shape 99999999999999999999", ["export", mlp, "-o", out,
                                           "--shape=99999999999999999999"])
cli_fails("--shape 9999999x9999999x9999999", ["export", mlp, "-o", out,
                                              "--shape=9999999x9999999x9999999"])
cli_fails("--shape 65536x65536x65536 (2^50 bytes)",
          ["export", mlp, "-o", out, "--shape=65536x65536x65536"])
cli_fails("--shape abc", ["export", mlp, "-o", out, "--shape=abc"])
cli_fails("--shape 2x", ["export", mlp, "-o", out, "--shape=2x"])
cli_fails("--shape 0x13", ["export", mlp, "-o", out, "--shape=0x13"])
cli_fails("--shape -1x13", ["export", mlp, "-o", out, "--shape=-1x13"])
cli_fails("--shape 1e3x13", ["export", mlp, "-o", out, "--shape=1e3x13"])
cli_fails("--shape 64x13:float64", ["export", mlp, "-o", out, "--shape=64x13:float64"])
cli_fails("--shape 64x13 twice for one input", ["export", mlp, "-o", out,
                                                "--shape=64x13", "--shape=64x13"])
cli_fails("model without a colon", ["export", "models", "-o", out])
cli_fails("model a missing file", ["export", "nowhere.py:mlp", "-o", out])
cli_fails("model a folder named .py", ["export", f"{factories}/folder.py:make", "-o", out])
cli_fails("model file with a syntax error", ["export", f"{factories}/syntax.py:make",
                                             "-o", out])
cli_fails("model file raising on import", [
    "export", f"{factories}/raises_on_import.py:make", "-o", out])
cli_fails("model package missing", ["export", "no_such_package_xyz.models:make", "-o", out])
cli_fails("model package module failing its import", [
    "export", "broken_package_module:make", "-o", out])
cli_fails("factory not callable", ["export", "factories:not_callable", "-o", out])
cli_fails("factory missing", ["export", "factories:nothing", "-o", out])
cli_fails("factory raises", ["export", "factories:raises", "-o", out])
cli_fails("factory needs arguments", ["export", "factories:needs_args", "-o", out])
cli_fails("factory returns None", ["export", "factories:returns_none", "-o", out])
cli_fails("factory returns a 3-tuple", ["export", "factories:returns_three", "-o", out])
cli_fails("factory returns bad example args", [
    "export", "factories:returns_bad_args", "-o", out])
cli_fails("factory calls sys.exit(3)", ["export", "factories:exits", "-o", out])
cli_fails("-o empty", ["export", mlp, "-o", ""])
cli_fails("-o a folder (trailing slash)", ["export", mlp, "-o", a_folder + os.sep])
cli_fails("-o under a regular file", ["export", mlp, "-o", os.path.join(a_file, "m")])
cli_fails("-o under /etc/passwd", ["export", mlp, "-o", "/etc/passwd/x"])
cli_fails("--emit so", ["compile", mlp, "-o", out, "--emit=so"])
cli_fails("--gpu-memory lots", ["compile", mlp, "-o", out, "--gpu-memory=lots"])
cli_fails("--strategy fastest", ["compile", mlp, "-o", out, "--strategy=fastest"])
cli_fails("--device-profile tpu", ["compile", mlp, "-o", out, "--device-profile=tpu"])
cli_fails("--report under a regular file", [
    "compile", mlp, "-o", out, f"--report={os.path.join(a_file, 'r.json')}"])
with environment("TANDEM_COMPILE", fake["exits 0, writes nothing"]):
    cli_fails("compile, TANDEM_COMPILE exits 0 and writes nothing",
              ["compile", mlp, "-o", out + "-true"])
with environment("TANDEM_COMPILE", compiler_folder):
    cli_fails("compile, TANDEM_COMPILE a folder", ["compile", mlp, "-o", out])
# The same through a real `python3 -m tandem`: one error line, no traceback.
for what, argv in [("process: --shape 99999999999999999999",
                    ["export", mlp, "-o", out, "--shape=99999999999999999999"]),
                   ("process: factory file with a syntax error",
                    ["export", f"{factories}/syntax.py:make", "-o", out])]:
    done = subprocess.run([sys.executable, "-m", "tandem"] + argv, capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    errors = [line for line in done.stderr.splitlines() if line.startswith("tandem: error:")]
    ok = done.returncode == 1 and len(errors) == 1 and "Traceback" not in done.stderr
    print(f"{X} {what}: " + (f"exit 1: {normalize(errors[0])}" if ok else
                             f"FAILED: exit {done.returncode}: {normalize(done.stderr)}"))
    record(X, ok)
    if not ok:
        failed_cases.append(f"{X} {what}")

total = sum(c for c, _ in counts.values())
bad = sum(f for _, f in counts.values())
for family, (cases, failed) in counts.items():
    print(f"summary {family}: {cases} cases, {failed} failed")
print(f"summary all: {total} cases, {bad} failed")
sys.exit(1 if bad else 0)
