"""Subgraphs on weights computed at load against the same ops in every run.

Each model is exported by the frontend (which folds what it can at export,
knowing the weights), compiled twice for the CPU, with --fold-at-load (the
default) and with --fold-at-load=false, and the two binaries are timed side
by side in one run (--timing: the mean of the runs after the first, the
better of three rounds, alternating). Printed per model: the ops each run
executes, the ops computed at load instead, the time a run takes either way
and the ratio. The outputs of the two binaries must match exactly.

Usage: bench/runtime/fold_at_load.py [--scale S] [MODEL...]
       (after scripts/setup.sh; MODEL: names from the frontend's zoo)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Frontend"))
import tandem  # noqa: E402
import models as zoo  # noqa: E402

# Models with creation ops the export leaves (CLIP's causal mask, GPT-2's
# position ids), and one with none (the same program twice: the noise).
DEFAULT_MODELS = ["clip_text", "gpt2", "transformer_encoder"]


def compile_and_time(mlir, weights, inputs, prefix, fold, repeat):
    binary = f"{prefix}.{'fold' if fold else 'nofold'}"
    tandem.compiled.run_compiler(mlir, binary, "exe", None, None, "all-cpu",
                                 extra_flags=[f"--fold-at-load={str(fold).lower()}"])
    command = [binary, "--weights", weights]
    for path in inputs:
        command += ["--input", path]
    out = binary + ".out"
    os.makedirs(out, exist_ok=True)
    subprocess.run(command + ["--output-dir", out, "--profile-json",
                              binary + ".json", "--repeat", "2"],
                   check=True, capture_output=True)
    with open(binary + ".json") as f:
        profile = json.load(f)
    ops = sum(op["calls"] for op in profile["ops"]) // 2
    at_load = profile.get("at_load") or {"ops": 0}
    timed = command + ["--repeat", str(repeat + 1)]
    return timed, ops, at_load["ops"], out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="run count factor (1: about 200 runs a round)")
    args = parser.parse_args()
    repeat = max(3, int(200 * args.scale))
    print(f"{'model':22} {'ops/run':>8} {'at load':>8} {'ops/run':>8} "
          f"{'us/run':>10} {'us/run':>10} {'ratio':>6}")
    print(f"{'':22} {'folded':>8} {'':>8} {'unfolded':>8} {'folded':>10} "
          f"{'unfolded':>10}")
    with tempfile.TemporaryDirectory() as work:
        for index, name in enumerate(args.models):
            torch.manual_seed(0)
            model, inputs = zoo.MODELS[name]()
            model.eval()
            prefix = os.path.join(work, f"m{index}")
            mlir, weights = tandem.export(model, inputs, prefix)
            paths = []
            for k, tensor in enumerate(inputs):
                paths.append(f"{prefix}.in{k}.npy")
                np.save(paths[-1], tensor.numpy())
            folded = compile_and_time(mlir, weights, paths, prefix, True, repeat)
            plain = compile_and_time(mlir, weights, paths, prefix, False, repeat)
            for k in range(len(os.listdir(folded[3]))):
                a = np.load(os.path.join(folded[3], f"result{k}.npy"))
                b = np.load(os.path.join(plain[3], f"result{k}.npy"))
                if not np.array_equal(a, b, equal_nan=True):
                    sys.exit(f"{name}: result {k} differs with --fold-at-load")
            times = {True: [], False: []}
            for _ in range(3):
                times[True].append(tandem.compiled.timed_mean_us(folded[0]))
                times[False].append(tandem.compiled.timed_mean_us(plain[0]))
            fast, slow = min(times[True]), min(times[False])
            print(f"{name:22} {folded[1]:8d} {folded[2]:8d} {plain[1]:8d} "
                  f"{fast:10.1f} {slow:10.1f} {slow / fast:6.2f}x")


if __name__ == "__main__":
    main()
