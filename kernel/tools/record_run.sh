#!/usr/bin/env bash
# The kernel's evidence of record in one device call (an H200), from a snapshot's root, each step under its own
# timeout and in order of what the plans need most:
#   1. every extension the GPU tests load, built in parallel (the device's product, v26, each v30 and v40 build,
#      every fp8 one);
#   2. the GPU suite (pytest -m gpu tests/kernel: every GPU test lives there, and the tracker's own tests need
#      pydantic, which the device image lacks) recorded by the tracker's plugin into $OUT/ev (plan 0002 P4, P9-P15);
#   3. python -m bench verify --cases all --impl cuda,cuda_v40,cuda_v30bulkx2s6,cuda_v26,flashinfer,cuda_fp8: the
#      product (v40 on sm_90), v40 and v30 by name (P20's A/B), the portable path, FlashInfer FA2 and the fp8 cache's
#      kernel on the same inputs (P6, P7, P8, P18, P20), then --cases long --impl
#      cuda,triton (P6's Triton gate);
#   4. python -m bench.verify --emulate-sm120=v30bulk --cases all --impl cuda,cuda_fp8: sm_120's build (v26) under
#      sm_120's balance (P16), v30's sm_120a build under it on the same inputs (the A/B behind PRODUCT_BY_CC, P17),
#      and the fp8 kernel's sm_120-balance stand-in beside the checked fp8 product (P18);
#   5. kernel/tools/sanitize.sh: memcheck, racecheck and synccheck of the device's product on the small cases, then
#      of sm_120's build (v26) and of v30's sm_120a build where they build here;
#   The step runs in a call of its own (each measurement follows 2 s of replays; the second command below took 201 s
#   on an H100 at 65ce753, docs/lab/runs/h100_20261206_397baad_record.log):
#   python -m bench step --cases all --impl cuda,triton (P9, P11, P12, P13), then
#   python -m bench step --cases all --impl cuda,cuda_pdl_off --rounds 2 (P19: the engine against plain launches,
#   each case measured twice in alternating order), with TRACKER_COMMIT and TRACKER_DIRTY set as here.
# Writes under $OUT: one log a step, the result files, ev/ (evidence) and sanitize/ (the tools' logs), and at the end
# all of it again as one all.tgz: a device call brings back only a few files (the rest are "left out (count)").
#
#   OUT=/tmp/out TRACKER_COMMIT=<the 40-digit sha> TRACKER_DIRTY=0 kernel/tools/record_run.sh [seconds for the call]
#
# The sha is the committed HEAD the device's copy was made from, pasted from `git rev-parse HEAD` on this side (the
# copy's own .git may be older), never typed: two hand-typed shas with wrong tails named commits outside the history
# (tracker check refused those files; 2026-12-06).
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the result files and the logs}"
limit=${1:-580}
start=$SECONDS
export PYTHONUNBUFFERED=1 VERIFY_KERNEL_CACHE=/tmp/verify-kernel
left() { echo $((limit - (SECONDS - start) - 5)); }
# A step runs only with at least 30 s left (`timeout 0` would mean no limit, a negative one no run at all).
enough() { [ "$(left)" -gt 30 ] || { stamp "skipped $1: $(left) s left"; false; }; }
stamp() { echo "== $1 at $((SECONDS - start)) s" | tee -a "$OUT/steps.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/build.log"
variants=$(python3 -c "
import torch
from kernel import build
cc = torch.cuda.get_device_capability()
# every fp8 build of this device: the GPU suite loads the lab's too (tests/kernel/test_gpu_fp8_wgmma.py), and built
# inside its timeout they had left it too little (H100, a4b1e4e: the suite stopped at 38%)
fp8 = [n for n in build.FP8_BUILDS if cc >= build.FP8_MIN_CC and cc in build.FP8_ARCH_SPECIFIC.get(n, (cc,))]
print(' '.join(['v26', *(n for n, spec in build.VARIANTS.items() if cc in spec[3]), *fp8]))")
for v in $variants; do
  timeout 240 python3 -c "from kernel import build; build.load(variant='$v'); print('built $v')" >>"$OUT/build.log" 2>&1 &
done
wait
# The product is one of the variants, built above; loading it by default now finds that build. (Built in parallel
# with its named twin, both would wait on one lock in one directory, and a timeout could leave the lock behind.)
rm -f /tmp/verify-kernel/*/lock
python3 -c "from kernel import build; build.load(); print('the product builds')" >>"$OUT/build.log" 2>&1
stamp "built ($variants)"

timeout 400 python3 -m pytest -q -m gpu -p no:cacheprovider -p tracker.pytest_plugin tests/kernel --tracker-record="$OUT/ev" \
  2>&1 | tee "$OUT/gpu_tests.log" | tail -5
stamp "gpu tests exit ${PIPESTATUS[0]}"

if enough "bench verify all"; then
  timeout "$(left)" python3 -m bench verify --cases all --impl cuda,cuda_v40,cuda_v30bulkx2s6,cuda_v26,flashinfer,cuda_fp8 \
    --out "$OUT" 2>&1 |
    tee "$OUT/bench_verify.log" | tail -22
  stamp "bench verify all exit ${PIPESTATUS[0]}"
fi
if enough "bench verify triton"; then
  timeout "$(left)" python3 -m bench verify --cases long --impl cuda,triton --budget 0.3 --out "$OUT" 2>&1 |
    tee "$OUT/bench_verify_triton.log" | tail -3
  stamp "bench verify triton exit ${PIPESTATUS[0]}"
fi
if enough "emulation"; then
  timeout "$(left)" python3 -m bench.verify --emulate-sm120=v30bulk --cases all --impl cuda,cuda_fp8 --budget 0.25 \
    --out "$OUT" \
    2>&1 | tee "$OUT/bench_emulation.log" | tail -22
  stamp "emulation exit ${PIPESTATUS[0]}"
fi

mkdir -p "$OUT/sanitize"
if [ "$(left)" -gt 200 ]; then
  timeout 180 kernel/tools/sanitize.sh "$OUT/sanitize" >"$OUT/sanitize.log" 2>&1
  stamp "sanitize exit $?"
fi
# sm_120's build (v26, the portable path sm_80 runs too) and v30's sm_120a build (one swap buffer, read barriers),
# each where it builds here and while time is left: the same source and protocol as on sm_120.
others=$(python3 -c "
import torch
from kernel import build
cc = torch.cuda.get_device_capability()
names = dict.fromkeys([build.product_variant((12, 0)), 'v30bulk'])
print(' '.join(n for n in names if n == build.PORTABLE_VARIANT or cc in build.VARIANTS[n][3]))")
for name in $others; do
  if [ "$(left)" -gt 200 ]; then
    SANITIZE_VARIANT=$name timeout 180 kernel/tools/sanitize.sh "$OUT/sanitize_$name" >"$OUT/sanitize_$name.log" 2>&1
    stamp "sanitize of $name exit $?"
  fi
done

tar -C "$OUT" -czf /tmp/all.tgz . && mv /tmp/all.tgz "$OUT/all.tgz"
