#!/usr/bin/env bash
# One device call (sm_90) for issue 28: what the copies cost the math. Ablation 32 (docs/lab/patches/fp8wgr_ablate.patch:
# the copies after the first fill zero-filled, no global reads) ran as fast as no copies at all, so the cost is on the
# memory side. Nsight Compute's speed-of-light, memory and compute sections, and the L2-to-L1 traffic, for fp8wgr and
# ablations 8 (no copies) and 32 at (1,8,64) 91k (docs/lab/fp8wg_ncu.py), their details pages packed into $OUT/sol.tgz.
#   bash docs/lab/fp8wgr_sol_run.sh [BUILD ...]        (default fp8wgr fp8wgrabl8 fp8wgrabl32; about 2 minutes)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
patch=docs/lab/patches/fp8wgr_ablate.patch
git apply "$patch" || { echo "$patch does not apply"; exit 2; }
log=$OUT/sol
mkdir -p "$log"
trap 'git apply -R "$patch"; tar czf "$OUT/sol.tgz" -C "$OUT" sol && rm -rf "$log"' EXIT
builds=("${@:-fp8wgr fp8wgrabl8 fp8wgrabl32}")
read -r -a builds <<< "${builds[*]}"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$log/gpu.txt"
for v in "${builds[@]}"; do python3 -c "from kernel import build; build.load(variant='$v')" > "$log/build_$v.log" 2>&1 & done
wait
metrics=lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum
metrics=$metrics,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
for v in "${builds[@]}"; do
  timeout 150 ncu --clock-control none -k regex:split_kernel_fp8 -c 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Chart --section ComputeWorkloadAnalysis \
    --print-details all python3 docs/lab/fp8wg_ncu.py "$v" > "$log/sol_$v.txt" 2>&1
  echo "== $v sections rc=$?"
  grep -E "Duration|SM Frequency|Throughput|Busy|Hit Rate|Pipe|Issue Slots|Executed Ipc" "$log/sol_$v.txt" | head -n 40
  timeout 150 ncu --clock-control none -k regex:split_kernel_fp8 -c 1 --metrics "$metrics" \
    python3 docs/lab/fp8wg_ncu.py "$v" > "$log/metrics_$v.txt" 2>&1
  echo "== $v metrics rc=$?"
  grep -E "__" "$log/metrics_$v.txt" | head -n 12
done
