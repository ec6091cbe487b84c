"""Statistics of raw benchmark samples, in one place: the gate statistics (median, min, mean, p90), quantiles,
the ratio of two statistics oriented so that above 1 is better, the seeded percentile bootstrap, and the
tolerance with which a result file's stored ``stats`` must agree with its samples.

Pure functions of their arguments, standard library only (``statistics`` alone costs ~6 ms of every status,
``random`` is imported only when a bootstrap bound is computed). Finite samples always give a finite statistic,
however large they are (docs/evidence.md).
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping, Sequence
from typing import Any

STATS = ("median", "min", "mean", "p90")
RESAMPLES = 2000
SEED = 20261129
METHOD = "order-statistics-2"  # how a resample's statistic is drawn (_resampler): part of every bound's key
# The bootstrap's cost is RESAMPLES draws of the sample size: above this many samples a case is first reduced to
# a seeded random subsample of this size (see bootstrap_bound), so a bound costs at most ~2,000 x 2,000 draws
# (about a second, cached) however many samples a file holds; 200,000 took minutes.
MAX_BOOTSTRAP_N = 2000


def interpolate(a: float, b: float, frac: float) -> float:
    """``a + (b - a) * frac`` without overflow: for finite ``a`` and ``b`` (even ±1.7e308) the result is
    finite, and ``frac == 0`` gives ``a`` exactly."""
    if frac == 0:
        return a
    value = a + (b - a) * frac
    if math.isinf(value) and math.isfinite(a) and math.isfinite(b):  # b - a overflowed
        value = a * (1 - frac) + b * frac
    return value


def mean(samples: Sequence[float]) -> float:
    """The exact mean (``fsum``). Samples so large their sum overflows (``1.7e308`` twice) are summed scaled,
    each divided by twice the count (that sum cannot overflow), and the result is kept within the samples'
    range, where the mean lies: any finite samples have a finite mean."""
    try:
        return math.fsum(samples) / len(samples)
    except OverflowError:
        half = math.fsum(x / (2 * len(samples)) for x in samples)
        return min(max(half * 2, min(samples)), max(samples))


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0 to 1) of ``values``, interpolated linearly between order statistics (numpy's default)."""
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return interpolate(s[lo], s[hi], pos - lo)


def compute_stat(name: str, samples: Sequence[float]) -> float:
    """``median``/``min``/``mean``/``p90`` of raw samples; p90 interpolates linearly (numpy's default)."""
    if not samples:
        raise ValueError("no samples")
    if name == "median":  # by hand: importing statistics costs ~6 ms of every status
        s = sorted(samples)
        mid = len(s) // 2
        return float(s[mid]) if len(s) % 2 else interpolate(s[mid - 1], s[mid], 0.5)
    if name == "min":
        return float(min(samples))
    if name == "mean":
        return mean(samples)
    if name == "p90":
        return quantile(samples, 0.9)
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(STATS)})")


def case_stats(samples: Sequence[float]) -> dict[str, float | int]:
    """The ``stats`` block of a case (n, median, min, mean, p90), from its raw samples as the validator recomputes
    them."""
    return {"n": len(samples), **{name: compute_stat(name, samples) for name in STATS}}


def p90_bounds(samples: Sequence[float]) -> tuple[float, float]:
    """Range spanned by the usual p90 definitions (interpolated, nearest-rank, (n+1)p): all are accepted."""
    s = sorted(samples)
    n = len(s)
    lo = s[math.floor(0.9 * (n - 1))]
    hi = s[min(n - 1, max(math.ceil(0.9 * (n + 1)) - 1, math.ceil(0.9 * n) - 1))]
    return lo, hi


def agrees(given: float, true: float) -> bool:
    """True when ``given`` is ``true`` up to rounding: to the decimals it shows, or 0.1% relative."""
    text = repr(float(given))
    decimals = 0 if "e" in text else len(text.split(".")[1].rstrip("0"))
    tolerance = max(0.5 * 10.0**-decimals, 1e-3 * abs(true), 1e-12)
    return abs(given - true) <= tolerance


def oriented_ratio(candidate: float, baseline: float, direction: str) -> float:
    """Candidate vs baseline statistic, oriented so that above 1 is always an improvement.

    NaN when undefined (a denominator of zero or less): NaN compares false, so it never meets a gate.
    """
    num, den = (baseline, candidate) if direction == "lower" else (candidate, baseline)
    return num / den if den > 0 else math.nan


def subsample(samples: Sequence[float], rng: Any) -> list[float]:
    """``samples`` as a list, or, when there are more than :data:`MAX_BOOTSTRAP_N`, a random subsample of
    that size drawn without replacement by ``rng`` (seeded: the same samples always give the same one)."""
    pool = list(samples)
    return pool if len(pool) <= MAX_BOOTSTRAP_N else rng.sample(pool, MAX_BOOTSTRAP_N)


def bootstrap_key(
    stat: str,
    samples: Sequence[float],
    confidence: float,
    upper: bool,
    baseline: Sequence[float] | None,
    direction: str,
) -> str:
    """What a bootstrap bound depends on, hashed: its arguments and the bootstrap's own constants."""
    from tracker.base.hashing import sha256_hex

    key = (stat, tuple(samples), confidence, upper, tuple(baseline) if baseline is not None else None, direction)
    return sha256_hex(repr((key, RESAMPLES, SEED, MAX_BOOTSTRAP_N, METHOD)).encode())


def bootstrap_bound(
    stat: str,
    samples: Sequence[float],
    confidence: float,
    upper: bool,
    baseline: Sequence[float] | None = None,
    direction: str = "lower",
    known: MutableMapping[str, float] | None = None,
) -> float:
    """One-sided percentile-bootstrap bound of the ``stat`` of ``samples``, or (with ``baseline``) of
    the oriented ratio of the two statistics.

    Each of ``RESAMPLES`` rounds resamples the candidate (and, independently, the baseline) with
    replacement; the bound is the ``confidence`` quantile (``upper``) or the ``1 - confidence`` quantile
    of those values. A constant seed makes the bound a pure function of the samples: ``known`` (bounds by
    :func:`bootstrap_key`, e.g. read from the cache) answers a bound computed before, and gets each new one.

    Cost is bounded: a case with more than :data:`MAX_BOOTSTRAP_N` samples is first reduced to a seeded random
    subsample of that size, drawn without replacement, and the bootstrap runs on it. That stays sound: a random
    subsample of independent measurements is itself a sample of independent measurements of the same
    distribution, so the bound has the coverage a bootstrap has for that many samples. It is only wider (less
    data), which can leave a gate unmet that all the samples would meet, never the reverse in expectation.
    The statistic itself (the value shown and compared without ``confidence``) always uses every sample.
    """
    lower, upper_bound = bootstrap_interval(stat, samples, confidence, baseline, direction, known)
    return upper_bound if upper else lower


def bootstrap_interval(
    stat: str,
    samples: Sequence[float],
    confidence: float,
    baseline: Sequence[float] | None = None,
    direction: str = "lower",
    known: MutableMapping[str, float] | None = None,
) -> tuple[float, float]:
    """(lower, upper): both one-sided ``confidence`` bounds of :func:`bootstrap_bound`, from one set of draws
    (the seed makes them the very values two calls would give). Between them lies a ``2 * confidence - 1``
    two-sided interval; each bound alone errs on its side at most ``1 - confidence`` of the time (as a
    percentile bootstrap does: docs/evidence.md gives the rates measured on synthetic noise)."""
    keys = (
        (
            bootstrap_key(stat, samples, confidence, False, baseline, direction),
            bootstrap_key(stat, samples, confidence, True, baseline, direction),
        )
        if known is not None
        else ("", "")
    )
    if known is not None:
        lo, hi = known.get(keys[0]), known.get(keys[1])
        if isinstance(lo, float) and isinstance(hi, float):
            return lo, hi
    import random

    rng = random.Random(SEED)
    pool = subsample(samples, rng)
    base = subsample(baseline, rng) if baseline is not None else None
    draw_pool, draw_base = _resampler(stat, pool, rng), (_resampler(stat, base, rng) if base is not None else None)
    draws: list[float] = []
    for _ in range(RESAMPLES):
        value = draw_pool()
        if draw_base is not None:
            value = oriented_ratio(value, draw_base(), direction)
        draws.append(value)
    draws.sort()
    lo, hi = quantile(draws, 1.0 - confidence), quantile(draws, confidence)
    if known is not None:
        known[keys[0]], known[keys[1]] = lo, hi
    return lo, hi


def _order_positions(stat: str, n: int) -> tuple[int, float] | None:
    """The statistic of ``n`` sorted values as ``interpolate(s[a], s[a + 1], frac)`` (``(a, frac)``), as
    :func:`compute_stat` computes it; None for the mean, which no order statistic gives."""
    if stat == "min":
        return 0, 0.0
    if stat == "median":
        return (n // 2, 0.0) if n % 2 else (n // 2 - 1, 0.5)
    if stat == "p90":
        pos = 0.9 * (n - 1)
        a = math.floor(pos)
        return a, (pos - a if a + 1 < n else 0.0)
    return None


def _resampler(stat: str, samples: Sequence[float], rng: Any) -> Any:
    """A function drawing the ``stat`` of one bootstrap resample of ``samples`` (``n`` draws with replacement).

    For an order statistic (min, median, p90) it draws the statistic directly, in the resample's own law: resampling
    is ``sorted(samples)[floor(u * n)]`` for ``n`` uniforms ``u``, a map that keeps order, so the resample's ``k``-th
    smallest value is ``sorted(samples)[floor(U(k) * n)]`` where ``U(k)``, the ``k``-th smallest of ``n`` uniforms,
    follows Beta(k, n - k + 1); the next one is ``U(k) + (1 - U(k)) * V`` with ``V`` ~ Beta(1, n - k), the least of the
    ``n - k`` uniforms above it. Two draws instead of ``n`` and a sort: a cold status of the bundled plans spent 16 s
    of 25 profiled resampling 88 cases of ~190 samples the slow way. The mean resamples by hand."""
    pool = sorted(samples)
    n = len(pool)
    where = _order_positions(stat, n)
    if where is None:
        return lambda: compute_stat(stat, rng.choices(pool, k=n))
    a, frac = where
    k = a + 1  # 1-based rank of the lower order statistic
    beta, last = rng.betavariate, n - 1

    def draw() -> float:
        u = beta(k, n - k + 1)
        low = pool[min(int(u * n), last)]
        if frac == 0:
            return low
        v = u + (1.0 - u) * beta(1, n - k)
        return interpolate(low, pool[min(int(v * n), last)], frac)

    return draw
