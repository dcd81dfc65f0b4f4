"""The last core OpenBLAS reported (OPENBLAS_VERBOSE=2, on stdin) uses the
vector instructions this CPU has: AVX-512 kernels where it has AVX-512,
AVX2 ones where it has AVX2 and FMA."""
import sys

cores = [line.split(":", 1)[1].strip() for line in sys.stdin
         if line.startswith("Core:")]
if not cores:
    sys.exit("OpenBLAS reported no core")
with open("/proc/cpuinfo") as cpuinfo:
    flags = set(next(line.split(":", 1)[1].split() for line in cpuinfo
                     if line.startswith("flags")))
avx512 = {"skylakex", "cooperlake", "sapphirerapids"}
avx2 = avx512 | {"haswell", "zen"}
core = cores[-1].lower()
if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
    want = avx512
elif {"avx2", "fma"} <= flags:
    want = avx2
else:
    want = None
if want is not None and core not in want:
    sys.exit(f"OpenBLAS runs on '{cores[-1]}' kernels: this CPU allows one "
             f"of {sorted(want)}")
print(f"OpenBLAS core: {cores[-1]}")
