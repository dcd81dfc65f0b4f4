#!/usr/bin/env bash
# The GPU benchmark: on a machine with a CUDA GPU, runs the CUDA tests (the
# op suite on CUDA, the generated kernels' numerics, tandem-calibrate's GPU
# rates: cuda_tests.py, with binaries compiled here beforehand, since the GPU
# machine has no LLVM) and measures Tandem all-gpu vs Tandem auto under a budget vs PyTorch eager CUDA
# vs PyTorch with accelerate-style offload on the same models and budget,
# and copy bandwidth against pinned cudaMemcpyAsync (bench.py says how);
# then the streaming part (streaming.py): a GPT-style decoder (bench/schedule's
# decoder_mlir, 8 layers, d=1024, 2048 tokens, 384 MiB of f32 weights)
# compiled at unlimited memory and at budgets of 1/2 and 1/4 of its weights
# plus its activations, each run on CUDA by wall clock per run in its default
# mode (streams, events, CUDA graphs), with --no-cuda-graph and with
# --serial; an accelerate-style baseline compiled already placed (every op on
# the GPU, the weights that fit first resident, the rest streamed) run with
# --serial; the same decoder in PyTorch resident and with accelerate-style
# offload (pageable host weights copied synchronously before each module);
# the ratios async / unlimited (<= 1.25), offload / async (>= 1.5x at 1/2,
# >= 2x at 1/4), serial / async, no-graph / graph, and the H2D bandwidth of
# its copies (--profile-json) against PyTorch's pinned non_blocking copies
# (>= 90%); then the kernel microbenchmark (kernels.py): one op per CUDA
# kernel family at a realistic size, its time, GB/s or TFLOP/s against the
# H200's peaks and against PyTorch on the same GPU, and its result against
# PyTorch's. Results go to OUT (results.md, results.json, cuda-tests.txt).
# TANDEM_GPU_BENCH_PARTS=tests, =models, =streaming or =kernels (a
# comma-separated list; all four by default) runs those parts only;
# TANDEM_STREAMING_REPEAT (20) and TANDEM_STREAMING_TRIES (2) set the
# streaming part's runs per process and processes per figure;
# TANDEM_KERNEL_BENCH_ONLY=SUBSTRING some kernel cases; the kernel cases
# stop starting after TANDEM_KERNEL_BENCH_BUDGET_S seconds (240).
#
# Usage: bench/gpu/run.sh OUT [PREPARED]
#   Without PREPARED, it first prepares the binaries in OUT/prepared (needs
#   the built tree: scripts/setup.sh). With PREPARED (made elsewhere by
#   `python3 bench/gpu/bench.py prepare DIR`), it needs only PyTorch and the
#   GPU: the way to run it on a GPU machine that has no LLVM. PREPARED holds
#   the binaries and libraries packed in binaries.tar.xz (about 10 MB);
#   the run unpacks it in place.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: bench/gpu/run.sh OUT [PREPARED]}
mkdir -p "$out"
prepared=${2:-}
if [ -z "$prepared" ]; then
  prepared="$out/prepared"
  python3 bench/gpu/bench.py prepare "$prepared"
fi
export LD_LIBRARY_PATH="$prepared/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# PyTorch's wheels carry CUDA's libraries (cuBLAS, cuDNN): the binaries use
# them where /usr/local/cuda is absent.
torch_cuda_libs=$(python3 -c "import glob, os, torch; print(':'.join(sorted({os.path.dirname(p) for p in glob.glob(os.path.join(os.path.dirname(torch.__file__), '..', 'nvidia', '**', 'lib', '*.so*'), recursive=True)})))" 2>/dev/null || true)
[ -n "$torch_cuda_libs" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$torch_cuda_libs"

python3 bench/gpu/bench.py run "$prepared" "$out"
