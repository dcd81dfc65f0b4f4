#!/usr/bin/env bash
# The runtime benchmark (a program, not a test): compiled models run on the
# CPU, against what OpenBLAS's sgemm alone reaches on the same shapes, in one
# run (each figure the better of two runs: the machine is shared). PyTorch eager, the issue's other reference, joins when the project
# installs PyTorch (issue 5).
#
# Usage: bench/runtime/run.sh [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${TANDEM_BUILD_DIR:-build}
repeat=${1:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mlp_tower() { # batch width layers
  local batch=$1 width=$2 layers=$3 previous=%x
  echo "func.func @main(%x: tensor<${batch}x${width}xf32>) -> tensor<${batch}x${width}xf32> {"
  for ((i = 0; i < layers; ++i)); do
    echo "  %w$i = tandem.weight \"l$i.w\" : tensor<${width}x${width}xf32>"
    echo "  %h$i = tandem.linear $previous, %w$i : (tensor<${batch}x${width}xf32>, tensor<${width}x${width}xf32>) -> tensor<${batch}x${width}xf32>"
    echo "  %a$i = tandem.relu %h$i : tensor<${batch}x${width}xf32>"
    previous=%a$i
  done
  echo "  return $previous : tensor<${batch}x${width}xf32>"
  echo "}"
}

run_model() { # name model.mlir -> per-run us, the better of two runs
  "$build/bin/tandem-compile" "$2" --device-profile=host -o "$work/$1" >/dev/null
  for attempt in 1 2; do
    "$work/$1" --random-weights 1 --random-inputs 2 --repeat "$repeat" \
      --profile-json "$work/$1.$attempt.json" >/dev/null 2>&1
  done
  python3 -c "import json,sys; print(f\"{min(json.load(open(f))['total_us'] / json.load(open(f))['runs'] for f in sys.argv[1:]):.1f}\")" "$work/$1.1.json" "$work/$1.2.json"
}

sgemm() { # M N K -> "us GFLOP/s", the better of two runs
  { "$build/bin/tandem-bench-sgemm" "$@" "$repeat"; "$build/bin/tandem-bench-sgemm" "$@" "$repeat"; } | sort -n | head -1
}

cat > "$work/cnn.mlir" <<'MLIR'
func.func @main(%x: tensor<32x3x64x64xf32>) -> tensor<32x10xf32> {
  %w1 = tandem.weight "c1.w" : tensor<32x3x3x3xf32>
  %c1 = tandem.conv2d %x, %w1 {padding = array<i64: 1, 1>} : (tensor<32x3x64x64xf32>, tensor<32x3x3x3xf32>) -> tensor<32x32x64x64xf32>
  %r1 = tandem.relu %c1 : tensor<32x32x64x64xf32>
  %p1 = tandem.max_pool2d %r1 {kernel = array<i64: 2, 2>} : tensor<32x32x64x64xf32> -> tensor<32x32x32x32xf32>
  %w2 = tandem.weight "c2.w" : tensor<64x32x3x3xf32>
  %c2 = tandem.conv2d %p1, %w2 {padding = array<i64: 1, 1>} : (tensor<32x32x32x32xf32>, tensor<64x32x3x3xf32>) -> tensor<32x64x32x32xf32>
  %r2 = tandem.relu %c2 : tensor<32x64x32x32xf32>
  %p2 = tandem.avg_pool2d %r2 {kernel = array<i64: 32, 32>} : tensor<32x64x32x32xf32> -> tensor<32x64x1x1xf32>
  %f = tandem.reshape %p2 : tensor<32x64x1x1xf32> -> tensor<32x64xf32>
  %wf = tandem.weight "fc.w" : tensor<10x64xf32>
  %y = tandem.linear %f, %wf : (tensor<32x64xf32>, tensor<10x64xf32>) -> tensor<32x10xf32>
  return %y : tensor<32x10xf32>
}
MLIR
cnn_us=$(run_model cnn "$work/cnn.mlir")

mlp_tower 256 1024 4 > "$work/tower.mlir"
tower_us=$(run_model tower "$work/tower.mlir")
read -r gemm_us gemm_gflops < <(sgemm 256 1024 1024)
mlp_us=$(run_model mlp test/Transforms/Inputs/mlp-13-16-32-1.mlir)
read -r small_us _ < <(sgemm 128 32 16)

python3 - "$tower_us" "$gemm_us" "$gemm_gflops" "$mlp_us" "$small_us" "$cnn_us" <<'PY'
import sys
tower, gemm, gflops, mlp, small, cnn = map(float, sys.argv[1:])
cnn_flops = 2 * 32 * 32 * 64 * 64 * 3 * 9 + 2 * 32 * 64 * 32 * 32 * 32 * 9
flops = 4 * 2 * 256 * 1024 * 1024
print(f"{'model':<34} {'us/run':>10} {'GFLOP/s':>9} {'vs sgemm':>9}")
print(f"{'4 x (1024->1024, relu), batch 256':<34} {tower:>10.1f} {flops / tower / 1e3:>9.1f} {4 * gemm / tower:>8.2f}x")
print(f"{'  OpenBLAS sgemm alone, 4 x':<34} {4 * gemm:>10.1f} {gflops:>9.1f} {'1.00x':>9}")
print(f"{'MLP 13-16-32-1, batch 128':<34} {mlp:>10.1f} {'':>9} {'':>9}")
print(f"{'  its largest sgemm alone':<34} {small:>10.1f}")
print(f"{'small CNN (2 conv, pools), batch 32':<34} {cnn:>10.1f} {cnn_flops / cnn / 1e3:>9.1f}")
PY
