"""A report's status changes (:mod:`tracker.report.changes`): only the moves that stayed are listed, each saying
what moved the phase (the test, the benchmark with its value against the threshold and result file, the sign-off,
the dependency), never mislabelled: a benchmark that fails while a dependency blocks the phase is "regressed at a
benchmark run" when a test run unblocks it. On the fixture repository (real git), on the evidence of a real pytest
run, and on random histories: the listed changes are the net moves, and a phase done at the start and regressed at
the end is always listed."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import report_fixture
from evidence_repo import commit_all, make_repo, phase_block, plan_text
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.tracker.core.test_moves import STARTS, broad, focused, status_then
from tests.tracker.core.test_timeline import FILES, statuses_on
from tracker.commands import report
from tracker.core.model import BenchGate, Phase, Plan, ResultCase, ResultRun, Status, Store, TestGate, TestRun
from tracker.core.moves import net_move
from tracker.core.timeline import replay
from tracker.report.changes import KINDS, phase_change
from tracker.report.detail import PhaseDetail, phase_detail

S = Status


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("changes") / "repo")


def data_of(root: Path, **kwargs: Any) -> dict[str, Any]:
    buf = io.StringIO()
    assert report.run(root, out=buf, as_json=True, **kwargs) == 0
    return json.loads(buf.getvalue())  # type: ignore[no-any-return]


def moves(data: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["phase"]: (c["from"], c["to"], c["label"]) for c in data["changes"]}


def test_the_fixture_lists_the_moves_that_stayed_and_what_made_them(fixture_repo: Path) -> None:
    everything = data_of(fixture_repo)
    assert moves(everything) == {
        "0001/P1": ("planned", "done", "done at a test run"),  # via done, regressed: the regression came back
        "0001/P2": ("blocked", "regressed", "regressed at a benchmark run"),
        "0002/P1": ("blocked", "done", "done at a test run and a sign-off"),
        "0002/P2": ("blocked", "planned", "planned by a dependency"),
    }
    p1 = next(c for c in everything["changes"] if c["phase"] == "0001/P1")
    assert p1["via"] == ["done", "regressed"]
    phases = {ph["key"]: ph for plan in everything["plans"] for ph in plan["phases"]}
    flapped = phases["0001/P3"]  # blocked, in progress, blocked again: no change
    assert flapped["changes"] == [] and flapped["moves"]["changed"] is False and len(flapped["moves"]["moves"]) == 2
    md = io.StringIO()
    assert report.run(fixture_repo, out=md) == 0
    text = md.getvalue()
    changes = text[text.index("## Changes in the period") : text.index("## Pending")]
    assert changes.count("\n| 2026-") == 4 and "0001/P3" not in changes.split("Moved and came back")[0]
    assert "0001/P3 flapped 1 time via in-progress, ends blocked" in changes


def test_a_benchmark_that_missed_is_named_with_its_value_threshold_and_result_file(fixture_repo: Path) -> None:
    since = data_of(fixture_repo, since="c3")
    assert moves(since) == {
        "0001/P2": ("done", "regressed", "regressed at a benchmark run"),
        "0001/P3": ("in-progress", "blocked", "blocked by a dependency"),
    }  # 0001/P1 regressed and came back inside the period: a flap, not listed
    p2 = next(c for c in since["changes"] if c["phase"] == "0001/P2")
    (cause,) = p2["causes"]
    assert cause["kind"] == "benchmark run" and cause["gate"] == 1
    assert cause["what"].startswith("attn.time_us median at ") and "ctx=91000" in cause["what"]
    assert (
        cause["outcome"].startswith("1.04")
        and "needs ≥ 1.1" in cause["outcome"]
        and cause["outcome"].endswith("(missed)")
    )
    assert cause["file"] == "bench/results/20261108T100000Z-gpu-box-attn-b2.json"
    (dep,) = next(c for c in since["changes"] if c["phase"] == "0001/P3")["causes"]
    assert (dep["kind"], dep["what"], dep["outcome"]) == ("dependency", "0001/P2", "regressed")


# --- a failing benchmark revealed by a test run ---------------------------------------------------------------------


def result(name: str, second: int, samples: tuple[float, ...]) -> ResultRun:
    case = ResultCase("m", {"impl": "x"}, "us", "lower", samples)
    when = datetime(2026, 11, 1, 10, 0, second, tzinfo=UTC)
    return ResultRun(
        f"bench/results/{name}.json", "0" * 64, "b", when, "gpu", "NVIDIA H200", "e" * 40, False, {}, (case,)
    )


def test_a_benchmark_that_failed_while_blocked_is_what_regressed_the_phase_not_the_test_run_that_unblocked_it() -> None:
    """The fault of issue 26: 0001/P8 "blocked → regressed at a test run" was a failing benchmark, shown when a test
    run made its dependency done again."""
    p1 = Phase("P1", "a", gates=(TestGate("t.py::a"),))
    p2 = Phase("P2", "b", depends=("P1",), gates=(TestGate("t.py::b"), BenchGate("m", {"impl": "x"}, at_most=5.0)))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(p1, p2))]

    def run(name: str, second: int, tests: dict[str, str], args: list[str]) -> TestRun:
        prov = {"time": f"2026-11-01T10:00:0{second}Z", "host": "box", "commit": "c" * 40, "args": args}
        recs = [{"nodeid": n, "outcome": o, "reason": "", "markers": []} for n, o in tests.items()]
        return TestRun(f".tracker/evidence/{name}.json", prov, {}, FILES, recs)

    store = Store(
        runs=[
            run("ok", 1, {"t.py::a": "passed", "t.py::b": "passed"}, ["t.py"]),
            # 0001/P1 regressed; a new case of b that never ran (another pytest, another machine) leaves b unmet: 0001/P2
            # is work in progress again, blocked by 0001/P1
            run("new", 4, {"t.py::a": "failed", "t.py::b": "passed", "t.py::b[2]": "deselected"}, ["t.py"]),
            run("all", 5, {"t.py::a": "passed", "t.py::b": "passed", "t.py::b[2]": "passed"}, ["t.py"]),  # b met again
        ]
    )
    results = [result("fast", 2, (1.0, 1.0, 1.0)), result("slow", 3, (9.0, 9.0, 9.0))]  # the second misses at_most 5
    history = replay(plans, store, results, {})["0001/P2"]
    assert [(t.previous, t.status, t.kind) for t in history][-3:] == [
        (S.DONE, S.REGRESSED, "result"),
        (S.REGRESSED, S.BLOCKED, "test run"),
        (S.BLOCKED, S.REGRESSED, "test run"),  # the timeline's own record: the evidence file that came last
    ]
    detail = detail_of(plans, store, results, "0001/P2", history)
    move, (change,) = phase_change(detail, [t for t in history if t.time > "2026-11-01T10:00:02Z"])  # after "fast"
    assert move is not None and (change.previous, change.status) == (S.DONE, S.REGRESSED)
    assert change.label == "at a benchmark run" and change.sentence == "done → regressed at a benchmark run"
    (cause,) = change.causes
    assert (cause.gate, cause.kind, cause.file) == (2, "benchmark run", "bench/results/slow.json")
    assert cause.outcome == "9.00 us (95% bound 9.00), needs ≤ 5.00 us (missed)", cause.outcome
    assert change.via == (S.REGRESSED, S.BLOCKED)


def detail_of(
    plans: list[Plan], store: Store, results: Sequence[ResultRun], key: str, history: Sequence[Any]
) -> PhaseDetail:
    statuses = statuses_on(plans, store, results, {})
    plan = next(p for p in plans if key.startswith(p.id + "/"))
    phase = next(ph for ph in plan.phases if f"{plan.id}/{ph.id}" == key)
    return phase_detail(plan, phase, statuses, history=history, results=results, bounds={})


def test_a_phase_the_previous_report_had_done_and_today_s_gates_read_as_regressed_is_listed_without_new_evidence() -> (
    None
):
    """Its gate rewritten since the previous report (a test file moved): no evidence of the period moved it, but it
    was done there and is regressed now, and a regression is never left out."""
    phase = Phase("P1", "a", gates=(TestGate("t.py::a"),))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(phase,))]
    prov = {"host": "box", "commit": "c" * 40, "args": ["t.py::a"]}
    runs = [
        TestRun(f".tracker/evidence/{n}.json", {**prov, "time": f"2026-11-01T10:00:0{n}Z"}, {}, FILES,
                [{"nodeid": "t.py::a", "outcome": o, "reason": "", "markers": []}])
        for n, o in ((1, "passed"), (2, "failed"))
    ]  # fmt: skip
    store = Store(runs=runs)
    history = replay(plans, store)["0001/P1"]
    assert history[-1].status is S.REGRESSED
    detail = detail_of(plans, store, (), "0001/P1", history)
    move, (change,) = phase_change(detail, [], {"0001/P1": S.DONE})
    assert move is not None and (change.previous, change.status, change.time) == (S.DONE, S.REGRESSED, history[-1].time)
    assert change.causes[0].outcome.startswith("failed")
    assert phase_change(detail, [], {"0001/P1": S.REGRESSED}) == (None, ())  # as the previous report had it
    assert phase_change(detail, [], None) == (None, ())


# --- a real pytest run ----------------------------------------------------------------------------------------------


def test_a_real_test_failure_names_the_failing_node_id_and_its_outcome(tmp_path: Path, cli: Any) -> None:
    files = {
        "plans/0001-p.md": plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/test_a.py"'])]),
        "src/a.py": "X = 1\n",
        "tests/test_a.py": "def test_one():\n    assert 1 == 1\n\n\ndef test_two():\n    assert True\n",
    }
    root = make_repo(tmp_path / "repo", files)
    assert cli(root, "verify").code == 0  # real pytest: done
    first = data_of(root)
    assert moves(first) == {"0001/P1": ("planned", "done", "done at a test run")}
    (cause,) = first["changes"][0]["causes"]
    assert cause["what"] == "test `tests/test_a.py`" and cause["outcome"] == "2 passed"
    assert cause["file"].startswith(".tracker/evidence/") and cause["kind"] == "test run"
    commit_all(root, "evidence: done")
    (root / "tests/test_a.py").write_text("def test_one():\n    assert 1 == 2\n\n\ndef test_two():\n    assert True\n")
    assert cli(root, "verify").code == 1  # a real failure: regressed
    (change,) = data_of(root, since="HEAD")["changes"]
    assert (change["from"], change["to"], change["label"]) == ("done", "regressed", "regressed at a test run")
    (cause,) = change["causes"]
    assert cause["outcome"].startswith("tests/test_a.py::test_one: failed"), cause["outcome"]
    assert "1 of 2 not passing" in cause["outcome"]
    assert cli(root, "verify").code == 1  # the same failure again: a re-run with the same outcome moves nothing
    assert [c["to"] for c in data_of(root, since="HEAD")["changes"]] == ["regressed"]


# --- the property ---------------------------------------------------------------------------------------------------


@settings(deadline=None, max_examples=200, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_listed_changes_are_the_net_moves_and_a_regression_is_never_hidden(data: st.DataObject) -> None:
    plans, store, results = data.draw(st.one_of(focused(), broad()))
    start = data.draw(st.sampled_from(STARTS))
    out = replay(plans, store, results, {})
    before, after = status_then(plans, store, results, start), status_then(plans, store, results, "9999")
    gates = {f"{p.id}/{ph.id}": ph.gates for p in plans for ph in p.phases}
    for key, history in out.items():
        inside = [t for t in history if t.time > start]
        detail = detail_of(plans, store, results, key, history)
        move, changes = phase_change(detail, inside)
        assert move == net_move(key, inside)
        listed = [(c.previous, c.status) for c in changes]
        assert listed == ([(before[key], after[key])] if before[key] is not after[key] else []), key
        for change in changes:
            assert change.causes and change.time == inside[-1].time
            for cause in change.causes:
                if cause.gate is not None:  # the kind of evidence is the gate's, whatever file came last
                    gate = gates[key][cause.gate - 1]
                    want = (
                        "bench" if isinstance(gate, BenchGate) else "test" if isinstance(gate, TestGate) else "manual"
                    )
                    assert cause.kind == KINDS[want], (cause, gate)
        if before[key] is S.DONE and after[key] is S.REGRESSED:
            event("done, then regressed: listed")
            (change,) = changes
            failing = {g.number for g in detail.gates if g.failed}
            assert change.status is S.REGRESSED and {c.gate for c in change.causes} == failing
