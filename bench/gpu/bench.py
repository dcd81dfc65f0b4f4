"""The GPU benchmark (a program, not a test), in two steps so that the GPU
machine needs no LLVM:

  prepare DIR   (where the tree is built; needs torch): exports each model,
                compiles it twice with tandem-compile (all-gpu; auto under a
                budget of half what all-gpu needs) into DIR and copies the
                shared libraries the binaries need besides CUDA's (OpenBLAS
                and its Fortran runtime). Weights are not kept: the binaries
                run with --random-weights. It also compiles the streaming
                part (streaming.py, into DIR/streaming): bench/schedule's
                GPT-style decoder (8 layers, d=1024, 4 x 512 tokens, f32:
                384 MiB of weights; each layer's GPU compute about 1.15 times
                the pinned copy of its weights on the h200 profile) at
                unlimited memory and at budgets of 1/2 and 1/4 of its
                weights plus its activations, and at each budget an
                accelerate-style baseline written already placed (every op
                on the GPU, the weights that fit first in program order
                resident, the rest streamed); and the kernel
                microbenchmark's cases (kernels.py: one op each, all-gpu)
                into DIR/kernels. Each binary carries the whole runtime with
                its CUDA kernels (about 10 MB, nearly all of it the same in
                every binary), so the binaries and libraries go into one xz
                archive, DIR/binaries.tar.xz, whose window spans several
                binaries: DIR stays small enough to carry to a GPU machine
                (about 10 MB instead of about 430 MB).
  run DIR OUT   (on the GPU machine; needs torch with CUDA): runs both
                binaries (--device-backend cuda; timed by --timing, the
                median of the runs after the first; one --profile-json
                process more for the copies), PyTorch eager on CUDA (inputs
                already there, and with the inputs copied in and the result
                out, as the binaries do),
                PyTorch with accelerate-style offload (weights on the host,
                each module's moved to the GPU before it runs and dropped
                after) under the same budget, and measures host-to-device
                copy bandwidth: PyTorch's pinned non_blocking copy (what
                cudaMemcpyAsync from pinned memory gives) against the copies
                the Tandem binary made. Writes OUT/results.md and
                OUT/results.json. Then the streaming part (streaming.py):
                each decoder executable's wall-clock time per run ((process
                time of --repeat N - that of --repeat 1) / (N - 1), N = 20,
                best of 2) in its default mode (the schedule's streams,
                events and CUDA graphs), with --no-cuda-graph and with
                --serial (one op at a time: synchronous streaming), the
                unlimited one, the compiled baseline with --serial, and
                PyTorch's same decoder (an nn.Module) resident and with
                accelerate-style offload (pageable host weights copied
                synchronously before each leaf module beyond the resident
                ones, dropped after); the ratios async / unlimited (target
                <= 1.25), offload / async (>= 1.5x at 1/2, >= 2x at 1/4),
                baseline / async, serial / async, no-graph / graph; the copy
                bandwidth of a --profile-json run (copies.h2d_bytes /
                schedule.queue_busy_us.h2d) against PyTorch's pinned
                non_blocking copies in the same run (target >= 90%); and a
                small decoder's result on real weights against the PyTorch
                module's. Its section and the "streaming" key are added to
                OUT/results.md and OUT/results.json. Then the kernel
                microbenchmark (kernels.py): each CUDA kernel family's time,
                achieved bandwidth or FLOP/s against the H200's peaks and
                against PyTorch, and its result against PyTorch's; its table
                and numbers are added to OUT/results.md and
                OUT/results.json. It unpacks DIR/binaries.tar.xz first.

Without a GPU, `run` still runs (the binaries fall back to the sim backend,
the PyTorch CUDA rows say n/a; the streaming part runs its full-size
executables twice each instead of 20 times, or its small ones under
TANDEM_GPU_BENCH_SMOKE; the kernel cases are skipped with a message unless
TANDEM_KERNEL_BENCH_BACKEND=sim), so the script itself is exercised
anywhere. The "tests" part (cuda_tests.py, first) runs the CUDA tests'
scripts on the GPU machine with binaries compiled by `prepare`.
TANDEM_GPU_BENCH_PARTS=tests, =models, =streaming or =kernels (all four by
default; a comma-separated list) prepares and runs those parts only.
streaming.py's docstring says how its part measures and what it reads.
"""
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import time

import torch
from torch import nn

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Frontend"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_tests  # noqa: E402
import kernels  # noqa: E402
import streaming  # noqa: E402

PARTS = os.environ.get("TANDEM_GPU_BENCH_PARTS",
                       "tests,models,streaming,kernels").split(",")
ARCHIVE = "binaries.tar.xz"


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
    # The binaries run on a machine that has PyTorch but not necessarily
    # oneMKL (far too large to carry): every compile below links OpenBLAS,
    # whose library is carried with them.
    os.environ["TANDEM_BLAS"] = "openblas"
    if "tests" in PARTS:
        cuda_tests.prepare(folder)
    for name in MODELS if "models" in PARTS else ():
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
    if "streaming" in PARTS:
        streaming.prepare(folder)
    if "kernels" in PARTS:
        kernels.prepare(folder)
    libraries = os.path.join(folder, "lib")
    os.makedirs(libraries, exist_ok=True)
    binaries = executables(folder)
    listing = subprocess.run(["ldd", os.path.join(folder, binaries[0])],
                             capture_output=True, text=True).stdout if binaries else ""
    for line in listing.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and any(k in parts[0] for k in ("openblas", "gfortran",
                                                            "quadmath")):
            shutil.copy(parts[1].split()[0], libraries)
    pack(folder)


def executables(folder):
    """The compiled binaries under FOLDER, relative paths, sorted (those of
    one kind next to each other)."""
    found = []
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            if (os.access(path, os.X_OK) and not name.endswith((".json", ".mlir"))
                    and os.path.relpath(root, folder) != "lib"):
                found.append(os.path.relpath(path, folder))
    return sorted(found)


def pack(folder):
    """Moves the binaries and lib/ into FOLDER/binaries.tar.xz. The binaries
    differ only in their model (the runtime and its CUDA kernels, ~10 MB, are
    in each): LZMA2 with a 32 MiB window finds each binary's runtime in the
    one before it, so each after the first costs tens of kilobytes; preset 0
    keeps the step to seconds (OpenBLAS, 36 MB, is most of the work)."""
    started = time.perf_counter()
    members = executables(folder)
    libraries = os.path.join(folder, "lib")
    if os.path.isdir(libraries):
        members += [os.path.join("lib", name) for name in sorted(os.listdir(libraries))]
    raw_bytes = sum(os.path.getsize(os.path.join(folder, m)) for m in members)
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 0, "dict_size": 32 << 20}]
    archive = os.path.join(folder, ARCHIVE)
    with lzma.open(archive + ".tmp", "wb", format=lzma.FORMAT_XZ,
                   filters=filters) as raw:
        with tarfile.open(fileobj=raw, mode="w|", dereference=True) as tar:
            for member in members:
                tar.add(os.path.join(folder, member), arcname=member)
    os.replace(archive + ".tmp", archive)
    for member in members:
        os.remove(os.path.join(folder, member))
    if os.path.isdir(libraries) and not os.listdir(libraries):
        os.rmdir(libraries)
    stamp = os.path.join(folder, ".unpacked")
    if os.path.exists(stamp):
        os.remove(stamp)
    print(f"packed {len(members)} files ({raw_bytes / 2**20:.0f} MiB) into {ARCHIVE} "
          f"({os.path.getsize(archive) / 2**20:.1f} MiB) in "
          f"{time.perf_counter() - started:.1f} s", flush=True)


def unpack(folder):
    """Extracts FOLDER/binaries.tar.xz in place, once (a stamp records which
    archive was extracted)."""
    archive = os.path.join(folder, ARCHIVE)
    if not os.path.exists(archive):
        return
    stamp = os.path.join(folder, ".unpacked")
    key = f"{os.path.getsize(archive)} {os.path.getmtime(archive)}"
    if os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == key:
                return
    with tarfile.open(archive, "r:xz") as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.12, and 3.8-3.11 updates
            tar.extractall(folder, filter="data")
        else:
            tar.extractall(folder)
    with open(stamp, "w") as f:
        f.write(key)


def run_binary(binary, runs):
    """A run's wall clock as the binary measures it (--timing: the median of
    runs 2 to RUNS, each to its end, no per-op waits, so a CUDA graph
    replays), then one --profile-json process of two runs for the copies
    (bytes per run; bandwidth from the copies' own times)."""
    # Random weights and inputs: timings do not depend on the values, and the
    # prepared folder stays small enough to carry to a GPU machine.
    base = [binary, "--random-weights", "1", "--random-inputs", "2",
            "--device-backend", "auto"]
    timed = subprocess.run(base + ["--repeat", str(runs), "--timing"],
                           capture_output=True, text=True)
    if timed.returncode != 0:
        return {"error": timed.stderr.strip()[-500:]}
    times = kernels.run_times(timed.stdout)
    if not times:
        return {"error": f"no timing line: {timed.stdout[-300:]}"}
    done = subprocess.run(base + ["--repeat", "2", "--profile-json",
                                  f"{binary}.profile.json"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-500:]}
    with open(f"{binary}.profile.json") as f:
        profile = json.load(f)
    copies, runs_profiled = profile["copies"], profile["runs"]
    return {"us": times[0],
            "h2d_bytes": copies["h2d_bytes"] // runs_profiled,
            "d2h_bytes": copies["d2h_bytes"] // runs_profiled,
            "copy_us": copies["total_us"] / runs_profiled,
            "backend_note": timed.stderr.strip()}


def cuda_time(function, runs):
    return kernels.cuda_time(torch, function, runs)


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
        return {"eager_us": None, "eager_io_us": None, "offload_us": None}
    model, args = build(name)
    rows = {}
    with torch.inference_mode():
        gpu_args = [a.cuda() for a in args]
        try:
            eager = model.cuda()
            rows["eager_us"] = cuda_time(lambda: eager(*gpu_args), runs)
            # What the compiled binary does per run: inputs in from the host,
            # results back to it.
            rows["eager_io_us"] = cuda_time(
                lambda: eager(*[a.cuda() for a in args]).cpu(), runs)
        except torch.cuda.OutOfMemoryError:
            rows["eager_us"] = rows["eager_io_us"] = "OOM"
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
    unpack(folder)
    if "tests" in PARTS:
        # OUT/cuda-tests.txt and .json
        cuda_tests.run(folder, out, on_sim=not torch.cuda.is_available())
    if "models" in PARTS:
        run_models(folder, out)
    if "streaming" in PARTS:
        streaming.run(folder, out)  # adds to results.json and results.md
    if "kernels" in PARTS:
        kernels.run(folder, out)  # adds to results.json and results.md


def run_models(folder, out):
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
             "| torch eager + copies us | torch offload us |",
             "|---|---|---|---|---|---|---|"]
    for name, row in results["models"].items():
        lines.append(f"| {name} | {row['budget_bytes'] / 2**20:.0f} | "
                     f"{cell(row['all_gpu'])} | {cell(row['auto'])} | "
                     f"{cell(row['eager_us'])} | {cell(row.get('eager_io_us'))} | "
                     f"{cell(row['offload_us'])} |")
    bandwidth = results["pinned_h2d_gbps_torch"]
    lines += ["", f"PyTorch pinned non_blocking H2D: "
              f"{bandwidth:.1f} GB/s" if bandwidth else "PyTorch pinned H2D: n/a"]
    for name, row in results["models"].items():
        auto = row["auto"]
        if "copy_us" in auto and auto["copy_us"] > 0:
            moved = auto["h2d_bytes"] + auto["d2h_bytes"]
            lines.append(f"tandem copies in {name} (auto): {moved / 2**20:.1f} MiB per run in "
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
