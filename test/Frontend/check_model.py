"""Exports one model of models.py with tandem.compile, runs it on the sim
backend under a GPU budget and compares it with PyTorch in eval mode.

    check_model.py NAME [--profile P] [--budget B] [--expect split|cpu]

Prints the placement (ops per device, peak GPU memory against the budget,
transfers), the fused groups (by their ops) and the error, max |tandem -
torch| / max |torch|, against the
tolerance (1e-4: f32 kernels summing in another order than PyTorch's);
exits 1 when a check fails.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))
import models  # noqa: E402
import tandem  # noqa: E402

TOLERANCE = 1e-4

parser = argparse.ArgumentParser()
parser.add_argument("name", choices=sorted(models.MODELS))
parser.add_argument("--profile", default="v100-32gb")
parser.add_argument("--budget", default=None)
parser.add_argument("--expect", choices=("split", "cpu"), default="split")
parser.add_argument("--workdir", default=None)
options = parser.parse_args()

model, args = models.MODELS[options.name]()
run = tandem.compile(model, args, gpu_memory=options.budget,
                     device_profile=options.profile, backend="sim",
                     workdir=options.workdir)
report = run.report
devices = run.devices()
transfers = report["transfers"]
print(f"{options.name}: profile {report['device_profile']}, budget "
      f"{report['gpu_memory_budget_bytes']} B: {devices.get('gpu', 0)} ops on "
      f"the gpu, {devices.get('cpu', 0)} on the cpu, peak GPU "
      f"{report['peak_gpu_bytes']} B, {transfers['h2d_count']} h2d / "
      f"{transfers['d2h_count']} d2h")
# The fused groups, by their ops: what the compiler made of the model's
# elementwise tails (a causal mask's select joins its scores' softmax).
groups = sorted({op["name"] for op in report["ops"]
                 if op["name"].startswith("fused(")})
print(f"{options.name}: groups: {', '.join(groups) or 'none'}")
failures = []
if report["peak_gpu_bytes"] > report["gpu_memory_budget_bytes"]:
    failures.append("the placement exceeds the budget")
if options.expect == "split" and (not devices.get("gpu") or not devices.get("cpu")):
    failures.append("expected ops on both devices")
if options.expect == "cpu" and devices.get("gpu"):
    failures.append("expected every op on the cpu")

with torch.no_grad():
    expected = model.eval()(*args)
outputs = run(*args)
if isinstance(expected, torch.Tensor):
    expected, outputs = (expected,), (outputs,)
for k, (got, want) in enumerate(zip(outputs, expected)):
    if got.shape != want.shape or got.dtype != want.dtype:
        failures.append(f"result {k} is {tuple(got.shape)} {got.dtype}, torch "
                        f"gives {tuple(want.shape)} {want.dtype}")
        continue
    error = models.relative_error(got, want)
    print(f"{options.name}: result {k} {tuple(got.shape)}: max |tandem - torch| "
          f"/ max |torch| = {error:.2e} (tolerance {TOLERANCE:.0e})")
    if not error <= TOLERANCE:
        failures.append(f"result {k} differs from PyTorch")
run.close()
if failures:
    sys.exit(f"{options.name}: FAILED: " + "; ".join(failures))
print(f"{options.name}: ok")
