# -*- Python -*-
# lit configuration of the Tandem regression tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Tandem"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tandem_obj_root, "test")
# Unit/ is its own suite (GoogleTest); Inputs/ holds files tests read.
config.excludes = ["Inputs", "Unit", "lib", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tandem_src_root", config.tandem_src_root))
config.substitutions.append(("%tandem_obj_root", config.tandem_obj_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.tandem_tools_dir, config.llvm_tools_dir]
tools = ["tandem-opt", "tandem-calibrate", "tandem-compile",
         "tandem-placement-properties"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Tests that need a CUDA GPU carry `REQUIRES: cuda-gpu` and are reported
# unsupported on machines without one.
import shutil
import subprocess

def _has_cuda_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True,
                                 timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return listing.returncode == 0 and "GPU" in listing.stdout

if _has_cuda_gpu():
    config.available_features.add("cuda-gpu")

# The CUDA toolkit's PTX assembler: every generated PTX module is assembled
# for sm_90 (a real check that it is valid PTX, with no GPU needed).
_ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas")
    else None)
if _ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
    config.environment["TANDEM_PTXAS"] = _ptxas

# libFuzzer is clang's: the fuzz smoke test needs clang++ that links it.
def _has_libfuzzer():
    clang = shutil.which("clang++")
    if not clang:
        return False
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "f.cpp")
        with open(source, "w") as f:
            f.write('extern "C" int LLVMFuzzerTestOneInput(const unsigned char *d, '
                    'unsigned long n) { return 0; }\n')
        try:
            built = subprocess.run([clang, "-fsanitize=fuzzer,address", source,
                                    "-o", os.path.join(scratch, "f")],
                                   capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return False
        return built.returncode == 0

if _has_libfuzzer():
    config.available_features.add("libfuzzer")

def _python_imports(modules):
    try:
        subprocess.run([sys.executable, "-c", "import " + modules],
                       check=True, capture_output=True, timeout=300)
        return True
    except (OSError, subprocess.SubprocessError):
        return False

# OpenBLAS (which every build can link: tandem-compile --blas=openblas) and
# its core choice are tested where Debian's alternatives point libblas.so.3
# at it; oneMKL where the build found it.
try:
    import ctypes
    if hasattr(ctypes.CDLL("libblas.so.3"), "openblas_get_corename"):
        config.available_features.add("openblas")
except OSError:
    pass
if config.tandem_mkl_library:
    config.available_features.add("mkl")
config.substitutions.append(("%blas_name", config.tandem_blas_name))

# The end-to-end tests compute their references with NumPy; the frontend's
# tests need PyTorch and torchvision (scripts/setup.sh installs all three).
if _python_imports("numpy"):
    config.available_features.add("numpy")
if _python_imports("torch, torchvision"):
    config.available_features.add("torch")
# The ONNX import's tests: onnx to read and build models, ONNX Runtime as the
# reference, onnxscript for PyTorch's torch.export-based ONNX exporter.
if _python_imports("torch, onnx, onnxruntime, onnxscript"):
    config.available_features.add("onnx")
# PYTHONPATH finds the frontend in the tree.
config.environment["PYTHONPATH"] = os.path.join(config.tandem_src_root, "python")
config.environment["TANDEM_COMPILE"] = os.path.join(config.tandem_tools_dir,
                                                    "tandem-compile")
# torch.export's own warnings go to stderr; keep its caches in the test tree.
config.environment["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(
    config.tandem_obj_root, "torch-cache")

# Built with ASan/UBSan (scripts/sanitize.sh).
if getattr(config, "tandem_sanitized", 0):
    config.available_features.add("asan")
