#!/usr/bin/env bash
# One GPU session: build llama-cpp-python for CUDA (unless the installed one offloads already),
# smoke-test on the tiny shape, then measure SHAPE with the synthetic bench.
#
#   engine/lab/gpu/bench_gpu.sh [--sdist PATH] [--arch 90] [--results DIR] [--deadline SECONDS] [SHAPE...]
#
# SHAPE defaults to dense-27b. The build goes to /tmp/tau-site (added to PYTHONPATH);
# models are written to $TAU_SYNTH_DIR (default /tmp/tau-synth); JSON results, the build
# log and the tail of llama.cpp's log go to DIR (default ./synthetic-results).
# --deadline: stop starting work this many seconds after the script began (default 560).
set -uo pipefail
cd "$(dirname "$0")/../../.."
SDIST=""; ARCH=90; RESULTS="synthetic-results"; DEADLINE=560; SHAPES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sdist) SDIST="$2"; shift ;;
    --arch) ARCH="$2"; shift ;;
    --results) RESULTS="$2"; shift ;;
    --deadline) DEADLINE="$2"; shift ;;
    *) SHAPES+=("$1") ;;
  esac
  shift
done
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(dense-27b)
mkdir -p "$RESULTS"
SYN="${TAU_SYNTH_DIR:-/tmp/tau-synth}"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/tau-site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,memory.total,memory.free,compute_cap,driver_version --format=csv 2>&1 | tee "$RESULTS/gpu.txt"
if ! python3 -c "import llama_cpp, sys; sys.exit(0 if llama_cpp.llama_supports_gpu_offload() else 1)" 2>/dev/null; then
  echo "== building llama-cpp-python for CUDA (sm_$ARCH)"
  T0=$SECONDS
  bash engine/lab/gpu/build_llama_cpp.sh --cuda --arch "$ARCH" ${SDIST:+--sdist "$SDIST"} --target /tmp/tau-site --offline \
    > "$RESULTS/build.log" 2>&1
  rc=$?
  echo "build rc=$rc in $((SECONDS - T0)) s"; tail -3 "$RESULTS/build.log"
  [ $rc = 0 ] || { tail -60 "$RESULTS/build.log"; exit $rc; }
fi
left() { echo $((DEADLINE - SECONDS)); }
echo "== tiny smoke test ($(left) s left)"
timeout 90 python3 -m engine.lab.gpu.synthetic_bench tiny --out "$SYN" --tokens 64 --repeats 1 --curve-max 8 --no-extras \
  --json "$RESULTS/tiny.json" 2>> "$RESULTS/progress.log"
for s in "${SHAPES[@]}"; do
  L=$(left); [ "$L" -gt 60 ] || { echo "no time left for $s"; break; }
  echo "== $s ($L s left)"
  DRAFT=()  # a bigger shape also runs LocalEngine with the 1.5B shape as its drafter, when that file is there
  if [ "$s" != tiny ] && [ "$s" != dense-1.5b ] && [ -f "$SYN/synthetic-dense-1.5b.gguf" ]; then
    DRAFT=(--draft "$SYN/synthetic-dense-1.5b.gguf")
  fi
  timeout "$L" python3 -m engine.lab.gpu.synthetic_bench "$s" --out "$SYN" --json "$RESULTS/$s.json" "${DRAFT[@]}" 2>> "$RESULTS/progress.log"
  echo "rc=$?"
done
tail -c 400000 "$SYN/llama.log" > "$RESULTS/llama-log-tail.txt" 2>/dev/null
ls -la "$SYN" "$RESULTS"
