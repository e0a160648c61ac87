#!/usr/bin/env bash
# llama-server with AMX's tile configuration fixed, beside the unfixed one, for `tau bench --peer-server`.
# GCC 12 drops the tile rows in llama.cpp's ggml_tile_config_init (engine/lab/amxbuild.py says why);
# this recompiles that one file with the widened header first on the include path, relinks the CPU
# kernels' library into OUT and writes OUT/llama-server, which runs the original binary against it.
#
#   peer_amx.sh LLAMA_CPP_DIR FIX_DIR OUT     (LLAMA_CPP_DIR holds build/ from build_llama_server.sh;
#                                              FIX_DIR holds amxtileintrin.h from engine.lab.amxbuild)
set -euo pipefail
SRC=$(cd "$1" && pwd); FIX=$(cd "$2" && pwd); mkdir -p "$3"; OUT=$(cd "$3" && pwd)
D=$SRC/build/ggml/src
flag() { sed -n "s/^$1 = //p" "$D/CMakeFiles/ggml-cpu.dir/flags.make"; }
(cd "$D" && c++ -I"$FIX" $(flag CXX_DEFINES) $(flag CXX_INCLUDES) $(flag CXX_FLAGS) \
   -c "$SRC/ggml/src/ggml-cpu/amx/mmq.cpp" -o "$OUT/mmq.cpp.o")
[ "$(objdump -d "$OUT/mmq.cpp.o" | grep -c ldtilecfg)" != 0 ] || { echo "no AMX code in mmq.cpp.o: nothing to fix" >&2; exit 1; }
LINK=$(sed "s|-o [^ ]*libggml-cpu[^ ]*|-o $OUT/libggml-cpu.so.0|; s|\"CMakeFiles/ggml-cpu.dir/ggml-cpu/amx/mmq.cpp.o\"|$OUT/mmq.cpp.o|" \
       "$D/CMakeFiles/ggml-cpu.dir/link.txt")
(cd "$D" && eval "$LINK")
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
  "$OUT" "$SRC/build/bin/llama-server" > "$OUT/llama-server"
chmod +x "$OUT/llama-server"
echo "$OUT/llama-server"
