"""Runs scheduled models on the sim backend, whose queues run on threads of
their own, and checks what the schedule promises:

  python schedule_check.py same WORKDIR SEEDS BINARY...
      each binary gives the same bytes run concurrently, with --serial and
      under --sim-jitter with each of SEEDS (comma-separated), and the GPU
      bytes its live buffers held at once never passed the budget;
  python schedule_check.py race WORKDIR SEEDS GOOD BROKEN
      GOOD runs clean under every seed; BROKEN (a wait left out) is stopped
      by the race detector under at least one seed, and fails only so.
"""
import json
import os
import subprocess
import sys


def run(binary, workdir, extra):
    """(returncode, stderr, output bytes, profile) of one run."""
    out = os.path.join(workdir, "out")
    profile = os.path.join(workdir, "profile.json")
    for stale in (profile,):
        if os.path.exists(stale):
            os.remove(stale)
    args = [binary, "--random-weights", "7", "--random-inputs", "11",
            "--device-backend", "sim", "--output-dir", out,
            "--profile-json", profile] + extra
    result = subprocess.run(args, capture_output=True, text=True)
    outputs = []
    k = 0
    while os.path.exists(os.path.join(out, f"result{k}.npy")):
        with open(os.path.join(out, f"result{k}.npy"), "rb") as f:
            outputs.append(f.read())
        os.remove(os.path.join(out, f"result{k}.npy"))
        k += 1
    report = json.load(open(profile)) if os.path.exists(profile) else None
    return result.returncode, result.stderr, outputs, report


def same(workdir, seeds, binaries):
    failures = 0
    for binary in binaries:
        name = os.path.basename(binary)
        code, err, reference, report = run(binary, workdir, [])
        if code != 0:
            print(f"{name}: FAILED concurrently: {err.strip()}")
            failures += 1
            continue
        schedule = report["schedule"]
        runs = [("serial", ["--serial"])] + [
            (f"jitter {seed}", ["--sim-jitter", seed]) for seed in seeds]
        worst = schedule["gpu_live_peak_bytes"] or 0
        for label, extra in runs:
            code, err, outputs, report = run(binary, workdir, extra)
            if code != 0 or outputs != reference:
                print(f"{name} [{label}]: FAILED: "
                      f"{err.strip() or 'different bytes'}")
                failures += 1
            elif report["schedule"]["gpu_live_peak_bytes"] is not None:
                worst = max(worst, report["schedule"]["gpu_live_peak_bytes"])
        budget = report["gpu_budget_bytes"] if report else 0
        within = worst <= budget
        failures += not within
        print(f"{name}: {'concurrent' if schedule['concurrent'] else 'one queue'}, "
              f"same bytes serial and under {len(seeds)} jitter seeds; GPU live "
              f"peak {'within' if within else 'OVER'} the budget")
    return failures


def race(workdir, seeds, good, broken):
    failures = 0
    for seed in seeds:
        code, err, _, _ = run(good, workdir, ["--sim-jitter", seed])
        if code != 0:
            print(f"good [jitter {seed}]: FAILED: {err.strip()}")
            failures += 1
    caught = 0
    for seed in seeds:
        code, err, _, _ = run(broken, workdir, ["--sim-jitter", seed])
        if code != 0:
            if "error: race: " not in err:
                print(f"broken [jitter {seed}]: failed otherwise: {err.strip()}")
                failures += 1
            else:
                caught += 1
                message = err.strip()
    if caught == 0:
        print(f"broken: the race went unseen under {len(seeds)} seeds")
        failures += 1
    else:
        print(f"broken: caught under {caught} of {len(seeds)} seeds")
        print(message)
    return failures


def main():
    mode, workdir, seeds = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    os.makedirs(workdir, exist_ok=True)
    if mode == "same":
        failures = same(workdir, seeds, sys.argv[4:])
    else:
        failures = race(workdir, seeds, sys.argv[4], sys.argv[5])
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
