#!/usr/bin/env bash
# One device call (sm_90) for issue 28: fp8wgr's copies through the TMA (kernel/build.py "fp8wgrt",
# verify_attention_fp8_wgmma_tma.cuh; never run on a GPU before this). Builds the bf16 product, fp8wgr and fp8wgrt;
# fp8wgrt's wgmma GPU tests (the flash-attention rule over the suite's shapes, forced splits, graph replay, the same
# bits five times: a wrong swizzle or descriptor fails here); compute-sanitizer memcheck on its forced splits; then
# docs/lab/fp8_wgmma_time.py quick over fp8wgr and fp8wgrt beside the bf16 product; and, with NCU=1, Nsight Compute's
# stall reasons of both (docs/lab/fp8wgr_ncu_run.sh's). Everything is packed into $OUT/tma.tgz.
#   [NCU=1] bash docs/lab/fp8wgrt_run.sh        (about 3 minutes on an H100; 5 with NCU=1)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
log=$OUT/tma
mkdir -p "$log"
trap 'tar czf "$OUT/tma.tgz" -C "$OUT" tma && rm -rf "$log"' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$log/gpu.txt"
for v in "" fp8wgr fp8wgrt; do
  timeout 200 python3 -c "from kernel import build; build.load(variant='$v' or None); print('built ${v:-product}')" \
    > "$log/build_${v:-product}.log" 2>&1 &
done
wait
tail -qn 1 "$log"/build_*.log
FP8WG_BUILDS=fp8wgrt timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py \
  > "$log/pytest_fp8wgrt.log" 2>&1
rc=$?
echo "pytest fp8wgrt rc=$rc: $(tail -n 1 "$log/pytest_fp8wgrt.log")"
[ $rc = 0 ] || grep -E "Error|error|assert" "$log/pytest_fp8wgrt.log" | head -n 12
FP8WG_BUILDS=fp8wgrt timeout 90 compute-sanitizer --tool memcheck --kernel-name kns=verify_attn --error-exitcode 3 \
  python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py -k forced_split > "$log/memcheck.log" 2>&1
echo "memcheck rc=$?: $(grep -E "ERROR SUMMARY|passed|failed" "$log/memcheck.log" | tail -n 2 | tr '\n' ' ')"
timeout 200 python3 docs/lab/fp8_wgmma_time.py quick fp8wgr fp8wgrt > "$log/time.log" 2>&1
echo "time rc=$?"
grep -vE "keeps the rule" "$log/time.log"
if [ "${NCU:-0}" = 1 ]; then
  OUT=$log bash docs/lab/fp8wgr_ncu_run.sh fp8wgr fp8wgrt > "$log/ncu_run.log" 2>&1
  tail -n 40 "$log/ncu_run.log"
fi
