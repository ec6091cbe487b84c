#!/usr/bin/env bash
# One device call (sm_90) for issue 28: fp8wgr's producer, which sets its tile (kernel/NOTES.md, "Where fp8wgr's tile
# goes"). Builds the bf16 product, fp8wgr and its producer variants (kernel/build.py "fp8wgr4": a fourth ring stage,
# "fp8wgrp": slot ids a tile ahead, "fp8wgrg": whole 32-B sectors a quarter warp, and their sums) in parallel; runs
# docs/lab/fp8wg_product_run.sh within BUDGET seconds (default 240; bench verify of the committed product); then each
# variant's wgmma GPU tests and docs/lab/fp8_wgmma_time.py quick over fp8wgr and the variants (two rounds, opposite
# orders, beside the bf16 product, each checked against the flash-attention rule first). Logs are packed into
# $OUT/producer.tgz; the result file and product.tgz lie beside it.
#   bash docs/lab/fp8wgr_producer_run.sh [VARIANT ...]        (about 7 minutes on an H100)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
variants=("${@:-fp8wgr4 fp8wgrp fp8wgrg fp8wgr4p fp8wgr4pg}")
read -r -a variants <<< "${variants[*]}"
log=$OUT/producer
mkdir -p "$log"
trap 'tar czf "$OUT/producer.tgz" -C "$OUT" producer && rm -rf "$log"' EXIT
for v in "" fp8 fp8wgr "${variants[@]}"; do
  timeout 200 python3 -c "from kernel import build; build.load(variant='$v' or None); print('built ${v:-product}')" \
    >"$log/build_${v:-product}.log" 2>&1 &
done
wait
tail -qn 1 "$log"/build_*.log
BUDGET=${BUDGET:-240} bash docs/lab/fp8wg_product_run.sh > "$log/product_run.log" 2>&1
tail -n 24 "$log/product_run.log"
for v in "${variants[@]}"; do
  FP8WG_BUILDS=$v timeout 90 python3 -m pytest -q -p no:cacheprovider tests/kernel/test_gpu_fp8_wgmma.py \
    >"$log/pytest_$v.log" 2>&1
  echo "pytest $v rc=$?: $(tail -n 1 "$log/pytest_$v.log")"
done
timeout 300 python3 docs/lab/fp8_wgmma_time.py quick fp8wgr "${variants[@]}" > "$log/time.log" 2>&1
echo "time rc=$?"
grep -vE "keeps the rule" "$log/time.log"
