"""A phase's net move over a period (:mod:`tracker.core.moves`): flaps, re-runs and pytest's renames of a test are no
change; a move that stayed is one, whatever happened between; on random histories (the timeline's, with re-runs,
runs of another pytest that names a long parameter otherwise, out-of-order and identical times) the move of every
period is the status at its start against the status at its end, as ``tracker status`` gives them on the evidence of
then, and a phase done at the start and regressed at the end is always a change."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.tracker.core.test_timeline import FILES, histories, plan_sets, statuses_on, utc
from tracker.core.model import Phase, Plan, ResultRun, Status, Store, TestGate, TestRun
from tracker.core.moves import Move, net_move
from tracker.core.timeline import Transition, replay

S = Status
T0 = "2026-11-01T10:00:00Z"


def t(time: str, was: Status, now: Status, gates: tuple[int, ...] = (1,), kind: str = "test run") -> Transition:
    return Transition("0001/P1", time, was, now, f".tracker/evidence/{time}.json", kind, "box", "c" * 40, gates)


def test_a_flap_is_no_change_and_says_how_it_flapped() -> None:
    move = net_move("0001/P1", [t("1", S.DONE, S.REGRESSED), t("2", S.REGRESSED, S.DONE)])
    assert move is not None and not move.changed
    assert move.summary == "flapped 1 time via regressed, ends done"
    twice = [
        t("1", S.DONE, S.BLOCKED),
        t("2", S.BLOCKED, S.DONE),
        t("3", S.DONE, S.IN_PROGRESS),
        t("4", S.IN_PROGRESS, S.DONE),
    ]
    assert net_move("0001/P1", twice).summary == "flapped 2 times via blocked and in-progress, ends done"  # type: ignore[union-attr]


def test_a_move_that_stayed_is_a_change_from_the_start_to_the_end() -> None:
    move = net_move("0001/P1", [t("1", S.DONE, S.BLOCKED, ()), t("2", S.BLOCKED, S.REGRESSED, (3,))])
    assert move is not None and move.changed and (move.previous, move.status) == (S.DONE, S.REGRESSED)
    assert move.last.time == "2" and move.via == (S.BLOCKED,) and move.summary == "via blocked"
    assert move.gates == (3,)
    assert move.as_json()["from"] == "done" and move.as_json()["to"] == "regressed" and move.as_json()["changed"]
    # the start the previous report recorded: done; the timeline on today's gates had it planned until a run
    moved = net_move("0001/P1", [t("1", S.PLANNED, S.DONE)], start=S.DONE)
    assert moved is not None and not moved.changed and moved.via == (S.PLANNED,)
    assert moved.summary == "re-read as planned on today's gates, ends done"
    again = net_move(
        "0001/P1", [t("1", S.PLANNED, S.DONE), t("2", S.DONE, S.REGRESSED), t("3", S.REGRESSED, S.DONE)], S.DONE
    )
    assert again.summary == "re-read as planned on today's gates, flapped 1 time via regressed, ends done"  # type: ignore[union-attr]
    regressed = net_move("0001/P1", [t("1", S.PLANNED, S.REGRESSED)], start=S.DONE)
    assert (
        regressed is not None
        and regressed.changed
        and regressed.previous is S.DONE
        and regressed.summary == "via planned"
    )
    single = net_move("0001/P1", [t("1", S.PLANNED, S.DONE)])
    assert single is not None and single.summary == "" and single.via == ()
    assert net_move("0001/P1", []) is None


# --- the property --------------------------------------------------------------------------------------------------

LONG = "x" * 120  # a parameter pytest 9.1 writes out in the test's id and 9.2 names "arg0" (over 100 characters)


def renamed(run: TestRun, name: str, time: str) -> TestRun:
    """``run`` again under pytest 9.1 (its long parameter written out) or 9.2 (named ``arg0``), as another machine
    with the other pytest recorded it: the same tests, their ids renamed."""
    old = run.provenance.get("pytest") == "9.1.1"
    recs = []
    for rec in run.tests:
        nodeid = str(rec["nodeid"])
        if nodeid.endswith(("[arg0]", f"[{LONG}]")):
            nodeid = nodeid.split("[", 1)[0] + ("[arg0]" if old else f"[{LONG}]")
        recs.append({**rec, "nodeid": nodeid})
    prov = {**run.provenance, "time": time, "pytest": "9.2.0" if old else "9.1.1"}
    return TestRun(f".tracker/evidence/{name}.json", prov, dict(run.gates), dict(run.files), recs)


def rerun(run: TestRun, name: str, time: str) -> TestRun:
    """``run`` again, the same outcomes under the same pytest."""
    prov = {**run.provenance, "time": time}
    return TestRun(
        f".tracker/evidence/{name}.json", prov, dict(run.gates), dict(run.files), [dict(r) for r in run.tests]
    )


@st.composite
def with_renames_and_reruns(draw: st.DrawFn, plans: list[Plan]) -> tuple[Store, list[ResultRun]]:
    """A random history of the timeline's, some of its runs on a test with a long parameter (pytest 9.2's id), and
    copies of runs added: re-runs with the same outcomes, and runs of another pytest that renamed the ids."""
    store, results = draw(histories(plans))
    for run in store.runs:
        run.provenance["pytest"] = "9.2.0"
        if draw(st.booleans()):
            run.tests.append({"nodeid": "t.py::p[arg0]", "outcome": draw(st.sampled_from(["passed", "failed"])),
                              "reason": "", "markers": []})  # fmt: skip
    for n in range(draw(st.integers(0, 4)) if store.runs else 0):
        source = draw(st.sampled_from(store.runs))
        time = f"2026-11-01T10:00:0{draw(st.integers(0, 3))}Z"
        copy = renamed(source, f"again{n}", time) if draw(st.booleans()) else rerun(source, f"again{n}", time)
        store.runs.insert(draw(st.integers(0, len(store.runs))), copy)  # anywhere: times out of order too
    return store, results


def status_then(plans: list[Plan], store: Store, results: Sequence[ResultRun], time: str) -> dict[str, Status]:
    """``tracker status`` on the evidence recorded up to ``time`` (a run the store put after a newer one takes the
    newer time, as the timeline orders it), ``stale`` read as done (the replay has no tree of the past)."""
    latest, runs = "", 0
    for i, r in enumerate(store.runs):
        latest = max(latest, r.time)
        if latest <= time:
            runs = i + 1
    prefix = Store(runs=store.runs[:runs], signoffs=[s for s in store.signoffs if str(s[1]["time"]) <= time])
    seen = [r for r in results if utc(r.time) <= time]
    out = statuses_on(plans, prefix, seen, {})
    return {k: S.DONE if v.status is S.STALE else v.status for k, v in out.items()}


STARTS = ("2026-11-01T09:59:59Z", *(f"2026-11-01T10:00:0{s}Z" for s in range(8)))


def with_long_parameter_gates(plans: list[Plan]) -> list[Plan]:
    """``plans`` with a gate on the test of a long parameter added to some phases."""
    out = []
    for plan in plans:
        phases = tuple(
            ph._replace(gates=(*ph.gates, TestGate("t.py::p"))) if i % 2 == 0 else ph
            for i, ph in enumerate(plan.phases)
        )
        out.append(plan._replace(phases=phases))
    return out


FOCUSED = [
    Plan(
        "0001",
        "p",
        "plans/0001-p.md",
        phases=(
            Phase("P1", "p and q", gates=(TestGate("t.py::p"), TestGate("t.py::q"))),
            Phase("P2", "r", depends=("P1",), gates=(TestGate("t.py::r"),)),
        ),
    )
]


@st.composite
def focused(draw: st.DrawFn) -> tuple[list[Plan], Store, list[ResultRun]]:
    """Runs of three tests that pass and fail, some as runs of one gate alone (they retire a failure), under pytest
    9.1 or 9.2 (the long parameter of ``t.py::p`` named otherwise), at times out of order and tied: histories where
    phases get done, regress, come back and block their dependents."""
    runs = []
    for n in range(draw(st.integers(1, 12))):
        old = draw(st.integers(0, 3)) == 0
        outcomes = draw(
            st.dictionaries(st.sampled_from(["p", "q", "r"]), st.sampled_from(["passed"] * 4 + ["failed"]), min_size=1)
        )
        recs = [
            {"nodeid": f"t.py::{name}[{LONG if old and name == 'p' else 'arg0'}]", "outcome": out, "reason": "",
             "markers": []}
            for name, out in outcomes.items()
        ]  # fmt: skip
        prov: dict[str, Any] = {"time": f"2026-11-01T10:00:0{draw(st.integers(0, 7))}Z", "host": "box",
                                "commit": f"{n:040d}", "pytest": "9.1.1" if old else "9.2.0"}  # fmt: skip
        args = draw(st.sampled_from(["all", "all", "own", "none"]))
        if args != "none":  # a run of all of t.py, or of its tests' gates (of a gate alone, it retires a failure)
            prov["args"] = ["t.py"] if args == "all" else [f"t.py::{name}" for name in outcomes]
        code = {**FILES, "src/a.py": draw(st.sampled_from("abc")) * 40}  # a pass on other code retires a failure
        runs.append(TestRun(f".tracker/evidence/{n}.json", prov, {}, code, recs))
    store = Store(runs=runs)
    for n in range(draw(st.integers(0, 3))):
        source = draw(st.sampled_from(runs))
        time = f"2026-11-01T10:00:0{draw(st.integers(0, 3))}Z"
        store.runs.insert(draw(st.integers(0, len(store.runs))), rerun(source, f"again{n}", time))
    return FOCUSED, store, []


@st.composite
def broad(draw: st.DrawFn) -> tuple[list[Plan], Store, list[ResultRun]]:
    """The timeline's random plans and histories (bench, manual and test gates, dependencies), with re-runs and
    runs of another pytest added."""
    plans = with_long_parameter_gates(draw(plan_sets()))
    store, results = draw(with_renames_and_reruns(plans))
    return plans, store, results


@settings(deadline=None, max_examples=300, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_move_of_a_period_is_its_start_status_against_its_end_status(data: st.DataObject) -> None:
    plans, store, results = data.draw(st.one_of(focused(), broad()))
    start = data.draw(st.sampled_from(STARTS))
    out = replay(plans, store, results, {})
    before, after = status_then(plans, store, results, start), status_then(plans, store, results, "9999")
    for key, transitions in out.items():
        move = net_move(key, [tr for tr in transitions if tr.time > start])
        if move is None:
            assert before[key] is after[key], key  # nothing in the period moved it
            continue
        assert (move.previous, move.status) == (before[key], after[key]), key
        assert move.changed == (before[key] is not after[key])
        event("a change" if move.changed else "a flap")
        if before[key] is S.DONE and after[key] is S.REGRESSED:  # a real regression is never hidden
            event("done, then regressed")
            assert move.changed and move.status is S.REGRESSED
        if not move.changed:
            assert move.summary.startswith("flapped ") and move.summary.endswith(f"ends {after[key].value}")


def test_a_rerun_with_the_same_outcome_or_under_another_pytest_moves_nothing() -> None:
    phase = Phase("P1", "t", gates=(TestGate("t.py::p"),))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(phase,))]

    def run(name: str, time: str, nodeid: str, outcome: str, pytest: str) -> TestRun:
        prov: dict[str, Any] = {"time": time, "host": "box", "commit": "c" * 40, "args": ["t.py::p"], "pytest": pytest}
        rec = {"nodeid": nodeid, "outcome": outcome, "reason": "", "markers": []}
        return TestRun(f".tracker/evidence/{name}.json", prov, {}, FILES, [rec])

    store = Store(
        runs=[
            run("a", "2026-11-01T10:00:00Z", "t.py::p[arg0]", "passed", "9.2.0"),
            run("b", "2026-11-01T10:00:01Z", "t.py::p[arg0]", "passed", "9.2.0"),  # a re-run
            run("c", "2026-11-01T10:00:02Z", f"t.py::p[{LONG}]", "passed", "9.1.1"),  # renamed by pytest 9.1
            run("d", "2026-11-01T10:00:03Z", "t.py::p[arg0]", "passed", "9.2.0"),
        ]
    )
    out = replay(plans, store)["0001/P1"]
    assert [(tr.previous, tr.status) for tr in out] == [(S.PLANNED, S.DONE)]
    assert net_move("0001/P1", [tr for tr in out if tr.time > "2026-11-01T10:00:00Z"]) is None
    assert isinstance(net_move("0001/P1", out), Move)


def test_a_recorded_start_never_hides_a_regression_the_timeline_shows() -> None:
    # the previous report's record line (a hand or a merge can edit it) says regressed; the timeline says done
    move = net_move("0001/P1", [t("1", S.DONE, S.REGRESSED)], start=S.REGRESSED)
    assert move is not None and move.changed and (move.previous, move.status) == (S.DONE, S.REGRESSED)
    # the record says done where today's gates read planned: listed from done, as the record says
    move = net_move("0001/P1", [t("1", S.PLANNED, S.REGRESSED)], start=S.DONE)
    assert move is not None and (move.previous, move.status) == (S.DONE, S.REGRESSED)
    # a renamed gate's re-read is still no change
    assert not net_move("0001/P1", [t("1", S.PLANNED, S.DONE)], start=S.DONE).changed  # type: ignore[union-attr]
