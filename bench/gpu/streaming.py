"""The streaming part of the GPU benchmark: a GPT-style decoder whose weights
are twice and four times the GPU budget, run on CUDA, the case the
asynchronous schedule exists for.

The model is bench/schedule/bench.py's `decoder_mlir` (imported from that
file): a pre-norm decoder on f32, per layer layer norm, q/k/v/proj linears
around a single-head attention, a residual add, layer norm, an MLP d -> 4d
(gelu) -> d, a residual add; a final layer norm. 8 layers, d=1024, batch 4
x seq 512 = 2048 tokens: 48 MiB of weights a layer (384 MiB in all), and on
the h200 profile each layer's GPU compute is about 1.15 times the pinned copy
of its weights (the smallest batch where it is at least 1), so a schedule
that prefetches can hide every copy; the
prepare step prints that ratio from the placement report (it must be >= 1).
TANDEM_STREAMING_SHAPE=LAYERS,D,BATCH,SEQ changes the shape at prepare time.

prepare DIR  (the built tree; bench.py calls it) writes DIR/streaming:
  - decoder.mlir, and the activations it needs: the program-order peak of
    the all-GPU placement (tandem-opt --tandem-place="strategy=all-gpu
    report=..."'s peak_gpu_bytes) minus the weights;
  - three executables, tandem-compile --device-profile=h200
    --gpu-memory=B: `unlimited` (no --gpu-memory), `half` (B = 1/2 of the
    weights + the activations) and `quarter` (1/4 of the weights + the
    activations), placed and scheduled by the compiler (auto);
  - the compiled accelerate-style baseline of each budget, `baseline-half`
    and `baseline-quarter`: the same decoder written already placed
    (`tandem.device` on every op: every op on the GPU, the weights that fit
    budget - activations first in program order resident, every later one
    streamed; when the memory plan does not fit the budget, the room for
    resident weights is lowered by the largest weight until it does). It
    is run with --serial: one op at a time on one stream, each
    streamed weight copied (from page-locked memory) right before its op;
  - `check`: a 2-layer, d=128 decoder written placed the same way (every op
    on the GPU, half its weights streamed), run on real weights against the
    PyTorch module below;
  - manifest.json: the shape, the bytes, the budgets and what each report
    predicts (the reports themselves are not kept).
  The executables go into bench.py's xz archive with the others.

run DIR OUT  (the GPU machine; bench.py calls it after the models part):
  each executable runs with --device-backend cuda --random-weights 1
  --random-inputs 1. A run's time is wall clock as the executable measures
  it (--timing: each run waited for to its end): the median of runs 2 to N
  (the first uploads the weights, makes the libraries' handles and captures
  the CUDA graph), the best of TANDEM_STREAMING_TRIES (2) processes of
  each; N is TANDEM_STREAMING_REPEAT (20). Modes: default (the schedule's streams,
  events and CUDA graphs), --no-cuda-graph, --serial (one op at a time on
  one stream: what synchronous streaming gives); the unlimited executable;
  the compiled baseline with --serial. Then one --profile-json run per
  executable (graphs off there: its total_us / runs is shown, not used for
  the ratios): H2D bytes / the time the h2d queue was busy
  (copies.h2d_bytes / schedule.queue_busy_us.h2d) is the copy bandwidth.
  PyTorch on the same GPU: the same decoder as an nn.Module (state_dict
  names = the MLIR's weight names), fully resident; accelerate-style offload
  at each budget (leaf modules resident in program order while their
  weights fit budget - activations; every later one's weights stay on the
  host in pageable memory, are copied to the GPU synchronously (.to("cuda"))
  by a forward pre-hook and dropped by a forward hook, as accelerate's
  cpu_offload hooks do); pinned non_blocking H2D bandwidth, of one 256 MiB
  tensor and of the very tensors the budget's executable streams. Ratios:
  async / unlimited (target <= 1.25), torch offload / async (>= 1.5x at
  1/2, >= 2x at 1/4), compiled baseline / async, serial / async, no-graph /
  graph; tandem copy bandwidth / torch pinned (target >= 90%). The check
  executable runs on the module's weights (a safetensors file) and input:
  its result, and that of the PyTorch offload path above on the same
  weights, against the module's in f64 on the CPU (tolerance 1e-3,
  relative to the element or the mean magnitude). Writes the "streaming"
  key of OUT/results.json and the section of OUT/results.md (before the
  kernel microbenchmarks' section).

Without a GPU the executables run with --device-backend auto (the sim
backend, a note says so; the timings mean nothing), N = 2 and one try at
full size, the PyTorch CUDA rows say n/a; the check runs against PyTorch on
the CPU all the same. TANDEM_GPU_BENCH_SMOKE=1 at prepare time makes the
decoder 2 layers, d=128, 2 x 64 tokens (the manifest records it): there
the compiler places nearly everything on the CPU (its ops are too small for
the GPU), so only the baselines and the check stream; the smoke test checks
the script, the tables and the keys, not the figures.
"""
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402
SMOKE = bool(os.environ.get("TANDEM_GPU_BENCH_SMOKE"))
WHERE = "streaming"
SECTION = "## Streaming: a decoder whose weights do not fit"
PROFILE = "h200"
# layers, d, batch, seq: batch 4 is the smallest at which every layer's GPU
# compute on the h200 profile covers its weights' pinned copy (1.15x), the
# case the schedule is for (as in bench/schedule).
SHAPE = (8, 1024, 4, 512)
SMOKE_SHAPE = (2, 128, 2, 64)
CHECK_SHAPE = (2, 128, 2, 64)
REPEAT = int(os.environ.get("TANDEM_STREAMING_REPEAT", "20"))
TRIES = int(os.environ.get("TANDEM_STREAMING_TRIES", "2"))
BUDGETS = [("unlimited", "unlimited", None), ("1/2", "half", 0.5),
           ("1/4", "quarter", 0.25)]
TARGET_UNLIMITED = 1.25                       # async / unlimited, at most
TARGET_ACCELERATE = {"1/2": 1.5, "1/4": 2.0}  # torch offload / async, at least
TARGET_BANDWIDTH = 0.90                       # tandem H2D / torch pinned
CHECK_TOL = 1e-3
MIB = 1 << 20


def schedule_bench():
    """bench/schedule/bench.py as a module (its decoder_mlir, per_layer and
    report readers; it needs only the standard library)."""
    path = os.path.join(ROOT, "bench", "schedule", "bench.py")
    spec = importlib.util.spec_from_file_location("tandem_schedule_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shape():
    text = os.environ.get("TANDEM_STREAMING_SHAPE")
    if text:
        values = tuple(int(v) for v in text.split(","))
        if len(values) != 4 or min(values) < 1:
            sys.exit(f"TANDEM_STREAMING_SHAPE={text}: expected LAYERS,D,BATCH,SEQ")
        return values
    return SMOKE_SHAPE if SMOKE else SHAPE


# ---------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------

_OP = re.compile(r'^(\s*%\S+ = "tandem\.(\w+)"\([^)]*\))(?: \{(.*?)\})?( : .*)$')


def placed_mlir(text, resident):
    """The decoder written placed: `tandem.device` on every op, the GPU for
    all but the weights not in `resident` (names), which stay on the CPU
    and are streamed to their GPU readers."""
    lines = []
    for line in text.splitlines():
        match = _OP.match(line)
        if match:
            head, name, attrs, tail = match.groups()
            device = "gpu"
            if name == "weight":
                weight = re.search(r'name = "([^"]+)"', attrs).group(1)
                device = "gpu" if weight in resident else "cpu"
            attrs = (attrs + ", " if attrs else "") + \
                f"tandem.device = #tandem.device<{device}>"
            line = f"{head} {{{attrs}}}{tail}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def weights_in_order(report):
    """[(name, bytes)] of the weights, in program order."""
    ops = {op["id"]: op for op in report["ops"]}
    found = [(v["producer"], ops[v["producer"]]["loc"], v["bytes"])
             for v in report["values"] if v["weight"] and v["producer"] >= 0]
    return [(loc, size) for _, loc, size in sorted(found)]


def first_fit(weights, capacity):
    """The weights resident in program order while they fit `capacity`;
    from the first that does not, none."""
    resident, used = [], 0
    for name, size in weights:
        if used + size > capacity:
            break
        resident.append(name)
        used += size
    return resident, used


def summary(sb, report):
    streamed = sb.streamed_weights(report)
    window = report.get("schedule_window")
    return {"strategy": report.get("strategy"),
            "gpu_arena_bytes": report["gpu_arena_bytes"],
            "predicted_makespan_us": report["predicted_us"]["makespan"],
            "predicted_serial_us": report["predicted_us"]["serial"],
            "predicted_queue_busy_us": report["predicted_us"]["queue_busy"],
            "schedule_window": window,
            "resident_weight_bytes": sb.resident_weight_bytes(report),
            "streamed_weights": len(streamed),
            "streamed_weight_bytes": sum(v["bytes"] for v in streamed),
            "streamed_sizes": [v["bytes"] for v in streamed],
            "cpu_ops": len(sb.compute_on_cpu(report))}


def compile_exe(compiler, mlir, exe, budget, report):
    command = [compiler, mlir, f"--device-profile={PROFILE}", "-o", exe,
               f"--report={report}"]
    if budget is not None:
        command.append(f"--gpu-memory={int(budget)}")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not os.access(exe, os.X_OK):
        return None, (done.stderr.strip() or f"exit status {done.returncode}")[-800:]
    with open(report) as f:
        data = json.load(f)
    os.remove(report)
    return data, None


def prepare(folder):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from tandem.compiled import find_compiler
    sb = schedule_bench()
    compiler = find_compiler()
    opt = os.path.join(os.path.dirname(compiler), "tandem-opt")
    where = os.path.join(folder, WHERE)
    os.makedirs(where, exist_ok=True)
    started = time.perf_counter()
    layers, d, batch, seq = shape()
    mlir = os.path.join(where, "decoder.mlir")
    with open(mlir, "w") as f:
        f.write(sb.decoder_mlir(layers, d, batch, seq))
    # The activations: everything on the GPU, one op at a time.
    report = os.path.join(where, "all-gpu.json")
    subprocess.run([opt, mlir, f"--tandem-place=device-profile={PROFILE} "
                    f"strategy=all-gpu report={report}", "-o", os.devnull],
                   check=True, capture_output=True, text=True)
    with open(report) as f:
        placed = json.load(f)
    os.remove(report)
    peak = int(placed["peak_gpu_bytes"])
    weights = weights_in_order(placed)
    weight_bytes = sum(size for _, size in weights)
    manifest = {"smoke": SMOKE, "profile": PROFILE,
                "shape": {"layers": layers, "d": d, "batch": batch, "seq": seq,
                          "tokens": batch * seq, "dtype": "f32"},
                "all_gpu_peak_bytes": peak, "weight_bytes": weight_bytes,
                "activation_bytes": peak - weight_bytes, "budgets": [],
                "check": None}
    for label, name, frac in BUDGETS:
        entry = {"label": label, "binary": name, "fraction": frac}
        budget = None
        if frac is not None:
            budget = int(frac * manifest["weight_bytes"] + manifest["activation_bytes"])
        entry["budget_bytes"] = budget
        rep, error = compile_exe(compiler, mlir, os.path.join(where, name), budget,
                                 os.path.join(where, f"{name}.json"))
        if error:
            entry["error"] = error
            print(f"streaming {label}: tandem-compile FAILED: {error}", flush=True)
            manifest["budgets"].append(entry)
            continue
        entry["tandem"] = summary(sb, rep)
        if frac is None:
            compute, copy, wbytes = sb.per_layer(rep, layers)
            manifest["per_layer"] = {
                "gpu_compute_us": compute, "pinned_copy_us": copy,
                "weight_bytes": wbytes,
                "min_compute_over_copy": min(c / p for c, p in zip(compute, copy))}
        else:
            entry["baseline"] = compile_baseline(compiler, where, mlir, name,
                                                 budget, manifest, weights, sb)
        manifest["budgets"].append(entry)
    manifest["check"] = compile_check(compiler, opt, where, sb)
    with open(os.path.join(where, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    per = manifest.get("per_layer")
    ratio = per["min_compute_over_copy"] if per else float("nan")
    print(f"prepared the streaming decoder ({layers} layers, d={d}, {batch}x{seq} "
          f"tokens{', smoke sizes' if SMOKE else ''}): weights "
          f"{manifest.get('weight_bytes', 0) / MIB:.1f} MiB, activations "
          f"{manifest.get('activation_bytes', 0) / MIB:.1f} MiB; per layer GPU "
          f"compute / pinned copy of its weights {ratio:.2f} on the {PROFILE} "
          f"profile{'' if ratio >= 1 or SMOKE else ' (UNDER 1: copies cannot hide)'}; "
          f"in {time.perf_counter() - started:.1f} s", flush=True)


def compile_baseline(compiler, where, mlir, name, budget, manifest, weights, sb):
    """The accelerate-style placement of `budget`, compiled: first fit of
    budget - activations, one weight fewer until the memory plan fits."""
    with open(mlir) as f:
        text = f.read()
    capacity = budget - manifest["activation_bytes"]
    largest = max(size for _, size in weights)
    path = os.path.join(where, f"baseline-{name}.mlir")
    for _ in range(32):
        resident, used = first_fit(weights, capacity)
        with open(path, "w") as f:
            f.write(placed_mlir(text, set(resident)))
        rep, error = compile_exe(compiler, path, os.path.join(where, f"baseline-{name}"),
                                 budget, os.path.join(where, f"baseline-{name}.json"))
        if rep is not None or not resident or "budget" not in error:
            break
        capacity -= largest  # the streamed weights' room did not fit
    os.remove(path)
    if rep is None:
        print(f"streaming baseline {name}: tandem-compile FAILED: {error}", flush=True)
        return {"binary": f"baseline-{name}", "error": error}
    return {"binary": f"baseline-{name}", "resident_capacity_bytes": capacity,
            "first_fit_capacity_bytes": budget - manifest["activation_bytes"],
            "resident": resident, "resident_bytes": used, **summary(sb, rep)}


def compile_check(compiler, opt, where, sb):
    """A small decoder, every op on the GPU and half its weights streamed,
    for the run step to compare with the PyTorch module on real weights."""
    layers, d, batch, seq = CHECK_SHAPE
    text = sb.decoder_mlir(layers, d, batch, seq)
    path = os.path.join(where, "check.mlir")
    with open(path, "w") as f:
        f.write(text)
    report = os.path.join(where, "check-place.json")
    subprocess.run([opt, path, f"--tandem-place=device-profile={PROFILE} "
                    f"strategy=all-gpu report={report}", "-o", os.devnull],
                   check=True, capture_output=True, text=True)
    with open(report) as f:
        weights = weights_in_order(json.load(f))
    os.remove(report)
    resident, _ = first_fit(weights, sum(s for _, s in weights) // 2)
    with open(path, "w") as f:
        f.write(placed_mlir(text, set(resident)))
    rep, error = compile_exe(compiler, path, os.path.join(where, "check"), None,
                             os.path.join(where, "check.json"))
    os.remove(path)
    entry = {"binary": "check", "shape": dict(zip(("layers", "d", "batch", "seq"),
                                                   CHECK_SHAPE))}
    if error:
        print(f"streaming check: tandem-compile FAILED: {error}", flush=True)
        return {**entry, "error": error}
    return {**entry, **summary(sb, rep)}


# ---------------------------------------------------------------------------
# run: PyTorch
# ---------------------------------------------------------------------------

def torch_decoder(torch, layers, d, batch, seq):
    """The decoder of decoder_mlir as an nn.Module: its state_dict names are
    the MLIR's weight names, its modules in program order."""
    nn, F = torch.nn, torch.nn.functional
    scale = 1.0 / math.sqrt(d)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(d)
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.proj = nn.Linear(d, d)
            self.norm2 = nn.LayerNorm(d)
            self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            h = self.norm1(x)
            q = self.q(h).reshape(batch, seq, d)
            k = self.k(h).reshape(batch, seq, d)
            v = self.v(h).reshape(batch, seq, d)
            p = torch.softmax(torch.matmul(q, k.transpose(1, 2)) * scale, dim=-1)
            x = x + self.proj(torch.matmul(p, v).reshape(batch * seq, d))
            return x + self.down(F.gelu(self.up(self.norm2(x))))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.norm = nn.LayerNorm(d)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.norm(x)

    return Decoder()


def offload(torch, model, capacity, device="cuda"):
    """accelerate-style offload: leaf modules resident on the GPU (`device`)
    in program order while their weights fit `capacity`; every later one's
    stay on the host (pageable), copied synchronously before its forward,
    dropped after. Returns the resident bytes."""
    used, full = 0, False
    for module in model.modules():
        params = list(module.named_parameters(recurse=False))
        if not params:
            continue
        size = sum(p.numel() * p.element_size() for _, p in params)
        if not full and used + size <= capacity:
            module.to(device)
            used += size
            continue
        full = True
        host = {name: p.data for name, p in params}

        def before(module, inputs, host=host):
            for name, data in host.items():
                getattr(module, name).data = data.to(device, copy=True)

        def after(module, inputs, output, host=host):
            for name, data in host.items():
                getattr(module, name).data = data
        module.register_forward_pre_hook(before)
        module.register_forward_hook(after)
    return used


def torch_rows(torch, manifest, runs, tries):
    """PyTorch resident, accelerate-style offload per budget, and pinned H2D
    bandwidth; None where there is no GPU."""
    rows = {"resident_us": None, "offload": {}, "pinned_h2d_gbps": None,
            "pinned_same_tensors_gbps": {}}
    if not torch.cuda.is_available():
        return rows
    s = manifest["shape"]
    torch.backends.cuda.matmul.allow_tf32 = False  # Tandem runs f32 strictly
    torch.manual_seed(0)
    with torch.inference_mode():
        x = torch.randn(s["tokens"], s["d"], device="cuda")
        model = torch_decoder(torch, s["layers"], s["d"], s["batch"], s["seq"]).eval()
        model.to("cuda")
        rows["resident_us"] = kernels.cuda_time(torch, lambda: model(x), runs, tries)
        del model
        torch.cuda.empty_cache()
        for entry in manifest["budgets"]:
            if entry["fraction"] is None:
                continue
            capacity = entry["budget_bytes"] - manifest["activation_bytes"]
            model = torch_decoder(torch, s["layers"], s["d"], s["batch"], s["seq"]).eval()
            resident = offload(torch, model, capacity)
            torch.cuda.reset_peak_memory_stats()
            us = kernels.cuda_time(torch, lambda: model(x), runs, tries)
            rows["offload"][entry["label"]] = {
                "us": us, "resident_bytes": resident,
                "peak_gpu_bytes": torch.cuda.max_memory_allocated()}
            del model
            torch.cuda.empty_cache()
        host = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
        device = torch.empty_like(host, device="cuda")
        us = kernels.cuda_time(torch, lambda: device.copy_(host, non_blocking=True), 10, tries)
        rows["pinned_h2d_gbps"] = host.numel() / us / 1e3
        del host, device
        for entry in manifest["budgets"]:
            sizes = entry.get("tandem", {}).get("streamed_sizes")
            if not sizes:
                continue
            hosts = [torch.empty(n, dtype=torch.uint8).pin_memory() for n in sizes]
            devices = [torch.empty_like(h, device="cuda") for h in hosts]

            def copies():
                for dev, h in zip(devices, hosts):
                    dev.copy_(h, non_blocking=True)
            us = kernels.cuda_time(torch, copies, 10, tries)
            rows["pinned_same_tensors_gbps"][entry["label"]] = sum(sizes) / us / 1e3
            del hosts, devices
        torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------------------
# run: the executables
# ---------------------------------------------------------------------------

def wall(command, env):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip() or f"exit status {done.returncode}")[-500:])
    return seconds, done.stderr.strip(), done.stdout


def per_run_us(binary, backend, flags, runs, tries, env):
    """Wall clock per run, measured by the executable itself (--timing:
    each run to its end, the first one left out: it uploads the weights,
    makes the libraries' handles and captures the CUDA graph): the median
    of the later runs, the best of `tries` processes."""
    command = [binary, "--device-backend", backend, "--random-weights", "1",
               "--random-inputs", "1", "--timing", "--repeat", str(runs)] + flags
    medians, minima, notes = [], [], set()
    try:
        for _ in range(tries):
            _, note, stdout = wall(command, env)
            times = kernels.run_times(stdout)
            if not times:
                return {"error": f"no timing line in the output: {stdout[-300:]}"}
            medians.append(times[0])
            minima.append(times[1])
            if note:
                notes.add(note[-300:])
    except RuntimeError as error:
        return {"error": str(error)}
    return {"us": min(medians), "min_us": min(minima), "notes": sorted(notes)}


def profiled(binary, backend, runs, env, scratch):
    path = os.path.join(scratch, "profile.json")
    try:
        wall([binary, "--device-backend", backend, "--random-weights", "1",
              "--random-inputs", "1", "--repeat", str(runs), "--profile-json", path],
             env)
        with open(path) as f:
            profile = json.load(f)
    except (RuntimeError, OSError, ValueError) as error:
        return {"error": str(error)}
    copies, sched = profile["copies"], profile["schedule"]
    busy = sched["queue_busy_us"]
    row = {"us": profile["total_us"] / profile["runs"],
           "h2d_bytes": copies["h2d_bytes"] / profile["runs"],
           "d2h_bytes": copies["d2h_bytes"] / profile["runs"],
           "h2d_busy_us": busy["h2d"] / profile["runs"],
           "gpu_busy_us": busy["gpu"] / profile["runs"],
           "overlap_us": sched["overlap_us"] / profile["runs"],
           "concurrent": sched["concurrent"],
           "gpu_live_peak_bytes": sched.get("gpu_live_peak_bytes")}
    row["h2d_gbps"] = (row["h2d_bytes"] / row["h2d_busy_us"] / 1e3
                       if row["h2d_busy_us"] > 0 else None)
    return row


def run_check(torch, folder, entry, backend, env, scratch):
    """The check executable on real weights against the PyTorch module (f64,
    CPU)."""
    import numpy as np
    spec = importlib.util.spec_from_file_location(
        "tandem_weights", os.path.join(ROOT, "python", "tandem", "weights.py"))
    weights = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(weights)
    sh = entry["shape"]
    torch.manual_seed(1)
    model = torch_decoder(torch, sh["layers"], sh["d"], sh["batch"], sh["seq"]).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():  # layer norms' too, not 1 and 0
            p.copy_(torch.randn_like(p) * (0.1 if p.dim() == 2 else 0.5)
                    + (1.0 if name.endswith("norm1.weight") or
                       name.endswith("norm2.weight") else 0.0))
    x = torch.randn(sh["batch"] * sh["seq"], sh["d"])
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    st = os.path.join(scratch, "check.safetensors")
    weights.write_safetensors(st, tensors)
    np.save(os.path.join(scratch, "x.npy"), x.numpy())
    outputs = os.path.join(scratch, "check-out")
    try:
        _, note, _ = wall([os.path.join(folder, WHERE, entry["binary"]), "--device-backend",
                        backend, "--weights", st, "--input",
                        os.path.join(scratch, "x.npy"), "--output-dir", outputs,
                        "--repeat", "2"], env)
    except RuntimeError as error:
        return {"error": str(error)}
    actual = torch.from_numpy(np.load(os.path.join(outputs, "result0.npy"))).double()
    # The offload path the timings use, on the same weights (on the GPU when
    # there is one): the hooks must move every weight and give the same
    # result.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    offloaded = torch_decoder(torch, sh["layers"], sh["d"], sh["batch"], sh["seq"]).eval()
    offloaded.load_state_dict(tensors)
    offload(torch, offloaded, sum(t.numel() * 4 for t in tensors.values()) // 2, device)
    with torch.inference_mode():
        streamed = offloaded(x.to(device)).double().cpu()
    with torch.no_grad():
        expected = model.double()(x.double())
    scale = expected.abs().mean()

    def err(got):
        value = ((got - expected).abs() / (expected.abs() + scale)).max().item()
        return value if math.isfinite(value) else float("inf")
    error, offload_error = err(actual), err(streamed)
    ok = error <= CHECK_TOL and offload_error <= CHECK_TOL
    return {"max_rel_err": error, "offload_max_rel_err": offload_error,
            "offload_device": device, "tol": CHECK_TOL,
            "check": "ok" if ok else "FAILED", "note": note[-300:]}


def run(folder, out):
    import torch
    import kernels
    manifest_path = os.path.join(folder, WHERE, "manifest.json")
    if not os.path.exists(manifest_path):
        section = {"skipped": f"streaming part skipped: {manifest_path} is missing "
                              "(run `bench.py prepare` first)"}
        print(section["skipped"], flush=True)
        write(out, section)
        return section
    with open(manifest_path) as f:
        manifest = json.load(f)
    gpu = torch.cuda.is_available()
    backend = "cuda" if gpu else "auto"
    heavy_sim = not gpu and not manifest["smoke"]
    runs = 2 if heavy_sim else max(2, REPEAT)
    tries = 1 if heavy_sim else max(1, TRIES)
    env = kernels.binary_env(folder, torch)
    started = time.perf_counter()
    section = {"backend": "cuda" if gpu else "sim",
               "gpu": torch.cuda.get_device_name(0) if gpu else None,
               "repeat": runs, "tries": tries, "smoke": manifest["smoke"],
               "shape": manifest["shape"], "weight_bytes": manifest.get("weight_bytes"),
               "activation_bytes": manifest.get("activation_bytes"),
               "per_layer": manifest.get("per_layer"), "profile": manifest["profile"],
               "targets": {"async_over_unlimited_max": TARGET_UNLIMITED,
                           "offload_over_async_min": TARGET_ACCELERATE,
                           "h2d_over_torch_pinned_min": TARGET_BANDWIDTH},
               "budgets": []}
    scratch = tempfile.mkdtemp(prefix="tandem-streaming-")  # never under OUT
    try:
        for entry in manifest["budgets"]:
            row = {k: entry.get(k) for k in ("label", "fraction", "budget_bytes")}
            row["predicted"] = entry.get("tandem")
            if "error" in entry:
                row["error"] = "compile: " + entry["error"]
                section["budgets"].append(row)
                continue
            binary = os.path.join(folder, WHERE, entry["binary"])
            row["tandem"] = {
                "default": per_run_us(binary, backend, [], runs, tries, env),
                "no_graph": per_run_us(binary, backend, ["--no-cuda-graph"], runs,
                                       tries, env),
                "serial": per_run_us(binary, backend, ["--serial"], runs, tries, env),
                "profile": profiled(binary, backend, runs, env, scratch)}
            base = entry.get("baseline")
            if base is not None:
                row["baseline"] = {k: base.get(k) for k in
                                   ("resident_bytes", "streamed_weight_bytes",
                                    "predicted_serial_us", "predicted_makespan_us")}
                if "error" in base:
                    row["baseline"]["serial"] = {"error": "compile: " + base["error"]}
                else:
                    row["baseline"]["serial"] = per_run_us(
                        os.path.join(folder, WHERE, base["binary"]), backend,
                        ["--serial"], runs, tries, env)
            section["budgets"].append(row)
            print(f"streaming {row['label']}: " + json.dumps(
                {k: v.get("us") if isinstance(v, dict) else v
                 for k, v in row["tandem"].items()}), flush=True)
        try:
            rows = torch_rows(torch, manifest, runs, tries)
        except Exception as error:  # the Tandem rows are kept all the same
            rows = {"error": f"{type(error).__name__}: {error}"[-500:]}
            print(f"streaming: the PyTorch rows FAILED: {rows['error']}", flush=True)
        section["torch"] = rows
        check = manifest.get("check")
        if check is not None and "error" not in check:
            try:
                section["check"] = run_check(torch, folder, check, backend, env, scratch)
            except Exception as error:
                section["check"] = {"error": f"{type(error).__name__}: {error}"[-500:]}
        elif check is not None:
            section["check"] = {"error": "compile: " + check["error"]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ratios(section)
    section["seconds"] = time.perf_counter() - started
    write(out, section)
    print("\n".join(table(section)), flush=True)
    return section


def us_of(value):
    return value.get("us") if isinstance(value, dict) else None


def ratio(a, b):
    return a / b if a is not None and b else None


def ratios(section):
    """Each budget's ratios and whether its targets are met (None: not
    measurable here)."""
    unlimited = next((us_of(r["tandem"]["default"]) for r in section["budgets"]
                      if r["fraction"] is None and "tandem" in r), None)
    measured = section.get("torch", {})
    gpu = section["backend"] == "cuda"
    for row in section["budgets"]:
        if "tandem" not in row:
            continue
        t = row["tandem"]
        graph = us_of(t["default"])
        offload = us_of(measured.get("offload", {}).get(row["label"]))
        r = {"async_over_unlimited": ratio(graph, unlimited),
             "offload_over_async": ratio(offload, graph),
             "baseline_over_async": ratio(us_of(row.get("baseline", {}).get("serial")),
                                          graph),
             "serial_over_async": ratio(us_of(t["serial"]), graph),
             "no_graph_over_graph": ratio(us_of(t["no_graph"]), graph),
             "async_over_torch_resident": ratio(graph, measured.get("resident_us"))}
        profile = t["profile"]
        bw = profile.get("h2d_gbps") if isinstance(profile, dict) else None
        r["h2d_over_torch_pinned"] = ratio(bw, measured.get("pinned_h2d_gbps"))
        r["h2d_over_torch_same_tensors"] = ratio(
            bw, measured.get("pinned_same_tensors_gbps", {}).get(row["label"]))
        met = {}
        if row["fraction"] is not None:
            met["async_over_unlimited"] = (None if not gpu or r["async_over_unlimited"]
                                           is None else
                                           r["async_over_unlimited"] <= TARGET_UNLIMITED)
            want = TARGET_ACCELERATE.get(row["label"])
            met["offload_over_async"] = (None if not gpu or want is None or
                                         r["offload_over_async"] is None else
                                         r["offload_over_async"] >= want)
            met["h2d_over_torch_pinned"] = (None if not gpu or r["h2d_over_torch_pinned"]
                                            is None else
                                            r["h2d_over_torch_pinned"] >= TARGET_BANDWIDTH)
        row["ratios"], row["targets_met"] = r, met


# ---------------------------------------------------------------------------
# the section
# ---------------------------------------------------------------------------

def fmt(value, spec=".0f", none="n/a"):
    if value is None:
        return none
    return format(value, spec)


def cell(value):
    if isinstance(value, dict) and "error" in value:
        return "**FAILED**"
    return fmt(us_of(value))


def verdict(flag, target):
    return {True: f"{target} met", False: f"{target} MISSED"}.get(flag, f"{target} n/a")


def table(section):
    lines = [SECTION, ""]
    if "skipped" in section:
        return lines + [section["skipped"]]
    s, per = section["shape"], section.get("per_layer") or {}
    wb, ab = section["weight_bytes"] or 0, section["activation_bytes"] or 0
    lines += [
        f"Decoder ({'smoke sizes' if section['smoke'] else 'bench/schedule/bench.py decoder_mlir'}): "
        f"{s['layers']} layers, d={s['d']}, {s['batch']} x {s['seq']} = {s['tokens']} tokens, "
        f"f32; weights {wb / MIB:.1f} MiB, activations {ab / MIB:.1f} MiB (the all-GPU "
        f"program-order peak minus the weights); per layer on the {section['profile']} "
        f"profile: GPU compute {fmt((per.get('gpu_compute_us') or [None])[0])} us, "
        f"pinned copy of its weights {fmt((per.get('pinned_copy_us') or [None])[0])} us "
        f"(compute / copy, smallest layer: {fmt(per.get('min_compute_over_copy'), '.2f')}).",
        f"Backend: {section['backend']}"
        + (" (no GPU: the executables ran on the sim backend, the timings mean nothing)"
           if section["backend"] != "cuda" else f" ({section['gpu']})")
        + f". A run's time: wall clock as the executable measures it (--timing), the "
        f"median of runs 2 to {section['repeat']}, best of {section['tries']} "
        f"process{'es' if section['tries'] != 1 else ''} each. tandem: the default run (streams, events, CUDA graphs); "
        "no-graph: --no-cuda-graph; serial: --serial (one op at a time, one stream); "
        "baseline: the accelerate-style placement compiled (every op on the GPU, "
        "weights resident in program order while they fit budget - activations, the "
        "rest streamed), run --serial; torch offload: PyTorch with accelerate-style "
        "offload (pageable host weights copied synchronously before each leaf module, "
        "dropped after; resident first while they fit); profiled: --profile-json's "
        "total_us / runs (graphs off).", "",
        "| budget | budget MiB | resident MiB | streamed MiB | predicted us | tandem us "
        "| no-graph us | serial us | profiled us | baseline us | torch offload us "
        "| torch resident us |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    measured = section.get("torch", {})
    for row in section["budgets"]:
        p = row.get("predicted") or {}
        budget = "-" if row["budget_bytes"] is None else f"{row['budget_bytes'] / MIB:.1f}"
        head = (f"| {row['label']} | {budget} | "
                f"{fmt(p.get('resident_weight_bytes', 0) / MIB, '.1f')} | "
                f"{fmt(p.get('streamed_weight_bytes', 0) / MIB, '.1f')} | "
                f"{fmt(p.get('predicted_makespan_us'))} |")
        if "tandem" not in row:
            lines.append(head + f" **FAILED**: {row.get('error', '')[:300].replace('|', '/')}"
                         + " |" * 7)
            continue
        t = row["tandem"]
        base = row.get("baseline")
        offload = measured.get("offload", {}).get(row["label"])
        resident = measured.get("resident_us") if row["fraction"] is None else None
        lines.append(
            head + f" {cell(t['default'])} | {cell(t['no_graph'])} | {cell(t['serial'])} | "
            f"{cell(t['profile'])} | {'-' if base is None else cell(base['serial'])} | "
            f"{'-' if row['fraction'] is None else cell(offload)} | "
            f"{fmt(resident) if row['fraction'] is None else '-'} |")
    lines += ["", "| budget | tandem / unlimited | torch offload / tandem | baseline / tandem "
              "| serial / tandem | no-graph / graph | tandem / torch resident |",
              "|---|---|---|---|---|---|---|"]
    for row in section["budgets"]:
        if "ratios" not in row:
            continue
        r, met = row["ratios"], row["targets_met"]
        if row["fraction"] is None:
            first, second = "1", "-"
        else:
            first = (f"{fmt(r['async_over_unlimited'], '.3f')} "
                     f"({verdict(met.get('async_over_unlimited'), f'<={TARGET_UNLIMITED:g}')})")
            want = TARGET_ACCELERATE.get(row["label"])
            second = fmt(r["offload_over_async"], ".2f") + "x" * (
                r["offload_over_async"] is not None)
            if want is not None:
                second += f" ({verdict(met.get('offload_over_async'), f'>={want:g}x')})"
        lines.append(f"| {row['label']} | {first} | {second} | "
                     f"{fmt(r['baseline_over_async'], '.2f')} | "
                     f"{fmt(r['serial_over_async'], '.2f')} | "
                     f"{fmt(r['no_graph_over_graph'], '.2f')} | "
                     f"{fmt(r['async_over_torch_resident'], '.2f')} |")
    pinned = measured.get("pinned_h2d_gbps")
    lines += ["", "Copy bandwidth: tandem = the --profile-json run's copies.h2d_bytes / "
              "schedule.queue_busy_us.h2d (each copy timed with events on its stream); "
              f"torch pinned = PyTorch's non_blocking copy of one pinned 256 MiB tensor "
              f"({fmt(pinned, '.1f')} GB/s); same tensors = PyTorch copying, pinned and "
              "non_blocking, tensors of the sizes the budget's executable streams.", "",
              "| budget | H2D MiB per run | h2d busy us | tandem GB/s | / torch pinned "
              "| same tensors GB/s | / same tensors | GPU busy us | overlap us |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row in section["budgets"]:
        if "ratios" not in row:
            continue
        p, r = row["tandem"]["profile"], row["ratios"]
        if "error" in p:
            lines.append(f"| {row['label']} | **FAILED**: "
                         f"{p['error'][:300].replace('|', '/')} |" + " |" * 7)
            continue
        mark = ""
        if row["fraction"] is not None:
            mark = f" ({verdict(row['targets_met'].get('h2d_over_torch_pinned'), f'>={TARGET_BANDWIDTH:.0%}')})"
        same = measured.get("pinned_same_tensors_gbps", {}).get(row["label"])
        lines.append(
            f"| {row['label']} | {p['h2d_bytes'] / MIB:.1f} | {p['h2d_busy_us']:.0f} | "
            f"{fmt(p['h2d_gbps'], '.1f')} | {fmt(r['h2d_over_torch_pinned'], '.0%')}{mark} | "
            f"{fmt(same, '.1f')} | {fmt(r['h2d_over_torch_same_tensors'], '.0%')} | "
            f"{p['gpu_busy_us']:.0f} | {p['overlap_us']:.0f} |")
    if "error" in measured:
        lines += ["", f"PyTorch rows **FAILED**: {measured['error'][:300]}"]
    check = section.get("check")
    lines.append("")
    if check is None:
        lines.append("Check: not run.")
    elif "error" in check:
        lines.append(f"Check: **FAILED**: {check['error'][:300]}")
    else:
        lines.append(f"Check (a 2-layer d=128 decoder, every op on the GPU, half its weights "
                     f"streamed, on real weights, against the PyTorch module in f64 on the "
                     f"CPU): max rel err {check['max_rel_err']:.2e}, PyTorch's offload "
                     f"path on {check['offload_device']} {check['offload_max_rel_err']:.2e} "
                     f"(tol {check['tol']:g}): "
                     + ("ok" if check["check"] == "ok" else "**FAILED**"))
    notes = sorted({n for row in section["budgets"] for mode in row.get("tandem", {}).values()
                    if isinstance(mode, dict) for n in mode.get("notes", [])})
    for note in notes[:5]:
        lines.append(f"Binary note: {note.splitlines()[-1][:300]}")
    if "seconds" in section:
        lines.append(f"The streaming part took {section['seconds']:.0f} s.")
    return lines


def write(out, section):
    """Merges the section into OUT/results.json (the "streaming" key) and
    OUT/results.md: the section replaced where it is, else put before the
    kernel microbenchmarks' (kernels.py writes from its heading on), else at
    the end."""
    kernels.merge_results(out, "streaming", section, table(section), SECTION,
                          before=kernels.SECTION)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: streaming.py prepare DIR | run DIR OUT")
