#!/usr/bin/env bash
# The cluster merge's first device call (issue 27), from a snapshot's root, each step under its own timeout:
#   1. every extension the GPU tests load, built in parallel (as record_run.sh);
#   2. python -m bench.cluster_probe: the cluster merge against the combine alone, standalone and in a 61-layer stack,
#      for the product and v26, two rounds (the decision);
#   3. kernel/tools/timeline.cu (v26, sm_90, -DTIMELINE_CLUSTER) at (1,8,16) 5.7k: the launcher's own split count,
#      then 64 splits merged by the combine alone and in clusters of 8 (the fixed cost itemised);
#   4. the GPU suite (pytest -m gpu tests/kernel, tests/kernel/test_gpu_cluster.py included) recorded by the tracker's
#      plugin into $OUT/ev, with what time is left.
# Writes under $OUT: one log a step and ev/, and all of it again as one all.tgz.
#
#   OUT=/tmp/out TRACKER_COMMIT=<the 40-digit sha> TRACKER_DIRTY=0 kernel/tools/cluster_run.sh [seconds for the call]
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the logs}"
limit=${1:-580}
start=$SECONDS
export PYTHONUNBUFFERED=1 VERIFY_KERNEL_CACHE=/tmp/verify-kernel
left() { echo $((limit - (SECONDS - start) - 15)); }
stamp() { echo "== $1 at $((SECONDS - start)) s" | tee -a "$OUT/steps.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/build.log"
variants=$(python3 -c "
import torch
from kernel import build
cc = torch.cuda.get_device_capability()
print(' '.join(['v26', *(n for n, spec in build.VARIANTS.items() if cc in spec[3]), *(['fp8'] if cc >= build.FP8_MIN_CC else [])]))")
nvcc -O3 --use_fast_math -std=c++17 -arch=sm_90 -DTIMELINE_CLUSTER -Ikernel/csrc kernel/tools/timeline.cu \
  -o /tmp/timeline >"$OUT/timeline_build.log" 2>&1 &
for v in $variants; do
  timeout 240 python3 -c "from kernel import build; build.load(variant='$v'); print('built $v')" >>"$OUT/build.log" 2>&1 &
done
wait
rm -f /tmp/verify-kernel/*/lock
python3 -c "from kernel import build; build.load(); print('the product builds')" >>"$OUT/build.log" 2>&1
stamp "built ($variants)"
timeout 220 python3 -m bench.cluster_probe --reps 150 >"$OUT/probe.log" 2>&1
stamp "probe exit $?"
for args in "0 20 1" "64 20 1" "64 20 8" "64 20 4"; do
  timeout 30 /tmp/timeline 1 8 16 5700 $args >>"$OUT/timeline.log" 2>&1
done
stamp "timeline"
if [ "$(left)" -gt 60 ]; then
  timeout "$(left)" python3 -m pytest -q -m gpu -p no:cacheprovider -p tracker.pytest_plugin tests/kernel \
    --tracker-record="$OUT/ev" >"$OUT/gpu_tests.log" 2>&1
  stamp "gpu tests exit $?"
fi
tail -3 "$OUT/gpu_tests.log" 2>/dev/null
tar czf "$OUT/all.tgz" -C "$OUT" --exclude=all.tgz .
