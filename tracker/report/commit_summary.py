"""The commit message ``tracker summary`` drafts, as data first (pure): which phases changed status between a
revision and the working tree and why, the benchmark figures that moved, the evidence the change brings; then its
text, and the same trailers merged into a message someone already wrote.

The text is made here in Python rather than from a template: a commit message is a few lines whose subject must be
cut to fit (under 72 characters, whatever the plans hold), which is an algorithm, not a layout; and the hook runs on
every commit, where jinja2's import would double the cost.

What goes into a commit message is text git reads back: the subject is one line; no line starts with the comment
character (git strips those as comments when an editor is used: :func:`kept_by_git`); no line carries a line break
or control character of a plan's text (a title holding ``\\n\\nPhase-Done: 9999/P1`` would forge a trailer); the
trailers are the last paragraph, one ``Key: value`` per line, in the form ``git interpret-trailers --parse`` reads.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tracker.base.file_index import FileIndex
from tracker.core.model import BenchGate, PhaseStatus, Plan, Status, gate_key
from tracker.report.gate_edits import WEAKER, GateEdit, gate_edits

if TYPE_CHECKING:
    from tracker.report.detail import BenchFigures

SUBJECT_MAX = 71  # characters: "under 72"
WIDTH = 72  # the body's lines are wrapped to this, as git's own documentation asks
MAX_DELTAS = 8  # benchmark lines in the body, besides those of phases that changed status
# Subject order: what a change proved first.
ORDER = ("done", "regressed", "stale", "in-progress", "blocked", "planned", "new", "removed")
TRAILER = {status.value: "Phase-" + "-".join(w.capitalize() for w in status.value.split("-")) for status in Status}


class Side(NamedTuple):
    """The plans and statuses on one side of the comparison."""

    plans: Sequence[Plan]
    statuses: Mapping[str, PhaseStatus]


class PhaseChange(NamedTuple):
    """A phase whose status differs between the revision and now."""

    key: str  # PLAN/PHASE
    title: str
    before: Status | None  # None: not a phase at the revision (new, or its plan file was not valid there)
    after: Status | None  # None: not a phase now
    reason: str  # why it is what it is now
    detail: str = ""  # the figures that decided a bench gate, for the subject ("1.04x < 1.10x")

    @property
    def word(self) -> str:
        """How the subject says it: the new status, ``new`` or ``removed``."""
        if self.after is None:
            return "removed"
        return "new" if self.before is None else self.after.value

    def as_json(self) -> dict[str, Any]:
        return {
            "phase": self.key,
            "title": self.title,
            "from": None if self.before is None else self.before.value,
            "to": None if self.after is None else self.after.value,
            "reason": self.reason,
            "detail": self.detail,
        }


class BenchDelta(NamedTuple):
    """A bench gate whose figure changed: before and after, the threshold it is held to."""

    gate: str  # PLAN/PHASE#N
    metric: str
    case: str  # the measured case's parameters, ``impl=cuda, ctx=91000``
    baseline: str  # a ratio gate's baseline parameters ("" otherwise)
    stat: str
    unit: str  # ``x`` for a ratio
    before: float | None
    after: float | None
    op: str  # ``>=`` or ``<=``
    threshold: float
    before_run: str | None
    after_run: str | None
    # Set only when the revision's figure is another statistic, or in a unit this one cannot be converted from (a
    # gate's ``stat`` or ``unit`` edited): its own statistic and unit; such figures are shown, never compared.
    before_stat: str = ""
    before_unit: str | None = None  # None: ``unit``; "" for a figure that had none

    @property
    def comparable(self) -> bool:
        """Are ``before`` and ``after`` the same statistic in the same unit?"""
        return not self.before_stat and self.before_unit is None

    @property
    def unit_before(self) -> str:
        """The unit ``before`` is in."""
        return self.unit if self.before_unit is None else self.before_unit

    @property
    def ratio(self) -> float | None:
        """after / before (None when either is missing, the two are not comparable or the quotient is not a
        number)."""
        if self.before is None or self.after is None or self.before == 0 or not self.comparable:
            return None
        ratio = self.after / self.before
        return ratio if math.isfinite(ratio) else None

    def as_json(self) -> dict[str, Any]:
        out = self._asdict()
        out["ratio"] = self.ratio
        for name in ("before", "after", "threshold", "ratio"):
            x = out[name]
            out[name] = x if x is None or math.isfinite(x) else None
        return out


class Summary(NamedTuple):
    """Everything the message says, and the message."""

    against: str  # the revision as given
    commit: str | None  # its sha (None: a branch without a commit yet)
    changes: tuple[PhaseChange, ...]
    reverified: tuple[str, ...]  # phases whose evidence changed without a change of status
    bench: tuple[BenchDelta, ...]
    evidence: tuple[str, ...]  # evidence and result files new since the revision
    gone: tuple[str, ...]  # the revision's evidence and result files that are gone now (tracker gc)
    touched: tuple[str, ...]  # phases with changed files under their paths
    code: tuple[str, ...]  # files changed since the revision, outside the evidence and the plans
    plan_files: tuple[str, ...]  # plan files changed since the revision
    invalid: tuple[str, ...]  # notes: plan files that could not be compared
    subject: str
    body: str
    trailers: tuple[tuple[str, str], ...]
    planned: bool = True  # a plan file on either side, valid or not (``--write`` writes nothing without one)
    gates: tuple[GateEdit, ...] = ()  # gates (and depends, paths) edited since the revision

    @property
    def message(self) -> str:
        """The commit message: subject, body, trailers, each paragraph apart."""
        parts = [self.subject, self.body, "\n".join(f"{k}: {v}" for k, v in self.trailers)]
        return "\n\n".join(p for p in parts if p) + "\n"

    def as_json(self) -> dict[str, Any]:
        """The summary as ``--json`` prints it."""
        return {
            "against": self.against,
            "commit": self.commit,
            "subject": self.subject,
            "body": self.body,
            "trailers": [[k, v] for k, v in self.trailers],
            "message": self.message,
            "changes": [c.as_json() for c in self.changes],
            "reverified": list(self.reverified),
            "bench": [b.as_json() for b in self.bench],
            "evidence": list(self.evidence),
            "gone": list(self.gone),
            "touched": list(self.touched),
            "code": list(self.code),
            "plan_files": list(self.plan_files),
            "invalid": list(self.invalid),
            "gates": [g.as_json() for g in self.gates],
        }


# --- what changed -------------------------------------------------------------------------------------------


def clean(text: str) -> str:
    """``text`` on one line of printable characters: line breaks and tabs as spaces, any other control or
    unprintable character (a lone surrogate of a name that is not UTF-8 included) as its escape."""
    return "".join(c if c.isprintable() else " " if c in "\t\n\r\v\f" else ascii(c)[1:-1] for c in text)


def reason(st: PhaseStatus) -> str:
    """Why a phase is what it is: its note (stale, blocked), all gates met, or its first failed (else unmet) gate."""
    if st.note:
        return st.note
    if st.status is Status.DONE:
        return f"{st.met_count} gates met"
    bad = next((v for v in st.verdicts if v.failed), None) or next((v for v in st.verdicts if not v.met), None)
    if bad is None:
        return "no gates" if not st.verdicts else ""
    return f"gate {st.verdicts.index(bad) + 1}: {bad.reason}"


def _phases(side: Side) -> dict[str, tuple[Plan, Any]]:
    return {f"{p.id}/{ph.id}": (p, ph) for p in side.plans for ph in p.phases if f"{p.id}/{ph.id}" in side.statuses}


def phase_changes(before: Side, after: Side) -> list[PhaseChange]:
    """Every phase whose status differs, in plan file order (now's, then the phases gone since)."""
    then, now = _phases(before), _phases(after)
    out: list[PhaseChange] = []
    for key, (_, phase) in now.items():
        st = after.statuses[key]
        was = before.statuses[key].status if key in then else None
        if was is not st.status:
            out.append(PhaseChange(key, phase.title, was, st.status, reason(st)))
    for key, (_, phase) in then.items():
        if key not in now:
            out.append(PhaseChange(key, phase.title, before.statuses[key].status, None, "no longer in the plans"))
    return out


def bench_pairs(before: Side, after: Side) -> list[tuple[str, BenchGate, BenchGate]]:
    """(gate key, the gate at the revision, the gate now) of the bench gates on both sides whose verdict may rest on
    another figure: another result file decided it, or another definition, or the verdict itself differs."""
    then, now = _phases(before), _phases(after)
    out: list[tuple[str, BenchGate, BenchGate]] = []
    for key, (plan, phase) in now.items():
        if key not in then:
            continue
        old_phase = then[key][1]
        for i, gate in enumerate(phase.gates):
            old = old_phase.gates[i] if i < len(old_phase.gates) else None
            if not (isinstance(gate, BenchGate) and isinstance(old, BenchGate) and gate.bench == old.bench):
                continue
            v, w = after.statuses[key].verdicts[i], before.statuses[key].verdicts[i]
            src_v = v.source.file if v.source else None
            src_w = w.source.file if w.source else None
            if (src_v, v.met, v.failed) != (src_w, w.met, w.failed) or gate.definition != old.definition:
                out.append((gate_key(plan.id, phase.id, i), old, gate))
    return out


def reverified(before: Side, after: Side) -> list[str]:
    """Phases whose status is the same on both sides but some verdict now rests on other evidence."""
    then, now = _phases(before), _phases(after)
    out = []
    for key in now:
        if key not in then or before.statuses[key].status is not after.statuses[key].status:
            continue
        sources = [(v.source.file if v.source else None) for v in after.statuses[key].verdicts]
        old = [(v.source.file if v.source else None) for v in before.statuses[key].verdicts]
        if sources != old:
            out.append(key)
    return out


def touched(plans: Sequence[Plan], changed: Iterable[str]) -> list[str]:
    """Phases of ``plans`` with a file of ``changed`` under their ``paths``."""
    index = FileIndex(dict.fromkeys(changed, ""))
    if not index.files:
        return []
    return [f"{p.id}/{ph.id}" for p in plans for ph in p.phases if ph.paths and index.match(ph.paths)]


def changed_files(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Paths whose id differs between two {path: id} maps (added, removed or edited), sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


# --- figures ---------------------------------------------------------------------------------------------------


def number(x: float) -> str:
    """A figure as a message shows it: three significant digits or so, two decimals below 10."""
    if not math.isfinite(x):
        return str(x)
    size = abs(x)
    if size >= 1e7:  # not a line of 300 digits
        return f"{x:.3g}"
    if size >= 100:
        return f"{x:.0f}"
    if size >= 10:
        return f"{x:.1f}"
    if size >= 0.01 or size == 0:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _unit(unit: str) -> str:
    return "x" if unit == "×" else clean(unit)


def with_unit(x: float, unit: str) -> str:
    """``1.04x`` for a ratio, ``0.30 fraction`` otherwise."""
    return f"{number(x)}x" if unit == "x" else f"{number(x)} {unit}".rstrip()


def delta(key: str, before: BenchFigures | None, after: BenchFigures | None) -> BenchDelta | None:
    """The delta of one gate's figures, None when neither side has a value or the value did not change. A figure of
    the revision in another time unit is converted to this one's; one of another statistic, or in a unit that does
    not convert, keeps its own (``before_stat``, ``before_unit``) and is not compared (``100 ms -> 0.10 ms`` once
    said a gate's figure fell 1,000x where only its ``unit`` was edited)."""
    from tracker.core.bench_verdict import SECONDS

    ref = after or before
    if ref is None:
        return None
    was = None if before is None else before.value
    before_stat, before_unit = "", None
    if before is not None and after is not None and (before.stat, before.unit) != (after.stat, after.unit):
        converted = None
        if before.stat == after.stat and before.unit in SECONDS and after.unit in SECONDS:
            converted = before.value * (SECONDS[before.unit] / SECONDS[after.unit])  # as bench_verdict converts
        if converted is not None and math.isfinite(converted) == math.isfinite(before.value):
            was = after.value if math.isclose(converted, after.value, rel_tol=1e-12) else converted  # last bit: no move
        else:  # another statistic, a unit that does not convert (or none), or a conversion out of range
            before_stat = before.stat if before.stat != after.stat else ""
            before_unit = _unit(before.unit) if before.unit != after.unit else None
    if not before_stat and before_unit is None and after is not None and was == after.value:
        return None

    def params(values: Mapping[str, Any] | None) -> str:
        return ", ".join(f"{clean(str(k))}={clean(str(v))}" for k, v in (values or {}).items())

    return BenchDelta(
        gate=key,
        metric=clean(ref.metric),
        case=params(ref.params),
        baseline=params(ref.baseline),
        stat=ref.stat,
        unit=_unit(ref.unit),
        before=was,
        after=None if after is None else after.value,
        op=">=" if ref.op == "≥" else "<=",
        threshold=ref.threshold,
        before_run=None if before is None else clean(before.run),
        after_run=None if after is None else clean(after.run),
        before_stat=clean(before_stat),
        before_unit=before_unit,
    )


def miss(figures: BenchFigures) -> str:
    """How a failing bench gate missed, for the subject: ``1.04x < 1.10x`` (the bound compared, when one was)."""
    compared = figures.bound if figures.bound is not None else figures.value
    op = "<" if figures.op == "≥" else ">"
    unit = _unit(figures.unit)
    if unit == "x":
        return f"{number(compared)}x {op} {number(figures.threshold)}x"
    return f"{number(compared)} {op} {with_unit(figures.threshold, unit)}"


# --- the message -----------------------------------------------------------------------------------------------


def fit(candidates: Iterable[str]) -> str:
    """The first candidate of at most :data:`SUBJECT_MAX` characters (the last one cut, should none fit)."""
    last = ""
    for text in candidates:
        if len(text) <= SUBJECT_MAX:
            return text
        last = text
    return last[: SUBJECT_MAX - 3] + "..."


def _listed(keys: Sequence[str], shown: int) -> str:
    more = len(keys) - shown
    return ", ".join(keys[:shown]) + (f" +{more}" if more > 0 else "")


EASED = ("gate loosened", "gate removed", "gate changed")  # the details of a phase done on easier terms


def _eased(members: Sequence[PhaseChange]) -> str:
    """`` (gate loosened)`` for phases done on a gate of their own loosened, whatever else the subject drops: every
    candidate of :func:`change_subject` keeps it, the shortest too (``2 phases done (1 on a gate loosened)``)."""
    n = sum(m.detail in EASED for m in members)
    if not n:
        return ""
    if len(members) == 1:
        return f" ({members[0].detail})"
    return " (gates loosened)" if n == len(members) else f" ({n} on a gate loosened)"


def change_subject(changes: Sequence[PhaseChange]) -> str:
    """``0002/P1 done; 0001/P2 regressed (1.04x < 1.10x)``; with more phases grouped, then counted."""
    groups: dict[str, list[PhaseChange]] = {}
    for c in sorted((c._replace(key=clean(c.key)) for c in changes), key=lambda c: ORDER.index(c.word)):
        groups.setdefault(c.word, []).append(c)

    def grouped(shown: int, details: bool) -> str:
        parts = []
        for word, members in groups.items():
            keys = [c.key for c in members]
            text = f"{_listed(keys, shown)} {word}"
            if word == "new" and len(members) == 1 and members[0].after is not None:
                eased = f", {members[0].detail}" if members[0].detail in EASED else ""
                text += f" ({members[0].after.value}{eased})"
            elif details and len(members) == 1 and members[0].detail:
                text += f" ({clean(members[0].detail)})"
            else:
                text += _eased(members)
            parts.append(text)
        return "; ".join(parts)

    most = max(len(m) for m in groups.values())
    counts = [f"{len(m)} {w}{_eased(m)}" for w, m in groups.items()]
    first = next(iter(groups.values()))
    counts[0] = f"{len(first)} phase{'s' if len(first) > 1 else ''} {next(iter(groups))}{_eased(first)}"
    return fit([grouped(most, True), *(grouped(shown, False) for shown in range(most, 0, -1)), ", ".join(counts)])


def quiet_subject(
    against: str, reverified: Sequence[str], evidence: Sequence[str], touched: Sequence[str], plans: Sequence[str],
    code: Sequence[str], weaker: Sequence[GateEdit] = (),
) -> str:  # fmt: skip
    """The subject when no phase changed status: what the change touched; a gate loosened or removed first ("changes"
    where one of them is only changed: neither looser nor tighter by any rule, it may ask less, or more)."""
    same = "; no status changed"
    reverified, touched = [clean(k) for k in reverified], [clean(k) for k in touched]
    if weaker:
        keys = [clean(e.key) for e in weaker]
        verb = "loosens" if all(e.kind in ("removed", "looser") for e in weaker) else "changes"
        return fit([*(f"{verb} {_listed(keys, n)}{same}" for n in range(len(keys), 0, -1)),
                    f"{verb} {len(keys)} gates{same}"])  # fmt: skip
    if reverified:
        return fit([*(f"re-verifies {_listed(reverified, n)}{same}" for n in range(len(reverified), 0, -1)),
                    f"re-verifies {len(reverified)} phases{same}"])  # fmt: skip
    if evidence:
        return fit([f"adds evidence ({len(evidence)} file{'s' if len(evidence) > 1 else ''}){same}"])
    if touched:
        return fit([*(f"touches {_listed(touched, n)}{same}" for n in range(len(touched), 0, -1)),
                    f"touches {len(touched)} phases{same}"])  # fmt: skip
    if plans:
        ids = [clean(p.rsplit("/", 1)[-1][:4]) for p in plans]
        return fit([*(f"edits plan {_listed(ids, n)}{same}" for n in range(len(ids), 0, -1)),
                    f"edits {len(ids)} plans{same}"])  # fmt: skip
    if code:
        return fit([f"changes {len(code)} file{'s' if len(code) > 1 else ''} outside every phase's paths"])
    return fit([f"no change against {clean(against)}", "no change against the revision"])


def _wrap(text: str, indent: str = "") -> str:
    """``text`` wrapped to :data:`WIDTH` (a word longer than a line, a path, stays whole)."""
    return textwrap.fill(text, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def _item(text: str) -> str:
    return _wrap("- " + text, "  ")


def _moved(delta: BenchDelta) -> float:
    """How far a figure moved, relative (infinite when it appeared or vanished)."""
    return math.inf if delta.ratio is None else delta.ratio - 1


def _the_rest(rest: Sequence[BenchDelta], since: str) -> str:
    """The line for the deltas not listed: how far the compared ones moved at most; the others (another statistic or
    unit, a figure new or gone) counted, never given a percentage."""
    moved = [abs(_moved(b)) for b in rest if b.ratio is not None]
    others = len(rest) - len(moved)
    if not moved:
        return f"and {len(rest)} more, not compared with a figure at {since} (--json lists them)"
    most = f"{max(moved):.1%}"
    if not others:
        return f"and {len(rest)} more, each within {most} of its figure at {since} (--json lists them)"
    compared = f"{len(moved)} within {most} of their figures at {since}"
    return f"and {len(rest)} more: {compared}, {others} not compared (--json lists them)"


def shown_deltas(deltas: Sequence[BenchDelta], changed: set[str]) -> list[BenchDelta]:
    """The deltas the body lists, in gate order: every one of a phase that changed status, and the
    :data:`MAX_DELTAS` others that moved most (a rerun of every benchmark moves every figure a little: the rest is
    one line, and ``--json`` has them all)."""
    own = [d for d in deltas if d.gate.rpartition("#")[0] in changed]
    others = sorted((d for d in deltas if d not in own), key=lambda d: -abs(_moved(d)))
    keep = {*own, *others[:MAX_DELTAS]}
    return [d for d in deltas if d in keep]


def body_of(summary: Summary) -> str:
    """The body: transitions, re-verified phases, benchmark deltas, touched phases and notes."""
    since = clean(summary.against) + (f" ({summary.commit[:10]})" if summary.commit else "")
    paragraphs: list[str] = []
    if summary.changes:
        lines = [f"Status at {since} -> now:"]
        for c in summary.changes:
            was = "none" if c.before is None else c.before.value
            now = "none" if c.after is None else c.after.value
            lines.append(_item(f"{c.key} {clean(c.title)}: {was} -> {now} — {clean(c.reason)}"))
        paragraphs.append("\n".join(lines))
    if summary.reverified:
        paragraphs.append(_wrap("Re-verified, status unchanged: " + ", ".join(summary.reverified)))
    if summary.bench:
        lines = ["Benchmarks:"]
        shown = shown_deltas(summary.bench, {c.key for c in summary.changes})
        for b in shown:
            case = b.case + (f" vs {b.baseline}" if b.baseline else "")
            was = "none" if b.before is None else with_unit(b.before, b.unit_before)
            now = "none" if b.after is None else with_unit(b.after, b.unit)
            ratio = f" ({number(b.ratio)}x)" if b.ratio is not None else ""
            need = f"needs {b.op} {with_unit(b.threshold, b.unit)}"
            if b.before_stat:  # another statistic: each figure named by its own, not compared
                figures = f"{b.before_stat} {was} -> {b.stat} {now} (another statistic, not compared)"
            elif b.before_unit is not None:
                figures = f"{b.stat}: {was} -> {now} (another unit, not compared)"
            else:
                figures = f"{b.stat}: {was} -> {now}{ratio}"
            lines.append(_item(f"{b.gate} {b.metric} ({case}), {figures}; {need}"))
        rest = [b for b in summary.bench if b not in shown]
        if rest:
            lines.append(_item(_the_rest(rest, since)))
        paragraphs.append("\n".join(lines))
    if summary.gates:
        lines = ["Gates edited in the plans:"]
        lines += [_item(f"{clean(e.key)} {e.kind}: {clean(e.what)}") for e in summary.gates]
        paragraphs.append("\n".join(lines))
    quiet = [t for t in summary.touched if t not in {c.key for c in summary.changes}]
    if quiet:
        paragraphs.append(_wrap("Files changed under the paths of " + ", ".join(quiet)))
    notes = [*summary.invalid]
    if summary.gone:
        notes.append(f"{len(summary.gone)} evidence file(s) of {since} gone since (tracker gc)")
    if notes:
        paragraphs.append("\n".join(_item(clean(n)) for n in notes))
    return "\n\n".join(paragraphs)


def _cut(text: str, comment: str) -> bool:
    """Would git strip a line of ``text`` as a comment (one starting with ``comment``)?"""
    return bool(comment) and any(line.startswith(comment) for line in text.split("\n"))


def kept_by_git(summary: Summary, comment: str) -> Summary | None:
    """``summary`` such that git, stripping the lines that start with ``comment`` (``core.commentChar``), keeps
    every line of its message: as it is, or with the body's bullets ``*`` where ``-`` would be cut; None where a
    line would still be cut (the subject, a paragraph's first word, a trailer's key): nothing is drafted then, as a
    message git cuts in part would say less than the change proved (``Evidence`` without its ``Phase-Done``)."""
    if not _cut(summary.message, comment):
        return summary
    body = "\n".join("* " + x[2:] if x.startswith("- ") else x for x in summary.body.split("\n"))
    stars = summary._replace(body=body)
    return None if _cut(stars.message, comment) else stars


def trailers_of(
    changes: Sequence[PhaseChange], evidence: Sequence[str], gates: Sequence[GateEdit] = ()
) -> tuple[tuple[str, str], ...]:
    """``Phase-Done: 0002/P3`` for each change (by its new status, in the subject's order, then plan file order;
    ``Phase-Removed`` for a phase gone), ``Gate-Loosened: 0004/P4#2`` (or ``Gate-Removed``, ``Gate-Changed``) for
    each gate edited to ask less (or that may), then ``Evidence: FILE`` for each new evidence or result file. Each
    value is :func:`clean`: one line, whatever a plan or a file name holds, so no value forges a trailer of its own."""
    ordered = sorted(changes, key=lambda c: ORDER.index(c.after.value if c.after is not None else "removed"))
    phases = [(TRAILER[c.after.value] if c.after is not None else "Phase-Removed", clean(c.key)) for c in ordered]
    weaker = [(f"Gate-{'Loosened' if e.kind == 'looser' else e.kind.capitalize()}", clean(e.key))
              for e in gates if e.kind in WEAKER]  # fmt: skip
    return (*phases, *weaker, *(("Evidence", clean(f)) for f in evidence))


def summarize(
    against: str,
    commit: str | None,
    before: Side,
    after: Side,
    *,
    figures: Mapping[str, tuple[BenchFigures | None, BenchFigures | None]] = {},
    evidence: Sequence[str] = (),
    gone: Sequence[str] = (),
    code: Sequence[str] = (),
    plan_files: Sequence[str] = (),
    invalid: Sequence[str] = (),
) -> Summary:
    """The summary of the change from ``before`` (the revision ``against``) to ``after`` (now). ``figures``: {gate
    key: (figures at the revision, figures now)} of the gates :func:`bench_pairs` names; ``evidence``: files new
    since; ``gone``: the revision's evidence files gone since; ``code``: other files changed since (their phases
    are the ones touched); ``plan_files``: plan files changed since; ``invalid``: notes on plan files not compared."""
    changes = phase_changes(before, after)
    failing: dict[str, str] = {}  # {phase: how its first failing bench gate missed}
    for key, (_, now) in figures.items():
        phase, _, n = key.rpartition("#")
        st = after.statuses.get(phase)
        if now is not None and st is not None and st.verdicts[int(n) - 1].failed:
            failing.setdefault(phase, miss(now))
    changes = [c._replace(detail=failing.get(c.key, "")) if c.after is Status.REGRESSED else c for c in changes]
    edits = tuple(gate_edits(before.plans, after.plans))
    weaker = [e for e in edits if e.kind in WEAKER]
    # A phase done with a gate of its own loosened or removed says so in the subject: done on easier terms.
    eased = {e.key.partition("#")[0]: e.kind for e in reversed(weaker)}
    changes = [
        c._replace(detail="gate loosened" if eased[c.key] == "looser" else f"gate {eased[c.key]}")
        if c.after is Status.DONE and c.key in eased else c
        for c in changes
    ]  # fmt: skip
    deltas = tuple(d for key, (b, a) in figures.items() if (d := delta(key, b, a)) is not None)
    again = reverified(before, after)
    phases = touched(after.plans, code)
    base = Summary(
        against, commit, tuple(changes), tuple(again), deltas, tuple(evidence), tuple(gone), tuple(phases),
        tuple(code), tuple(plan_files), tuple(invalid), "", "", (), gates=edits,
    )  # fmt: skip
    subject = (
        change_subject(changes)
        if changes
        else quiet_subject(against, again, evidence, phases, plan_files, code, weaker)
    )
    summary = base._replace(subject=subject, trailers=trailers_of(changes, evidence, edits))
    return summary._replace(body=body_of(summary))
