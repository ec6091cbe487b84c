"""bench/plan_tracker/verify_overhead.py: its result file passes the tracker's own validation and drives the overhead gate of
0003/P5; every round keeps a command's fastest run and the evidence store at one file; the SELF_CPU wrapper tells the
tracker process's own CPU from its children's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from evidence_repo import make_repo, phase_block, plan_text, statuses

from bench.plan_tracker import verify_overhead as overhead
from bench.plan_tracker.record import REPO, ms_case, ratio_case, write_result
from bench.plan_tracker.timing import Job, run_once
from tracker.core.model import Status
from tracker.store.result_files import load_result

INFO = {"cpus": 2, "load1": 1.5}


def test_overhead_result_file_validates_and_gates_the_ratio(tmp_path: Path) -> None:
    gate = (
        'bench = "tracker.verify_vs_pytest_cpu"\nwhere = { gates = 100, work_ms = 0 }\nat_most = 1.1\nmin_samples = 3'
    )
    root = make_repo(tmp_path / "repo", {"plans/0003-verify.md": plan_text("0003", [phase_block("P5", ["src/**"], [gate])]),
                                         "src/a.py": "A = 1\n", ".gitignore": ".tracker/cache/\n"})  # fmt: skip
    params = {"gates": 100, "work_ms": 0, "files": 200, "pytest_args": ""}
    cases = [ratio_case("tracker.verify_vs_pytest_cpu", params, [1.25, 1.30, 1.28], [1.0, 1.0, 1.0], INFO),
             ms_case("tracker.verify_ms", params, [1.25, 1.30, 1.28], INFO)]  # fmt: skip
    path = write_result(cases, root / "bench/results", "python bench/plan_tracker/verify_overhead.py",
                        "tracker_verify_overhead", overhead.MEASURED)  # fmt: skip
    run = load_result(path)
    assert "-tracker_verify_overhead-" in path.name and "bench/plan_tracker/verify_overhead.py" in run.files
    st = statuses(root)["0003/P5"]
    assert (
        st.status is Status.PLANNED
        and st.verdicts[0].failed
        and st.verdicts[0].reason.startswith("1.28 x (95% lower bound 1.25 x) > 1.10 x (median of 3")
    )


def test_quick_and_full_defaults() -> None:
    quick_v, full_v = overhead.parse_args(["--quick"]), overhead.parse_args([])
    assert (quick_v.gates, quick_v.repeat, quick_v.out) == ([10, 100], 3, None)
    assert (full_v.gates, full_v.repeat, full_v.out) == ([10, 100, 500], overhead.REPEAT, REPO / "bench/results")
    assert overhead.REPEAT >= 12  # enough rounds to decide 0003/P5 at 95% (the script says why)


def test_self_cpu_wrapper_separates_the_tracker_process_from_its_children(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"plans/0001-a.md": plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/t.py"'])]),
                                         "src/a.py": "A = 1\n"})  # fmt: skip
    timing, _ = run_once(Job("self", [sys.executable, "-c", overhead.SELF_CPU, "status"], root))
    assert timing.own is not None and 0 < timing.own <= timing.cpu
    assert run_once(Job("pass", [sys.executable, "-c", "pass"], root))[0].own is None


def test_keep_newest_evidence_leaves_one_file(tmp_path: Path) -> None:
    store = tmp_path / ".tracker/evidence"
    store.mkdir(parents=True)
    for name in ("20261201T000001Z-a.json", "20261201T000003Z-c.json", "20261201T000002Z-b.json"):
        (store / name).write_text("{}")
    overhead.keep_newest_evidence(tmp_path)
    assert [p.name for p in store.iterdir()] == ["20261201T000003Z-c.json"]


def test_each_round_keeps_a_commands_fastest_run(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    cmd = [sys.executable, "-c", f"open({str(log)!r}, 'a').write('x\\n')"]
    (tmp_path / ".tracker" / "evidence").mkdir(parents=True)
    times = overhead.interleaved({"a": cmd}, tmp_path, 2, best_of=3)
    assert log.read_text().count("x") == 1 + 2 * 3 and len(times["a"]) == 2
    assert all(t.wall > 0 and t.cpu >= 0 for t in times["a"])


@pytest.mark.slow
def test_overhead_bench_end_to_end(tmp_path: Path) -> None:
    args = ["--gates", "3", "--repeat", "1", "--files", "5", "--breakdown", "--out", str(tmp_path)]
    assert overhead.main(args) == 0
    [path] = tmp_path.glob("*-tracker_verify_overhead-*.json")
    assert {c.metric for c in load_result(path).cases} >= {"tracker.verify_vs_pytest", "tracker.verify_vs_pytest_cpu"}


def test_the_overhead_bench_measures_with_bytecode_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox's PYTHONDONTWRITEBYTECODE made every measured verify compile the tracker from source (and pytest
    its rewritten tests): the bench removes it from the measured processes unless --no-bytecode-cache."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "PYTHONDONTWRITEBYTECODE" not in overhead.measured_env(overhead.parse_args(["--quick"]).bytecode_cache)
    assert (
        overhead.measured_env(overhead.parse_args(["--quick", "--no-bytecode-cache"]).bytecode_cache)[
            "PYTHONDONTWRITEBYTECODE"
        ]
        == "1"
    )
