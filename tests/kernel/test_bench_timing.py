"""bench/timing.py: the rotation rule, the statistics, and the timing loop itself (on CPU, host clock)."""

from __future__ import annotations

import statistics
import time

import pytest
import torch

from bench.timing import L2_BYTES_DEFAULT, l2_bytes, rotation_sets, summarize, time_device


def test_rotation_sets_exceed_twice_l2() -> None:
    l2 = 60 * 2**20
    for per_set in (1, 6_600_000, 26_600_000, 40 * 2**20, 105_000_000, 10**10):
        n = rotation_sets(per_set, l2)
        assert n >= 3
        assert n * per_set > 2 * l2
        if n > 3:  # no more sets than needed
            assert (n - 1) * per_set <= 2 * l2
    assert rotation_sets(6_600_000, l2) == 20
    with pytest.raises(ValueError, match="bytes_per_set: expected > 0, got 0"):
        rotation_sets(0, l2)


def test_l2_default_on_cpu() -> None:
    assert l2_bytes(torch.device("cpu")) == L2_BYTES_DEFAULT


def test_summarize() -> None:
    samples = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 6.0, 7.0, 8.0, 9.0, 11.0]
    stats = summarize(samples)
    assert stats == {"n": 11, "median": 6.0, "min": 1.0, "mean": statistics.fmean(samples), "p90": 10.0}
    assert summarize([2.5]) == {"n": 1, "median": 2.5, "min": 2.5, "mean": 2.5, "p90": 2.5}
    assert summarize([1.0, 2.0])["p90"] == pytest.approx(1.9)
    with pytest.raises(ValueError, match="samples: expected at least one sample"):
        summarize([])


def test_time_device_rotates_warms_up_and_measures() -> None:
    calls: list[int] = []

    def fn(i: int) -> None:
        calls.append(i)
        time.sleep(0.002)

    samples = time_device(fn, 3, device="cpu", warmup=2, budget_s=0.05, min_reps=5, max_reps=1000)
    warm = calls[:6]
    timed = calls[6:]
    assert warm == [0, 1, 2, 0, 1, 2]
    # budget 0.05 s at ~2 ms a run: about 25 runs, and never below min_reps
    assert 5 <= len(timed) <= 30 and len(samples) == len(timed)
    assert timed == [r % 3 for r in range(len(timed))]
    assert all(1900 <= us < 200_000 for us in samples), samples


def test_time_device_clamps_repetitions() -> None:
    samples = time_device(lambda i: None, 2, device="cpu", budget_s=10.0, min_reps=4, max_reps=7)
    assert len(samples) == 7
    samples = time_device(lambda i: time.sleep(0.01), 1, device="cpu", budget_s=0.001, min_reps=4, max_reps=7)
    assert len(samples) == 4
    with pytest.raises(ValueError, match="n_sets: expected >= 1, got 0"):
        time_device(lambda i: None, 0, device="cpu")
