#!/usr/bin/env bash
# The main job: sets Tandem up (scripts/setup.sh), then verifies the shipped
# example model (examples/recommender.mlir, USERS.md story 1) and prints each
# op's work estimate and the devices that can run it.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
build_dir=${TANDEM_BUILD_DIR:-build}
model=${1:-examples/recommender.mlir}

echo
echo "== $model: parsed and verified; the work and devices of each op"
"$build_dir/bin/tandem-opt" "$model" --tandem-print-work -o /dev/null
