"""A report as one typed object (pure): what ``tracker report`` renders into Markdown or HTML and what
``--json`` prints. Built from the phases' details (:mod:`tracker.report.detail`, their status timelines included), the
result runs and the commits of the period (:mod:`tracker.git.log`); the command reads them, this module decides
what the report says.

The period. A report covers what changed between its start and the newest evidence of its scope (the newest time
among the evidence behind its phases' verdicts and transitions: ``through``). It starts at the beginning of the
history, at a commit (``--since REF``: the transitions brought by evidence files that REF's tree does not hold,
and the commits of ``REF..HEAD``), or where the previous report of the same milestone ended (its recorded
``through``: the transitions and commits after that time). Commits are listed up to ``through``, never "until
now": a commit made after the newest evidence is work no evidence has seen yet, and the commit that adds a report
must not make that report out of date. So the report holds nothing that changes between two runs on the same
repository state: no "now", no HEAD id.

Charts are data here too (:class:`tracker.report.charts.Chart`, frozen); drawing them is the HTML template's business.
They are per metric family, not per gate (:mod:`tracker.report.families`): a family is a metric's value under one
statistic (``verify_attn.floor_fraction``, median), or a benchmark's ratios under one statistic. Ratio gates (a
value against a baseline implementation) map into families by benchmark, not by metric or baseline: a ratio is
"times better than its baseline", unitless, so ``verify_attn.time_us`` against ``impl=triton``, ``impl=flashinfer``
and ``impl=cuda_v26`` and ``verify_attn.emulated_sm120_time_us`` against ``impl=cuda_v30bulk`` share one chart
(``verify_attn: median × vs baseline``, the series named by metric and baseline, a log axis when the ratios lie ten
times apart), never the chart of a metric's own value. Per family: its value against each parameter axis (``ctx``),
one line per shape, each phase's threshold drawn only over the cases its gates cover, and its value across runs
when two runs or more measured it. The report holds them (``charts``); each phase names the ones that draw its
gates.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tracker.base.contract import set_fingerprint, utc_time
from tracker.core.model import BenchGate, Plan, ResultRun, Status
from tracker.core.moves import Move
from tracker.core.timeline import Transition
from tracker.report.changes import Change, phase_change
from tracker.report.detail import BenchFigures, GateDetail, PhaseDetail
from tracker.report.families import GateRef, ReportChart, family_charts

if TYPE_CHECKING:
    from tracker.git.log import Commit
    from tracker.report.digest_lines import Digest

# Statuses in the order a summary lists them: what needs attention first.
STATUS_ORDER = (Status.REGRESSED, Status.STALE, Status.BLOCKED, Status.IN_PROGRESS, Status.PLANNED, Status.DONE)
MAX_COMMITS = 5  # per phase: the newest ones, and how many more there were (a report read in a minute)


class Scope(NamedTuple):
    """What a report covers: every plan, one plan or one milestone (``name`` is the plan id or the milestone)."""

    kind: str  # "all" | "plan" | "milestone"
    name: str | None

    @property
    def title(self) -> str:
        """The report's heading."""
        if self.kind == "milestone":
            return f"Milestone {self.name}"
        return f"Plan {self.name}" if self.kind == "plan" else "Every plan"


class Period(NamedTuple):
    """The stretch a report covers (module docstring). ``kind``: ``everything``, ``since-ref`` or
    ``since-report``; ``start``: the time it starts after (a previous report's ``through``; for ``since-ref`` the
    commit time of REF, shown only: evidence files decide); ``through``: the newest evidence of the scope."""

    kind: str
    ref: str | None = None  # REF as given
    ref_commit: str | None = None  # its full id
    start: str | None = None
    through: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The period as ``--json`` prints it (and a report records it, for the next one to start there)."""
        return self._asdict()


class CommitRow(NamedTuple):
    """A commit of the period that touched a phase's ``paths``, with the files of those it changed."""

    sha: str
    short: str
    time: str
    author: str
    subject: str
    paths: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """The commit as ``--json`` prints it."""
        return {**self._asdict(), "paths": list(self.paths)}


class BenchRow(NamedTuple):
    """One bench gate of the report's benchmark table: its figures on the run that decided it (None when no value
    was computed; ``reason`` says why) and that run's provenance."""

    phase: str
    gate: int
    label: str
    met: bool
    failed: bool
    reason: str
    figures: BenchFigures | None
    machine: str | None
    commit: str | None
    dirty: bool | None
    code: str | None  # the set fingerprint of the files the run measured, 12 hex digits
    time: str | None

    def as_json(self) -> dict[str, Any]:
        """The row as ``--json`` prints it (non-finite numbers as null)."""
        out = self._asdict()
        out["figures"] = None if self.figures is None else self.figures.as_json()
        return out


class PhaseReport(NamedTuple):
    """One phase as the report shows it: its detail, its status change in the period (``move``: all its moves), why
    it is not done, the commits that touched its paths, its bench gates' figures and charts."""

    detail: PhaseDetail
    changes: tuple[Change, ...]  # at most one: the net move (tracker.report.changes)
    move: Move | None  # the period's transitions of the phase, None when there were none
    pending: tuple[str, ...]  # why it is not done, one reason a line (empty when done)
    commits: tuple[CommitRow, ...]  # newest first, at most MAX_COMMITS, in --json too (more_commits counts the rest)
    more_commits: int
    bench: tuple[BenchRow, ...]
    charts: tuple[str, ...]  # the ids of the report's charts that draw one of its gates

    def as_json(self) -> dict[str, Any]:
        """The phase as ``--json`` prints it: its detail's fields, then the report's (its commits as the report lists
        them: the newest MAX_COMMITS, ``more_commits`` the rest; each subject and path list whole)."""
        return {
            **self.detail.as_json(),
            "changes": [t.as_json() for t in self.changes],
            "moves": None if self.move is None else self.move.as_json(),
            "pending": list(self.pending),
            "commits": [c.as_json() for c in self.commits],
            "more_commits": self.more_commits,
            "bench": [b.as_json() for b in self.bench],
            "charts": list(self.charts),
        }


class PlanReport(NamedTuple):
    """One plan of the report, its phases in file order."""

    id: str
    title: str
    path: str
    milestone: str | None
    phases: tuple[PhaseReport, ...]

    @property
    def counts(self) -> dict[str, int]:
        """{status: phases} in :data:`STATUS_ORDER`, statuses no phase has left out."""
        return _counts(p.detail.status for p in self.phases)

    def as_json(self) -> dict[str, Any]:
        """The plan as ``--json`` prints it."""
        return {
            "id": self.id,
            "title": self.title,
            "path": self.path,
            "milestone": self.milestone,
            "counts": self.counts,
            "phases": [p.as_json() for p in self.phases],
        }


class Report(NamedTuple):
    """The whole report (module docstring)."""

    scope: Scope
    period: Period
    plans: tuple[PlanReport, ...]
    charts: tuple[ReportChart, ...] = ()  # per metric family (tracker.report.families), in the plans' order
    digest: Digest | None = None  # where the phases stand (tracker.report.digest_lines), filled in by the assembler

    @property
    def phases(self) -> list[PhaseReport]:
        """Every phase of the report, in plan file order."""
        return [ph for p in self.plans for ph in p.phases]

    @property
    def counts(self) -> dict[str, int]:
        """{status: phases} over the report, in :data:`STATUS_ORDER`."""
        return _counts(ph.detail.status for ph in self.phases)

    @property
    def gates(self) -> tuple[int, int]:
        """(gates met, gates) over the report."""
        gates = [g for ph in self.phases for g in ph.detail.gates]
        return sum(g.met for g in gates), len(gates)

    @property
    def changes(self) -> list[Change]:
        """Every status change of the period (moves that stayed), oldest first."""
        return sorted((t for ph in self.phases for t in ph.changes), key=lambda t: (t.time, t.key))

    @property
    def pending(self) -> list[PhaseReport]:
        """The phases not done, regressed first (:data:`STATUS_ORDER`), then in plan file order."""
        rank = {s: i for i, s in enumerate(STATUS_ORDER)}
        return sorted((ph for ph in self.phases if ph.pending), key=lambda ph: rank[ph.detail.status])

    @property
    def bench(self) -> list[BenchRow]:
        """Every bench gate's row."""
        return [row for ph in self.phases for row in ph.bench]

    @property
    def title(self) -> str:
        """The report's heading."""
        return self.scope.title

    def as_json(self) -> dict[str, Any]:
        """The report as ``--json`` prints it: JSON-safe (no NaN), nothing that changes between two runs."""
        met, total = self.gates
        return {
            "scope": self.scope._asdict(),
            "period": self.period.as_json(),
            "counts": self.counts,
            "gates": {"met": met, "total": total},
            "changes": [t.as_json() for t in self.changes],
            "digest": None if self.digest is None else self.digest.as_json(),
            "plans": [p.as_json() for p in self.plans],
            "charts": [c.as_json() for c in self.charts],
        }


def _counts(statuses: Iterable[Status]) -> dict[str, int]:
    seen = list(statuses)
    return {s.value: n for s in STATUS_ORDER if (n := seen.count(s))}


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _utc(text: str) -> str:
    return utc_time(text) or text


# --- the period ----------------------------------------------------------------------------------------------


def newest_evidence(details: Iterable[PhaseDetail]) -> str | None:
    """The newest time among the evidence behind ``details``' verdicts and transitions (UTC), or None."""
    times = [_utc(g.source.time) for d in details for g in d.gates if g.source is not None]
    times += [t.time for d in details for t in d.history]
    return max(times, default=None)


def in_period(t: Transition, period: Period, at_ref: frozenset[str] | None) -> bool:
    """Did ``t`` happen in the period? ``at_ref``: the evidence files REF's tree holds (``since-ref``)."""
    if period.kind == "since-ref":
        return at_ref is None or t.file not in at_ref
    if period.kind == "since-report" and period.start is not None:
        return t.time > period.start
    return True


def commits_in_period(commits: Iterable[Commit], period: Period) -> list[Commit]:
    """The commits of ``commits`` (already ``REF..HEAD`` for ``since-ref``) up to ``through``, after ``start`` for
    ``since-report``; none when the scope has no evidence (the period has no end)."""
    if period.through is None:
        return []
    start = period.start if period.kind == "since-report" else None
    return [c for c in commits if c.time and c.time <= period.through and (start is None or c.time > start)]


# --- building ------------------------------------------------------------------------------------------------


def build(
    scope: Scope,
    period: Period,
    plans: Sequence[Plan],
    details: Sequence[PhaseDetail],
    results: Sequence[ResultRun] = (),
    commits: Sequence[Commit] = (),
    *,
    at_ref: frozenset[str] | None = None,
    bounds: MutableMapping[str, float] | None = None,
    start: Mapping[str, Status] | None = None,
    ended: Mapping[str, Status] | None = None,
    outcomes: MutableMapping[str, Any] | None = None,
) -> Report:
    """The report on ``details`` (the scope's phases, with their histories) of ``plans``.

    ``period``'s ``through`` is filled in here (:func:`newest_evidence`); ``results``: every valid result run (bench
    rows and charts); ``commits``: the commits the period may hold, newest first (``REF..HEAD``, or the whole history);
    ``at_ref``: the evidence files of REF's tree; ``bounds``: bootstrap bounds known already; ``start``: the statuses
    the period starts from where the previous report recorded them; ``outcomes``: each gate's outcome on each run
    alone, known already (the charts across runs; filled in)."""
    period = period._replace(through=newest_evidence(details))
    by_key = {d.key: d for d in details}
    touched = _commits_by_phase(commits_in_period(commits, period), plans, set(by_key))
    runs = {r.path: r for r in results}
    ordered = sorted(results, key=lambda r: (r.time, r.path))
    refs: list[GateRef] = []
    out = []
    for plan in plans:
        phases = []
        for phase in plan.phases:
            d = by_key.get(f"{plan.id}/{phase.id}")
            if d is None:
                continue
            bench = tuple(_bench_row(d, g, runs) for g in d.gates if g.kind == "bench")
            for g in d.gates:
                gate = phase.gates[g.number - 1]
                if isinstance(gate, BenchGate):
                    refs.append(GateRef(d.key, g.number, gate, runs.get(g.bench.run) if g.bench is not None else None))
            listed = touched.get(d.key, [])
            move, change = phase_change(d, [t for t in d.history if in_period(t, period, at_ref)], start, ended)
            phases.append(
                PhaseReport(
                    detail=d,
                    changes=change,
                    move=move,
                    pending=tuple(pending_reasons(d, by_key)),
                    commits=tuple(listed[:MAX_COMMITS]),
                    more_commits=max(0, len(listed) - MAX_COMMITS),
                    bench=bench,
                    charts=(),
                )
            )
        if phases:
            out.append(PlanReport(plan.id, plan.title, plan.path, plan.milestone, tuple(phases)))
    charts = tuple(family_charts(refs, ordered, bounds, outcomes))
    out = [
        p._replace(phases=tuple(ph._replace(charts=_chart_ids(charts, ph.detail.key)) for ph in p.phases)) for p in out
    ]
    return Report(scope, period, tuple(out), charts)


def _chart_ids(charts: Sequence[ReportChart], key: str) -> tuple[str, ...]:
    return tuple(c.id for c in charts if key in c.phases)


def _commits_by_phase(commits: Sequence[Commit], plans: Sequence[Plan], keys: set[str]) -> dict[str, list[CommitRow]]:
    """{PLAN/PHASE: the commits that changed a file its ``paths`` match, newest first}. One glob query per
    distinct ``paths`` over the files the commits changed (not one per commit and phase)."""
    from tracker.base.file_index import FileIndex

    if not commits:
        return {}
    by_path: dict[str, list[int]] = {}
    for i, c in enumerate(commits):
        for path in c.paths:
            by_path.setdefault(path, []).append(i)
    index = FileIndex(dict.fromkeys(by_path, ""))
    out: dict[str, list[CommitRow]] = {}
    for plan in plans:
        for phase in plan.phases:
            key = f"{plan.id}/{phase.id}"
            if key not in keys or not phase.paths:
                continue
            matched = index.match(phase.paths)
            hits: dict[int, list[str]] = {}
            for path in matched:
                for i in by_path[path]:
                    hits.setdefault(i, []).append(path)
            out[key] = [
                CommitRow(c.sha, c.short, c.time, c.author, c.subject, tuple(sorted(hits[i])))
                for i in sorted(hits)
                for c in (commits[i],)
            ]
    return out


def pending_reasons(d: PhaseDetail, others: Mapping[str, PhaseDetail] | None = None) -> list[str]:
    """Why a phase is not done, one reason a line (empty when it is done): what blocks it, which files staled it,
    since when and by which evidence it regressed, and every unmet gate's reason."""
    if d.status is Status.DONE:
        return []
    out: list[str] = []
    if d.status is Status.BLOCKED:
        statuses = dict(d.depends)
        out += [f"blocked by {dep} ({statuses.get(dep) or 'its plan file is invalid'})" for dep in d.blocked_by]
    if d.status is Status.STALE:
        if d.changed:
            out.append("stale: changed since its evidence: " + ", ".join(d.changed))
        out += [f"gate {g.number}: {g.stale}" for g in d.gates if g.stale and not d.changed]
    if d.status is Status.REGRESSED:
        since = next((t for t in reversed(d.history) if t.status is Status.REGRESSED), None)
        if since is not None:
            commit = f", commit {since.commit[:7]}" if since.commit else ""
            out.append(f"regressed since {since.time} ({since.file}{commit}, {since.machine})")
    for g in d.gates:
        if not g.met:
            out.append(f"gate {g.number} ({g.label}): {g.reason}")
    return out or [d.note or d.status.value]


def _bench_row(d: PhaseDetail, g: GateDetail, runs: Mapping[str, ResultRun]) -> BenchRow:
    run = runs.get(g.bench.run) if g.bench is not None else None
    src = g.source
    return BenchRow(
        phase=d.key,
        gate=g.number,
        label=g.label,
        met=g.met,
        failed=g.failed,
        reason=g.reason,
        figures=g.bench,
        machine=src.machine if src else None,
        commit=src.commit if src else None,
        dirty=run.dirty if run is not None else None,
        code=set_fingerprint(run.files)[:12] if run is not None and run.files else None,
        time=src.time if src else None,
    )
