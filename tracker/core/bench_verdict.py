"""Pure evaluation of benchmark gates against loaded result files (rules in docs/evidence.md).

A gate is never met by default: no evidence, no matching case, results from other hardware, an
ambiguous selection, a missing baseline or too few samples each give an unmet verdict with that reason.
Statistics come from the raw samples. Every case of more than one sample is judged with a confidence (the gate's,
else :data:`DEFAULT_CONFIDENCE`) by a seeded percentile bootstrap: met when the value and the bound on the
threshold's side clear it, failed when the value and the opposite bound miss it, **undecided** otherwise. An
undecided newest run (or one with too few samples) decides nothing: the newest older run that decided stands
(docs/evidence.md, "Three verdicts").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from datetime import timedelta
from typing import Any, NamedTuple

from tracker.core.model import BenchGate, EvidenceSource, GateVerdict, ResultCase, ResultRun
from tracker.core.stats import bootstrap_interval, compute_stat, oriented_ratio

DEFAULT_CONFIDENCE = 0.95  # a gate's own ``confidence`` replaces it


class BenchOutcome(NamedTuple):
    """What the evaluation decided, with the run it used (``source`` is None when no run qualified).

    The figures behind ``summary``, for views that show them as data (``tracker show``, reports): ``value`` (the
    statistic, or the ratio to the baseline), ``threshold``, ``bound`` (the bootstrap bound compared instead of
    ``value`` when the gate asks for a confidence), ``unit`` ("×" for a ratio), ``samples`` (candidate, baseline)
    and the ``case`` measured; all None until a value was computed."""

    met: bool
    summary: str
    source: ResultRun | None = None
    value: float | None = None
    threshold: float | None = None
    bound: float | None = None
    unit: str | None = None
    samples: tuple[int, int | None] | None = None
    case: ResultCase | None = None
    interval: tuple[float, float] | None = None  # both confidence bounds, when the samples gave them
    undecided: bool = False  # the newest qualifying run cannot decide (interval across the threshold, too few samples)
    more: int | None = None  # undecided: about how many more samples would likely decide it
    decided_by: BenchOutcome | None = None  # undecided: the newest older run that decided, whose verdict stands
    confidence: float | None = None  # the level ``bound`` and ``interval`` were computed at, when not the gate's

    @property
    def failed(self) -> bool:
        """Confidently missed: decided so by this run or, undecided, by the last run that decided."""
        if self.undecided:
            return self.decided_by is not None and not self.decided_by.met
        return self.value is not None and not self.met


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


def _not_positive(who: str, samples: Sequence[float], unit: str) -> str | None:
    """Why a ratio with these samples would be undefined (any statistic of a resample is a sample or a
    mean of samples, so all of them must be > 0), or None."""
    bad = next((x for x in samples if not x > 0), None)
    if bad is None:
        return None
    return f"ratio undefined: a {who}sample is {fmt_num(bad)} {unit} (a ratio needs samples > 0)"


def _varying_keys(run: ResultRun, metric: str) -> frozenset[str]:
    """Parameter keys taking more than one (type-exact) value across the run's cases of ``metric``."""
    values: dict[str, set[tuple[str, object]]] = {}
    params = [c.params for c in run.cases if c.metric == metric]
    for p in params:
        for k, v in p.items():
            values.setdefault(k, set()).add((type(v).__name__, v))
    # A key missing from some cases varies too (present vs absent).
    return frozenset(k for k, vs in values.items() if len(vs) > 1 or any(k not in p for p in params))


def _label(run: ResultRun, gate: BenchGate, case: ResultCase) -> str:
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


# A run's cases of a gate's selection, {(id(run), selection): (run, its matching cases, those with a baseline case)}:
# a replay of the history (status's timeline, gc) judges every prefix of the runs, and matching each case's parameters
# anew was most of gc's time (72 M calls of `matches` on our store, 2026-12-06). The entry holds its run, so no other
# object takes that id while it is kept, and the run is checked by identity; cleared when full.
_RUN_CASES: dict[tuple[int, tuple[object, ...]], tuple[ResultRun, list[ResultCase], list[ResultCase]]] = {}
_RUN_CASES_MAX = 1 << 16
# A run's cases by metric, {id(run): (run, {metric: cases})}, kept and checked likewise: most runs hold none of a
# gate's metric, and those are answered without a scan or a memo entry of their own.
_BY_METRIC: dict[int, tuple[ResultRun, dict[str, list[ResultCase]]]] = {}
_BY_METRIC_MAX = 1 << 14


def _metric_cases(run: ResultRun, metric: str) -> list[ResultCase]:
    """``run``'s cases of ``metric``, in file order (memoized, ``_BY_METRIC``)."""
    hit = _BY_METRIC.get(id(run))
    if hit is None or hit[0] is not run:
        index: dict[str, list[ResultCase]] = {}
        for c in run.cases:
            index.setdefault(c.metric, []).append(c)
        if len(_BY_METRIC) >= _BY_METRIC_MAX:
            _BY_METRIC.clear()
        hit = _BY_METRIC[id(run)] = (run, index)
    return hit[1].get(metric, [])


def _selection_key(gate: BenchGate) -> tuple[object, ...]:
    """What picks a gate's cases in a run: its metric, ``where`` and ``baseline``, each value with its type."""

    def frozen(params: Mapping[str, Any] | None) -> tuple[tuple[str, str, str], ...]:
        return tuple(sorted((k, type(v).__name__, repr(v)) for k, v in (params or {}).items()))

    return (gate.bench, frozen(gate.where), frozen(gate.baseline))


def _run_cases(gate: BenchGate, run: ResultRun, key: tuple[object, ...]) -> tuple[list[ResultCase], list[ResultCase]]:
    """``run``'s cases of the gate's metric matching its ``where``, and of those the ones whose baseline case the run
    holds too (all of them for a gate without a baseline); memoized (``_RUN_CASES``)."""
    of_metric = _metric_cases(run, gate.bench)
    if not of_metric:
        return of_metric, of_metric
    memo_key = (id(run), key)
    hit = _RUN_CASES.get(memo_key)
    if hit is not None and hit[0] is run:
        return hit[1], hit[2]
    matched = [c for c in of_metric if matches(c.params, gate.where)]
    compared = [c for c in matched if _baseline_case(gate, run, c) is not None] if gate.baseline else matched
    if len(_RUN_CASES) >= _RUN_CASES_MAX:
        _RUN_CASES.clear()
    _RUN_CASES[memo_key] = (run, matched, compared)
    return matched, compared


def _select(gate: BenchGate, results: Sequence[ResultRun]) -> BenchOutcome | list[tuple[ResultRun, list[ResultCase]]]:
    """The qualifying runs with their cases of the gate, newest first; or why there is none."""
    where_text = f"metric={gate.bench}" + (f" where {fmt_params(gate.where)}" if gate.where else "")
    if not results:
        return BenchOutcome(False, "no benchmark evidence")
    key = _selection_key(gate)
    per_run = {id(r): _run_cases(gate, r, key) for r in results}
    found = [(r, c) for r in results for c in per_run[id(r)][0]]
    if not found:
        hint = _type_hint(gate, results)
        return BenchOutcome(False, f"no case matches {where_text} in {len(results)} result file(s){hint}")
    if gate.hardware:
        on_hw = [(r, c) for r, c in found if on_hardware(gate.hardware, r.gpu)]
        if not on_hw:
            gpus = sorted({r.gpu or "no GPU" for r, _ in found})
            return BenchOutcome(False, f"results only from {', '.join(gpus)} (gate wants {gate.hardware})")
        found = on_hw
    if not gate.baseline:  # a ratio's threshold has no unit; a value's is the gate's, or that of all its results
        in_unit = _in_unit(gate, found)
        if isinstance(in_unit, BenchOutcome):
            return in_unit
        found = in_unit
    if gate.baseline:
        # A run that did not measure the baseline did not run the comparison (as a test gate's verdict comes from the
        # newest run where the test ran): the newest run holding both cases decides, if there is one.
        with_base = {run: {id(c) for c in cases[1]} for run, cases in per_run.items()}
        compared = [(r, c) for r, c in found if id(c) in with_base[id(r)]]
        found = compared or found
    by_run: dict[int, tuple[ResultRun, list[ResultCase]]] = {}
    for r, c in found:
        by_run.setdefault(id(r), (r, []))[1].append(c)
    return sorted(by_run.values(), key=lambda rc: (rc[0].time, rc[0].path), reverse=True)


SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0}  # time units converted


def _in_unit(
    gate: BenchGate, found: list[tuple[ResultRun, ResultCase]]
) -> BenchOutcome | list[tuple[ResultRun, ResultCase]]:
    """The cases of a gate without a baseline in the unit of its threshold, or why they cannot be: with ``unit``,
    a time in another time unit (ns, us, ms, s) is converted and any other unit is unmet; without it, cases in more
    than one unit are unmet, for the threshold's unit is then unknown (round 20, N2: 61 us measured as 0.061 ms met
    ``at_most = 50.0`` after a run in us had failed it)."""
    if gate.unit is None:
        units = {c.unit: r.path for r, c in sorted(found, key=lambda rc: rc[0].time, reverse=True)}
        if len(units) < 2:
            return found
        named = ", ".join(f"{unit} ({path})" for unit, path in units.items())
        return BenchOutcome(  # undecided: `tracker check` names it (round 21, 8: a regression in ms went unsaid)
            False,
            f"its results are in {len(units)} units, {named}: state the threshold's unit in the gate "
            f'(unit = "{next(iter(units))}"; times in ns, us, ms and s are converted to it)',
            undecided=True,
        )
    out = []
    for run, case in found:
        if case.unit == gate.unit:
            out.append((run, case))
        elif case.unit in SECONDS and gate.unit in SECONDS:
            factor = SECONDS[case.unit] / SECONDS[gate.unit]
            samples = tuple(x * factor for x in case.samples)
            if not all(math.isfinite(x) for x in samples):
                return BenchOutcome(False, f"{run.path}: a sample in {case.unit} is too large in {gate.unit}", run)
            out.append((run, case._replace(unit=gate.unit, samples=samples)))
        else:
            return BenchOutcome(False, f"{run.path} measured it in {case.unit}, the gate's unit is {gate.unit}", run)
    return out


def on_hardware(want: str, gpu: str | None) -> bool:
    """Does the GPU name ``gpu`` name ``want`` (a gate's or a doc table's ``hardware``): case-insensitive, as whole
    words, so that "H200" is "NVIDIA H200" and "NVIDIA H200 NVL", never "NVIDIA GH200 480GB" (round 20, N5)."""
    import re

    pattern = rf"(?<![0-9a-z]){re.escape(want.lower())}(?![0-9a-z])"
    return re.search(pattern, (gpu or "").lower()) is not None


def _one_case(gate: BenchGate, run: ResultRun, cases: list[ResultCase]) -> BenchOutcome | ResultCase:
    """The run's one case of the gate, or why the selection is ambiguous."""
    if len(cases) > 1:
        where_text = f"metric={gate.bench}" + (f" where {fmt_params(gate.where)}" if gate.where else "")
        listed = "; ".join(fmt_params(c.params) for c in cases[:3])
        return BenchOutcome(False, f"{where_text} is ambiguous: {len(cases)} cases in {run.path} ({listed})", run)
    return cases[0]


_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}


def _toml(value: Any) -> str:
    """``value`` as a TOML literal (a where value: a boolean, a number or a string)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _reads_as(a: object, b: object) -> bool:
    """Do ``a`` and ``b``, of different types, read as the same value (91000 and "91000", 8 and 8.0)?"""
    if isinstance(a, str) or isinstance(b, str):
        return str(a if not isinstance(a, bool) else _toml(a)) == str(b if not isinstance(b, bool) else _toml(b))
    return not isinstance(a, bool) and not isinstance(b, bool) and a == b


def _type_hint(gate: BenchGate, results: Sequence[ResultRun]) -> str:
    """`` (ctx is an integer in the results: write ctx = 1000)`` when a ``where`` value matches no case of the metric
    only because of its type (TOML ``"1000"`` is a string, never the integer 1000), else ''."""
    cases = [c for r in results for c in r.cases if c.metric == gate.bench]
    for key, want in gate.where.items():
        if any(key in c.params and same_value(c.params[key], want) for c in cases):
            continue
        near = next((c.params[key] for c in cases if key in c.params and _reads_as(c.params[key], want)), None)
        if near is not None and type(near) in _TYPE_NAMES:
            return f" ({key} is {_TYPE_NAMES[type(near)]} in the results: write {key} = {_toml(near)})"
    return ""


def _baseline_case(gate: BenchGate, run: ResultRun, case: ResultCase) -> ResultCase | None:
    """The case of ``run`` whose params are ``case``'s with the baseline's keys replaced, exactly (same metric)."""
    want = {**case.params, **(gate.baseline or {})}
    return next(
        (
            c
            for c in run.cases
            if c.metric == case.metric and c.params.keys() == want.keys() and matches(c.params, want)
        ),
        None,
    )


def evaluate(
    gate: BenchGate,
    results: Sequence[ResultRun],
    bounds: MutableMapping[str, float] | None = None,
    by_value: bool = False,
) -> BenchOutcome:
    """Evaluate one bench gate over every loaded result file (pure; see the module docstring). ``bounds``: bootstrap
    bounds known already (:func:`tracker.core.stats.bootstrap_bound`), which gets the ones computed here. ``by_value``:
    judge by the statistic alone, without an interval (a chart's points; never a gate's verdict)."""
    picked = _select(gate, results)
    if isinstance(picked, BenchOutcome):
        return picked
    alone: dict[int, bool] = {}  # id(run): is that run undecided on its own? (each pool below asks again)
    newest = _as_newest(gate, picked, bounds, by_value, alone)
    if not newest.undecided:
        return newest
    for i, (run, _) in enumerate(picked[1:], 1):  # the last decided verdict stands (pooled, as it was judged)
        earlier = _as_newest(gate, picked[i:], bounds, alone=alone)
        if not earlier.undecided and earlier.value is not None and math.isfinite(earlier.value):
            when = run.time.strftime("%Y-%m-%d")
            last = f"{'met' if earlier.met else 'missed'} by {run.path} ({when}): {earlier.summary}"
            against = _contradicted(gate, picked[:i], earlier.met, bounds)
            if against is not None:  # a newer run says the opposite on its own: neither verdict stands (round 18)
                them, theirs = against
                said = f"{them.path} alone {'missed' if earlier.met else 'met'} it: {theirs.summary}"
                return newest._replace(summary=f"{newest.summary}; no decided verdict stands: {said}; the last "
                                       f"decided run was {last}")  # fmt: skip
            return newest._replace(summary=f"{newest.summary}; the last decided run stands, {last}", decided_by=earlier)
    return newest._replace(summary=f"{newest.summary}; no run decided it yet")


def _contradicted(
    gate: BenchGate,
    newer: Sequence[tuple[ResultRun, list[ResultCase]]],
    met: bool,
    bounds: MutableMapping[str, float] | None,
) -> tuple[ResultRun, BenchOutcome] | None:
    """The newest of the ``newer`` runs (those after the last decided one, each undecided as it was judged: pooled)
    that on its own samples, at the gate's confidence, decides the opposite of ``met``; None when none does. Pooled
    with a straddling run, a clear miss is undecided, and the met before it would stand: an older run never rescues
    a newer failure (nor hides a newer pass), so then no verdict stands and the gate is unmet, not failed."""
    for run, cases in newer:
        own = _judge(gate, run, cases, bounds)
        if not own.undecided and own.value is not None and math.isfinite(own.value) and own.met != met:
            return run, own
    return None


def _as_newest(
    gate: BenchGate,
    picked: Sequence[tuple[ResultRun, list[ResultCase]]],
    bounds: MutableMapping[str, float] | None,
    by_value: bool = False,
    alone: dict[int, bool] | None = None,
) -> BenchOutcome:
    """The verdict of ``picked``'s first (newest) run as it was judged when it was the newest. A run that continues a
    series of undecided runs of the same code is judged with them, never alone: alone, each new run would be one more
    test of the same question (docs/evidence.md, "Pooled runs"). ``alone``: the memo of :func:`_pooled`."""
    (run, cases), *older = picked
    pooled = None if by_value else _pooled(gate, run, cases, older, bounds, {} if alone is None else alone)
    return pooled or _judge(gate, run, cases, bounds, by_value)


MAX_POOLED = 8  # runs of one series pooled at most (their confidence is the gate's spent over as many looks)


def _series(
    gate: BenchGate, run: ResultRun, cases: list[ResultCase], older: Sequence[tuple[ResultRun, list[ResultCase]]]
) -> Iterator[Pool]:
    """The pools of ``run``'s series, growing: ``run``'s case (and baseline) with those of the qualifying runs just
    older than it, one more each time, while each is of the same benchmark on the same machine (host and GPU) and
    setup (driver, CUDA, torch, triton, Python, command) over the same measured code (the same non-empty fingerprint
    of files and patterns), with one case of the same params, unit and direction (and a baseline of the same unit
    and direction), up to :data:`MAX_POOLED` runs. A run whose samples (and baseline's) repeat a pooled run's ends
    the series: the same numbers again are a copy or a deterministic benchmark, not new evidence."""
    case = _one_case(gate, run, cases)
    if not run.files or isinstance(case, BenchOutcome):
        return
    base = _baseline_case(gate, run, case) if gate.baseline else None
    if gate.baseline and base is None:
        return
    same = (run.benchmark, run.host, run.gpu, run.files, run.patterns, run.setup)
    samples, base_samples = case.samples, base.samples if base is not None else ()
    seen = {(tuple(sorted(samples)), tuple(sorted(base_samples)))}
    for looks, (other, cases) in enumerate(older[: MAX_POOLED - 1], 2):
        theirs = _one_case(gate, other, cases)
        if (other.benchmark, other.host, other.gpu, other.files, other.patterns, other.setup) != same or isinstance(
            theirs, BenchOutcome
        ):
            return
        if (theirs.params, theirs.unit, theirs.direction) != (case.params, case.unit, case.direction):
            return
        their_base = _baseline_case(gate, other, theirs) if base is not None else None
        if base is not None and (
            their_base is None or (their_base.unit, their_base.direction) != (base.unit, base.direction)
        ):
            return
        numbers = (tuple(sorted(theirs.samples)), tuple(sorted(their_base.samples)) if their_base is not None else ())
        if numbers in seen:
            return
        seen.add(numbers)
        samples += theirs.samples
        base_samples += their_base.samples if their_base is not None else ()
        merged = (case._replace(samples=samples),) + ((base._replace(samples=base_samples),) if base else ())
        yield Pool(looks, other, theirs, run._replace(cases=merged))


class Pool(NamedTuple):
    """One step of :func:`_series`: ``looks`` runs pooled, the oldest of them (``added``, with its own ``case``), and
    the pooled run (the newest run's provenance, the pooled case and baseline)."""

    looks: int
    added: ResultRun
    case: ResultCase
    run: ResultRun


def _pooled(
    gate: BenchGate,
    run: ResultRun,
    cases: list[ResultCase],
    older: Sequence[tuple[ResultRun, list[ResultCase]]],
    bounds: MutableMapping[str, float] | None,
    alone: dict[int, bool],
) -> BenchOutcome | None:
    """The verdict on the samples of ``run`` pooled with those of the runs, each undecided alone, that continue
    its series (:func:`_series`: the same code measured again on the same machine, as ``verify --bench`` does to
    decide), all of them, the gate's confidence spent over the looks: a pool of L runs is judged at
    ``1 - (1 - c) / L²`` (docs/evidence.md, "Pooled runs"); None when no older run continues the series. A run that
    decided on its own ends the pool: it stands for itself. ``run`` is never judged alone, not even at the pool's
    level: a percentile bound of a few samples is no stricter at 99.9% than at 95% (it cannot pass the samples'
    range), so each look would be one more test (bench/plan_tracker/verdict_noise.py measured 119 false regressions
    per 1000 where pooling alone gives 36). New code or a new setup starts a series of its own (:func:`_series`). But a
    pool whose verdict ``run`` contradicts on its own samples, at the gate's confidence, is undecided: older samples
    never rescue a newer clear miss. ``alone``: {id(run): undecided on its own}, the memo of one evaluation."""
    confidence = gate.confidence if gate.confidence is not None else DEFAULT_CONFIDENCE
    whole: Pool | None = None
    for pool in _series(gate, run, cases, older):
        key = id(pool.added)
        if key not in alone:
            alone[key] = _judge(gate, pool.added, [pool.case], bounds).undecided
        if not alone[key]:
            break
        whole = pool
    if whole is None:
        return None
    level = 1 - (1 - confidence) / whole.looks**2
    outcome = _judge(gate._replace(confidence=level), whole.run, [whole.run.cases[0]], bounds)
    if not outcome.undecided and outcome.value is not None and math.isfinite(outcome.value):
        own = _judge(gate, run, cases, bounds)  # the newest run's own word, at the gate's confidence
        if not own.undecided and own.value is not None and math.isfinite(own.value) and own.met != outcome.met:
            # Older runs never rescue a newer failure (nor sink a newer pass): neither decides (round 19, L4).
            said = f"{run.path} alone {'missed' if outcome.met else 'met'} it: {own.summary}"
            outcome = outcome._replace(
                met=False, undecided=True, more=None, summary=f"undecided: the pool says {outcome.summary}, but {said}"
            )
    n = len(whole.run.cases[0].samples)
    note = f"pooled: {whole.looks} runs of the same code on {run.host}, {n} samples, confidence {pct(level)}"
    return outcome._replace(
        summary=f"{outcome.summary}; {note}", source=run if outcome.source is not None else None, confidence=level
    )


def pct(confidence: float) -> str:
    """``95%``, ``97.5%``, ``98.33%``: a confidence with the digits it needs."""
    return f"{confidence * 100:.4g}%"


def _judge(
    gate: BenchGate,
    run: ResultRun,
    cases: list[ResultCase],
    bounds: MutableMapping[str, float] | None,
    by_value: bool = False,
) -> BenchOutcome:
    """The verdict of one run's case: met, failed (a value that is not met), undecided, or unmet for a reason."""
    case_or_why = _one_case(gate, run, cases)
    if isinstance(case_or_why, BenchOutcome):
        return case_or_why
    case = case_or_why
    base: ResultCase | None = None
    if gate.baseline:
        base = _baseline_case(gate, run, case)
        if base is None:
            return BenchOutcome(
                False,
                f"no baseline case {fmt_params(gate.baseline)} for {fmt_params(case.params)} in the same run "
                f"({run.path})",
                run,
            )
        if (base.direction, base.unit) != (case.direction, case.unit):
            return BenchOutcome(
                False,
                f"baseline is {base.direction}-is-better in {base.unit}, candidate {case.direction} in {case.unit}",
                run,
            )
    need = gate.min_samples or 1
    for who, c in (("", case), ("baseline ", base)):
        if c is not None and len(c.samples) < need:
            return BenchOutcome(
                False, f"undecided: too few {who}samples ({len(c.samples)} < {need})", run, undecided=True
            )

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
    counts = (
        f"{len(case.samples)}"
        if base is None or len(base.samples) == len(case.samples)
        else f"{len(case.samples)} vs {len(base.samples)}"
    )
    label = _label(run, gate, case)
    sizes = (len(case.samples), len(base.samples) if base is not None else None)
    figures = {"source": run, "value": value, "threshold": threshold, "unit": unit.strip(), "samples": sizes}
    shown_value, shown_threshold = f"{fmt_num(value)}{unit}", f"{fmt_num(threshold)}{unit}"
    if by_value or len(case.samples) < 2 or (base is not None and len(base.samples) < 2):
        # One sample: its value is all there is (never met by a value that is not a number: NaN compares false).
        met = value_clears(value, threshold, at_least)
        op = ("≥" if met else "<") if at_least else ("≤" if met else ">")
        how = f"{gate.stat} of {counts}" if by_value else "1 sample: judged by its value"
        summary = f"{shown_value} {op} {shown_threshold} ({how}, {label})"
        return BenchOutcome(met, summary, case=case, **figures)  # type: ignore[arg-type]
    confidence = gate.confidence if gate.confidence is not None else DEFAULT_CONFIDENCE
    lo, hi = bootstrap_interval(
        gate.stat, case.samples, confidence, base.samples if base else None, case.direction, bounds
    )
    # met: the value and the bound on the threshold's side clear it; failed: the value and the opposite bound miss
    # it; else undecided. (A percentile bound on the far side of the value decides nothing: that keeps "met" a
    # subset of "met by value", which lets ever_met skip the bootstrap of every run whose value misses.)
    good, bad = (lo, hi) if at_least else (hi, lo)
    clears = value_clears(value, threshold, at_least)
    # A value exactly on the threshold, from samples that vary, is inside the noise: undecided, whatever the bound.
    # (Timings quantized by a timer's tick tie at the median: the bootstrap interval of 40,000 such samples collapsed
    # onto a threshold set right on the median, met at +0.0%, or fell below a median that averages the two middle
    # samples.) Samples that never vary (a count, a size) decide there.
    reaches = value == threshold and (  # the samples read only then: this runs for every run a gate is judged on
        len(set(case.samples)) > 1 or (base is not None and len(set(base.samples)) > 1)
    )
    met = clears and math.isfinite(good) and (good >= threshold if at_least else good <= threshold) and not reaches
    misses = math.isfinite(value) and not clears
    failed = misses and math.isfinite(bad) and (bad < threshold if at_least else bad > threshold)
    level = pct(confidence)
    stat_of = f"{gate.stat} of {counts}, {label}"
    if met or failed or not math.isfinite(value):
        side = ("lower" if at_least else "upper") if met else ("upper" if at_least else "lower")
        bound = good if met else bad
        op = ("≥" if met else "<") if at_least else ("≤" if met else ">")
        # The bound is shown where it differs from the value (constant samples give the value itself).
        said = "" if fmt_num(bound) == fmt_num(value) else f" ({level} {side} bound {fmt_num(bound)}{unit})"
        summary = f"{shown_value}{said} {op} {shown_threshold} ({stat_of})"
        return BenchOutcome(met, summary, case=case, bound=bound, interval=(lo, hi), **figures)  # type: ignore[arg-type]
    more = _more_samples(value, threshold, lo, hi, len(case.samples))
    likely = (
        f"~{more} more sample{'' if more == 1 else 's'} would likely decide it"
        if more is not None
        else "more samples may decide it"
    )
    summary = (
        f"undecided: {shown_value}, {level} bounds {fmt_num(lo)}–{fmt_num(hi)}{unit} straddle {shown_threshold}; "
        f"{likely} ({stat_of})"
    )
    return BenchOutcome(
        False,
        summary,
        case=case,
        bound=good,
        interval=(lo, hi),
        undecided=True,
        more=more,
        **figures,  # type: ignore[arg-type]
    )


def value_clears(value: float, threshold: float, at_least: bool) -> bool:
    """Does the statistic itself clear the threshold (never a value that is not a finite number)?"""
    return math.isfinite(value) and (value >= threshold if at_least else value <= threshold)


def newest_may_meet(gate: BenchGate, results: Sequence[ResultRun]) -> bool:
    """Could :func:`evaluate` find the newest qualifying run of ``results`` met by its own samples? Only when its
    value clears the threshold (a met verdict needs that and more), judged without a bootstrap: cheap."""
    picked = _select(gate, results)
    if isinstance(picked, BenchOutcome):
        return False
    (run, cases), *older = picked
    if _judge(gate, run, cases, None, by_value=True).met:
        return True
    return any(  # a pool of its series may meet it (:func:`_pooled`): its value must clear the threshold too
        _judge(gate, pool.run, [pool.run.cases[0]], None, by_value=True).met
        for pool in _series(gate, run, cases, older)
    )


MORE_CAP = 10_000  # beyond this, "more samples" says nothing useful: the value sits on the threshold


def _more_samples(value: float, threshold: float, lo: float, hi: float, n: int) -> int | None:
    """About how many more samples would put the bound that faces the threshold past it, were the spread to stay
    the same (a bound's distance from the value shrinks as 1/sqrt(n)); None when the value is on the threshold."""
    half = (hi - value) if value <= threshold else (value - lo)
    distance = abs(threshold - value)
    if not (distance > 0 and half > 0 and math.isfinite(half)):
        return None
    ratio = half / distance
    if not ratio < math.sqrt(MORE_CAP + n):  # beyond the cap (or not a number): nothing useful to say
        return None
    needed = math.ceil(n * ratio * ratio)
    return max(1, needed - n) if needed - n <= MORE_CAP else None


def evaluate_bench_gate(
    gate: BenchGate, results: Sequence[ResultRun], bounds: MutableMapping[str, float] | None = None
) -> GateVerdict:
    """The core's entry point: :func:`evaluate` as a :class:`~tracker.core.model.GateVerdict`.

    ``failed`` is set only when a qualifying run confidently missed the threshold (a real regression signal);
    missing, ambiguous, too-small or other-hardware evidence is unmet but not failed. ``undecided``: the newest run
    could not decide; ``met`` and ``failed`` are then the last deciding run's (unmet, not failed, when none did), and
    a met verdict's source is that run (its measured files say whether it is stale).
    """
    outcome = evaluate(gate, results, bounds)
    source = None
    decided = outcome.decided_by
    run = decided.source if decided is not None and decided.met else outcome.source  # what a met verdict rests on
    if run is not None:
        machine = f"{run.host} ({run.gpu})" if run.gpu else run.host
        utc = run.time.utcoffset() == timedelta(0)
        time = run.time.strftime("%Y-%m-%dT%H:%M:%SZ") if utc else run.time.isoformat()
        source = EvidenceSource(file=run.path, machine=machine, commit=run.commit, time=time)
    met = decided.met if outcome.undecided and decided is not None else outcome.met
    return GateVerdict(
        met=met, reason=outcome.summary, source=source, failed=outcome.failed, undecided=outcome.undecided
    )
