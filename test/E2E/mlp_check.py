"""Runs the compiled 13 -> 16 -> 32 -> 1 MLPs against NumPy."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

rng = np.random.default_rng(7)
weights = {
    "fc0.weight": rng.standard_normal((16, 13), dtype=np.float32),
    "fc0.bias": rng.standard_normal(16, dtype=np.float32),
    "fc1.weight": rng.standard_normal((32, 16), dtype=np.float32),
    "fc1.bias": rng.standard_normal(32, dtype=np.float32),
    "fc2.weight": rng.standard_normal((1, 32), dtype=np.float32),
    "fc2.bias": rng.standard_normal(1, dtype=np.float32),
}
x = rng.standard_normal((128, 13), dtype=np.float32)


def relu(v):
    return np.maximum(v, 0)


h = relu(x @ weights["fc0.weight"].T + weights["fc0.bias"])
h = relu(h @ weights["fc1.weight"].T + weights["fc1.bias"])
expected = (h @ weights["fc2.weight"].T + weights["fc2.bias"]).astype(np.float32)

auto, gpu, split, work = sys.argv[1:5]
for name, binary in [("auto", auto), ("all-gpu", gpu), ("split", split)]:
    outputs, profile = tandem_e2e.run(binary, [x], weights,
                                      os.path.join(work, name),
                                      ["--device-backend", "sim", "--profile"])
    tandem_e2e.check(name, outputs[0], expected)
    h2d, d2h = tandem_e2e.copies(profile)
    print(f"{name} copies: h2d {h2d} d2h {d2h}")
