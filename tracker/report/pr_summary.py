"""A pull request's status summary (pure; ``tracker report --format github --since REV``): which phases changed
status between REV and now, each with the figure that decides it, in Markdown short enough for a job's summary page
(``$GITHUB_STEP_SUMMARY``, capped by GitHub at 1 MiB: this aims for a page).

The comparison is ``tracker summary --against REV``'s (:mod:`tracker.report.commit_summary`, statuses at REV read by
:mod:`tracker.git.at_revision`: REV's plans, evidence and code against the working tree's), not a report's period: a
pull request's question is "what does this branch change?", and a phase made stale by the branch's code, with no new
evidence at all, is one answer. The deciding figure is the digest's (:func:`tracker.report.digest.deciding_of`: the
worst unmet gate against its threshold with the gap, a benchmark's value against its threshold), with the evidence and
result files the phase's verdicts now rest on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from tracker.report.commit_summary import BenchDelta, Summary, number
from tracker.report.detail import PhaseDetail
from tracker.report.digest import deciding_of
from tracker.report.gate_edits import WEAKER, GateEdit
from tracker.report.md_filters import md, md_code

MAX_CHANGES = 40  # rows of the changes table; the rest are counted
MAX_DELTAS = 8  # rows of the benchmark table
MAX_FILES = 3  # evidence files named per phase
# How far a status is from done: a change to a lower rank (or a phase removed) takes the branch further from done.
_RANK = {"done": 5, "in-progress": 3, "planned": 2, "blocked": 2, "stale": 1, "regressed": 0}


class PrChange(NamedTuple):
    """A phase whose status differs between REV and now."""

    key: str  # PLAN/PHASE
    title: str
    before: str | None  # its status at REV; None: not a phase there
    after: str | None  # now; None: not a phase now
    deciding: str  # what decides it now (the digest's figure), or why it is what it is
    files: tuple[str, ...]  # the evidence and result files its verdicts rest on now

    def as_json(self) -> dict[str, Any]:
        return {**self._asdict(), "files": list(self.files)}


class PrSummary(NamedTuple):
    """The summary's data: REV, its commit, the changes, the benchmark figures that moved, notes."""

    since: str
    commit: str | None
    changes: tuple[PrChange, ...]
    bench: tuple[BenchDelta, ...]
    notes: tuple[str, ...]  # plan files not compared (not valid on one side)
    gates: tuple[GateEdit, ...] = ()  # gates edited in the plans since REV

    @property
    def weaker(self) -> tuple[GateEdit, ...]:
        """The edits that ask (or may ask) less of the evidence (a gate loosened, removed or changed, a dependency
        dropped)."""
        return tuple(g for g in self.gates if g.kind in WEAKER)

    def as_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "commit": self.commit,
            "changes": [c.as_json() for c in self.changes],
            "bench": [b.as_json() for b in self.bench],
            "notes": list(self.notes),
            "gates": [g.as_json() for g in self.gates],
        }


def pr_summary(summary: Summary, details: Mapping[str, PhaseDetail], keys: set[str] | None = None) -> PrSummary:
    """The pull request summary of ``summary`` (REV against now), each change read off the phase's ``details`` now;
    ``keys``: only these phases (a PLAN or milestone scope; None: all)."""
    changes: list[PrChange] = []
    for c in summary.changes:
        if keys is not None and c.key not in keys:
            continue
        d = details.get(c.key)
        deciding = c.reason
        files: tuple[str, ...] = ()
        if d is not None:
            met = sum(g.met for g in d.gates)
            deciding = deciding_of(d) or f"{met}/{len(d.gates)} gates met"
            files = tuple(
                dict.fromkeys(
                    f for g in d.gates if (f := g.bench.run if g.bench else g.source.file if g.source else None)
                )
            )
        before = None if c.before is None else c.before.value
        after = None if c.after is None else c.after.value
        changes.append(PrChange(c.key, c.title, before, after, deciding, files))
    # Worst first (a regression, then what the branch took further from done), so that the table's cut never hides
    # one; the benchmark figures that moved in the scope, whether or not a status changed (a gate loosened beside a
    # slower result changes none).
    changes.sort(key=lambda c: (c.after != "regressed", not worse(c), c.key))
    bench = tuple(b for b in summary.bench if keys is None or b.gate.partition("#")[0] in keys)
    gates = tuple(g for g in summary.gates if keys is None or g.key.partition("#")[0] in keys)
    return PrSummary(summary.against, summary.commit, tuple(changes), bench, summary.invalid, gates)


def worse(c: PrChange) -> bool:
    """Did the branch take this phase further from done (regressed, stale, removed, or a status lower than REV's)?
    A phase new in the branch is no step back."""
    if c.after is None or c.after in ("regressed", "stale"):
        return True
    return c.before is not None and _RANK.get(c.after, 0) < _RANK.get(c.before, 0)


def markdown(pr: PrSummary) -> str:
    """The summary as GitHub-flavoured Markdown: a heading, a table of the changes (at most :data:`MAX_CHANGES`),
    the benchmark figures that moved (at most :data:`MAX_DELTAS`); one line when no phase changed status."""
    rev = md_code(pr.since) + (f" ({md_code(pr.commit[:7])})" if pr.commit else "")
    lines: list[str] = []
    if not pr.changes:
        lines = [f"### {'⚠️ ' if pr.weaker else ''}tracker: no phase changed status since {rev}"]
    else:
        bad = any(map(worse, pr.changes)) or pr.weaker
        mark = "❌" if any(c.after == "regressed" for c in pr.changes) else "⚠️" if bad else "✅"
        lines = [f"### {mark} tracker: {len(pr.changes)} phase(s) changed status since {rev}", ""]
        lines += ["| Phase | Change | What decides it | Evidence |", "| --- | --- | --- | --- |"]
    for c in pr.changes[:MAX_CHANGES]:
        change = f"{c.before or 'new'} → **{c.after or 'removed'}**"
        files = ", ".join(md_code(f) for f in c.files[:MAX_FILES]) + (
            f" and {len(c.files) - MAX_FILES} more" if len(c.files) > MAX_FILES else ""
        )
        lines.append(f"| **{md(c.key)}** {md(c.title)} | {change} | {md(c.deciding) or '—'} | {files or '—'} |")
    if len(pr.changes) > MAX_CHANGES:
        lines += ["", f"… and {len(pr.changes) - MAX_CHANGES} more: `tracker summary --against {md(pr.since)}`."]
    if pr.gates:
        lines += ["", f"**Gates edited in the plans** ({len(pr.weaker)} ask or may ask less of the evidence):", ""]
        # Those that ask less first: a long list of tightened gates never pushes one out of sight.
        for g in sorted(pr.gates, key=lambda g: g.kind not in WEAKER)[:MAX_CHANGES]:
            what = md(g.what.replace(" -> ", " → "))
            lines.append(f"- {'⚠️ ' if g.kind in WEAKER else ''}{md(g.key)} **{g.kind}**: {what}")
        if len(pr.gates) > MAX_CHANGES:
            lines.append(f"- … and {len(pr.gates) - MAX_CHANGES} more: `tracker summary --against {md(pr.since)}`.")
    if pr.bench:
        lines += [
            "",
            "| Benchmark | Case | Before → now | Threshold | Result file |",
            "| --- | --- | --- | --- | --- |",
        ]
        lines += [_delta_row(b) for b in pr.bench[:MAX_DELTAS]]
        if len(pr.bench) > MAX_DELTAS:
            lines += ["", f"… and {len(pr.bench) - MAX_DELTAS} more benchmark figures."]
    return "\n".join([*lines, "", *_notes(pr.notes)]).rstrip("\n") + "\n"


def _delta_row(b: BenchDelta) -> str:
    def shown(x: float | None, unit: str = b.unit) -> str:
        if x is None:
            return "—"
        return f"{number(x)}x" if unit == "x" else f"{number(x)} {unit}".rstrip()

    case = b.case + (f" vs {b.baseline}" if b.baseline else "")
    need = f"{b.op} {shown(b.threshold)}"
    run = md_code(b.after_run) if b.after_run else "—"
    was = shown(b.before, b.unit_before)
    if b.before_stat:  # another statistic at the revision (a gate's stat edited): each named, not compared
        moved = md(f"{b.before_stat} {was} → {b.stat} {shown(b.after)} (not compared)")
    else:
        moved = md(f"{was} → {shown(b.after)}" + (" (another unit, not compared)" if b.before_unit is not None else ""))
    return f"| {md(b.gate)} {md(b.metric)} {md(b.stat)} | {md(case) or '—'} | {moved} | {md(need)} | {run} |"


def _notes(notes: Sequence[str]) -> list[str]:
    return [f"- {md(n)}" for n in notes]
