#!/usr/bin/env bash
# Sets Tandem up on a fresh Debian 12 machine: installs the packages it needs
# (as root, with apt-get) and builds it in build/ (or $TANDEM_BUILD_DIR).
# Safe to run again: it installs only what is missing and rebuilds only what
# changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ python3 ccache
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools  # LLVM/MLIR 19
  libgtest-dev                                            # unit tests
  libopenblas-dev                                         # CPU GEMM
  nlohmann-json3-dev                                      # runtime's JSON
  graphviz                                                # placement pictures
  clang libclang-rt-14-dev                                # libFuzzer harnesses
)

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages from PyPI: NumPy for the end-to-end tests' references,
# PyTorch and torchvision for the frontend (python/tandem) and its tests.
pip_install() {
  python3 -m pip install -q "$@" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "$@"
}
if ! python3 -c "import numpy" 2>/dev/null; then
  echo "setup: installing numpy"
  pip_install numpy
fi
# `pip install ./python` offline (--no-build-isolation, as the install test
# does) needs a setuptools that builds wheels by itself.
if ! python3 -c "import setuptools, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 71)" 2>/dev/null; then
  echo "setup: installing setuptools >= 71"
  pip_install "setuptools>=71"
fi
if ! python3 -c "import torch, torchvision" 2>/dev/null; then
  echo "setup: installing torch and torchvision (PyPI; about 4 GB with CUDA libraries)"
  pip_install torch torchvision
fi
# ONNX models in (tandem.load_onnx): onnx reads them; ONNX Runtime is the
# tests' reference and the benchmark's peer; onnxscript is what PyTorch's
# torch.export-based ONNX exporter needs.
if ! python3 -c "import onnx, onnxruntime, onnxscript" 2>/dev/null; then
  echo "setup: installing onnx, onnxruntime and onnxscript"
  pip_install onnx onnxruntime onnxscript
fi

# Intel's oneMKL on Intel CPUs (cmake/TandemBlas.cmake, docs/runtime.md): only
# its library, not the OpenMP runtimes its wheel lists (the runtime runs it
# sequentially; the benchmarks' threaded layer runs on GCC's libgomp). About
# 650 MB installed. On an Intel CPU it is the build's default BLAS (models
# 7-21% faster than with OpenBLAS here); elsewhere OpenBLAS is.
# TANDEM_BLAS=openblas or =mkl chooses for a new build.
intel=false
grep -q GenuineIntel /proc/cpuinfo 2>/dev/null && intel=true
if $intel &&
   ! python3 -c "import importlib.metadata as m; m.version('mkl')" 2>/dev/null; then
  echo "setup: installing mkl (oneMKL, a faster CPU BLAS on Intel CPUs)"
  pip_install --no-deps "mkl==2026.2.0"
fi
blas=${TANDEM_BLAS:-auto}
if [ "$blas" = auto ]; then
  blas=openblas
  if $intel && python3 -c "import importlib.metadata as m; m.version('mkl')" 2>/dev/null; then
    blas=mkl
  fi
fi

build_dir=${TANDEM_BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  echo "setup: configuring $build_dir with the CPU's BLAS: $blas"
  # Debian's lit lives outside where LLVM's CMake looks for it.
  cmake -G Ninja -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py \
    -DTANDEM_BLAS="$blas" "${launcher[@]}" >/dev/null
fi
echo "setup: building in $build_dir"
cmake --build "$build_dir"
