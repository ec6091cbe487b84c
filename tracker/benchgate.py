"""Pure evaluation of benchmark gates against loaded result files (rules in docs/evidence.md).

A gate is never met by default: no evidence, no matching case, results from other hardware, an
ambiguous selection, a missing baseline or too few samples each give an unmet verdict with that reason.
Statistics come from the raw samples; the optional noise guard is a seeded percentile bootstrap.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

from tracker.errors import FileError
from tracker.fileio import read_regular
from tracker.model import BenchGate, EvidenceSource, GateVerdict
from tracker.results import ResultCase, ResultRun, compute_stat, interpolate

RESAMPLES = 2000
SEED = 20261129
# The bootstrap's cost is RESAMPLES draws of the sample size: above this many samples a case is first reduced to
# a seeded random subsample of this size (see bootstrap_bound), so a bound costs at most ~2,000 x 2,000 draws
# (about a second, cached) however many samples a file holds; 200,000 took minutes.
MAX_BOOTSTRAP_N = 2000
ParamValue = str | int | float | bool


# The plan model's bench gate (keys: bench, where, baseline, at_least, at_most, stat, min_samples,
# hardware, run, confidence); the alias keeps this module's signatures readable.
BenchGateLike = BenchGate


class BenchOutcome(NamedTuple):
    """What the evaluation decided, with the run it used (``source`` is None when no run qualified)."""

    met: bool
    summary: str
    source: ResultRun | None = None
    value: float | None = None


def same_value(a: object, b: object) -> bool:
    """Type-exact equality: 91000 != "91000" and 1 != True != 1.0."""
    return type(a) is type(b) and a == b


def matches(params: Mapping[str, Any], where: Mapping[str, Any]) -> bool:
    """True when ``params`` contains every key of ``where`` with a type-exact equal value."""
    return all(k in params and same_value(params[k], v) for k, v in where.items())


def fmt_params(params: Mapping[str, Any]) -> str:
    """``ctx=91000 impl=cuda``; strings that read as numbers or booleans are quoted to show their type."""

    def one(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            plain = v and " " not in v and v not in ("true", "false")
            try:
                float(v)
                plain = False
            except ValueError:
                pass
            return v if plain else f'"{v}"'
        return repr(v)

    return " ".join(f"{k}={one(v)}" for k, v in params.items())


def fmt_num(x: float) -> str:
    """Three significant digits, keeping trailing zeros (41.0, 2.31, 1.80); no decimals from 100 up."""
    if x == 0 or not math.isfinite(x):
        return f"{x:.2f}"
    decimals = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def _quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return interpolate(s[lo], s[hi], pos - lo)


def subsample(samples: Sequence[float], rng: Any) -> list[float]:
    """``samples`` as a list, or, when there are more than :data:`MAX_BOOTSTRAP_N`, a random subsample of
    that size drawn without replacement by ``rng`` (seeded: the same samples always give the same one)."""
    pool = list(samples)
    return pool if len(pool) <= MAX_BOOTSTRAP_N else rng.sample(pool, MAX_BOOTSTRAP_N)


def oriented_ratio(candidate: float, baseline: float, direction: str) -> float:
    """Candidate vs baseline statistic, oriented so that above 1 is always an improvement.

    NaN when undefined (a denominator of zero or less): NaN compares false, so it never meets a gate.
    """
    num, den = (baseline, candidate) if direction == "lower" else (candidate, baseline)
    return num / den if den > 0 else math.nan


def _not_positive(who: str, samples: Sequence[float], unit: str) -> str | None:
    """Why a ratio with these samples would be undefined (any statistic of a resample is a sample or a
    mean of samples, so all of them must be > 0), or None."""
    bad = next((x for x in samples if not x > 0), None)
    if bad is None:
        return None
    return f"ratio undefined: a {who}sample is {fmt_num(bad)} {unit} (a ratio needs samples > 0)"


def bootstrap_bound(
    stat: str,
    samples: Sequence[float],
    confidence: float,
    upper: bool,
    baseline: Sequence[float] | None = None,
    direction: str = "lower",
) -> float:
    """One-sided percentile-bootstrap bound of the ``stat`` of ``samples``, or (with ``baseline``) of
    the oriented ratio of the two statistics.

    Each of ``RESAMPLES`` rounds resamples the candidate (and, independently, the baseline) with
    replacement; the bound is the ``confidence`` quantile (``upper``) or the ``1 - confidence`` quantile
    of those values. A constant seed makes the verdict a pure function of the samples (memoized).

    Cost is bounded: a case with more than :data:`MAX_BOOTSTRAP_N` samples is first reduced to a seeded random
    subsample of that size, drawn without replacement, and the bootstrap runs on it. That stays sound: a random
    subsample of independent measurements is itself a sample of independent measurements of the same
    distribution, so the bound has the coverage a bootstrap has for that many samples. It is only wider (less
    data), which can leave a gate unmet that all the samples would meet, never the reverse in expectation.
    The statistic itself (the value shown and compared without ``confidence``) always uses every sample.
    """
    key = (stat, tuple(samples), confidence, upper, tuple(baseline) if baseline is not None else None, direction)
    cached = _BOOT_MEMO.get(key)
    if cached is not None:
        return cached
    disk = None
    if BOOT_CACHE[0] is not None:  # a long sample list costs ~0.2 s: keep status fast across processes
        digest = hashlib.sha256(repr((key, RESAMPLES, SEED, MAX_BOOTSTRAP_N)).encode()).hexdigest()
        disk = BOOT_CACHE[0] / f"boot-{digest}.txt"
        try:
            _BOOT_MEMO[key] = float(read_regular(disk, limit=4096).decode())
            return _BOOT_MEMO[key]
        except (FileError, ValueError):  # missing or not a number: computed again (FileError: not a regular file)
            pass
    import random  # noqa: PLC0415 - only when a bound is not cached

    rng = random.Random(SEED)
    pool = subsample(samples, rng)
    n = len(pool)
    base = subsample(baseline, rng) if baseline is not None else None
    draws: list[float] = []
    for _ in range(RESAMPLES):
        value = compute_stat(stat, rng.choices(pool, k=n))
        if base is not None:
            value = oriented_ratio(value, compute_stat(stat, rng.choices(base, k=len(base))), direction)
        draws.append(value)
    bound = _BOOT_MEMO[key] = _quantile(draws, confidence if upper else 1.0 - confidence)
    if disk is not None:
        try:
            disk.parent.mkdir(parents=True, exist_ok=True)
            tmp = disk.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(repr(bound))
            tmp.replace(disk)
        except OSError:
            pass  # a read-only checkout only loses speed
    return bound


_BOOT_MEMO: dict[object, float] = {}
# Where bootstrap bounds are cached on disk; set by benchstatus.load_results(root) (None: memory only).
BOOT_CACHE: list[Path | None] = [None]


_VARYING: dict[tuple[str, str], frozenset[str]] = {}


def _varying_keys(run: ResultRun, metric: str) -> frozenset[str]:
    """Parameter keys taking more than one (type-exact) value across the run's cases of ``metric``."""
    key = (run.sha256, metric)
    if key not in _VARYING:
        values: dict[str, set[tuple[str, object]]] = {}
        params = [c.params for c in run.cases if c.metric == metric]
        for p in params:
            for k, v in p.items():
                values.setdefault(k, set()).add((type(v).__name__, v))
        # A key missing from some cases varies too (present vs absent).
        _VARYING[key] = frozenset(k for k, vs in values.items() if len(vs) > 1 or any(k not in p for p in params))
    return _VARYING[key]


def _label(run: ResultRun, gate: BenchGateLike, case: ResultCase) -> str:
    """``ctx=91000 heads=8 nodes=64, NVIDIA H200, kernel@3f2a91c`` - the parenthetical of a verdict."""
    varying = _varying_keys(run, case.metric)
    # Show the where-keys that identify the case: not the ones the baseline varies, not constants of the run.
    shown = {k: v for k, v in gate.where.items() if k not in (gate.baseline or {}) and k in varying} or {
        k: v for k, v in gate.where.items() if k not in (gate.baseline or {})
    }
    # Name the measured code by the top-level directory most of its fingerprinted files live in.
    tops = Counter(path.split("/", 1)[0] for path in run.files if "/" in path).most_common(2)
    code = tops[0][0] if tops and (len(tops) == 1 or tops[0][1] > tops[1][1]) else run.benchmark
    commit = run.commit[:7] if run.commit else "unknown-commit"
    dirty = "+dirty" if run.dirty else ""
    parts = [p for p in (fmt_params(shown), run.gpu or "no GPU", f"{code}@{commit}{dirty}") if p]
    return ", ".join(parts)


def _select(gate: BenchGateLike, results: Sequence[ResultRun]) -> BenchOutcome | tuple[ResultRun, ResultCase]:
    where_text = f"metric={gate.bench}" + (f" where {fmt_params(gate.where)}" if gate.where else "")
    if not results:
        return BenchOutcome(False, "no benchmark evidence")
    found = [(r, c) for r in results for c in r.cases if c.metric == gate.bench and matches(c.params, gate.where)]
    if not found:
        return BenchOutcome(False, f"no case matches {where_text} in {len(results)} result file(s)")
    if gate.hardware:
        want = gate.hardware.lower()
        on_hw = [(r, c) for r, c in found if want in (r.gpu or "").lower()]
        if not on_hw:
            gpus = sorted({r.gpu or "no GPU" for r, _ in found})
            return BenchOutcome(False, f"results only from {', '.join(gpus)} (gate wants {gate.hardware})")
        found = on_hw
    if gate.baseline:
        # A run that did not measure the baseline did not run the comparison (as a test gate's verdict comes from the
        # newest run where the test ran): the newest run holding both cases decides, if there is one.
        compared = [(r, c) for r, c in found if _baseline_case(gate, r, c) is not None]
        found = compared or found
    newest = max((r for r, _ in found), key=lambda r: (r.time, r.path))
    cases = [c for r, c in found if r is newest]
    if len(cases) > 1:
        listed = "; ".join(fmt_params(c.params) for c in cases[:3])
        return BenchOutcome(False, f"{where_text} is ambiguous: {len(cases)} cases in {newest.path} ({listed})", newest)
    return newest, cases[0]


def _baseline_case(gate: BenchGateLike, run: ResultRun, case: ResultCase) -> ResultCase | None:
    """The case of ``run`` whose params are ``case``'s with the baseline's keys replaced, exactly (same metric)."""
    want = {**case.params, **(gate.baseline or {})}
    return next((c for c in run.cases if c.metric == case.metric and c.params.keys() == want.keys() and matches(c.params, want)), None)


def evaluate(gate: BenchGateLike, results: Sequence[ResultRun]) -> BenchOutcome:
    """Evaluate one bench gate over every loaded result file (pure; see the module docstring)."""
    picked = _select(gate, results)
    if isinstance(picked, BenchOutcome):
        return picked
    run, case = picked
    base: ResultCase | None = None
    if gate.baseline:
        base = _baseline_case(gate, run, case)
        if base is None:
            return BenchOutcome(False, f"no baseline case {fmt_params(gate.baseline)} for {fmt_params(case.params)} in the same run ({run.path})", run)
        if (base.direction, base.unit) != (case.direction, case.unit):
            return BenchOutcome(False, f"baseline is {base.direction}-is-better in {base.unit}, candidate {case.direction} in {case.unit}", run)
    need = gate.min_samples or 1
    for who, c in (("", case), ("baseline ", base)):
        if c is not None and len(c.samples) < need:
            return BenchOutcome(False, f"too few {who}samples ({len(c.samples)} < {need})", run)

    if base is not None:
        undefined = _not_positive("", case.samples, case.unit) or _not_positive("baseline ", base.samples, base.unit)
        if undefined:
            return BenchOutcome(False, undefined, run)

    value = compute_stat(gate.stat, case.samples)
    if base is not None:
        value = oriented_ratio(value, compute_stat(gate.stat, base.samples), case.direction)
    unit = "×" if base is not None else f" {case.unit}"
    at_least = gate.at_least is not None
    threshold = float(gate.at_least if at_least else gate.at_most)  # type: ignore[arg-type]
    compared, shown = value, f"{fmt_num(value)}{unit}"
    if gate.confidence is not None:
        compared = bootstrap_bound(gate.stat, case.samples, gate.confidence, not at_least, base.samples if base else None, case.direction)
        side = "lower" if at_least else "upper"
        shown += f" ({gate.confidence:.0%} {side} bound {fmt_num(compared)}{unit})"
    # Never met by a value that is not a number (an undefined ratio is NaN; both comparisons are false).
    met = math.isfinite(compared) and (compared >= threshold if at_least else compared <= threshold)
    op = (("≥" if met else "<") if at_least else ("≤" if met else ">"))
    counts = f"{len(case.samples)}" if base is None or len(base.samples) == len(case.samples) else f"{len(case.samples)} vs {len(base.samples)}"
    summary = f"{shown} {op} {fmt_num(threshold)}{unit} ({gate.stat} of {counts}, {_label(run, gate, case)})"
    return BenchOutcome(met, summary, run, value)


def evaluate_bench_gate(gate: BenchGateLike, results: Sequence[ResultRun]) -> GateVerdict:
    """The core's entry point: :func:`evaluate` as a :class:`~tracker.model.GateVerdict`.

    ``failed`` is set only when a qualifying run missed the threshold (a real regression signal);
    missing, ambiguous, too-small or other-hardware evidence is unmet but not failed.
    """
    outcome = evaluate(gate, results)
    source = None
    run = outcome.source
    if run is not None:
        machine = f"{run.host} ({run.gpu})" if run.gpu else run.host
        utc = run.time.utcoffset() == timedelta(0)
        time = run.time.strftime("%Y-%m-%dT%H:%M:%SZ") if utc else run.time.isoformat()
        source = EvidenceSource(file=run.path, machine=machine, commit=run.commit, time=time)
    return GateVerdict(met=outcome.met, reason=outcome.summary, source=source, failed=outcome.value is not None and not outcome.met)
