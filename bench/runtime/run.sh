#!/usr/bin/env bash
# The runtime benchmark: compiled models against PyTorch eager on the CPU and
# against OpenBLAS's sgemm alone, in one run (see bench.py).
#
# Usage: bench/runtime/run.sh [SCALE]   (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 bench/runtime/bench.py "$@"
