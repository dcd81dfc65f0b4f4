"""What the PyTorch examples share: paths, running the compiled binary, and
printing a placement report by module."""
import json
import os
import subprocess
import sys
from collections import OrderedDict

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
BUILD = os.environ.get("TANDEM_BUILD_DIR", os.path.join(ROOT, "build"))
OUT = os.path.join(BUILD, "example", "pytorch")
os.makedirs(OUT, exist_ok=True)


def tool(name):
    return os.path.join(BUILD, "bin", name)


def placement_by_module(report, limit=None):
    """Prints, per module (the name the exporter put in each op's location),
    where its ops went and what the cost model predicted. `report` is the
    placement report or its path."""
    if isinstance(report, str):
        with open(report) as f:
            report = json.load(f)
    modules = OrderedDict()
    for op in report["ops"]:
        if op["name"] == "tandem.weight":
            continue
        module = op["loc"].split(" @ ")[0] if " @ " in op["loc"] else "(forward itself)"
        entry = modules.setdefault(module, {"cpu": 0, "gpu": 0, "cpu_us": 0.0,
                                            "gpu_us": 0.0, "pinned": False})
        entry[op["device"]] += 1
        entry["cpu_us"] += op["cpu_us"]
        entry["gpu_us"] += op["gpu_us"]
        entry["pinned"] |= op["pinned"]
    print(f"  {'module':<28} {'ops on':<10} {'cpu us':>9} {'gpu us':>9}")
    rows = list(modules.items())
    for name, entry in rows[:limit] if limit else rows:
        where = "/".join(d for d in ("cpu", "gpu") if entry[d])
        pin = " (pinned)" if entry["pinned"] else ""
        print(f"  {name:<28} {where + pin:<10} {entry['cpu_us']:>9.1f} "
              f"{entry['gpu_us']:>9.1f}")
    if limit and len(rows) > limit:
        print(f"  ... {len(rows) - limit} more modules")
    # Weights: resident on the GPU (uploaded once), streamed in (copied each
    # run, just before their first reader), or read on the CPU only.
    device = {op["id"]: op["device"] for op in report["ops"]}
    resident = streamed = host = 0
    copies = 0
    for value in report["values"]:
        if not value["weight"]:
            continue
        gpu_readers = any(c >= 0 and device[c] == "gpu"
                          for c in value["consumers"])
        if device[value["producer"]] == "gpu":
            resident += value["bytes"]
        elif gpu_readers:
            streamed += value["bytes"]
            copies += 1
        else:
            host += value["bytes"]
    parts = [f"{resident / 2**20:.1f} MiB resident on the GPU"]
    if copies:
        parts.append(f"{streamed / 2**20:.1f} MiB streamed in ({copies} "
                     f"copies, each just before its reader)")
    parts.append(f"{host / 2**20:.1f} MiB read on the CPU")
    print("  weights: " + ", ".join(parts))
    t = report["transfers"]
    predicted = report["predicted_us"]
    print(f"  predicted {predicted['total']:.1f} us per run (cpu "
          f"{predicted['cpu_compute']:.1f}, gpu {predicted['gpu_compute']:.1f}, "
          f"copies {predicted['transfer']:.1f}); {t['h2d_count']} h2d, "
          f"{t['d2h_count']} d2h; peak GPU memory "
          f"{report['peak_gpu_bytes'] / 2**20:.1f} MiB of "
          f"{report['gpu_memory_budget_bytes'] / 2**20:.1f} MiB")
    return report


def run_binary(binary, inputs, extra=()):
    """Runs a compiled executable on numpy inputs; returns its outputs and
    prints its stdout (the profile)."""
    import numpy as np
    command = [binary, "--output-dir", binary + ".out"]
    for k, array in enumerate(inputs):
        path = f"{binary}.input{k}.npy"
        np.save(path, array)
        command += ["--input", path]
    done = subprocess.run(command + list(extra), capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    print(done.stdout.rstrip())
    if done.returncode != 0:
        sys.exit(f"{binary} failed with status {done.returncode}")
    outputs, k = [], 0
    while os.path.exists(os.path.join(binary + ".out", f"result{k}.npy")):
        outputs.append(np.load(os.path.join(binary + ".out", f"result{k}.npy")))
        k += 1
    return outputs
