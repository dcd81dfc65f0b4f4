"""Fused and unfused models give the same bits.

Random chains of the fusible ops (every float arithmetic op and unary
function) over inputs that broadcast in every way NumPy allows (leading
dimensions missing, dimensions of 1 anywhere, scalars), fed NaN, +-inf, -0,
huge and tiny values beside ordinary ones. Each chain reads earlier values
of the chain again (diamonds), and some of its intermediate values are also
results of the model, so they must stay materialized. Every model is
compiled fused (the default) and with --fuse=false, all on the CPU, and
fused with every op on the GPU (sim backend, which runs the same generated
kernels); the outputs must be equal bit for bit, NaN meeting NaN. Where
the CUDA toolkit's ptxas is found ($TANDEM_PTXAS), each model's GPU kernels
(--emit=ptx) are assembled for sm_90. The
shapes include rows long enough that the thread pool splits one row across
chunks. Two models more start chains with GEMMs and convolutions (fused
as a producer and its epilogue), one whose product is also a result.

Usage: fusion_check.py TANDEM_COMPILE WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

rng = np.random.default_rng(7)

UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid",
         "relu", "gelu", "silu", "erf", "floor", "ceil", "round", "trunc"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]
SHAPES = [(), (1,), (7,), (2, 3), (4, 1, 9), (3, 5, 17), (2, 1, 3, 8),
          (1, 33), (70001,), (3, 40003), (5, 2, 2, 3)]


def tensor_type(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def broadcast_shape_of(shape):
    """A shape that broadcasts to `shape`: leading dimensions dropped, some
    dimensions made 1."""
    drop = rng.integers(0, len(shape) + 1)
    kept = list(shape[drop:])
    return tuple(1 if rng.random() < 0.4 else d for d in kept)


def values(shape):
    x = rng.standard_normal(shape).astype(np.float32) * np.float32(3)
    flat = x.reshape(-1)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30,
                        1e-30, 88.8, -104.0, 0.5, 2.5], np.float32)
    if flat.size:
        count = min(flat.size, rng.integers(0, 6))
        flat[rng.choice(flat.size, count, replace=False)] = \
            rng.choice(special, count)
    return x


def chain(prefix, shape, args, lines, results):
    """Appends one chain's ops; returns its value."""
    full = f"%{prefix}v0"
    lines.append(f"  {full} = tandem.add {args[0][0]}, {args[1][0]} : "
                 f"{tensor_type(args[0][1])}, {tensor_type(args[1][1])} -> "
                 f"{tensor_type(shape)}")
    chain_values = [full]
    for step in range(1, rng.integers(2, 9)):
        name = f"%{prefix}v{step}"
        if rng.random() < 0.5:
            op = rng.choice(UNARY)
            lines.append(f"  {name} = tandem.{op} {chain_values[-1]} : "
                         f"{tensor_type(shape)}")
        else:
            op = rng.choice(BINARY)
            other_pool = [(v, shape) for v in chain_values] + args
            other, other_shape = other_pool[rng.integers(len(other_pool))]
            lhs, rhs = (chain_values[-1], shape), (other, other_shape)
            if rng.random() < 0.5:
                lhs, rhs = rhs, lhs
            lines.append(f"  {name} = tandem.{op} {lhs[0]}, {rhs[0]} : "
                         f"{tensor_type(lhs[1])}, {tensor_type(rhs[1])} -> "
                         f"{tensor_type(shape)}")
        chain_values.append(name)
        # Now and then an intermediate value is a result too.
        if step < 3 and rng.random() < 0.15:
            results.append((name, shape))
    results.append((chain_values[-1], shape))


def model(index):
    inputs, args_by_chain, lines, results = [], [], [], []
    for c in range(rng.integers(1, 4)):
        shape = SHAPES[rng.integers(len(SHAPES))]
        if len(shape) and np.prod(shape) > 50000 and c > 0:
            shape = (5, 7)  # one long shape per model keeps runs short
        args = []
        for k in range(rng.integers(2, 5)):
            arg_shape = shape if k == 0 else broadcast_shape_of(shape)
            args.append((f"%a{len(inputs)}", arg_shape))
            inputs.append(values(arg_shape))
        chain(f"c{c}", shape, args, lines, results)
    signature = ", ".join(f"%a{k}: {tensor_type(x.shape)}"
                          for k, x in enumerate(inputs))
    result_types = ", ".join(tensor_type(s) for _, s in results)
    text = (f"func.func @main({signature}) -> ({result_types}) {{\n" +
            "\n".join(lines) + "\n  return " +
            ", ".join(v for v, _ in results) + " : " + result_types +
            "\n}\n")
    return text, inputs


def epilogue_models():
    """GEMMs and convolutions with elementwise chains after them: fused as
    a producer and its epilogue (or, where the product is read elsewhere,
    left apart)."""
    models = []
    # linear + bias row + gelu + residual; batched matmul + tanh * scale.
    x, w, b, r = values((33, 20)), values((17, 20)), values((17,)), values((33, 17))
    models.append(("""func.func @main(%x: tensor<33x20xf32>, %w: tensor<17x20xf32>, %b: tensor<17xf32>, %r: tensor<33x17xf32>, %p: tensor<3x9x4xf32>, %q: tensor<3x4x5xf32>, %s: tensor<3x1x5xf32>) -> (tensor<33x17xf32>, tensor<3x9x5xf32>) {
  %l = tandem.linear %x, %w : (tensor<33x20xf32>, tensor<17x20xf32>) -> tensor<33x17xf32>
  %a = tandem.add %l, %b : tensor<33x17xf32>, tensor<17xf32> -> tensor<33x17xf32>
  %g = tandem.gelu %a : tensor<33x17xf32>
  %o = tandem.add %g, %r : tensor<33x17xf32>, tensor<33x17xf32> -> tensor<33x17xf32>
  %m = tandem.matmul %p, %q : (tensor<3x9x4xf32>, tensor<3x4x5xf32>) -> tensor<3x9x5xf32>
  %t = tandem.tanh %m : tensor<3x9x5xf32>
  %u = tandem.mul %t, %s : tensor<3x9x5xf32>, tensor<3x1x5xf32> -> tensor<3x9x5xf32>
  return %o, %u : tensor<33x17xf32>, tensor<3x9x5xf32>
}
""", [x, w, b, r, values((3, 9, 4)), values((3, 4, 5)), values((3, 1, 5))]))
    # conv + bias + relu + residual; a depthwise conv + sigmoid; a GEMM whose
    # product is also a result (not fused into its relu).
    models.append(("""func.func @main(%i: tensor<2x3x11x11xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %r: tensor<2x4x11x11xf32>, %dw: tensor<3x1x3x3xf32>, %x: tensor<8x8xf32>) -> (tensor<2x4x11x11xf32>, tensor<2x3x5x5xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = tandem.conv2d %i, %w, %b {padding = array<i64: 1, 1>} : (tensor<2x3x11x11xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x11x11xf32>
  %cr = tandem.relu %c : tensor<2x4x11x11xf32>
  %co = tandem.add %cr, %r : tensor<2x4x11x11xf32>, tensor<2x4x11x11xf32> -> tensor<2x4x11x11xf32>
  %d = tandem.conv2d %i, %dw {groups = 3 : i64, strides = array<i64: 2, 2>} : (tensor<2x3x11x11xf32>, tensor<3x1x3x3xf32>) -> tensor<2x3x5x5xf32>
  %ds = tandem.sigmoid %d : tensor<2x3x5x5xf32>
  %m = tandem.matmul %x, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %mr = tandem.relu %m : tensor<8x8xf32>
  return %co, %ds, %m, %mr : tensor<2x4x11x11xf32>, tensor<2x3x5x5xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
""", [values((2, 3, 11, 11)), values((4, 3, 3, 3)), values((4,)),
      values((2, 4, 11, 11)), values((3, 1, 3, 3)), values((8, 8))]))
    return models


def same_bits(a, b):
    if a.shape != b.shape:
        return False
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | both_nan))


def main():
    compiler, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    failures = fused_groups = assembled_modules = 0
    ptxas = os.environ.get("TANDEM_PTXAS")
    generated = [model(index) for index in range(24)] + epilogue_models()
    models = len(generated)
    for index, (text, inputs) in enumerate(generated):
        directory = os.path.join(workdir, f"model{index}")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "model.mlir")
        with open(path, "w") as f:
            f.write(text)
        outputs = {}
        for variant, flags in [("fused-cpu", ["--strategy=all-cpu"]),
                               ("plain-cpu", ["--strategy=all-cpu",
                                              "--fuse=false"]),
                               ("fused-gpu", ["--strategy=all-gpu"])]:
            binary = os.path.join(directory, variant)
            compiled = subprocess.run([compiler, path, "-o", binary] + flags,
                                      capture_output=True, text=True)
            if compiled.returncode != 0:
                print(f"model {index} [{variant}]: FAILED to compile\n"
                      f"{compiled.stderr}")
                failures += 1
                break
            if variant == "fused-gpu" and ptxas:
                # Every generated PTX module assembles for sm_90.
                ptx = binary + ".ptx"
                subprocess.run([compiler, path, "-o", ptx, "--emit=ptx"] +
                               flags, check=True)
                assembled = subprocess.run(
                    [ptxas, "-arch=sm_90", ptx, "-o", binary + ".cubin"],
                    capture_output=True, text=True)
                if assembled.returncode != 0:
                    print(f"model {index}: FAILED ptxas\n{assembled.stderr}")
                    failures += 1
                else:
                    assembled_modules += 1
            outputs[variant], profile = tandem_e2e.run(
                binary, inputs, {}, os.path.join(directory, variant + ".run"),
                ["--profile"])
            if variant == "fused-cpu":
                fused_groups += profile.count("fused(")
        if len(outputs) < 3:
            continue
        for variant in ("fused-cpu", "fused-gpu"):
            for k, (want, got) in enumerate(zip(outputs["plain-cpu"],
                                                outputs[variant])):
                if not same_bits(want, got):
                    bad = ~((want.view(np.uint32) == got.view(np.uint32)) |
                            (np.isnan(want) & np.isnan(got)))
                    where = np.argwhere(bad)[:3].tolist()
                    print(f"model {index} [{variant}] result {k}: FAILED "
                          f"at {where}: {got[bad][:3]} vs {want[bad][:3]}\n"
                          f"{text}")
                    failures += 1
    print(f"{models} models, {fused_groups} fused groups, "
          f"{assembled_modules} PTX modules assembled, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
