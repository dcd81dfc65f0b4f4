"""Runs the compiled 13 -> 16 -> 32 -> 1 MLPs against NumPy."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

rng = np.random.default_rng(7)
weights = tandem_e2e.mlp_weights(rng)
x = rng.standard_normal((128, 13), dtype=np.float32)
expected = tandem_e2e.mlp_reference(x, weights)

auto, gpu, split, work = sys.argv[1:5]
for name, binary in [("auto", auto), ("all-gpu", gpu), ("split", split)]:
    outputs, profile = tandem_e2e.run(binary, [x], weights,
                                      os.path.join(work, name),
                                      ["--device-backend", "sim", "--profile"])
    tandem_e2e.check(name, outputs[0], expected)
    h2d, d2h = tandem_e2e.copies(profile)
    print(f"{name} copies: h2d {h2d} d2h {d2h}")
