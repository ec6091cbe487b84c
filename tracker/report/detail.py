"""Everything known about one phase, as data (pure): what ``tracker show`` prints, what a report lays out and
what ``--json`` hands over. Built from the derived statuses, the evidence and the status timeline
(:mod:`tracker.core.timeline`); rendering is the commands' and the templates' business.

A bench gate's figures (value, threshold, margin, statistic, sample counts, bootstrap bound) come from the same
evaluation that decided its verdict (:func:`tracker.core.bench_verdict.evaluate`), so what is shown is what was
compared. A gate whose evidence no longer matches the working tree says why (``stale``): its verdict stands, and
the phase is ``stale``, not done.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, NamedTuple

from tracker.core.checks import qualify
from tracker.core.model import (
    BenchGate,
    EvidenceSource,
    Gate,
    GateVerdict,
    ManualGate,
    Phase,
    PhaseStatus,
    Plan,
    ResultRun,
    Status,
    gate_key,
)
from tracker.core.timeline import Transition
from tracker.report.render import gate_label


class BenchFigures(NamedTuple):
    """The numbers behind a bench gate's verdict, as evaluated on its newest qualifying run."""

    metric: str
    params: dict[str, Any]  # the measured case's parameters
    baseline: dict[str, Any] | None  # the baseline's differing parameters (a ratio gate)
    stat: str
    value: float  # the statistic, or the oriented ratio to the baseline
    unit: str  # the case's unit, "×" for a ratio
    op: str  # "≥" (at_least) or "≤" (at_most)
    threshold: float
    bound: float | None  # the bootstrap bound compared instead of ``value`` (a gate with a confidence)
    confidence: float | None
    margin: float | None  # (compared - threshold) / |threshold|, oriented: > 0 is headroom; None when undefined
    samples: int
    baseline_samples: int | None
    direction: str  # "lower" | "higher": which is better for the metric
    run: str  # the result file
    benchmark: str
    undecided: bool = False  # the newest run's interval straddles the threshold (issue 31): ``bound`` faces it

    def as_json(self) -> dict[str, Any]:
        """The figures as ``--json`` prints them (non-finite numbers as null: JSON has none)."""
        out = self._asdict()
        for name in ("value", "threshold", "bound", "margin"):
            x = out[name]
            out[name] = x if x is None or math.isfinite(x) else None
        return out

    @classmethod
    def from_json(cls, data: object) -> BenchFigures | None:
        """Figures as :meth:`_asdict` wrote them to the phase-history cache, or None when ``data`` is not such
        figures (then they are computed again)."""
        if not isinstance(data, dict) or data.keys() != set(cls._fields):
            return None
        texts = ("metric", "stat", "unit", "op", "direction", "run", "benchmark")
        numbers = ("value", "threshold")
        optional = ("bound", "confidence", "margin")
        if not all(isinstance(data[k], str) for k in texts):
            return None
        if not all(_number(data[k]) for k in numbers) or not all(data[k] is None or _number(data[k]) for k in optional):
            return None
        if (
            type(data["undecided"]) is not bool
            or type(data["samples"]) is not int
            or not (data["baseline_samples"] is None or type(data["baseline_samples"]) is int)
        ):
            return None
        if not isinstance(data["params"], dict) or not (data["baseline"] is None or isinstance(data["baseline"], dict)):
            return None
        return cls(**data)


def _number(x: object) -> bool:
    return type(x) in (int, float) and math.isfinite(x)  # type: ignore[arg-type]


class GateDetail(NamedTuple):
    """One gate: its definition, verdict and evidence."""

    number: int  # 1-based, as every command shows it
    key: str  # PLAN/PHASE#N
    kind: str  # "test" | "manual" | "bench"
    label: str
    definition: dict[str, Any]
    line: int
    met: bool
    failed: bool
    reason: str
    source: EvidenceSource | None
    stale: str  # why the evidence behind a met gate no longer matches ("" when it does)
    bench: BenchFigures | None

    def as_json(self) -> dict[str, Any]:
        """The gate as ``--json`` prints it."""
        src = self.source
        return {
            "number": self.number,
            "key": self.key,
            "kind": self.kind,
            "label": self.label,
            "definition": self.definition,
            "line": self.line,
            "met": self.met,
            "failed": self.failed,
            "reason": self.reason,
            "source": None if src is None else src._asdict(),
            "stale": self.stale,
            "bench": None if self.bench is None else self.bench.as_json(),
        }


class PhaseDetail(NamedTuple):
    """One phase, everything the evidence says about it."""

    key: str  # PLAN/PHASE
    plan_id: str
    plan_title: str
    plan_path: str
    milestone: str | None
    id: str
    title: str
    line: int
    status: Status
    note: str
    depends: tuple[tuple[str, str | None], ...]  # (PLAN/PHASE, its status; None: its plan file is invalid)
    blocked_by: tuple[str, ...]
    changed: tuple[str, ...]  # files under ``paths`` changed since the evidence (a stale phase)
    paths: tuple[str, ...]
    gates: tuple[GateDetail, ...]
    history: tuple[Transition, ...]  # oldest first (tracker.core.timeline)

    @property
    def met_count(self) -> str:
        """``met/total``, as tables show it."""
        return f"{sum(g.met for g in self.gates)}/{len(self.gates)}"

    @property
    def done_since(self) -> Transition | None:
        """The transition that made the phase done, when it is done (or stale) now."""
        if self.status not in (Status.DONE, Status.STALE):
            return None
        return next((t for t in reversed(self.history) if t.status is Status.DONE), None)

    def as_json(self) -> dict[str, Any]:
        """The phase as ``--json`` prints it."""
        return {
            "key": self.key,
            "plan": {"id": self.plan_id, "title": self.plan_title, "path": self.plan_path, "milestone": self.milestone},
            "id": self.id,
            "title": self.title,
            "line": self.line,
            "status": self.status.value,
            "note": self.note,
            "depends": [{"id": d, "status": s} for d, s in self.depends],
            "blocked_by": list(self.blocked_by),
            "changed": list(self.changed),
            "paths": list(self.paths),
            "gates": [g.as_json() for g in self.gates],
            "history": [t.as_json() for t in self.history],
        }


def kind_of(gate: Gate) -> str:
    """``test``, ``manual`` or ``bench``."""
    return "bench" if isinstance(gate, BenchGate) else "manual" if isinstance(gate, ManualGate) else "test"


def margin(compared: float, threshold: float, at_least: bool) -> float | None:
    """How far ``compared`` clears ``threshold``, relative to it: positive is headroom, negative a miss."""
    if not (math.isfinite(compared) and math.isfinite(threshold)) or threshold == 0:
        return None
    gap = compared - threshold if at_least else threshold - compared
    return gap / abs(threshold)


def bench_figures(
    gate: BenchGate, results: Sequence[ResultRun], bounds: MutableMapping[str, float] | None = None
) -> BenchFigures | None:
    """The figures of a bench gate on ``results`` (None when no value was computed: no evidence, no case, too few
    samples...; the verdict's reason says which)."""
    from tracker.core.bench_verdict import DEFAULT_CONFIDENCE, evaluate

    outcome = evaluate(gate, results, bounds)
    if outcome.value is None or outcome.threshold is None or outcome.case is None or outcome.source is None:
        return None
    at_least = gate.at_least is not None
    compared = outcome.bound if outcome.bound is not None else outcome.value
    samples = outcome.samples or (len(outcome.case.samples), None)
    return BenchFigures(
        metric=gate.bench,
        params=dict(outcome.case.params),
        baseline=dict(gate.baseline) if gate.baseline else None,
        stat=gate.stat,
        value=outcome.value,
        unit=outcome.unit or outcome.case.unit,
        op="≥" if at_least else "≤",
        threshold=outcome.threshold,
        bound=outcome.bound,
        confidence=None if outcome.bound is None else (outcome.confidence or gate.confidence or DEFAULT_CONFIDENCE),
        margin=margin(compared, outcome.threshold, at_least),
        samples=samples[0],
        baseline_samples=samples[1],
        direction=outcome.case.direction,
        run=outcome.source.path,
        undecided=outcome.undecided,
        benchmark=outcome.source.benchmark,
    )


def phase_detail(
    plan: Plan,
    phase: Phase,
    statuses: Mapping[str, PhaseStatus],
    *,
    history: Sequence[Transition] = (),
    stale: Mapping[str, str] | None = None,
    results: Sequence[ResultRun] = (),
    bounds: MutableMapping[str, float] | None = None,
    figures: Mapping[str, BenchFigures | None] | None = None,
) -> PhaseDetail:
    """The detail of one phase. ``statuses``: every phase's (dependencies may live in other plans); ``stale``:
    {gate key: why} of met gates whose evidence no longer matches (:func:`tracker.core.status.stale_gates`);
    ``results``: every valid result run, for bench figures; ``figures``: {gate key: figures} known already (a
    bench gate found there is not evaluated again); ``history``: the phase's transitions."""
    key = f"{plan.id}/{phase.id}"
    st = statuses[key]
    stale = stale or {}
    gates = []
    for i, (gate, verdict) in enumerate(zip(phase.gates, st.verdicts, strict=True)):
        gkey = gate_key(plan.id, phase.id, i)
        found: BenchFigures | None = None
        if isinstance(gate, BenchGate):
            if figures is not None and gkey in figures:
                found = figures[gkey]
            elif results:
                found = bench_figures(gate, results, bounds)
        gates.append(_gate(i, gkey, gate, verdict, stale.get(gkey, ""), found))
    depends = tuple(
        (dep, None if dep not in statuses else statuses[dep].status.value)
        for dep in (qualify(plan.id, d) for d in phase.depends)
    )
    return PhaseDetail(
        key=key,
        plan_id=plan.id,
        plan_title=plan.title,
        plan_path=plan.path,
        milestone=plan.milestone,
        id=phase.id,
        title=phase.title,
        line=phase.line,
        status=st.status,
        note=st.note,
        depends=depends,
        blocked_by=st.blocked_by,
        changed=st.changed,
        paths=phase.paths,
        gates=tuple(gates),
        history=tuple(history),
    )


def _gate(i: int, key: str, gate: Gate, v: GateVerdict, stale: str, figures: BenchFigures | None) -> GateDetail:
    return GateDetail(
        number=i + 1,
        key=key,
        kind=kind_of(gate),
        label=gate_label(gate),
        definition=gate.definition,
        line=gate.line,
        met=v.met,
        failed=v.failed,
        reason=v.reason,
        source=v.source,
        stale=stale,
        bench=figures,
    )
