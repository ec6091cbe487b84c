"""A report's charts, one per metric family and parameter axis, not one per gate (issue 26); pure data.

A family is the bench gates of the report that chart one quantity on one y axis: a metric's value under one
statistic (``verify_attn.floor_fraction``, median), or a benchmark's ratios to a baseline under one statistic.

How ratio gates map into families: a ratio gate (``baseline = {impl = "flashinfer"}``) charts "how many times
better than the baseline", unitless, whatever the metric and the baseline; so the ratio gates of one benchmark
(the metric's name before its last dot: ``verify_attn``) and statistic make one family, whatever their metric
(``verify_attn.time_us``, ``verify_attn.emulated_sm120_time_us``) and baseline (``impl=triton``,
``impl=flashinfer``, ``impl=cuda_v26``): the metric and the baseline name the series where the family's differ
(``time_us … vs flashinfer``). A ratio never shares a chart with a metric's own value (another unit), and the y
axis is logarithmic where the family's values lie ten times apart or more (a 30× beside a 1.1×).

For each family:

- one chart per parameter axis (``ctx``): the axis is the numeric parameter a gate's newest run varies most among
  the cases the gate would select with it free (:func:`main_parameter`); one series per other parameters (the
  shape: heads, nodes, batch; the baseline; the run, where the family's newest runs differ), each point that
  case evaluated by the gate's rules on its newest run (the value, not a bootstrap bound). Each gate's threshold
  is a :class:`~tracker.report.charts.Band` over the x values its cases cover: the gates of one phase with one
  threshold make one band, labelled with the phase, the gates and the threshold (``0002/P7 gates 1-10: ≥ 0.5``);
  a gate that fixes the axis (``ctx = 91000``) covers that one value, drawn as a dash, never across the chart;
- one chart of its value across runs, when at least two runs measured it: the newest :data:`MAX_RUNS_CHARTED`
  runs that measured one of the drawn cases, oldest first; one series per gated case, each run evaluated alone as
  the gate's rules judge it (its verdict had it been the newest); a regression marked once, on the first run that
  confidently missed a threshold the gate had met before (a later met arms it again); the thresholds drawn across,
  labelled as above. A case measured only by runs older than the window is not drawn, banded or claimed; the note
  under the chart counts those runs and cases.

At most :data:`MAX_SERIES` series a chart (the first, in the plans' order); the note under it counts the rest.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any, NamedTuple

from tracker.base.cache import BoundedMemo, Cache, cache_key, code_identity
from tracker.base.hashing import sha256_hex
from tracker.core.model import BenchGate, ResultRun
from tracker.report.charts import Band, Chart, Series

MAX_RUNS_CHARTED = 20  # a chart across more runs than this shows the newest ones
MAX_SERIES = 16  # lines a chart draws at most (the palette's colours); the note counts the others


class GateRef(NamedTuple):
    """A bench gate of the report: its phase (``PLAN/PHASE``), number, definition, and the run that decided it
    (None when none did)."""

    phase: str
    number: int
    gate: BenchGate
    newest: ResultRun | None


class Family(NamedTuple):
    """Gates charting one quantity (module docstring), in the plans' order: ``metric`` is the metric, or for ratios
    the benchmark (the metrics' common part), ``metrics`` the metrics its gates read."""

    metric: str
    stat: str
    ratio: bool
    gates: tuple[GateRef, ...]

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics its gates read, in order."""
        return tuple(dict.fromkeys(ref.gate.bench for ref in self.gates))

    @property
    def name(self) -> str:
        """``verify_attn.floor_fraction: median``, ``verify_attn: median × vs baseline``."""
        return f"{self.metric}: {self.stat}{' × vs baseline' if self.ratio else ''}"


class ReportChart(NamedTuple):
    """A chart of one family: ``kind`` ``parameter`` (against ``chart.x_label``) or ``runs`` (across runs); ``gates``
    the (phase, gate number) it draws. ``id`` is unique in the report: the SVG's id prefix."""

    id: str
    family: str
    kind: str
    gates: tuple[tuple[str, int], ...]
    chart: Chart

    @property
    def phases(self) -> list[str]:
        """The phases whose gates it draws, in order."""
        return list(dict.fromkeys(p for p, _ in self.gates))

    @property
    def gates_text(self) -> str:
        """``0002/P7 gates 1-10, 0002/P8 gates 1-5, 11``: its gates, per phase."""
        return ", ".join(f"{p} {_numbers([n for q, n in self.gates if q == p])}" for p in self.phases)

    def as_json(self) -> dict[str, Any]:
        """The chart's data as ``--json`` prints it (non-finite numbers as null)."""
        c = self.chart
        return {
            "id": self.id,
            "family": self.family,
            "kind": self.kind,
            "gates": [{"phase": p, "gate": n} for p, n in self.gates],
            "title": c.title,
            "x_label": c.x_label,
            "y_label": c.y_label,
            "x_categorical": c.x_categorical,
            "x_log": c.x_log,
            "y_log": c.y_log,
            "categories": list(c.categories),
            "bands": [
                {
                    "label": b.label,
                    "value": _finite(b.value),
                    "x": [x if isinstance(x, str) else _finite(x) for x in b.xs],
                }
                for b in c.bands
            ],
            "series": [
                {
                    "label": s.label,
                    "x": [x if isinstance(x, str) else _finite(x) for x in s.xs],
                    "y": [_finite(y) for y in s.ys],
                    "marked": list(s.marked),
                }
                for s in c.series
            ],
            "note": c.note,
        }


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _numbers(ns: Iterable[int]) -> str:
    """``gates 1-5, 11`` (``gate 3`` for one): runs of consecutive numbers as ranges."""
    ordered = sorted(set(ns))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ("gate " if len(ordered) == 1 else "gates ") + ", ".join(parts)


def families(refs: Iterable[GateRef]) -> list[Family]:
    """The families of ``refs`` (module docstring), in order of their first gate."""
    grouped: dict[tuple[str, str, bool], list[GateRef]] = {}
    for ref in refs:
        ratio = bool(ref.gate.baseline)
        name = ref.gate.bench.rsplit(".", 1)[0] if ratio else ref.gate.bench
        grouped.setdefault((name, ref.gate.stat, ratio), []).append(ref)
    out = []
    for (name, stat, ratio), gs in grouped.items():
        metrics = list(dict.fromkeys(ref.gate.bench for ref in gs))
        out.append(Family(metrics[0] if len(metrics) == 1 else name, stat, ratio, tuple(gs)))
    return out


def family_charts(
    refs: Iterable[GateRef],
    ordered: Sequence[ResultRun],
    bounds: MutableMapping[str, float] | None = None,
    outcomes: MutableMapping[str, Any] | None = None,
) -> list[ReportChart]:
    """Every chart of ``refs``' families: per family its parameter charts, then its chart across runs. ``ordered``:
    every valid result run, oldest first; ``bounds``: bootstrap bounds known already (filled in); ``outcomes``: each
    gate's outcome on each run alone, known already (filled in: :func:`_alone`)."""
    out: list[ReportChart] = []
    for fam in families(refs):
        for gates, chart in parameter_charts(fam):
            out.append(ReportChart(f"chart{len(out) + 1}", fam.name, "parameter", gates, chart))
        across = runs_chart(fam, ordered, bounds, outcomes)
        if across is not None:
            gates, chart = across
            out.append(ReportChart(f"chart{len(out) + 1}", fam.name, "runs", gates, chart))
    return out


# --- against a parameter -------------------------------------------------------------------------------------


def main_parameter(gate: BenchGate, run: ResultRun) -> tuple[str, list[float]] | None:
    """The numeric parameter the run varies most among the cases the gate would select with that parameter free
    (``ctx`` in a context sweep), with its values in order; None when no parameter takes two values. Ties go to
    the parameter the gate names first."""
    from tracker.core.bench_verdict import matches

    cases = [c for c in run.cases if c.metric == gate.bench]
    names = list(gate.where) + sorted({k for c in cases for k in c.params} - set(gate.where))
    best: tuple[str, list[float]] | None = None
    for name in names:
        if name in (gate.baseline or {}):
            continue
        rest = {k: v for k, v in gate.where.items() if k != name}
        values = {
            v
            for c in cases
            if matches(c.params, rest)
            for v in (c.params.get(name),)
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        }
        if len(values) > 1 and (best is None or len(values) > len(best[1])):
            best = (name, sorted(values))
    return best


class _Line(NamedTuple):
    """A series being built: what tells it from the family's other series, and its points."""

    metric: str
    params: dict[str, Any]  # the gate's ``where`` but the axis
    baseline: dict[str, Any]
    run: ResultRun | None
    xs: tuple[float, ...]
    ys: tuple[float, ...]


def _key(d: dict[str, Any] | None) -> str:
    return repr(sorted((k, type(v).__name__, v) for k, v in (d or {}).items()))


def _sweep(gate: BenchGate, run: ResultRun, axis: str, values: Sequence[float]) -> tuple[list[float], list[float], str]:
    """The gate's value at each ``values`` of ``axis`` on ``run`` (by value: no interval), and its unit."""
    from tracker.core.bench_verdict import evaluate

    xs: list[float] = []
    ys: list[float] = []
    unit = ""
    for value in values:
        point = gate._replace(where={**gate.where, axis: value}, confidence=None, hardware=None)
        outcome = evaluate(point, [run], by_value=True)
        if outcome.value is None:
            continue
        xs.append(float(value))
        ys.append(outcome.value)
        unit = outcome.unit or unit
    return xs, ys, unit


def parameter_charts(fam: Family) -> list[tuple[tuple[tuple[str, int], ...], Chart]]:
    """The family's charts against a parameter, one per axis its gates' newest runs vary (module docstring). A gate
    whose newest run varies another parameter but which fixes the family's main axis (the one most of its gates'
    runs vary) is a point on that axis: a short run of two shapes at 5.7k does not open a chart of its own."""
    found_of = [(ref, main_parameter(ref.gate, ref.newest) if ref.newest is not None else None) for ref in fam.gates]
    counts: dict[str, int] = {}
    for _, found in found_of:
        if found is not None:
            counts[found[0]] = counts.get(found[0], 0) + 1
    main = max(counts, key=lambda axis: counts[axis]) if counts else None  # ties: the first gate's axis
    by_axis: dict[str, list[tuple[GateRef, list[float]]]] = {}
    for ref, found in found_of:
        fixed = ref.gate.where.get(main) if main is not None else None
        moved = main is not None and found is not None and found[0] != main
        if moved and main is not None and isinstance(fixed, int | float) and _is_number(fixed):
            at: list[float] = [fixed]  # as the gate names it (an int ctx matches the runs' int ctx)
            found = (main, at)
        if found is not None:
            by_axis.setdefault(found[0], []).append((ref, found[1]))
    out = []
    for axis, items in by_axis.items():
        groups: dict[tuple[str, str, str], list[tuple[GateRef, list[float]]]] = {}
        for ref, values in items:
            params = {k: v for k, v in ref.gate.where.items() if k != axis}
            groups.setdefault((ref.gate.bench, _key(params), _key(ref.gate.baseline)), []).append((ref, values))
        lines: list[_Line] = []
        covers: list[tuple[GateRef, list[float]]] = []
        used: dict[str, ResultRun] = {}
        unit = ""
        for members in groups.values():
            # One line per case but the axis: each x from the newest of its gates' deciding runs that holds it.
            points: dict[float, float] = {}
            runs = {ref.newest.path: (ref.newest, ref, values) for ref, values in reversed(members) if ref.newest}
            for run, ref, values in sorted(runs.values(), key=lambda c: (c[0].time, c[0].path), reverse=True):
                xs, ys, got = _sweep(ref.gate, run, axis, [v for v in values if float(v) not in points])
                unit = unit or got
                points.update(zip(xs, ys, strict=True))
                if xs:
                    used[run.path] = run
            first = members[0][0].gate
            xs = sorted(points)
            params = {k: v for k, v in first.where.items() if k != axis}
            lines.append(
                _Line(first.bench, params, dict(first.baseline or {}), None, tuple(xs), tuple(points[x] for x in xs))
            )
            for ref, _ in members:
                fixed = ref.gate.where.get(axis)
                covers.append((ref, [float(fixed)] if _is_number(fixed) else xs))  # type: ignore[arg-type]
        drawn = [line for line in lines if line.xs]
        if not any(len(line.xs) >= 2 for line in drawn):
            continue  # one point per line: nothing to read against the axis (the chart across runs shows it)
        labels = _labels([(line.metric, line.params, line.baseline, None) for line in drawn])
        series = tuple(Series(label, line.xs, line.ys) for label, line in zip(labels, drawn, strict=True))
        xs_all = [x for line in drawn for x in line.xs]
        positive = bool(xs_all) and min(xs_all) > 0
        newest = sorted(used.values(), key=lambda r: (r.time, r.path), reverse=True)
        sources = f"points from the newest run holding each: {', '.join(_run_label(r) for r in newest)}"
        chart = Chart(
            title=f"{fam.name} against {axis}",
            x_label=axis,
            y_label=_y_label(fam.gates[0].gate, unit),
            series=series[:MAX_SERIES],
            bands=_bands(covers),
            x_log=positive and max(xs_all) / min(xs_all) >= 10,
            y_log=_spread([y for line in drawn for y in line.ys]),
            note="; ".join(n for n in (_more(len(series), "series"), sources if len(newest) > 1 else "") if n),
        )
        out.append((tuple((r.phase, r.number) for r, _ in items), chart))
    return out


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _bands(covers: Sequence[tuple[GateRef, Sequence[float | str]]]) -> tuple[Band, ...]:
    """One band per phase and threshold, over the x values its gates cover (``()``: across)."""
    grouped: dict[tuple[str, str, float], tuple[list[int], list[float | str]]] = {}
    for ref, xs in covers:
        g = ref.gate
        if g.at_least is None and g.at_most is None:
            continue
        op, value = ("≥", g.at_least) if g.at_least is not None else ("≤", g.at_most)
        numbers, covered = grouped.setdefault((ref.phase, op, float(value)), ([], []))  # type: ignore[arg-type]
        numbers.append(ref.number)
        covered.extend(x for x in xs if x not in covered)
    return tuple(
        Band(value, f"{phase} {_numbers(numbers)}: {op} {value:g}", tuple(covered))
        for (phase, op, value), (numbers, covered) in grouped.items()
    )


def _spread(ys: Sequence[float]) -> bool:
    """Are the values all positive and ten times apart or more (a log y axis reads them)?"""
    finite = [y for y in ys if math.isfinite(y)]
    return bool(finite) and min(finite) > 0 and max(finite) / min(finite) >= 10


def _labels(lines: Sequence[tuple[str, dict[str, Any], dict[str, Any], ResultRun | None]]) -> list[str]:
    """A label per series: the metric where the family's differ (its name after the benchmark's), the parameters
    that differ between the family's series (``heads=8 nodes=16``), the baseline where baselines differ (``vs
    flashinfer``: the value alone for a baseline of one key), the run's commit where runs differ."""
    from tracker.core.bench_verdict import fmt_params

    def varying(dicts: Sequence[dict[str, Any]]) -> list[str]:
        keys = list(dict.fromkeys(k for d in dicts for k in d))
        return [k for k in keys if len({_key({k: d[k]}) if k in d else "" for d in dicts}) > 1]

    metrics = len({m for m, _, _, _ in lines}) > 1
    shown = varying([p for _, p, _, _ in lines])
    bases = varying([b for _, _, b, _ in lines])
    runs = len({r.path for _, _, _, r in lines if r is not None}) > 1
    out = []
    for metric, params, baseline, run in lines:
        parts = [metric.rsplit(".", 1)[-1]] if metrics else []
        parts.append(fmt_params({k: params[k] for k in shown if k in params}))
        if bases:
            parts.append("vs " + (fmt_params(baseline) if len(baseline) != 1 else _plain(*baseline.values())))
        if runs and run is not None:
            parts.append(f"({_run_label(run)})")
        out.append(" ".join(p for p in parts if p) or fmt_params(params) or "all cases")
    return _unique(out)


def _plain(value: object) -> str:
    """A parameter's value as ``fmt_params`` writes it, without its key."""
    from tracker.core.bench_verdict import fmt_params

    return fmt_params({"k": value}).removeprefix("k=")


def _more(n: int, what: str) -> str:
    """``3 more cases not drawn …`` past :data:`MAX_SERIES`, else ""."""
    extra = n - MAX_SERIES
    what = what if extra != 1 else what.removesuffix("s") if what != "series" else what
    return f"{extra} more {what} not drawn (the benchmark table lists every gate)" if extra > 0 else ""


def _y_label(gate: BenchGate, unit: str) -> str:
    return f"{gate.stat}, × vs baseline" if gate.baseline else f"{gate.stat} ({unit})" if unit else gate.stat


# --- across runs ---------------------------------------------------------------------------------------------


Outcome = tuple[float | None, str | None, bool, bool]  # a gate on one run alone: value, unit, met, failed
OUTCOMES = "report-run-outcomes"  # the command cache's name (tracker.base.cache)
MAX_OUTCOMES = 50_000


def run_outcomes(cache: Cache) -> BoundedMemo:
    """Each bench gate's outcome on each result run alone (the charts across runs, :func:`_alone`), kept in the
    command's cache under the tracker's code identity: an entry is keyed by the run's bytes and the gate's
    definition, so an edit of either asks again. At most :data:`MAX_OUTCOMES` entries, this command's first."""
    return BoundedMemo(cache, OUTCOMES, cache_key(OUTCOMES, code_identity()), MAX_OUTCOMES)


def _alone(
    gate: BenchGate,
    run: ResultRun,
    bounds: MutableMapping[str, float] | None,
    outcomes: MutableMapping[str, Any] | None,
) -> Outcome:
    """``gate`` evaluated on ``run`` alone, from ``outcomes`` (a memo by the run's bytes and the gate's definition,
    kept across commands in the command's cache; the run's path beside its bytes' sha256) when it holds a
    well-formed answer."""
    from tracker.core.bench_verdict import evaluate

    key = f"{run.path} {run.sha256} {sha256_hex(repr(gate._replace(line=0)).encode('utf-8', 'surrogateescape'))}"
    hit = outcomes.get(key) if outcomes is not None else None
    if isinstance(hit, list) and len(hit) == 4:
        value, unit, met, failed = hit
        number = value is None or (type(value) in (int, float))
        if number and (unit is None or isinstance(unit, str)) and type(met) is bool and type(failed) is bool:
            return (None if value is None else float(value)), unit, met, failed
    outcome = evaluate(gate, [run], bounds)
    found: Outcome = (outcome.value, outcome.unit, outcome.met, outcome.failed)
    if outcomes is not None:
        outcomes[key] = list(found)
    return found


def runs_chart(
    fam: Family,
    ordered: Sequence[ResultRun],
    bounds: MutableMapping[str, float] | None = None,
    outcomes: MutableMapping[str, Any] | None = None,
) -> tuple[tuple[tuple[str, int], ...], Chart] | None:
    """The family's value on each run that measured it, oldest first, one series per gated case (module
    docstring); None when fewer than two runs gave a value. ``outcomes``: the memo of each gate on each run alone."""

    cases: dict[tuple[str, str, str], list[GateRef]] = {}
    for ref in fam.gates:
        cases.setdefault((ref.gate.bench, _key(ref.gate.where), _key(ref.gate.baseline)), []).append(ref)
    metrics = set(fam.metrics)
    runs = [r for r in ordered if any(c.metric in metrics for c in r.cases)]
    # per case: {run index: value}, and the run indices where one of its gates confidently missed after meeting
    values: list[dict[int, float]] = []
    marked: list[set[int]] = []
    unit = ""
    for refs in cases.values():
        got: dict[int, float] = {}
        marks: set[int] = set()
        for n, ref in enumerate(refs):
            armed = False  # met since its last mark: the next confident miss is where it regressed
            for i, run in enumerate(runs):
                value, run_unit, met, failed = _alone(ref.gate, run, bounds, outcomes)
                if value is None:
                    continue
                if n == 0:
                    got[i] = value
                    unit = run_unit or unit
                if failed and armed:
                    marks.add(i)
                    armed = False
                armed = armed or met
        values.append(got)
        marked.append(marks)
    # The cases some run measured, in the plans' order: the first MAX_SERIES of them are the chart's, and their runs
    # (not the others') make its window; one of them measured only before the window is not drawn.
    having = [k for k, got in enumerate(values) if got]
    first = having[:MAX_SERIES]
    measured = sorted({i for k in first for i in values[k]})
    used = measured[-MAX_RUNS_CHARTED:]
    if len(used) < 2:
        return None
    window = set(used)
    keep = [k for k in first if any(i in window for i in values[k])]
    names = dict(zip(used, _unique([_run_label(runs[i]) for i in used]), strict=True))
    all_refs = list(cases.values())
    refs_of = [all_refs[k] for k in keep]
    values = [values[k] for k in keep]
    marked = [marked[k] for k in keep]
    labels = _labels(
        [(rs[0].gate.bench, dict(rs[0].gate.where), dict(rs[0].gate.baseline or {}), None) for rs in refs_of]
    )
    series = []
    for label, got, marks in zip(labels, values, marked, strict=True):
        idx = [i for i in used if i in got]
        series.append(
            Series(
                label,
                tuple(names[i] for i in idx),
                tuple(got[i] for i in idx),
                tuple(k for k, i in enumerate(idx) if i in marks),
            )
        )
    chart = Chart(
        title=f"{fam.name} across runs",
        x_label="run (commit, oldest first)",
        y_label=_y_label(fam.gates[0].gate, unit),
        series=tuple(series),
        bands=_bands([(ref, ()) for refs in refs_of for ref in refs]),
        x_categorical=True,
        y_log=_spread([y for s in series for y in s.ys]),
        categories=tuple(names[i] for i in used),
        note="; ".join(
            n for n in (_older(len(measured) - len(used), len(first) - len(keep)), _more(len(having), "cases")) if n
        ),
    )
    drawn = [ref for refs in refs_of for ref in refs]
    return tuple((r.phase, r.number) for r in drawn), chart


def _older(runs: int, cases: int) -> str:
    """The note of a chart across runs that shows the newest :data:`MAX_RUNS_CHARTED`: how many older runs, and the
    cases only they measured, it leaves out ("" when none)."""
    if runs <= 0:
        return ""
    only = f", and {cases} case{'s' if cases != 1 else ''} only they measured," if cases else ""
    return f"{runs} older run{'s' if runs != 1 else ''}{only} not drawn"


def _run_label(run: ResultRun) -> str:
    commit = run.commit[:7] if run.commit else "no commit"
    return commit + ("+dirty" if run.dirty else "")


def _unique(labels: list[str]) -> list[str]:
    """The labels, a repeated one numbered (``abc1234 (2)``): a categorical axis merges equal labels."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out
