#!/usr/bin/env bash
# One device lease, step by step (each step is one short call; the machine goes back when idle,
# so the calls follow each other at once). Files live in /tmp/lease on the device. What the steps
# carry (the stripped sdist, the wheels, the model chunks) comes from engine/lab/gpu/prepare.sh.
#
#   lease.sh setup SDIST.tgz WHEELS_DIR   unpack, install the pure-python wheels, start the CUDA build
#                                         (graphkey.patch applied: with GGML_CUDA_GRAPH_KEY_BY_ROWS set, CUDA graphs
#                                         are kept per batch shape; unset, llama.cpp as vendored; the peer never has it)
#   lease.sh chunk FILE                   add one model chunk (t.NN: target, d.NN: drafter)
#   lease.sh bench SUITE CONFIGS ROUNDS OUT.json [peer] [nodraft] [paired] [WIDTHS|0] [sync]   (MODES=a,b in the env)
#                                         wait for the build, join and check the models, run real_bench
#   lease.sh shapes [ARGS]                pass cost by rows, CUDA graphs on and off (engine.lab.gpu.pass_shapes)
#   lease.sh trace SUITE OUT.json [CONFIGS] [MODES]   where each pass's time goes (engine.lab.gpu.pass_trace)
#   lease.sh why OUT_DIR [ARGS]           which node stops a CUDA graph's replay, steps and passes in a row
#                                         (engine.lab.gpu.graph_why; graphwhy.patch prints with GGML_CUDA_GRAPH_WHY)
set -uo pipefail
L=/tmp/lease
REPO=$PWD

ready() {  # the build finished (else its log's tail), the target joined, the built library on the path
  while [ ! -f $L/build.rc ]; do sleep 2; done
  grep -q rc=0 $L/build.rc || { tail -40 $L/build.log; exit 1; }
  [ -f $L/t.gguf ] || cat $L/m/t.* > $L/t.gguf
  export LLAMA_CPP_LIB_PATH=$L/llama_cpp_python-0.3.36/vendor/llama.cpp/build/bin
  export PYTHONPATH=$L/llama_cpp_python-0.3.36:$L/site:$REPO PYTHONUNBUFFERED=1
}

case "$1" in
setup)
  mkdir -p $L/m && tar xzf "$2" -C $L && pip install -q --no-index --no-deps --target $L/site "$3"/*.whl || exit 1
  cd $L/llama_cpp_python-0.3.36/vendor/llama.cpp || exit 1
  patch -p1 < $REPO/engine/lab/gpu/graphkey.patch || exit 1  # inert unless GGML_CUDA_GRAPH_KEY_BY_ROWS is set
  patch -p1 < $REPO/engine/lab/gpu/graphwhy.patch || exit 1  # prints only when GGML_CUDA_GRAPH_WHY is set
  setsid nohup bash -c "cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release && cmake --build build -j16 --target llama-server; echo rc=\$? > $L/build.rc" \
    > $L/build.log 2>&1 < /dev/null &
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv ;;
chunk)
  cp "$2" $L/m/ && ls $L/m | wc -l && tail -1 $L/build.log ;;
shapes)
  ready
  shift; echo graphs; python3 -m engine.lab.gpu.pass_shapes $L/t.gguf "$@" 2>/dev/null
  echo no-graphs; GGML_CUDA_DISABLE_GRAPHS=1 python3 -m engine.lab.gpu.pass_shapes $L/t.gguf "$@" 2>/dev/null ;;
why)
  ready
  O=$2; shift 2; mkdir -p $O
  GGML_CUDA_GRAPH_WHY=1 GGML_CUDA_GRAPH_KEY_BY_ROWS=1 python3 -m engine.lab.gpu.graph_why $L/t.gguf "$@" 2> $O/why-bykey.err > $O/why-bykey.json
  echo "by key: $(cat $O/why-bykey.json)"; grep -c graphwhy $O/why-bykey.err
  grep -E '^(event|graph)' $O/why-bykey.err | tail -60 ;;
trace)
  ready
  shift; python3 -m engine.lab.gpu.pass_trace $L/t.gguf "$@" 2>&1 | grep -v '^llama\|^load' ;;
bench)
  ready; cat $L/build.rc
  [ -f $L/d.gguf ] || cat $L/m/d.* > $L/d.gguf
  sha256sum $L/t.gguf $L/d.gguf
  D=$L/d.gguf; [ "${7:-}" = nodraft ] && D=none
  P=(); [ "${6:-}" = peer ] && P=($LLAMA_CPP_LIB_PATH/llama-server)
  X=(); [ "${8:-}" = paired ] && X=(--paired)
  [ -n "${9:-}" ] && [ "$9" != - ] && X+=(--widths "$9")
  [ "${10:-}" = sync ] && X+=(--no-overlap)  # picks after each plain step, not beside it
  [ -n "${MODES:-}" ] && X+=(--modes "$MODES")  # e.g. MODES=sampled-llama (default: greedy,sampled)
  python3 -m engine.lab.gpu.real_bench $L/t.gguf $D "$2" "$3" "$4" "$5" "${P[@]}" "${X[@]}" ;;
esac
