#!/usr/bin/env bash
# The main job: sets Tandem up (scripts/setup.sh), then places the shipped
# example model (examples/recommender.mlir, user story 1: a 10M x 150
# embedding table and an MLP tower) on a V100 under a 4 GiB GPU budget. It
# prints where each op went and why it pays, compares the strategies, draws
# the placed graph, compiles the model into a native executable and runs it
# (random weights and inputs; GPU ops on the sim backend on a machine
# without a CUDA backend) with the profile.
#
# Usage: scripts/run-example.sh [MODEL.mlir] [PROFILE] [BUDGET]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
build_dir=${TANDEM_BUILD_DIR:-build}
model=${1:-examples/recommender.mlir}
profile=${2:-v100-32gb}
budget=${3:-4GiB}
out="$build_dir/example"
mkdir -p "$out"
opt="$build_dir/bin/tandem-opt"

echo
echo "== $model: the work and devices of each op"
"$opt" "$model" --tandem-print-work -o /dev/null

echo
echo "== placement on $profile under $budget (tandem-placement-pipeline)"
"$opt" "$model" \
  --tandem-placement-pipeline="device-profile=$profile gpu-memory=$budget report=$out/auto.json" \
  --tandem-view-placement="$out/placement.dot" -o "$out/placed.mlir"
reports=("$out/auto.json")
for strategy in all-cpu greedy all-gpu; do
  # all-gpu is refused when it does not fit: say so and go on.
  if "$opt" "$model" --tandem-place="device-profile=$profile gpu-memory=$budget strategy=$strategy report=$out/$strategy.json" \
      -o /dev/null 2>"$out/$strategy.err"; then
    reports+=("$out/$strategy.json")
  else
    echo "strategy $strategy: $(grep -o 'error: .*' "$out/$strategy.err" | head -1)"
  fi
done
python3 scripts/placement_summary.py "${reports[@]}"

echo
echo "== the schedule (tandem-schedule): the four queues, predicted"
python3 scripts/schedule_summary.py "$out/auto.json"

echo
echo "== tandem-compile: $model -> $out/model, run with the profile"
"$build_dir/bin/tandem-compile" "$model" --device-profile="$profile" \
  --gpu-memory="$budget" -o "$out/model"
"$out/model" --random-weights 1 --random-inputs 2 --output-dir "$out/outputs" \
  --profile --trace "$out/trace.json"
echo "trace, one track per queue (open in ui.perfetto.dev): $out/trace.json"

if command -v dot >/dev/null; then
  dot -Tsvg "$out/placement.dot" -o "$out/placement.svg"
  echo
  echo "placed IR: $out/placed.mlir; picture: $out/placement.svg"
else
  echo
  echo "placed IR: $out/placed.mlir; picture (Graphviz DOT): $out/placement.dot"
fi

echo
echo "== PyTorch: torchvision resnet18 exported, compiled under 40MiB and run (examples/pytorch/resnet18.py)"
python3 examples/pytorch/resnet18.py
