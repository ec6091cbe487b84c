"""The digest a report opens with (tracker.report.digest): what decides each phase, the order nearest to done first,
the figure's phrase for any numbers, and the move since the previous report from the result runs before the period."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.core.model import BenchGate, Phase, Plan, ResultCase, ResultRun, Status
from tracker.core.moves import Move
from tracker.core.timeline import Transition
from tracker.report.data import Period, PhaseReport, PlanReport, Report, Scope
from tracker.report.detail import BenchFigures, GateDetail, PhaseDetail
from tracker.report.digest import build_digest, figure


def figures(value: float, threshold: float, *, op: str = "≥", unit: str = "fraction", **kw: Any) -> BenchFigures:
    margin = (value - threshold) / abs(threshold) if threshold else None
    if op == "≤" and margin is not None:
        margin = -margin
    base: dict[str, Any] = dict(
        metric="verify_attn.floor_fraction",
        params={"ctx": 23000, "impl": "cuda"},
        baseline=None,
        stat="median",
        value=value,
        unit=unit,
        op=op,
        threshold=threshold,
        bound=None,
        confidence=None,
        margin=margin,
        samples=200,
        baseline_samples=None,
        direction="higher" if op == "≥" else "lower",
        run="bench/results/new.json",
        benchmark="verify",
    )
    base.update(kw)
    return BenchFigures(**base)


def gate(number: int, met: bool, bench: BenchFigures | None = None, reason: str = "") -> GateDetail:
    where = dict(bench.params) if bench is not None else {}
    return GateDetail(
        number=number,
        key=f"0001/P1#{number}",
        kind="bench" if bench is not None else "test",
        label=f"gate {number}",
        definition={"where": where} if bench is not None else {},
        line=1,
        met=met,
        failed=not met,
        reason=reason or ("met" if met else "2 failed"),
        source=None,
        stale="",
        bench=bench,
    )


def phase(pid: str, status: Status, gates: list[GateDetail], *, blocked_by: tuple[str, ...] = ()) -> PhaseReport:
    d = PhaseDetail(
        key=f"0001/{pid}",
        plan_id="0001",
        plan_title="Plan",
        plan_path="plans/0001.md",
        milestone="m",
        id=pid,
        title=f"Phase {pid}",
        line=1,
        status=status,
        note="",
        depends=tuple((b, "in-progress") for b in blocked_by),
        blocked_by=blocked_by,
        changed=(),
        paths=(),
        gates=tuple(gates),
        history=(),
    )
    return PhaseReport(d, (), None, (), (), 0, (), ())


def report(*phases: PhaseReport, period: Period | None = None) -> Report:
    plan = PlanReport("0001", "Plan", "plans/0001.md", "m", tuple(phases))
    return Report(Scope("milestone", "m"), period or Period("everything"), (plan,))


def test_the_worst_unmet_gate_decides_and_the_nearest_is_named() -> None:
    p = phase(
        "P7",
        Status.IN_PROGRESS,
        [gate(1, True), gate(2, False, figures(0.276, 0.5)), gate(3, False, figures(0.465, 0.5))],
    )
    line = build_digest(report(p), []).pending[0]
    assert line.met == 1 and line.total == 3
    assert line.deciding.startswith("2 of 3 gates unmet; worst, gate 2: floor_fraction 27.6% at ctx=23000 impl=cuda")
    assert "needs ≥ 50.0%: 22.4 points short" in line.deciding
    assert "nearest, gate 3: floor_fraction 46.5%" in line.deciding and "3.50 points short" in line.deciding


def test_phases_are_ordered_nearest_to_done_first_and_done_ones_listed_apart() -> None:
    near = phase("P2", Status.IN_PROGRESS, [gate(1, True), gate(2, False, figures(0.49, 0.5))])
    far = phase("P3", Status.IN_PROGRESS, [gate(1, False, figures(0.1, 0.5)), gate(2, False, figures(0.2, 0.5))])
    blocked = phase("P4", Status.BLOCKED, [gate(1, True), gate(2, False, figures(0.499, 0.5))], blocked_by=("0001/P3",))
    done = phase("P1", Status.DONE, [gate(1, True)])
    dg = build_digest(report(done, blocked, far, near), [])
    assert [x.key for x in dg.pending] == ["0001/P2", "0001/P3", "0001/P4"]  # blocked last, however close
    assert [x.key for x in dg.finished] == ["0001/P1"] and dg.done == 1 and dg.phases == 4
    assert dg.pending[2].deciding.startswith("blocked by 0001/P3; gate 2 unmet")
    assert (dg.met, dg.gates) == (3, 7)


def test_a_test_gate_is_decided_by_its_reason_and_counts_as_far() -> None:
    tests = phase("P2", Status.IN_PROGRESS, [gate(1, False, reason="3 failed, 9 passed")])
    bench = phase("P3", Status.IN_PROGRESS, [gate(1, False, figures(0.2, 0.5))])
    dg = build_digest(report(tests, bench), [])
    assert [x.key for x in dg.pending] == ["0001/P3", "0001/P2"]
    assert dg.pending[1].deciding == "gate 1 unmet; gate 1: 3 failed, 9 passed"


def test_lower_is_better_ratios_and_undecided_gates_read_right() -> None:
    slow = figures(120.0, 100.0, op="≤", unit="us", metric="verify_attn.time_us")
    assert figure(slow, {}).endswith("needs ≤ 100 us: 20.0 us short (20.0%)")
    hair = figures(100.004, 100.0, op="≤", unit="us", metric="verify_attn.time_us")
    assert figure(hair, {}).endswith("needs ≤ 100 us: 0.00400 us short (0.00400%)")  # a miss never reads 0.0%
    ratio = figures(1.23, 1.3, unit="×", metric="verify_attn.time_us", baseline={"impl": "flashinfer"})
    assert "time_us 1.23× vs impl=flashinfer at" in figure(ratio, {}) and "needs ≥ 1.30×" in figure(ratio, {})
    noisy = figures(0.301, 0.3, undecided=True)
    assert figure(noisy, {}).endswith("undecided (inside its noise)")
    by_bound = figures(0.51, 0.5, bound=0.49, confidence=0.95)
    assert figure(by_bound, {}).endswith("met by its value, not yet by its 95% bound")


def _run(path: str, when: str, value: float) -> ResultRun:
    case = ResultCase(
        metric="verify_attn.floor_fraction",
        params={"ctx": 23000, "impl": "cuda"},
        unit="fraction",
        direction="higher",
        samples=(value,) * 5,
    )
    t = datetime.fromisoformat(when).replace(tzinfo=UTC)
    return ResultRun(path, "0" * 64, "verify", t, "vm", None, "a" * 40, False, {}, (case,))


def test_the_move_since_the_previous_report_comes_from_the_newest_run_before_it() -> None:
    bench_gate = BenchGate(bench="verify_attn.floor_fraction", where={"ctx": 23000, "impl": "cuda"}, at_least=0.5)
    plan = Plan(
        id="0001", title="Plan", path="plans/0001.md", phases=(Phase(id="P1", title="Phase P1", gates=(bench_gate,)),)
    )
    p = phase("P1", Status.IN_PROGRESS, [gate(1, False, figures(0.276, 0.5))])
    period = Period("since-report", start="2026-12-04T00:00:00Z")
    runs = [_run("a.json", "2026-12-01T00:00:00", 0.20), _run("b.json", "2026-12-02T00:00:00", 0.25)]
    runs.append(_run("bench/results/new.json", "2026-12-05T00:00:00", 0.276))
    line = build_digest(report(p, period=period), [plan], runs).pending[0]
    assert line.since == "+2.60 points (was 25.0%)"
    everything = build_digest(report(p), [plan], runs).pending[0]
    assert everything.since == ""  # no previous report: no move to tell


def test_a_status_change_in_the_period_is_told_before_any_figure() -> None:
    t1 = Transition(
        "0001/P1", "2026-12-05T01:00:00Z", Status.DONE, Status.REGRESSED, "f.json", "result", "vm", None, (1,)
    )
    t2 = Transition(
        "0001/P1", "2026-12-05T02:00:00Z", Status.REGRESSED, Status.DONE, "g.json", "result", "vm", None, (1,)
    )
    p = phase("P1", Status.IN_PROGRESS, [gate(1, False, figures(0.2, 0.5))])
    moved = Move("0001/P1", Status.DONE, Status.REGRESSED, (t1,))
    since = build_digest(report(p._replace(move=moved)), []).pending[0].since
    assert (
        since == "done → regressed at 2026-12-05T01:00:00Z; in-progress now"
    )  # the status now, which no evidence moved
    back = Move("0001/P1", Status.DONE, Status.DONE, (t1, t2))
    since = build_digest(report(p._replace(move=back)), []).pending[0].since
    assert since == "flapped 1 time via regressed, ends done; in-progress now"


numbers = st.floats(allow_nan=True, allow_infinity=True) | st.floats(-1e300, 1e300) | st.integers(-(10**30), 10**30)


@settings(max_examples=300, deadline=None)
@given(
    value=numbers,
    threshold=numbers,
    op=st.sampled_from(["≥", "≤"]),
    unit=st.sampled_from(["fraction", "us", "×", "", "TB/s", "<b>x</b>"]),
    params=st.dictionaries(
        st.text(max_size=8), st.one_of(st.text(max_size=8), st.integers(), st.booleans()), max_size=4
    ),
)
def test_any_numbers_give_one_phrase_that_names_the_threshold(
    value: float, threshold: float, op: str, unit: str, params: dict[str, Any]
) -> None:
    f = figures(float(value), float(threshold), op=op, unit=unit, params=params)
    text = figure(f, {"where": params})
    assert "\n" not in text and "\r" not in text
    assert f"needs {op} " in text


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(Status)),
            st.lists(st.tuples(st.booleans(), st.none() | st.floats(0, 2)), min_size=1, max_size=5),
        ),
        max_size=8,
    )
)
def test_the_digest_accounts_for_every_phase_once_and_orders_what_is_left(spec: list[Any]) -> None:
    phases = []
    for i, (status, gates) in enumerate(spec):
        gs = [gate(n + 1, met, None if v is None else figures(v, 1.0)) for n, (met, v) in enumerate(gates)]
        phases.append(phase(f"P{i + 1}", status, gs, blocked_by=("0001/P0",) if status is Status.BLOCKED else ()))
    dg = build_digest(report(*phases), [])
    keys = [k for x in (*dg.pending, *dg.finished) for k in x.keys]
    assert sorted(keys) == sorted(p.detail.key for p in phases) and len(set(keys)) == len(keys)
    assert all(x.status is Status.DONE for x in dg.finished) and all(x.status is not Status.DONE for x in dg.pending)
    orders = [x.order for x in dg.pending]
    assert orders == sorted(orders) and all(not math.isnan(o[2]) for o in orders)


def test_stale_phases_for_the_same_files_are_told_once_and_others_alone() -> None:
    def stale(pid: str, changed: tuple[str, ...], met: bool = True) -> PhaseReport:
        p = phase(pid, Status.STALE, [gate(1, met)])
        return p._replace(detail=p.detail._replace(changed=changed))

    a, b, c = stale("P1", ("pyproject.toml",)), stale("P2", ("pyproject.toml",)), stale("P3", ("kernel/x.py",))
    unmet = stale("P4", ("pyproject.toml",), met=False)
    dg = build_digest(report(a, b, c, unmet), [])
    keys = [x.keys for x in dg.pending]
    assert ("0001/P1", "0001/P2") in keys and ("0001/P3",) in keys and ("0001/P4",) in keys
    assert dg.done == 0 and dg.phases == 4  # every phase still counted once


def test_a_value_that_is_not_a_finite_number_is_never_called_met_by_its_value() -> None:
    # A ratio past float range (candidate 1e-300 us against a 1e300 us baseline) is inf: the verdict never meets a
    # gate with it (value_clears), so the digest must not say the value meets the threshold.
    from tracker.report.detail import bench_figures

    def run(cand: list[float], base: list[float]) -> ResultRun:
        cases = tuple(
            ResultCase("attn.time_us", {"impl": impl}, "us", "lower", tuple(xs))
            for impl, xs in (("cuda", cand), ("ref", base))
        )
        return ResultRun(
            "r.json", "0" * 64, "verify", datetime(2026, 12, 1, tzinfo=UTC), "vm", None, "a" * 40, False, {}, cases
        )

    g = BenchGate(bench="attn.time_us", where={"impl": "cuda"}, baseline={"impl": "ref"}, at_least=1.3)
    for samples in (([1e-300], [1e300]), ([1e-300, 2e-300, 1e-300], [1e300] * 3)):
        f = bench_figures(g, [run(*samples)])
        assert f is not None and f.value == math.inf
        text = figure(f, g.definition)
        assert "met by its value" not in text and "not a finite number" in text
    for value in (math.nan, -math.inf):
        text = figure(figures(value, 0.5), {})
        assert "met by its value" not in text and "not a finite number" in text


def test_a_move_in_the_period_never_reads_as_a_status_the_phase_no_longer_has() -> None:
    # The fixture's 0002/P2: its evidence moved it blocked -> planned, then its dependency went stale (files changed,
    # no evidence, no transition) and it is blocked again. "blocked → planned" beside "blocked" read as planned now.
    t = Transition("0001/P2", "2026-11-05T10:00:00Z", Status.BLOCKED, Status.PLANNED, "r2.json", "test", "ci", None, ())
    p = phase("P2", Status.BLOCKED, [gate(1, False, reason="no evidence: never run")], blocked_by=("0001/P1",))
    moved = Move("0001/P2", Status.BLOCKED, Status.PLANNED, (t,))
    since = build_digest(report(p._replace(move=moved)), []).pending[0].since
    assert since == "blocked → planned at 2026-11-05T10:00:00Z; blocked now"
    done = Transition("0001/P2", "2026-11-05T11:00:00Z", Status.PLANNED, Status.DONE, "r3.json", "test", "ci", None, ())
    stale = phase("P2", Status.STALE, [gate(1, True)])
    two = Move("0001/P2", Status.BLOCKED, Status.DONE, (t, done))
    since = build_digest(report(stale._replace(move=two)), []).pending[0].since
    assert since == "blocked → done at 2026-11-05T11:00:00Z (via planned); stale now"
    back = Transition(
        "0001/P2", "2026-11-05T12:00:00Z", Status.PLANNED, Status.BLOCKED, "r4.json", "test", "ci", None, ()
    )
    regressed = phase("P2", Status.REGRESSED, [gate(1, False, figures(0.2, 0.5))])
    flap = Move("0001/P2", Status.BLOCKED, Status.BLOCKED, (t, back))
    assert build_digest(report(regressed._replace(move=flap)), []).pending[0].since == (
        "flapped 1 time via planned, ends blocked; regressed now"
    )


def test_a_phase_without_gates_is_never_the_nearest_to_done() -> None:
    # A phase without gates is never done (tracker.core.status); it sorted first, "nearest to done", deciding
    # "planned", ahead of a phase one gate from done.
    empty = phase("P1", Status.PLANNED, [])
    near = phase("P2", Status.IN_PROGRESS, [gate(1, True), gate(2, False, figures(0.49, 0.5))])
    far = phase("P3", Status.PLANNED, [gate(1, False, reason="no evidence: never run")])
    dg = build_digest(report(empty, near, far), [])
    assert [x.key for x in dg.pending] == ["0001/P2", "0001/P3", "0001/P1"]
    assert dg.pending[2].deciding == "no gates: a phase without gates is never done"
    blocked = phase("P4", Status.BLOCKED, [], blocked_by=("0001/P2",))
    line = build_digest(report(blocked._replace(detail=blocked.detail._replace(note="blocked by 0001/P2"))), [])
    assert line.pending[0].deciding == "blocked by 0001/P2; no gates: a phase without gates is never done"


def test_an_undecided_newest_run_does_not_hide_the_miss_that_stands() -> None:
    # The newest run (median 52.5%) straddles 50%; the run before it missed confidently (30%, upper bound 31%): that
    # miss stands (the gate is failed). The digest said only "52.5%, needs ≥ 50.0%: undecided (inside its noise)".
    from tracker.core.bench_verdict import evaluate_bench_gate
    from tracker.report.detail import bench_figures

    def run(path: str, day: int, xs: list[float]) -> ResultRun:
        case = ResultCase("k.frac", {"ctx": 1}, "fraction", "higher", tuple(xs))
        return ResultRun(
            path, "0" * 64, "verify", datetime(2026, 12, day, tzinfo=UTC), "vm", None, "a" * 40, False, {}, (case,)
        )

    g = BenchGate(bench="k.frac", where={"ctx": 1}, at_least=0.5)
    runs = [
        run("old.json", 1, [0.30, 0.31, 0.29, 0.30, 0.32, 0.28, 0.30, 0.31]),
        run("new.json", 2, [0.2, 0.8, 0.45, 0.6, 0.3, 0.7]),
    ]
    verdict = evaluate_bench_gate(g, runs)
    f = bench_figures(g, runs)
    assert f is not None and f.undecided and verdict.failed and not verdict.met
    detail = gate(1, False, f)._replace(failed=verdict.failed, definition=g.definition)
    line = build_digest(report(phase("P1", Status.REGRESSED, [detail])), []).pending[0]
    assert "undecided (inside its noise); the last run that decided missed it" in line.deciding
    undecided_only = gate(1, False, f)._replace(failed=False)
    assert (
        build_digest(report(phase("P1", Status.PLANNED, [undecided_only])), [])
        .pending[0]
        .deciding.endswith("undecided (inside its noise)")
    )


def test_since_a_ref_the_runs_before_it_are_those_its_tree_holds_not_those_older_than_its_commit() -> None:
    # Since REF, evidence files decide what is in the period (the period's changes: tracker.report.data.in_period);
    # REF's commit time is shown only. A result run measured before REF's commit but committed after it (a GPU box's
    # run committed later) is in the period: the figure moved from the 20% REF held to its 27.6%. Taken by time, it
    # was "before", and the digest said "unchanged".
    bench_gate = BenchGate(bench="verify_attn.floor_fraction", where={"ctx": 23000, "impl": "cuda"}, at_least=0.5)
    plan = Plan(
        id="0001", title="Plan", path="plans/0001.md", phases=(Phase(id="P1", title="Phase P1", gates=(bench_gate,)),)
    )
    p = phase("P1", Status.IN_PROGRESS, [gate(1, False, figures(0.276, 0.5))])
    period = Period("since-ref", ref="c3", ref_commit="c" * 40, start="2026-12-04T00:00:00Z")
    runs = [_run("a.json", "2026-12-01T00:00:00", 0.20), _run("bench/results/new.json", "2026-12-03T00:00:00", 0.276)]
    line = build_digest(report(p, period=period), [plan], runs, at_ref=frozenset({"a.json"})).pending[0]
    assert line.since == "+7.60 points (was 20.0%)"
    late = [_run("a.json", "2026-12-05T00:00:00", 0.20), _run("bench/results/new.json", "2026-12-06T00:00:00", 0.276)]
    line = build_digest(report(p, period=period), [plan], late, at_ref=frozenset({"a.json"})).pending[0]
    assert line.since == "+7.60 points (was 20.0%)"  # REF's run dated after REF's commit (a clock ahead): still REF's


def test_the_order_follows_the_figures_shown_not_a_noisy_bound() -> None:
    # Two phases, one gate each, both missed confidently: P1's median is 20% (samples spread 10%-45%: its upper
    # bound 45%), P2's 40% (tight). Sorted by the margin, which a missed gate measures from its far bound, P1 (30
    # points short) came first as the nearer to done, P2 (10 points short) after: the noisier, the nearer.
    from tracker.core.bench_verdict import evaluate_bench_gate
    from tracker.report.detail import bench_figures

    def run(path: str, xs: list[float]) -> ResultRun:
        case = ResultCase("k.frac", {"ctx": 1}, "fraction", "higher", tuple(xs))
        return ResultRun(
            path, "0" * 64, "verify", datetime(2026, 12, 1, tzinfo=UTC), "vm", None, "a" * 40, False, {}, (case,)
        )

    g = BenchGate(bench="k.frac", where={"ctx": 1}, at_least=0.5)
    phases = []
    for pid, xs in (
        ("P1", [0.1] * 6 + [0.2] + [0.45] * 6),
        ("P2", [0.40, 0.401, 0.399, 0.40, 0.402, 0.398, 0.40, 0.40]),
    ):
        runs = [run(f"{pid}.json", xs)]
        verdict, f = evaluate_bench_gate(g, runs), bench_figures(g, runs)
        assert f is not None and verdict.failed
        phases.append(phase(pid, Status.IN_PROGRESS, [gate(1, False, f)._replace(definition=g.definition)]))
    dg = build_digest(report(*phases), [])
    assert [x.key for x in dg.pending] == ["0001/P2", "0001/P1"]
    assert "10.0 points short" in dg.pending[0].deciding and "30.0 points short" in dg.pending[1].deciding
