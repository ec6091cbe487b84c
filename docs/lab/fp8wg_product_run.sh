#!/usr/bin/env bash
# One device call (sm_90) for the fp8 product (issue 28): the decoupled wgmma kernel with rows owned by warps
# (kernel/build.py FP8_PRODUCT_BY_CC's sm_90 build, "fp8wgrw" since 2026-12-07) on this snapshot, each step within
# what is left of BUDGET seconds (default 560):
#   1. the builds (bf16 product, fp8, the sm_90 product), in parallel;
#   2. python -m bench verify --cases long --impl cuda,cuda_fp8 (the result file to $OUT, the table to its log): the fp8
#      floor from the wgmma e4m3 ceiling; plan 0002 P18's gates on the H200 read (1,8,64) 91k;
#   3. the product's fp8 GPU suite through verify_attention (tests/kernel/test_gpu_fp8.py -m gpu: the rule, the suite's
#      shapes, graphs), recorded by the tracker's plugin into $OUT/product/ev (P18's GPU test gate: `tracker ingest`
#      it here), then the product build's own wgmma suite and the CPU tests of the product choice and the fp8 ceiling;
#   4. compute-sanitizer memcheck, synccheck and racecheck on its forced-split cases (3 requests, 16 nodes, 16
#      heads, 2,000 tokens; 1, 2, 7 and 64 splits), while time is left.
# Everything it writes is packed into $OUT/product.tgz at the end, and the result file is left beside it: the device
# returns only a few files of $OUT. TRACKER_COMMIT (the sha of `git rev-parse HEAD` on this side, pasted: the device's
# copy of .git may be older) and TRACKER_DIRTY (0 or 1) are required, as kernel/tools/record_run.sh's are.
#   TRACKER_COMMIT=<sha> TRACKER_DIRTY=0 bash docs/lab/fp8wg_product_run.sh        (about 4-5 minutes on an H100)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
budget=${BUDGET:-560}
left() { echo $((budget - SECONDS > 5 ? budget - SECONDS : 5)); }
cap() { local want=$1 l; l=$(left); echo $((want < l ? want : l)); }  # a step's timeout: its own, or what is left
commit=${TRACKER_COMMIT:?the committed HEAD this copy was made from, pasted from git rev-parse HEAD on this side}
dirty=${TRACKER_DIRTY:?0 for a clean tree, 1 otherwise}
mkdir -p "$OUT/product"
trap 'mv "$OUT"/product/*.json "$OUT"/ 2>/dev/null; tar czf "$OUT/product.tgz" -C "$OUT" product && rm -rf "$OUT/product"' EXIT
step() { echo "== $1 at ${SECONDS} s" | tee -a "$OUT/product/steps.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/product/gpu.txt"
prod=$(python3 -c "from kernel import build; print(build.FP8_PRODUCT_BY_CC[(9, 0)])")
step "builds ($prod)"
for v in "" fp8 "$prod" fp8wgr; do  # (fp8wgr: the product's bit-identity test compares with it)
  timeout 150 python3 -c "from kernel import build; build.load(variant='$v' or None); print('built ${v:-product}')" \
    >"$OUT/product/build_${v:-product}.log" 2>&1 &
done
wait
tail -qn 1 "$OUT"/product/build_*.log
step bench
TRACKER_DIRTY=$dirty TRACKER_COMMIT=$commit timeout "$(cap 240)" python3 -m bench verify --cases long --impl cuda,cuda_fp8 \
  --out "$OUT/product" >"$OUT/product/bench.log" 2>&1
echo "bench rc=$?" | tee -a "$OUT/product/steps.log"
tail -n 14 "$OUT/product/bench.log"
step "GPU suite"
TRACKER_DIRTY=$dirty TRACKER_COMMIT=$commit timeout "$(cap 100)" python3 -m pytest -q -m gpu -p no:cacheprovider \
  -p tracker.pytest_plugin tests/kernel/test_gpu_fp8.py --tracker-record="$OUT/product/ev" >"$OUT/product/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -n 1 "$OUT/product/pytest.log")" | tee -a "$OUT/product/steps.log"
FP8WG_BUILDS=$prod timeout "$(cap 100)" python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py \
  "tests/kernel/test_compile_fp8.py::test_the_fp8_product_and_its_ceiling_by_device" -k "not fp8wgrwq and not fp8wgrwf" \
  >"$OUT/product/pytest_wgmma.log" 2>&1
echo "pytest (wgmma) rc=$?: $(tail -n 1 "$OUT/product/pytest_wgmma.log")" | tee -a "$OUT/product/steps.log"
step sanitizers
for tool in memcheck synccheck racecheck; do
  [ "$(left)" -le 30 ] && { echo "$tool skipped: no time left" | tee -a "$OUT/product/steps.log"; continue; }
  opts=(--kernel-name kns=verify_attn)
  [ "$tool" = racecheck ] && opts=()  # racecheck instruments every kernel (kernel/tools/sanitize.sh says why)
  FP8WG_BUILDS=$prod timeout "$(cap 120)" compute-sanitizer --tool "$tool" ${opts[@]+"${opts[@]}"} --error-exitcode 3 \
    python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py -k forced_split >"$OUT/product/sanitize_$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$OUT/product/sanitize_$tool.log" | tail -n 2 | tr '\n' ' ')" |
    tee -a "$OUT/product/steps.log"
done
step done
