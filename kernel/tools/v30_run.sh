#!/usr/bin/env bash
# Issue 17 part 2 (v30, the producer-warpgroup lab variants) in one device call on an H200, from a snapshot's root:
#   1. the product's and the lab variants' extensions (V30_VARIANTS, default "v30 v30bulk": names of kernel/build.py
#      VARIANTS) built in parallel (kernel/build.py load(variant=...));
#   2. tests/kernel/test_gpu_v30.py for each variant alone under `timeout 100` (a wrong mbarrier parity hangs): the
#      reference cases, bit for bit equal to v26, counting cases under forced splits; a variant that fails is not timed;
#   3. python -m bench verify --cases all --impl cuda,<the variants that passed> (each case: v26 then the variants on the
#      same input sets), then, while the call's time allows, a second round in the reverse order.
# Writes under $OUT: build.log, tests.log, bench.log, bench2.log and the result files.
#
#   OUT=/tmp/out TRACKER_COMMIT=<the 40-digit sha> TRACKER_DIRTY=0 [V30_VARIANTS="v30 v30bulk"] [V30_CASES=all] \
#     kernel/tools/v30_run.sh [budget] [seconds for the whole call]
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the result files and the logs}"
budget=${1:-0.3}
limit=${2:-370}
variants=${V30_VARIANTS:-v30 v30bulk}
cases=${V30_CASES:-all}
start=$SECONDS
export PYTHONUNBUFFERED=1 VERIFY_KERNEL_CACHE=/tmp/verify-kernel
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/build.log"
for v in v26 $variants; do
  timeout 240 python3 -c "from kernel import build; build.load(variant='$v'); print('built $v')" >>"$OUT/build.log" 2>&1 &
done
wait
echo "built in $((SECONDS - start)) s" | tee -a "$OUT/build.log"
impls=cuda
for v in $variants; do
  VERIFY_V30_VARIANTS=$v timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/kernel/test_gpu_v30.py 2>&1 |
    tee "$OUT/tests_$v.log" >>"$OUT/tests.log"
  status=${PIPESTATUS[0]}
  # A misspelled name, or one that does not build here, skips every test: pytest says 0, the variant is not tested.
  if [ "$status" -eq 0 ] && ! grep -Eq "[0-9]+ passed" "$OUT/tests_$v.log"; then status=5; fi
  echo "tests of $v exit $status at $((SECONDS - start)) s" | tee -a "$OUT/tests.log"
  [ "$status" -eq 0 ] && impls="$impls,cuda_$v"
done
[ "$impls" != cuda ] || exit 1
left=$((limit - (SECONDS - start) - 5))
timeout "$left" python3 -m bench verify --cases "$cases" --impl "$impls" --budget "$budget" --out "$OUT" \
  2>&1 | tee "$OUT/bench.log"
status=$?
echo "bench exit $status at $((SECONDS - start)) s" | tee -a "$OUT/bench.log"
left=$((limit - (SECONDS - start) - 5))
if [ "$status" -eq 0 ] && [ "$left" -gt 60 ]; then
  timeout "$left" python3 -m bench verify --cases "$cases" --impl "$(echo "$impls" | tr , "\n" | tac | paste -sd,)" --budget "$budget" \
    --out "$OUT" 2>&1 | tee "$OUT/bench2.log"
  echo "bench2 exit $? at $((SECONDS - start)) s" | tee -a "$OUT/bench2.log"
fi
exit "$status"
