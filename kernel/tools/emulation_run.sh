#!/usr/bin/env bash
# Issue 17, "weigh the proxy", in one device call (an H200), from the repository root:
#   1. python -m bench.verify --emulate-sm120 --impl cuda: the ceilings, the H200's mma.sync rate per SM-clock,
#      k = N/32 from it, the emulation's own check, and every case timed on the product and on the emulated build;
#   2. kernel/tools/mma_probe.cu, product and emulated under the same N: the tensor pipe, ldmatrix bandwidth and
#      latency, ldmatrix-fed MMAs, per SM-clock;
#   3. kernel/tools/timeline.cu at (1,8,64) 91k, product and emulated, interleaved twice: the tile time.
# Writes under $OUT: the result file, bench.log, probe.log, timeline.log. The tools' product builds compile in the
# background while the benchmark builds its extension.
#
#   OUT=/tmp/out TRACKER_COMMIT=<sha> TRACKER_DIRTY=0 kernel/tools/emulation_run.sh [budget]
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the result file and the logs}"
budget=${1:-0.25}
arch=(-gencode=arch=compute_90,code=sm_90)
tools=/tmp/emulation_tools
mkdir -p "$tools"
nvcc -O3 -std=c++17 "${arch[@]}" -o "$tools/mma_probe" kernel/tools/mma_probe.cu &
nvcc -O3 --use_fast_math -std=c++17 "${arch[@]}" -Ikernel/csrc -o "$tools/timeline" kernel/tools/timeline.cu &

export PYTHONUNBUFFERED=1
timeout 450 python3 -m bench.verify --emulate-sm120 --cases all --impl cuda --budget "$budget" --out "$OUT" 2>&1 |
  tee "$OUT/bench.log"
status=$?

# N as the run measured it (the emulation check's params), else nothing more to do.
n=$(python3 - "$OUT" <<'EOF'
import json, pathlib, sys
files = sorted(pathlib.Path(sys.argv[1]).glob("*verify*.json"))
cases = json.loads(files[-1].read_text())["cases"] if files else []
print(next((round(c["params"]["mma_repeat"] * 32) for c in cases if c["metric"] == "emulation.mma_flop_per_sm_clk"), ""))
EOF
)
wait
if [ -z "$n" ]; then
  echo "no emulation check in the result file: tools not run" | tee -a "$OUT/bench.log"
  exit 1
fi
nvcc -O3 -std=c++17 "${arch[@]}" -DVERIFY_MMA_REPEAT_X32="$n" -o "$tools/mma_probe_emu" kernel/tools/mma_probe.cu &
nvcc -O3 --use_fast_math -std=c++17 "${arch[@]}" -Ikernel/csrc -DVERIFY_MMA_REPEAT_X32="$n" -o "$tools/timeline_emu" \
  kernel/tools/timeline.cu &
wait
{
  timeout 60 "$tools/mma_probe"
  timeout 60 "$tools/mma_probe_emu"
} 2>&1 | tee "$OUT/probe.log"
{
  for round in 1 2; do
    echo "== round $round: product (N=32)"
    timeout 30 "$tools/timeline" 1 8 64 91000
    echo "== round $round: emulated (N=$n)"
    timeout 30 "$tools/timeline_emu" 1 8 64 91000
  done
} 2>&1 | tee "$OUT/timeline.log"
exit "$status"
