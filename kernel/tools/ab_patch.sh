#!/usr/bin/env bash
# A kernel change against HEAD on one machine in one device call (issue 27's rule: each lever measured before it is
# kept): the snapshot as it is (A) and a copy with lab patches applied in order (B: PATCHES, comma-separated, e.g.
# docs/lab/patches/empty_splits.patch,docs/lab/patches/cluster_merge.patch),
# each built once (in parallel), then COMMAND run in A and in B alternately, ROUNDS times, A first in odd rounds and B
# first in even ones, so that a clock or power drift weighs on both. Each run writes under $OUT/a/<round> or
# $OUT/b/<round> (COMMAND gets that folder as $AB_OUT), with its log beside it; B runs with TRACKER_DIRTY=1, so its
# result files never stand as evidence of the commit. Each side has its own kernel cache: two builds sharing one torch
# build folder overwrite each other's build.ninja (2026-12-06: B's build imported a module A's ninja had not
# made). Ends with one all.tgz of $OUT.
#
#   OUT=/tmp/out TRACKER_COMMIT=<the 40-digit sha> kernel/tools/ab_patch.sh PATCHES ROUNDS 'COMMAND'
#   e.g. kernel/tools/ab_patch.sh docs/lab/patches/empty_splits.patch 2 \
#          'python3 -m bench step --cases short --impl cuda --out $AB_OUT'
set -uo pipefail
: "${OUT:?set OUT to the folder that receives the result files and the logs}"
: "${TRACKER_COMMIT:?set TRACKER_COMMIT to the commit of the snapshot}"
patches=${1:?patch files, comma-separated}
rounds=${2:?a number of rounds}
command=${3:?a command}
export PYTHONUNBUFFERED=1
root=$(pwd)
copy=/tmp/ab_b
rm -rf "$copy" && mkdir -p "$copy" && cp -a . "$copy"/ || exit 1
IFS=, read -ra listed <<<"$patches"
for p in "${listed[@]}"; do
  f=$p && [[ $p = /* ]] || f=$root/$p
  (cd "$copy" && git apply "$f") || { echo "$p does not apply" >&2; exit 2; }
done
cache() { [ "$1" = "$root" ] && echo /tmp/verify-kernel-a || echo /tmp/verify-kernel-b; }
build() { (cd "$1" && VERIFY_KERNEL_CACHE=$(cache "$1") python3 -c "from kernel import build; build.load(); build.load(variant='v26'); print('built', '$1')"); }
build "$root" >"$OUT/build_a.log" 2>&1 &
build "$copy" >"$OUT/build_b.log" 2>&1 &
wait
tail -n 1 "$OUT/build_a.log" "$OUT/build_b.log"
run() {  # side (a|b), round
  local dir=$root dirty=${TRACKER_DIRTY:-0}
  [ "$1" = b ] && dir=$copy && dirty=1
  mkdir -p "$OUT/$1/$2"
  (cd "$dir" && AB_OUT="$OUT/$1/$2" TRACKER_DIRTY=$dirty VERIFY_KERNEL_CACHE=$(cache "$dir") bash -c "$command") >"$OUT/$1/$2/log" 2>&1
  echo "== $1 round $2 exit $?"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then run a "$r"; run b "$r"; else run b "$r"; run a "$r"; fi
done
tar -C "$OUT" -czf /tmp/all.tgz . && mv /tmp/all.tgz "$OUT/all.tgz"
