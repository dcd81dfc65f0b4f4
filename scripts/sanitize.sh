#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer in
# build-asan/ (or $TANDEM_ASAN_BUILD_DIR) and runs every test there. Not part
# of CI (it doubles the build); run it before changing the runtime or the
# passes' data structures.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
build_dir=${TANDEM_ASAN_BUILD_DIR:-build-asan}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py >/dev/null
fi
cmake --build "$build_dir"
# LLVM's headers poison the unused parts of BumpPtrAllocator slabs in our
# instrumented code, while the prebuilt (uninstrumented) libMLIR allocates
# from the same slabs without unpoisoning: false "use-after-poison" reports.
# The poisoning is the headers' own, so it is turned off; every other check
# stays.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0}
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv "$build_dir/test" \
  "$build_dir/test/Unit" 2>&1 | tee "$build_dir/test-results.log"
python3 scripts/lit_summary.py "$build_dir/test-results.log"
