"""tracker.store.bench_evaluator's regression question, ``ever_met``: the same answer as evaluating the gate on every prefix
of the results in time order, at the cost of the runs that measured the gate's case only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.core.bench_verdict import evaluate
from tracker.core.model import BenchGate, ResultCase, ResultRun
from tracker.store.bench_evaluator import ever_met

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def run(i: int, metric: str, params: dict[str, Any], samples: list[float], minutes: int | None = None) -> ResultRun:
    case = ResultCase(metric, params, "us", "lower", tuple(samples))
    when = T0 + timedelta(minutes=i if minutes is None else minutes)
    return ResultRun(f"bench/results/r{i:03d}.json", "0" * 64, "b", when, "vm", "H200", None, None, {}, (case,))


class CountingBounds(dict[str, float]):
    """A real bounds mapping that counts its lookups: one per evaluation that reaches the bootstrap."""

    lookups = 0

    def get(self, key: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)


def test_ever_met_evaluates_only_the_runs_that_measured_the_case() -> None:
    """Issue 24 (a cold ``status`` took 7 s, 10 of 18 profiled in ever_met): each prefix of the 64 result files
    was evaluated, bootstrap included, though 62 of them measure other metrics and cannot change the answer."""
    gate = BenchGate(bench="m", where={"impl": "cuda"}, at_most=50, confidence=0.9)
    slow = [60.0 + i % 5 for i in range(20)]
    runs = [run(0, "m", {"impl": "cuda"}, slow)]
    runs += [run(i, "other", {"impl": "cuda"}, [1.0] * 20) for i in range(1, 63)]
    runs += [run(63, "m", {"impl": "cuda"}, [x + 1 for x in slow])]
    bounds = CountingBounds()
    assert ever_met(gate, runs, bounds) is False
    assert bounds.lookups <= 4  # one evaluation (its two bounds) per run of the case (64 before)


CASES = st.builds(
    lambda i, metric, impl, samples, minutes: run(i, metric, {"impl": impl}, samples, minutes),
    st.integers(0, 999),
    st.sampled_from(["m", "other"]),
    st.sampled_from(["cuda", "triton"]),
    st.lists(st.floats(1, 100), min_size=1, max_size=4),
    st.integers(0, 5),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(CASES, max_size=8), st.sampled_from([None, {"impl": "triton"}]), st.floats(1, 100))
def test_ever_met_is_the_gate_met_on_some_prefix(
    runs: list[ResultRun], baseline: dict[str, Any] | None, threshold: float
) -> None:
    gate = BenchGate(bench="m", where={"impl": "cuda"}, at_most=threshold, baseline=baseline, hardware="H200")
    ordered = sorted(runs, key=lambda r: (r.time, r.path))
    naive = any(evaluate(gate, ordered[: i + 1]).met for i in range(len(ordered)))
    assert ever_met(gate, runs) is naive


def test_runs_whose_value_misses_are_never_bootstrapped() -> None:
    """A cold ``status`` of the bundled plans took 42 s, 125 of 146 profiled in ever_met's bootstraps: every run of
    a gate that never met was bootstrapped, though a run whose value misses the threshold cannot be met."""
    gate = BenchGate(bench="m", where={"impl": "cuda"}, at_most=50, confidence=0.9)
    runs = [run(i, "m", {"impl": "cuda"}, [60.0 + (i + j) % 5 for j in range(20)]) for i in range(30)]
    bounds = CountingBounds()
    assert ever_met(gate, runs, bounds) is False
    assert bounds.lookups == 0
    runs.append(run(30, "m", {"impl": "cuda"}, [40.0 + j % 5 for j in range(20)]))
    assert ever_met(gate, runs, bounds) is True
    assert bounds.lookups == 2  # the two bounds of the one run whose value clears


@settings(max_examples=300, deadline=None)
@given(
    st.lists(CASES, max_size=8),
    st.sampled_from(["median", "min", "mean", "p90"]),
    st.booleans(),
    st.floats(1, 100),
    st.sampled_from([None, 0.8, 0.95]),
)
def test_ever_met_skips_only_what_cannot_meet(
    runs: list[ResultRun], stat: str, at_least: bool, threshold: float, confidence: float | None
) -> None:
    """The shortcut answers as every prefix evaluated in full does, for every statistic, side and confidence."""
    side = {"at_least": threshold} if at_least else {"at_most": threshold}
    gate = BenchGate(bench="m", where={"impl": "cuda"}, stat=stat, confidence=confidence, **side)  # type: ignore[arg-type]
    ordered = sorted(runs, key=lambda r: (r.time, r.path))
    naive = any(evaluate(gate, ordered[: i + 1]).met for i in range(len(ordered)))
    assert ever_met(gate, runs) is naive
