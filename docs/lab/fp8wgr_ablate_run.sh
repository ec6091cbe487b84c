#!/usr/bin/env bash
# One device call (sm_90) for issue 28: where fp8wgr's tile goes. docs/lab/patches/fp8wgr_ablate.patch adds lab builds
# "fp8wgrabl<N>" (kernel/build.py; outputs wrong on purpose), N a sum of: 1 no QK wgmma, 2 no P.V (nor its ldmatrix and
# byte permutes), 4 no softmax arithmetic (P a constant), 8 no copies after the ring's first fill, 16 no barrier a tile
# (31 all five), 32 the copies after the first fill zero-filled (no global reads: the same cp.async, slot ids and
# shared-memory writes), 64 no proxy fence between a stage's full wait and its QK (96 both), 128 half of those
# copies zero-filled (half the global reads). Ablation 0 is fp8wgr
# byte for byte (its SASS compared on this VM). Each is timed beside fp8wgr and the bf16 product in one process by
# docs/lab/fp8_wgmma_time.py (two rounds, opposite orders; it names each build that misses the flash-attention rule, as
# every ablation does, and times it anyway). The patch is reverted at the end.
#   bash docs/lab/fp8wgr_ablate_run.sh [N ...]        (default 1 2 3 4 8 16 31; about 2 minutes on an H100)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
patch=docs/lab/patches/fp8wgr_ablate.patch
git apply "$patch" || { echo "$patch does not apply" | tee "$OUT/ablate.log"; exit 2; }
trap 'git apply -R "$patch"' EXIT
abl=("${@:-1 2 3 4 8 16 31}")
read -r -a abl <<< "${abl[*]}"
builds=(fp8wgr)
for n in "${abl[@]}"; do builds+=("fp8wgrabl$n"); done
python3 -c "from kernel import build; build.load()" > "$OUT/ablate_build_bf16.log" 2>&1 &
for v in "${builds[@]}"; do python3 -c "from kernel import build; build.load(variant='$v')" > "$OUT/ablate_build_$v.log" 2>&1 & done
wait
timeout 300 python3 docs/lab/fp8_wgmma_time.py quick "${builds[@]}" 2>&1 | tee "$OUT/ablate.log"
