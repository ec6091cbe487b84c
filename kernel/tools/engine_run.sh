#!/usr/bin/env bash
# The GPU suite and the engine's and the defrag's benchmarks in one device call (an H200), from a snapshot's root:
# what plan 0002 needs again after a change to kernel/engine/, kernel/defrag/ or the tests' configuration, without
# record_run.sh's kernel benchmarks (bench verify, the emulation, the sanitizers), whose evidence such a change
# leaves standing. Each step under its own timeout, in order:
#   1. every extension the GPU tests load, built in parallel (as record_run.sh);
#   2. the GPU suite (pytest -m gpu tests/kernel) recorded by the tracker's plugin into $OUT/ev (P2, P4, P9-P11,
#      P14, P15, P17);
#   3. python -m bench defrag (P14, P15);
#   4. python -m bench step --cases all (P11, P12, P13), with what time is left.
# Writes under $OUT: one log a step, the result files, ev/ (evidence), and all of it again as one all.tgz.
#
#   OUT=/tmp/out TRACKER_COMMIT=<the 40-digit sha> TRACKER_DIRTY=0 kernel/tools/engine_run.sh [seconds for the call]
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the result files and the logs}"
limit=${1:-580}
start=$SECONDS
export PYTHONUNBUFFERED=1 VERIFY_KERNEL_CACHE=/tmp/verify-kernel
left() { echo $((limit - (SECONDS - start) - 5)); }
stamp() { echo "== $1 at $((SECONDS - start)) s" | tee -a "$OUT/steps.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/build.log"
variants=$(python3 -c "
import torch
from kernel import build
cc = torch.cuda.get_device_capability()
print(' '.join(['v26', *(n for n, spec in build.VARIANTS.items() if cc in spec[3])]))")
for v in $variants; do
  timeout 240 python3 -c "from kernel import build; build.load(variant='$v'); print('built $v')" >>"$OUT/build.log" 2>&1 &
done
wait
rm -f /tmp/verify-kernel/*/lock
python3 -c "from kernel import build; build.load(); print('the product builds')" >>"$OUT/build.log" 2>&1
stamp "built ($variants)"

timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider -p tracker.pytest_plugin tests/kernel --tracker-record="$OUT/ev" \
  2>&1 | tee "$OUT/gpu_tests.log" | tail -5
stamp "gpu tests exit ${PIPESTATUS[0]}"

if [ "$(left)" -gt 60 ]; then
  timeout "$(left)" python3 -m bench defrag --out "$OUT" 2>&1 | tee "$OUT/bench_defrag.log" | tail -8
  stamp "bench defrag exit ${PIPESTATUS[0]}"
fi
if [ "$(left)" -gt 120 ]; then
  timeout "$(left)" python3 -m bench step --cases all --budget 0.3 --out "$OUT" 2>&1 | tee "$OUT/bench_step.log" | tail -8
  stamp "bench step exit ${PIPESTATUS[0]}"
fi
tar -C "$OUT" -czf /tmp/all.tgz . && mv /tmp/all.tgz "$OUT/all.tgz"
