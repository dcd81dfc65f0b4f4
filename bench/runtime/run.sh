#!/usr/bin/env bash
# The runtime benchmark (a program, not a test): compiled models run on the
# CPU, against what OpenBLAS's sgemm alone reaches on the same shapes, in one
# run. PyTorch eager, the issue's other reference, joins when the project
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

run_model() { # name model.mlir -> per-run us
  "$build/bin/tandem-compile" "$2" --device-profile=host -o "$work/$1" >/dev/null
  "$work/$1" --random-weights 1 --random-inputs 2 --repeat "$repeat" \
    --profile-json "$work/$1.json" >/dev/null 2>&1
  python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(f\"{p['total_us']/p['runs']:.1f}\")" "$work/$1.json"
}

mlp_tower 256 1024 4 > "$work/tower.mlir"
tower_us=$(run_model tower "$work/tower.mlir")
read -r gemm_us gemm_gflops < <("$build/bin/tandem-bench-sgemm" 256 1024 1024 "$repeat")
mlp_us=$(run_model mlp test/Transforms/Inputs/mlp-13-16-32-1.mlir)
read -r small_us _ < <("$build/bin/tandem-bench-sgemm" 128 32 16 "$repeat")

python3 - "$tower_us" "$gemm_us" "$gemm_gflops" "$mlp_us" "$small_us" <<'PY'
import sys
tower, gemm, gflops, mlp, small = map(float, sys.argv[1:])
flops = 4 * 2 * 256 * 1024 * 1024
print(f"{'model':<34} {'us/run':>10} {'GFLOP/s':>9} {'vs sgemm':>9}")
print(f"{'4 x (1024->1024, relu), batch 256':<34} {tower:>10.1f} {flops / tower / 1e3:>9.1f} {4 * gemm / tower:>8.2f}x")
print(f"{'  OpenBLAS sgemm alone, 4 x':<34} {4 * gemm:>10.1f} {gflops:>9.1f} {'1.00x':>9}")
print(f"{'MLP 13-16-32-1, batch 128':<34} {mlp:>10.1f} {'':>9} {'':>9}")
print(f"{'  its largest sgemm alone':<34} {small:>10.1f}")
PY
