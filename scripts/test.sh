#!/usr/bin/env bash
# Sets Tandem up (scripts/setup.sh), then runs every test: the lit/FileCheck
# suite and the GoogleTest unit tests, in one lit run. Prints "N skipped",
# then, last, "N passed, N failed", and exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

build_dir=${TANDEM_BUILD_DIR:-build}
log="$build_dir/test-results.log"
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv \
  "$build_dir/test" "$build_dir/test/Unit" 2>&1 | tee "$log"
lit_status=${PIPESTATUS[0]}

python3 scripts/lit_summary.py "$log"
summary_status=$?
if [ "$lit_status" -ne 0 ] || [ "$summary_status" -ne 0 ]; then
  exit 1
fi
