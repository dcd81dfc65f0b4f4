"""The cost model's validation harness (a benchmark program, not a test):
compiles models under a device profile, runs them on this machine's CPU and
prints what the cost model predicted beside what each run measured, per
model and per op family, with the ratio.

The models are bench/runtime's and the frontend's model zoo (its test
models and more of torchvision's), each exported once from PyTorch. Each is
compiled for the CPU (placement all-cpu under the profile) and run with
--repeat, the better of two rounds; the prediction is the placement report's
predicted_us.total (the same figure the binary carries), the measured time
the binary's own --timing (the mean of the runs after the first). Per family
the figures are those of a --profile-json round: each op's measured time
against its predicted time. The machine's sgemm rate and streaming bandwidth
are measured before and after, and how far they moved is printed: on a
shared machine every measured/predicted figure moves with them.

Usage: bench/costmodel/run.sh [--profile PROFILE] [--scale S] [MODEL...]
Without --profile it first runs `tandem-calibrate --cpu-only` (the profile
users are told to make) and validates that.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from torch import nn

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Frontend"))
import tandem  # noqa: E402
import models as zoo  # noqa: E402

BUILD = os.environ.get("TANDEM_BUILD_DIR", os.path.join(ROOT, "build"))
CALIBRATE = os.path.join(BUILD, "bin", "tandem-calibrate")
# What the cost model is held to (docs/costmodel.md): per model, and per op
# family that takes at least FAMILY_SHARE of a model's op time.
MODEL_RANGE, FAMILY_RANGE, FAMILY_SHARE = (0.85, 1.15), (0.7, 1.4), 0.05


def runtime_models():
    """bench/runtime's models, as (name, build) pairs."""
    spec = importlib.util.spec_from_file_location(
        "runtime_bench", os.path.join(ROOT, "bench", "runtime", "bench.py"))
    runtime = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runtime)
    return [(f"runtime: {title}", build) for title, build, _, _ in runtime.MODELS]


def torchvision_model(name, shape):
    def build():
        import torchvision
        torch.manual_seed(0)
        model = zoo.randomize_batch_norm(getattr(torchvision.models, name)())
        return model, (torch.randn(*shape),)
    return build


def gru():
    torch.manual_seed(0)

    class Gru(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(128, 256, 2, batch_first=True)

        def forward(self, x):
            return self.gru(x)[0]
    return Gru(), (torch.randn(4, 32, 128),)


def zoo_models():
    models = [(f"zoo: {name}", build) for name, build in zoo.MODELS.items()]
    small, imagenet = (2, 3, 64, 64), (1, 3, 224, 224)
    for name, shape in [("mobilenet_v3_large", imagenet),
                        ("mobilenet_v3_small", imagenet),
                        ("squeezenet1_1", small), ("shufflenet_v2_x1_0", small),
                        ("efficientnet_b0", small), ("resnet34", small),
                        ("regnet_x_400mf", small), ("densenet121", small)]:
        models.append((f"zoo: {name}", torchvision_model(name, shape)))
    models.append(("zoo: GRU(128, 256, 2 layers), 4 x 32", gru))
    return models


def run_model(build, profile, work, index, scale):
    model, args = build()
    model.eval()
    prefix = os.path.join(work, f"model{index}")
    mlir_path, weights = tandem.export(model, args, prefix)
    report_path = prefix + ".report.json"
    tandem.compiled.run_compiler(mlir_path, prefix, "exe", None, profile,
                                 "all-cpu", report=report_path)
    with open(report_path) as f:
        predicted = json.load(f)["predicted_us"]["total"]
    # Rounds of about a quarter of a second at the predicted time.
    repeat = max(2, int(scale * 250e3 / max(predicted, 1)))
    command = [prefix, "--weights", weights]
    for k, arg in enumerate(args):
        path = f"{prefix}.input{k}.npy"
        np.save(path, arg.numpy())
        command += ["--input", path]
    # The model's time as a plain run takes it (--timing: the mean of the
    # runs after the first; a profile also reads the clock around every
    # op), the better of two rounds; the families from the better of two
    # profiled rounds.
    measured = min(tandem.compiled.timed_mean_us(
        command + ["--repeat", str(repeat + 1)]) for _ in range(2))
    best = None
    for _ in range(2):
        subprocess.run(command + ["--repeat", str(repeat), "--profile-json",
                                  prefix + ".profile.json"],
                       check=True, capture_output=True)
        with open(prefix + ".profile.json") as f:
            profile_json = json.load(f)
        if best is None or profile_json["total_us"] < best["total_us"]:
            best = profile_json
    ops = sum(family["total_us"] for family in best["families"])
    families = {family["family"]: (family["total_us"] / ops,
                                   family["measured_over_predicted"])
                for family in best["families"] if family["predicted_us"]}
    return predicted, measured, families


def machine_rates(work, tag):
    """This machine's sgemm rate and streaming bandwidth as tandem-calibrate
    measures them now (--rates-only: a few seconds)."""
    path = os.path.join(work, f"rates-{tag}.json")
    subprocess.run([CALIBRATE, "--cpu-only", "--rates-only", "-o", path],
                   check=True, capture_output=True)
    with open(path) as f:
        cpu = json.load(f)["cpu"]
    return cpu["peak_flops"]["f32"], cpu["memory_bandwidth"]


def within(ratio, bounds):
    return bounds[0] <= ratio <= bounds[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", help="device profile to validate "
                        "(default: calibrate this machine first)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="runs per round x SCALE (0.2 for a quick look)")
    parser.add_argument("models", nargs="*",
                        help="substrings of model names to run (default all)")
    options = parser.parse_args()
    torch.set_num_threads(os.cpu_count())
    with tempfile.TemporaryDirectory() as work:
        # The machine's rates before and after: on a shared machine they
        # move, and with them every measured/predicted figure.
        rates_before = machine_rates(work, "before")
        profile = options.profile
        if profile is None:
            profile = os.path.join(work, "calibrated.json")
            subprocess.run([CALIBRATE, "--cpu-only", "-o", profile], check=True)
        source = "builtin"
        if profile.endswith(".json"):
            with open(profile) as f:
                source = json.load(f)["cpu"].get("family_source", "")
        print(f"profile: {profile} ({source or 'no family figures'})")
        print(f"{'model':<44} {'predicted us':>12} {'measured us':>12} "
              f"{'meas/pred':>9}  families beyond {FAMILY_RANGE[0]}-"
              f"{FAMILY_RANGE[1]} (share of the op time)")
        models = runtime_models() + zoo_models()
        if options.models:
            models = [m for m in models if any(s in m[0] for s in options.models)]
        in_range, family_checks, family_ok = 0, 0, 0
        by_family = {}
        for index, (name, build) in enumerate(models):
            predicted, measured, families = run_model(build, profile, work,
                                                      index, options.scale)
            ratio = measured / predicted
            in_range += within(ratio, MODEL_RANGE)
            off = []
            for family, (share, family_ratio) in sorted(families.items()):
                by_family.setdefault(family, []).append((share, family_ratio))
                if share >= FAMILY_SHARE:
                    family_checks += 1
                    family_ok += within(family_ratio, FAMILY_RANGE)
                    if not within(family_ratio, FAMILY_RANGE):
                        off.append(f"{family} {family_ratio:.2f} ({share:.0%})")
            print(f"{name:<44} {predicted:>12.0f} {measured:>12.0f} "
                  f"{ratio:>9.2f}  {', '.join(off) or '-'}", flush=True)
        print(f"\nper op family, over the models (where it takes >= "
              f"{FAMILY_SHARE:.0%} of a model's op time):")
        print(f"{'family':<16} {'models':>6} {'meas/pred: min':>15} "
              f"{'median':>7} {'max':>6}")
        for family, values in sorted(by_family.items()):
            ratios = sorted(r for share, r in values if share >= FAMILY_SHARE)
            if ratios:
                print(f"{family:<16} {len(ratios):>6} {ratios[0]:>15.2f} "
                      f"{ratios[len(ratios) // 2]:>7.2f} {ratios[-1]:>6.2f}")
        rates_after = machine_rates(work, "after")
        print(f"\nthis machine's rates moved during the run: sgemm "
              f"{rates_before[0] / 1e9:.0f} -> {rates_after[0] / 1e9:.0f} GFLOP/s "
              f"({rates_after[0] / rates_before[0]:.2f}x), streaming "
              f"{rates_before[1] / 1e9:.1f} -> {rates_after[1] / 1e9:.1f} GB/s "
              f"({rates_after[1] / rates_before[1]:.2f}x)")
        print(f"\n{in_range} of {len(models)} models within "
              f"{MODEL_RANGE[0]}-{MODEL_RANGE[1]} measured/predicted; "
              f"{family_ok} of {family_checks} (model, family) pairs within "
              f"{FAMILY_RANGE[0]}-{FAMILY_RANGE[1]}")


if __name__ == "__main__":
    main()
