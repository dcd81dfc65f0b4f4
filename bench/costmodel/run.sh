#!/usr/bin/env bash
# The cost model's validation: models compiled under a device profile (by
# default one tandem-calibrate measures first), their predicted times beside
# what runs measure, per model and per op family (see bench.py).
#
# Usage: bench/costmodel/run.sh [--profile PROFILE] [--scale S] [MODEL...]
#        (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 bench/costmodel/bench.py "$@"
