"""The status timeline (:mod:`tracker.core.timeline`): the fixture repository's history, transition by transition; on
random histories, the replay ends where ``tracker status`` is and equals a naive replay that evaluates every gate
of every phase after every evidence file; ties within one second, invalid store files, a dependency chain."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import report_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base.cache import Cache
from tracker.base.file_index import FileIndex
from tracker.core.evidence_answers import LiveEvidence
from tracker.core.manual_gate import manual_hashes
from tracker.core.model import (
    OUTCOMES,
    BenchGate,
    Gate,
    ManualGate,
    Phase,
    Plan,
    ResultCase,
    ResultRun,
    Status,
    Store,
    TestGate,
    TestRun,
    gate_hash,
    gate_key,
)
from tracker.core.status import evaluate
from tracker.core.timeline import Transition, replay, status_at
from tracker.report.repo_view import RepoView
from tracker.store.bench_evaluator import Evaluator

S = Status
FILES = {"src/a.py": "1" * 40}


# --- the fixture repository (tests/tracker/report_fixture.py) -----------------------------------------------------


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("timeline") / "repo")


def rev(root: Path, ref: str) -> str:
    return report_fixture.git(root, "rev-parse", ref + "^{commit}").strip()


def test_the_fixture_s_history_transition_by_transition(fixture_repo: Path) -> None:
    root = fixture_repo
    r1, r2, r3, r4 = (
        f".tracker/evidence/2026110{d}T100000Z-ci-box-r{n}.json" for d, n in ((2, 1), (5, 2), (6, 3), (7, 4))
    )
    s1 = ".tracker/evidence/20261104T100000Z-laptop-signoff-s1.json"
    b1, b2 = (
        "bench/results/20261103T100000Z-gpu-box-attn-b1.json",
        "bench/results/20261108T100000Z-gpu-box-attn-b2.json",
    )
    c1, c2, faster, fixed = rev(root, "c1"), rev(root, "c2"), rev(root, "c4~3"), rev(root, "c4~1")
    gpu = "gpu-box (NVIDIA H200)"

    def t(
        key: str,
        day: int,
        was: Status,
        now: Status,
        file: str,
        kind: str,
        machine: str,
        commit: str,
        gates: tuple[int, ...],
    ) -> Transition:
        return Transition(key, f"2026-11-{day:02d}T10:00:00Z", was, now, file, kind, machine, commit, gates)

    expected = {
        "0001/P1": [
            t("0001/P1", 2, S.PLANNED, S.DONE, r1, "test run", "ci-box", c1, (1,)),
            t("0001/P1", 6, S.DONE, S.REGRESSED, r3, "test run", "ci-box", faster, (1,)),
            t("0001/P1", 7, S.REGRESSED, S.DONE, r4, "test run", "ci-box", fixed, (1,)),
        ],
        "0001/P2": [
            t("0001/P2", 2, S.BLOCKED, S.PLANNED, r1, "test run", "ci-box", c1, ()),  # 0001/P1 done: unblocked
            t("0001/P2", 3, S.PLANNED, S.DONE, b1, "result", gpu, c1, (1,)),  # 1.22x >= 1.1x
            t("0001/P2", 8, S.DONE, S.REGRESSED, b2, "result", gpu, fixed, (1,)),  # 1.04x < 1.1x
        ],
        "0001/P3": [
            t("0001/P3", 3, S.BLOCKED, S.IN_PROGRESS, b1, "result", gpu, c1, (2,)),  # its test met since r1; P2 done
            t("0001/P3", 8, S.IN_PROGRESS, S.BLOCKED, b2, "result", gpu, fixed, ()),  # P2 regressed
        ],
        "0002/P1": [
            t("0002/P1", 2, S.BLOCKED, S.PLANNED, r1, "test run", "ci-box", c1, (1,)),  # its engine test failed
            t("0002/P1", 4, S.PLANNED, S.IN_PROGRESS, s1, "sign-off", "laptop", c2, (2,)),
            t("0002/P1", 5, S.IN_PROGRESS, S.DONE, r2, "test run", "ci-box", c2, (1,)),
        ],
        "0002/P2": [t("0002/P2", 5, S.BLOCKED, S.PLANNED, r2, "test run", "ci-box", c2, ())],
    }
    view = RepoView(root, Cache(None))
    assert view.timeline() == expected
    assert view.timeline(["0001/P3"]) == {"0001/P3": expected["0001/P3"]}  # its dependency replayed, not returned
    assert status_at(expected["0001/P1"], "2026-11-06T12:00:00Z") is S.REGRESSED
    assert status_at(expected["0001/P2"], "2026-11-01T00:00:00Z", S.BLOCKED) is S.BLOCKED
    # stale is judged on today's tree: the replay ends at done, the status now says stale
    assert view.statuses["0002/P1"].status is S.STALE and view.statuses["0002/P2"].status is S.BLOCKED


# --- hand-built histories -----------------------------------------------------------------------------------------


def run(name: str, time: str, tests: dict[str, str], **prov: Any) -> TestRun:
    recs = [{"nodeid": n, "outcome": o, "reason": "", "markers": []} for n, o in tests.items()]
    provenance = {"time": time, "host": name, "commit": "c" * 40, **prov}
    return TestRun(f".tracker/evidence/{name}.json", provenance, {}, FILES, recs)


def signoff(name: str, time: str, key: str, text: str) -> tuple[str, dict[str, Any]]:
    data = {"gate_key": key, "gate_hash": gate_hash(ManualGate(text)), "by": "b", "why": "w", "time": time,
            "host": name, "commit": "d" * 40, "files": FILES}  # fmt: skip
    return f".tracker/evidence/{name}.json", data


def steps(out: dict[str, list[Transition]], key: str) -> list[tuple[str, str, str, str]]:
    return [(t.time, t.previous.value, t.status.value, t.file.rsplit("/", 1)[1]) for t in out[key]]


T = "2026-11-01T10:00:00Z"


def test_events_of_one_second_keep_the_store_s_order_runs_before_signoffs() -> None:
    phase = Phase("P1", "t", gates=(TestGate("t.py::a"), ManualGate("ok")))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(phase,))]
    store = Store(runs=[run("r", T, {"t.py::a": "passed"})], signoffs=[signoff("s", T, "0001/P1#2", "ok")])
    assert steps(replay(plans, store), "0001/P1") == [
        (T, "planned", "in-progress", "r.json"),
        (T, "in-progress", "done", "s.json"),
    ]
    one = Plan("0001", "p", "plans/0001-p.md", phases=(Phase("P1", "t", gates=(TestGate("t.py::a"),)),))
    # ok: a run of the gate alone (only such a run retires a failure on the same tree: tracker.core.testgate)
    fail, ok = run("fail", T, {"t.py::a": "failed"}), run("ok", T, {"t.py::a": "passed"}, args=["t.py::a"])
    # a failing test that never passed is new work (planned); passed, then failed: a regression
    assert steps(replay([one], Store(runs=[fail, ok])), "0001/P1") == [(T, "planned", "done", "ok.json")]
    assert steps(replay([one], Store(runs=[ok, fail])), "0001/P1") == [
        (T, "planned", "done", "ok.json"),
        (T, "done", "regressed", "fail.json"),
    ]
    # a run the store put after a newer one (verify's own run) takes the newer time: replayed in store order
    late = run("late", "2026-11-01T09:00:00Z", {"t.py::a": "failed"})
    assert steps(replay([one], Store(runs=[ok, late])), "0001/P1")[-1] == (T, "done", "regressed", "late.json")


def test_invalid_store_files_are_left_out_of_the_replay_and_make_every_gate_unmet_now() -> None:
    phase = Phase("P1", "t", gates=(TestGate("t.py::a"),))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(phase,))]
    good = [run("ok", T, {"t.py::a": "passed"})]
    bad = Store(runs=list(good), invalid=[".tracker/evidence/x.json: not JSON"])
    assert replay(plans, bad) == replay(plans, Store(runs=list(good)))
    assert steps(replay(plans, bad), "0001/P1") == [(T, "planned", "done", "ok.json")]
    now = evaluate(plans, LiveEvidence(bad, no_bench), lambda: FileIndex(FILES))["0001/P1"]
    assert now.status is S.PLANNED and now.verdicts[0].reason.startswith("invalid evidence file")


def test_a_dependency_chain_blocks_and_unblocks() -> None:
    p1 = Phase("P1", "a", gates=(TestGate("t.py::a"),))
    p2 = Phase("P2", "bc", depends=("P1",), gates=(TestGate("t.py::b"), TestGate("t.py::c")))
    p3 = Phase("P3", "de", depends=("P2",), gates=(TestGate("t.py::d"), TestGate("t.py::e")))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(p1, p2, p3))]
    times = [f"2026-11-0{d}T10:00:00Z" for d in range(1, 6)]
    store = Store(
        runs=[
            run("r1", times[0], {"t.py::b": "passed", "t.py::d": "passed"}),  # P2, P3 half met: blocked still
            run("r2", times[1], {"t.py::a": "passed"}),  # P1 done: P2 unblocked
            run("r3", times[2], {"t.py::c": "passed"}),  # P2 done: P3 unblocked
            run("r4", times[3], {"t.py::c": "failed"}),  # P2 regressed: P3 blocked again
            run("r5", times[4], {"t.py::c": "passed"}, args=["t.py::c"]),  # and back (a run of the gate alone)
        ]
    )
    out = replay(plans, store)
    assert steps(out, "0001/P1") == [(times[1], "planned", "done", "r2.json")]
    assert steps(out, "0001/P2") == [
        (times[1], "blocked", "in-progress", "r2.json"),
        (times[2], "in-progress", "done", "r3.json"),
        (times[3], "done", "regressed", "r4.json"),
        (times[4], "regressed", "done", "r5.json"),
    ]
    assert steps(out, "0001/P3") == [
        (times[2], "blocked", "in-progress", "r3.json"),
        (times[3], "in-progress", "blocked", "r4.json"),
        (times[4], "blocked", "in-progress", "r5.json"),
    ]
    assert [t.gates for t in out["0001/P2"]] == [(), (2,), (2,), (2,)]  # the unblocking was no gate of its own
    assert [t.gates for t in out["0001/P3"]] == [(), (), ()]
    assert replay(plans, store, only=["0001/P3"]) == {"0001/P3": out["0001/P3"]}


def test_a_run_that_covers_a_gate_without_a_record_of_it_is_replayed() -> None:
    """A run whose arguments cover a gate's whole test file, with none of its tests left, drops the tests gone
    from the code: the gate's failure ends there though the run holds no record the gate selects."""
    phase = Phase("P1", "t", gates=(TestGate("t.py"),))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(phase,))]
    store = Store(
        runs=[
            run("ok", "2026-11-01T10:00:00Z", {"t.py::a": "passed"}, args=["t.py"], host="box"),  # runs of all of t.py
            run("bad", "2026-11-02T10:00:00Z", {"t.py::a": "failed"}, args=["t.py"], host="box"),
            # t.py changed, so the test is gone from the code (tracker.core.testgate).
            run("gone", "2026-11-03T10:00:00Z", {"u.py::x": "passed"}, args=["t.py", "u.py"], host="box"),
        ]
    )
    for r, t_py in zip(store.runs, ("a", "a", "b"), strict=True):
        r.files = {**FILES, "t.py": t_py * 40}
    assert steps(replay(plans, store), "0001/P1") == [
        ("2026-11-01T10:00:00Z", "planned", "done", "ok.json"),
        ("2026-11-02T10:00:00Z", "done", "regressed", "bad.json"),
        ("2026-11-03T10:00:00Z", "regressed", "planned", "gone.json"),  # 0 tests collected: unmet, not failed
    ]


def test_a_new_failing_test_in_a_done_phase_is_new_work_not_a_regression() -> None:
    phase = Phase("P1", "t", gates=(TestGate("t.py"),))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(phase,))]
    store = Store(
        runs=[
            run("ok", "2026-11-01T10:00:00Z", {"t.py::a": "passed"}, args=["t.py"]),  # runs of all of t.py (adv F3)
            run("new", "2026-11-02T10:00:00Z", {"t.py::a": "passed", "t.py::b": "failed"}, args=["t.py"]),
        ]
    )
    assert steps(replay(plans, store), "0001/P1") == [
        ("2026-11-01T10:00:00Z", "planned", "done", "ok.json"),
        ("2026-11-02T10:00:00Z", "done", "planned", "new.json"),  # its one gate unmet, not regressed
    ]
    assert final(plans, store, ())["0001/P1"] is S.PLANNED


def result(name: str, day: int, samples: tuple[float, ...]) -> ResultRun:
    case = ResultCase("m", {"impl": "x"}, "us", "lower", samples)
    when = datetime(2026, 11, day, 10, 0, 0, tzinfo=UTC)
    return ResultRun(
        f"bench/results/{name}.json", "0" * 64, "b", when, "g", "NVIDIA H200", "e" * 40, False, {}, (case,)
    )


def test_a_bench_gate_met_once_and_now_without_a_value_is_as_status_asks_it() -> None:
    """A bench gate met once whose newest run has too few samples is undecided: the met verdict stands (issue 31: a
    run that cannot decide never turns a done phase back), so a failing test of its phase is a regression."""
    phase = Phase("P1", "t", gates=(BenchGate("m", {"impl": "x"}, at_most=5.0, min_samples=3), TestGate("t.py::a")))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(phase,))]
    store = Store(runs=[run("ok", "2026-11-01T10:00:00Z", {"t.py::a": "passed"}),
                        run("bad", "2026-11-04T10:00:00Z", {"t.py::a": "failed"})])  # fmt: skip
    results = [result("b1", 2, (1.0, 2.0, 3.0)), result("b2", 3, (1.0,))]
    out = replay(plans, store, results, {})
    assert [(t.previous.value, t.status.value, t.gates) for t in out["0001/P1"]] == [
        ("planned", "in-progress", (2,)),
        ("in-progress", "done", (1,)),
        ("done", "regressed", (2,)),  # b2's one sample decides nothing; then its test fails
    ]
    assert final(plans, store, results)["0001/P1"] is S.REGRESSED


# --- the property: replay == naive replay, ending where status is -------------------------------------------------

ARGS = ("t.py", "t.py::a", "t.py::b", "u.py", "u.py::c")
NODES = ("t.py::a", "t.py::b", "u.py::c", "t.py::a[1]")
TEXTS = ("reviewed", "read")
DIRECTION = {"m": "lower", "n": "higher"}


def no_bench() -> Any:
    raise AssertionError("no bench gate here")


def evaluator(results: Sequence[ResultRun], bounds: dict[str, float]) -> Evaluator:
    ev = Evaluator(list(results))
    ev.bounds = bounds  # bootstrap bounds shared by every prefix (pure functions of their samples)
    return ev


def statuses_on(
    plans: list[Plan], store: Store, results: Sequence[ResultRun], bounds: dict[str, float]
) -> dict[str, Any]:
    """``tracker status`` on this evidence (the working tree is the one every run recorded: nothing is stale)."""
    return evaluate(plans, LiveEvidence(store, lambda: evaluator(results, bounds)), lambda: FileIndex(FILES))


def final(plans: list[Plan], store: Store, results: Sequence[ResultRun]) -> dict[str, Status]:
    """Status's answer, ``stale`` mapped to ``done`` (the replay has no tree of the past to judge it on)."""
    out = statuses_on(plans, store, results, {})
    return {k: S.DONE if v.status is S.STALE else v.status for k, v in out.items()}


def utc(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def gate_states(
    plans: list[Plan], store: Store, results: Sequence[ResultRun], bounds: dict[str, float]
) -> dict[str, list[tuple[bool, bool, bool]]]:
    """Each phase's gates as status reads them: (met, failed, met at some time)."""
    evidence = LiveEvidence(store, lambda: evaluator(results, bounds))
    out = {}
    for p in plans:
        for ph in p.phases:
            answers = [evidence.verdict(gate_key(p.id, ph.id, i), g, manual_hashes(ph)) for i, g in enumerate(ph.gates)]
            out[f"{p.id}/{ph.id}"] = [(v.met, v.failed, ever) for v, ever in answers]
    return out


def naive(plans: list[Plan], store: Store, results: Sequence[ResultRun]) -> dict[str, list[Transition]]:
    """The timeline by definition: after every evidence file, in the store's order (time, then runs, sign-offs,
    results), every phase's status as ``tracker status`` gives it on the evidence up to that file; a transition's
    gates are those whose verdict (met, failed, or met at some time: what decides a regression) changed."""
    latest, events = "", []
    for i, r in enumerate(store.runs):
        latest = max(latest, r.time)
        events.append((latest, 0, i))
    events += [(str(d["time"]), 1, i) for i, (_, d) in enumerate(store.signoffs)]
    events += [(utc(r.time), 2, i) for i, r in enumerate(results)]
    events.sort()
    bounds: dict[str, float] = {}
    before = statuses_on(plans, Store(), (), bounds)
    judged = gate_states(plans, Store(), (), bounds)
    out: dict[str, list[Transition]] = {k: [] for k in before}
    for k, (time, kind, i) in enumerate(events, 1):
        seen = events[:k]
        prefix = Store(
            runs=store.runs[: sum(e[1] == 0 for e in seen)],
            signoffs=[store.signoffs[e[2]] for e in seen if e[1] == 1],
        )
        seen_results = [results[e[2]] for e in seen if e[1] == 2]
        now = statuses_on(plans, prefix, seen_results, bounds)
        gates_now = gate_states(plans, prefix, seen_results, bounds)
        if kind == 0:
            r = store.runs[i]
            file, what, machine, commit = r.file, "test run", r.provenance["host"], r.provenance["commit"]
        elif kind == 1:
            file, data = store.signoffs[i]
            what, machine, commit = "sign-off", data["host"], data["commit"]
        else:
            res = results[i]
            file, what, commit = res.path, "result", res.commit
            machine = f"{res.host} ({res.gpu})" if res.gpu else res.host
        for key, ps in now.items():
            was, then = before[key].status, ps.status
            if then is not was:
                gates = tuple(n for n, (a, b) in enumerate(zip(judged[key], gates_now[key], strict=True), 1) if a != b)
                out[key].append(Transition(key, time, was, then, file, what, machine, commit, gates))
        before, judged = now, gates_now
    return out


@st.composite
def gates(draw: st.DrawFn) -> Gate:
    kind = draw(st.sampled_from(["test", "test", "manual", "bench"]))
    if kind == "test":
        return TestGate(draw(st.sampled_from(ARGS)), draw(st.sampled_from([None, None, "gpu"])))
    if kind == "manual":
        return ManualGate(draw(st.sampled_from(TEXTS)))
    metric, ratio = draw(st.sampled_from(sorted(DIRECTION))), draw(st.booleans())
    threshold = draw(st.sampled_from([0.9, 1.0, 1.2] if ratio else [3.0, 5.0, 8.0]))
    up = draw(st.booleans())
    return BenchGate(
        metric,
        {"impl": "x"},
        {"impl": "ref"} if ratio else None,
        at_least=threshold if up else None,
        at_most=None if up else threshold,
        stat=draw(st.sampled_from(["median", "min"])),
        min_samples=draw(st.sampled_from([None, 2, 3])),
        confidence=draw(st.sampled_from([None, None, None, 0.9])),
    )


@st.composite
def plan_sets(draw: st.DrawFn) -> list[Plan]:
    plans: list[Plan] = []
    for plan_id in ("0001", "0002")[: draw(st.integers(1, 2))]:
        phases: list[Phase] = []
        earlier = [f"{p.id}/{ph.id}" for p in plans for ph in p.phases]
        for n in range(draw(st.integers(1, 4))):
            mine = [ph.id for ph in phases]
            depends = draw(st.lists(st.sampled_from(mine + earlier), max_size=2, unique=True)) if mine + earlier else []
            own = tuple(draw(st.lists(gates(), max_size=draw(st.sampled_from([1, 2, 2, 3])))))
            phases.append(Phase(f"P{n + 1}", f"phase {n + 1}", tuple(depends), ("src/**",), own))
        plans.append(Plan(plan_id, "p", f"plans/{plan_id}-p.md", phases=tuple(phases)))
    return plans


def when(second: int) -> str:
    return f"2026-11-01T10:00:0{second}Z"


@st.composite
def histories(draw: st.DrawFn, plans: list[Plan]) -> tuple[Store, list[ResultRun]]:
    test_keys = [
        gate_key(p.id, ph.id, i)
        for p in plans
        for ph in p.phases
        for i, g in enumerate(ph.gates)
        if isinstance(g, TestGate)
    ]
    all_gates = {gate_key(p.id, ph.id, i): g for p in plans for ph in p.phases for i, g in enumerate(ph.gates)}
    phase_keys = [f"{p.id}/{ph.id}" for p in plans for ph in p.phases]
    store, results = Store(), []
    for n in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["run", "run", "signoff", "result"]))
        second = draw(st.integers(0, 3))
        if kind == "run":
            junit = draw(st.integers(0, 5)) == 0
            outcome = st.sampled_from(["passed"] * 6 + ["failed"] * 3 + sorted(OUTCOMES))  # mostly passes and failures
            outcomes = draw(st.dictionaries(st.sampled_from(NODES), outcome, min_size=1, max_size=4))
            if draw(st.integers(0, 6)) == 0:
                outcomes["t.py"] = "error"  # a collection error: a file-level record
            recs = [
                {
                    "nodeid": node,
                    "outcome": out,
                    "reason": "",
                    "markers": [] if junit else draw(st.sampled_from([[], ["gpu"]])),
                }
                for node, out in outcomes.items()
            ]
            prov: dict[str, Any] = {"time": when(second), "host": f"h{n}", "commit": f"{n:040d}"}
            if junit:
                prov["ingested_from"] = "junit"
            if draw(st.booleans()):
                prov["args"] = draw(st.lists(st.sampled_from([*ARGS, ""]), max_size=2))
            ran = draw(st.lists(st.sampled_from(test_keys), max_size=2)) if test_keys else []
            store.runs.append(
                TestRun(f".tracker/evidence/{n}.json", prov, {k: gate_hash(all_gates[k]) for k in ran}, FILES, recs)
            )
        elif kind == "signoff":
            manual = [k for k, g in all_gates.items() if isinstance(g, ManualGate)]
            if manual and draw(st.integers(0, 3)):  # mostly a gate of the plans, else anywhere in a phase
                key = draw(st.sampled_from(manual))
                text = all_gates[key].manual if draw(st.integers(0, 3)) else draw(st.sampled_from(TEXTS))  # type: ignore[union-attr]
            else:
                key, text = (
                    f"{draw(st.sampled_from(phase_keys))}#{draw(st.integers(1, 3))}",
                    draw(st.sampled_from(TEXTS)),
                )
            data = {"gate_key": key, "gate_hash": gate_hash(ManualGate(text)), "by": "b",
                    "why": "w", "time": when(second), "host": f"h{n}", "commit": f"{n:040d}", "files": FILES}  # fmt: skip
            store.signoffs.append((f".tracker/evidence/{n}.json", data))
        else:
            samples = st.lists(st.sampled_from([0.0, 1.0, 2.0, 4.0, 6.0, 9.0]), min_size=1, max_size=5).map(tuple)
            cases = []
            for metric in draw(st.lists(st.sampled_from(sorted(DIRECTION)), min_size=1, max_size=2, unique=True)):
                for impl in draw(st.lists(st.sampled_from(["x", "ref"]), min_size=1, max_size=2, unique=True)):
                    cases.append(ResultCase(metric, {"impl": impl}, "us", DIRECTION[metric], draw(samples)))
            time = datetime(2026, 11, 1, 10, 0, second, draw(st.integers(0, 2)), tzinfo=UTC)
            gpu = draw(st.sampled_from([None, "NVIDIA H200"]))
            results.append(
                ResultRun(
                    f"bench/results/{n}.json", "0" * 64, "b", time, f"g{n}", gpu, f"{n:040d}", False, {}, tuple(cases)
                )
            )
    store.signoffs.sort(key=lambda s: (s[1]["time"], s[0]))  # as the store reads them
    results.sort(key=lambda r: (r.time, r.path))  # as the bench evaluator lists them
    return store, results


@settings(deadline=None, max_examples=300, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_replay_is_the_naive_replay_and_ends_where_status_is(data: st.DataObject) -> None:
    plans = data.draw(plan_sets())
    store, results = data.draw(histories(plans))
    out = replay(plans, store, results, {})
    assert out == naive(plans, store, results)
    start = statuses_on(plans, Store(), (), {})
    ends = {k: ts[-1].status if ts else start[k].status for k, ts in out.items()}
    assert ends == final(plans, store, results)
    for key, ts in out.items():  # each transition starts where the one before it ended
        assert [t.previous for t in ts] == [start[key].status, *(t.status for t in ts)][: len(ts)]
    some = sorted(out)[:2]
    assert replay(plans, store, results, {}, only=some) == {k: out[k] for k in some}
