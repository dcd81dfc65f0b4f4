"""Helpers of the end-to-end tests: write inputs and weights, run a compiled
model, read its outputs and its profile.

The references are computed with NumPy by each test.
"""
import os
import re
import subprocess
import sys

import numpy as np

def _load_weights_writer():
    """python/tandem/weights.py, loaded by path: it needs no PyTorch, and
    importing the `tandem` package would."""
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "..", "python",
                        "tandem", "weights.py")
    spec = importlib.util.spec_from_file_location("tandem_weights", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write_safetensors


write_safetensors = _load_weights_writer()  # {name: ndarray} -> file


def run(binary, inputs, weights, workdir, extra=()):
    """Runs `binary` on {index: ndarray} inputs and {name: ndarray} weights;
    returns (outputs, stdout)."""
    os.makedirs(workdir, exist_ok=True)
    args = [binary]
    for k, array in enumerate(inputs):
        path = os.path.join(workdir, f"input{k}.npy")
        np.save(path, array)
        args += ["--input", path]
    weights_path = os.path.join(workdir, "weights.safetensors")
    write_safetensors(weights_path, weights)
    out = os.path.join(workdir, "out")
    args += ["--weights", weights_path, "--output-dir", out] + list(extra)
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{binary} failed ({result.returncode}):\n{result.stderr}")
    outputs = []
    k = 0
    while os.path.exists(os.path.join(out, f"result{k}.npy")):
        outputs.append(np.load(os.path.join(out, f"result{k}.npy")))
        k += 1
    return outputs, result.stdout


def load_library(path):
    """A model library (tandem-compile --emit=lib) loaded through ctypes,
    its load and infer entry points typed."""
    import ctypes
    model = ctypes.CDLL(path)
    model.tandem_model_load.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_char_p, ctypes.c_int64]
    model.tandem_model_infer.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_char_p, ctypes.c_int64]
    return model


def copies(profile_text):
    """The (h2d, d2h) copy counts of a --profile report."""
    match = re.search(r"copies: h2d (\d+) \(\d+ bytes\), d2h (\d+)",
                      profile_text)
    return int(match.group(1)), int(match.group(2))


def check(name, actual, expected, rtol=1e-5, atol=1e-5):
    """Prints the largest error and fails beyond the tolerance."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        sys.exit(f"{name}: got {actual.shape} {actual.dtype}, expected "
                 f"{expected.shape} {expected.dtype}")
    error = float(np.max(np.abs(actual.astype(np.float64) -
                                expected.astype(np.float64)), initial=0))
    if not np.allclose(actual, expected, rtol=rtol, atol=atol):
        sys.exit(f"{name}: max abs error {error:.3g} beyond rtol={rtol} "
                 f"atol={atol}")
    print(f"{name}: ok (max abs error {error:.3g})")


def mlp_weights(rng):
    """Weights of test/Transforms/Inputs/mlp-13-16-32-1.mlir."""
    shapes = {"fc0.weight": (16, 13), "fc0.bias": (16,), "fc1.weight": (32, 16),
              "fc1.bias": (32,), "fc2.weight": (1, 32), "fc2.bias": (1,)}
    return {name: rng.standard_normal(shape, dtype=np.float32)
            for name, shape in shapes.items()}


def mlp_reference(x, weights):
    """The 13 -> 16 -> 32 -> 1 MLP in NumPy."""
    h = np.maximum(x @ weights["fc0.weight"].T + weights["fc0.bias"], 0)
    h = np.maximum(h @ weights["fc1.weight"].T + weights["fc1.bias"], 0)
    return (h @ weights["fc2.weight"].T + weights["fc2.bias"]).astype(np.float32)
