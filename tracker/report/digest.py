"""Where a report's phases stand, one line a phase (pure): the digest a report opens with, so that a person answers
"how far from done, and what is nearest?" from the first screen.

A line says a phase's status, its gates met, and the figure that decides when it is done: for a phase not done, the
unmet gate furthest from its threshold (every gate must be met, so the worst one decides), as its value against the
threshold with the gap (``0.276 at ctx=23000 heads=8, needs ≥ 0.500: 0.224 short (44.8%)``); a test or sign-off gate
by its reason; a blocked phase by what blocks it. Since the previous report: a status change of the period, else how
the deciding figure moved since the newest run before the period began (a milestone report's period starts where the
previous report ended; since a REF, the result files REF's tree holds).

Phases are ordered by how near they are to done: not blocked before blocked, then by the share of gates unmet, then by
the worst gap; done phases last, in plan order. Nothing here reads a file: the report's data and the result runs in,
lines out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from datetime import datetime
from typing import Any

from tracker.base.contract import utc_time
from tracker.core.bench_verdict import evaluate, fmt_num, fmt_params
from tracker.core.model import BenchGate, Plan, ResultRun, Status
from tracker.report.data import PhaseReport, Report
from tracker.report.detail import BenchFigures, GateDetail, PhaseDetail
from tracker.report.digest_lines import Digest, DigestLine

# A gate whose distance to its threshold the figures cannot tell (a test, a sign-off, a bench gate without a value):
# as far as a bench gate twice its threshold away.
UNKNOWN_GAP = 1.0
NO_GATES = "no gates: a phase without gates is never done"


def build_digest(
    report: Report,
    plans: Sequence[Plan],
    results: Sequence[ResultRun] = (),
    bounds: MutableMapping[str, float] | None = None,
    at_ref: frozenset[str] | None = None,
) -> Digest:
    """The digest of ``report`` (built from ``plans``; ``results``: the result runs it read, for the deciding
    figures' values before the period; ``bounds``: bootstrap bounds known already; ``at_ref``: for a ``since-ref``
    period, the result files REF's tree holds, which are the ones before it: there evidence files decide, not
    times, as for the period's changes)."""
    gates = {f"{p.id}/{ph.id}": ph.gates for p in plans for ph in p.phases}
    if report.period.kind == "since-ref" and at_ref is not None:
        earlier = [r for r in results if r.path in at_ref]
    else:
        start = _start(report)
        earlier = [r for r in results if start is not None and r.time <= start]
    earlier.sort(key=lambda r: (r.time, r.path))
    lines = [_line(ph, gates.get(ph.detail.key, ()), earlier, bounds) for ph in report.phases]
    pending = _together(sorted((x for x in lines if x.status is not Status.DONE), key=lambda x: x.order))
    met, total = report.gates
    return Digest(
        done=sum(x.status is Status.DONE for x in lines),
        phases=len(lines),
        met=met,
        gates=total,
        changes=len(report.changes),
        pending=tuple(pending),
        finished=tuple(x for x in lines if x.status is Status.DONE),
    )


def _together(lines: list[DigestLine]) -> list[DigestLine]:
    """Stale phases with the same reason and nothing else to tell as one line (a changed shared file stales many),
    at the first of them. One pass: every line was compared with every line kept (5,000 pending phases of the
    synthetic repository: 12.5 million comparisons, a third of its report's time)."""
    out: list[DigestLine] = []
    first: dict[str, int] = {}  # a joinable line's reason -> where its line is in out
    for x in lines:
        if _joinable(x):
            at = first.get(x.deciding)
            if at is not None:
                out[at] = out[at]._replace(others=(*out[at].others, x.key))
                continue
            first[x.deciding] = len(out)
        out.append(x)
    return out


def _joinable(a: DigestLine) -> bool:
    """A stale phase whose gates are all met, with no move in the period to tell: its reason says everything."""
    return a.status is Status.STALE and not a.since and a.met == a.total


def _start(report: Report) -> datetime | None:
    text = utc_time(report.period.start) if report.period.start else None
    if text is None:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _line(
    ph: PhaseReport, defined: Sequence[Any], earlier: Sequence[ResultRun], bounds: MutableMapping[str, float] | None
) -> DigestLine:
    d = ph.detail
    met = sum(g.met for g in d.gates)
    total = len(d.gates)
    unmet = [g for g in d.gates if not g.met]
    worst = max(unmet, key=_gap, default=None)
    blocked = d.status is Status.BLOCKED
    deciding = deciding_of(d)
    # A phase without gates is never done (tracker.core.status): after every phase with a gate to meet.
    share = len(unmet) / total if total else 1.0
    gap = _gap(worst) if worst is not None else (0.01 if d.status is Status.STALE else math.inf if not total else 0.0)
    since = _since(ph, worst, defined, earlier, bounds)
    return DigestLine(d.key, d.title, d.status, met, total, deciding, since, (int(blocked), share, gap))


def deciding_of(d: PhaseDetail) -> str:
    """The figure that decides when phase ``d`` is done, with its gap ("" for a done phase): its worst unmet gate
    against the threshold (and the nearest one), why it is stale, what blocks it (module docstring)."""
    unmet = [g for g in d.gates if not g.met]
    worst = max(unmet, key=_gap, default=None)
    if d.status is Status.DONE:
        deciding = ""
    elif d.status is Status.STALE and not unmet:
        deciding = "stale: " + (
            "changed since its evidence: " + _few(d.changed)
            if d.changed
            else next((g.stale for g in d.gates if g.stale), "evidence out of date")
        )
    elif worst is not None:
        nearest = min((x for x in unmet if x.bench is not None), key=_gap, default=None)
        deciding = _deciding(worst, len(unmet), len(d.gates), nearest)
    elif not d.gates:
        deciding = NO_GATES
    else:
        deciding = d.note or d.status.value
    if d.status is Status.BLOCKED:
        deciding = f"blocked by {_few(d.blocked_by)}" + (f"; {deciding}" if deciding else "")
    return deciding


def _few(items: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _gap(g: GateDetail) -> float:
    """How far gate ``g``'s value is from its threshold, relative to it (0: at it or past it; UNKNOWN_GAP when
    unknown): the figure the line shows. Not the margin, which a gate with a confidence measures from a bound: a
    missed gate's bound is the far side of its interval, so the noisier its samples, the nearer it would look."""
    f = g.bench
    if f is None or not math.isfinite(f.value) or not f.threshold:
        return UNKNOWN_GAP
    gap = (f.threshold - f.value if f.op == "≥" else f.value - f.threshold) / abs(f.threshold)
    return max(0.0, gap) if math.isfinite(gap) else UNKNOWN_GAP


def _deciding(g: GateDetail, unmet: int, total: int, nearest: GateDetail | None = None) -> str:
    count = f"{unmet} of {total} gates unmet" if unmet > 1 else f"gate {g.number} unmet"
    f = g.bench
    if f is None:
        return f"{count}; gate {g.number}: {g.reason}"
    out = f"{count}; worst, gate {g.number}: {figure(f, g.definition, failed=g.failed)}"
    if nearest is not None and nearest is not g and nearest.bench is not None:
        out += f"; nearest, gate {nearest.number}: {figure(nearest.bench, nearest.definition, failed=nearest.failed)}"
    return out


def figure(f: BenchFigures, definition: Mapping[str, Any], *, failed: bool = False) -> str:
    """A bench gate's deciding figure in one phrase: its value where it was measured, the threshold and the gap.
    ``failed``: the gate's verdict is a miss (an undecided newest run leaves the last decided run's miss standing)."""
    where = definition.get("where")
    shown = " ".join((fmt_params(where) if isinstance(where, dict) and where else fmt_params(f.params)).split())
    show = _percent if f.unit == "fraction" else _with_unit(f.unit)
    value = f"{f.metric.rsplit('.', 1)[-1]} {show(f.value)}"
    if f.baseline:
        value += " vs " + " ".join(fmt_params(f.baseline).split())
    at = f" at {shown}" if shown else ""
    need = f"needs {f.op} {show(f.threshold)}"
    if not math.isfinite(f.value):  # a ratio past float range, a NaN: never meets a gate, whatever the threshold
        return f"{value}{at}, {need}: not a finite number, which meets no gate"
    if f.undecided:
        stands = "; the last run that decided missed it, and that verdict stands" if failed else ""
        return f"{value}{at}, {need}: undecided (inside its noise){stands}"
    gap = f.threshold - f.value if f.op == "≥" else f.value - f.threshold
    if not gap > 0:
        return f"{value}{at}, {need}: met by its value, not yet by its {_pct(f.confidence)} bound"
    if f.unit == "fraction":
        return f"{value}{at}, {need}: {fmt_num(round(gap * 100, 9))} points short"
    rel = f" ({_percent(gap / abs(f.threshold))})" if f.threshold else ""  # 3 significant digits: never "(0.0%)"
    return f"{value}{at}, {need}: {show(gap)} short{rel}"


def _percent(x: float) -> str:
    return f"{fmt_num(x * 100)}%"


def _with_unit(unit: str) -> Callable[[float], str]:
    def show(x: float) -> str:
        return f"{fmt_num(x)}{unit}" if unit == "×" else f"{fmt_num(x)} {unit}" if unit else fmt_num(x)

    return show


def _pct(confidence: float | None) -> str:
    return f"{confidence:.0%}" if confidence is not None else "confidence"


def _since(
    ph: PhaseReport,
    worst: GateDetail | None,
    defined: Sequence[Any],
    earlier: Sequence[ResultRun],
    bounds: MutableMapping[str, float] | None,
) -> str:
    move = ph.move
    if move is not None:
        # The evidence's transitions end where the evidence left the phase; a status it has since without new
        # evidence (stale: its files changed; blocked again: a dependency went stale) is said, or the move reads
        # as the phase's status now.
        still = f"; {ph.detail.status.value} now" if ph.detail.status is not move.status else ""
        if not move.changed:
            return move.summary + still  # flapped, and came back
        via = f" ({move.summary})" if move.summary else ""
        return f"{move.previous.value} → {move.status.value} at {move.last.time}{via}{still}"
    if worst is None or worst.bench is None or not earlier or worst.number > len(defined):
        return ""
    gate = defined[worst.number - 1]
    if not isinstance(gate, BenchGate):
        return ""
    for run in reversed(earlier):
        if not any(c.metric == gate.bench for c in run.cases):
            continue
        before = evaluate(gate, [run], bounds, by_value=True).value
        if before is None or not math.isfinite(before):
            continue
        now = worst.bench.value
        if run.path == worst.bench.run or now == before:
            return "unchanged"
        f = worst.bench
        if f.unit == "fraction":
            return f"{'+' if now > before else '−'}{fmt_num(abs(now - before) * 100)} points (was {_percent(before)})"
        show = _with_unit(f.unit)
        return f"{'+' if now > before else '−'}{show(abs(now - before))} (was {show(before)})"
    return ""
