#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck of the verify kernels on the quick shapes of gpu_check.py.
# Usage (repository root, GPU machine): kernel/tools/sanitize.sh [LOGDIR]
# Exit 0 when both tools report no error; 3 when a tool reports one; other codes come from the run itself.
set -uo pipefail
cd "$(dirname "$0")/../.."
logdir="${1:-/tmp}"
mkdir -p "$logdir"
python3 -c "from kernel import build; build.load()" || exit 1   # compile outside the sanitizer
status=0
for tool in memcheck racecheck; do
  # Instrument only our kernels (kns = kernel-name substring): torch's own kernels run unchecked and fast.
  compute-sanitizer --tool "$tool" --error-exitcode 3 --kernel-name kns=verify_attn \
    python3 kernel/tools/gpu_check.py --quick >"$logdir/sanitize_$tool.log" 2>&1
  rc=$?
  echo "sanitize $tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logdir/sanitize_$tool.log" | tail -1)"
  [ "$rc" -ne 0 ] && status=$rc
done
exit $status
