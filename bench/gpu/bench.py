"""The GPU benchmark (a program, not a test), in two steps so that the GPU
machine needs no LLVM:

  prepare DIR   (where the tree is built; needs torch): exports each model,
                compiles it twice with tandem-compile (all-gpu; auto under a
                budget of half what all-gpu needs) into DIR and copies the
                shared libraries the binaries need besides CUDA's (OpenBLAS
                and its Fortran runtime). Weights are not kept: the binaries
                run with --random-weights, so DIR stays small (about 60 MB: eight
                binaries of 2.3 MB and OpenBLAS).
  run DIR OUT   (on the GPU machine; needs torch with CUDA): runs both
                binaries (--device-backend cuda), PyTorch eager on CUDA,
                PyTorch with accelerate-style offload (weights on the host,
                each module's moved to the GPU before it runs and dropped
                after) under the same budget, and measures host-to-device
                copy bandwidth: PyTorch's pinned non_blocking copy (what
                cudaMemcpyAsync from pinned memory gives) against the copies
                the Tandem binary made. Writes OUT/results.md and
                OUT/results.json.

Without a GPU, `run` still runs (the binaries fall back to the sim backend,
the PyTorch CUDA rows say n/a), so the script itself is exercised anywhere.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import torch
from torch import nn

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Frontend"))


def tower():
    layers = []
    for _ in range(8):
        layers += [nn.Linear(4096, 4096), nn.ReLU()]
    return nn.Sequential(*layers), (torch.randn(512, 4096),)


def resnet():
    import torchvision
    return torchvision.models.resnet50(), (torch.randn(32, 3, 224, 224),)


def gpt():
    from models import GPT2
    return GPT2(vocabulary=32000, width=1024, context=512, layers=8), \
        (torch.randint(0, 32000, (8, 512)),)


def recommender():
    from models import DLRM
    return DLRM(tables=(4_000_000, 1_000_000, 100_000), width=64), \
        (torch.randn(4096, 13), torch.randint(0, 100_000, (4096, 3, 8)))


def smoke():
    return nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256)), \
        (torch.randn(64, 256),)


MODELS = {"mlp-tower-8x4096": (tower, 20), "resnet50-b32": (resnet, 10),
          "gpt-8x1024-t512": (gpt, 10), "dlrm-4M-rows": (recommender, 20)}
if os.environ.get("TANDEM_GPU_BENCH_SMOKE"):  # checks the script itself, fast
    MODELS = {"smoke-mlp": (smoke, 5)}


def build(name):
    torch.manual_seed(0)
    model, args = MODELS[name][0]()
    return model.eval(), args


def prepare(folder):
    import tandem
    from tandem.compiled import run_compiler
    os.makedirs(folder, exist_ok=True)
    for name in MODELS:
        model, args = build(name)
        prefix = os.path.join(folder, name)
        mlir_path, weights = tandem.export(model, args, prefix)
        run_compiler(mlir_path, f"{prefix}.all-gpu", "exe", None, "h200", "all-gpu",
                     f"{prefix}.all-gpu.json")
        with open(f"{prefix}.all-gpu.json") as f:
            need = json.load(f)["peak_gpu_bytes"]
        budget = need // 2
        run_compiler(mlir_path, f"{prefix}.auto", "exe", budget, "h200", "auto",
                     f"{prefix}.auto.json")
        with open(f"{prefix}.budget", "w") as f:
            f.write(str(budget))
        os.remove(weights)  # the GPU run uses --random-weights
        print(f"prepared {name}: all-gpu needs {need / 2**20:.0f} MiB; auto under "
              f"{budget / 2**20:.0f} MiB", flush=True)
    libraries = os.path.join(folder, "lib")
    os.makedirs(libraries, exist_ok=True)
    listing = subprocess.run(["ldd", f"{prefix}.auto"], capture_output=True,
                             text=True).stdout
    for line in listing.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and any(k in parts[0] for k in ("openblas", "gfortran",
                                                            "quadmath")):
            shutil.copy(parts[1].split()[0], libraries)


def run_binary(binary, runs):
    # Random weights and inputs: timings do not depend on the values, and the
    # prepared folder stays small enough to carry to a GPU machine.
    command = [binary, "--random-weights", "1", "--random-inputs", "2",
               "--repeat", str(runs), "--device-backend", "auto",
               "--profile-json", f"{binary}.profile.json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-500:]}
    with open(f"{binary}.profile.json") as f:
        profile = json.load(f)
    copies = profile["copies"]
    return {"us": profile["total_us"] / profile["runs"],
            "h2d_bytes": copies["h2d_bytes"], "d2h_bytes": copies["d2h_bytes"],
            "copy_us": copies["total_us"], "backend_note": done.stderr.strip()}


def cuda_time(function, runs):
    for _ in range(2):
        function()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(runs):
        function()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / runs * 1e6


def offloaded(model):
    """accelerate's cpu_offload, by hand: parameters stay on the host; each
    leaf module's are copied to the GPU before it runs, dropped after."""
    for module in model.modules():
        if next(module.children(), None) is not None:
            continue
        host = {name: p.data for name, p in module.named_parameters(recurse=False)}

        def before(module, inputs, host=host):
            for name, data in host.items():
                getattr(module, name).data = data.to("cuda", non_blocking=True)

        def after(module, inputs, output, host=host):
            for name, data in host.items():
                getattr(module, name).data = data
        module.register_forward_pre_hook(before)
        module.register_forward_hook(after)
    for name, buffer in model.named_buffers():
        buffer.data = buffer.data.to("cuda")
    return model


def torch_rows(name, runs):
    if not torch.cuda.is_available():
        return {"eager_us": None, "offload_us": None}
    model, args = build(name)
    rows = {}
    with torch.inference_mode():
        gpu_args = [a.cuda() for a in args]
        try:
            eager = model.cuda()
            rows["eager_us"] = cuda_time(lambda: eager(*gpu_args), runs)
        except torch.cuda.OutOfMemoryError:
            rows["eager_us"] = "OOM"
        model, _ = build(name)
        for p in model.parameters():
            p.data = p.data.pin_memory()
        offload = offloaded(model)
        torch.cuda.empty_cache()
        rows["offload_us"] = cuda_time(lambda: offload(*gpu_args), runs)
    return rows


def pinned_bandwidth():
    if not torch.cuda.is_available():
        return None
    host = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
    seconds = cuda_time(lambda: host.to("cuda", non_blocking=True), 10) / 1e6
    return host.numel() / seconds / 1e9


def run(folder, out):
    os.makedirs(out, exist_ok=True)
    results = {"gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available()
               else None, "models": {}}
    for name, (_, runs) in MODELS.items():
        prefix = os.path.join(folder, name)
        with open(f"{prefix}.budget") as f:
            row = {"budget_bytes": int(f.read())}
        row["all_gpu"] = run_binary(f"{prefix}.all-gpu", runs)
        row["auto"] = run_binary(f"{prefix}.auto", runs)
        row.update(torch_rows(name, runs))
        results["models"][name] = row
        print(name, json.dumps(row), flush=True)
    results["pinned_h2d_gbps_torch"] = pinned_bandwidth()
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    write_table(results, os.path.join(out, "results.md"))


def write_table(results, path):
    def cell(value):
        if value is None:
            return "n/a"
        if isinstance(value, dict):
            return "error" if "error" in value else f"{value['us']:.0f}"
        return value if isinstance(value, str) else f"{value:.0f}"
    lines = [f"GPU: {results['gpu'] or 'none (binaries on the sim backend)'}", "",
             "| model | budget MiB | tandem all-gpu us | tandem auto us | torch eager us "
             "| torch offload us |", "|---|---|---|---|---|---|"]
    for name, row in results["models"].items():
        lines.append(f"| {name} | {row['budget_bytes'] / 2**20:.0f} | "
                     f"{cell(row['all_gpu'])} | {cell(row['auto'])} | "
                     f"{cell(row['eager_us'])} | {cell(row['offload_us'])} |")
    bandwidth = results["pinned_h2d_gbps_torch"]
    lines += ["", f"PyTorch pinned non_blocking H2D: "
              f"{bandwidth:.1f} GB/s" if bandwidth else "PyTorch pinned H2D: n/a"]
    for name, row in results["models"].items():
        auto = row["auto"]
        if "copy_us" in auto and auto["copy_us"] > 0:
            moved = auto["h2d_bytes"] + auto["d2h_bytes"]
            lines.append(f"tandem copies in {name} (auto): {moved / 2**20:.1f} MiB in "
                         f"{auto['copy_us']:.0f} us = {moved / auto['copy_us'] / 1e3:.1f} GB/s")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: bench.py prepare DIR | run DIR OUT")
