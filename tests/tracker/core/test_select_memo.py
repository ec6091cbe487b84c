"""A bench gate's cases are picked once per run and selection (``bench_verdict._RUN_CASES``): whatever was picked
before, for whichever runs, gates and prefixes, every selection is the one the plain scan of every case gives, with
values compared by type (1, 1.0, True and "1" are four values), and a run never answers with another's cases."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.core import bench_verdict
from tracker.core.bench_verdict import _baseline_case, _select, matches
from tracker.core.model import BenchGate, ResultCase, ResultRun

METRICS = ("m.a", "m.b")
VALUES: tuple[Any, ...] = (1, 1.0, True, "1", 2, "x")
KEYS = ("impl", "ctx", "n")
T0 = datetime(2026, 12, 1, tzinfo=UTC)


def plain_select(gate: BenchGate, results: list[ResultRun]) -> list[tuple[str, list[ResultCase]]] | str:
    """The selection as the scan of every case picks it (the code before the memo), runs named by path."""
    found = [(r, c) for r in results for c in r.cases if c.metric == gate.bench and matches(c.params, gate.where)]
    if not found:
        return "none"
    if gate.baseline:
        compared = [(r, c) for r, c in found if _baseline_case(gate, r, c) is not None]
        found = compared or found
    by_run: dict[int, tuple[ResultRun, list[ResultCase]]] = {}
    for r, c in found:
        by_run.setdefault(id(r), (r, []))[1].append(c)
    ordered = sorted(by_run.values(), key=lambda rc: (rc[0].time, rc[0].path), reverse=True)
    return [(r.path, cs) for r, cs in ordered]


def picked(gate: BenchGate, results: list[ResultRun]) -> list[tuple[str, list[ResultCase]]] | str:
    got = _select(gate, results)
    return "none" if not isinstance(got, list) else [(r.path, cs) for r, cs in got]


params = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
cases = st.builds(lambda metric, p: ResultCase(metric, p, "us", "lower", (1.0, 2.0)), st.sampled_from(METRICS), params)
gates = st.builds(
    lambda metric, where, baseline: BenchGate(bench=metric, where=where, baseline=baseline or None, at_most=5.0),
    st.sampled_from(METRICS),
    params,
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=1),
)


def run(i: int, found: list[ResultCase]) -> ResultRun:
    return ResultRun(f"r{i}.json", f"{i:064x}", "b", T0 + timedelta(minutes=i), "h", None, None, None, {}, tuple(found))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(cases, max_size=6), min_size=1, max_size=5), st.lists(gates, min_size=1, max_size=4))
def test_every_selection_is_the_plain_scans_over_every_prefix(
    runs_cases: list[list[ResultCase]], gs: list[BenchGate]
) -> None:
    runs = [run(i, cs) for i, cs in enumerate(runs_cases)]
    for _ in range(2):  # cold, then from the memo
        for gate in gs:
            for k in range(1, len(runs) + 1):
                assert picked(gate, runs[:k]) == plain_select(gate, runs[:k])


def test_a_run_never_answers_with_the_cases_of_one_that_had_its_id() -> None:
    gate = BenchGate(bench="m.a", where={"impl": "cuda"}, at_most=5.0)
    for i in range(200):  # fresh runs, the memo cleared often: ids of freed runs come back
        if i % 7 == 0:
            bench_verdict._RUN_CASES.clear()
            bench_verdict._BY_METRIC.clear()
            gc.collect()
        mine = ResultCase("m.a", {"impl": "cuda", "n": i}, "us", "lower", (1.0,))
        other = ResultCase("m.a", {"impl": "triton"}, "us", "lower", (1.0,))
        r = run(i, [mine, other])
        assert picked(gate, [r]) == [(r.path, [mine])]
        del r


def test_the_memo_stays_bounded() -> None:
    gate = BenchGate(bench="m.a", where={}, at_most=5.0)
    for i in range(bench_verdict._RUN_CASES_MAX + 50):
        _select(gate, [run(i, [ResultCase("m.a", {}, "us", "lower", (1.0,))])])
    assert len(bench_verdict._RUN_CASES) <= bench_verdict._RUN_CASES_MAX
    assert len(bench_verdict._BY_METRIC) <= bench_verdict._BY_METRIC_MAX
