#!/usr/bin/env bash
# Regenerates the dialect reference from the .td files and copies it into
# docs/reference/, where it is committed (test/Docs checks it is current).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TANDEM_BUILD_DIR:-build}
cmake --build "$build_dir" --target tandem-doc
mkdir -p docs/reference
cp "$build_dir"/docs/Dialects/*.md "$build_dir"/docs/TandemPasses.md \
  "$build_dir"/docs/TandemConversionPasses.md docs/reference/
ls docs/reference
