"""Bench gate evaluation over real result files: every unmet reason, orientation, bootstrap, verdict text."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resultfiles import case, result, write

from tracker.core.bench_verdict import evaluate, evaluate_bench_gate, fmt_num, fmt_params, matches
from tracker.core.model import BenchGate, ResultRun
from tracker.core.stats import bootstrap_bound, bootstrap_key, compute_stat
from tracker.store.result_files import load_result

T = "verify_attn.time_us"
WHERE: dict[str, Any] = {"impl": "cuda", "ctx": 91000, "heads": 8, "nodes": 64, "batch": 1}


def grid(cuda: list[float], triton: list[float]) -> list[dict[str, Any]]:
    """cuda/triton x (ctx, heads, nodes) variants at batch 1: the verdict names only what varies."""
    out = []
    for variant in ({"nodes": 16}, {"nodes": 64}, {"ctx": 5700}, {"heads": 64}):
        out.append(case(T, {**WHERE, **variant}, cuda))
        out.append(case(T, {**WHERE, "impl": "triton", **variant}, triton))
    return out


def load(tmp_path: Path, name: str, doc: dict[str, Any]) -> ResultRun:
    return load_result(write(tmp_path / name, doc))


def speedup_gate(**kw: Any) -> BenchGate:
    return BenchGate(
        **{"bench": T, "where": WHERE, "baseline": {"impl": "triton"}, "at_least": 1.8, "min_samples": 10, **kw}
    )


def test_speedup_met_text_explains_itself(tmp_path: Path) -> None:
    run = load(tmp_path, "a.json", result(grid([100.0] * 20, [231.0] * 20)))
    verdict = evaluate_bench_gate(speedup_gate(hardware="H200"), [run])
    assert verdict.met and not verdict.failed
    assert verdict.reason == "2.31× ≥ 1.80× (median of 20, ctx=91000 heads=8 nodes=64, NVIDIA H200, kernel@3f2a91c)"
    assert verdict.source is not None
    assert (verdict.source.file, verdict.source.machine) == (run.path, "gpu-box (NVIDIA H200)")
    assert verdict.source.commit == "3f2a91c" + "0" * 33 and verdict.source.time == "2026-11-29T11:02:03Z"


def test_absolute_threshold_text(tmp_path: Path) -> None:
    run = load(tmp_path, "a.json", result(grid([41.0] * 20, [99.0] * 20)))
    gate = BenchGate(bench=T, where=WHERE, at_most=50)
    assert (
        evaluate(gate, [run]).summary
        == "41.0 us ≤ 50.0 us (median of 20, impl=cuda ctx=91000 heads=8 nodes=64, NVIDIA H200, kernel@3f2a91c)"
    )
    missed = evaluate(BenchGate(bench=T, where=WHERE, at_most=40), [run])
    assert not missed.met and missed.summary.startswith("41.0 us > 40.0 us (")


def test_below_threshold_is_unmet_and_failed(tmp_path: Path) -> None:
    run = load(tmp_path, "a.json", result(grid([100.0] * 20, [152.0] * 20)))
    verdict = evaluate_bench_gate(speedup_gate(), [run])
    assert not verdict.met and verdict.failed
    assert verdict.reason.startswith("1.52× < 1.80× (median of 20,")


def test_too_few_samples(tmp_path: Path) -> None:
    run = load(tmp_path, "a.json", result(grid([100.0] * 7, [300.0] * 20)))
    verdict = evaluate_bench_gate(speedup_gate(), [run])
    too_few = "undecided: too few samples (7 < 10); no run decided it yet"
    assert (verdict.met, verdict.failed, verdict.undecided, verdict.reason) == (False, False, True, too_few)
    other = load(tmp_path, "b.json", result(grid([100.0] * 20, [300.0] * 7), time="2026-11-30T00:00:00Z", host="b"))
    assert evaluate(speedup_gate(), [run, other]).summary.startswith("undecided: too few baseline samples (7 < 10);")
    again = load(tmp_path, "c.json", result(grid([100.0] * 20, [300.0] * 7), time="2026-11-30T00:00:00Z"))
    pooled = evaluate(speedup_gate(), [run, again])  # the same code measured again here: 27 samples a side
    assert pooled.met and "pooled: 2 runs of the same code on gpu-box, 27 samples, confidence 98.75%" in pooled.summary


def test_wrong_hardware(tmp_path: Path) -> None:
    a100 = load(tmp_path, "a.json", result(grid([100.0] * 20, [300.0] * 20), gpu="NVIDIA A100-SXM4-80GB"))
    cpu = load(tmp_path, "b.json", result(grid([100.0] * 20, [300.0] * 20), gpu=None))
    verdict = evaluate_bench_gate(speedup_gate(hardware="H200"), [a100, cpu])
    assert not verdict.met and not verdict.failed
    assert verdict.reason == "results only from NVIDIA A100-SXM4-80GB, no GPU (gate wants H200)"
    assert evaluate(speedup_gate(hardware="a100"), [a100, cpu]).met  # substring, case-insensitive


def test_no_matching_case_and_type_exact_params(tmp_path: Path) -> None:
    run = load(tmp_path, "a.json", result(grid([100.0] * 20, [300.0] * 20)))
    gate = speedup_gate(where={**WHERE, "ctx": "91000"})
    assert evaluate(gate, [run]).summary == (
        'no case matches metric=verify_attn.time_us where impl=cuda ctx="91000" heads=8 nodes=64 batch=1 in 1 result file(s)'
        " (ctx is an integer in the results: write ctx = 91000)"
    )
    assert not evaluate(BenchGate(bench="other.metric", at_least=1), [run]).met
    assert evaluate(BenchGate(bench=T, at_least=1), []).summary == "no benchmark evidence"
    assert (
        not matches({"x": 1}, {"x": True}) and not matches({"x": 1.0}, {"x": 1}) and matches({"x": 1, "y": 2}, {"x": 1})
    )


def test_a_where_value_of_another_type_than_the_results_says_how_to_write_it(tmp_path: Path) -> None:
    # issue 24: where = { ctx = "1000" } against an integer parameter said only "no case matches"
    run = load(tmp_path, "a.json", result(grid([100.0] * 20, [300.0] * 20)))
    for key, wrong, hint in (
        ("heads", 8.0, "heads is an integer in the results: write heads = 8"),
        ("impl", True, None),  # nothing in the results reads as it: no hint
        ("batch", "1", "batch is an integer in the results: write batch = 1"),
    ):
        summary = evaluate(speedup_gate(where={**WHERE, key: wrong}), [run]).summary
        assert summary.startswith("no case matches ")
        assert summary.endswith(f" ({hint})") if hint else summary.endswith("result file(s)"), summary
    assert matches({"x": "1"}, {"x": "1"})


def test_newest_run_wins_even_when_older_passed(tmp_path: Path) -> None:
    old = load(tmp_path, "old.json", result(grid([100.0] * 20, [300.0] * 20), time="2026-11-28T00:00:00Z"))
    new = load(tmp_path, "new.json", result(grid([100.0] * 20, [120.0] * 20), time="2026-11-29T00:00:00+01:00"))
    verdict = evaluate_bench_gate(speedup_gate(), [new, old])
    assert not verdict.met and verdict.source is not None and verdict.source.file == new.path


def test_baseline_must_be_in_the_same_run(tmp_path: Path) -> None:
    only_cuda = [c for c in grid([100.0] * 20, [1.0]) if c["params"]["impl"] == "cuda"]
    new = load(tmp_path, "new.json", result(only_cuda, time="2026-11-29T12:00:00Z"))
    summary = evaluate(speedup_gate(), [new]).summary
    assert summary.startswith(
        "no baseline case impl=triton for impl=cuda ctx=91000 heads=8 nodes=64 batch=1 in the same run"
    )
    assert "new.json" in summary


def test_a_newer_run_without_the_baseline_neither_meets_nor_fails_a_ratio_gate(tmp_path: Path) -> None:
    # The newest run that measured both cases decides: a later cuda-only run (a peer comparison, say) did not
    # run the comparison, so it neither rescues nor spoils it, and a later run with both cases still wins.
    only_cuda = [c for c in grid([100.0] * 20, [1.0]) if c["params"]["impl"] == "cuda"]
    passed = load(tmp_path, "passed.json", result(grid([100.0] * 20, [300.0] * 20), time="2026-11-28T00:00:00Z"))
    failed = load(tmp_path, "failed.json", result(grid([100.0] * 20, [120.0] * 20), time="2026-11-28T06:00:00Z"))
    partial = load(tmp_path, "partial.json", result(only_cuda, time="2026-11-29T12:00:00Z"))
    met = evaluate(speedup_gate(), [passed, partial])
    assert met.met and met.source is not None and met.source.path == passed.path
    unmet = evaluate(speedup_gate(), [passed, failed, partial])
    assert not unmet.met and unmet.source is not None and unmet.source.path == failed.path
    assert unmet.summary.startswith("1.20× < 1.80× (median of 20,")


def test_ambiguous_where_is_unmet(tmp_path: Path) -> None:
    run = load(tmp_path, "a.json", result(grid([100.0] * 20, [300.0] * 20)))
    out = evaluate(BenchGate(bench=T, where={"impl": "cuda"}, at_most=1000), [run])
    assert not out.met and "is ambiguous: 4 cases" in out.summary


def test_higher_is_better_orientation(tmp_path: Path) -> None:
    f = "verify_attn.floor_fraction"
    cases = [case(f, {"impl": "cuda"}, [0.6] * 5, "1", "higher"), case(f, {"impl": "triton"}, [0.2] * 5, "1", "higher")]
    run = load(tmp_path, "a.json", result(cases))
    out = evaluate(BenchGate(bench=f, where={"impl": "cuda"}, baseline={"impl": "triton"}, at_least=2.9), [run])
    assert out.met and out.summary.startswith("3.00× ≥ 2.90×")


@pytest.mark.parametrize(("stat", "expected"), [("median", "3.00"), ("min", "1.00"), ("mean", "4.00"), ("p90", "7.60")])
def test_statistic_is_recomputed_from_samples(tmp_path: Path, stat: str, expected: str) -> None:
    run = load(tmp_path, "a.json", result([case(T, {"impl": "cuda"}, [1.0, 2.0, 3.0, 4.0, 10.0])]))
    out = evaluate(BenchGate(bench=T, where={"impl": "cuda"}, at_most=100, stat=stat), [run])
    assert (
        out.met
        and out.summary.startswith(f"{expected} us (95% upper bound ")
        and f" ≤ 100 us ({stat} of 5," in out.summary
    )


def test_confidence_guards_against_noise(tmp_path: Path) -> None:
    # Point speedup ~2.0 clears 1.8 either way; only the tight samples clear it at 95% confidence.
    tight = [100.0 + (i % 5) for i in range(20)]
    noisy = [30.0 + 15.0 * (i % 10) for i in range(20)]  # median 97.5: speedup 2.09, but wide
    base = [204.0] * 20
    tight_run = load(tmp_path, "t.json", result(grid(tight, base)))
    noisy_run = load(tmp_path, "n.json", result(grid(noisy, base)))
    gate = speedup_gate(confidence=0.95)
    met = evaluate(gate, [tight_run])
    assert met.met and "(95% lower bound " in met.summary
    assert evaluate(speedup_gate(), [noisy_run]).undecided  # 95% is the default
    unmet = evaluate(gate, [noisy_run])
    assert not unmet.met and unmet.summary == evaluate(gate, [noisy_run]).summary  # deterministic
    assert unmet.undecided and not unmet.failed
    assert unmet.summary.startswith("undecided: 2.09×, 95% bounds 1.60–2.72× straddle 1.80×; ~37 more samples")


def test_bootstrap_bounds_bracket_the_point_estimate() -> None:
    samples = [float(x) for x in range(1, 31)]
    point = compute_stat("median", samples)
    lower = bootstrap_bound("median", samples, 0.95, upper=False)
    upper = bootstrap_bound("median", samples, 0.95, upper=True)
    assert lower < point < upper
    assert bootstrap_bound("median", [5.0] * 10, 0.95, upper=False) == 5.0
    # Ratio bounds bracket the point ratio too, and orientation flips with the direction.
    base = [2 * x for x in samples]
    lo = bootstrap_bound("median", samples, 0.95, False, base, "lower")
    assert lo < 2.0 < bootstrap_bound("median", samples, 0.95, True, base, "lower")
    assert bootstrap_bound("median", samples, 0.95, True, base, "higher") < 1.0


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(min_value=1.0, max_value=1e4), min_size=3, max_size=15), st.floats(min_value=1.1, max_value=20)
)
def test_speeding_up_the_candidate_scales_the_ratio(
    tmp_path_factory: pytest.TempPathFactory, samples: list[float], k: float
) -> None:
    tmp = tmp_path_factory.mktemp("h")
    run = load(
        tmp,
        "a.json",
        result([case(T, {"impl": "cuda"}, [s / k for s in samples]), case(T, {"impl": "triton"}, samples)]),
    )
    gate = BenchGate(bench=T, where={"impl": "cuda"}, baseline={"impl": "triton"}, at_least=k * 0.999)
    assert evaluate(gate, [run], by_value=True).met
    higher = BenchGate(bench=T, where={"impl": "cuda"}, baseline={"impl": "triton"}, at_least=k * 1.01)
    assert not evaluate(higher, [run], by_value=True).met
    assert not evaluate(higher, [run]).met  # nor by its interval (met, undecided or failed: never met above k)


def test_formatting_helpers() -> None:
    assert [fmt_num(x) for x in (2.3104, 1.8, 41.0, 155.4, 0.5, 17041.0)] == [
        "2.31",
        "1.80",
        "41.0",
        "155",
        "0.500",
        "17041",
    ]
    assert (
        fmt_params({"impl": "cuda", "ctx": 91000, "flag": True, "s": "1.5", "t": "a b"})
        == 'impl=cuda ctx=91000 flag=true s="1.5" t="a b"'
    )


def test_bootstrap_bounds_are_taken_from_and_given_to_known() -> None:
    """A bound is a pure function of its samples: ``known`` (what the cache read) answers it, and gets each new one."""
    samples = [float(x) for x in range(1, 31)]
    known: dict[str, float] = {}
    bound = bootstrap_bound("mean", samples, 0.9, upper=False, known=known)
    key = bootstrap_key("mean", samples, 0.9, False, None, "lower")
    assert len(known) == 2  # both bounds come from one set of draws
    assert known[key] == bound == bootstrap_bound("mean", samples, 0.9, upper=False)
    known[key] = 123.5  # what a second process reads from the cache
    assert bootstrap_bound("mean", samples, 0.9, upper=False, known=known) == 123.5


@pytest.mark.parametrize(
    ("cuda", "triton", "reason"),
    [
        ([0.0] * 12, [30.0] * 12, "ratio undefined: a sample is 0.00 cycles (a ratio needs samples > 0)"),
        ([-5.0] * 12, [31.0] * 12, "ratio undefined: a sample is -5.00 cycles (a ratio needs samples > 0)"),
        ([30.0] * 12, [0.0] * 12, "ratio undefined: a baseline sample is 0.00 cycles (a ratio needs samples > 0)"),
    ],
)
@pytest.mark.parametrize("confidence", [None, 0.95])
def test_a_ratio_of_non_positive_samples_never_meets_a_gate(
    tmp_path: Path, cuda: list[float], triton: list[float], reason: str, confidence: float | None
) -> None:
    # Times are rejected by the schema when not positive; any other lower-is-better unit reaches the gate.
    m = "verify_attn.cycles"
    run = load(
        tmp_path,
        "a.json",
        result([case(m, {"impl": "cuda"}, cuda, "cycles"), case(m, {"impl": "triton"}, triton, "cycles")]),
    )
    for bound in ({"at_least": 2}, {"at_most": 5}):
        gate = BenchGate(bench=m, where={"impl": "cuda"}, baseline={"impl": "triton"}, confidence=confidence, **bound)
        verdict = evaluate_bench_gate(gate, [run])
        assert (verdict.met, verdict.failed, verdict.reason) == (False, False, reason)


def test_oriented_ratio_is_never_infinite() -> None:
    from tracker.core.stats import oriented_ratio

    assert math.isnan(oriented_ratio(0.0, 30.0, "lower")) and math.isnan(oriented_ratio(30.0, -1.0, "higher"))
    assert oriented_ratio(10.0, 30.0, "lower") == 3.0


def test_gate_label_names_the_baseline_of_a_ratio_gate() -> None:
    from tracker.report.render import gate_label

    assert gate_label(speedup_gate()) == (
        "bench `verify_attn.time_us` median ≥ 1.8× vs impl=triton (impl=cuda ctx=91000 heads=8 nodes=64 batch=1)"
    )
    assert (
        gate_label(BenchGate(bench=T, where={"impl": "cuda"}, at_most=450.0))
        == "bench `verify_attn.time_us` median ≤ 450.0 (impl=cuda)"
    )


@pytest.mark.parametrize("stat", ["median", "min", "p90"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 10])
def test_order_statistic_draws_follow_the_resampling_law(stat: str, n: int) -> None:
    """The bootstrap draws an order statistic of a resample directly (two Beta draws instead of n draws and a sort):
    each value it can take comes with the probability that resampling by hand gives it (exact, by enumeration)."""
    import itertools
    import random
    from collections import Counter

    from tracker.core.stats import _resampler

    data = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0][:n]
    draws = 40_000
    exact: Counter[float] = Counter()
    if n <= 7:
        for picks in itertools.product(range(n), repeat=n):
            exact[round(compute_stat(stat, [data[i] for i in picks]), 9)] += 1
        total = n**n
    else:  # too many resamples to enumerate: a large reference sample of them (its own error counts too)
        rng = random.Random(7)
        total = 400_000
        for _ in range(total):
            exact[round(compute_stat(stat, rng.choices(data, k=n)), 9)] += 1
    draw = _resampler(stat, data, random.Random(11))
    seen = Counter(round(draw(), 9) for _ in range(draws))
    if n <= 7:
        assert set(seen) <= set(exact)
    for value in set(exact) | set(seen):
        p = exact[value] / total
        sd = math.sqrt(max(p, 1e-6) * (1 - p) * (1 / draws + (0 if n <= 7 else 1 / total)))
        assert abs(seen[value] / draws - p) <= 5 * sd + 1e-9, (value, p, seen[value] / draws)


# --- Pooled runs: the same code measured again on the same machine (issue 31, item 2) ---------------------------

STRADDLE = [0.95, 1.02, 1.10, 0.97, 1.04, 0.99, 1.06]  # median 1.02 on an at_most 1.05 gate: undecided alone


def _series_runs(tmp_path: Path, samples: list[list[float]], **kw: Any) -> list[ResultRun]:
    return [
        load(tmp_path, f"r{i}.json", result([case(T, WHERE, s)], time=f"2026-11-29T1{i}:00:00Z", **kw))
        for i, s in enumerate(samples)
    ]


def _copies(samples: list[float], n: int) -> list[list[float]]:
    """``n`` runs of ``samples``, each with its first sample nudged by a millionth more than the last (runs that
    repeat the same numbers end a series: a copy is not new evidence)."""
    return [[samples[0] + i * 1e-6, *samples[1:]] for i in range(n)]


def test_a_series_of_undecided_runs_of_the_same_code_decides_pooled(tmp_path: Path) -> None:
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    runs = _series_runs(tmp_path, _copies(STRADDLE, 6))
    assert all(evaluate(gate, runs[:k]).undecided for k in range(1, 6))
    verdict = evaluate(gate, runs)  # 42 samples, median 1.02, judged at 1 - 5% / 36
    assert verdict.met and not verdict.undecided
    assert "pooled: 6 runs of the same code on gpu-box, 42 samples, confidence 99.86%" in verdict.summary
    assert "99.86% upper bound" in verdict.summary
    assert verdict.source is not None and verdict.source.path == runs[-1].path


def test_a_pool_is_judged_at_the_confidence_spent_over_its_looks(tmp_path: Path) -> None:
    """A pool of L runs is judged at 1 - 5% / L²: two runs at 98.75%, where the pool stays undecided and says so
    (its interval and the samples it needs), the newest run never judged alone at 95%."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    two = evaluate(gate, _series_runs(tmp_path, _copies(STRADDLE, 2)))
    assert two.undecided and two.summary.startswith("undecided: 1.02 us, 98.75% bounds ")
    assert two.summary.endswith(
        "pooled: 2 runs of the same code on gpu-box, 14 samples, confidence 98.75%; no run decided it yet"
    )


@pytest.mark.parametrize(
    "change",
    [
        {"files": {"kernel/csrc/verify_attention.cuh": b"// other code\n"}},
        {"host": "other-box"},
        {"gpu": "NVIDIA A100-SXM4-80GB"},
    ],
)
def test_a_run_of_other_code_or_another_machine_is_never_pooled(tmp_path: Path, change: dict[str, Any]) -> None:
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    runs = [*_series_runs(tmp_path / "a", _copies(STRADDLE, 3), **change)]
    (tmp_path / "b").mkdir()
    newest = load(tmp_path / "b", "new.json", result([case(T, WHERE, STRADDLE)], time="2026-11-30T00:00:00Z"))
    verdict = evaluate(gate, [*runs, newest])
    assert verdict.undecided and "pooled" not in verdict.summary


@pytest.mark.parametrize("key", ["driver", "cuda", "torch", "triton", "python", "command"])
def test_a_run_of_another_setup_is_never_pooled(tmp_path: Path, key: str) -> None:
    """Round 17, B1: an upgrade (driver, CUDA, torch, triton, Python) or another command measures something else:
    its samples never join the older runs' pool."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    runs = _series_runs(tmp_path, _copies(STRADDLE, 6))
    assert evaluate(gate, runs).met
    doc = result([case(T, WHERE, STRADDLE[::-1])], time="2026-11-30T00:00:00Z")
    doc["provenance"][key] = "another"
    newest = load(tmp_path, "new.json", doc)
    verdict = evaluate(gate, [*runs[:5], newest])
    assert verdict.undecided and "pooled" not in verdict.summary.split("; the last")[0]


def test_a_clear_miss_of_the_same_setup_is_pooled_not_judged_alone(tmp_path: Path) -> None:
    """Round 17, B1's second half, withdrawn: judging the newest run alone at the pool's confidence raised false
    regressions from 36 to 119 per 1000 (bench/plan_tracker/verdict_noise.py, 5 samples a run). A slow run of the same code and
    setup joins its series: the pool decides."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    slow = [1.22, 1.20, 1.21, 1.23, 1.19, 1.22, 1.21]
    runs = _series_runs(tmp_path, [*_copies(STRADDLE, 5), slow])
    verdict = evaluate(gate, runs)
    assert "pooled: 6 runs of the same code on gpu-box, 42 samples, confidence 99.86%" in verdict.summary
    assert verdict.confidence == pytest.approx(1 - 0.05 / 36)


def test_runs_that_repeat_the_same_samples_are_not_new_evidence(tmp_path: Path) -> None:
    """Round 17, B2: a deterministic benchmark (or a copied result file) gives the same samples every run; pooled,
    six copies of one undecided run met the gate. The first repeat ends the series, in any order of the samples."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    runs = _series_runs(tmp_path, [STRADDLE, STRADDLE[::-1]] * 3)
    verdict = evaluate(gate, runs)
    assert verdict.undecided and "pooled" not in verdict.summary and "no run decided it yet" in verdict.summary


def test_a_run_that_decided_alone_ends_the_pool(tmp_path: Path) -> None:
    """A decided older run stands for itself: the pool behind it is not reached, and it stands when the pool of the
    undecided runs after it cannot decide."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    runs = _series_runs(tmp_path, [[1.5] * 7, STRADDLE])
    verdict = evaluate(gate, runs)
    assert verdict.undecided and "the last decided run stands, missed by" in verdict.summary
    assert "pooled" not in verdict.summary


def test_a_pool_of_a_clear_miss_fails_the_gate(tmp_path: Path) -> None:
    slow = [1.03, 1.10, 1.16, 1.05, 1.12, 1.08, 1.20]  # median 1.10 against 1.05: undecided alone on 7 samples?
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    runs = _series_runs(tmp_path, _copies(slow, 6))
    verdict = evaluate_bench_gate(gate, runs)
    assert verdict.failed and not verdict.met and "pooled:" in verdict.reason


def test_the_cheap_may_meet_filter_of_ever_met_sees_a_pool(tmp_path: Path) -> None:
    """ever_met bootstraps only the prefixes whose newest run may meet: a run whose own value misses may still meet
    pooled with its series, so the filter lets it through (or a regression after a met pool goes unseen)."""
    from tracker.core.bench_verdict import newest_may_meet

    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    near = [1.04, 1.06, 1.055, 1.0, 1.07, 1.03, 1.065]  # median 1.055: misses by its value alone
    assert not newest_may_meet(gate, _series_runs(tmp_path / "a", [near]))
    (tmp_path / "b").mkdir()
    assert newest_may_meet(gate, _series_runs(tmp_path / "b", [*_copies(STRADDLE, 5), near]))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([0.9, 0.97, 1.0, 1.02, 1.04, 1.05, 1.06, 1.1, 1.3]), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.booleans(), min_size=5, max_size=5),
)
def test_a_met_verdict_always_passes_the_cheap_filter(series: list[list[float]], other_code: list[bool]) -> None:
    """Whatever the runs (pooled or not: a run of other code breaks the series), evaluate met => newest_may_meet."""
    import datetime

    from tracker.core.bench_verdict import newest_may_meet
    from tracker.core.model import ResultCase

    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    when = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
    runs = [
        ResultRun(f"r{i}.json", "0" * 64, "b", when + datetime.timedelta(minutes=i), "h", None, None, False,
                  {"k": "1" if other_code[i] else "0"}, (ResultCase(T, WHERE, "us", "lower", tuple(s)),))
        for i, s in enumerate(series)
    ]  # fmt: skip
    for k in range(1, len(runs) + 1):
        if evaluate(gate, runs[:k], {}).met:
            assert newest_may_meet(gate, runs[:k])


def test_a_pool_that_decided_stands_when_a_longer_pool_cannot(tmp_path: Path) -> None:
    """Six runs pooled decided (met); a seventh of the same code makes a pool of seven, judged tighter, that may
    not decide: the six-run pool's verdict stands (a done phase is never undone by one more straddling run)."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    near = [1.04, 1.06, 1.055, 1.0, 1.07, 1.03, 1.065]
    runs = _series_runs(tmp_path, [*_copies(STRADDLE, 6), near])
    assert evaluate(gate, runs[:6]).met
    verdict = evaluate_bench_gate(gate, runs)
    assert verdict.undecided and verdict.met and not verdict.failed
    assert "pooled: 7 runs" in verdict.reason and "the last decided run stands, met by" in verdict.reason
    assert "pooled: 6 runs of the same code on gpu-box, 42 samples" in verdict.reason
    assert verdict.source is not None and verdict.source.file == runs[5].path


MET = [0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96]
CLEAR_MISS = [1.00, 1.20, 1.21, 1.22, 1.23, 1.24, 1.25]  # fails alone at 95%; its fast sample keeps a pool undecided


@pytest.mark.parametrize(
    "older",
    [
        [MET, STRADDLE],  # a met run, then one straddling run
        _copies(STRADDLE, 6),  # six runs that pooled met
    ],
)
@pytest.mark.parametrize("miss", [CLEAR_MISS, [1.20, 1.21, 1.22, 1.23, 1.24, 1.25, 1.26]])
def test_an_older_met_never_stands_over_a_newer_run_that_misses_alone(
    tmp_path: Path, older: list[list[float]], miss: list[float]
) -> None:
    """Round 18, B1: a run that misses clearly on its own joins the straddling run before it in an undecided pool;
    the older met stood, and the phase was done over a 20% regression. Now no verdict stands: unmet, not failed."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    runs = _series_runs(tmp_path, [*older, miss])
    assert evaluate(gate, runs[:-1]).met or evaluate(gate, runs[:-1]).decided_by is not None
    verdict = evaluate_bench_gate(gate, runs)
    assert not verdict.met and not verdict.failed and verdict.undecided
    assert f"no decided verdict stands: {runs[-1].path} alone missed it: " in verdict.reason
    assert "95% lower bound" in verdict.reason


def test_an_older_miss_never_stands_over_a_newer_run_that_meets_alone(tmp_path: Path) -> None:
    """The mirror: a clear miss, a straddling run, then a run that meets alone but pools undecided: no regression
    stands over it."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05)
    above = [1.00, 1.07, 1.15, 1.02, 1.09, 1.04, 1.11]  # median 1.07: undecided alone
    runs = _series_runs(tmp_path, [[1.5] * 6 + [1.51], above, [0.95, 0.96, 0.97, 0.98, 0.99, 1.0, 1.01]])
    verdict = evaluate_bench_gate(gate, runs)
    assert not verdict.met and not verdict.failed
    assert "alone met it" in verdict.reason


def test_a_pool_never_meets_over_its_newest_run_that_misses_alone(tmp_path: Path) -> None:
    """Round 19, L4: seven runs of the same code, each undecided alone (a wide spread, mean 0.86), then a run that
    misses clearly on its own (mean 1.33, 95% lower bound 1.31): the pool of eight met, and the phase was done over
    the miss. Now the pool is undecided: unmet, not failed."""
    gate = BenchGate(bench=T, where=WHERE, at_most=1.05, stat="mean")
    wide = [0.41, 0.56, 0.71, 0.86, 1.01, 1.16, 1.31]
    slow = [1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36]
    runs = _series_runs(tmp_path, [*_copies(wide, 7), slow])
    verdict = evaluate_bench_gate(gate, runs)
    assert not verdict.met and not verdict.failed and verdict.undecided, verdict.reason
    assert f"but {runs[-1].path} alone missed it: " in verdict.reason


def _in(tmp_path: Path, name: str, unit: str, samples: list[float], hour: int) -> ResultRun:
    doc = result([case(T, WHERE, samples, unit=unit)], time=f"2026-11-29T1{hour}:00:00Z")
    doc["provenance"]["command"] = f"bench {name}"  # two benchmarks: never one series
    return load(tmp_path, name, doc)


def test_a_threshold_is_never_read_in_another_unit_than_its_results(tmp_path: Path) -> None:
    """Round 20, N2: a gate's threshold had no unit. 61 us failed `at_most = 50.0`; the same 61 us written as 0.061 ms
    met it ("0.061 ms <= 50.0 ms"), and a regression could hide the same way. Without `unit`, results in more than one
    unit decide nothing; with it, times are converted, and another unit is unmet."""
    us = _in(tmp_path, "a.json", "us", [60.0, 61.0, 62.0, 60.0, 61.0], 1)
    ms = _in(tmp_path, "b.json", "ms", [0.060, 0.061, 0.062, 0.060, 0.061], 2)
    plain = BenchGate(bench=T, where=WHERE, at_most=50.0)
    assert evaluate_bench_gate(plain, [us]).failed
    verdict = evaluate_bench_gate(plain, [us, ms])
    assert not verdict.met and not verdict.failed and verdict.undecided  # named by `tracker check` (round 21, 8)
    assert verdict.reason == (
        f'its results are in 2 units, ms ({ms.path}), us ({us.path}): state the threshold\'s unit in the gate (unit = "ms"; '
        "times in ns, us, ms and s are converted to it)"
    )
    in_us = BenchGate(bench=T, where=WHERE, at_most=50.0, unit="us")
    verdict = evaluate_bench_gate(in_us, [us, ms])
    assert verdict.failed and verdict.reason.startswith("61.0 us (95% lower bound 60.0 us) > 50.0 us"), verdict.reason
    fast = _in(tmp_path, "c.json", "ms", [0.040, 0.041, 0.042, 0.040, 0.041], 3)
    assert evaluate_bench_gate(in_us, [us, ms, fast]).met
    assert evaluate_bench_gate(BenchGate(bench=T, where=WHERE, at_most=0.05, unit="ms"), [us, fast]).met
    other = _in(tmp_path, "d.json", "x", [0.040] * 5, 4)
    said = evaluate_bench_gate(in_us, [us, other])
    assert not said.met and said.reason == f"{other.path} measured it in x, the gate's unit is us"
    huge = _in(tmp_path, "e.json", "s", [1e300] * 5, 5)
    assert not evaluate_bench_gate(BenchGate(bench=T, where=WHERE, at_most=1.0, unit="ns"), [huge]).met


def test_a_plan_gate_may_state_its_unit() -> None:
    from tracker.plans.parse import parse_plan

    text = (
        '# P\n\n```plan\nid = "0001"\ntitle = "t"\n```\n\n```phase\nid = "P1"\ntitle = "p"\n\n[[gate]]\n'
        'bench = "m"\nat_most = 1.0\nunit = "ms"\n```\n'
    )
    plan, problems = parse_plan("plans/0001-p.md", text)
    assert plan is not None and problems == []
    assert plan.phases[0].gates[0].unit == "ms"
    assert plan.phases[0].gates[0].definition["unit"] == "ms"


def test_hardware_is_named_by_whole_words() -> None:
    """Round 20, N5: `hardware = "H200"` was a substring, and a result from an NVIDIA GH200 480GB (another product)
    met a gate meant for the H200."""
    from tracker.core.bench_verdict import on_hardware

    assert on_hardware("H200", "NVIDIA H200") and on_hardware("h200", "NVIDIA H200 NVL")
    assert on_hardware("A100", "NVIDIA A100-SXM4-80GB") and on_hardware("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell")
    assert not on_hardware("H200", "NVIDIA GH200 480GB") and not on_hardware("H200", None)
    assert not on_hardware("A10", "NVIDIA A100-SXM4-80GB")


def _huge_case(metric: str, samples: list[float], unit: str = "us") -> dict[str, Any]:
    s = sorted(samples)
    n = len(s)
    pos = 0.9 * (n - 1)
    lo, frac = math.floor(pos), 0.9 * (n - 1) - math.floor(pos)
    p90 = s[lo] if frac == 0 else s[lo] * (1 - frac) + s[min(lo + 1, n - 1)] * frac
    median = s[n // 2] if n % 2 else s[n // 2 - 1] / 2 + s[n // 2] / 2
    stats = {"n": n, "median": median, "min": s[0], "mean": math.fsum(x / n for x in s), "p90": p90}
    return {
        "metric": metric,
        "params": {"k": 1},
        "unit": unit,
        "direction": "lower",
        "samples": samples,
        "stats": stats,
    }


@pytest.mark.parametrize(
    "samples", [[1.7e308, 1.7e308, 1.6e308], [1.7e308, 1.79e308], [-1.7e308, 1.7e308, 1.0, 1.7e308]]
)
@pytest.mark.parametrize("stat", ["mean", "median", "p90", "min"])
def test_huge_finite_samples_are_valid_and_evaluate(tmp_path: Path, samples: list[float], stat: str) -> None:
    from tracker.core.bench_verdict import evaluate
    from tracker.core.model import BenchGate
    from tracker.core.stats import compute_stat
    from tracker.store.result_files import load_result

    unit = "us" if min(samples) > 0 else "x"
    run = load_result(write(tmp_path / "r.json", result([_huge_case("m", samples, unit)])))
    assert math.isfinite(compute_stat(stat, run.cases[0].samples))
    for confidence in (None, 0.9):
        outcome = evaluate(BenchGate(bench="m", where={"k": 1}, at_most=1e308, stat=stat, confidence=confidence), [run])
        assert outcome.summary and outcome.value is not None and math.isfinite(outcome.value)


@pytest.mark.parametrize("bound", ["at_most", "at_least"])
def test_a_value_exactly_on_the_threshold_is_undecided_unless_the_samples_never_vary(
    tmp_path: Path, bound: str
) -> None:
    """Timings quantized by a timer's tick tie at the median: the bootstrap interval of many such samples collapses
    onto the median (or falls on the near side of a median that averages two ticks), and a threshold set right on
    the median was met at +0.0% (tests/tracker/e2e/test_foreign_bench.py, flaky). A value on the threshold from
    samples that vary is inside the noise; from samples that never vary (a count, a size) it decides."""
    ticks = [1.0] * 30 + [2.0] * 40 + [3.0] * 30  # median 2.0, ties at it
    noisy = load(tmp_path, "a.json", result([case(T, WHERE, ticks)]))
    gate = BenchGate(bench=T, where=WHERE, **{bound: 2.0})
    outcome = evaluate(gate, [noisy])
    assert outcome.undecided and not outcome.met, outcome.summary
    steady = load(tmp_path, "b.json", result([case(T, WHERE, [2.0] * 100)]))
    assert evaluate(gate, [steady]).met
    assert evaluate(
        BenchGate(bench=T, where=WHERE, **{bound: 2.0 + (0.5 if bound == "at_most" else -0.5)}), [noisy]
    ).met
