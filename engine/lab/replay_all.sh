#!/usr/bin/env bash
# Replays the policy on every recording the project keeps, under this CPU's curve and the H200's:
# run it at two commits to compare them without the machine's noise (engine/lab/MEASUREMENTS.md).
#   bash engine/lab/replay_all.sh [--edits]    (--edits: each greedy edit's speedup too)
set -euo pipefail
cd "$(dirname "$0")/../.."
R=engine/lab/benchdata/results
GREEDY="$R/cpu2-epyc-replay-outputs-s13.json $R/cpu2-epyc-replay-heldout23-outputs-s15.json
  $R/cpu2-epyc-avx2-replay-heldout4567-outputs-s19.json $R/cpu2-epyc-avx2-replay-heldout8-outputs-s20.json
  $R/cpu2-epyc-avx512-replay-heldout1415-outputs-s25.json $R/cpu2-epyc-avx512-replay-heldout17-outputs-s26.json
  $R/cpu2-epyc-avx512-replay-heldout18-outputs-s27.json $R/cpu2-epyc-avx512-replay-heldout20-outputs-s28.json
  $R/cpu2-epyc-avx512-replay-heldout21-outputs-s29.json $R/cpu2-epyc-avx512-replay-heldout22-outputs-s29.json
  $R/cpu2-epyc-avx512-replay-heldout23-outputs-s30.json $R/cpu2-epyc-avx512-replay-heldout24-outputs-s31.json"
declare -A CURVE=(
  [CPU]="--curve $R/cpu2-epyc-avx512-long-paired-s24.json"
  [H200]="--curve engine/lab/gpu/results/h200-real-heldout11-peer-s22.json --pad 16,64 --overlap"
)
summary() {  # $1: show each edit
  python -c "
import json, sys
r = json.load(sys.stdin)
print('  ', {k: v for k, v in r['summary'].items() if v is not None})
for k, v in r['workloads'].items():
    if v['kind'] == 'long':
        print('   whole run', v['speedup'])
    elif sys.argv[1] == 'yes' and v['kind'] == 'edit':
        print('   ', k, v['speedup'])
" "$1"
}
EACH=no; [ "${1:-}" = "--edits" ] && EACH=yes
for c in CPU H200; do
  echo "== $c greedy"; python -m engine.lab.replay replay $GREEDY ${CURVE[$c]} --json | summary $EACH
  for s in 1 2; do
    echo "== $c sampled draw $s"
    python -m engine.lab.replay replay $R/cpu2-epyc-avx2-replay-sampled$s-outputs-s21.json ${CURVE[$c]} --json | summary no
  done
  for s in 23 30; do  # two recordings of the long run (its greedy replies part at near-ties between sessions)
    echo "== $c long run (s$s)"; python -m engine.lab.replay replay $R/cpu2-epyc-avx512-replay-long-outputs-s$s.json ${CURVE[$c]} --json | summary no
  done
done
