#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck of the verify kernels on the quick shapes of gpu_check.py.
# Usage (repository root, GPU machine): [VARIANT=20|26] kernel/tools/sanitize.sh [LOGDIR] (default: the default kernel)
# Exit 0 when all tools report no error; 3 when a tool reports one; 4 when a tool only died on a case (no
# verdict there); other codes come from the run itself.
set -uo pipefail
cd "$(dirname "$0")/../.."
logdir="${1:-/tmp}"
mkdir -p "$logdir"
python3 -c "from kernel import build; build.load()" || exit 1   # compile outside the sanitizer
status=0
# memcheck and synccheck instrument only our kernels (kns = kernel-name substring): torch's own kernels run
# unchecked and fast. racecheck instruments every kernel: with torch's kernels left uninstrumented, compute-sanitizer
# 2025.3 on the H200 dies inside them ("Internal Sanitizer Error: failed to handle a hardware exception", then an
# illegal address), even with none of ours in the process (runs/racecheck_triage_h200.log).
ours=(--kernel-name kns=verify_attn)
check() {  # check TOOL LABEL [tool options...] -- [gpu_check args...]
  local tool=$1 label=$2 log="$logdir/sanitize_$1.log" opts=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  local start=0
  [ -f "$log" ] && start=$(wc -l <"$log")
  compute-sanitizer --tool "$tool" ${opts[@]+"${opts[@]}"} --error-exitcode 3 \
    python3 kernel/tools/gpu_check.py --quick --variant "${VARIANT:-0}" "$@" >>"$log" 2>&1
  local rc=$?
  # The log accumulates runs: judge this one by its own lines. When the tool dies ("Internal Sanitizer Error"),
  # its summary counts that death as "1 hazard (1 error)": say so instead of reporting a hazard.
  local mine summary
  mine=$(tail -n +"$((start + 1))" "$log")
  if grep -q "Internal Sanitizer Error" <<<"$mine"; then
    summary="the tool itself failed (Internal Sanitizer Error), no verdict on this case"
    [ "$rc" -ne 0 ] && rc=4
  else
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$mine" | tail -1)
  fi
  echo "sanitize $tool $label: exit $rc; $summary"
  if [ "$rc" -ne 0 ] && [ "$status" -ne 3 ]; then status=$rc; fi
}
check memcheck all "${ours[@]}" --
check synccheck all "${ours[@]}" --
# racecheck: one process per case, so that a failure on one case does not hide the others.
for i in 0 1 2 3 4 5; do check racecheck "case $i" -- --index "$i"; done
exit $status
