"""Random well-typed models give the same results under every placement.

Generates random models (tandem-placement-properties --dump-random), compiles
each under every strategy, at the profile's memory and under a budget that
binds (half of what all-gpu needs), runs every binary on the same random
inputs and weights (GPU-placed ops on the sim backend, copies real), and
compares every output with the all-cpu binary's. Prints one line per model
and a summary.

Usage: placements_agree.py TANDEM_COMPILE TANDEM_PLACEMENT_PROPERTIES WORKDIR
       [--models N] [--seed S]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

STRATEGIES = ("auto", "exact", "greedy", "mincut", "all-gpu")
PROFILE = "v100-32gb"


def compile_model(compiler, model, binary, strategy, budget=None):
    command = [compiler, model, f"--strategy={strategy}",
               f"--device-profile={PROFILE}", f"--report={binary}.json",
               "-o", binary]
    if budget is not None:
        command.append(f"--gpu-memory={budget}")
    done = subprocess.run(command, capture_output=True, text=True)
    return done.returncode == 0, done.stderr


def run(binary, folder):
    done = subprocess.run([binary, "--random-inputs", "3", "--random-weights",
                           "5", "--device-backend", "sim", "--output-dir",
                           folder], capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr
    outputs = []
    k = 0
    while os.path.exists(os.path.join(folder, f"result{k}.npy")):
        outputs.append(np.load(os.path.join(folder, f"result{k}.npy")))
        k += 1
    return outputs, ""


def same(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if np.issubdtype(a.dtype, np.floating):
        return np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    return np.array_equal(a, b)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("compiler")
    parser.add_argument("properties")
    parser.add_argument("work")
    parser.add_argument("--models", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    models = os.path.join(args.work, "models")
    os.makedirs(models, exist_ok=True)
    subprocess.run([args.properties, "--random", str(args.models),
                    "--min-ops", "6", "--max-ops", "24", "--budgets", "1",
                    "--no-pipeline", "--seed", str(args.seed), "--profile",
                    PROFILE, "--strategy", "all-cpu", "--dump-random", models],
                   check=True, stdout=subprocess.DEVNULL)
    runs = disagreements = refused = 0
    for index in range(args.models):
        model = os.path.join(models, f"random-{index}.mlir")
        folder = os.path.join(args.work, f"m{index}")
        os.makedirs(folder, exist_ok=True)
        reference_binary = os.path.join(folder, "all-cpu")
        ok, error = compile_model(args.compiler, model, reference_binary,
                                  "all-cpu")
        if not ok:
            print(f"model {index}: all-cpu FAILED to compile: {error}")
            disagreements += 1
            continue
        reference, error = run(reference_binary, reference_binary + ".out")
        if reference is None:
            print(f"model {index}: all-cpu FAILED to run: {error}")
            disagreements += 1
            continue
        # A budget that binds: half of what all-gpu's plan needs.
        ok, _ = compile_model(args.compiler, model,
                              os.path.join(folder, "need"), "all-gpu")
        need = (json.load(open(os.path.join(folder, "need.json")))
                ["gpu_arena_bytes"] if ok else 0)
        budgets = [None] + ([need // 2] if need >= 128 else [])
        checked = []
        for budget in budgets:
            for strategy in STRATEGIES:
                name = f"{strategy}@{'tight' if budget else 'full'}"
                binary = os.path.join(folder, name)
                ok, error = compile_model(args.compiler, model, binary,
                                          strategy, budget)
                if not ok:
                    # Only a refusal for the budget is expected.
                    if "over the budget" in error or "cannot place" in error:
                        refused += 1
                        continue
                    print(f"model {index}: {name} FAILED to compile: {error}")
                    disagreements += 1
                    continue
                outputs, error = run(binary, binary + ".out")
                runs += 1
                if outputs is None:
                    print(f"model {index}: {name} FAILED to run: {error}")
                    disagreements += 1
                elif len(outputs) != len(reference) or not all(
                        same(a, b) for a, b in zip(outputs, reference)):
                    print(f"model {index}: {name} DISAGREES with all-cpu")
                    disagreements += 1
                else:
                    checked.append(name)
        print(f"model {index}: {len(checked)} placements agree with all-cpu "
              f"on {len(reference)} outputs")
    print(f"{args.models} random models, {runs} placed binaries run, "
          f"{refused} refused for the budget, {disagreements} disagreements")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
