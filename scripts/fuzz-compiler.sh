#!/usr/bin/env bash
# Mutation-fuzzes the whole of tandem-compile (parse, verify, place under a
# binding budget, insert transfers, plan memory, lower, emit an object) for
# SECONDS (default 600), seeded with the test corpus, then builds and runs
# executables from mutated models for a tenth of that. Uses the ASan/UBSan
# build (scripts/sanitize.sh) when there is one, so a memory error or
# undefined behaviour counts as a crash too. Prints the counts; exits 1 on
# any crash (each one is printed with its input).
#
#   scripts/fuzz-compiler.sh [SECONDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
seed=${2:-1}
build_dir=${TANDEM_ASAN_BUILD_DIR:-build-asan}
[ -x "$build_dir/bin/tandem-compile" ] || build_dir=${TANDEM_BUILD_DIR:-build}
compiler="$build_dir/bin/tandem-compile"
# As scripts/sanitize.sh: LLVM's headers poison allocator slabs that the
# prebuilt libMLIR then uses (false use-after-poison reports).
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0}
echo "fuzz-compiler: $compiler for ${seconds}s (seed $seed)"
corpus=(test/Transforms/Inputs/*.mlir test/Transforms/Inputs/models/*.mlir
        test/E2E/Inputs/*.mlir examples/recommender.mlir)
status=0
python3 test/Tools/mutate_and_parse.py --tool "$compiler" \
  --tool-arg=--emit=obj --tool-arg=--gpu-memory=256KiB \
  --seed "$seed" --seconds "$seconds" "${corpus[@]}" || status=1
python3 test/Tools/mutate_and_parse.py --tool "$compiler" --run \
  --seed "$((seed + 1))" --seconds "$((seconds / 10))" \
  test/Transforms/Inputs/mlp-13-16-32-1.mlir test/E2E/Inputs/*.mlir \
  test/Transforms/Inputs/windowed-matmul.mlir || status=1
exit $status
