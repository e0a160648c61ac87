#!/usr/bin/env bash
# Host side of a device lease: what lease.sh's steps carry, made from a fresh checkout.
#
#   engine/lab/gpu/prepare.sh OUT_DIR [SDIST.tar.gz]
#
# Writes OUT_DIR/sdist.tgz (llama-cpp-python 0.3.36 without .git, examples, benches, docs, the sycl and
# opencl backends and the vocab ggufs but qwen2's: about 11 MB), OUT_DIR/wheels (the pure-python
# packages the sdist's llama_cpp imports that the device lacks) and OUT_DIR/chunks/t.NN and d.NN
# (the default target and draft models in 44 MiB pieces: the device takes one small file a call).
# The models come from tau's cache (`tau models` fetches them).
set -euo pipefail
OUT="$1"
SDIST="${2:-}"
MODELS="${TAU_MODELS_DIR:-$HOME/.cache/tau/models}"
mkdir -p "$OUT/wheels" "$OUT/chunks"
W=$(mktemp -d)
if [ -z "$SDIST" ]; then
  pip download llama-cpp-python==0.3.36 --no-deps --no-binary :all: -d "$W" -q
  SDIST="$W/llama_cpp_python-0.3.36.tar.gz"
fi
tar xzf "$SDIST" -C "$W"
S="$W/llama_cpp_python-0.3.36"
V="$S/vendor/llama.cpp"
rm -rf "$S/.git" "$S/examples" "$V/.git" "$V/benches" "$V/examples" "$V/docs" "$V/ggml/src/ggml-sycl" "$V/ggml/src/ggml-opencl"
find "$V/models" -name '*.gguf' ! -name 'ggml-vocab-qwen2.gguf' -delete
tar czf "$OUT/sdist.tgz" -C "$W" llama_cpp_python-0.3.36
pip download diskcache platformdirs --no-deps --only-binary :all: -d "$OUT/wheels" -q
target=$(ls "$MODELS"/*1.5b*q4_k_m*.gguf "$MODELS"/*1.5B*Q4_K_M*.gguf 2>/dev/null | head -1 || true)
draft=$(ls "$MODELS"/*0.5b*q4_k_m*.gguf "$MODELS"/*0.5B*Q4_K_M*.gguf 2>/dev/null | head -1 || true)
[ -n "$target" ] && [ -n "$draft" ] || { echo "no default models in $MODELS (run tau models)" >&2; exit 1; }
split -b 44M -d -a 2 "$target" "$OUT/chunks/t."
split -b 44M -d -a 2 "$draft" "$OUT/chunks/d."
rm -rf "$W"
du -sh "$OUT/sdist.tgz" "$OUT/wheels"
ls "$OUT/chunks" | tr '\n' ' '
echo
