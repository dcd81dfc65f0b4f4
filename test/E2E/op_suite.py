"""Every op of the IR contract compiled and run, against NumPy.

Each case is a one- or few-op model; it is compiled twice (all ops on the
CPU; all on the GPU, run on the sim backend) and its outputs compared with a
NumPy reference. Tolerances: f32 rtol = atol = 1e-5 (1e-4 for GEMM-like and
normalizing ops, which sum many products), f16 1e-3 relative, bf16 through
casts 1e-2; integers and masks exactly; NaN must meet NaN and infinities
their own sign (the "special values" cases feed NaN, ±inf and -0 to every
op where NumPy/PyTorch define what comes out).

Usage: op_suite.py TANDEM_COMPILE WORKDIR [CASE-NAME-SUBSTRING] [BACKEND]
BACKEND (default sim) runs the GPU-placed ops: sim or cuda.
       op_suite.py --list-ops
prints the tandem ops the cases use, one per line (the unit test that checks
every op has a kernel and a case reads it).
"""
import concurrent.futures
import math
import re
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

rng = np.random.default_rng(2024)
erf = np.vectorize(math.erf)


def f32(*shape, positive=False):
    values = rng.standard_normal(shape).astype(np.float32)
    return np.abs(values) + np.float32(0.1) if positive else values


def ty(array):
    dtype = {np.float32: "f32", np.float16: "f16", np.int64: "i64",
             np.int32: "i32", np.bool_: "i1"}[array.dtype.type]
    return "tensor<" + "".join(f"{d}x" for d in array.shape) + dtype + ">"


def shape_ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


CASES = []


def case(name, inputs, body, result_type, reference, tol=1e-5):
    """`body` uses %a0, %a1, ... and yields %r."""
    args = ", ".join(f"%a{k}: {ty(x)}" for k, x in enumerate(inputs))
    mlir = (f"func.func @main({args}) -> {result_type} {{\n{body}\n"
            f"  return %r : {result_type}\n}}\n")
    CASES.append((name, mlir, inputs, reference, tol))


# Elementwise binary, with broadcasting.
col, row = f32(4, 1), f32(3)
for op, fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
               ("div", np.divide), ("maximum", np.maximum),
               ("minimum", np.minimum)]:
    case(op, [col, row],
         f"  %r = tandem.{op} %a0, %a1 : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>",
         "tensor<4x3xf32>", lambda a, b, fn=fn: fn(a, b))
# Rows a multiple of 4 long: the GPU's f32 kernels go 4 elements a thread,
# with the other operand dense, a row, a column or a scalar broadcast (and
# NaN, infinities and -0 among the values).
quads = f32(6, 16)
quads[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
for op, fn, other, other_ty in [
        ("add", np.add, f32(6, 16), "tensor<6x16xf32>"),
        ("mul", np.multiply, f32(16), "tensor<16xf32>"),
        ("sub", np.subtract, f32(6, 1), "tensor<6x1xf32>"),
        ("maximum", np.maximum, np.float32(0.5) * np.ones((), np.float32), "tensor<f32>")]:
    case(f"{op} by quads, other {other_ty}", [quads, other],
         f"  %r = tandem.{op} %a0, %a1 : tensor<6x16xf32>, {other_ty} -> tensor<6x16xf32>",
         "tensor<6x16xf32>", lambda a, b, fn=fn: fn(a, b))
case("div by quads, one dimension", [f32(20), f32(20, positive=True)],
     "  %r = tandem.div %a0, %a1 : tensor<20xf32>", "tensor<20xf32>", np.divide)
case("exp by quads", [quads], "  %r = tandem.exp %a0 : tensor<6x16xf32>",
     "tensor<6x16xf32>", np.exp)
base, power = f32(6, positive=True), f32(6)
case("pow", [base, power], "  %r = tandem.pow %a0, %a1 : tensor<6xf32>",
     "tensor<6xf32>", lambda a, b: np.power(a, b))
ia, ib = rng.integers(-50, 50, (5,)), rng.integers(1, 9, (5,))
case("add i64", [ia, ib], "  %r = tandem.add %a0, %a1 : tensor<5xi64>",
     "tensor<5xi64>", lambda a, b: a + b)
ja, jb = ia.astype(np.int32), (ib * np.array([1, -1, 1, -1, 1])).astype(np.int32)
case("div i32 truncates", [ja, jb], "  %r = tandem.div %a0, %a1 : tensor<5xi32>",
     "tensor<5xi32>", lambda a, b: np.trunc(a / b).astype(np.int32))

# Elementwise unary.
x = f32(3, 5)
positive = f32(3, 5, positive=True)
for op, fn, data in [
        ("neg", np.negative, x), ("abs", np.abs, x), ("exp", np.exp, x),
        ("log", np.log, positive), ("sqrt", np.sqrt, positive),
        ("rsqrt", lambda v: 1 / np.sqrt(v), positive), ("tanh", np.tanh, x),
        ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), x),
        ("relu", lambda v: np.maximum(v, 0), x),
        ("gelu", lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2))), x),
        ("silu", lambda v: v / (1 + np.exp(-v)), x),
        ("floor", np.floor, x * 4), ("ceil", np.ceil, x * 4),
        ("round", np.round, x * 4), ("trunc", np.trunc, x * 4),
        ("erf", erf, x)]:
    case(op, [data], f"  %r = tandem.{op} %a0 : tensor<3x5xf32>",
         "tensor<3x5xf32>", lambda v, fn=fn: fn(v).astype(np.float32))
case("abs i64", [ia], "  %r = tandem.abs %a0 : tensor<5xi64>", "tensor<5xi64>",
     np.abs)

# Compare, select, cast.
for predicate, fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                      ("le", np.less_equal), ("gt", np.greater),
                      ("ge", np.greater_equal)]:
    left = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    right = np.array([3, 2, 1], np.float32)
    case(f"compare {predicate}", [left, right],
         f"  %r = tandem.compare {predicate}, %a0, %a1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>",
         "tensor<2x3xi1>", lambda a, b, fn=fn: fn(a, b))
cond = rng.random((2, 3)) > 0.5
case("select", [cond, f32(2, 3), f32(3)],
     "  %r = tandem.select %a0, %a1, %a2 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>",
     "tensor<2x3xf32>", lambda c, a, b: np.where(c, a, b))
case("cast f32 to i32", [f32(6) * 5],
     "  %r = tandem.cast %a0 : tensor<6xf32> -> tensor<6xi32>", "tensor<6xi32>",
     lambda v: np.trunc(v).astype(np.int32))
case("cast f32 to f16", [f32(6)],
     "  %r = tandem.cast %a0 : tensor<6xf32> -> tensor<6xf16>", "tensor<6xf16>",
     lambda v: v.astype(np.float16), tol=0)
case("cast i64 to f32", [ia], "  %r = tandem.cast %a0 : tensor<5xi64> -> tensor<5xf32>",
     "tensor<5xf32>", lambda v: v.astype(np.float32))
case("cast f32 to i1", [np.array([0, 1.5, -2, 0], np.float32)],
     "  %r = tandem.cast %a0 : tensor<4xf32> -> tensor<4xi1>", "tensor<4xi1>",
     lambda v: v != 0)

# Linear algebra.
case("matmul batched", [f32(2, 1, 4, 5), f32(3, 5, 6)],
     "  %r = tandem.matmul %a0, %a1 : (tensor<2x1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>",
     "tensor<2x3x4x6xf32>", np.matmul, tol=1e-4)
case("linear with bias", [f32(2, 7, 13), f32(16, 13), f32(16)],
     "  %r = tandem.linear %a0, %a1, %a2 : (tensor<2x7x13xf32>, tensor<16x13xf32>, tensor<16xf32>) -> tensor<2x7x16xf32>",
     "tensor<2x7x16xf32>", lambda x, w, b: x @ w.T + b, tol=1e-4)
# Skinny products (a few rows or columns against many) run in blocks of the
# long side where OpenBLAS has small-matrix kernels: a linear of 3 rows in
# 4 blocks of columns (the last one short), with its bias and a relu
# epilogue; a matmul of 5 columns in 4 blocks of rows.
case("linear skinny, 3 rows, then relu", [f32(3, 300), f32(1000, 300), f32(1000)],
     "  %l = tandem.linear %a0, %a1, %a2 : (tensor<3x300xf32>, tensor<1000x300xf32>, tensor<1000xf32>) -> tensor<3x1000xf32>\n"
     "  %r = tandem.relu %l : tensor<3x1000xf32>",
     "tensor<3x1000xf32>", lambda x, w, b: np.maximum(x @ w.T + b, 0), tol=1e-3)
case("matmul skinny, 5 columns", [f32(700, 300), f32(300, 5)],
     "  %r = tandem.matmul %a0, %a1 : (tensor<700x300xf32>, tensor<300x5xf32>) -> tensor<700x5xf32>",
     "tensor<700x5xf32>", np.matmul, tol=1e-3)
case("linear", [f32(5, 13), f32(4, 13)],
     "  %r = tandem.linear %a0, %a1 : (tensor<5x13xf32>, tensor<4x13xf32>) -> tensor<5x4xf32>",
     "tensor<5x4xf32>", lambda x, w: x @ w.T, tol=1e-4)


def conv_reference(x, w, b, stride, pad, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    og = o // groups
    for oi in range(o):
        g = oi // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dilation[0]: i * dilation[0] + stride[0] * oh: stride[0],
                           j * dilation[1]: j * dilation[1] + stride[1] * ow: stride[1]]
                out[:, oi] += np.einsum("nchw,c->nhw", patch, w[oi, :, i, j])
        if b is not None:
            out[:, oi] += b[oi]
    return out.astype(np.float32)


case("conv2d grouped dilated", [f32(1, 4, 9, 9), f32(6, 2, 3, 3), f32(6)],
     "  %r = tandem.conv2d %a0, %a1, %a2 {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 2, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>",
     "tensor<1x6x4x4xf32>",
     lambda x, w, b: conv_reference(x, w, b, (2, 2), (1, 1), (2, 2), 2), tol=1e-4)
# Eight groups of two filters over two images: enough groups that the CPU
# runs them side by side (one a task, each with its own columns), with the
# bias, and with a relu the fusion puts in the convolution's epilogue.
case("conv2d 8 groups, 2 images", [f32(2, 16, 12, 12), f32(16, 2, 3, 3), f32(16)],
     "  %r = tandem.conv2d %a0, %a1, %a2 {padding = array<i64: 1, 1>, groups = 8 : i64} : (tensor<2x16x12x12xf32>, tensor<16x2x3x3xf32>, tensor<16xf32>) -> tensor<2x16x12x12xf32>",
     "tensor<2x16x12x12xf32>",
     lambda x, w, b: conv_reference(x, w, b, (1, 1), (1, 1), (1, 1), 8), tol=1e-4)
case("conv2d 8 groups, 1 image, then relu", [f32(1, 16, 20, 20), f32(24, 2, 3, 3)],
     "  %c = tandem.conv2d %a0, %a1 {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>, groups = 8 : i64} : (tensor<1x16x20x20xf32>, tensor<24x2x3x3xf32>) -> tensor<1x24x10x10xf32>\n"
     "  %r = tandem.relu %c : tensor<1x24x10x10xf32>",
     "tensor<1x24x10x10xf32>",
     lambda x, w: np.maximum(conv_reference(x, w, None, (2, 2), (1, 1), (1, 1), 8), 0), tol=1e-4)
case("conv2d depthwise, strides and dilation differ by axis", [f32(2, 4, 9, 9), f32(4, 1, 3, 3), f32(4)],
     "  %r = tandem.conv2d %a0, %a1, %a2 {strides = array<i64: 2, 1>, padding = array<i64: 1, 2>, dilation = array<i64: 1, 2>, groups = 4 : i64} : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<2x4x5x9xf32>",
     "tensor<2x4x5x9xf32>",
     lambda x, w, b: conv_reference(x, w, b, (2, 1), (1, 2), (1, 2), 4), tol=1e-4)
# A depthwise convolution runs 16 channels side by side where its output
# rows are under 32 wide (a block and a tail of 4 here, with the epilogue),
# plane by plane otherwise.
case("conv2d depthwise narrow, 20 channels, then relu", [f32(2, 20, 7, 7), f32(20, 1, 3, 3), f32(20)],
     "  %c = tandem.conv2d %a0, %a1, %a2 {padding = array<i64: 1, 1>, groups = 20 : i64} : (tensor<2x20x7x7xf32>, tensor<20x1x3x3xf32>, tensor<20xf32>) -> tensor<2x20x7x7xf32>\n"
     "  %r = tandem.relu %c : tensor<2x20x7x7xf32>",
     "tensor<2x20x7x7xf32>",
     lambda x, w, b: np.maximum(conv_reference(x, w, b, (1, 1), (1, 1), (1, 1), 20), 0), tol=1e-4)
case("conv2d depthwise wide rows", [f32(1, 3, 34, 34), f32(3, 1, 5, 5)],
     "  %r = tandem.conv2d %a0, %a1 {padding = array<i64: 2, 2>, groups = 3 : i64} : (tensor<1x3x34x34xf32>, tensor<3x1x5x5xf32>) -> tensor<1x3x34x34xf32>",
     "tensor<1x3x34x34xf32>",
     lambda x, w: conv_reference(x, w, None, (1, 1), (2, 2), (1, 1), 3), tol=1e-4)
case("conv2d", [f32(2, 3, 8, 8), f32(4, 3, 3, 3)],
     "  %r = tandem.conv2d %a0, %a1 {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>",
     "tensor<2x4x8x8xf32>",
     lambda x, w: conv_reference(x, w, None, (1, 1), (1, 1), (1, 1), 1), tol=1e-4)
# The CPU's im2col has two paths: output rows narrower than 16 gather from a
# zero-padded copy of each plane, wider ones are copied row by row between
# zero fills. Each with strides, padding and dilation that differ by axis.
case("conv2d narrow rows, axes differ, 2 images", [f32(2, 5, 7, 6), f32(4, 5, 3, 2), f32(4)],
     "  %r = tandem.conv2d %a0, %a1, %a2 {strides = array<i64: 2, 1>, padding = array<i64: 2, 1>, dilation = array<i64: 1, 2>} : (tensor<2x5x7x6xf32>, tensor<4x5x3x2xf32>, tensor<4xf32>) -> tensor<2x4x5x6xf32>",
     "tensor<2x4x5x6xf32>",
     lambda x, w, b: conv_reference(x, w, b, (2, 1), (2, 1), (1, 2), 1), tol=1e-4)
case("conv2d wide rows, axes differ, 2 images", [f32(2, 3, 34, 40), f32(4, 3, 3, 3)],
     "  %r = tandem.conv2d %a0, %a1 {strides = array<i64: 1, 2>, padding = array<i64: 1, 2>, dilation = array<i64: 2, 1>} : (tensor<2x3x34x40xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x32x21xf32>",
     "tensor<2x4x32x21xf32>",
     lambda x, w: conv_reference(x, w, None, (1, 2), (1, 2), (2, 1), 1), tol=1e-4)

# A 1x1 convolution with unit strides multiplies each image's input in place
# where an image has 64 pixels or more, and the images' columns side by side
# below that.
case("conv2d 1x1 grouped, 2 images in place, then relu", [f32(2, 6, 8, 8), f32(4, 3, 1, 1), f32(4)],
     "  %c = tandem.conv2d %a0, %a1, %a2 {groups = 2 : i64} : (tensor<2x6x8x8xf32>, tensor<4x3x1x1xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>\n"
     "  %r = tandem.relu %c : tensor<2x4x8x8xf32>",
     "tensor<2x4x8x8xf32>",
     lambda x, w, b: np.maximum(conv_reference(x, w, b, (1, 1), (0, 0), (1, 1), 2), 0), tol=1e-4)
case("conv2d 1x1, 3 images side by side", [f32(3, 5, 3, 4), f32(7, 5, 1, 1), f32(7)],
     "  %r = tandem.conv2d %a0, %a1, %a2 : (tensor<3x5x3x4xf32>, tensor<7x5x1x1xf32>, tensor<7xf32>) -> tensor<3x7x3x4xf32>",
     "tensor<3x7x3x4xf32>",
     lambda x, w, b: conv_reference(x, w, b, (1, 1), (0, 0), (1, 1), 1), tol=1e-4)
case("conv2d 1x1 grouped, 3 images side by side, then relu",
     [f32(3, 6, 2, 3), f32(9, 2, 1, 1), f32(9)],
     "  %c = tandem.conv2d %a0, %a1, %a2 {groups = 3 : i64} : (tensor<3x6x2x3xf32>, tensor<9x2x1x1xf32>, tensor<9xf32>) -> tensor<3x9x2x3xf32>\n"
     "  %r = tandem.relu %c : tensor<3x9x2x3xf32>",
     "tensor<3x9x2x3xf32>",
     lambda x, w, b: np.maximum(conv_reference(x, w, b, (1, 1), (0, 0), (1, 1), 3), 0), tol=1e-4)

# Columns of one image beyond 2 MiB (8 x 5 x 5 rows of 64 x 64): the im2col
# and its GEMM go in bands of output rows (41 and 23), each GEMM writing
# its rows of every channel's plane; the bias and the relu per band.
case("conv2d in bands of output rows, bias, then relu",
     [f32(1, 8, 64, 64), f32(4, 8, 5, 5), f32(4)],
     "  %c = tandem.conv2d %a0, %a1, %a2 {padding = array<i64: 2, 2>} : (tensor<1x8x64x64xf32>, tensor<4x8x5x5xf32>, tensor<4xf32>) -> tensor<1x4x64x64xf32>\n"
     "  %r = tandem.relu %c : tensor<1x4x64x64xf32>",
     "tensor<1x4x64x64xf32>",
     lambda x, w, b: np.maximum(conv_reference(x, w, b, (1, 1), (2, 2), (1, 1), 1), 0), tol=1e-4)
# Two images, two groups, each image's columns (4 x 7 x 7 rows of 64 x 64)
# beyond 2 MiB: bands per image and per group.
case("conv2d grouped, 2 images in bands of output rows",
     [f32(2, 8, 64, 64), f32(6, 4, 7, 7)],
     "  %r = tandem.conv2d %a0, %a1 {padding = array<i64: 3, 3>, groups = 2 : i64} : (tensor<2x8x64x64xf32>, tensor<6x4x7x7xf32>) -> tensor<2x6x64x64xf32>",
     "tensor<2x6x64x64xf32>",
     lambda x, w: conv_reference(x, w, None, (1, 1), (3, 3), (1, 1), 2), tol=1e-4)
# Bands (42 and 8 output rows) with strides and dilation that differ by
# axis: each band's first input row is its output row times the stride.
case("conv2d in bands, strides and dilation differ by axis",
     [f32(1, 12, 100, 70), f32(5, 12, 5, 3), f32(5)],
     "  %r = tandem.conv2d %a0, %a1, %a2 {strides = array<i64: 2, 1>, padding = array<i64: 2, 1>, dilation = array<i64: 1, 2>} : (tensor<1x12x100x70xf32>, tensor<5x12x5x3xf32>, tensor<5xf32>) -> tensor<1x5x50x68xf32>",
     "tensor<1x5x50x68xf32>",
     lambda x, w, b: conv_reference(x, w, b, (2, 1), (2, 1), (1, 2), 1), tol=1e-4)


def pool_reference(x, k, s, p, mode):
    n, c, h, w = x.shape
    fill = -np.inf if mode == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow), np.float32)
    for y in range(oh):
        for xo in range(ow):
            window = xp[:, :, y * s:y * s + k, xo * s:xo * s + k]
            out[:, :, y, xo] = window.max((2, 3)) if mode == "max" else window.sum((2, 3)) / (k * k)
    return out


case("max_pool2d padded", [f32(1, 2, 7, 7)],
     "  %r = tandem.max_pool2d %a0 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x2x7x7xf32> -> tensor<1x2x4x4xf32>",
     "tensor<1x2x4x4xf32>", lambda x: pool_reference(x, 3, 2, 1, "max"))
case("avg_pool2d counts padding", [f32(1, 2, 6, 6)],
     "  %r = tandem.avg_pool2d %a0 {kernel = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x2x6x6xf32> -> tensor<1x2x4x4xf32>",
     "tensor<1x2x4x4xf32>", lambda x: pool_reference(x, 2, 2, 1, "avg"))
# The largest strides the verifier allows: one window per axis, the first.
big = 2147483647
case("conv2d with the largest stride", [f32(1, 2, 5, 5), f32(3, 2, 3, 3)],
     f"  %r = tandem.conv2d %a0, %a1 {{strides = array<i64: {big}, {big}>}} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x1x1xf32>",
     "tensor<1x3x1x1xf32>",
     lambda x, w: conv_reference(x, w, None, (1, 1), (0, 0), (1, 1), 1)[:, :, :1, :1],
     tol=1e-4)
case("max_pool2d with the largest stride", [f32(1, 2, 5, 5)],
     f"  %r = tandem.max_pool2d %a0 {{kernel = array<i64: 2, 2>, strides = array<i64: {big}, {big}>}} : tensor<1x2x5x5xf32> -> tensor<1x2x1x1xf32>",
     "tensor<1x2x1x1xf32>", lambda x: pool_reference(x, 2, 2, 0, "max")[:, :, :1, :1])
case("avg_pool2d with the largest stride", [f32(1, 2, 5, 5)],
     f"  %r = tandem.avg_pool2d %a0 {{kernel = array<i64: 2, 2>, strides = array<i64: {big}, {big}>}} : tensor<1x2x5x5xf32> -> tensor<1x2x1x1xf32>",
     "tensor<1x2x1x1xf32>", lambda x: pool_reference(x, 2, 2, 0, "avg")[:, :, :1, :1])
case("slice with the largest stride", [f32(5, 4)],
     f"  %r = tandem.slice %a0 {{starts = array<i64: 1, 0>, limits = array<i64: 5, 4>, strides = array<i64: {big}, 9223372036854775807>}} : tensor<5x4xf32> -> tensor<1x1xf32>",
     "tensor<1x1xf32>", lambda x: x[1:2, 0:1])
bn_var = f32(3, positive=True)
case("batch_norm", [f32(2, 3, 4, 4), f32(3), f32(3), f32(3), bn_var],
     "  %r = tandem.batch_norm %a0, %a1, %a2, %a3, %a4 {epsilon = 1.0e-3 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>",
     "tensor<2x3x4x4xf32>",
     lambda x, s, b, m, v: ((x - m[:, None, None]) / np.sqrt(v[:, None, None] + np.float32(1e-3)) * s[:, None, None] + b[:, None, None]),
     tol=1e-4)

# Normalization and reductions.
t = f32(2, 4, 5)


def softmax(v, axis):
    e = np.exp(v - v.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


case("softmax", [t], "  %r = tandem.softmax %a0 {axis = 1 : i64} : tensor<2x4x5xf32>",
     "tensor<2x4x5xf32>", lambda v: softmax(v, 1))
case("log_softmax", [t], "  %r = tandem.log_softmax %a0 {axis = -1 : i64} : tensor<2x4x5xf32>",
     "tensor<2x4x5xf32>", lambda v: np.log(softmax(v, -1)), tol=1e-4)
case("layer_norm", [t, f32(4, 5), f32(4, 5)],
     "  %r = tandem.layer_norm %a0, %a1, %a2 {axis = 1 : i64} : (tensor<2x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<2x4x5xf32>",
     "tensor<2x4x5xf32>",
     lambda v, g, b: (v - v.mean((1, 2), keepdims=True)) / np.sqrt(v.var((1, 2), keepdims=True) + 1e-5) * g + b,
     tol=1e-4)
# Values whose squares overflow f32: the statistics must not (rows of 100,
# a block per row on the GPU; rows of 10, a thread per row).
for cols in (100, 10):
    case(f"layer_norm of values near 1e30, rows of {cols}",
         [f32(3, cols) * np.float32(1e30), f32(cols), f32(cols)],
         f"  %r = tandem.layer_norm %a0, %a1, %a2 {{axis = 1 : i64}} : (tensor<3x{cols}xf32>, "
         f"tensor<{cols}xf32>, tensor<{cols}xf32>) -> tensor<3x{cols}xf32>",
         f"tensor<3x{cols}xf32>",
         lambda v, g, b: ((v.astype(np.float64) - v.astype(np.float64).mean(1, keepdims=True))
                          / v.astype(np.float64).std(1, keepdims=True) * g + b).astype(np.float32),
         tol=1e-4)
case("l2_normalize", [t], "  %r = tandem.l2_normalize %a0 {axis = 2 : i64} : tensor<2x4x5xf32>",
     "tensor<2x4x5xf32>",
     lambda v: v / np.maximum(np.sqrt((v * v).sum(2, keepdims=True)), 1e-12))
case("reduce_sum", [t], "  %r = tandem.reduce_sum %a0 {axes = array<i64: 0, 2>} : tensor<2x4x5xf32> -> tensor<4xf32>",
     "tensor<4xf32>", lambda v: v.sum((0, 2)), tol=1e-4)
case("reduce_mean keepdims", [t], "  %r = tandem.reduce_mean %a0 {axes = array<i64: -1>, keepdims = true} : tensor<2x4x5xf32> -> tensor<2x4x1xf32>",
     "tensor<2x4x1xf32>", lambda v: v.mean(-1, keepdims=True))
# Runs of 16 to 63 elements (a global average pool over 4x4 to 7x7 pixels)
# take four lanes in scalars: whole steps of four and a remainder.
case("reduce_mean over 5x5 pixels", [f32(2, 3, 5, 5)],
     "  %r = tandem.reduce_mean %a0 {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x5x5xf32> -> tensor<2x3x1x1xf32>",
     "tensor<2x3x1x1xf32>", lambda v: v.mean((2, 3), keepdims=True))
runs = f32(4, 19)
runs[1, 5], runs[2, 2], runs[2, 18], runs[3, 17] = np.inf, np.inf, -np.inf, np.nan
with np.errstate(invalid="ignore"):
    case("reduce_sum over runs of 19, with inf and NaN", [runs],
         "  %r = tandem.reduce_sum %a0 {axes = array<i64: 1>} : tensor<4x19xf32> -> tensor<4xf32>",
         "tensor<4xf32>", lambda v: v.sum(1), tol=1e-4)
case("reduce_sum i64 over runs of 18", [rng.integers(-2**40, 2**40, (4, 18))],
     "  %r = tandem.reduce_sum %a0 {axes = array<i64: 1>} : tensor<4x18xi64> -> tensor<4xi64>",
     "tensor<4xi64>", lambda v: v.sum(1))
case("reduce_max", [t], "  %r = tandem.reduce_max %a0 {axes = array<i64: 1>} : tensor<2x4x5xf32> -> tensor<2x5xf32>",
     "tensor<2x5xf32>", lambda v: v.max(1))
case("reduce_min i64", [rng.integers(-9, 9, (3, 4))],
     "  %r = tandem.reduce_min %a0 {axes = array<i64: 0>} : tensor<3x4xi64> -> tensor<4xi64>",
     "tensor<4xi64>", lambda v: v.min(0))
case("argmax", [t], "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<2x4x5xf32> -> tensor<2x5xi64>",
     "tensor<2x5xi64>", lambda v: v.argmax(1))

# Shape and indexing.
case("reshape", [t], "  %r = tandem.reshape %a0 : tensor<2x4x5xf32> -> tensor<8x5xf32>",
     "tensor<8x5xf32>", lambda v: v.reshape(8, 5))
case("transpose", [t], "  %r = tandem.transpose %a0 {perm = array<i64: 2, 0, 1>} : tensor<2x4x5xf32> -> tensor<5x2x4xf32>",
     "tensor<5x2x4xf32>", lambda v: v.transpose(2, 0, 1))
case("concat", [f32(2, 3), f32(2, 1), f32(2, 2)],
     "  %r = tandem.concat %a0, %a1, %a2 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>",
     "tensor<2x6xf32>", lambda a, b, c: np.concatenate([a, b, c], 1))
case("slice strided", [t], "  %r = tandem.slice %a0 {starts = array<i64: 1, 0, 1>, limits = array<i64: 2, 4, 5>, strides = array<i64: 1, 2, 3>} : tensor<2x4x5xf32> -> tensor<1x2x2xf32>",
     "tensor<1x2x2xf32>", lambda v: v[1:2, 0:4:2, 1:5:3])
case("broadcast_to", [f32(4, 1)], "  %r = tandem.broadcast_to %a0 : tensor<4x1xf32> -> tensor<3x4x5xf32>",
     "tensor<3x4x5xf32>", lambda v: np.broadcast_to(v, (3, 4, 5)))
table, ids = f32(10, 3), rng.integers(0, 10, (2, 4))
case("embedding", [table, ids], "  %r = tandem.embedding %a0, %a1 : (tensor<10x3xf32>, tensor<2x4xi64>) -> tensor<2x4x3xf32>",
     "tensor<2x4x3xf32>", lambda tb, i: tb[i])


def embedding_bag(table, ids, offsets, mode, weights=None, padding=-1,
                  include_last=False):
    """torch.nn.functional.embedding_bag, in float64."""
    bounds = list(offsets) + ([] if include_last else [len(ids)])
    out = np.zeros((len(bounds) - 1, table.shape[1]))
    for b in range(len(bounds) - 1):
        picked = [i for i in range(bounds[b], bounds[b + 1]) if ids[i] != padding]
        if not picked:
            continue
        rows = table[ids[picked]].astype(np.float64)
        if weights is not None:
            rows = rows * weights[picked, None]
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out.astype(table.dtype)


bag_table, bag_ids = f32(10, 3), rng.integers(0, 10, (9,))
bag_ids[4] = 7  # the padding row, in the second bag
bag_offsets = np.array([0, 3, 3, 7], np.int64)  # bag 1 is empty
bag_weights = f32(9)
for mode in ("sum", "mean", "max"):
    case(f"embedding_bag {mode}, an empty bag, padding_idx", [bag_table, bag_ids, bag_offsets],
         f'  %r = tandem.embedding_bag %a0, %a1, %a2 {{mode = "{mode}", padding_idx = 7 : i64}} '
         ": (tensor<10x3xf32>, tensor<9xi64>, tensor<4xi64>) -> tensor<4x3xf32>",
         "tensor<4x3xf32>", lambda tb, i, o, mode=mode: embedding_bag(tb, i, o, mode, padding=7))
case("embedding_bag sum with weights, i32 offsets, include_last_offset",
     [bag_table, bag_ids, np.array([0, 2, 6, 8], np.int32), bag_weights],
     '  %r = tandem.embedding_bag %a0, %a1, %a2, %a3 {mode = "sum", include_last_offset = true} '
     ": (tensor<10x3xf32>, tensor<9xi64>, tensor<4xi32>, tensor<9xf32>) -> tensor<3x3xf32>",
     "tensor<3x3xf32>", lambda tb, i, o, w: embedding_bag(tb, i, o, "sum", w, include_last=True))
case("embedding_bag mean f16", [bag_table.astype(np.float16), bag_ids, bag_offsets],
     '  %r = tandem.embedding_bag %a0, %a1, %a2 {mode = "mean"} '
     ": (tensor<10x3xf16>, tensor<9xi64>, tensor<4xi64>) -> tensor<4x3xf16>",
     "tensor<4x3xf16>", lambda tb, i, o: embedding_bag(tb, i, o, "mean"), tol=1e-3)
indices = np.array([0, -1, 2], np.int32)
case("gather negative index", [t, indices],
     "  %r = tandem.gather %a0, %a1 {axis = 1 : i64} : (tensor<2x4x5xf32>, tensor<3xi32>) -> tensor<2x3x5xf32>",
     "tensor<2x3x5xf32>", lambda v, i: np.take(v, i, axis=1))
offsets = np.array([1, 9], np.int64)
case("dynamic_slice clamps", [f32(4, 6), offsets],
     "  %r = tandem.dynamic_slice %a0, %a1 {sizes = array<i64: 2, 3>} : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<2x3xf32>",
     "tensor<2x3xf32>", lambda v, o: v[1:3, 3:6])
case("iota", [f32(1)], "  %r = tandem.iota {axis = 1 : i64} : tensor<2x3xi64>",
     "tensor<2x3xi64>", lambda _: np.broadcast_to(np.arange(3), (2, 3)))
case("fill", [f32(1)], "  %r = tandem.fill(2.5 : f32) : tensor<2x2xf32>",
     "tensor<2x2xf32>", lambda _: np.full((2, 2), 2.5, np.float32))
# Each element type's fill: the value converted once, then copied.
case("fill i64", [f32(1)], "  %r = tandem.fill(-3 : i64) : tensor<3xi64>",
     "tensor<3xi64>", lambda _: np.full(3, -3, np.int64))
case("fill i32", [f32(1)], "  %r = tandem.fill(-70000 : i32) : tensor<5xi32>",
     "tensor<5xi32>", lambda _: np.full(5, -70000, np.int32))
case("fill f16", [f32(1)], "  %r = tandem.fill(1.5 : f16) : tensor<3xf16>",
     "tensor<3xf16>", lambda _: np.full(3, 1.5, np.float16), tol=1e-3)
case("shape", [t], "  %r = tandem.shape %a0 : tensor<2x4x5xf32> -> tensor<3xi64>",
     "tensor<3xi64>", lambda v: np.array(v.shape, np.int64))

case("constant", [f32(2, 3)],
     "  %c = arith.constant dense<[1.5, -2.0, 4.0]> : tensor<3xf32>\n"
     "  %r = tandem.mul %a0, %c : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>",
     "tensor<2x3xf32>", lambda v: v * np.array([1.5, -2.0, 4.0], np.float32))
case("constant mask", [f32(4)],
     "  %m = arith.constant dense<[true, false, false, true]> : tensor<4xi1>\n"
     "  %z = tandem.fill(0.0 : f32) : tensor<4xf32>\n"
     "  %r = tandem.select %m, %a0, %z : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
     "tensor<4xf32>", lambda v: np.where([True, False, False, True], v, 0).astype(np.float32))

# Large enough to run on the runtime's worker threads (over 4M operations).
big = f32(2048, 1024)
case("relu parallel", [big], "  %r = tandem.relu %a0 : tensor<2048x1024xf32>",
     "tensor<2048x1024xf32>", lambda v: np.maximum(v, 0))
case("softmax parallel", [big], "  %r = tandem.softmax %a0 {axis = 1 : i64} : tensor<2048x1024xf32>",
     "tensor<2048x1024xf32>", lambda v: softmax(v, 1))
case("layer_norm parallel", [big, f32(1024), f32(1024)],
     "  %r = tandem.layer_norm %a0, %a1, %a2 {axis = 1 : i64} : (tensor<2048x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) -> tensor<2048x1024xf32>",
     "tensor<2048x1024xf32>",
     lambda v, g, b: (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-5) * g + b,
     tol=1e-4)
case("conv2d parallel", [f32(1, 128, 64, 64), f32(8, 128, 3, 3), f32(8)],
     "  %r = tandem.conv2d %a0, %a1, %a2 {padding = array<i64: 1, 1>} : (tensor<1x128x64x64xf32>, tensor<8x128x3x3xf32>, tensor<8xf32>) -> tensor<1x8x64x64xf32>",
     "tensor<1x8x64x64xf32>",
     lambda x, w, b: conv_reference(x, w, b, (1, 1), (1, 1), (1, 1), 1), tol=1e-3)
case("max_pool2d parallel", [f32(16, 64, 64, 64)],
     "  %r = tandem.max_pool2d %a0 {kernel = array<i64: 4, 4>} : tensor<16x64x64x64xf32> -> tensor<16x64x16x16xf32>",
     "tensor<16x64x16x16xf32>", lambda x: pool_reference(x, 4, 4, 0, "max"))

# Half precision: f16 directly, bf16 through casts (NumPy has no bf16).
h1, h2 = f32(4, 3).astype(np.float16), f32(3).astype(np.float16)
case("add f16", [h1, h2], "  %r = tandem.add %a0, %a1 : tensor<4x3xf16>, tensor<3xf16> -> tensor<4x3xf16>",
     "tensor<4x3xf16>", lambda a, b: (a.astype(np.float32) + b).astype(np.float16), tol=1e-3)
case("softmax f16", [h1], "  %r = tandem.softmax %a0 {axis = 1 : i64} : tensor<4x3xf16>",
     "tensor<4x3xf16>", lambda v: softmax(v.astype(np.float32), 1).astype(np.float16), tol=1e-3)


def bf16(v):
    bits = v.astype(np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


case("gelu bf16", [f32(8)],
     "  %h = tandem.cast %a0 : tensor<8xf32> -> tensor<8xbf16>\n"
     "  %g = tandem.gelu %h : tensor<8xbf16>\n"
     "  %r = tandem.cast %g : tensor<8xbf16> -> tensor<8xf32>",
     "tensor<8xf32>", lambda v: bf16(0.5 * bf16(v) * (1 + erf(bf16(v) / math.sqrt(2)))),
     tol=1e-2)


# Special values: NaN propagates and infinities behave as in NumPy and
# PyTorch, on both backends.
nan, inf = np.float32(np.nan), np.float32(np.inf)
special = np.array([[nan, 1.5, -2.0, inf], [-inf, -0.0, 0.0, 3.0],
                    [2.0, nan, -inf, 1.0]], np.float32)
with np.errstate(all="ignore"):
    for op, fn in [
            ("neg", np.negative), ("abs", np.abs), ("exp", np.exp),
            ("log", np.log), ("sqrt", np.sqrt),
            ("rsqrt", lambda v: 1 / np.sqrt(v)), ("tanh", np.tanh),
            ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
            # NumPy's maximum keeps NaN, as PyTorch's relu does.
            ("relu", lambda v: np.maximum(v, np.float32(0))),
            ("gelu", lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2)))),
            ("silu", lambda v: v / (1 + np.exp(-v))),
            ("floor", np.floor), ("ceil", np.ceil), ("round", np.round),
            ("trunc", np.trunc), ("erf", erf)]:
        case(f"{op} special values", [special],
             f"  %r = tandem.{op} %a0 : tensor<3x4xf32>", "tensor<3x4xf32>",
             lambda v, fn=fn: np.asarray(fn(v.astype(np.float64))).astype(np.float32))
    other = np.array([1.0, nan, -inf, -0.0], np.float32)
    for op, fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("div", np.divide), ("maximum", np.maximum),
                   ("minimum", np.minimum), ("pow", np.power)]:
        case(f"{op} special values", [special, other],
             f"  %r = tandem.{op} %a0, %a1 : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>",
             "tensor<3x4xf32>", lambda a, b, fn=fn: fn(a, b))
for predicate, fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                      ("ge", np.greater_equal)]:
    case(f"compare {predicate} special values", [special, other],
         f"  %r = tandem.compare {predicate}, %a0, %a1 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>",
         "tensor<3x4xi1>", lambda a, b, fn=fn: fn(a, b))
for op, fn in [("reduce_max", np.max), ("reduce_min", np.min),
               ("reduce_sum", np.sum), ("reduce_mean", np.mean)]:
    case(f"{op} special values", [special],
         f"  %r = tandem.{op} %a0 {{axes = array<i64: 1>}} : tensor<3x4xf32> -> tensor<3xf32>",
         "tensor<3xf32>", lambda v, fn=fn: fn(v, axis=1))
    case(f"{op} special values, strided axis", [special],
         f"  %r = tandem.{op} %a0 {{axes = array<i64: 0>}} : tensor<3x4xf32> -> tensor<4xf32>",
         "tensor<4xf32>", lambda v, fn=fn: fn(v, axis=0))
case("argmax special values", [special],
     "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<3x4xf32> -> tensor<3xi64>",
     "tensor<3xi64>", lambda v: v.argmax(1))
masked = np.array([[0.5, -inf, 1.0, -inf], [2.0, 1.0, -inf, 0.0],
                   [nan, 1.0, 2.0, 3.0]], np.float32)
with np.errstate(all="ignore"):
    case("softmax masked with -inf and NaN", [masked],
         "  %r = tandem.softmax %a0 {axis = 1 : i64} : tensor<3x4xf32>",
         "tensor<3x4xf32>", lambda v: softmax(v, 1))
# Rows of 19: two vectors of eight lanes and a tail of three. A causal mask's
# -inf in the lanes and the tail, a row all -inf but one, a NaN in a lane
# (the whole row NaN) and in the tail, and the largest element in each place.
wide_masked = np.random.default_rng(7).standard_normal((6, 19)).astype(np.float32)
wide_masked[0, 5:] = -inf
wide_masked[1, :18] = -inf
wide_masked[2, 3] = nan
wide_masked[3, 17] = nan
wide_masked[4, 9] = 30.0
wide_masked[5, 18] = 30.0
with np.errstate(all="ignore"):
    for op, fn in (("softmax", softmax), ("log_softmax", lambda v, a: np.log(softmax(v, a)))):
        case(f"{op} of rows of 19 with -inf and NaN", [wide_masked],
             f"  %r = tandem.{op} %a0 {{axis = 1 : i64}} : tensor<6x19xf32>",
             "tensor<6x19xf32>", lambda v, fn=fn: fn(v, 1), tol=1e-4)
# Shifted inputs on both sides of ln(FLT_MIN) = -87.34: exp underflows to 0
# below it and stays a normal float above it.
underflow = np.array([[0.0, -87.0, -87.3, -87.4, -100.0, -inf]], np.float32)
case("softmax of inputs near exp's underflow", [underflow],
     "  %r = tandem.softmax %a0 {axis = 1 : i64} : tensor<1x6xf32>",
     "tensor<1x6xf32>", lambda v: softmax(v, 1))
pooled = np.array([[[[1.0, nan, 2.0, 3.0], [0.0, -1.0, inf, 1.0],
                     [-inf, -inf, 4.0, 5.0], [-inf, -inf, 6.0, nan]]]],
                  np.float32)
case("max_pool2d special values", [pooled],
     "  %r = tandem.max_pool2d %a0 {kernel = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>",
     "tensor<1x1x2x2xf32>", lambda v: pool_reference(v, 2, 2, 0, "max"))
case("avg_pool2d special values", [pooled],
     "  %r = tandem.avg_pool2d %a0 {kernel = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>",
     "tensor<1x1x2x2xf32>", lambda v: pool_reference(v, 2, 2, 0, "avg"))


# Rounding at the halves: to even, as torch.round and NumPy do.
halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.0, 1e30, -7.25],
                  np.float32)
for op, fn in [("floor", np.floor), ("ceil", np.ceil), ("round", np.round),
               ("trunc", np.trunc)]:
    case(f"{op} at halves", [halves],
         f"  %r = tandem.{op} %a0 : tensor<10xf32>", "tensor<10xf32>",
         lambda v, fn=fn: fn(v))


# Edges a GPU backend gets wrong when it computes like a graphics card:
# empty tensors (a launch of zero blocks), integers beyond 2^24 compared or
# ordered through float, sums that lose the small terms in f32, and a NaN
# norm that fmax would turn into epsilon. They pass on the CPU and sim here
# and guard the CUDA backend wherever a GPU runs the suite.
empty_rows = np.zeros((0, 4), np.float32)
case("softmax of no rows", [empty_rows],
     "  %r = tandem.softmax %a0 {axis = 1 : i64} : tensor<0x4xf32>",
     "tensor<0x4xf32>", lambda v: v)
case("argmax of no rows", [empty_rows],
     "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<0x4xf32> -> tensor<0xi64>",
     "tensor<0xi64>", lambda v: np.zeros((0,), np.int64))
case("layer_norm of no rows", [empty_rows, f32(4), f32(4)],
     "  %r = tandem.layer_norm %a0, %a1, %a2 {axis = 1 : i64} : (tensor<0x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<0x4xf32>",
     "tensor<0x4xf32>", lambda v, g, b: v)
case("reduce_sum of an empty axis", [np.zeros((3, 0), np.float32)],
     "  %r = tandem.reduce_sum %a0 {axes = array<i64: 1>} : tensor<3x0xf32> -> tensor<3xf32>",
     "tensor<3xf32>", lambda v: np.zeros((3,), np.float32))
big = np.array([16777217, 16777216, -16777217, 2147483647], np.int32)
near = np.array([16777216, 16777217, -16777216, 2147483646], np.int32)
case("compare i32 beyond 2^24", [big, near],
     "  %r = tandem.compare eq, %a0, %a1 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>",
     "tensor<4xi1>", lambda a, b: a == b)
case("argmax i64 beyond 2^24",
     [np.array([[16777216, 16777217, 3], [2 ** 53, 2 ** 53 + 1, 0]], np.int64)],
     "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<2x3xi64> -> tensor<2xi64>",
     "tensor<2xi64>", lambda v: v.argmax(1))
case("reduce_sum i32 wraps",
     [np.array([[2147483647, 1, 5], [-2147483648, -1, 0]], np.int32)],
     "  %r = tandem.reduce_sum %a0 {axes = array<i64: 1>} : tensor<2x3xi32> -> tensor<2xi32>",
     "tensor<2xi32>",
     lambda v: v.astype(np.int64).sum(1).astype(np.int32))
cancel = np.concatenate([[1e8], np.ones(100), [-1e8]]).astype(np.float32)
case("reduce_sum keeps the small terms", [cancel[None, :]],
     "  %r = tandem.reduce_sum %a0 {axes = array<i64: 1>} : tensor<1x102xf32> -> tensor<1xf32>",
     "tensor<1xf32>",
     lambda v: v.astype(np.float64).sum(1).astype(np.float32))
# Empty products: k = 0 gives zeros, or the bias (BLAS refuses a leading
# dimension of 0 and writes nothing, which left the result uninitialized).
case("matmul with k = 0", [np.zeros((2, 3, 0), np.float32), np.zeros((0, 4), np.float32)],
     "  %r = tandem.matmul %a0, %a1 : (tensor<2x3x0xf32>, tensor<0x4xf32>) -> tensor<2x3x4xf32>",
     "tensor<2x3x4xf32>", lambda a, b: np.zeros((2, 3, 4), np.float32))
case("linear with k = 0", [np.zeros((3, 0), np.float32), np.zeros((4, 0), np.float32),
                           np.array([1, 2, 3, 4], np.float32)],
     "  %r = tandem.linear %a0, %a1, %a2 : (tensor<3x0xf32>, tensor<4x0xf32>, tensor<4xf32>) -> tensor<3x4xf32>",
     "tensor<3x4xf32>", lambda x, w, b: np.broadcast_to(b, (3, 4)).copy())
case("linear with k = 0, no bias", [np.zeros((3, 0), np.float32), np.zeros((4, 0), np.float32)],
     "  %r = tandem.linear %a0, %a1 : (tensor<3x0xf32>, tensor<4x0xf32>) -> tensor<3x4xf32>",
     "tensor<3x4xf32>", lambda x, w: np.zeros((3, 4), np.float32))
case("gather from empty rows checks its indices",
     [np.zeros((0, 5), np.float32), np.array([0, 2], np.int64)],
     "  %r = tandem.gather %a0, %a1 {axis = 1 : i64} : (tensor<0x5xf32>, tensor<2xi64>) -> tensor<0x2xf32>",
     "tensor<0x2xf32>", lambda x, i: np.zeros((0, 2), np.float32))
nan_row = np.array([[nan, 1.0, 2.0], [3.0, 4.0, 0.0]], np.float32)
case("l2_normalize of a NaN row", [nan_row],
     "  %r = tandem.l2_normalize %a0 {axis = 1 : i64} : tensor<2x3xf32>",
     "tensor<2x3xf32>",
     lambda v: (v.astype(np.float64) / np.maximum(np.sqrt((v.astype(np.float64) ** 2).sum(1, keepdims=True)), 1e-12)).astype(np.float32))


# Long reductions, as a GPU folds them: a warp or a block per result element
# (lanes striding along the row, partials combined with shuffles), a block of
# 1024 threads for a scalar, rows of threads splitting an axis that is not
# the last. Lengths that are not a multiple of a warp or a block leave lanes
# with nothing to fold; the first of equal maxima and the first NaN must win
# across warps; integer sums wrap; a sum of 2^20 ones is exact in f32 only
# if nothing is lost on the way.
def long_case(name, data, op, axes, out_shape, reference, tol=1e-5, dtype="f32"):
    axes_text = ", ".join(str(a) for a in axes)
    case(name, [data],
         f"  %r = tandem.{op} %a0 {{axes = array<i64: {axes_text}>}} : "
         f"{ty(data)} -> {shape_ty(out_shape, dtype)}",
         shape_ty(out_shape, dtype), reference, tol)


def in_f64(fn):
    return lambda v: fn(v.astype(np.float64)).astype(v.dtype)


for length in (1000, 1025, 70000):
    rows = f32(2, length)
    long_case(f"reduce_sum of rows of {length}", rows, "reduce_sum", [1], (2,),
              in_f64(lambda v: v.sum(1)))
    long_case(f"reduce_max of rows of {length}", rows, "reduce_max", [1], (2,),
              lambda v: v.max(1))
    long_case(f"reduce_min of rows of {length}", rows, "reduce_min", [1], (2,),
              lambda v: v.min(1))
    long_case(f"reduce_mean of {length} to a scalar", rows[0], "reduce_mean", [0], (),
              in_f64(lambda v: v.mean()))
ones = np.ones(2 ** 20 + 3, np.float32)
long_case("reduce_sum of 2^20 + 3 ones to a scalar", ones, "reduce_sum", [0], (),
          lambda v: np.array(2 ** 20 + 3, np.float32), tol=1e-7)
long_case("reduce_mean of 2^20 + 3 ones to a scalar", ones, "reduce_mean", [0], (),
          lambda v: np.array(1, np.float32), tol=1e-7)
long_case("reduce_sum f16 of rows of 1025", f32(2, 1025).astype(np.float16),
          "reduce_sum", [1], (2,), in_f64(lambda v: v.sum(1)), tol=1e-3, dtype="f16")
# NaN in long rows: max and min give NaN wherever the NaN is; argmax the
# first NaN's position (row 1 has two, in different warps and blocks).
nan_rows = f32(3, 1000)
nan_rows[0, 500] = nan
nan_rows[1, 40] = nan
nan_rows[1, 900] = nan
nan_rows[2, 999] = nan
with np.errstate(all="ignore"):
    for op, fn in [("reduce_max", np.max), ("reduce_min", np.min)]:
        long_case(f"{op} of long rows with NaN", nan_rows, op, [1], (3,),
                  lambda v, fn=fn: fn(v, axis=1))
# Rows of only -inf (max) and only +inf (min), long and short: the result is
# the infinity itself, not the largest finite float the lanes could start at.
for length in (7, 100):
    infinite = np.full((2, length), -np.inf, np.float32)
    infinite[1, :] = np.inf
    long_case(f"reduce_max of rows of {length} infinities", infinite, "reduce_max", [1],
              (2,), lambda v: v.max(1))
    long_case(f"reduce_min of rows of {length} infinities", infinite, "reduce_min", [1],
              (2,), lambda v: v.min(1))
# Rows long enough that the GPU splits each over several blocks (the
# partial results then combine across blocks): ties and NaN in different
# blocks' shares.
split_rows = f32(3, 70000)
split_rows[0, 30000] = split_rows[0, 60000] = 50
split_rows[1, 20000] = split_rows[1, 65000] = nan
split_rows[2, 69999] = 60
case("argmax of rows of 70000 with ties and NaN", [split_rows],
     "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<3x70000xf32> -> tensor<3xi64>",
     "tensor<3xi64>", lambda v: np.array([30000, 20000, 69999], np.int64))
with np.errstate(all="ignore"):
    long_case("reduce_max of rows of 70000 with NaN", split_rows, "reduce_max", [1],
              (3,), lambda v: v.max(1))
case("argmax of long rows with NaN", [nan_rows],
     "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<3x1000xf32> -> tensor<3xi64>",
     "tensor<3xi64>", lambda v: np.array([500, 40, 999], np.int64))
# Ties: the largest value at 33 and 700 (other warps), at 700 and 33 of the
# next row reversed, and at the first and last of 70000; argmax is the
# first position, as NumPy's.
ties = np.minimum(f32(3, 70000), np.float32(5))
ties[0, [33, 700]] = 9
ties[1, [700, 69999]] = 9
ties[1, 33] = 8
ties[2, [0, 69999]] = 9
case("argmax ties across warps", [ties],
     "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<3x70000xf32> -> tensor<3xi64>",
     "tensor<3xi64>", lambda v: v.argmax(1))
int_ties = rng.integers(-100, 100, (2, 1025)).astype(np.int64)
int_ties[0, [33, 700]] = 1000
int_ties[1, [1024, 256]] = 1000
case("argmax i64 ties across warps", [int_ties],
     "  %r = tandem.argmax %a0 {axis = 1 : i64} : tensor<2x1025xi64> -> tensor<2xi64>",
     "tensor<2xi64>", lambda v: v.argmax(1))
# Ties along an axis that is not the last (a block per column, strided).
column_ties = np.minimum(f32(3000, 4), np.float32(5))
column_ties[[33, 700], 0] = 9
column_ties[[2999, 1], 1] = 9
case("argmax ties along axis 0", [column_ties],
     "  %r = tandem.argmax %a0 {axis = 0 : i64} : tensor<3000x4xf32> -> tensor<4xi64>",
     "tensor<4xi64>", lambda v: v.argmax(0))
wrapping = rng.integers(2 ** 30, 2 ** 31 - 1, (2, 1000)).astype(np.int32)
wrapping[1] = -wrapping[1]
long_case("reduce_sum i32 of long rows wraps", wrapping, "reduce_sum", [1], (2,),
          lambda v: v.astype(np.int64).sum(1).astype(np.int32), dtype="i32")
long_case("reduce_sum i64 of 70000 to a scalar wraps",
          np.full(70000, 2 ** 62, np.int64), "reduce_sum", [0], (),
          lambda v: np.array(0, np.int64), dtype="i64")  # 70000 * 2^62 = 0 mod 2^64
long_case("reduce_max i32 of 1025 to a scalar",
          rng.integers(-2 ** 31, 2 ** 31 - 1, 1025).astype(np.int32), "reduce_max",
          [0], (), lambda v: v.max(), dtype="i32")
# Long reductions over an axis that is not the last: few results (a block
# each, reading strided), a thousand-odd results (rows of threads splitting
# the axis), and two axes around a kept one.
few = f32(5000, 3)
long_case("reduce_sum over axis 0 of 5000x3", few, "reduce_sum", [0], (3,),
          in_f64(lambda v: v.sum(0)))
long_case("reduce_max over axis 0 of 5000x3", few, "reduce_max", [0], (3,),
          lambda v: v.max(0))
wide = f32(300, 1100)
long_case("reduce_mean over axis 0 of 300x1100", wide, "reduce_mean", [0], (1100,),
          in_f64(lambda v: v.mean(0)))
long_case("reduce_min over axis 0 of 300x1100", wide, "reduce_min", [0], (1100,),
          lambda v: v.min(0))
# NaN in columns of different blocks of 256, in rows far from the first.
wide_nan = wide.copy()
wide_nan[299, 3] = wide_nan[150, 700] = wide_nan[7, 1099] = np.nan
long_case("reduce_max over axis 0 of 300x1100 with NaN", wide_nan, "reduce_max", [0],
          (1100,), lambda v: v.max(0))
around = f32(40, 3, 700)
long_case("reduce_sum over axes 0 and 2 of 40x3x700", around, "reduce_sum", [0, 2],
          (3,), in_f64(lambda v: v.sum((0, 2))))
case("softmax along axis 0 of 2000x3", [f32(2000, 3)],
     "  %r = tandem.softmax %a0 {axis = 0 : i64} : tensor<2000x3xf32>",
     "tensor<2000x3xf32>", lambda v: softmax(v, 0), tol=1e-4)
case("log_softmax along axis 1 of 2x3000x5", [f32(2, 3000, 5)],
     "  %r = tandem.log_softmax %a0 {axis = 1 : i64} : tensor<2x3000x5xf32>",
     "tensor<2x3000x5xf32>", lambda v: np.log(softmax(v.astype(np.float64), 1)).astype(np.float32),
     tol=1e-4)


# l2_normalize of long rows (a block per row): along the last axis with a
# NaN in one row, and along axis 0 of few rows.
def l2_normalize(v, axis):
    norm = np.sqrt((v.astype(np.float64) ** 2).sum(axis, keepdims=True))
    return (v / np.maximum(norm, 1e-12)).astype(np.float32)


long_rows = f32(3, 1000)
long_rows[1, 700] = nan
with np.errstate(all="ignore"):
    case("l2_normalize of rows of 1000 with a NaN", [long_rows],
         "  %r = tandem.l2_normalize %a0 {axis = 1 : i64} : tensor<3x1000xf32>",
         "tensor<3x1000xf32>", lambda v: l2_normalize(v, 1), tol=1e-5)
case("l2_normalize along axis 0 of 2000x3", [f32(2000, 3)],
     "  %r = tandem.l2_normalize %a0 {axis = 0 : i64} : tensor<2000x3xf32>",
     "tensor<2000x3xf32>", lambda v: l2_normalize(v, 0), tol=1e-5)

# Rank: the GPU kernels take rank 8 (a broadcast that does not merge away,
# a reduction over rank 8); rank 9 stays on the CPU, whatever the strategy.
r8a, r8b = f32(2, 1, 3, 1, 2, 1, 2, 3), f32(1, 2, 1, 2, 1, 3, 1, 3)
case("add of rank 8 with broadcasting", [r8a, r8b],
     "  %r = tandem.add %a0, %a1 : tensor<2x1x3x1x2x1x2x3xf32>, tensor<1x2x1x2x1x3x1x3xf32>"
     " -> tensor<2x2x3x2x2x3x2x3xf32>",
     "tensor<2x2x3x2x2x3x2x3xf32>", lambda a, b: a + b)
long_case("reduce_sum over rank 8", r8a, "reduce_sum", [1, 3, 6], (2, 3, 2, 1, 3),
          in_f64(lambda v: v.sum((1, 3, 6))))
r9 = f32(2, 1, 2, 1, 2, 1, 2, 1, 3)
case("relu of rank 9 (on the CPU)", [r9],
     "  %r = tandem.relu %a0 : tensor<2x1x2x1x2x1x2x1x3xf32>",
     "tensor<2x1x2x1x2x1x2x1x3xf32>", lambda v: np.maximum(v, 0))
long_case("reduce_sum of rank 9 (on the CPU)", r9, "reduce_sum", [8], (2, 1, 2, 1, 2, 1, 2, 1),
          in_f64(lambda v: v.sum(8)))

# Running sums: along the last axis and another, f32 in double (a long row
# whose prefix sums cancel), i32 wrapping, i64, f16, an empty axis.
case("cumsum along the last axis", [t],
     "  %r = tandem.cumsum %a0 {axis = 2 : i64} : tensor<2x4x5xf32>",
     "tensor<2x4x5xf32>", in_f64(lambda v: np.cumsum(v, 2)))
case("cumsum along axis 0", [t],
     "  %r = tandem.cumsum %a0 {axis = 0 : i64} : tensor<2x4x5xf32>",
     "tensor<2x4x5xf32>", in_f64(lambda v: np.cumsum(v, 0)))
cancelling = np.tile(np.array([1e8, 1, -1e8, 1], np.float32), 300)
case("cumsum of 1200 cancelling terms", [cancelling],
     "  %r = tandem.cumsum %a0 {axis = 0 : i64} : tensor<1200xf32>",
     "tensor<1200xf32>", in_f64(lambda v: np.cumsum(v)), tol=1e-7)
case("cumsum i32 wraps", [wrapping],
     "  %r = tandem.cumsum %a0 {axis = 1 : i64} : tensor<2x1000xi32>",
     "tensor<2x1000xi32>", lambda v: np.cumsum(v.astype(np.int64), 1).astype(np.int32))
case("cumsum i64", [ia],
     "  %r = tandem.cumsum %a0 {axis = 0 : i64} : tensor<5xi64>",
     "tensor<5xi64>", lambda v: np.cumsum(v))
case("cumsum f16", [h1],
     "  %r = tandem.cumsum %a0 {axis = 0 : i64} : tensor<4x3xf16>",
     "tensor<4x3xf16>", in_f64(lambda v: np.cumsum(v, 0)), tol=1e-3)
case("cumsum along an empty axis", [np.zeros((3, 0), np.float32)],
     "  %r = tandem.cumsum %a0 {axis = 1 : i64} : tensor<3x0xf32>",
     "tensor<3x0xf32>", lambda v: v)

# Transposes that the GPU tiles (the source's contiguous dimension moves):
# ragged and whole tiles, NCHW <-> NHWC, 8-, 2- and 1-byte elements, a batch
# dimension between the pair, a pair at the tiling threshold, and one with a
# side too short to tile.
def transpose_case(name, data, perm):
    out = data.transpose(perm)
    case(f"transpose {name}", [data],
         f"  %r = tandem.transpose %a0 {{perm = array<i64: {', '.join(map(str, perm))}>}}"
         f" : {ty(data)} -> {ty(out)}",
         ty(out), lambda v, perm=perm: v.transpose(perm), tol=0)


transpose_case("33x65 (ragged tiles)", f32(33, 65), (1, 0))
transpose_case("64x48 (whole tiles)", f32(64, 48), (1, 0))
transpose_case("NCHW to NHWC", f32(2, 40, 9, 33), (0, 2, 3, 1))
transpose_case("NHWC to NCHW", f32(2, 9, 33, 40), (0, 3, 1, 2))
transpose_case("i64 37x70", rng.integers(-9, 9, (37, 70)).astype(np.int64), (1, 0))
transpose_case("bool 50x41", rng.integers(0, 2, (50, 41)).astype(np.bool_), (1, 0))
transpose_case("f16 batched 3x37x70", f32(3, 37, 70).astype(np.float16), (0, 2, 1))
transpose_case("batch between the pair", f32(35, 3, 41), (2, 1, 0))
transpose_case("9x8 (at the threshold)", f32(9, 8), (1, 0))
transpose_case("3 channels NCHW to NHWC", f32(2, 3, 16, 16), (0, 2, 3, 1))
transpose_case("4x100x70", f32(4, 100, 70), (0, 2, 1))
# Empty, with the last output axis the empty one (a tiled swap has no tiles).
transpose_case("0x5 to 5x0", f32(0, 5), (1, 0))
transpose_case("2x0x5 to 2x5x0", f32(2, 0, 5), (0, 2, 1))


# A slice and a transpose fuse into a group of views alone, whose generated
# kernel copies a transposed block in tiles of 8 x 8 (8 rows side by side in
# the source). 5 x 48 x 150 is split across the pool's workers at element
# boundaries inside rows and tiles; 150 columns leave 6 past the last
# multiple of 8. 24 rows side by side: whole tiles, whole columns. 12: no
# tiles (the row-by-row kernel).
def sliced_transpose_case(name, data):
    out = data[1:].transpose(0, 2, 1)
    sliced = data[1:]
    case(f"fused views: sliced transpose {name}", [data],
         f"  %s = tandem.slice %a0 {{starts = array<i64: 1, 0, 0>, "
         f"limits = array<i64: {', '.join(map(str, data.shape))}>, "
         f"strides = array<i64: 1, 1, 1>}} : {ty(data)} -> {ty(sliced)}\n"
         f"  %r = tandem.transpose %s {{perm = array<i64: 0, 2, 1>}}"
         f" : {ty(sliced)} -> {ty(out)}",
         ty(out), lambda v: v[1:].transpose(0, 2, 1), tol=0)


sliced_transpose_case("6x150x48 (chunked, ragged columns)", f32(6, 150, 48))
sliced_transpose_case("3x64x24 (whole tiles)", f32(3, 64, 24))
sliced_transpose_case("3x37x12 (no whole tiles)", f32(3, 37, 12))

def saturating_cast(v, dtype):
    """Float to integer as the dialect defines it: truncate, NaN to 0,
    saturate beyond the range (XLA's convert; C++ leaves it undefined)."""
    info = np.iinfo(dtype)
    limit = 2.0 ** (info.bits - 1)
    w = v.astype(np.float64)
    out = np.zeros(w.shape, dtype)
    inside = (w > -limit) & (w < limit)  # NaN is neither
    out[inside] = np.trunc(w[inside]).astype(dtype)
    out[w >= limit] = info.max
    out[w <= -limit] = info.min
    return out


casts = np.array([nan, inf, -inf, 3e9, -3e9, 1e19, -1e19, -2.7, 2.7, -0.0],
                 np.float32)
case("cast f32 to i32 special values", [casts],
     "  %r = tandem.cast %a0 : tensor<10xf32> -> tensor<10xi32>",
     "tensor<10xi32>", lambda v: saturating_cast(v, np.int32))
case("cast f32 to i64 special values", [casts],
     "  %r = tandem.cast %a0 : tensor<10xf32> -> tensor<10xi64>",
     "tensor<10xi64>", lambda v: saturating_cast(v, np.int64))
case("cast f32 to i1 special values", [casts],
     "  %r = tandem.cast %a0 : tensor<10xf32> -> tensor<10xi1>",
     "tensor<10xi1>", lambda v: v != 0)

# Integer casts keep the bits (i64 to i32 wraps, as NumPy's astype does);
# a bool reads as 0 or 1.
wide_ints = np.array([2 ** 40 + 5, -(2 ** 33) - 1, 2 ** 31, -7, 0], np.int64)
case("cast i64 to i32 wraps", [wide_ints],
     "  %r = tandem.cast %a0 : tensor<5xi64> -> tensor<5xi32>", "tensor<5xi32>",
     lambda v: v.astype(np.int32))
case("cast i32 to i64", [np.array([-(2 ** 31), 2 ** 31 - 1, -1], np.int32)],
     "  %r = tandem.cast %a0 : tensor<3xi32> -> tensor<3xi64>", "tensor<3xi64>",
     lambda v: v.astype(np.int64))
flags = np.array([True, False, True], np.bool_)
case("cast i1 to f32", [flags],
     "  %r = tandem.cast %a0 : tensor<3xi1> -> tensor<3xf32>", "tensor<3xf32>",
     lambda v: v.astype(np.float32))
case("cast i1 to i64", [flags],
     "  %r = tandem.cast %a0 : tensor<3xi1> -> tensor<3xi64>", "tensor<3xi64>",
     lambda v: v.astype(np.int64))
case("cast i64 to i1", [wide_ints],
     "  %r = tandem.cast %a0 : tensor<5xi64> -> tensor<5xi1>", "tensor<5xi1>",
     lambda v: v != 0)

# Integer edge values wrap around in two's complement, as in NumPy and
# PyTorch: MIN / -1 and -MIN are MIN, abs(MIN) is MIN.
for bits, dtype in [(32, np.int32), (64, np.int64)]:
    lowest, highest = np.iinfo(dtype).min, np.iinfo(dtype).max
    edge = np.array([lowest, highest, -7, 7, lowest], dtype)
    by = np.array([-1, 1, 2, -2, 1], dtype)
    t_ = f"tensor<5xi{bits}>"
    with np.errstate(all="ignore"):
        case(f"div i{bits} edge values", [edge, by],
             f"  %r = tandem.div %a0, %a1 : {t_}", t_,
             lambda a, b: np.array([a[0], a[1], -3, -3, a[4]], a.dtype))
        case(f"add i{bits} wraps", [edge, by],
             f"  %r = tandem.add %a0, %a1 : {t_}", t_, lambda a, b: a + b)
        case(f"sub i{bits} wraps", [edge, by],
             f"  %r = tandem.sub %a0, %a1 : {t_}", t_, lambda a, b: a - b)
        case(f"mul i{bits} wraps", [edge, edge],
             f"  %r = tandem.mul %a0, %a1 : {t_}", t_, lambda a, b: a * b)
        case(f"neg i{bits} of MIN", [edge],
             f"  %r = tandem.neg %a0 : {t_}", t_, np.negative)
        case(f"abs i{bits} of MIN", [edge],
             f"  %r = tandem.abs %a0 : {t_}", t_, np.abs)
        case(f"reduce_sum i{bits} wraps", [edge],
             f"  %r = tandem.reduce_sum %a0 {{axes = array<i64: 0>}} : {t_} -> tensor<i{bits}>",
             f"tensor<i{bits}>", lambda v: v.sum(dtype=v.dtype))


# A fused group written out (as --tandem-fuse would build it): a GEMM and
# its epilogue (bias broadcast along rows, gelu, a residual), and a group of
# elementwise ops alone. fusion_check.py compares fused and unfused models
# bit for bit; this checks the group against NumPy.
fx, fw, fb, fr = f32(6, 5), f32(7, 5), f32(7), f32(6, 7)
case("fused: linear + bias + gelu + residual", [fx, fw, fb, fr], """
  %r = tandem.fused(%a0, %a1, %a2, %a3) : (tensor<6x5xf32>, tensor<7x5xf32>,
      tensor<7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32> {
  ^bb0(%x: tensor<6x5xf32>, %w: tensor<7x5xf32>, %b: tensor<7xf32>, %res: tensor<6x7xf32>):
    %l = tandem.linear %x, %w : (tensor<6x5xf32>, tensor<7x5xf32>) -> tensor<6x7xf32>
    %s = tandem.add %l, %b : tensor<6x7xf32>, tensor<7xf32> -> tensor<6x7xf32>
    %g = tandem.gelu %s : tensor<6x7xf32>
    %o = tandem.add %g, %res : tensor<6x7xf32>, tensor<6x7xf32> -> tensor<6x7xf32>
    tandem.yield %o : tensor<6x7xf32>
  }""", "tensor<6x7xf32>",
     lambda x, w, b, res: (lambda s: 0.5 * s * (1 + erf(s / math.sqrt(2))) +
                           res)(x @ w.T + b),
     tol=1e-4)
case("fused: elementwise alone, broadcast", [col, row], """
  %r = tandem.fused(%a0, %a1) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32> {
  ^bb0(%p: tensor<4x1xf32>, %q: tensor<3xf32>):
    %m = tandem.mul %p, %q : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
    %e = tandem.tanh %m : tensor<4x3xf32>
    tandem.yield %e : tensor<4x3xf32>
  }""", "tensor<4x3xf32>", lambda p, q: np.tanh(p * q))


def ops_used():
    """The tandem op names the cases' models contain."""
    names = set()
    for _, mlir, _, _, _ in CASES:
        names.update(re.findall(r"\btandem\.([a-z_0-9]+)\b", mlir))
    return sorted(names)


def check_case(index, compiler, work, backend):
    """Compiles and runs case INDEX; returns (its report lines, failures)."""
    name, mlir, inputs, reference, tol = CASES[index]
    lines, failures = [], 0
    directory = os.path.join(work, f"case{index}")
    os.makedirs(directory, exist_ok=True)
    model = os.path.join(directory, "model.mlir")
    with open(model, "w") as f:
        f.write(mlir)
    with np.errstate(all="ignore"):  # NaN and inf are expected here
        expected = np.asarray(reference(*inputs))
    # On a real GPU only the GPU-placed model is new (ops.test runs both).
    strategies = ("all-gpu",) if backend == "cuda" else ("all-cpu", "all-gpu")
    for strategy in strategies:
        binary = os.path.join(directory, strategy)
        compiled = subprocess.run(
            [compiler, model, f"--strategy={strategy}", "-o", binary],
            capture_output=True, text=True)
        if compiled.returncode != 0:
            lines.append(f"{name} [{strategy}]: FAILED to compile\n{compiled.stderr}")
            failures += 1
            continue
        try:
            outputs, _ = tandem_e2e.run(binary, inputs, {},
                                        os.path.join(directory, strategy + ".run"),
                                        ["--device-backend", backend])
        except SystemExit as failed:  # the binary failed: say so, go on
            lines.append(f"{name} [{strategy}]: FAILED to run\n{failed}")
            failures += 1
            continue
        actual = outputs[0]
        want = expected.astype(actual.dtype) if actual.dtype != expected.dtype and expected.dtype != np.float64 else expected
        if actual.dtype == np.bool_ or np.issubdtype(actual.dtype, np.integer):
            ok = actual.shape == expected.shape and np.array_equal(actual, expected)
        else:
            rtol = max(tol, 1e-7)
            ok = actual.shape == expected.shape and np.allclose(
                actual.astype(np.float64), expected.astype(np.float64),
                rtol=rtol, atol=rtol, equal_nan=True)
        failures += not ok
        if not ok:
            lines.append(f"{name} [{strategy}]: FAILED\n got {actual}\n want {want}")
        else:
            lines.append(f"{name} [{strategy}]: ok")
    return lines, failures


def main():
    if sys.argv[1:] == ["--list-ops"]:
        print("\n".join(ops_used()))
        return
    compiler, work = sys.argv[1], sys.argv[2]
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    backend = sys.argv[4] if len(sys.argv) > 4 else "sim"
    # Cases run side by side (compiles and runs are processes); the report
    # keeps the cases' order. TANDEM_TEST_JOBS sets how many at once.
    jobs = int(os.environ.get("TANDEM_TEST_JOBS", "2"))
    chosen = [k for k, case_ in enumerate(CASES) if only in case_[0]]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for lines, failed in pool.map(
                lambda k: check_case(k, compiler, work, backend), chosen):
            print("\n".join(lines), flush=True)
            failures += failed
    print(f"{len(CASES)} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
