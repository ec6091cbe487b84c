"""bench/plan_tracker/speed.py: its result files pass the tracker's own validation and drive bench gates (the speed gate
of 0001/P6: met, then regressed by a slower run; the report and cold-status gates), its cases are the metrics the plans
gate on, and its ratios are taken round by round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evidence_repo import make_repo, phase_block, plan_text, statuses

from bench.plan_tracker import speed
from bench.plan_tracker.record import REPO, ms_case, ratio_case, write_result
from tracker.core.model import Status
from tracker.store.result_files import load_result

INFO = {"cpus": 2, "load1": 1.5}
SPEED_GATES = [
    'bench = "tracker.status_vs_python"\nwhere = { repo = "own" }\nat_most = 8.0\nmin_samples = 5',
    'bench = "tracker.status_history_ratio"\nwhere = { repo = "history", evidence_from = 10, evidence_to = 1000 }\nat_most = 1.2\nmin_samples = 5',
]


def write(cases: list[dict[str, object]], out: Path, command: str) -> Path:
    """A result file as speed.py writes one."""
    return write_result(cases, out, command, "tracker_speed", speed.MEASURED)


def speed_cases(vs_python: float, history_ratio: float) -> list[dict[str, object]]:
    """The cases speed.py writes for the gated metrics, from seconds measured in 5 rounds."""
    python = [0.020, 0.021, 0.019, 0.020, 0.022]
    status = [p * vs_python for p in python]
    at_10 = [0.100, 0.101, 0.099, 0.100, 0.102]
    return [
        ms_case("python.pass_ms", {}, python, INFO),
        ms_case("tracker.status_ms", {"repo": "own"}, status, INFO),
        ratio_case("tracker.status_vs_python", {"repo": "own"}, status, python, INFO),
        ms_case("tracker.status_ms", {"repo": "history", "evidence": 10}, at_10, INFO),
        ratio_case("tracker.status_history_ratio", {"repo": "history", "evidence_from": 10, "evidence_to": 1000},
                         [t * history_ratio for t in at_10], at_10, INFO),
    ]  # fmt: skip


def backdate(path: Path, when: str) -> Path:
    """Give a written result file an earlier provenance time (outside the fingerprint) and a name to match,
    so that a second file written in the same second does not replace it."""
    doc = json.loads(path.read_text())
    doc["provenance"]["time"] = when
    older = path.with_name(f"tracker_speed-{when.replace('-', '').replace(':', '')}-old.json")
    older.write_text(json.dumps(doc, indent=1))
    path.unlink()
    return older


def test_speed_result_file_validates_and_meets_then_regresses_the_speed_gates(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"plans/0001-speed.md": plan_text("0001", [phase_block("P6", ["src/**"], SPEED_GATES)]),
                                         "src/a.py": "A = 1\n", ".gitignore": ".tracker/cache/\n"})  # fmt: skip
    first = write(speed_cases(4.5, 1.05), root / "bench/results", "python bench/plan_tracker/speed.py --quick")
    assert "-tracker_speed-" in first.name and load_result(first).cases  # pydantic validation, digest included
    first = backdate(first, "2026-11-01T00:00:00Z")
    st = statuses(root)["0001/P6"]
    assert st.status is Status.DONE, st
    assert [v.reason.split(" (")[0] for v in st.verdicts] == ["4.50 x ≤ 8.00 x", "1.05 x ≤ 1.20 x"]
    slower = write(speed_cases(20.0, 1.05), root / "bench/results", "python bench/plan_tracker/speed.py")
    assert slower != first
    st = statuses(root)["0001/P6"]
    assert st.status is Status.REGRESSED and st.verdicts[0].failed and st.verdicts[1].met


def test_quick_and_full_defaults() -> None:
    quick, full = speed.parse_args(["--quick"]), speed.parse_args([])
    assert (quick.runs, quick.history, quick.plans, quick.out) == (3, [10, 1000], 100, None)
    assert (full.runs, full.history, full.plans, full.out) == (7, [10, 100, 1000], 1000, REPO / "bench/results")
    assert speed.parse_args(["--quick", "--out", "x"]).out == Path("x")


def test_case_groups_are_chosen_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert speed.parse_args([]).cases == ["status", "report", "detail", "gates"]
    assert speed.parse_args(["--cases", "report"]).cases == ["report"]
    with pytest.raises(SystemExit):
        speed.parse_args(["--cases", "report,nope"])
    assert "--cases: one or more of status, report, detail, gates" in capsys.readouterr().err
    assert (speed.parse_args([]).gates, speed.parse_args(["--quick"]).gates) == ([1250, 5000], [500, 2000])


def test_report_and_detail_cases_carry_the_gates_metrics_and_ratios_round_by_round() -> None:
    """The cases plan 0004's gates read: tracker.report_ms on the synthetic repository with its size, and show and
    summary over the status run of the same round in a clean clone of HEAD (and in the clone with evidence not
    committed, over its status)."""
    args = speed.parse_args(["--cases", "report,detail", "--plans", "7", "--phases", "3", "--runs", "2"])
    s = [0.010, 0.020]
    times = {"python/own": s, "status/own": [0.040, 0.050], "status/synthetic": s, "report/synthetic": [1.0, 3.0],
             "report/own/md": s, "report/own/html": s, "show/own": [0.044, 0.060], "log/own": s,
             "summary/own": [0.080, 0.075], "status/clean": [0.020, 0.025], "status/uncommitted": [0.040, 0.050],
             "summary/uncommitted": [0.060, 0.100]}  # fmt: skip
    cases = {(c["metric"], tuple(sorted(c["params"].items()))): c for c in speed.report(times, {}, 0.5, args)}
    gate = cases[("tracker.report_ms", (("phases", 3), ("plans", 7), ("repo", "synthetic")))]
    assert gate["samples"] == [1000.0, 3000.0] and gate["unit"] == "ms"
    assert cases[("tracker.show_vs_status", (("repo", "own"),))]["samples"] == pytest.approx([1.1, 1.2])
    assert cases[("tracker.summary_vs_status", (("repo", "own"),))]["samples"] == pytest.approx(
        [4.0, 3.0]
    )  # over the clean clone
    uncommitted = cases[("tracker.summary_vs_status", (("repo", "own-uncommitted"),))]
    assert uncommitted["samples"] == pytest.approx([1.5, 2.0])  # over the clone's own status, round by round
    assert ("tracker.report_ms", (("format", "html"), ("repo", "own"))) in cases
    assert not any(m.startswith("tracker.update_check") for m, _ in cases)  # the status group was not timed


GATES_GATE = (
    'bench = "tracker.status_cold_gates_ratio"\nwhere = { repo = "gates", gates_from = 1250, gates_to = 5000 }\n'
    "at_most = 4.0\nmin_samples = 2"
)


def test_gates_cases_feed_a_ratio_gate_on_cold_status_at_the_most_over_the_fewest_gates(tmp_path: Path) -> None:
    """issue 24: 5,000 gates in a phase cost 13.7 s of cold status, 1,250 cost 1.0 s; the cases a gate on linear
    cost reads: each size's cold status and the round-by-round ratio of the largest over the smallest."""
    args = speed.parse_args(["--cases", "gates", "--runs", "2"])
    times = {"python/own": [0.02, 0.02], "status/own": [0.05, 0.05], "status/synthetic": [0.1, 0.1],
             "status-cold/gates/1250": [1.0, 1.1], "status-cold/gates/5000": [3.0, 13.2]}  # fmt: skip
    cases = {(c["metric"], tuple(sorted(c["params"].items()))): c for c in speed.report(times, {}, 0.5, args)}
    ratio = cases[("tracker.status_cold_gates_ratio", (("gates_from", 1250), ("gates_to", 5000), ("repo", "gates")))]
    assert ratio["samples"] == pytest.approx([3.0, 12.0]) and ratio["unit"] == "x"
    assert cases[("tracker.status_cold_ms", (("gates", 5000), ("repo", "gates")))]["samples"] == [3000.0, 13200.0]
    for samples, expected in (([1.0, 1.1], Status.DONE), ([8.0, 8.8], None)):
        times["status-cold/gates/5000"] = samples
        root = make_repo(tmp_path / f"repo-{expected}", {
            "plans/0001-x.md": plan_text("0001", [phase_block("P1", ["src/**"], [GATES_GATE])]),
            "src/a.py": "A = 1\n", ".gitignore": ".tracker/cache/\n"})  # fmt: skip
        path = write(speed.report(times, {}, 0.5, args), root / "bench/results", "test")
        assert load_result(path).cases
        st = statuses(root)["0001/P1"]
        assert st.status is Status.DONE if expected else st.status is not Status.DONE and not st.verdicts[0].met


@pytest.mark.slow
def test_speed_bench_end_to_end(tmp_path: Path) -> None:
    """The whole script on tiny sizes: real verify/pytest/signoff/ingest runs, equal status tables at each
    history size (checked by the script), a valid result file with every metric."""
    assert (
        speed.main(["--runs", "1", "--plans", "5", "--phases", "2", "--history", "8,20", "--out", str(tmp_path)]) == 0
    )
    [path] = tmp_path.glob("*-tracker_speed-*.json")
    metrics = {(c.metric, tuple(sorted(c.params.items()))) for c in load_result(path).cases}
    assert ("tracker.status_history_ratio", (("evidence_from", 8), ("evidence_to", 20), ("repo", "history"))) in metrics
    assert ("tracker.status_vs_python", (("repo", "own"),)) in metrics


@pytest.mark.slow
def test_report_case_end_to_end_feeds_the_report_gate(tmp_path: Path) -> None:
    """``--cases report`` on a tiny synthetic repository: real ``tracker report`` runs, a valid result file whose
    ``tracker.report_ms`` case carries the synthetic size and drives a gate shaped like plan 0004 P3's."""
    out = tmp_path / "results"
    assert speed.main(["--cases", "report", "--runs", "1", "--plans", "4", "--phases", "2", "--out", str(out)]) == 0
    [path] = out.glob("*tracker_speed-*.json")
    cases = {(c.metric, tuple(sorted(c.params.items()))): c for c in load_result(path).cases}
    case = cases[("tracker.report_ms", (("phases", 2), ("plans", 4), ("repo", "synthetic")))]
    assert case.unit == "ms" and len(case.samples) == 1 and 0 < case.samples[0] < 60_000
    assert {("tracker.report_ms", (("format", fmt), ("repo", "own"))) for fmt in ("md", "html")} <= set(cases)
    assert not any(m.startswith(("tracker.update_check", "tracker.show")) for m, _ in cases)  # only the report group

    gate = 'bench = "tracker.report_ms"\nwhere = { repo = "synthetic", plans = 4, phases = 2 }\nat_most = 60000\nmin_samples = 1'
    root = make_repo(tmp_path / "repo", {"plans/0004-reports.md": plan_text("0004", [phase_block("P3", ["src/**"], [gate])]),
                                         "src/a.py": "A = 1\n", ".gitignore": ".tracker/cache/\n"})  # fmt: skip
    (root / "bench/results").mkdir(parents=True)
    (root / "bench/results" / path.name).write_bytes(path.read_bytes())
    st = statuses(root)["0004/P3"]
    reason = st.verdicts[0].reason  # one sample: judged by its value (tracker.core.bench_verdict, issue 31)
    assert (
        st.status is Status.DONE
        and " ms ≤ 60000 ms (1 sample" in reason
        and "repo=synthetic plans=4 phases=2" in reason
    )


@pytest.mark.slow
def test_gates_case_end_to_end(tmp_path: Path) -> None:
    argv = ["--cases", "gates", "--runs", "1", "--repeat", "1", "--plans", "2", "--phases", "1", "--gates", "20,80"]
    assert speed.main([*argv, "--out", str(tmp_path)]) == 0
    [path] = tmp_path.glob("*-tracker_speed-*.json")
    metrics = {(c.metric, tuple(sorted(c.params.items()))) for c in load_result(path).cases}
    assert ("tracker.status_cold_gates_ratio", (("gates_from", 20), ("gates_to", 80), ("repo", "gates"))) in metrics


def test_the_uncommitted_clone_holds_head_and_one_result_file_more(tmp_path: Path) -> None:
    """What summary/uncommitted times: a clone of HEAD (committed files only) plus one result file, not committed,
    that the tracker reads as a run of its own."""
    import subprocess

    where = speed.clone_with_new_result(speed.REPO, tmp_path / "clone")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=where, capture_output=True, text=True, check=True)
    (line,) = status.stdout.splitlines()
    assert line.startswith("?? bench/results/") and line.endswith("-speed-uncommitted.json")
