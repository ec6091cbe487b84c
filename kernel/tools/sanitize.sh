#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck of the verify kernels on the quick shapes of gpu_check.py.
# Usage (repository root, GPU machine): kernel/tools/sanitize.sh [LOGDIR]
# Exit 0 when all tools report no error; 3 when a tool reports one; other codes come from the run itself.
set -uo pipefail
cd "$(dirname "$0")/../.."
logdir="${1:-/tmp}"
mkdir -p "$logdir"
python3 -c "from kernel import build; build.load()" || exit 1   # compile outside the sanitizer
status=0
# Instrument only our kernels (kns = kernel-name substring): torch's own kernels run unchecked and fast.
check() {  # check TOOL LABEL [gpu_check args...]
  local tool=$1 label=$2 log="$logdir/sanitize_$1.log"
  shift 2
  compute-sanitizer --tool "$tool" --error-exitcode 3 --kernel-name kns=verify_attn \
    python3 kernel/tools/gpu_check.py --quick "$@" >>"$log" 2>&1
  local rc=$?
  echo "sanitize $tool $label: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Internal' "$log" | tail -1)"
  [ "$rc" -ne 0 ] && status=$rc
}
check memcheck all
check synccheck all
# racecheck one process per case, so a tool failure on one case does not hide the others.
for i in 0 1 2 3 4 5; do check racecheck "case $i" --index "$i"; done
exit $status
