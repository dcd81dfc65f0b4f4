"""Fused and unfused models give the same bits.

Random chains of the fusible ops (every float arithmetic op and unary
function, compares, selects by their masks and by mask inputs, casts
between f32 and i1, constants), some ending in a reduction over trailing
axes (sum, mean, max, min: rows of 1 to 40003 elements, each fold path of
the prebuilt reduction), over inputs that broadcast in every way NumPy allows (leading
dimensions missing, dimensions of 1 anywhere, scalars), fed NaN, +-inf, -0,
huge and tiny values beside ordinary ones. Each chain reads earlier values
of the chain again (diamonds), and some of its intermediate values are also
results of the model, so they must stay materialized. Every model is
compiled fused (the default) and with --fuse=false, all on the CPU, and
fused with every op on the GPU (sim backend, which runs the same generated
kernels), the generated kernels calling libm once per lane as the prebuilt
ones do (--vector-math=libm); the outputs must be equal bit for bit, NaN
meeting NaN. Where
the CUDA toolkit's ptxas is found ($TANDEM_PTXAS), each model's GPU kernels
(--emit=ptx) are assembled for sm_90. The
shapes include rows long enough that the thread pool splits one row across
chunks. Three models more start chains with GEMMs and convolutions (fused
as a producer and its epilogue), one whose product is also a result; one
ends groups with softmaxes and a layer norm (run in place); three
read their inputs through views (transposes, strided slices, broadcasts,
attention's head split, GPT-2's flattened to [B*H, S, D]), checked
against NumPy too.

Usage: fusion_check.py TANDEM_COMPILE WORKDIR [cuda]
With "cuda", the fused GPU models run on a CUDA GPU instead (the fused CPU
ones are left out) and agree with the unfused CPU ones within close()'s
tolerance, not bit for bit.
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


PREDICATES = ["eq", "ne", "lt", "le", "gt", "ge"]
REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]
CONSTANTS = [0.0, -0.0, 1.0, -2.5, 0.125, 3e38, np.inf, -np.inf, np.nan]


def tensor_type(shape, element="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


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


def mask_step(name, shape, current, other_pool, new_mask, lines):
    """Appends ops computing `name` from `current` through a mask: a
    compare of two values chosen by a select, a select by a mask input
    (broadcast), or a float turned into a mask and back (x != 0)."""
    full = tensor_type(shape)
    other, other_shape = other_pool[rng.integers(len(other_pool))]
    kind = rng.integers(3)
    if kind == 0:
        predicate = rng.choice(PREDICATES)
        lines.append(f"  {name}m = tandem.compare {predicate}, {current}, "
                     f"{other} : ({full}, {tensor_type(other_shape)}) -> "
                     f"{tensor_type(shape, 'i1')}")
        mask, mask_shape = f"{name}m", shape
    elif kind == 1:
        mask, mask_shape = new_mask(shape)
    else:
        lines.append(f"  {name}m = tandem.cast {current} : {full} -> "
                     f"{tensor_type(shape, 'i1')}")
        lines.append(f"  {name}f = tandem.cast {name}m : "
                     f"{tensor_type(shape, 'i1')} -> {full}")
        lines.append(f"  {name} = tandem.mul {name}f, {other} : {full}, "
                     f"{tensor_type(other_shape)} -> {full}")
        return
    chosen, chosen_shape = (current, shape), (other, other_shape)
    if rng.random() < 0.5:
        chosen, chosen_shape = chosen_shape, chosen
    lines.append(f"  {name} = tandem.select {mask}, {chosen[0]}, "
                 f"{chosen_shape[0]} : ({tensor_type(mask_shape, 'i1')}, "
                 f"{tensor_type(chosen[1])}, {tensor_type(chosen_shape[1])}) "
                 f"-> {full}")


def chain(prefix, shape, args, lines, results, new_mask):
    """Appends one chain's ops; returns its value. `new_mask(shape)` adds a
    mask input that broadcasts to `shape` and gives (name, its shape)."""
    full = f"%{prefix}v0"
    lines.append(f"  {full} = tandem.add {args[0][0]}, {args[1][0]} : "
                 f"{tensor_type(args[0][1])}, {tensor_type(args[1][1])} -> "
                 f"{tensor_type(shape)}")
    chain_values = [full]
    for step in range(1, rng.integers(2, 9)):
        name = f"%{prefix}v{step}"
        if rng.random() < 0.2:
            mask_step(name, shape, chain_values[-1],
                      [(v, shape) for v in chain_values] + args, new_mask,
                      lines)
        elif rng.random() < 0.5:
            op = rng.choice(UNARY)
            lines.append(f"  {name} = tandem.{op} {chain_values[-1]} : "
                         f"{tensor_type(shape)}")
        else:
            op = rng.choice(BINARY)
            other_pool = [(v, shape) for v in chain_values] + args
            other, other_shape = other_pool[rng.integers(len(other_pool))]
            if rng.random() < 0.15:
                # A constant (computed in the group's body, not read).
                other, other_shape = f"{name}k", broadcast_shape_of(shape)
                value = np.float32(rng.choice(CONSTANTS)).view(np.uint32)
                lines.append(f"  {other} = tandem.fill(0x{int(value):08X} : "
                             f"f32) : {tensor_type(other_shape)}")
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
    last = chain_values[-1]
    if not shape or rng.random() < 0.6:
        results.append((last, shape))
        return
    # A reduction over trailing axes ends the chain (and its group, where
    # it folds at most 32768 elements an output), kept as 1s or dropped,
    # the axes named from the front or the back, in any order.
    kind = rng.choice(REDUCTIONS)
    count = int(rng.integers(1, len(shape) + 1))
    first = len(shape) - count
    axes = [d - len(shape) if rng.random() < 0.5 else d
            for d in range(first, len(shape))]
    rng.shuffle(axes)
    keep = bool(rng.random() < 0.5)
    reduced = shape[:first] + ((1,) * count if keep else ())
    name = f"%{prefix}r"
    lines.append(f"  {name} = tandem.{kind} {last} {{axes = array<i64: "
                 f"{', '.join(map(str, axes))}>, keepdims = "
                 f"{str(keep).lower()}}} : {tensor_type(shape)} -> "
                 f"{tensor_type(reduced)}")
    results.append((name, reduced))


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
        def new_mask(shape):
            mask_shape = broadcast_shape_of(shape)
            inputs.append(rng.random(mask_shape) < 0.5)
            return f"%a{len(inputs) - 1}", mask_shape
        chain(f"c{c}", shape, args, lines, results, new_mask)
    signature = ", ".join(
        f"%a{k}: {tensor_type(x.shape, 'i1' if x.dtype == bool else 'f32')}"
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
    # Normalizations ending groups: attention's scaled scores and softmax;
    # a linear, its residual and a layer norm over the last two dimensions;
    # a softmax along the first axis (strided rows, in place) of an
    # elementwise chain; a log_softmax of scaled logits (rows of 70: the
    # GPU's block-per-row kernel) and an l2_normalize along the first axis
    # and along the last.
    models.append(("""func.func @main(%q: tensor<2x3x9x16xf32>, %k: tensor<2x3x16x9xf32>, %c: tensor<f32>, %x: tensor<4x5x24xf32>, %w: tensor<24x24xf32>, %b: tensor<24xf32>, %g: tensor<5x24xf32>, %h: tensor<5x24xf32>, %y: tensor<7x33xf32>, %z: tensor<5x70xf32>) -> (tensor<2x3x9x9xf32>, tensor<4x5x24xf32>, tensor<7x33xf32>, tensor<5x70xf32>, tensor<7x33xf32>, tensor<5x70xf32>) {
  %m = tandem.matmul %q, %k : (tensor<2x3x9x16xf32>, tensor<2x3x16x9xf32>) -> tensor<2x3x9x9xf32>
  %s = tandem.mul %m, %c : tensor<2x3x9x9xf32>, tensor<f32> -> tensor<2x3x9x9xf32>
  %p = tandem.softmax %s {axis = -1 : i64} : tensor<2x3x9x9xf32>
  %l = tandem.linear %x, %w, %b : (tensor<4x5x24xf32>, tensor<24x24xf32>, tensor<24xf32>) -> tensor<4x5x24xf32>
  %r = tandem.add %x, %l : tensor<4x5x24xf32>, tensor<4x5x24xf32> -> tensor<4x5x24xf32>
  %n = tandem.layer_norm %r, %g, %h {axis = 1 : i64} : (tensor<4x5x24xf32>, tensor<5x24xf32>, tensor<5x24xf32>) -> tensor<4x5x24xf32>
  %t = tandem.tanh %y : tensor<7x33xf32>
  %u = tandem.add %t, %y : tensor<7x33xf32>, tensor<7x33xf32> -> tensor<7x33xf32>
  %v = tandem.softmax %u {axis = 0 : i64} : tensor<7x33xf32>
  %zs = tandem.mul %z, %c : tensor<5x70xf32>, tensor<f32> -> tensor<5x70xf32>
  %ls = tandem.log_softmax %zs {axis = -1 : i64} : tensor<5x70xf32>
  %ys = tandem.abs %y : tensor<7x33xf32>
  %l2 = tandem.l2_normalize %ys {axis = 0 : i64, epsilon = 1.0e-6 : f32} : tensor<7x33xf32>
  %zn = tandem.neg %z : tensor<5x70xf32>
  %l3 = tandem.l2_normalize %zn {axis = -1 : i64} : tensor<5x70xf32>
  return %p, %n, %v, %ls, %l2, %l3 : tensor<2x3x9x9xf32>, tensor<4x5x24xf32>, tensor<7x33xf32>, tensor<5x70xf32>, tensor<7x33xf32>, tensor<5x70xf32>
}
""", [values((2, 3, 9, 16)), values((2, 3, 16, 9)), np.float32(0.25) * np.ones((), np.float32),
      values((4, 5, 24)), values((24, 24)), values((24,)), values((5, 24)),
      values((5, 24)), values((7, 33)), values((5, 70))]))
    return models


def view_models():
    """Groups that read their inputs through views (transposes whose rows
    are strided, strided slices, broadcasts, reshapes between them), and
    chains of views alone (attention's head split) that become one copy.
    The ops are exact in float32 (add, sub, mul, neg, maximum), so each
    model also has NumPy's answer, bit for bit."""
    models = []
    # A transposed operand (rows of stride 37: lanes gathered one by one,
    # with a tail), a strided slice with an offset, a broadcast_to seen
    # transposed.
    x, y, z, v = (values((16, 37)), values((37, 16)), values((9, 120)),
                  values((37, 1)))
    text = """func.func @main(%x: tensor<16x37xf32>, %y: tensor<37x16xf32>, %z: tensor<9x120xf32>, %v: tensor<37x1xf32>) -> (tensor<16x37xf32>, tensor<4x37xf32>) {
  %t = tandem.transpose %y {perm = array<i64: 1, 0>} : tensor<37x16xf32> -> tensor<16x37xf32>
  %a = tandem.add %x, %t : tensor<16x37xf32>, tensor<16x37xf32> -> tensor<16x37xf32>
  %b = tandem.broadcast_to %v : tensor<37x1xf32> -> tensor<37x16xf32>
  %bt = tandem.transpose %b {perm = array<i64: 1, 0>} : tensor<37x16xf32> -> tensor<16x37xf32>
  %m = tandem.mul %a, %bt : tensor<16x37xf32>, tensor<16x37xf32> -> tensor<16x37xf32>
  %s = tandem.slice %z {starts = array<i64: 1, 5>, limits = array<i64: 9, 116>, strides = array<i64: 2, 3>} : tensor<9x120xf32> -> tensor<4x37xf32>
  %sr = tandem.reshape %s : tensor<4x37xf32> -> tensor<4x1x37xf32>
  %n = tandem.neg %m : tensor<16x37xf32>
  %c = tandem.slice %n {starts = array<i64: 0, 0>, limits = array<i64: 4, 37>} : tensor<16x37xf32> -> tensor<4x37xf32>
  %d = tandem.sub %c, %s : tensor<4x37xf32>, tensor<4x37xf32> -> tensor<4x37xf32>
  %e = tandem.maximum %d, %s : tensor<4x37xf32>, tensor<4x37xf32> -> tensor<4x37xf32>
  return %n, %e : tensor<16x37xf32>, tensor<4x37xf32>
}
"""
    n = -((x + y.T) * np.broadcast_to(v, (37, 16)).T)
    sl = z[1:9:2, 5:116:3]
    d = n[:4] - sl
    e = np.where(np.isnan(d) | np.isnan(sl), np.float32(np.nan),
                 np.maximum(d, sl))
    models.append((text, [x, y, z, v], [n, e]))
    # Attention's head split of a [B, S, 3*H*D] projection: q, k^T and v
    # are each one group of views; the scores read through them.
    p = values((2, 8, 48))
    text = """func.func @main(%p: tensor<2x8x48xf32>) -> (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) {
  %r = tandem.reshape %p : tensor<2x8x48xf32> -> tensor<2x8x3x16xf32>
  %t = tandem.transpose %r {perm = array<i64: 2, 0, 1, 3>} : tensor<2x8x3x16xf32> -> tensor<3x2x8x16xf32>
  %q0 = tandem.slice %t {starts = array<i64: 0, 0, 0, 0>, limits = array<i64: 1, 2, 8, 16>} : tensor<3x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %k0 = tandem.slice %t {starts = array<i64: 1, 0, 0, 0>, limits = array<i64: 2, 2, 8, 16>} : tensor<3x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %v0 = tandem.slice %t {starts = array<i64: 2, 0, 0, 0>, limits = array<i64: 3, 2, 8, 16>} : tensor<3x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %q1 = tandem.reshape %q0 : tensor<1x2x8x16xf32> -> tensor<2x8x2x8xf32>
  %k1 = tandem.reshape %k0 : tensor<1x2x8x16xf32> -> tensor<2x8x2x8xf32>
  %v1 = tandem.reshape %v0 : tensor<1x2x8x16xf32> -> tensor<2x8x2x8xf32>
  %q = tandem.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %k2 = tandem.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %v = tandem.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %k = tandem.transpose %k2 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %s = tandem.matmul %q, %k : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %w = tandem.add %v, %k : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  return %s, %w, %q : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>
}
"""
    heads = p.reshape(2, 8, 3, 2, 8).transpose(2, 0, 3, 1, 4)  # [3,B,H,S,D]
    q, k, vv = heads[0], heads[1].transpose(0, 1, 3, 2), heads[2]
    # The scores are a GEMM (rounding differs from NumPy's): checked
    # against the unfused model only.
    models.append((text, [p], [None, vv + k, q]))
    # GPT-2's head split flattened to [B*H, S, D]: a group of views alone,
    # read over [B, H, S, D] (its B*H dimension is not one stride of p).
    text = """func.func @main(%p: tensor<2x8x48xf32>) -> (tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>) {
  %k0 = tandem.slice %p {starts = array<i64: 0, 0, 16>, limits = array<i64: 2, 8, 32>} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %k1 = tandem.reshape %k0 : tensor<2x8x16xf32> -> tensor<2x8x2x8xf32>
  %k2 = tandem.transpose %k1 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %k = tandem.reshape %k2 : tensor<2x2x8x8xf32> -> tensor<4x8x8xf32>
  %v0 = tandem.slice %p {starts = array<i64: 0, 0, 32>, limits = array<i64: 2, 8, 48>} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %v1 = tandem.reshape %v0 : tensor<2x8x16xf32> -> tensor<2x8x2x8xf32>
  %v2 = tandem.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %v = tandem.reshape %v2 : tensor<2x2x8x8xf32> -> tensor<4x8x8xf32>
  %s = tandem.matmul %k, %v : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  return %k, %v, %s : tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>
}
"""
    split = p.reshape(2, 8, 3, 2, 8)
    models.append((text, [p], [
        np.ascontiguousarray(split[:, :, 1].transpose(0, 2, 3, 1)).reshape(4, 8, 8),
        np.ascontiguousarray(split[:, :, 2].transpose(0, 2, 1, 3)).reshape(4, 8, 8),
        None]))
    return models


def same_bits(a, b):
    if a.shape != b.shape:
        return False
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | both_nan))


def close(a, b, tolerance=1e-4):
    """On a real GPU (libdevice's functions, fused multiply-adds): NaN where
    the CPU has NaN, the same infinities, finite values within TOLERANCE
    relative (absolute below 1)."""
    if a.shape != b.shape:
        return False
    nan = np.isnan(a) | np.isnan(b)
    inf = ~nan & (np.isinf(a) | np.isinf(b))
    finite = ~nan & ~inf
    with np.errstate(all="ignore"):
        error = np.abs(a.astype(np.float64) - b.astype(np.float64))
        bound = tolerance * np.maximum(1.0, np.abs(a.astype(np.float64)))
    return bool(np.all(np.isnan(a) == np.isnan(b)) and np.all(a[inf] == b[inf])
                and np.all(error[finite] <= bound[finite]))


def main():
    compiler, workdir = sys.argv[1], sys.argv[2]
    # "cuda": the fused GPU model runs on a real GPU and is compared with the
    # unfused CPU model within close()'s tolerance (the sim runs the CPU's
    # generated code, so it is compared bit for bit).
    backend = sys.argv[3] if len(sys.argv) > 3 else "sim"
    os.makedirs(workdir, exist_ok=True)
    failures = fused_groups = assembled_modules = 0
    ptxas = os.environ.get("TANDEM_PTXAS")
    generated = [model(index) + (None,) for index in range(24)] + \
        [m + (None,) for m in epilogue_models()] + view_models()
    models = len(generated)
    for index, (text, inputs, expected) in enumerate(generated):
        directory = os.path.join(workdir, f"model{index}")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "model.mlir")
        with open(path, "w") as f:
            f.write(text)
        outputs = {}
        # libm once per lane in the generated kernels, as the prebuilt ones
        # compute (libmvec's functions, the default on AVX2, round
        # differently: fused-numerics.test checks them against NumPy).
        variants = [("fused-cpu", ["--strategy=all-cpu", "--vector-math=libm"]),
                    ("plain-cpu", ["--strategy=all-cpu", "--fuse=false"]),
                    ("fused-gpu", ["--strategy=all-gpu", "--vector-math=libm"])]
        if backend == "cuda":
            variants = variants[1:]
        for variant, flags in variants:
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
            try:
                outputs[variant], profile = tandem_e2e.run(
                    binary, inputs, {}, os.path.join(directory, variant + ".run"),
                    ["--profile", "--device-backend", backend])
            except SystemExit as failed:  # the binary failed: say so, go on
                print(f"model {index} [{variant}]: FAILED to run\n{failed}")
                failures += 1
                break
            if variant == ("fused-gpu" if backend == "cuda" else "fused-cpu"):
                fused_groups += profile.count("fused(")
        if len(outputs) < len(variants):
            continue
        for k, want in enumerate(expected or []):
            if want is not None and not same_bits(want, outputs["plain-cpu"][k]):
                print(f"model {index} result {k}: FAILED against NumPy\n{text}")
                failures += 1
        for variant in ("fused-cpu", "fused-gpu"):
            if variant not in outputs:
                continue
            agree = close if variant == "fused-gpu" and backend == "cuda" else same_bits
            for k, (want, got) in enumerate(zip(outputs["plain-cpu"],
                                                outputs[variant])):
                if not agree(want, got):
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
