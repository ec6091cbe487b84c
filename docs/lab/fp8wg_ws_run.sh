#!/usr/bin/env bash
# One device call for issue 28's warp-specialised wgmma builds (lab): wgmma's rate in the lab kernel's shapes
# (kernel/tools/wgmma_probe.cu), the GPU tests of every wgmma build, their times beside the bf16 product
# (docs/lab/fp8_wgmma_time.py quick), then Nsight Compute's warp states per SASS instruction for the NCU_BUILDS that
# passed, at (1,8,64) 91k (docs/lab/fp8wg_ncu.py). Logs go to $OUT.
#   [NCU=0] [NCU_BUILDS="fp8wgws fp8wgr"] bash docs/lab/fp8wg_ws_run.sh [BUILD ...]
# (default builds: fp8wgws fp8wgr; the first is the baseline; NCU=0: no Nsight Compute)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
builds=("${@:-fp8wgws fp8wgr}")
read -r -a builds <<< "${builds[*]}"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/wgp kernel/tools/wgmma_probe.cu > "$OUT/probe_build.log" 2>&1 &
python3 -c "from kernel import build; build.load()" > "$OUT/build_bf16.log" 2>&1 &
for v in "${builds[@]}"; do python3 -c "from kernel import build; build.load(variant='$v')" > "$OUT/build_$v.log" 2>&1 & done
wait
tail -n 2 "$OUT"/build_*.log
timeout 60 /tmp/wgp 2>&1 | tee "$OUT/wgmma_probe.log"
# each build's tests on their own, so a build that hangs or faults costs only its own minute; only builds that pass are
# timed (and the first, the baseline, always)
ok=("${builds[0]}")
for v in "${builds[@]}"; do
  FP8WG_BUILDS=$v timeout 90 python3 -m pytest -q -x -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py > "$OUT/pytest_$v.log" 2>&1
  rc=$?; echo "pytest $v rc=$rc: $(tail -n 1 "$OUT/pytest_$v.log")" | tee -a "$OUT/pytest.log"
  [ $rc = 0 ] && [ "$v" != "${builds[0]}" ] && ok+=("$v")
done
timeout 200 python3 docs/lab/fp8_wgmma_time.py quick "${ok[@]}" 2>&1 | tee "$OUT/time.log"
for v in ${NCU_BUILDS:-fp8wgws fp8wgr}; do
  [ "${NCU:-1}" = 0 ] && break
  [[ " ${ok[*]} " == *" $v "* ]] || continue
  [ "$SECONDS" -gt "${NCU_BY:-470}" ] && { echo "ncu $v skipped: ${SECONDS} s gone" | tee -a "$OUT/pytest.log"; continue; }
  timeout 90 ncu --clock-control none -k regex:split_kernel_fp8 -c 1 --section WarpStateStats --section SourceCounters \
    --section SchedulerStats -f -o "/tmp/ncu_$v" python3 docs/lab/fp8wg_ncu.py "$v" > "$OUT/ncu_$v.log" 2>&1 || continue
  ncu --import "/tmp/ncu_$v.ncu-rep" --page details > "$OUT/ncu_${v}_details.txt" 2>&1
  ncu --import "/tmp/ncu_$v.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu_${v}_sass.csv" 2>&1
done
ls -la "$OUT"
