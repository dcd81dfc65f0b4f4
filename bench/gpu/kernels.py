"""Per-kernel-family GPU microbenchmark: one op per model, on the GPU.

Each case is a single tandem op at a realistic size (each takes 50 us or
more on an H200), compiled with --strategy=all-gpu --device-profile=h200 so
that the op runs on the GPU. The run step, on the GPU machine:

  - writes the case's inputs as .npy files (NumPy, a fixed seed), runs the
    binary once on them with --repeat R --profile-json --output-dir on
    --device-backend cuda: the op's time is its profile entry (the runtime
    waits for each GPU op when profiling, so it is launch + kernel + sync,
    measured on the host); the first call (cuBLAS/cuDNN setup, module load)
    is left out by taking (total_us - max_us) / (calls - 1);
  - runs PyTorch on the same inputs on the same GPU: the same op, timed with
    CUDA events around each of R calls after warm-up (kernel time), and on
    the host around each call and a synchronize (what Tandem's figure is);
  - compares Tandem's result (the last run's, from --output-dir) with
    PyTorch's: max |t - r| / (|r| + mean |r|) over the elements (relative to
    the element, or to the tensor's typical magnitude where the element is
    near zero, so that a sum that cancels is not a false alarm); argmax
    counts the indices that differ; beyond the tolerance is FAILED;
  - reports achieved GB/s (bytes: the minimum an op must read and write) or
    TFLOP/s (GEMMs, convolutions) against the H200's peaks, and for
    elementwise, softmax and layer norm whether they reach 70% of the
    memory bandwidth.

f32 GEMMs and convolutions run strictly in f32 on both sides (PyTorch with
allow_tf32 off, cudnn.benchmark off; Tandem without --allow-tf32); f16/bf16
GEMMs accumulate in f32 on both sides (PyTorch's reduced-precision
reductions off).

Without a CUDA GPU visible to PyTorch the cases are skipped with a message,
unless TANDEM_KERNEL_BENCH_BACKEND=sim: then the binaries run on the sim
backend (the CPU kernels) against PyTorch on the CPU, which checks the
script, the parsing and the comparison, not the GPU (the timings mean
nothing there). TANDEM_GPU_BENCH_SMOKE=1 at prepare time makes tiny sizes
(the manifest records it; the run step follows the manifest).
TANDEM_KERNEL_BENCH_ONLY=SUBSTRING runs only the cases whose name has it.

Usage (bench.py calls prepare and run; by itself):
  kernels.py prepare DIR     compiles the cases into DIR/kernels
  kernels.py run DIR OUT     runs them; merges into OUT/results.json and
                             OUT/results.md (the "kernels" key and section)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SMOKE = bool(os.environ.get("TANDEM_GPU_BENCH_SMOKE"))
REPEAT = int(os.environ.get("TANDEM_KERNEL_BENCH_REPEAT", "20"))
SECTION = "## Kernel microbenchmarks"
TARGET_BANDWIDTH = 0.70  # of peak, for elementwise, softmax and layer norm
TARGET_FAMILIES = ("elementwise", "softmax", "layer_norm")

# The H200's peaks (dense, no sparsity), from NVIDIA's H200 SXM datasheet:
# HBM3e 4.8 TB/s, FP32 67 TFLOP/s (non-tensor), FP16/BF16 tensor cores
# 989 TFLOP/s. The repository's device profile (lib/Analysis/DeviceProfile.cpp,
# makeH200) carries the same datasheet figures; peaks() reads them from there
# and falls back on these where the file is absent or changed shape.
H200_PEAKS = {"bandwidth": 4.8e12, "f32": 67e12, "f16": 989e12, "bf16": 989e12,
              "source": "NVIDIA H200 SXM datasheet (built into kernels.py)"}


def peaks():
    path = os.path.join(ROOT, "lib", "Analysis", "DeviceProfile.cpp")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return dict(H200_PEAKS)
    match = re.search(r'processor\("NVIDIA H200[^"]*",\s*([\d.]+) \* kTera,\s*'
                      r'([\d.]+) \* kTera,\s*([\d.]+) \* kTera,\s*([\d.]+) \* kGiga',
                      text)
    if not match:
        return dict(H200_PEAKS)
    f32, f16, bf16, bandwidth = (float(g) for g in match.groups())
    return {"bandwidth": bandwidth * 1e9, "f32": f32 * 1e12, "f16": f16 * 1e12,
            "bf16": bf16 * 1e12,
            "source": "lib/Analysis/DeviceProfile.cpp (makeH200: the H200 SXM "
                      "datasheet's peaks, before its derating)"}


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

NP_DTYPES = {"f32": np.float32, "f16": np.float16}
SIZE = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8}


def ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Case:
    """One op on the GPU. `inputs`: [(shape, dtype)] of @main's arguments
    (f32 or f16: NumPy writes them); `body` computes %r from %a0, %a1, ...;
    `torch_fn(torch, F, *tensors)` is PyTorch's op, `torch_prep` turns the
    input tensors into its operands (not timed: a cast to bf16) and
    `torch_post` its result into what the binary returns."""

    def __init__(self, name, family, op, dtype, inputs, body, result, bytes_,
                 flops, bound, torch_fn, tol, torch_prep=None,
                 torch_post=None, exact=False):
        self.name, self.family, self.op, self.dtype = name, family, op, dtype
        self.inputs, self.body, self.result = inputs, body, result
        self.bytes, self.flops, self.bound = bytes_, flops, bound
        self.torch_fn, self.tol = torch_fn, tol
        self.target = family in TARGET_FAMILIES  # the 70% bandwidth goal
        self.torch_prep, self.torch_post, self.exact = torch_prep, torch_post, exact

    def mlir(self):
        args = ", ".join(f"%a{k}: {ty(s, d)}" for k, (s, d) in enumerate(self.inputs))
        return (f"func.func @main({args}) -> {self.result} {{\n{self.body}\n"
                f"  return %r : {self.result}\n}}\n")

    def shape_text(self):
        return ", ".join("x".join(str(d) for d in s) or "scalar" for s, _ in self.inputs)


def cases(smoke=SMOKE):
    """The cases, at full size or (smoke) tiny. Bytes are the minimum an op
    must move (each operand read once, the result written once); FLOPs count
    a multiply-add as 2."""
    n = 4096 if smoke else 64 << 20                       # 1-D elementwise/sum
    sq = 64 if smoke else 8192                            # square 2-D
    rows, cols = (64, 128) if smoke else (16384, 4096)    # softmax / layer norm
    g = 64 if smoke else 4096                             # GEMM M = N = K
    bmm = (4, 32) if smoke else (64, 512)                 # batch, M = N = K
    img = (2, 8, 14) if smoke else (64, 64, 56)           # N, C, H = W (3x3 conv)
    wide = (2, 16, 14) if smoke else (64, 256, 56)        # N, C, H = W (1x1, depthwise, NHWC)
    pool = (2, 8, 16) if smoke else (64, 64, 112)         # N, C, H = W (max pool)
    out = []

    def add(*args, **kwargs):
        out.append(Case(*args, **kwargs))

    # Elementwise: bytes = (operands + result) x element size; 1 FLOP each.
    add("add f32 [n]+[n]", "elementwise", "tandem.add", "f32",
        [((n,), "f32"), ((n,), "f32")],
        f"  %r = tandem.add %a0, %a1 : {ty((n,))}, {ty((n,))} -> {ty((n,))}",
        ty((n,)), 3 * 4 * n, n, "memory",
        lambda torch, F, a, b: torch.add(a, b), 1e-4)
    add("relu f32 [n]", "elementwise", "tandem.relu", "f32", [((n,), "f32")],
        f"  %r = tandem.relu %a0 : {ty((n,))}", ty((n,)), 2 * 4 * n, n, "memory",
        lambda torch, F, a: torch.relu(a), 1e-4)
    add("add f32 broadcast [s,s]+[s]", "elementwise", "tandem.add", "f32",
        [((sq, sq), "f32"), ((sq,), "f32")],
        f"  %r = tandem.add %a0, %a1 : {ty((sq, sq))}, {ty((sq,))} -> {ty((sq, sq))}",
        ty((sq, sq)), 4 * (2 * sq * sq + sq), sq * sq, "memory",
        lambda torch, F, a, b: torch.add(a, b), 1e-4)

    # Reductions: read everything once, write the result.
    add("reduce_sum f32 last axis [s,s]", "reduction", "tandem.reduce_sum", "f32",
        [((sq, sq), "f32")],
        f"  %r = tandem.reduce_sum %a0 {{axes = array<i64: 1>}} : {ty((sq, sq))} -> {ty((sq,))}",
        ty((sq,)), 4 * (sq * sq + sq), sq * sq, "memory",
        lambda torch, F, a: torch.sum(a, dim=1), 1e-4)
    add("reduce_sum f32 all [n] -> scalar", "reduction", "tandem.reduce_sum", "f32",
        [((n,), "f32")],
        f"  %r = tandem.reduce_sum %a0 {{axes = array<i64: 0>}} : {ty((n,))} -> {ty(())}",
        ty(()), 4 * (n + 1), n, "memory",
        lambda torch, F, a: torch.sum(a), 1e-4)
    add("argmax f32 last axis [s,s]", "reduction", "tandem.argmax", "f32",
        [((sq, sq), "f32")],
        f"  %r = tandem.argmax %a0 {{axis = 1 : i64}} : {ty((sq, sq))} -> {ty((sq,), 'i64')}",
        ty((sq,), "i64"), 4 * sq * sq + 8 * sq, sq * sq, "memory",
        lambda torch, F, a: torch.argmax(a, dim=1), 0, exact=True)

    # Softmax and layer norm over the last axis: read x, write the result
    # (layer norm also reads gamma and beta). FLOPs: the ops' own estimates.
    rc = (rows, cols)
    for dtype, tol in (("f32", 1e-4), ("f16", 5e-3)):
        add(f"softmax {dtype} last axis [r,c]", "softmax", "tandem.softmax", dtype,
            [(rc, dtype)],
            f"  %r = tandem.softmax %a0 {{axis = 1 : i64}} : {ty(rc, dtype)}",
            ty(rc, dtype), 2 * SIZE[dtype] * rows * cols, 5 * rows * cols, "memory",
            lambda torch, F, a: torch.softmax(a, dim=1), tol)
    add("log_softmax f32 last axis [r,c]", "softmax", "tandem.log_softmax", "f32",
        [(rc, "f32")],
        f"  %r = tandem.log_softmax %a0 {{axis = 1 : i64}} : {ty(rc)}",
        ty(rc), 2 * 4 * rows * cols, 8 * rows * cols, "memory",
        lambda torch, F, a: torch.log_softmax(a, dim=1), 1e-4)
    add("layer_norm f32 last axis [r,c]", "layer_norm", "tandem.layer_norm", "f32",
        [(rc, "f32"), ((cols,), "f32"), ((cols,), "f32")],
        f"  %r = tandem.layer_norm %a0, %a1, %a2 {{axis = 1 : i64, epsilon = 1.0e-05 : f32}}"
        f" : ({ty(rc)}, {ty((cols,))}, {ty((cols,))}) -> {ty(rc)}",
        ty(rc), 4 * (2 * rows * cols + 2 * cols), 8 * rows * cols, "memory",
        lambda torch, F, x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), 1e-4)

    # Transposes: read and write every element once.
    add("transpose f32 [s,s] perm 1,0", "transpose", "tandem.transpose", "f32",
        [((sq, sq), "f32")],
        f"  %r = tandem.transpose %a0 {{perm = array<i64: 1, 0>}} : {ty((sq, sq))} -> {ty((sq, sq))}",
        ty((sq, sq)), 2 * 4 * sq * sq, 0, "memory",
        lambda torch, F, a: a.t().contiguous(), 1e-4)
    nb, ch, hw = wide
    nchw, nhwc = (nb, ch, hw, hw), (nb, hw, hw, ch)
    add("transpose f32 NCHW->NHWC perm 0,2,3,1", "transpose", "tandem.transpose", "f32",
        [(nchw, "f32")],
        f"  %r = tandem.transpose %a0 {{perm = array<i64: 0, 2, 3, 1>}} : {ty(nchw)} -> {ty(nhwc)}",
        ty(nhwc), 2 * 4 * numel(nchw), 0, "memory",
        lambda torch, F, a: a.permute(0, 2, 3, 1).contiguous(), 1e-4)

    # GEMMs: 2·M·N·K FLOPs (per batch); bytes: A, B (and bias) read, C written.
    m = (g, g)
    for dtype, tol in (("f32", 1e-3), ("f16", 5e-3)):
        add(f"matmul {dtype} [g,g]x[g,g]", "gemm", "tandem.matmul", dtype,
            [(m, dtype), (m, dtype)],
            f"  %r = tandem.matmul %a0, %a1 : ({ty(m, dtype)}, {ty(m, dtype)}) -> {ty(m, dtype)}",
            ty(m, dtype), 3 * SIZE[dtype] * g * g, 2 * g ** 3, "compute",
            lambda torch, F, a, b: torch.matmul(a, b), tol)
    # bf16: NumPy has no bf16, so the model casts its f32 inputs to bf16 and
    # the product back; only tandem.matmul's time is the case's.
    add("matmul bf16 [g,g]x[g,g]", "gemm", "tandem.matmul", "bf16",
        [(m, "f32"), (m, "f32")],
        f"  %x = tandem.cast %a0 : {ty(m)} -> {ty(m, 'bf16')}\n"
        f"  %y = tandem.cast %a1 : {ty(m)} -> {ty(m, 'bf16')}\n"
        f"  %p = tandem.matmul %x, %y : ({ty(m, 'bf16')}, {ty(m, 'bf16')}) -> {ty(m, 'bf16')}\n"
        f"  %r = tandem.cast %p : {ty(m, 'bf16')} -> {ty(m)}",
        ty(m), 3 * 2 * g * g, 2 * g ** 3, "compute",
        lambda torch, F, a, b: torch.matmul(a, b), 2e-2,
        torch_prep=lambda torch, ts: [t.to(torch.bfloat16) for t in ts],
        torch_post=lambda torch, r: r.float())
    add("linear f32 with bias [g,g]x[g,g]^T+[g]", "gemm", "tandem.linear", "f32",
        [(m, "f32"), (m, "f32"), ((g,), "f32")],
        f"  %r = tandem.linear %a0, %a1, %a2 : ({ty(m)}, {ty(m)}, {ty((g,))}) -> {ty(m)}",
        ty(m), 4 * (3 * g * g + g), 2 * g ** 3 + g * g, "compute",
        lambda torch, F, x, w, b: F.linear(x, w, b), 1e-3)
    batch, side = bmm
    b3 = (batch, side, side)
    add("batched matmul f32 [b,k,k]x[b,k,k]", "gemm", "tandem.matmul", "f32",
        [(b3, "f32"), (b3, "f32")],
        f"  %r = tandem.matmul %a0, %a1 : ({ty(b3)}, {ty(b3)}) -> {ty(b3)}",
        ty(b3), 3 * 4 * numel(b3), 2 * batch * side ** 3, "compute",
        lambda torch, F, a, b: torch.matmul(a, b), 1e-3)

    # Convolutions: 2·N·O·OH·OW·(C/groups)·kH·kW FLOPs; bytes: x, w read, y
    # written. Pooling: N·C·OH·OW·kH·kW comparisons; x read, y written.
    def conv(name, x, o, k, pad, groups, bound):
        nn_, c, h, w = x
        wt = (o, c // groups, k, k)
        oh = h + 2 * pad - k + 1
        y = (nn_, o, oh, oh)
        flops = 2 * nn_ * o * oh * oh * (c // groups) * k * k
        add(name, "conv", "tandem.conv2d", "f32", [(x, "f32"), (wt, "f32")],
            f"  %r = tandem.conv2d %a0, %a1 {{padding = array<i64: {pad}, {pad}>, groups = {groups} : i64}}"
            f" : ({ty(x)}, {ty(wt)}) -> {ty(y)}",
            ty(y), 4 * (numel(x) + numel(wt) + numel(y)), flops, bound,
            lambda torch, F, a, b: F.conv2d(a, b, None, 1, pad, 1, groups), 1e-3)

    nb, ch, hw = img
    conv("conv2d f32 3x3 pad 1 (resnet)", (nb, ch, hw, hw), ch, 3, 1, 1, "compute")
    nb, ch, hw = wide
    conv("conv2d f32 1x1 C->C/4", (nb, ch, hw, hw), ch // 4, 1, 0, 1, "compute")
    conv("conv2d f32 depthwise 3x3 pad 1", (nb, ch, hw, hw), ch, 3, 1, ch, "memory")
    nb, ch, hw = pool
    x = (nb, ch, hw, hw)
    oh = (hw + 2 - 3) // 2 + 1
    y = (nb, ch, oh, oh)
    add("max_pool2d f32 3x3 stride 2 pad 1", "pool", "tandem.max_pool2d", "f32",
        [(x, "f32")],
        f"  %r = tandem.max_pool2d %a0 {{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,"
        f" padding = array<i64: 1, 1>}} : {ty(x)} -> {ty(y)}",
        ty(y), 4 * (numel(x) + numel(y)), numel(y) * 9, "memory",
        lambda torch, F, a: F.max_pool2d(a, 3, 2, 1), 1e-4)
    return out


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# ---------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------

def prepare(folder):
    """Compiles each case (all-gpu, H200 profile) into FOLDER/kernels, a few
    at a time, and writes FOLDER/kernels/manifest.json. Needs the built
    tree."""
    from concurrent.futures import ThreadPoolExecutor
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from tandem.compiled import run_compiler
    where = os.path.join(folder, "kernels")
    os.makedirs(where, exist_ok=True)
    started = time.perf_counter()

    def compile_case(case):
        name = slug(case.name)
        mlir = os.path.join(where, f"{name}.mlir")
        with open(mlir, "w") as f:
            f.write(case.mlir())
        report = os.path.join(where, f"{name}.report.json")
        entry = {"name": case.name, "binary": name}
        try:
            run_compiler(mlir, os.path.join(where, name), "exe", None, "h200",
                         "all-gpu", report)
        except Exception as error:  # a case the compiler refuses: say so, go on
            entry["error"] = str(error)[-500:]
            print(f"kernel case {case.name}: FAILED to compile: {error}", flush=True)
            return entry
        with open(report) as f:
            placed = json.load(f)
        os.remove(report)
        devices = sorted({op["device"] for op in placed["ops"] if op["name"] == case.op})
        entry["device"] = ",".join(devices)
        if devices != ["gpu"]:
            print(f"kernel case {case.name}: {case.op} placed on {entry['device']}, "
                  "not the GPU", flush=True)
        return entry

    with ThreadPoolExecutor(max(1, min(8, os.cpu_count() or 1))) as pool:
        entries = list(pool.map(compile_case, cases()))
    manifest = {"smoke": SMOKE, "cases": entries}
    with open(os.path.join(where, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"prepared {len(entries)} kernel cases"
          f"{' (smoke sizes)' if SMOKE else ''} in {time.perf_counter() - started:.1f} s",
          flush=True)


# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------

def tandem_times(profile, op):
    entries = [e for e in profile["ops"] if e["name"] == op]
    if not entries:
        raise ValueError(f"{op} is not in the profile")
    calls = sum(e["calls"] for e in entries)
    total = sum(e["total_us"] for e in entries)
    worst = max(e["max_us"] for e in entries)
    return {"device": ",".join(sorted({e["device"] for e in entries})),
            "calls": calls, "avg_us": total / calls,
            "min_us": min(e["min_us"] for e in entries), "max_us": worst,
            # The first call sets up cuBLAS/cuDNN and loads the module: the
            # slowest call is left out.
            "warm_avg_us": (total - worst) / (calls - 1) if calls > 1 else total}


def torch_times(torch, function, operands, runs, cuda):
    for _ in range(3):
        function(*operands)
    if not cuda:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            function(*operands)
            times.append((time.perf_counter() - start) * 1e6)
        return {"event_avg_us": sum(times) / runs, "event_min_us": min(times),
                "sync_avg_us": sum(times) / runs}
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for start, end in zip(starts, ends):
        start.record()
        function(*operands)
        end.record()
    torch.cuda.synchronize()
    events = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
    # As Tandem's profile measures an op: on the host, launch to synchronize.
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        function(*operands)
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - start) * 1e6)
    return {"event_avg_us": sum(events) / runs, "event_min_us": min(events),
            "sync_avg_us": sum(walls) / runs}


def compare(torch, case, actual, expected):
    """(error, ok): Tandem's result against PyTorch's."""
    if tuple(actual.shape) != tuple(expected.shape):
        return float("inf"), False
    if case.exact:
        if actual.numel() == 0:
            return 0.0, True
        wrong = (actual.to(expected.dtype) != expected).sum().item()
        return wrong / actual.numel(), wrong == 0
    if actual.numel() == 0:
        return 0.0, True
    a, e = actual.double(), expected.double()
    scale = e.abs().mean()
    error = ((a - e).abs() / (e.abs() + scale)).max().item()
    if not np.isfinite(error):  # a NaN or inf the reference does not have
        return float("inf"), False
    return error, error <= case.tol


def choose_backend(torch):
    """('cuda' | 'sim', None) or (None, the reason to skip)."""
    asked = os.environ.get("TANDEM_KERNEL_BENCH_BACKEND", "auto")
    if asked not in ("auto", "cuda", "sim"):
        return None, f"TANDEM_KERNEL_BENCH_BACKEND={asked}: expected auto, cuda or sim"
    gpu = torch.cuda.is_available()
    if asked == "sim":
        return "sim", None
    if gpu:
        return "cuda", None
    return None, ("kernel microbenchmarks skipped: no CUDA GPU visible to PyTorch "
                  "(TANDEM_KERNEL_BENCH_BACKEND=sim runs the Tandem side on the sim "
                  "backend against PyTorch on the CPU, to check the script)")


def binary_env(folder, torch):
    """The binaries' environment: the libraries prepare gathered, then CUDA's
    from PyTorch's wheels (cuBLAS, cuDNN) where the system has none; run.sh
    sets the same, this is for kernels.py run by itself."""
    env = dict(os.environ)
    paths = [os.path.join(folder, "lib")]
    wheels = os.path.join(os.path.dirname(torch.__file__), "..", "nvidia")
    for root, _, files in os.walk(wheels):
        if os.path.basename(root) == "lib" and any(".so" in f for f in files):
            paths.append(os.path.abspath(root))
    known = env.get("LD_LIBRARY_PATH", "")
    paths = [p for p in paths if p not in known.split(":")]
    env["LD_LIBRARY_PATH"] = ":".join(paths[:1] + ([known] if known else []) + paths[1:])
    return env


def run_case(torch, F, case, entry, folder, scratch, backend, peak):
    row = {"name": case.name, "family": case.family, "op": case.op,
           "dtype": case.dtype, "shapes": case.shape_text(), "bytes": case.bytes,
           "flops": case.flops, "bound": case.bound, "tol": case.tol,
           "placed": entry.get("device")}
    if "error" in entry:
        row["error"] = "compile: " + entry["error"]
        return row
    device = "cuda" if backend == "cuda" else "cpu"
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    arrays, paths = [], []
    for k, (shape, dtype) in enumerate(case.inputs):
        array = rng.standard_normal(shape, dtype=np.float32).astype(NP_DTYPES[dtype],
                                                                     copy=False)
        path = os.path.join(scratch, f"input{k}.npy")
        np.save(path, array)
        arrays.append(array)
        paths.append(path)
    binary = os.path.join(folder, "kernels", entry["binary"])
    outputs = os.path.join(scratch, "out")
    profile_path = os.path.join(scratch, "profile.json")
    command = [binary]
    for path in paths:
        command += ["--input", path]
    command += ["--output-dir", outputs, "--repeat", str(REPEAT), "--device-backend",
                backend, "--profile-json", profile_path]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env=binary_env(folder, torch))
    except subprocess.TimeoutExpired:
        row["error"] = "the binary ran over 300 s"
        return row
    if done.returncode != 0:
        row["error"] = (done.stderr.strip() or f"exit status {done.returncode}")[-500:]
        return row
    with open(profile_path) as f:
        row["tandem"] = tandem_times(json.load(f), case.op)
    actual = torch.from_numpy(np.load(os.path.join(outputs, "result0.npy")))
    for path in paths:
        os.remove(path)
    shutil.rmtree(outputs, ignore_errors=True)

    operands = [torch.from_numpy(a).to(device) for a in arrays]
    del arrays
    if case.torch_prep:
        operands = case.torch_prep(torch, operands)
    with torch.inference_mode():
        function = lambda *ts: case.torch_fn(torch, F, *ts)  # noqa: E731
        expected = function(*operands)
        if case.torch_post:
            expected = case.torch_post(torch, expected)
        row["max_rel_err"], ok = compare(torch, case, actual.to(device), expected)
        row["check"] = "ok" if ok else "FAILED"
        del expected, actual
        row["torch"] = torch_times(torch, function, operands, REPEAT, backend == "cuda")
    del operands
    if backend == "cuda":
        torch.cuda.empty_cache()  # the next binary needs the GPU's memory

    us = row["tandem"]["warm_avg_us"]
    row["ratio"] = us / row["torch"]["event_avg_us"]
    row["ratio_sync"] = us / row["torch"]["sync_avg_us"]
    row["gbps"] = case.bytes / us / 1e3
    row["tflops"] = case.flops / us / 1e6
    if case.bound == "memory":
        row["pct_peak"] = 100 * case.bytes / (us * 1e-6) / peak["bandwidth"]
    else:
        row["pct_peak"] = 100 * case.flops / (us * 1e-6) / peak[case.dtype]
    torch_us = row["torch"]["event_avg_us"]
    row["torch_pct_peak"] = row["pct_peak"] * us / torch_us
    if case.target and backend == "cuda":
        row["target_70pct_bw"] = row["pct_peak"] >= 100 * TARGET_BANDWIDTH
    return row


def table(section):
    """The markdown lines of the kernels section."""
    lines = [SECTION, ""]
    if "skipped" in section:
        return lines + [section["skipped"]]
    peak = section["peaks"]
    lines += [f"Backend: {section['backend']}"
              + (" (the CPU kernels: the timings are not GPU figures)"
                 if section["backend"] == "sim" else "")
              + f"; GPU: {section['gpu'] or 'none'}; {section['repeat']} calls per op; "
              f"peaks: {peak['bandwidth'] / 1e12:.1f} TB/s, f32 {peak['f32'] / 1e12:.0f}, "
              f"f16/bf16 {peak['f16'] / 1e12:.0f} TFLOP/s ({peak['source']}).",
              "Tandem us: the op's profile time (launch + kernel + sync), first call "
              "left out; torch us: CUDA events around each call (torch sync us: host "
              "time of a call and a synchronize, as Tandem's is measured); ratio: "
              "tandem / torch (ratio sync: tandem / torch sync); % peak: of the memory bandwidth (GB/s cases) or of "
              "the dtype's FLOP/s (TFLOP/s cases); target: >= 70% of the bandwidth "
              "for elementwise, softmax and layer norm; err: max |t - r| / (|r| + "
              "mean |r|) against PyTorch (argmax: share of indices that differ).", "",
              "| case | shapes | tandem us | min us | torch us | torch sync us | ratio "
              "| ratio sync | achieved | % peak | torch % peak | target | max rel err "
              "| check |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    failed, skipped = [], []
    for row in section["cases"]:
        if "skipped" in row:
            lines.append(f"| {row['name']} | {row['shapes']} |" + " |" * 11
                         + f" {row['skipped']} |")
            skipped.append(row["name"])
            continue
        if "error" in row:
            lines.append(f"| {row['name']} | {row['shapes']} |" + " |" * 11
                         + f" **FAILED**: {row['error'][:300].replace('|', '/')} |")
            failed.append(row["name"])
            continue
        t = row["tandem"]
        achieved = (f"{row['gbps']:.0f} GB/s" if row["bound"] == "memory"
                    else f"{row['tflops']:.1f} TFLOP/s")
        target = {True: "met", False: "MISSED"}.get(row.get("target_70pct_bw"), "-")
        if section["backend"] != "cuda" and row["family"] in TARGET_FAMILIES:
            target = "n/a (sim)"
        check = row["check"] if row["check"] == "ok" else "**FAILED**"
        if row["check"] != "ok":
            failed.append(row["name"])
        placed = "" if t["device"] == "gpu" else f" (on {t['device']})"
        lines.append(
            f"| {row['name']}{placed} | {row['shapes']} | {t['warm_avg_us']:.1f} | "
            f"{t['min_us']:.1f} | {row['torch']['event_avg_us']:.1f} | "
            f"{row['torch']['sync_avg_us']:.1f} | {row['ratio']:.2f} | "
            f"{row['ratio_sync']:.2f} | {achieved} | "
            f"{row['pct_peak']:.1f}% | {row['torch_pct_peak']:.1f}% | {target} | "
            f"{row['max_rel_err']:.2e} (tol {row['tol']:g}) | {check} |")
    lines.append("")
    if failed:
        lines.append(f"**FAILED: {len(failed)} kernel case(s): {', '.join(failed)}**")
    else:
        ran = len(section["cases"]) - len(skipped)
        lines.append(f"All {ran} kernel cases run match PyTorch."
                     + (f" Not run: {', '.join(skipped)}." if skipped else ""))
    if "seconds" in section:
        lines.append(f"Kernel cases took {section['seconds']:.0f} s.")
    return lines


def run_times(stdout):
    """The (median, min) microseconds of a run after the first from an
    executable's --timing line, or None where it printed none."""
    match = re.search(r"median ([0-9.]+) us, min ([0-9.]+) us", stdout)
    return (float(match.group(1)), float(match.group(2))) if match else None


def cuda_time(torch, function, runs, tries=1):
    """Microseconds per call of `function` on the GPU, the best of `tries`
    timings of `runs` calls each after two warm-up calls."""
    best = None
    for _ in range(tries):
        for _ in range(2):
            function()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(runs):
            function()
        torch.cuda.synchronize()
        us = (time.perf_counter() - start) / runs * 1e6
        best = us if best is None else min(best, us)
    return best


def merge_results(out, key, section, lines, heading, before=None):
    """Merges a part's results into OUT/results.json (under `key`) and
    OUT/results.md: its `lines` replace the text from `heading` to the next
    section where the heading is there already; otherwise they go before the
    `before` heading if given and present, else at the end. The other parts'
    results stay as they are."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "results.json")
    results = {}
    if os.path.exists(path):
        with open(path) as f:
            results = json.load(f)
    results[key] = section
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=2)
    os.replace(path + ".tmp", path)
    path = os.path.join(out, "results.md")
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    body = "\n".join(lines) + "\n"
    at = text.find(heading)
    if at >= 0:
        end = text.find("\n## ", at + len(heading))
        head, rest = text[:at], text[end + 1:] if end >= 0 else ""
    else:
        at = text.find(before) if before else -1
        head, rest = (text[:at], text[at:]) if at >= 0 else (text, "")
    if head and not head.endswith("\n\n"):
        head += "\n" if head.endswith("\n") else "\n\n"
    with open(path + ".tmp", "w") as f:
        f.write(head + body + ("\n" + rest if rest else ""))
    os.replace(path + ".tmp", path)


def write(out, section):
    """Merges the section into OUT/results.json (the "kernels" key) and
    OUT/results.md (from the section's heading on): bench.py's results stay
    as they are."""
    merge_results(out, "kernels", section, table(section), SECTION)


def run(folder, out):
    import torch
    import torch.nn.functional as F
    backend, reason = choose_backend(torch)
    manifest_path = os.path.join(folder, "kernels", "manifest.json")
    if backend and not os.path.exists(manifest_path):
        backend, reason = None, (f"kernel microbenchmarks skipped: {manifest_path} is "
                                 "missing (run `bench.py prepare` first)")
    if not backend:
        print(reason, flush=True)
        section = {"skipped": reason}
        write(out, section)
        return section
    with open(manifest_path) as f:
        manifest = json.load(f)
    known = {case.name: case for case in cases(manifest["smoke"])}
    only = os.environ.get("TANDEM_KERNEL_BENCH_ONLY", "")
    if backend == "cuda":
        # Like with like: strict f32 GEMMs and convolutions, f32 accumulation
        # in f16/bf16 GEMMs, no autotuning (Tandem takes cuDNN's heuristics).
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = False
        for flag in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                     "allow_bf16_reduced_precision_reduction"):
            try:
                setattr(torch.backends.cuda.matmul, flag, False)
            except AttributeError:  # an older PyTorch without the flag
                pass
    peak = peaks()
    section = {"backend": backend,
               "gpu": torch.cuda.get_device_name(0) if backend == "cuda" else None,
               "repeat": REPEAT, "smoke": manifest["smoke"], "peaks": peak,
               "cases": []}
    budget = float(os.environ.get("TANDEM_KERNEL_BENCH_BUDGET_S", "240"))
    started = time.perf_counter()
    scratch = tempfile.mkdtemp(prefix="tandem-kernels-")  # never under OUT
    try:
        for entry in manifest["cases"]:
            case = known.get(entry["name"])
            if case is None or only not in entry["name"]:
                continue
            if time.perf_counter() - started > budget:
                section["cases"].append({"name": case.name, "shapes": case.shape_text(),
                                         "skipped": f"not run: past the {budget:.0f} s "
                                                    "budget (TANDEM_KERNEL_BENCH_BUDGET_S)"})
                continue
            t0 = time.perf_counter()
            try:
                row = run_case(torch, F, case, entry, folder, scratch, backend, peak)
            except Exception as error:  # one case's failure must not lose the rest
                row = {"name": case.name, "shapes": case.shape_text(),
                       "error": f"{type(error).__name__}: {error}"}
            row["seconds"] = time.perf_counter() - t0
            section["cases"].append(row)
            print(f"kernel {case.name}: " + json.dumps(
                {k: v for k, v in row.items() if k in ("tandem", "torch", "ratio",
                                                        "pct_peak", "max_rel_err",
                                                        "check", "error")}), flush=True)
            section["seconds"] = time.perf_counter() - started
            write(out, section)  # as it goes: a run cut short keeps what it did
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    section["seconds"] = time.perf_counter() - started
    write(out, section)
    print("\n".join(table(section)), flush=True)
    return section


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: kernels.py prepare DIR | run DIR OUT")
