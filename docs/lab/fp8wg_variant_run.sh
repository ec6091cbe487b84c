#!/usr/bin/env bash
# One device call (sm_90) for issue 28: lab variants of the fp8 product (kernel/build.py FP8_BUILDS) against fp8wgr.
# Builds the bf16 product, fp8wgr and each variant; each variant's wgmma GPU tests (tests/kernel/test_gpu_fp8_wgmma.py:
# the flash-attention rule over the suite's shapes, forced splits, graph replay, the same bits five times), then
# compute-sanitizer memcheck and racecheck on its forced splits; docs/lab/fp8_wgmma_time.py quick over fp8wgr and the
# variants beside the bf16 product; with NCU=1, Nsight Compute's stall reasons of each (docs/lab/fp8wgr_ncu_run.sh).
# Everything is packed into $OUT/variant.tgz.
#   [NCU=1] bash docs/lab/fp8wg_variant_run.sh VARIANT ...        (about 3 minutes on an H100 for one; 5 with NCU=1)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
variants=("$@")
log=$OUT/variant
mkdir -p "$log"
trap 'tar czf "$OUT/variant.tgz" -C "$OUT" variant && rm -rf "$log"' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$log/gpu.txt"
for v in "" fp8wgr "${variants[@]}"; do
  timeout 200 python3 -c "from kernel import build; build.load(variant='$v' or None); print('built ${v:-product}')" \
    > "$log/build_${v:-product}.log" 2>&1 &
done
wait
tail -qn 1 "$log"/build_*.log
san() {  # tool variant
  FP8WG_BUILDS=$2 timeout 150 compute-sanitizer --tool "$1" --kernel-name kns=verify_attn --error-exitcode 3 \
    python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py -k forced_split > "$log/$1_$2.log" 2>&1
  echo "$1 $2 rc=$?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$log/$1_$2.log" | tail -n 2 | tr '\n' ' ')"
}
for v in "${variants[@]}"; do
  FP8WG_BUILDS=$v timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py \
    > "$log/pytest_$v.log" 2>&1
  rc=$?
  echo "pytest $v rc=$rc: $(tail -n 1 "$log/pytest_$v.log")"
  [ $rc = 0 ] || { grep -E "Error|error|assert" "$log/pytest_$v.log" | head -n 12; continue; }
  san memcheck "$v"
  san racecheck "$v"
done
timeout 200 python3 docs/lab/fp8_wgmma_time.py quick fp8wgr "${variants[@]}" > "$log/time.log" 2>&1
echo "time rc=$?"
grep -vE "keeps the rule" "$log/time.log"
if [ "${NCU:-0}" = 1 ]; then
  OUT=$log bash docs/lab/fp8wgr_ncu_run.sh "${variants[@]}" > "$log/ncu_run.log" 2>&1
  tail -n 40 "$log/ncu_run.log"
fi
