#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the runtime's file readers with clang
# (ASan + UBSan) and runs each for the given time.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_FUZZER] [FUZZER...]   (default: 600, all)
# Crashes, if any, are written to build/fuzz/<fuzzer>/ and fail the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
fuzzers=("$@")
[ ${#fuzzers[@]} -gt 0 ] || fuzzers=(npy safetensors)
out=${TANDEM_BUILD_DIR:-build}/fuzz
mkdir -p "$out"
CXX=${CXX_FUZZ:-clang++}

for fuzzer in "${fuzzers[@]}"; do
  binary="$out/$fuzzer-fuzzer"
  "$CXX" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -Iruntime/include \
    runtime/lib/FileBytes.cpp runtime/lib/Json.cpp runtime/lib/Npy.cpp \
    runtime/lib/Safetensors.cpp runtime/lib/Tensor.cpp \
    "runtime/fuzz/${fuzzer}_fuzzer.cpp" -o "$binary"
  corpus="$out/$fuzzer/corpus"
  mkdir -p "$corpus"
  cp runtime/fuzz/seeds/"$fuzzer"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: $fuzzer for ${seconds}s"
  (cd "$out/$fuzzer" && "../$fuzzer-fuzzer" -max_total_time="$seconds" \
      -max_len=4096 -print_final_stats=1 corpus)
done
