"""Statistics of bench samples (tracker/core/stats.py): huge and overflowing samples, the bootstrap's bounds."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resultfiles import result

from tracker.core.model import BenchGate


def test_the_mean_of_samples_whose_sum_overflows() -> None:
    from tracker.core.stats import compute_stat, interpolate

    assert compute_stat("mean", [1.7e308, 1.7e308]) == 1.7e308
    assert compute_stat("median", [1.7e308, 1.7e308]) == 1.7e308
    assert compute_stat("p90", [-1.7e308, 1.7e308]) == pytest.approx(0.8 * 1.7e308)
    assert interpolate(-1.7e308, 1.7e308, 0.0) == -1.7e308 and interpolate(1.0, 3.0, 0.5) == 2.0


def test_the_bootstrap_over_200k_samples_is_bounded_and_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted, not timed: the values the bootstrap's resamples draw. 200k samples a side cost what 2,000 do
    # (2 x 2,000 resamples of a 2,000-sample subsample: 8M draws, ~3 s); resampling all of them was 800M (~5 min).
    import random

    from tracker.core import stats

    rng = random.Random(7)
    cand = [rng.gauss(10, 1) for _ in range(200_000)]
    base = [rng.gauss(20, 1) for _ in range(200_000)]
    budget, drawn = 2 * stats.RESAMPLES * 2_000, [0]
    choices = random.Random.choices

    def counting(self: random.Random, population: Any, *args: Any, k: int = 1, **kwargs: Any) -> list[Any]:
        drawn[0] += k
        assert drawn[0] <= budget, f"over {budget} values drawn: the bootstrap resamples all the samples"
        return choices(self, population, *args, k=k, **kwargs)

    monkeypatch.setattr(random.Random, "choices", counting)
    bound = stats.bootstrap_bound("mean", cand, 0.95, False, base, "lower")
    assert 0 < drawn[0] <= budget, drawn  # the mean's resamples are drawn by choices() (0 would prove nothing)
    monkeypatch.undo()
    assert stats.bootstrap_bound("mean", cand, 0.95, False, base, "lower") == bound
    assert 1.9 < bound < 2.0  # the subsample's bound, a little wider than all samples' (~1.998)

    # An order statistic draws its resample's value directly: two Beta draws per resample and side, no choices().
    betas, beta = [0], random.Random.betavariate

    def counted_beta(self: random.Random, alpha: float, b: float) -> float:
        betas[0] += 1
        return beta(self, alpha, b)

    monkeypatch.setattr(random.Random, "betavariate", counted_beta)
    monkeypatch.setattr(random.Random, "choices", counting)
    drawn[0] = budget  # any choices() call now fails
    median = stats.bootstrap_bound("median", cand, 0.95, False, base, "lower")
    assert 0 < betas[0] <= 2 * 2 * stats.RESAMPLES, betas
    monkeypatch.undo()
    assert stats.bootstrap_bound("median", cand, 0.95, False, base, "lower") == median
    assert 1.9 < median < 2.0


def test_small_sample_counts_bootstrap_as_before() -> None:
    from tracker.core import stats

    samples = [float(x % 17) + 1 for x in range(300)]
    assert stats.subsample(samples, None) == samples  # no subsample: the rng is not even asked


FAST = settings(deadline=None, suppress_health_check=list(HealthCheck))


GATES = [BenchGate(bench="m", where={"k": 1, "impl": "cuda"}, at_most=4.5, stat=s, confidence=c) for s in ("median", "mean", "p90", "min")
         for c in (None, 0.9)] + [BenchGate(bench="m", where={"k": 1, "impl": "cuda"}, baseline={"impl": "base"}, at_least=2.0)]  # fmt: skip


def check_result(path: Path, data: bytes) -> None:
    from tracker.core.bench_verdict import evaluate, matches
    from tracker.core.stats import compute_stat
    from tracker.errors import ResultFileError
    from tracker.store.result_files import load_result

    path.write_bytes(data)
    try:
        run = load_result(path)
    except ResultFileError as err:
        assert str(err).startswith(f"{path}") and err.reason and "\n" not in err.reason
        return
    for gate in GATES:
        outcome = evaluate(gate, [run])
        if outcome.met and gate.baseline is None and gate.confidence is None:  # never a false pass
            [c] = [c for c in run.cases if c.metric == "m" and matches(c.params, gate.where)]
            assert compute_stat(gate.stat, c.samples) <= 4.5


@settings(FAST, max_examples=150)
@given(
    samples=st.lists(
        st.one_of(
            st.floats(min_value=1e300, max_value=1.7976931348623157e308), st.floats(min_value=1e-300, max_value=1e6)
        ),
        min_size=1,
        max_size=30,
    )
)
def test_huge_samples_never_overflow(tmp_path_factory: pytest.TempPathFactory, samples: list[float]) -> None:
    from tracker.core.stats import compute_stat

    for name in ("median", "mean", "p90", "min"):
        assert math.isfinite(compute_stat(name, samples))
    stats = {"n": len(samples), **{k: compute_stat(k, samples) for k in ("median", "min", "mean", "p90")}}
    doc = result(
        [
            {
                "metric": "m",
                "params": {"k": 1, "impl": "cuda"},
                "unit": "us",
                "direction": "lower",
                "samples": samples,
                "stats": stats,
            }
        ]
    )
    check_result(tmp_path_factory.mktemp("h", numbered=True) / "r.json", json.dumps(doc).encode())
