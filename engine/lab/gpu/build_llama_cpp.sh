#!/usr/bin/env bash
# Build llama-cpp-python (the version tau pins) for a GPU backend, in place of the CPU wheel.
#
#   engine/lab/gpu/build_llama_cpp.sh --cuda   [--arch 89]        # NVIDIA (CUDA toolkit with nvcc)
#   engine/lab/gpu/build_llama_cpp.sh --rocm   [--arch gfx1100]   # AMD (ROCm with hipconfig)
#   engine/lab/gpu/build_llama_cpp.sh --vulkan                    # any Vulkan GPU (libvulkan-dev, glslc)
#   engine/lab/gpu/build_llama_cpp.sh --cpu                       # back to a CPU build
#
# Options:
#   --arch A          GPU architecture(s): CUDA compute capability ("89", "86;89", "90" for
#                     H100/H200; default: the GPUs in this machine, via nvidia-smi), or a
#                     ROCm gfx target ("gfx1100" = RX 7900, "gfx942" = MI300; default: rocminfo).
#   --sdist PATH      build from a local sdist (.tar.gz / .tgz or an unpacked folder) instead
#                     of downloading llama-cpp-python==VERSION from PyPI.
#   --target DIR      install into DIR (pip --target) instead of the active environment.
#   --offline         no build isolation and no dependency resolution (machines without a
#                     package index: scikit-build-core, cmake and ninja must be installed).
#   --python PY       the Python to install for (default: python3 of the active venv).
#   --jobs N          parallel compile jobs (default: all cores).
#   --dry-run         print the command instead of running it.
#   --no-graphkey     CUDA: leave out graphkey.patch (by default applied to the vendored llama.cpp, so
#                     CUDA graphs are kept per batch shape; tau switches it on, llama-server never).
#
# Afterwards `python -c "import llama_cpp; print(llama_cpp.llama_supports_gpu_offload())"`
# prints True, and tau offloads all layers (--gpu-layers -1, the default). Check the fit
# first: `python -m engine.lab.fit MODEL --ctx 32768 --kv-type q8_0`. Measure the result:
# `python -m engine.lab.gpu.synthetic_bench dense-27b --out /tmp/tau-synth`.
#
# Notes: the CUDA build takes ~4 minutes on 16 cores for one architecture (every extra
# architecture adds about as much). Import llama_cpp before numpy in your own scripts (a
# CUDA build crashed on model load otherwise); tau's engine/backend.py does.
set -euo pipefail

VERSION=0.3.36
BACKEND=""
ARCH=""
SDIST=""
TARGET=""
OFFLINE=0
DRY=0
GRAPHKEY=1
PY="${PYTHON:-python3}"
JOBS="$(nproc 2>/dev/null || echo 4)"

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --cuda) BACKEND=cuda ;;
    --rocm|--hip) BACKEND=rocm ;;
    --vulkan) BACKEND=vulkan ;;
    --cpu) BACKEND=cpu ;;
    --arch) ARCH="$2"; shift ;;
    --sdist) SDIST="$2"; shift ;;
    --target) TARGET="$2"; shift ;;
    --offline) OFFLINE=1 ;;
    --python) PY="$2"; shift ;;
    --jobs) JOBS="$2"; shift ;;
    --dry-run) DRY=1 ;;
    --no-graphkey) GRAPHKEY=0 ;;
    -h|--help) usage 0 ;;
    *) echo "build_llama_cpp.sh: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done
[ -n "$BACKEND" ] || { echo "build_llama_cpp.sh: pick one of --cuda --rocm --vulkan --cpu" >&2; exit 2; }

ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF"
case "$BACKEND" in
  cuda)
    command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "nvcc not found: install the CUDA toolkit (or add /usr/local/cuda/bin to PATH)" >&2; exit 1; }
    command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
    if [ -z "$ARCH" ] && command -v nvidia-smi >/dev/null; then
      ARCH="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d '.' | sort -u | paste -sd';' -)"
    fi
    ARGS="$ARGS -DGGML_CUDA=on"
    [ -n "$ARCH" ] && ARGS="$ARGS -DCMAKE_CUDA_ARCHITECTURES=$ARCH"
    ;;
  rocm)
    command -v hipconfig >/dev/null || { echo "hipconfig not found: install ROCm (and add /opt/rocm/bin to PATH)" >&2; exit 1; }
    export HIPCXX="$(hipconfig -l)/clang"
    export HIP_PATH="$(hipconfig -R)"
    if [ -z "$ARCH" ] && command -v rocminfo >/dev/null; then
      ARCH="$(rocminfo 2>/dev/null | grep -o 'gfx[0-9a-f]*' | sort -u | paste -sd';' -)"
    fi
    ARGS="$ARGS -DGGML_HIP=on"
    [ -n "$ARCH" ] && ARGS="$ARGS -DGPU_TARGETS=$ARCH"
    ;;
  vulkan)
    command -v glslc >/dev/null || { echo "glslc not found: install the Vulkan SDK (Debian/Ubuntu: libvulkan-dev glslc)" >&2; exit 1; }
    ARGS="$ARGS -DGGML_VULKAN=on"
    ;;
  cpu) ;;
esac

# the unpacked or copied sources only feed the pip install below: gone when the script ends, whatever its exit
trap 'rm -rf ${TMP:+"$TMP"} ${WORK:+"$WORK"}' EXIT
if [ -n "$SDIST" ]; then
  SRC="$SDIST"
  if [ -f "$SDIST" ] && [ "$DRY" = 0 ]; then
    TMP="$(mktemp -d)"
    tar xzf "$SDIST" -C "$TMP"
    SRC="$(find "$TMP" -mindepth 1 -maxdepth 1 -type d | head -1)"
  fi
else
  SRC="llama-cpp-python==$VERSION"
fi

# CUDA graphs keyed by batch shape too (graphkey.patch): after a verify pass the single step keeps its
# warm graph; traced on an H100, steps right after a pass went from 4.2-5.0 ms to 3.0-3.4 ms
if [ "$BACKEND" = cuda ] && [ "$GRAPHKEY" = 1 ]; then
  PATCH="$(cd "$(dirname "$0")" && pwd)/graphkey.patch"
  if [ "$DRY" = 1 ]; then
    echo "patch -p1 < $PATCH  (in a copy of $SRC, under vendor/llama.cpp)"
  else
    if [ -f "$SDIST" ]; then
      :  # already unpacked into a temporary folder above: patched there
    elif [ -d "$SRC" ]; then
      WORK="$(mktemp -d)"
      cp -a "$SRC" "$WORK/src"  # the user's folder stays as it was
      SRC="$WORK/src"
    else
      WORK="$(mktemp -d)"
      "$PY" -m pip download --no-deps --no-binary :all: -d "$WORK" "$SRC"
      tar xzf "$WORK"/llama_cpp_python-*.tar.gz -C "$WORK"
      SRC="$(find "$WORK" -mindepth 1 -maxdepth 1 -type d | head -1)"
    fi
    (cd "$SRC/vendor/llama.cpp" && patch -p1 --forward < "$PATCH")
  fi
fi

PIP=("$PY" -m pip install --no-cache-dir --force-reinstall --upgrade --no-deps)
[ "$OFFLINE" = 1 ] && PIP+=(--no-build-isolation --no-index)
[ -n "$TARGET" ] && PIP+=(--target "$TARGET")
PIP+=("$SRC")

echo "CMAKE_ARGS=\"$ARGS\" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS ${PIP[*]}"
[ "$DRY" = 1 ] && exit 0
export CMAKE_ARGS="$ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" FORCE_CMAKE=1
"${PIP[@]}"
if [ -n "$TARGET" ]; then export PYTHONPATH="$TARGET${PYTHONPATH:+:$PYTHONPATH}"; fi
"$PY" -c "import llama_cpp; print('llama_cpp', llama_cpp.__version__, 'gpu offload:', bool(llama_cpp.llama_supports_gpu_offload()))"
