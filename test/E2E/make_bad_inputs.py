"""Writes the files executable-errors.test feeds a compiled MLP."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
weights = tandem_e2e.mlp_weights(rng)
np.save(os.path.join(out, "x.npy"), rng.standard_normal((128, 13), dtype=np.float32))
np.save(os.path.join(out, "x-wrong-shape.npy"), np.zeros((64, 13), np.float32))
np.save(os.path.join(out, "x-wrong-dtype.npy"), np.zeros((128, 13), np.float64))
with open(os.path.join(out, "x.npy"), "rb") as f:
    data = f.read()
with open(os.path.join(out, "x-truncated.npy"), "wb") as f:
    f.write(data[: len(data) // 2])
tandem_e2e.write_safetensors(os.path.join(out, "w.safetensors"), weights)
missing = dict(weights)
del missing["fc1.bias"]
tandem_e2e.write_safetensors(os.path.join(out, "w-missing.safetensors"), missing)
wrong = dict(weights)
wrong["fc1.weight"] = np.zeros((16, 32), np.float32)
tandem_e2e.write_safetensors(os.path.join(out, "w-wrong-shape.safetensors"), wrong)
with open(os.path.join(out, "w.safetensors"), "rb") as f:
    data = f.read()
with open(os.path.join(out, "w-truncated.safetensors"), "wb") as f:
    f.write(data[: len(data) - 100])
