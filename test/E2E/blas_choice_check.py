"""A model linked with oneMKL computes what NumPy and OpenBLAS do.

The MLP (13 -> 16 -> 32 -> 1) linked each way runs against NumPy; the
transformer encoder layer, linked each way, runs on the same random inputs
and weights, and the two agree to float32 rounding (the BLASes sum a
product's terms in different orders, so bits may differ).

Usage: blas_choice_check.py MLP_MKL MLP_OPENBLAS ENCODER_MKL ENCODER_OPENBLAS WORKDIR
"""
import glob
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

mlp_mkl, mlp_openblas, encoder_mkl, encoder_openblas, work = sys.argv[1:6]

rng = np.random.default_rng(11)
weights = tandem_e2e.mlp_weights(rng)
x = rng.standard_normal((128, 13), dtype=np.float32)
expected = tandem_e2e.mlp_reference(x, weights)
for name, binary in [("mlp oneMKL", mlp_mkl), ("mlp OpenBLAS", mlp_openblas)]:
    outputs, _ = tandem_e2e.run(binary, [x], weights,
                                os.path.join(work, name.replace(" ", "-")))
    tandem_e2e.check(name, outputs[0], expected)


def random_run(binary, folder):
    os.makedirs(folder, exist_ok=True)
    done = subprocess.run([binary, "--random-inputs", "3", "--random-weights",
                           "5", "--output-dir", folder],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{binary} failed: {done.stderr.strip()}")
    return [np.load(path) for path in sorted(glob.glob(f"{folder}/*.npy"))]


with_mkl = random_run(encoder_mkl, os.path.join(work, "encoder-mkl"))
with_openblas = random_run(encoder_openblas, os.path.join(work, "encoder-openblas"))
if not with_mkl or len(with_mkl) != len(with_openblas):
    sys.exit(f"encoder: {len(with_mkl)} outputs with oneMKL, "
             f"{len(with_openblas)} with OpenBLAS")
for k, (a, b) in enumerate(zip(with_mkl, with_openblas)):
    scale = float(np.max(np.abs(b), initial=1.0))
    tandem_e2e.check(f"encoder output {k} (scale {scale:.3g})", a, b,
                     rtol=1e-4, atol=1e-5 * scale)
