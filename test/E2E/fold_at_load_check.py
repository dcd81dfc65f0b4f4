"""Compiles Inputs/fold-at-load.mlir with and without --fold-at-load, on the
CPU alone and with the GPU's ops on the sim backend, as an executable and as
a library, and checks every build against NumPy: the weights computed at load
must be the ones the model computed in every run."""
import ctypes
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

compiler, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
model = os.path.join(os.path.dirname(__file__), "Inputs", "fold-at-load.mlir")
rng = np.random.default_rng(7)
weights = {
    "fc.weight": rng.standard_normal((32, 16), dtype=np.float32),
    "fc.bias": rng.standard_normal(32, dtype=np.float32),
    "gate": rng.standard_normal(32, dtype=np.float32),
    "pos": rng.standard_normal((32, 8), dtype=np.float32),
}
x = rng.standard_normal((8, 16), dtype=np.float32)
y = (x @ weights["fc.weight"].T + weights["fc.bias"]) * np.exp(
    weights["gate"] * np.float32(0.5)) + weights["pos"].T
keep = np.arange(32)[None, :] <= np.arange(8)[:, None]
expected = np.where(keep, y, np.float32(0)).astype(np.float32)

for placement, flags in [("cpu", ["--gpu-memory", "0"]), ("sim", [])]:
    for fold in (True, False):
        name = f"{placement}, {'folded' if fold else 'not folded'}"
        binary = os.path.join(work, f"{placement}-{int(fold)}")
        subprocess.run([compiler, model, "-o", binary,
                        f"--fold-at-load={str(fold).lower()}"] + flags,
                       check=True)
        (out,), text = tandem_e2e.run(binary, [x], weights,
                                      os.path.join(work, f"run-{placement}-{int(fold)}"),
                                      ["--repeat", "3", "--profile",
                                       "--device-backend", "sim"])
        tandem_e2e.check(name, out, expected)
        line = re.search(r"folded at load: .*", text)
        print(f"{name}: {line.group(0) if line else 'nothing folded at load'}")
        # No transpose, compare or iota runs in a folded model's runs.
        ran = sorted(set(re.findall(r"^tandem\.(transpose|compare|iota|exp) ",
                                    text, re.M)))
        print(f"{name}: per run: {', '.join(ran) if ran else 'none of them'}")

# Batch norms after a convolution and a linear layer, folded into their
# weights at load (in f32, where the reference normalizes in float64).
bn_model = os.path.join(os.path.dirname(__file__), "Inputs",
                        "fold-at-load-bn.mlir")
bn_weights = {
    "conv.weight": rng.standard_normal((4, 3, 3, 3), dtype=np.float32),
    "fc.weight": rng.standard_normal((6, 8), dtype=np.float32),
    "fc.bias": rng.standard_normal(6, dtype=np.float32),
}
for prefix, n in (("bn", 4), ("bn1d", 6)):
    bn_weights[f"{prefix}.weight"] = rng.standard_normal(n, dtype=np.float32)
    bn_weights[f"{prefix}.bias"] = rng.standard_normal(n, dtype=np.float32)
    bn_weights[f"{prefix}.running_mean"] = rng.standard_normal(n, dtype=np.float32)
    bn_weights[f"{prefix}.running_var"] = rng.uniform(0.5, 2, n).astype(np.float32)
image = rng.standard_normal((2, 3, 6, 6), dtype=np.float32)
rows = rng.standard_normal((5, 8), dtype=np.float32)


def batch_norm(t, prefix, epsilon):
    shape = (1, -1) + (1,) * (t.ndim - 2)
    w = {k: bn_weights[f"{prefix}.{k}"].astype(np.float64).reshape(shape)
         for k in ("weight", "bias", "running_mean", "running_var")}
    return ((t - w["running_mean"]) / np.sqrt(w["running_var"] + epsilon) *
            w["weight"] + w["bias"])


padded = np.pad(image.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = np.zeros((2, 4, 6, 6))
for i in range(3):
    for j in range(3):
        conv += np.einsum("nchw,oc->nohw", padded[:, :, i:i + 6, j:j + 6],
                          bn_weights["conv.weight"][:, :, i, j])
expected_bn = [
    batch_norm(conv, "bn", 1e-3).astype(np.float32),
    batch_norm(rows.astype(np.float64) @ bn_weights["fc.weight"].T +
               bn_weights["fc.bias"], "bn1d", 1e-5).astype(np.float32)]
for fold in (True, False):
    name = f"batch norms, {'folded' if fold else 'not folded'}"
    binary = os.path.join(work, f"bn-{int(fold)}")
    subprocess.run([compiler, bn_model, "-o", binary, "--gpu-memory", "0",
                    f"--fold-at-load={str(fold).lower()}"], check=True)
    outs, text = tandem_e2e.run(binary, [image, rows], bn_weights,
                                os.path.join(work, f"run-bn-{int(fold)}"),
                                ["--profile"])
    for k, (out, want) in enumerate(zip(outs, expected_bn)):
        tandem_e2e.check(f"{name}, result {k}", out, want, rtol=1e-4,
                         atol=1e-4)
    line = re.search(r"folded at load: .*", text)
    print(f"{name}: {line.group(0) if line else 'nothing folded at load'}")
    print(f"{name}: batch_norm per run: "
          f"{len(re.findall(r'^tandem.batch_norm ', text, re.M))} row(s)")

# The library form loads the model and computes the folded weights in
# tandem_model_load.
library = os.path.join(work, "model.so")
subprocess.run([compiler, model, "--emit=lib", "-o", library], check=True)
path = os.path.join(work, "weights.safetensors")
tandem_e2e.write_safetensors(path, weights)
lib = tandem_e2e.load_library(library)
error = ctypes.create_string_buffer(1024)
status = lib.tandem_model_load(path.encode(), b"sim", error, len(error))
if status != 0:
    sys.exit(f"library load: {error.value.decode()}")
for call in range(2):
    out = np.empty((8, 32), np.float32)
    status = lib.tandem_model_infer((ctypes.c_void_p * 1)(x.ctypes.data),
                                    (ctypes.c_void_p * 1)(out.ctypes.data),
                                    error, len(error))
    if status != 0:
        sys.exit(f"library call {call}: {error.value.decode()}")
    tandem_e2e.check(f"library call {call}", out, expected)
lib.tandem_model_unload()

# A weights file without a weight the at-load function reads: the load
# names it.
del weights["gate"]
tandem_e2e.write_safetensors(path, weights)
result = subprocess.run([os.path.join(work, "cpu-1"), "--weights", path,
                         "--input", os.path.join(work, "run-cpu-1",
                                                 "input0.npy")],
                        capture_output=True, text=True)
print(f"missing weight: exit {result.returncode}: {result.stderr.strip()}")
