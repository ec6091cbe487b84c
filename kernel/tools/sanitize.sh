#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck of the verify kernels on the small cases of
# tests/kernel/test_gpu_correctness.py (test_cuda_small_cases_match_reference_and_repeat: random q, forced split
# counts, the combine and empty splits). Usage (repository root, GPU machine): kernel/tools/sanitize.sh [LOGDIR]
# The kernel is this device's build (kernel/build.py load()); SANITIZE_VARIANT=NAME checks another that builds here
# instead (v26, sm_120's and sm_80's build, or v30's sm_120a build v30bulk on an H200: the same source and protocol
# as on sm_120), through the test's
# VERIFY_KERNEL_VARIANT.
# Exit 0 when all tools report no error and every test passed; 3 when a tool reports an error; 4 when a tool only
# died on a case (no verdict there); other codes come from the run itself (pytest's 1: a test failed).
set -uo pipefail
cd "$(dirname "$0")/../.."
logdir="${1:-/tmp}"
mkdir -p "$logdir"
export VERIFY_KERNEL_VARIANT="${SANITIZE_VARIANT:-}"
python3 -c "import os; from kernel import build; build.load(variant=os.environ['VERIFY_KERNEL_VARIANT'] or None)" ||
  exit 1 # compile outside the sanitizer
tests=tests/kernel/test_gpu_correctness.py
select=test_cuda_small_cases_match_reference_and_repeat
pytest=(python3 -m pytest -q -p no:cacheprovider)
status=0
# memcheck and synccheck instrument only our kernels (kns = kernel-name substring): torch's own kernels run
# unchecked and fast. racecheck instruments every kernel: with torch's kernels left uninstrumented, compute-sanitizer
# 2025.3 on the H200 dies inside them ("Internal Sanitizer Error: failed to handle a hardware exception", then an
# illegal address), even with none of ours in the process (docs/lab/runs/racecheck_triage_h200.log).
ours=(--kernel-name kns=verify_attn)
check() {  # check TOOL LABEL [tool options...] -- PYTEST_ARGS...
  local tool=$1 label=$2 log="$logdir/sanitize_$1.log" opts=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  local start=0
  [ -f "$log" ] && start=$(wc -l <"$log")
  compute-sanitizer --tool "$tool" ${opts[@]+"${opts[@]}"} --error-exitcode 3 "${pytest[@]}" "$@" >>"$log" 2>&1
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
check memcheck all "${ours[@]}" -- "$tests" -k "$select"
check synccheck all "${ours[@]}" -- "$tests" -k "$select"
# racecheck: one process per case, so that a failure on one case does not hide the others.
mapfile -t cases < <("${pytest[@]}" --collect-only "$tests" -k "$select" | grep "::$select\[")
[ "${#cases[@]}" -gt 0 ] || { echo "sanitize: no test collected for $select" >&2; exit 1; }
for node in "${cases[@]}"; do check racecheck "${node##*::}" -- "$node"; done
exit $status
