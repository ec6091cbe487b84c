#!/usr/bin/env bash
# Issue 27's A/B of the folded combine (Params::fold) in one device call, from a snapshot's root: the fold builds
# (kernel/build.py "v30bulkx2s6fold", "v26fold") against the builds they fold (sm_90's product v30bulkx2s6, and v26,
# sm_120's build), built in parallel; tests/kernel/test_gpu_fold.py; then `bench verify --cases all` of the four, twice,
# the second round in reverse order. Writes one log a step under $OUT, the result files under $OUT/r1 and $OUT/r2,
# and all of it again as all.tgz.
#
#   OUT=/tmp/out TRACKER_COMMIT=<sha from git rev-parse HEAD> TRACKER_DIRTY=0 kernel/tools/fold_ab.sh
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the logs}"
export PYTHONUNBUFFERED=1 VERIFY_KERNEL_CACHE=/tmp/verify-kernel
start=$SECONDS
stamp() { echo "== $1 at $((SECONDS - start)) s" | tee -a "$OUT/steps.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/build.log"
for v in v26 v26fold v30bulkx2s6 v30bulkx2s6fold; do
  timeout 240 python3 -c "from kernel import build; build.load(variant='$v'); print('built $v')" >>"$OUT/build.log" 2>&1 &
done
wait
rm -f /tmp/verify-kernel/*/lock
python3 -c "from kernel import build; build.load(); print('the product builds')" >>"$OUT/build.log" 2>&1
stamp built
timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider tests/kernel/test_gpu_fold.py 2>&1 | tee "$OUT/tests.log" |
  tail -15
stamp "fold tests exit ${PIPESTATUS[0]}"
impls=(cuda_v30bulkx2s6 cuda_v30bulkx2s6fold cuda_v26 cuda_v26fold)
reversed=(cuda_v26fold cuda_v26 cuda_v30bulkx2s6fold cuda_v30bulkx2s6)
for round in 1 2; do
  if [ "$round" = 1 ]; then order=$(IFS=,; echo "${impls[*]}"); else order=$(IFS=,; echo "${reversed[*]}"); fi
  mkdir -p "$OUT/r$round"
  timeout 240 python3 -m bench verify --cases all --impl "$order" --out "$OUT/r$round" 2>&1 |
    tee "$OUT/bench_r$round.log" | tail -30
  stamp "bench round $round exit ${PIPESTATUS[0]}"
done
tar -czf /tmp/all.tgz -C "$OUT" . && mv /tmp/all.tgz "$OUT/all.tgz"
