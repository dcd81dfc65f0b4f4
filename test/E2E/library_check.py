"""Loads a model compiled with --emit=lib through ctypes and checks it
against NumPy; then checks its errors."""
import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

library, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(3)
weights = tandem_e2e.mlp_weights(rng)
path = os.path.join(work, "weights.safetensors")
tandem_e2e.write_safetensors(path, weights)

model = tandem_e2e.load_library(library)
error = ctypes.create_string_buffer(1024)


def infer(x):
    out = np.empty((128, 1), np.float32)
    inputs = (ctypes.c_void_p * 1)(x.ctypes.data)
    outputs = (ctypes.c_void_p * 1)(out.ctypes.data)
    status = model.tandem_model_infer(inputs, outputs, error, len(error))
    return status, out


x = np.ascontiguousarray(rng.standard_normal((128, 13), dtype=np.float32))
status, _ = infer(x)
print(f"infer before load: status {status}: {error.value.decode()}")
status = model.tandem_model_load(path.encode() + b".missing", b"sim", error,
                                 len(error))
print(f"load of a missing file: status {status}: {error.value.decode()}")
assert model.tandem_model_load(path.encode(), b"sim", error, len(error)) == 0, \
    error.value
expected = tandem_e2e.mlp_reference(x, weights)
for call in range(3):  # the loaded model serves repeated calls
    status, out = infer(x)
    assert status == 0, error.value
    tandem_e2e.check(f"library call {call}", out, expected)

# A second load, good or bad, is refused and leaves the loaded model as it
# was (a failed load used to unload it).
for name, weights_path in [("second load", path),
                           ("second load of a missing file", path + ".missing")]:
    status = model.tandem_model_load(weights_path.encode(), b"sim", error,
                                     len(error))
    print(f"{name}: status {status}: {error.value.decode()}")
    status, out = infer(x)
    assert status == 0, error.value
    tandem_e2e.check(f"call after the {name}", out, expected)

# Threads calling one model take turns: every result is right.
import threading  # noqa: E402
results = []


def worker(seed):
    local = np.ascontiguousarray(
        np.random.default_rng(seed).standard_normal((128, 13), dtype=np.float32))
    out = np.empty((128, 1), np.float32)
    status = model.tandem_model_infer(
        (ctypes.c_void_p * 1)(local.ctypes.data),
        (ctypes.c_void_p * 1)(out.ctypes.data), None, 0)
    want = tandem_e2e.mlp_reference(local, weights)
    results.append(status == 0 and np.allclose(out, want, rtol=1e-4, atol=1e-5))


threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(f"8 threads calling one model: {sum(results)} of 8 right")

model.tandem_model_unload()
status, _ = infer(x)
print(f"infer after unload: status {status}")
