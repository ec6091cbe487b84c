#!/usr/bin/env bash
# One device call (sm_90) toward docs/lab/patches/fp8wgr_product.patch (issue 28): the patch makes the decoupled wgmma
# kernel with rows owned by warps (kernel/build.py "fp8wgr") the fp8 product on sm_90 in place of the mma.sync kernel,
# whose e4m3 mma.sync sm_90 unpacks to f16 HMMA (755.4 us at (1,8,64) 91k on an H100 against fp8wgr's 239.4;
# kernel/NOTES.md). Applied to this snapshot, then, each step within what is left of BUDGET seconds (default 560):
#   1. the builds (bf16 product, fp8, fp8wgr), in parallel;
#   2. the product's fp8 GPU suite through verify_attention (tests/kernel/test_gpu_fp8.py: the rule, the suite's shapes,
#      graphs), fp8wgr's own wgmma suite, and the CPU tests of the product choice and the fp8 ceiling;
#   3. python -m bench verify --cases all --impl cuda,cuda_fp8 (result file and table to $OUT; TRACKER_DIRTY=1 and
#      TRACKER_COMMIT: the patch is not committed): the fp8 floor now from the wgmma e4m3 ceiling;
#   4. compute-sanitizer memcheck, synccheck and racecheck on fp8wgr's forced-split cases (3 requests, 16 nodes, 16
#      heads, 2,000 tokens; 1, 2, 7 and 64 splits), while time is left.
# The patch is reverted at the end (git apply -R); logs and the result file go to $OUT, packed into $OUT/all.tgz.
#   bash docs/lab/fp8wg_product_run.sh        (about 6-8 minutes on an H100)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
budget=${BUDGET:-560}
left() { echo $((budget - SECONDS > 5 ? budget - SECONDS : 5)); }
cap() { local want=$1 l; l=$(left); echo $((want < l ? want : l)); }  # a step's timeout: its own, or what is left
patch=docs/lab/patches/fp8wgr_product.patch
commit=$(git rev-parse HEAD)
git apply "$patch" || { echo "$patch does not apply" | tee "$OUT/steps.log"; exit 2; }
trap 'git apply -R "$patch"; (cd "$OUT" && tar czf /tmp/fp8p.tgz . && mv /tmp/fp8p.tgz all.tgz)' EXIT
step() { echo "== $1 at ${SECONDS} s" | tee -a "$OUT/steps.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
step builds
for v in "" fp8 fp8wgr; do
  timeout 150 python3 -c "from kernel import build; build.load(variant='$v' or None); print('built ${v:-product}')" \
    >"$OUT/build_${v:-product}.log" 2>&1 &
done
wait
tail -qn 1 "$OUT"/build_*.log
step "GPU suite"
FP8WG_BUILDS=fp8wgr timeout "$(cap 150)" python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_fp8.py \
  tests/kernel/test_gpu_fp8_wgmma.py "tests/kernel/test_compile_fp8.py::test_the_fp8_product_and_its_ceiling_by_device" \
  >"$OUT/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -n 1 "$OUT/pytest.log")" | tee -a "$OUT/steps.log"
step bench
TRACKER_DIRTY=1 TRACKER_COMMIT=$commit timeout "$(cap 200)" python3 -m bench verify --cases all --impl cuda,cuda_fp8 \
  --out "$OUT" >"$OUT/bench.log" 2>&1
echo "bench rc=$?" | tee -a "$OUT/steps.log"
tail -n 14 "$OUT/bench.log"
step sanitizers
for tool in memcheck synccheck racecheck; do
  [ "$(left)" -le 30 ] && { echo "$tool skipped: no time left" | tee -a "$OUT/steps.log"; continue; }
  opts=(--kernel-name kns=verify_attn)
  [ "$tool" = racecheck ] && opts=()  # racecheck instruments every kernel (kernel/tools/sanitize.sh says why)
  FP8WG_BUILDS=fp8wgr timeout "$(cap 120)" compute-sanitizer --tool "$tool" ${opts[@]+"${opts[@]}"} --error-exitcode 3 \
    python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py -k forced_split >"$OUT/sanitize_$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$OUT/sanitize_$tool.log" | tail -n 2 | tr '\n' ' ')" |
    tee -a "$OUT/steps.log"
done
step done
