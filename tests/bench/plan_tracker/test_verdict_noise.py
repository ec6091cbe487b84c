"""bench/plan_tracker/verdict_noise.py: a quick run writes a valid result file with the metrics plan 0001's gates read
(``verdict_noise.false_pass_per_1000`` and ``verdict_noise.false_regression_per_1000``, params rule, n, offset, cv)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.plan_tracker import verdict_noise
from bench.plan_tracker.record import REPO
from tracker.store.result_files import load_result


def test_a_quick_run_writes_the_metrics_the_gates_read(tmp_path: Path) -> None:
    argv = ["--quick", "--rules", "value", "--out", str(tmp_path)]
    assert verdict_noise.main(argv) == 0
    [path] = tmp_path.glob("*-verdict_noise-*.json")
    run = load_result(path)
    metrics = {c.metric for c in run.cases}
    assert metrics == {f"verdict_noise.{m}_per_1000" for m in ("false_pass", "false_regression", "decided")}
    case = next(c for c in run.cases if c.metric == "verdict_noise.false_pass_per_1000")
    assert set(case.params) == {"rule", "n", "offset", "cv"} and case.unit == "per 1000" and len(case.samples) == 5
    assert "bench/plan_tracker/verdict_noise.py" in run.files


def test_it_runs_as_a_script_from_anywhere(tmp_path: Path) -> None:
    """``python bench/plan_tracker/verdict_noise.py`` puts bench/plan_tracker/ on the path, not the root: it still imports."""
    proc = subprocess.run([sys.executable, str(REPO / "bench/plan_tracker/verdict_noise.py"), "--help"], cwd=tmp_path,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0 and "--decisions" in proc.stdout, proc.stderr
