"""``tracker show PLAN[/PHASE]...``: one phase explained (or every phase of a plan, one after another): its
status and what decides it, every gate's verdict with the evidence behind it, a bench gate's figures, and the
phase's status history from the evidence (:mod:`tracker.core.timeline`), ending with the status now.

The data is :class:`tracker.report.detail.PhaseDetail` (through :class:`tracker.report.repo_view.RepoView`); this module
only lays it out. Selectors are ``status``'s (``0002``, ``2``, ``plans/0002-x.md``, ``0002/P1``); a name that is no
plan or phase is exit 3 before anything is printed. A named plan file that is not valid gets ``status``'s line
for it, and one holding a dependency of a phase shown leaves that dependency without a status; either way the
exit code is 2 (8 when the file cannot be read), after everything that could be shown.

Every text that comes from a plan or an evidence file (titles, gate texts, reasons, machine and file names) is
printed inert: a control character (an ANSI escape, ``\\r``, a bidirectional override) is written as its
backslash escape, never raw, so a plan cannot drive the terminal. Colour follows ``status`` (``--color``,
``NO_COLOR``, only on a terminal).

``--json`` prints one object::

    {"phases": [{"key", "plan": {"id", "title", "path", "milestone"}, "id", "title", "line", "status", "note",
                 "depends": [{"id", "status"}], "blocked_by", "changed", "paths",
                 "gates": [{"number", "key", "kind", "label", "definition", "line", "met", "failed", "reason",
                            "source": {"file", "machine", "commit", "time"} | null, "stale",
                            "bench": {"metric", "params", "baseline", "stat", "value", "unit", "op", "threshold",
                                      "bound", "confidence", "margin", "samples", "baseline_samples", "direction",
                                      "run", "benchmark"} | null}],
                 "history": [{"phase", "time", "from", "to", "file", "kind", "machine", "commit", "gates"}]}],
     "invalid": [{"path", "id", "problems"}]}

``status`` is the status now (``stale`` included); ``history`` the transitions replayed from the evidence, oldest
first (a dependency's change alone leaves ``gates`` empty); ``margin`` is ``(compared - threshold) / |threshold|``
oriented so that above 0 is headroom (``compared`` is ``bound`` when the gate asks for a confidence); numbers that
are not finite are null. Control characters outside ASCII (C1, bidirectional controls) are ``\\u`` escapes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tracker.base.cache import command_cache
from tracker.commands.common import inert, json_text, plan_spec, resolve_spec, select
from tracker.commands.status import COLOR, ON_OWN_GATES, invalid_line, use_color
from tracker.core.model import Phase, Plan, Status
from tracker.errors import FileError, PlanError, TrackerError

if TYPE_CHECKING:
    from tracker.base.contract import Clock
    from tracker.core.timeline import Transition
    from tracker.plans.load import InvalidPlan, PlanSet
    from tracker.report.detail import BenchFigures, GateDetail, PhaseDetail
    from tracker.report.repo_view import RepoView

VERDICT_COLOR = {"met": "32", "failed": "31;1", "unmet": "33", "stale": "36"}


class Paint:
    """Colour for status and verdict words, or none."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, word: str, code: str) -> str:
        return f"\x1b[{code}m{word}\x1b[0m" if self.on else word

    def status(self, status: Status | str | None, text: str | None = None) -> str:
        """``status``'s word (or ``text``) in status's colour; a missing status says why it is missing."""
        if status is None:
            return "no status: its plan file is invalid"
        st = Status(status)
        return self(text if text is not None else st.value, COLOR[st])


def selected(root: Path, specs: Iterable[str], plan_set: PlanSet) -> tuple[list[tuple[Plan, Phase]], list[InvalidPlan]]:
    """The phases ``specs`` name, in the order named (a plan: its phases in file order), and the invalid plan files
    named; UsageError for a name that is no plan or phase (before anything is shown)."""
    pairs: list[tuple[Plan, Phase]] = []
    invalid: list[InvalidPlan] = []
    valid = {p.id for p in plan_set.plans}
    for raw in specs:
        spec = plan_spec(root, raw)
        plan_id = spec.partition("/")[0]
        if plan_id not in valid and not _invalid_files(plan_set.invalid, plan_id):
            spec = resolve_spec(plan_set.plans, spec)  # a bare phase id: its plan's
            plan_id = spec.partition("/")[0]
        named = [] if plan_id in valid else _invalid_files(plan_set.invalid, plan_id)
        if named:
            invalid += [i for i in named if i not in invalid]
            continue
        pairs += select(plan_set.plans, [spec])
    seen: set[tuple[str, str]] = set()
    return [x for x in pairs if (k := (x[0].id, x[1].id)) not in seen and not seen.add(k)], invalid  # type: ignore[func-returns-value]


def _invalid_files(invalid: Iterable[InvalidPlan], plan_id: str) -> list[InvalidPlan]:
    """The invalid plan files with this plan id (or this number in their file name)."""
    return [i for i in invalid if i.id == plan_id or i.path.rpartition("/")[2][:4] == plan_id]


def with_invalid_dependencies(
    details: Sequence[PhaseDetail], invalid: list[InvalidPlan], plan_set: PlanSet
) -> list[InvalidPlan]:
    """``invalid`` and the invalid plan files holding a dependency of a phase shown (it has no status)."""
    out = list(invalid)
    for d in details:
        for dep, status in d.depends:
            if status is None:
                out += [i for i in _invalid_files(plan_set.invalid, dep.partition("/")[0]) if i not in out]
    return out


def error_for(plan_set: PlanSet, invalid: list[InvalidPlan]) -> TrackerError | None:
    """The error to end with when invalid plan files bear on what was shown: exit 2 with their problems, or exit 8
    when one cannot be read (the other problems written to stderr first), as ``status`` ends."""
    if not invalid:
        return None
    problems = list(dict.fromkeys(p for i in invalid for p in i.problems))
    unreadable = [p for p in problems if p in plan_set.unreadable]
    if not unreadable:
        return PlanError(problems)
    for problem in problems:
        if problem != unreadable[0]:
            sys.stderr.write(problem + "\n")
    return FileError(unreadable[0])


def run(
    root: Path,
    targets: Sequence[str],
    as_json: bool = False,
    out: TextIO | None = None,
    color: str = "auto",
    clock: Clock | None = None,
) -> int:
    """Show the phases ``targets`` name (module docstring); exit 0, or 2/8 after the output when an invalid plan
    file bears on it. ``color``: ``auto``, ``always`` or ``never`` (:func:`tracker.commands.status.use_color`);
    ``clock``: the time evidence times are checked against (default: now; the golden tests fix it)."""
    from tracker.report.repo_view import RepoView

    out = out or sys.stdout
    with command_cache(root) as cache:
        view = RepoView(root, cache, clock)
        pairs, invalid = selected(root, targets, view.plan_set)
        keys = [f"{p.id}/{ph.id}" for p, ph in pairs]
        details = view.details(keys) if keys else []
        invalid = with_invalid_dependencies(details, invalid, view.plan_set)
        if as_json:
            data = {
                "phases": [d.as_json() for d in details],
                "invalid": [{"path": i.path, "id": i.id, "problems": i.problems} for i in invalid],
            }
            out.write(json_text(out, data) + "\n")
        else:
            paint = Paint(use_color(out, color))
            causes = dependency_causes(view, details)
            blocks = [render(d, paint, causes) for d in details]
            blocks += [inert(invalid_line(i)) for i in invalid]
            out.write("\n\n".join(blocks) + "\n")
        err = error_for(view.plan_set, invalid)
    if err is not None:
        raise err
    return 0


# --- the text -------------------------------------------------------------------------------------------------------


def dependency_causes(view: RepoView, details: Sequence[PhaseDetail]) -> dict[tuple[str, str, str], str]:
    """{(PLAN/PHASE, time, file): "0001/P1 done"}: for each transition, what its dependencies became with that same
    evidence file, when they moved (a dependency is replayed with the phase, so this costs nothing more)."""
    deps = {d.key: [dep for dep, _ in d.depends] for d in details if d.history and d.depends}
    if not deps:
        return {}
    times = view.timeline(sorted({dep for ds in deps.values() for dep in ds}))
    moved: dict[tuple[str, str], list[str]] = {}
    for dep in times:
        for u in times[dep]:
            moved.setdefault((u.time, u.file), []).append(f"{dep} {u.status.value}")
    out: dict[tuple[str, str, str], str] = {}
    for d in details:
        mine = set(deps.get(d.key, ()))
        for t in d.history:
            why = [m for m in moved.get((t.time, t.file), []) if m.partition(" ")[0] in mine]
            if why:
                out[(t.key, t.time, t.file)] = ", ".join(why)
    return out


def cause(t: Transition, causes: Mapping[tuple[str, str, str], str]) -> str:
    """Why a transition happened: the gates whose verdict changed (``gate 1``, ``gates 1, 3``) and the dependencies
    that moved with the same evidence (``0001/P1 done``)."""
    gates = ("gate " if len(t.gates) == 1 else "gates ") + ", ".join(map(str, t.gates)) if t.gates else ""
    deps = inert(causes.get((t.key, t.time, t.file), ""))
    return "; ".join(x for x in (gates, deps) if x) or "a dependency"


def short(commit: str | None) -> str:
    """A commit as 7 hex digits (``no commit`` when the evidence names none)."""
    return inert(commit[:7]) if commit else "no commit"


def history_lines(d: PhaseDetail, paint: Paint, causes: Mapping[tuple[str, str, str], str]) -> list[str]:
    """Two lines per transition, oldest first: when, from -> to and why; the evidence's kind and file, its machine
    and commit."""
    if not d.history:
        return ["    no evidence has changed its status"]
    width = max(len(t.previous.value) + len(t.status.value) for t in d.history)
    lines = []
    for t in d.history:
        move = f"{paint.status(t.previous)} -> {paint.status(t.status)}"
        pad = " " * (width - len(t.previous.value) - len(t.status.value))
        lines.append(f"    {inert(t.time)}  {move}{pad}  {cause(t, causes)}")
        lines.append(f"        {t.kind} {inert(t.file)} ({inert(t.machine)}, {short(t.commit)})")
    return lines


def now_line(d: PhaseDetail, paint: Paint, indent: str = "    ") -> str:
    """``now: stale — changed since evidence: src/engine.py``: the status now and what decides it, as ``status``
    says it (its note, else the first gate not met; a done, stale or regressed phase's dependencies not done)."""
    notes = [d.note] if d.note else []
    if not notes:
        bad = next((g for g in d.gates if not g.met), None)
        if bad is not None:
            notes.append(f"gate {bad.number}: {bad.reason}")
    if d.status in ON_OWN_GATES:
        shaky = [(dep, st) for dep, st in d.depends if st != Status.DONE.value]
        if shaky:
            notes.append(
                "depends on " + ", ".join(f"{dep} ({st or 'no status: its plan file is invalid'})" for dep, st in shaky)
            )
    text = "; ".join(notes)
    return f"{indent}now: {paint.status(d.status)}" + (f" — {inert(text)}" if text else "")


def _status_extra(d: PhaseDetail) -> str:
    """What the status word alone hides, said as :func:`tracker.report.render.status_phrase` says it everywhere: ``*``
    on a done phase whose dependency is not done, ``, and also failing N of its own gates`` on a blocked one, ``, N
    gates undecided``."""
    from tracker.core.model import Status

    extra = "*" if d.status is Status.DONE and any(st != "done" for _, st in d.depends) else ""
    failing = sum(g.failed for g in d.gates)
    if d.status is Status.BLOCKED and failing:
        extra += f", and also failing {failing} of its own gate{'' if failing == 1 else 's'}"
    undecided = sum(g.reason.startswith("undecided") for g in d.gates)
    if undecided:
        extra += f", {undecided} gate{'' if undecided == 1 else 's'} undecided"
    return extra


def render(d: PhaseDetail, paint: Paint, causes: Mapping[tuple[str, str, str], str] | None = None) -> str:
    """One phase, explained (plain text; colour only through ``paint``)."""
    milestone = f", milestone {inert(d.milestone)}" if d.milestone else ""
    lines = [
        f"{inert(d.key)}  {inert(d.title)}",
        f"  plan      {inert(d.plan_id)} {inert(d.plan_title)} ({inert(d.plan_path)}, line {d.line}){milestone}",
        f"  status    {paint.status(d.status)}{_status_extra(d)} ({d.met_count} gates met)",
    ]
    if d.depends:
        lines.append("  depends   " + ", ".join(f"{inert(dep)} ({paint.status(st)})" for dep, st in d.depends))
    lines.append("  paths     " + (", ".join(inert(p) for p in d.paths) or "none (its evidence never goes stale)"))
    if d.changed:
        lines.append("  changed   " + ", ".join(inert(p) for p in d.changed))
    for g in d.gates:
        lines += ["", *gate_lines(g, paint)]
    if not d.gates:
        lines += ["", "  no gates: a phase without gates is never done"]
    lines += ["", "  history", *history_lines(d, paint, causes or {}), now_line(d, paint)]
    return "\n".join(lines)


def verdict_word(g: GateDetail) -> str:
    """``met``, ``stale`` (met on evidence that no longer matches), ``failed`` or ``unmet``."""
    if g.met:
        return "stale" if g.stale else "met"
    return "failed" if g.failed else "unmet"


def gate_lines(g: GateDetail, paint: Paint) -> list[str]:
    """A gate: what it asks, its verdict and reason, the evidence behind it; a bench gate's figures."""
    word = verdict_word(g)
    lines = [f"  gate {g.number}  {inert(g.label)}  (line {g.line})"]
    extra = {k: v for k, v in g.definition.items() if k in ("min_samples", "hardware", "confidence", "run")}
    if extra:
        lines.append("    terms     " + ", ".join(f"{k} {inert(v)}" for k, v in extra.items()))
    lines.append(f"    verdict   {paint(word, VERDICT_COLOR[word])}: {inert(g.reason)}")
    if g.stale:
        lines.append(f"    stale     {inert(g.stale)}")
    src = g.source
    if src is None:
        lines.append("    evidence  none")
    else:
        lines.append(f"    evidence  {inert(src.file)}")
        lines.append(f"              {inert(src.machine)}, commit {short(src.commit)}, {inert(src.time)}")
    if g.bench is not None:
        lines += figure_lines(g.bench, src.file if src is not None else None)
    return lines


def figure_lines(b: BenchFigures, evidence: str | None) -> list[str]:
    """A bench gate's figures: the value compared with the threshold and the margin, the case, the samples."""
    from tracker.core.bench_verdict import fmt_num, fmt_params, pct

    def num(x: float) -> str:
        return fmt_num(x) + (b.unit if b.unit == "×" else f" {inert(b.unit)}")

    value = f"{b.stat} {num(b.value)}"
    if b.baseline is not None:
        value += f" vs {inert(fmt_params(b.baseline))}"
    if b.bound is not None and b.confidence is not None:
        # The bound compared: the one facing the threshold when it clears it or cannot decide, else the other.
        facing = b.undecided or (b.margin is not None and b.margin >= 0)
        side = ("lower" if b.op == "≥" else "upper") if facing else ("upper" if b.op == "≥" else "lower")
        value += f", {pct(b.confidence)} {side} bound {num(b.bound)}" + (" (undecided)" if b.undecided else "")
    margin = "undefined" if b.margin is None else f"{b.margin * 100:+.1f}%"
    lines = [
        f"    figures   {value}; needs {b.op} {num(b.threshold)}: margin {margin}",
        f"    case      {inert(b.metric)} {inert(fmt_params(b.params))} ({inert(b.direction)} is better)",
        f"    samples   {b.samples}" + ("" if b.baseline_samples is None else f", baseline {b.baseline_samples}"),
    ]
    if b.run != evidence:
        lines.append(f"    result    {inert(b.run)} ({inert(b.benchmark)})")
    return lines
