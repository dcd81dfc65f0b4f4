"""The runtime benchmark (a program, not a test): a model compiled by Tandem
against the same model in PyTorch eager and in ONNX Runtime, on the CPU, side
by side in one run.

Each model is defined once in PyTorch and exported with tandem.export, so
both sides run the same weights on the same inputs; the binary runs on the
CPU (placement under the CPU-only `host` profile) with as many threads as
PyTorch (torch.get_num_threads(); the BLAS and the runtime's pool default to
the machine's cores). Times are per run, averaged over a round of runs after
the first (the binary's own --timing; perf_counter around PyTorch's calls
after a warm-up); each figure is the better of two rounds (the machine is
shared).
ONNX Runtime (CPU execution provider, all graph optimizations, as many
intra-op threads as PyTorch, one inter-op thread) runs the model as PyTorch's
torch.export-based exporter writes it; without the onnxruntime package its
column says "-". The tower is also set against what the BLAS's sgemm alone
(OpenBLAS or oneMKL, whichever the runtime links) reaches on its four GEMMs,
on the BLAS's own threads.

Where oneMKL is installed (scripts/setup.sh does on Intel CPUs), a last
table sets each compiled model, linked with the build's BLAS (OpenBLAS by
default, cmake/TandemBlas.cmake), against the same model linked with the
other (tandem-compile --blas=mkl): "speed-up" is the first time over the
second.

The compiled model is measured fused (tandem-compile's default) and with
--fuse=false beside it: "fusion" is the unfused time over the fused one,
and "ops/run" the ops the runtime executes per run, fused / unfused.

torch.compile (Inductor, CPU) stands beside them where it compiles here.
With --more, the table is of the models beyond the bench: models of many
small ops at batch 1-2 (mobilenet_v3_large, a Conformer block, a T5 encoder
block, regnet_x_1_6gf, resnet50, a BERT-base layer).

Usage: bench/runtime/run.sh [SCALE] [--more] [--no-inductor]
       (runs per round × SCALE; default 1)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from torch import nn

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import tandem  # noqa: E402

BUILD = os.environ.get("TANDEM_BUILD_DIR", os.path.join(ROOT, "build"))


def mlp():
    return (nn.Sequential(nn.Linear(13, 16), nn.ReLU(), nn.Linear(16, 32),
                          nn.ReLU(), nn.Linear(32, 1)),
            (torch.randn(128, 13),))


def tower():
    layers = []
    for _ in range(4):
        layers += [nn.Linear(1024, 1024), nn.ReLU()]
    return nn.Sequential(*layers), (torch.randn(256, 1024),)


def cnn():
    return (nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)),
            (torch.randn(32, 3, 64, 64),))


def encoder():
    return (nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True),
            (torch.randn(8, 64, 256),))


def resnet():
    import torchvision
    return torchvision.models.resnet18(num_classes=100), (torch.randn(2, 3, 64, 64),)


def gpt2_block():
    # The frontend tests' nanoGPT block: pre-norm attention, a tanh-GELU MLP.
    sys.path.insert(0, os.path.join(ROOT, "test", "Frontend"))
    from models import GPT2Block
    return GPT2Block(width=256, heads=4, context=64), (torch.randn(8, 64, 256),)


def mobilenet():
    import torchvision
    return torchvision.models.mobilenet_v2(num_classes=100), (torch.randn(2, 3, 96, 96),)


MODELS = [("MLP 13-16-32-1, batch 128", mlp, 2 * 128 * (13 * 16 + 16 * 32 + 32),
           20000),
          ("4 x (1024->1024, relu), batch 256", tower, 4 * 2 * 256 * 1024 * 1024,
           50),
          ("small CNN (2 conv, pools), batch 32", cnn,
           2 * 32 * 32 * 64 * 64 * 3 * 9 + 2 * 32 * 64 * 32 * 32 * 32 * 9, 20),
          # 512 tokens: four GEMMs (768, 256, 1024, 256 outputs) and attention.
          ("transformer encoder layer, 8 x 64", encoder,
           2 * 512 * 256 * (768 + 256 + 1024) + 2 * 512 * 1024 * 256
           + 2 * 2 * 8 * 4 * 64 * 64 * 64, 50),
          ("resnet18, 2 x 3 x 64 x 64", resnet, 2 * 2 * 149e6, 50),
          # 512 tokens: the QKV, projection and two MLP GEMMs, and attention.
          ("GPT-2 block (256 wide), 8 x 64", gpt2_block,
           2 * 512 * 256 * (768 + 256 + 1024) + 2 * 512 * 1024 * 256
           + 2 * 2 * 8 * 4 * 64 * 64 * 64, 50),
          ("mobilenet_v2, 2 x 3 x 96 x 96", mobilenet, 2 * 2 * 56e6, 30)]


# Beyond the bench (run.sh --more): models of many small ops, batch 1-2.

def mobilenet_v3():
    import torchvision
    return torchvision.models.mobilenet_v3_large(), (torch.randn(1, 3, 224, 224),)


def regnet():
    import torchvision
    return torchvision.models.regnet_x_1_6gf(), (torch.randn(1, 3, 224, 224),)


def resnet50():
    import torchvision
    return torchvision.models.resnet50(), (torch.randn(1, 3, 224, 224),)


def bert_layer():
    # BERT-base's encoder layer: 768 wide, 12 heads, GELU, post-norm.
    return (nn.TransformerEncoderLayer(768, 12, 3072, activation="gelu",
                                       batch_first=True),
            (torch.randn(2, 128, 768),))


class T5Block(nn.Module):
    """A T5 encoder block: RMS norms, attention without biases, a ReLU MLP
    without biases, pre-norm residuals."""

    def __init__(self, width=512, heads=8, hidden=2048):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.Parameter(torch.ones(width))
        self.norm2 = nn.Parameter(torch.ones(width))
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.out = nn.Linear(width, width, bias=False)
        self.wi = nn.Linear(width, hidden, bias=False)
        self.wo = nn.Linear(hidden, width, bias=False)

    @staticmethod
    def rms(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.rms(x, self.norm1)).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        attention = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v
        x = x + self.out(attention.transpose(1, 2).reshape(b, t, c))
        return x + self.wo(torch.relu(self.wi(self.rms(x, self.norm2))))


def t5_block():
    return T5Block(), (torch.randn(2, 128, 512),)


class ConformerBlock(nn.Module):
    """A Conformer block: half-step SiLU feed-forwards around self-attention
    and a convolution module (pointwise, GLU, depthwise, batch norm, SiLU,
    pointwise), a final layer norm."""

    def __init__(self, width=256, heads=4, kernel=31):
        super().__init__()

        def feed_forward():
            return nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 4 * width),
                                 nn.SiLU(), nn.Linear(4 * width, width))
        self.ff1, self.ff2 = feed_forward(), feed_forward()
        self.norm_attention = nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm_conv = nn.LayerNorm(width)
        self.pointwise1 = nn.Conv1d(width, 2 * width, 1)
        self.depthwise = nn.Conv1d(width, width, kernel, padding=kernel // 2,
                                   groups=width)
        self.batch_norm = nn.BatchNorm1d(width)
        self.pointwise2 = nn.Conv1d(width, width, 1)
        self.norm_out = nn.LayerNorm(width)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        a = self.norm_attention(x)
        x = x + self.attention(a, a, a, need_weights=False)[0]
        c = self.norm_conv(x).transpose(1, 2)
        c = nn.functional.glu(self.pointwise1(c), dim=1)
        c = nn.functional.silu(self.batch_norm(self.depthwise(c)))
        x = x + self.pointwise2(c).transpose(1, 2)
        return self.norm_out(x + 0.5 * self.ff2(x))


def conformer_block():
    return ConformerBlock(), (torch.randn(2, 128, 256),)


MORE_MODELS = [
    ("mobilenet_v3_large, 1 x 3 x 224 x 224", mobilenet_v3, 2 * 217e6, 10),
    ("Conformer block (256 wide), 2 x 128", conformer_block,
     2 * 256 * 2 * 256 * (8 * 256 * 2 + 4 * 256 + 3 * 256 + 31), 20),
    ("T5 encoder block (512 wide), 2 x 128", t5_block,
     2 * 256 * 512 * (3 * 512 + 512 + 2 * 2048) + 2 * 2 * 2 * 8 * 128 * 128 * 64,
     20),
    ("regnet_x_1_6gf, 1 x 3 x 224 x 224", regnet, 2 * 1.6e9, 5),
    ("resnet50, 1 x 3 x 224 x 224", resnet50, 2 * 4.1e9, 5),
    ("BERT-base layer, 2 x 128", bert_layer,
     2 * 256 * 768 * (4 * 768 + 2 * 3072) + 2 * 2 * 2 * 12 * 128 * 128 * 64, 20),
]


def best_of_two(measure):
    return min(measure(), measure())


def torch_us(model, args, runs):
    def measure():
        with torch.inference_mode():
            for _ in range(3):
                model(*args)
            start = time.perf_counter()
            for _ in range(runs):
                model(*args)
            return (time.perf_counter() - start) / runs * 1e6
    return best_of_two(measure)


def inductor_us(model, args, runs):
    """torch.compile's (Inductor's) time per run on the CPU, or None where it
    does not compile here (the reason is printed)."""
    try:
        compiled = torch.compile(model)
        with torch.inference_mode():
            compiled(*args)  # compiles
    except Exception as error:  # noqa: BLE001  Inductor failing
        print(f"  (torch.compile failed: {type(error).__name__}: "
              f"{str(error).splitlines()[0][:100] if str(error) else ''})")
        return None
    return torch_us(compiled, args, runs)


def ort_us(name, model, args, runs, work, threads):
    """ONNX Runtime's time per run, or None without onnxruntime (or where the
    export fails: the reason is printed)."""
    try:
        import onnxruntime
    except ImportError:
        return None
    path = os.path.join(work, name + ".onnx")
    try:
        with open(os.devnull, "w") as quiet:
            stdout = os.dup(1)
            os.dup2(quiet.fileno(), 1)  # the exporter prints its progress
            try:
                torch.onnx.export(model, args, path, dynamo=True)
            finally:
                os.dup2(stdout, 1)
                os.close(stdout)
    except Exception as error:  # noqa: BLE001  PyTorch's exporter failing
        print(f"  (ONNX export of {name} failed: {type(error).__name__})")
        return None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(path, options,
                                           providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)}

    def measure():
        for _ in range(3):
            session.run(None, feeds)
        start = time.perf_counter()
        for _ in range(runs):
            session.run(None, feeds)
        return (time.perf_counter() - start) / runs * 1e6
    return best_of_two(measure)


def tandem_us(name, model, args, runs, work, fuse=True, blas=None):
    """(us per run, ops executed per run) of the compiled model, fused
    (tandem-compile's default) or not (--fuse=false), linked with the
    build's BLAS or the one `blas` names (tandem-compile --blas)."""
    prefix = os.path.join(work, name + ("" if fuse else ".unfused") +
                          (f".{blas}" if blas else ""))
    mlir_path, weights = tandem.export(model, args, prefix)
    flags = (() if fuse else ("--fuse=false",)) + ((f"--blas={blas}",) if blas else ())
    tandem.compiled.run_compiler(mlir_path, prefix, "exe", None, "host", "auto",
                                 extra_flags=flags)
    # One more run than asked: --timing sets the first apart.
    command = [prefix, "--weights", weights, "--repeat", str(runs + 1)]
    for k, arg in enumerate(args):
        path = f"{prefix}.input{k}.npy"
        np.save(path, arg.numpy())
        command += ["--input", path]
    # The ops it executes per run, from one profiled run; the times from
    # --timing (per-run wall clock, without the per-op clock reads a
    # profile adds), the mean of the runs after the first.
    profile = f"{prefix}.profile.json"
    subprocess.run(command + ["--profile-json", profile], check=True,
                   capture_output=True)
    with open(profile) as f:
        report = json.load(f)
    ops = sum(op["calls"] for op in report["op_runs"]) / report["runs"]

    return best_of_two(lambda: tandem.compiled.timed_mean_us(command)), ops


def peak_gpu_bytes(name, model, args, work, fuse):
    """The placement report's peak GPU bytes with every op on the GPU (the
    h200 profile): what the model's buffers take there, fused or not."""
    prefix = os.path.join(work, name + (".gpu" if fuse else ".gpu.unfused"))
    mlir_path, _ = tandem.export(model, args, prefix)
    report = prefix + ".json"
    tandem.compiled.run_compiler(mlir_path, prefix + ".o", "obj", None, "h200",
                                 "all-gpu", report,
                                 extra_flags=() if fuse else ("--fuse=false",))
    with open(report) as f:
        return json.load(f)["peak_gpu_bytes"]


def sgemm(m, n, k, runs):
    """(us, GFLOP/s, the BLAS's name) of one sgemm m x n x k on the BLAS the
    runtime links, on its own threads: the mean of `runs` calls after a
    first one, as the compiled models are timed; the better of two rounds."""
    best = None
    for _ in range(2):
        out = subprocess.run([os.path.join(BUILD, "bin", "tandem-bench-sgemm"),
                              str(m), str(n), str(k), str(runs)],
                             capture_output=True, text=True, check=True).stdout
        fields = out.split()
        us, gflops = map(float, fields[:2])
        name = " ".join(fields[2:])
        best = (us, gflops, name) if best is None or us < best[0] else best
    return best


def main():
    # Runs per round scale with the model so that each round lasts a good
    # part of a second: SCALE multiplies them (run.sh 0.1 for a quick look).
    # --more: the models beyond the bench instead; --no-inductor: without
    # torch.compile's column (its compiles take a minute or more a model).
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    scale = float(arguments[0]) if arguments else 1.0
    models = MORE_MODELS if "--more" in sys.argv else MODELS
    inductor = "--no-inductor" not in sys.argv
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    print(f"{os.cpu_count()} CPUs, PyTorch {torch.__version__} with {threads} "
          f"threads; per-run times, best of two rounds")
    print(f"{'model':<38} {'tandem us':>10} {'torch us':>10} {'compile us':>10} "
          f"{'ort us':>10} {'vs torch':>8} {'vs comp.':>8} {'vs ort':>8} "
          f"{'GFLOP/s':>8} {'unfused us':>10} {'fusion':>7} {'ops/run':>11}")

    def ratio(theirs, ours):
        return f"{theirs / ours:>7.2f}x" if theirs else f"{'-':>8}"

    def column(us):
        return f"{us:>10.1f}" if us else f"{'-':>10}"
    peaks = []
    # Where oneMKL is installed, each model is also timed linked with it
    # (tandem-compile --blas=mkl), beside the build's default (OpenBLAS).
    default_blas = sgemm(16, 16, 16, 1)[2]
    other_blas = ("openblas", "OpenBLAS") if default_blas == "oneMKL" else ("mkl", "oneMKL")
    on_other = []
    with tempfile.TemporaryDirectory() as work:
        for k, (title, build, flops, runs) in enumerate(models):
            runs = max(1, int(runs * scale))
            model, args = build()
            model.eval()
            ours, ops = tandem_us(f"model{k}", model, args, runs, work)
            unfused, unfused_ops = tandem_us(f"model{k}", model, args, runs,
                                             work, fuse=False)
            theirs = torch_us(model, args, runs)
            compiled = inductor_us(model, args, runs) if inductor else None
            ort = ort_us(f"model{k}", model, args, runs, work, threads)
            print(f"{title:<38} {ours:>10.1f} {theirs:>10.1f} {column(compiled)} "
                  f"{column(ort)} {ratio(theirs, ours)} {ratio(compiled, ours)} "
                  f"{ratio(ort, ours)} {flops / ours / 1e3:>8.1f} "
                  f"{unfused:>10.1f} {unfused / ours:>6.2f}x "
                  f"{ops:>4.0f} / {unfused_ops:<4.0f}", flush=True)
            if other_blas is not None:
                try:
                    on_other.append((title, ours, tandem_us(
                        f"model{k}", model, args, runs, work,
                        blas=other_blas[0])[0]))
                except tandem.compiled.CompileError as error:
                    print(f"  (not timed with {other_blas[1]}: "
                          f"{str(error).splitlines()[0][:120]})")
                    other_blas = None
            peaks.append((title, peak_gpu_bytes(f"model{k}", model, args, work,
                                                True),
                          peak_gpu_bytes(f"model{k}", model, args, work, False)))
            if build is tower:
                gemm_us, gemm_gflops, blas = sgemm(256, 1024, 1024, runs)
                print(f"{'  ' + blas + ' sgemm alone, 4 GEMMs':<38} {4 * gemm_us:>10.1f} "
                      f"{'':>10} {'':>10} {'':>10} {'':>8} {'':>8} {'':>8} "
                      f"{gemm_gflops:>8.1f}   tandem reaches "
                      f"{4 * gemm_us / ours:.2f}x of it")

    print(f"\n{'peak GPU bytes, every op on the GPU':<38} {'fused':>10} "
          f"{'unfused':>10} {'saved':>8}")
    for title, fused, unfused in peaks:
        print(f"{title:<38} {fused:>10} {unfused:>10} "
              f"{1 - fused / unfused:>7.0%}")
    if on_other and other_blas:
        print(f"\n{'compiled model, linked with':<38} {default_blas + ' us':>12} "
              f"{other_blas[1] + ' us':>12} {'speed-up':>9}")
        for title, default, other in on_other:
            print(f"{title:<38} {default:>12.1f} {other:>12.1f} "
                  f"{default / other:>8.2f}x")


if __name__ == "__main__":
    main()
