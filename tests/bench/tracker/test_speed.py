"""bench/tracker/speed.py and bench/tracker/verify_overhead.py: their result files pass the tracker's own
validation and drive bench gates (the speed gate of 0001/P6 and the overhead gate of 0003/P5 as bench
gates: met, then regressed by a slower run); the generated history stays older than the real evidence and
has the store's shapes; ratios are taken round by round."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evidence_repo import make_repo, phase_block, plan_text, statuses

from bench.tracker import speed
from bench.tracker import verify_overhead as overhead
from tracker.core.model import Status
from tracker.store.evidence import load
from tracker.store.result_files import load_result

INFO = {"cpus": 2, "load1": 1.5}
SPEED_GATES = [
    'bench = "tracker.status_vs_python"\nwhere = { repo = "own" }\nat_most = 8.0\nmin_samples = 5',
    'bench = "tracker.status_history_ratio"\nwhere = { repo = "history", evidence_from = 10, evidence_to = 1000 }\nat_most = 1.2\nmin_samples = 5',
]


def speed_cases(vs_python: float, history_ratio: float) -> list[dict[str, object]]:
    """The cases tracker_speed.py writes for the gated metrics, from seconds measured in 5 rounds."""
    python = [0.020, 0.021, 0.019, 0.020, 0.022]
    status = [p * vs_python for p in python]
    at_10 = [0.100, 0.101, 0.099, 0.100, 0.102]
    return [
        speed.ms_case("python.pass_ms", {}, python, INFO),
        speed.ms_case("tracker.status_ms", {"repo": "own"}, status, INFO),
        speed.ratio_case("tracker.status_vs_python", {"repo": "own"}, status, python, INFO),
        speed.ms_case("tracker.status_ms", {"repo": "history", "evidence": 10}, at_10, INFO),
        speed.ratio_case("tracker.status_history_ratio", {"repo": "history", "evidence_from": 10, "evidence_to": 1000},
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
    first = speed.write_result(speed_cases(4.5, 1.05), root / "bench/results", "python bench/tracker/speed.py --quick")
    assert "-tracker_speed-" in first.name and load_result(first).cases  # pydantic validation, digest included
    first = backdate(first, "2026-11-01T00:00:00Z")
    st = statuses(root)["0001/P6"]
    assert st.status is Status.DONE, st
    assert [v.reason.split(" (")[0] for v in st.verdicts] == ["4.50 x ≤ 8.00 x", "1.05 x ≤ 1.20 x"]
    slower = speed.write_result(speed_cases(20.0, 1.05), root / "bench/results", "python bench/tracker/speed.py")
    assert slower != first
    st = statuses(root)["0001/P6"]
    assert st.status is Status.REGRESSED and st.verdicts[0].failed and st.verdicts[1].met


def test_overhead_result_file_validates_and_gates_the_ratio(tmp_path: Path) -> None:
    gate = (
        'bench = "tracker.verify_vs_pytest_cpu"\nwhere = { gates = 100, work_ms = 0 }\nat_most = 1.1\nmin_samples = 3'
    )
    root = make_repo(tmp_path / "repo", {"plans/0003-verify.md": plan_text("0003", [phase_block("P5", ["src/**"], [gate])]),
                                         "src/a.py": "A = 1\n", ".gitignore": ".tracker/cache/\n"})  # fmt: skip
    params = {"gates": 100, "work_ms": 0, "files": 200, "pytest_args": ""}
    cases = [speed.ratio_case("tracker.verify_vs_pytest_cpu", params, [1.25, 1.30, 1.28], [1.0, 1.0, 1.0], INFO),
             speed.ms_case("tracker.verify_ms", params, [1.25, 1.30, 1.28], INFO)]  # fmt: skip
    path = speed.write_result(cases, root / "bench/results", "python bench/tracker/verify_overhead.py",
                              "tracker_verify_overhead", overhead.MEASURED)  # fmt: skip
    run = load_result(path)
    assert "-tracker_verify_overhead-" in path.name and "bench/tracker/verify_overhead.py" in run.files
    st = statuses(root)["0003/P5"]
    assert (
        st.status is Status.PLANNED
        and st.verdicts[0].failed
        and st.verdicts[0].reason.startswith("1.28 x (95% lower bound 1.25 x) > 1.10 x (median of 3")
    )


def test_ratios_are_taken_round_by_round() -> None:
    entry = speed.ratio_case("tracker.status_vs_python", {"repo": "own"}, [0.2, 0.3, 0.9], [0.1, 0.1, 0.3], INFO)
    assert entry["samples"] == pytest.approx([2.0, 3.0, 3.0]) and entry["stats"]["median"] == pytest.approx(3.0)
    assert entry["unit"] == "x" and entry["direction"] == "lower" and entry["info"] == INFO
    with pytest.raises(ValueError):
        speed.ratio_case(
            "tracker.status_vs_python", {}, [0.2, 0.3], [0.1], INFO
        )  # a lost round is an error, not a shift


def test_summarize_p90_is_numpys_linear_interpolation() -> None:
    assert speed.summarize([1.0, 2.0, 3.0, 4.0, 10.0]) == {
        "n": 5,
        "median": 3.0,
        "min": 1.0,
        "mean": 4.0,
        "p90": pytest.approx(7.6),
    }
    assert speed.summarize([5.0])["p90"] == 5.0


def templates() -> list[tuple[str, bytes]]:
    """Two real-shaped store files (a plugin test run and a sign-off), as build_history_base returns them."""
    run = {"schema": "tracker-test-run", "version": 1, "status": "complete", "exitstatus": 0, "duration": 1.5, "rootdir": "repo",
           "provenance": {"time": "2026-12-01T02:44:47Z", "host": "vm", "commit": "a" * 40, "dirty": False, "args": ["tests/a.py"]},
           "gates": {"0001/P1#1": "b" * 64}, "files": {"src/a.py": "c" * 40},
           "tests": [{"nodeid": f"tests/a.py::test_{i}", "outcome": "passed", "reason": "", "duration": 0.01, "markers": []}
                     for i in range(5)]}  # fmt: skip
    signoff = {"schema": "tracker-signoff", "version": 1, "gate_key": "0001/P1#2", "gate_hash": "d" * 64, "phase_manual": ["d" * 64],
               "manual": "read it", "by": "b", "why": "w",
               "time": "2026-12-01T02:44:49Z", "host": "vm", "commit": "a" * 40, "dirty": False, "files": {}}  # fmt: skip
    return [("20261201T024447391272Z-vm-verify-96d210.json", speed._dump(run)),
            ("20261201T024449809242Z-vm-signoff-eb6644.json", speed._dump(signoff))]  # fmt: skip


def test_generated_history_is_older_than_the_real_files_and_has_their_shapes(tmp_path: Path) -> None:
    real = templates()
    generated = speed.history_documents(real, 40, "a" * 40, {"src/kern/k1/a.py": "e" * 40, "src/lib/a.py": "f" * 40})
    assert generated == speed.history_documents(
        real, 40, "a" * 40, {"src/kern/k1/a.py": "e" * 40, "src/lib/a.py": "f" * 40}
    )
    kinds = [name.split("-")[2] for name, _ in generated]
    assert [i for i, k in enumerate(kinds) if k == "bench"] == [15, 31] and [
        i for i, k in enumerate(kinds) if k == "signoff"
    ] == [7, 27]
    store = tmp_path / ".tracker/evidence"
    store.mkdir(parents=True)
    for name, data in real + generated:
        (store / name).write_bytes(data)
    for name, data in generated:
        if "-bench-bench-" in name:
            assert 500_000 < len(data) < 650_000  # like the ~580 KB result copies of bench verify
            run = load_result(store / name)
            assert len(run.cases) == 120 and set(run.files) == {"src/kern/k1/a.py"}
    loaded = load(tmp_path, strict=True)
    assert loaded.runs[-1].file.endswith(real[0][0]) and loaded.signoffs[-1][0].endswith(
        real[1][0]
    )  # the real files stay newest
    assert len(loaded.runs) == 1 + 40 - 2 - 2 and not loaded.invalid and len(loaded.bench) == 2
    failed = [r for r in loaded.runs if any(t["outcome"] == "failed" for t in r.tests)]
    assert 0 < len(failed) < len(loaded.runs) - 1  # some history runs failed a test, most passed


def test_quick_and_full_defaults() -> None:
    quick, full = speed.parse_args(["--quick"]), speed.parse_args([])
    assert (quick.runs, quick.history, quick.plans, quick.out) == (3, [10, 1000], 100, None)
    assert (full.runs, full.history, full.plans, full.out) == (7, [10, 100, 1000], 1000, speed.REPO / "bench/results")
    assert speed.parse_args(["--quick", "--out", "x"]).out == Path("x")
    quick_v, full_v = overhead.parse_args(["--quick"]), overhead.parse_args([])
    assert (quick_v.gates, quick_v.repeat, quick_v.out) == ([10, 100], 3, None)
    assert (full_v.gates, full_v.repeat, full_v.out) == (
        [10, 100, 500],
        overhead.REPEAT,
        overhead.REPO / "bench/results",
    )
    assert overhead.REPEAT >= 12  # enough rounds to decide 0003/P5 at 95% (the script says why)


def test_self_cpu_wrapper_separates_the_tracker_process_from_its_children(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"plans/0001-a.md": plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/t.py"'])]),
                                         "src/a.py": "A = 1\n"})  # fmt: skip
    timing = overhead.run_once([sys.executable, "-c", overhead.SELF_CPU, "status"], root)
    assert timing.own is not None and 0 < timing.own <= timing.cpu
    assert overhead.run_once([sys.executable, "-c", "pass"], root).own is None


def test_keep_newest_evidence_leaves_one_file(tmp_path: Path) -> None:
    store = tmp_path / ".tracker/evidence"
    store.mkdir(parents=True)
    for name in ("20261201T000001Z-a.json", "20261201T000003Z-c.json", "20261201T000002Z-b.json"):
        (store / name).write_text("{}")
    overhead.keep_newest_evidence(tmp_path)
    assert [p.name for p in store.iterdir()] == ["20261201T000003Z-c.json"]


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
def test_overhead_bench_end_to_end(tmp_path: Path) -> None:
    args = ["--gates", "3", "--repeat", "1", "--files", "5", "--breakdown", "--out", str(tmp_path)]
    assert overhead.main(args) == 0
    [path] = tmp_path.glob("*-tracker_verify_overhead-*.json")
    assert {c.metric for c in load_result(path).cases} >= {"tracker.verify_vs_pytest", "tracker.verify_vs_pytest_cpu"}


def test_case_groups_are_chosen_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert speed.parse_args([]).cases == ["status", "report", "detail", "gates"]
    assert speed.parse_args(["--cases", "report"]).cases == ["report"]
    with pytest.raises(SystemExit):
        speed.parse_args(["--cases", "report,nope"])
    assert "--cases: one or more of status, report, detail, gates" in capsys.readouterr().err
    assert (speed.parse_args([]).gates, speed.parse_args(["--quick"]).gates) == ([1250, 5000], [500, 2000])


def test_report_and_detail_cases_carry_the_gates_metrics_and_ratios_round_by_round() -> None:
    """The cases plan 0004's gates read: tracker.report_ms on the synthetic repository with its size, and show and
    summary over the status run of the same round."""
    args = speed.parse_args(["--cases", "report,detail", "--plans", "7", "--phases", "3", "--runs", "2"])
    s = [0.010, 0.020]
    times = {"python/own": s, "status/own": [0.040, 0.050], "status/synthetic": s, "report/synthetic": [1.0, 3.0],
             "report/own/md": s, "report/own/html": s, "show/own": [0.044, 0.060], "log/own": s,
             "summary/own": [0.080, 0.075]}  # fmt: skip
    cases = {(c["metric"], tuple(sorted(c["params"].items()))): c for c in speed.report(times, {}, 0.5, args)}
    gate = cases[("tracker.report_ms", (("phases", 3), ("plans", 7), ("repo", "synthetic")))]
    assert gate["samples"] == [1000.0, 3000.0] and gate["unit"] == "ms"
    assert cases[("tracker.show_vs_status", (("repo", "own"),))]["samples"] == pytest.approx([1.1, 1.2])
    assert cases[("tracker.summary_vs_status", (("repo", "own"),))]["samples"] == pytest.approx([2.0, 1.5])
    assert ("tracker.report_ms", (("format", "html"), ("repo", "own"))) in cases
    assert not any(m.startswith("tracker.update_check") for m, _ in cases)  # the status group was not timed


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
    assert (
        st.status is Status.DONE
        and " ms ≤ 60000 ms (median of 1, repo=synthetic plans=4 phases=2" in st.verdicts[0].reason
    )


def test_a_job_runs_repeat_times_a_round_and_its_fastest_counts(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    count = f"open({str(log)!r}, 'a').write('{{}}\\n')"
    best = speed.Job("best", [sys.executable, "-c", count.replace("{}", "b")], tmp_path)
    once = speed.Job("once", [sys.executable, "-c", count.replace("{}", "o")], tmp_path, best_of=False)
    times, _ = speed.rounds([best, once], 2, repeat=3)
    lines = log.read_text().split()
    assert lines.count("b") == 1 + 2 * 3 and lines.count("o") == 1 + 2  # the warm-up once; `once` once a round
    assert len(times["best"]) == len(times["once"]) == 2


def test_each_round_keeps_a_commands_fastest_run(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    cmd = [sys.executable, "-c", f"open({str(log)!r}, 'a').write('x\\n')"]
    (tmp_path / ".tracker" / "evidence").mkdir(parents=True)
    times = overhead.interleaved({"a": cmd}, tmp_path, 2, best_of=3)
    assert log.read_text().count("x") == 1 + 2 * 3 and len(times["a"]) == 2
    assert all(t.wall > 0 and t.cpu >= 0 for t in times["a"])


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
        path = speed.write_result(speed.report(times, {}, 0.5, args), root / "bench/results", "test")
        assert load_result(path).cases
        st = statuses(root)["0001/P1"]
        assert st.status is Status.DONE if expected else st.status is not Status.DONE and not st.verdicts[0].met


def test_a_cold_job_runs_without_the_cache_every_time(tmp_path: Path) -> None:
    cache = tmp_path / ".tracker" / "cache"
    probe = f"import os; open('seen', 'a').write(str(os.path.exists({str(cache)!r})))"
    cold = speed.Job("cold", [sys.executable, "-c", probe + f"; os.makedirs({str(cache)!r}, exist_ok=True)"], tmp_path)
    speed.rounds([cold._replace(cold=True)], 2, repeat=2)
    assert (tmp_path / "seen").read_text() == "False" * 5  # warm-up, then 2 rounds x 2 runs


@pytest.mark.slow
def test_gates_case_end_to_end(tmp_path: Path) -> None:
    argv = ["--cases", "gates", "--runs", "1", "--repeat", "1", "--plans", "2", "--phases", "1", "--gates", "20,80"]
    assert speed.main([*argv, "--out", str(tmp_path)]) == 0
    [path] = tmp_path.glob("*-tracker_speed-*.json")
    metrics = {(c.metric, tuple(sorted(c.params.items()))) for c in load_result(path).cases}
    assert ("tracker.status_cold_gates_ratio", (("gates_from", 20), ("gates_to", 80), ("repo", "gates"))) in metrics
