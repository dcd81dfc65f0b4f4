"""The generated kernels' transcendental functions against NumPy over the
whole float32 range.

Each function f is compiled as a fused group (f, then neg twice: exact) and
run on every 4096th float32 bit pattern (both signs, every exponent,
subnormals) plus 0, -0, +-inf, NaN and the points where each function
saturates, on the CPU and on the sim backend's GPU (which runs the same
generated CPU code). The reference is the function's definition evaluated
in float64 by NumPy (math.erf for erf); NaN must meet NaN, an infinity its
own sign, and a finite result must be within half an ulp of the float64
value (correct rounding) plus the function's bound: a few ulps (on a CPU
with AVX2 the kernels call glibc's vector math library, libmvec, 8 lanes at
a time, whose functions glibc states within 4 ulp: here exp reaches 2.5 and
log 3.8, erf 1.9; libm's scalar expf, logf and erff are within 1-2; tanh is
the CPU kernels' rational approximation; sigmoid, silu and gelu compose
them), and an absolute bound
where the definition cancels (gelu's 1 + erf(x / sqrt 2) for large negative
x) or underflows (sigmoid below -88.72).

With BACKEND cuda, the GPU model runs on a real GPU (the generated PTX,
libdevice's functions) instead of the sim backend.

Usage: fused_numerics_check.py TANDEM_COMPILE WORKDIR [BACKEND]
"""
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tandem_e2e  # noqa: E402

EPS = float(np.finfo(np.float32).eps)
TINY = float(np.finfo(np.float32).smallest_subnormal)
NORMAL = float(np.finfo(np.float32).tiny)  # the smallest normal float


def erf64(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def sigmoid64(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


# name: (reference in float64, ulps, absolute bound as a function of x)
FUNCTIONS = {
    "exp": (np.exp, 4, lambda x: 2 * TINY),
    "log": (np.log, 4, lambda x: 0.0),
    "sqrt": (np.sqrt, 0, lambda x: 0.0),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), 1, lambda x: 0.0),
    "tanh": (np.tanh, 6, lambda x: 2 * TINY),
    "erf": (erf64, 2, lambda x: 2 * TINY),
    # 1 / (1 + e^-x) is 0 once e^-x overflows (x < -88.72), where the true
    # value is a subnormal below the smallest normal float.
    "sigmoid": (sigmoid64, 4, lambda x: NORMAL),
    "silu": (lambda x: x * sigmoid64(x), 4, lambda x: np.abs(x) * NORMAL),
    "gelu": (lambda x: 0.5 * x * (1.0 + erf64(x / math.sqrt(2.0))), 4,
             lambda x: 4 * EPS * np.abs(x) + 2 * TINY),
}


def inputs():
    bits = np.arange(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    sweep = bits.view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
                        88.72, 88.73, -87.3, -103.9, -104.0, 9.0, -9.0,
                        7.9053111, -7.9053111, 0.0004, -0.0004, 3.92, -3.92,
                        -5.0, -10.0, -13.0, 0.5, 1.0, -1.0],
                       np.float32)
    return np.concatenate([sweep, special])


def ulp(y):
    return np.spacing(np.abs(y).astype(np.float32)).astype(np.float64)


def main():
    compiler, workdir = sys.argv[1], sys.argv[2]
    backend = sys.argv[3] if len(sys.argv) > 3 else "sim"
    os.makedirs(workdir, exist_ok=True)
    x = inputs()
    n = x.size
    t = f"tensor<{n}xf32>"
    lines, results = [], []
    for name in FUNCTIONS:
        lines.append(f"  %{name} = tandem.{name} %x : {t}")
        lines.append(f"  %{name}1 = tandem.neg %{name} : {t}")
        lines.append(f"  %{name}2 = tandem.neg %{name}1 : {t}")
        results.append(f"%{name}2")
    path = os.path.join(workdir, "model.mlir")
    with open(path, "w") as f:
        f.write(f"func.func @main(%x: {t}) -> ({', '.join([t] * len(results))}) {{\n"
                + "\n".join(lines) + f"\n  return {', '.join(results)} : "
                + ", ".join([t] * len(results)) + "\n}\n")
    failures = 0
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        references = {name: spec[0](x64) for name, spec in FUNCTIONS.items()}
    for variant, flags in [("cpu", ["--strategy=all-cpu"]),
                           ("gpu", ["--strategy=all-gpu"])]:
        binary = os.path.join(workdir, variant)
        subprocess.run([compiler, path, "-o", binary] + flags, check=True)
        outputs, profile = tandem_e2e.run(
            binary, [x], {}, os.path.join(workdir, variant + ".run"),
            ["--profile", "--device-backend", backend])
        groups = profile.count("fused(")
        if groups != len(FUNCTIONS):
            print(f"[{variant}] FAILED: {groups} fused groups in the profile, "
                  f"want {len(FUNCTIONS)}\n{profile}")
            failures += 1
        for (name, (_, ulps, absolute)), got in zip(FUNCTIONS.items(), outputs):
            with np.errstate(all="ignore"):
                want32 = references[name].astype(np.float32)
            got64, want = got.astype(np.float64), references[name]
            nan = np.isnan(want32) | np.isnan(got)
            bad = nan & (np.isnan(want32) != np.isnan(got))
            inf = ~nan & (np.isinf(want32) | np.isinf(got))
            bad |= inf & (got != want32)
            finite = ~nan & ~inf
            with np.errstate(all="ignore"):
                error = np.abs(got64 - want)
                bound = (ulps + 0.5) * ulp(want32) + absolute(x64)
                share = np.where(finite, error / bound, 0)
            bad |= finite & (error > bound)
            worst = np.max(share)
            status = "FAILED" if bad.any() else "ok"
            print(f"[{variant}] {name}: {n} points, worst error {worst:.2f} "
                  f"of its bound, {status}")
            if bad.any():
                for i in np.flatnonzero(bad)[:5]:
                    print(f"    x = {x[i]!r}: got {got[i]!r}, want {want32[i]!r}")
                failures += 1
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
