#!/usr/bin/env bash
# One device call (sm_90) for issue 27: v40, the bf16 tile on wgmma (kernel/csrc/verify_attention_v40.cuh), first light.
# Builds the bf16 product and v40 in parallel; v40's GPU tests (tests/kernel/test_gpu_v40.py: the reference rule on
# the suite's cases, counting under forced splits, the small cases, graph replay, and memcheck, racecheck and
# synccheck of the small cases, each in a compute-sanitizer run of its own), then its pdl tests (every mode the same
# bits, each waiting for what the kernel before may write), and `python -m bench verify --cases all --impl
# cuda,cuda_v40` (the result file beside the log).
# Each step within what is left of BUDGET seconds (default 560). Everything is packed into $OUT/v40.tgz.
#   TRACKER_COMMIT=<sha> TRACKER_DIRTY=0 bash docs/lab/v40_run.sh        (about 5 minutes on an H100)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
budget=${BUDGET:-560}
left() { echo $((budget - SECONDS > 5 ? budget - SECONDS : 5)); }
cap() { local want=$1 l; l=$(left); echo $((want < l ? want : l)); }
commit=${TRACKER_COMMIT:?the committed HEAD this copy was made from, pasted from git rev-parse HEAD on this side}
dirty=${TRACKER_DIRTY:?0 for a clean tree, 1 otherwise}
log=$OUT/v40
mkdir -p "$log"
trap 'tar czf "$OUT/v40.tgz" -C "$OUT" v40 && rm -rf "$log"' EXIT
step() { echo "== $1 at ${SECONDS} s" | tee -a "$log/steps.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$log/gpu.txt"
step builds
for v in "" v40; do
  timeout 200 python3 -c "from kernel import build; build.load(variant='$v' or None); print('built ${v:-product}')" \
    >"$log/build_${v:-product}.log" 2>&1 &
done
wait
tail -qn 1 "$log"/build_*.log
step "GPU tests"
timeout "$(cap 300)" python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_v40.py >"$log/pytest.log" 2>&1
rc=$?
echo "pytest v40 rc=$rc: $(tail -n 1 "$log/pytest.log")" | tee -a "$log/steps.log"
[ $rc = 0 ] || { grep -E "Error|error|assert|FAILED|hazard|Race" "$log/pytest.log" | head -n 30; }
timeout "$(cap 120)" python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_pdl.py -k v40 >"$log/pytest_pdl.log" 2>&1
echo "pytest pdl rc=$?: $(tail -n 1 "$log/pytest_pdl.log")" | tee -a "$log/steps.log"
step bench
TRACKER_DIRTY=$dirty TRACKER_COMMIT=$commit timeout "$(cap 200)" python3 -m bench verify --cases all --impl cuda,cuda_v40 \
  --out "$log" >"$log/bench.log" 2>&1
echo "bench rc=$?" | tee -a "$log/steps.log"
tail -n 24 "$log/bench.log"
step done
