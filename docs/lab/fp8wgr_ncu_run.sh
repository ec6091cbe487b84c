#!/usr/bin/env bash
# One device call (sm_90) for issue 28: why fp8wgr's copies set its tile (kernel/NOTES.md, "Where fp8wgr's tile goes":
# without them the tile is 29% shorter, yet neither a fourth ring stage nor whole-sector copies moved it). Nsight
# Compute's warp states per SASS instruction for fp8wgr at (1,8,64) 91k (docs/lab/fp8wg_ncu.py), with the memory
# sections, summarised by docs/lab/ncu_sass_summary.py: the stall reasons at the producer's LDGSTS (lg_throttle or
# mio_throttle would say the copies' issue; long_scoreboard at the slot ids their loads), at its empty-slot wait, and
# at the math warps' full-slot wait. Everything is packed into $OUT/ncu.tgz (the device returns few files).
#   bash docs/lab/fp8wgr_ncu_run.sh [BUILD ...]        (default fp8wgr; about 2 minutes on an H100)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
builds=("${@:-fp8wgr}")
read -r -a builds <<< "${builds[*]}"
log=$OUT/ncu
mkdir -p "$log"
trap 'tar czf "$OUT/ncu.tgz" -C "$OUT" ncu && rm -rf "$log"' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$log/gpu.txt"
for v in "${builds[@]}"; do python3 -c "from kernel import build; build.load(variant='$v')" > "$log/build_$v.log" 2>&1 & done
wait
for v in "${builds[@]}"; do
  timeout 150 ncu --clock-control none -k regex:split_kernel_fp8 -c 1 --section WarpStateStats --section SourceCounters \
    --section SchedulerStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    -f -o "/tmp/ncu_$v" python3 docs/lab/fp8wg_ncu.py "$v" > "$log/ncu_$v.log" 2>&1 || { tail -n 5 "$log/ncu_$v.log"; continue; }
  ncu --import "/tmp/ncu_$v.ncu-rep" --page details > "$log/ncu_${v}_details.txt" 2>&1
  ncu --import "/tmp/ncu_$v.ncu-rep" --page source --csv --print-source sass > "$log/ncu_${v}_sass.csv" 2>&1
  python3 docs/lab/ncu_sass_summary.py "$log/ncu_${v}_sass.csv" --top 20 | tee "$log/ncu_${v}_summary.txt"
  grep -E "L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Mem Pipes Busy|lg_throttle|mio_throttle|Throughput" \
    "$log/ncu_${v}_details.txt" | head -n 30
done
