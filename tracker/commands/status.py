"""``tracker status [PLAN | PLAN/PHASE]``: every plan and phase with its derived status; never runs tests.

A plan file that is not valid does not hide the others: the valid plans are shown, each invalid file gets
one line (``status --json``: ``"invalid"``), its problems go to stderr and the exit code is 2 (8 when a plan
file cannot be read), after the output. Naming a plan (``0002``, ``2``, ``plans/0002-x.md``) shows that plan;
``PLAN/PHASE`` that phase's line under its plan's; an invalid plan named is its line and its error.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import TextIO

from tracker.base.cache import Cache, command_cache
from tracker.commands.common import inert, json_text, plan_spec, resolve_spec, select
from tracker.core.model import PhaseStatus, Plan, Status
from tracker.errors import FileError, PlanError, TrackerError
from tracker.plans.load import InvalidPlan, PlanSet, load_plan_set
from tracker.report.render import dependencies_not_done, recorded_statuses
from tracker.store.derive import derive

COLOR = {
    Status.DONE: "32",
    Status.IN_PROGRESS: "33",
    Status.BLOCKED: "35",
    Status.REGRESSED: "31;1",
    Status.STALE: "36",
    Status.PLANNED: "2",
}


COLOR_WHEN = ("auto", "always", "never")  # --color's values


def use_color(out: TextIO, when: str = "auto") -> bool:
    """Whether to colour the table: ``always``/``never`` as asked; ``auto`` only on a terminal, and never
    when ``NO_COLOR`` is set to anything but "" (no-color.org) or ``TERM`` is ``dumb``."""
    if when != "auto":
        return when == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return out.isatty()
    except (ValueError, OSError):  # a closed or odd stream is no terminal
        return False


ON_OWN_GATES = (
    Status.DONE,
    Status.STALE,
    Status.REGRESSED,
)  # statuses its dependencies do not change (docs/reference.md, precedence)


def _depends_note(shaky: list[tuple[str, str | None]]) -> str:
    """``depends on 0001/P2 (regressed)``: the dependencies a done (``done*``), stale or regressed phase has
    that are not done; empty when there are none."""
    if not shaky:
        return ""
    return "depends on " + ", ".join(
        f"{dep} ({status or 'no status: its plan file is invalid'})" for dep, status in shaky
    )


def _note(st: PhaseStatus) -> str:
    if st.note:
        return st.note
    bad = next((v for v in st.verdicts if not v.met), None) or next((v for v in st.verdicts if v.undecided), None)
    if bad is None:
        return ""
    where = f" [{bad.source.machine}]" if bad.source else ""
    return f"gate {st.verdicts.index(bad) + 1}: {bad.reason}{where}"


def table(
    plans: list[Plan],
    statuses: dict[str, PhaseStatus],
    color: bool,
    recorded: dict[str, str] | None = None,
    width: int | None = None,
    columns: int | None = None,
) -> str:
    """The compact plain-text table: one line per plan, one per phase (status, gates met, the
    machines its verdicts came from, note); with ``columns``, each line cut to that many characters (:func:`_fit`).

    ``recorded``: the status each phase's plan-file region shows; a difference is what changed
    since the last ``tracker update`` and is called out ("was done").
    """
    recorded = recorded or {}
    lines = []
    width = _width(plans) if width is None else width
    for plan in plans:
        lines.append(_fit(f"{plan.id}  ", inert(plan.title), f"  ({inert(plan.path)})", columns))
        for ph in plan.phases:
            st = statuses[f"{plan.id}/{ph.id}"]
            shaky = dependencies_not_done(plan, ph, statuses) if st.status in ON_OWN_GATES else []
            word = f"{st.status.value + ('*' if shaky and st.status == Status.DONE else ''):<11}"
            if color:
                word = f"\x1b[{COLOR[st.status]}m{word}\x1b[0m"
            failing = sum(v.failed for v in st.verdicts) if st.status is Status.BLOCKED else 0
            also = f"also failing {failing} of its own gate{'' if failing == 1 else 's'}" if failing else ""
            note = "; ".join(x for x in (also, _note(st), _depends_note(shaky)) if x)
            machines = ", ".join(
                dict.fromkeys(v.source.machine for v in st.verdicts if v.source)
            )  # where its verdicts came from
            was = recorded.get(f"{plan.id}/{ph.id}")
            if was is not None and was != st.status.value:
                note = f"was {was} in the plan file; " + note if note else f"was {was} in the plan file"
            head = f"  {ph.id:<{width}}  {word}  {st.met_count:>5}  "
            tail = inert((f"  [{machines}]" if machines else "") + (f"  — {note}" if note else ""))  # evidence's text
            lines.append(_fit(head, inert(ph.title), tail, columns, len(head) - (len(word) - 11 if color else 0)))
    return "\n".join(lines)


MIN_TITLE = 16  # what _fit leaves of a title at least, before it cuts the reason to nothing


def _fit(head: str, title: str, tail: str, columns: int | None, shown: int | None = None) -> str:
    """``head + title + tail`` in ``columns`` characters: the tail (machines, the reason) cut first, down to what
    leaves the title two fifths of the room (at least :data:`MIN_TITLE` characters), then the title, each cut marked
    with an ellipsis; ``head`` (the id, the status word, the counts) is never cut. ``shown``: the characters of
    ``head`` a terminal shows (its colour codes take none)."""
    room = None if columns is None else columns - (len(head) if shown is None else shown)
    if room is None or len(title) + len(tail) <= room:
        return head + title + tail
    keep = max(room - min(len(title), max(MIN_TITLE, room * 2 // 5)), 0)  # for the tail
    tail = tail if len(tail) <= keep else (tail[: keep - 1] + "…" if keep > 3 else "")
    room -= len(tail)
    title = title if len(title) <= room else (title[: max(room - 1, 0)] + "…" if room > 0 else "")
    return head + title + tail


def totals(plans: list[Plan], statuses: dict[str, PhaseStatus], invalid: int = 0) -> str:
    """``12 done, 3 stale, 2 blocked of 40 phases``: how many phases of ``plans`` have each status (those
    that some have, in the order of :data:`TOTALS_ORDER`), then the invalid plan files shown, if any."""
    counts = Counter(statuses[f"{p.id}/{ph.id}"].status for p in plans for ph in p.phases)
    told = ", ".join(f"{counts[s]} {s.value}" for s in TOTALS_ORDER if counts[s])
    n = sum(counts.values())
    text = f"{told} of {n} phase{'' if n == 1 else 's'}" if told else "no phases"
    return text + (f"; {invalid} invalid plan file{'' if invalid == 1 else 's'}" if invalid else "")


TOTALS_ORDER = (Status.DONE, Status.REGRESSED, Status.STALE, Status.IN_PROGRESS, Status.BLOCKED, Status.PLANNED)


def columns(out: TextIO) -> int:
    """How wide a status line may be: ``COLUMNS`` when it is a number, else the terminal's width where ``out`` is
    one, else :data:`DEFAULT_COLUMNS`; never under :data:`MIN_COLUMNS`."""
    env = os.environ.get("COLUMNS", "")
    if env.isascii() and env.isdigit() and int(env) > 0:
        return max(int(env), MIN_COLUMNS)
    try:
        if out.isatty():
            return max(os.get_terminal_size(out.fileno()).columns, MIN_COLUMNS)
    except (ValueError, OSError):  # a closed or odd stream is no terminal
        pass
    return DEFAULT_COLUMNS


DEFAULT_COLUMNS = 100  # a pipe, a file: no terminal to measure
MIN_COLUMNS = 40


def invalid_line(invalid: InvalidPlan) -> str:
    """The line ``status`` shows for a plan file it cannot use."""
    return (
        f"{invalid.id or '?'}  invalid plan file ({invalid.path}): {len(invalid.problems)} problem(s), see "
        "`tracker lint`"
    )


def _selected(
    root: Path, spec: str, plans: list[Plan], invalid: list[InvalidPlan]
) -> tuple[list[Plan], list[InvalidPlan]]:
    """What ``spec`` names: ``([plan], [])``, with only the named phase for ``PLAN/PHASE``, or ``([], [file])``
    for an invalid plan file with that id or number; UsageError when it names nothing."""
    spec = plan_spec(root, spec)
    plan_id, _, phase_id = spec.partition("/")
    if plan_id not in {p.id for p in plans}:
        named = [i for i in invalid if i.id == plan_id or i.path.rpartition("/")[2][:4] == plan_id]
        if named:
            return [], named
    spec = resolve_spec(plans, spec)  # ``p2``, a bare ``P2``: the phase's own spelling under its plan
    plan_id, _, phase_id = spec.partition("/")
    select(plans, [spec])  # UsageError for an unknown plan or phase
    plan = next(p for p in plans if p.id == plan_id)
    phase = plan.phase(phase_id) if phase_id else None
    return [plan._replace(phases=(phase,)) if phase is not None else plan], []


def _error(plan_set: PlanSet, invalid: list[InvalidPlan]) -> TrackerError | None:
    """The error to end with when ``invalid`` plan files were shown: exit 2 with every problem (the whole
    set's when every plan is shown, else the named file's); exit 8 when one cannot be read, the other
    problems written to stderr before it (the error names one file)."""
    if not invalid:
        return None
    problems = list(dict.fromkeys(p for i in invalid for p in i.problems))
    unreadable = [p for p in problems if p in plan_set.unreadable]
    if not unreadable:
        return plan_set.error() if invalid == plan_set.invalid else PlanError(problems)
    for problem in problems:
        if problem != unreadable[0]:
            sys.stderr.write(problem + "\n")
    return FileError(unreadable[0])


def run(
    root: Path, plan: str | None = None, as_json: bool = False, out: TextIO | None = None, color: str = "auto"
) -> int:
    """Print the status of every plan (or of the plan or phase ``plan`` names); exit 0, since status informs
    and does not check, unless a plan file shown is invalid (the module docstring). ``color``: one of
    :data:`COLOR_WHEN` (:func:`use_color`)."""
    out = out or sys.stdout
    with command_cache(root) as cache:  # what reading learned is written once the statuses are shown
        return _status(root, plan, as_json, out, color, cache)


def _status(root: Path, plan: str | None, as_json: bool, out: TextIO, color: str, cache: Cache) -> int:
    plan_set = load_plan_set(root, cache=cache)
    plans, invalid = plan_set.plans, plan_set.invalid
    statuses = derive(root, plans, cache=cache) if plans else {}  # all plans: dependencies may live in other plans
    if plan is not None:
        plans, invalid = _selected(root, plan, plans, invalid)
    shown = {p.id for p in plans}
    recorded = {
        k: v
        for f in plan_set.files
        if f.plan is not None and f.plan.id in shown
        for k, v in recorded_statuses(f.plan, f.text).items()
    }
    if as_json:
        from tracker.report.render import status_data

        data = status_data(plans, statuses, recorded)
        data["invalid"] = [{"path": i.path, "id": i.id, "problems": i.problems} for i in invalid]
        out.write(json_text(out, data) + "\n")
    elif not plans and not invalid:
        out.write(f"no plans yet: add plans/NNNN-slug.md (tracker new TITLE) under {root}\n")
    else:
        text = _text(plans, statuses, invalid, use_color(out, color), recorded, columns(out))
        out.write(text + "\n" + (totals(plans, statuses, len(invalid)) + "\n" if plan is None and plans else ""))
        sys.stderr.write(untracked_note(root, statuses))  # stdout stays the table and its totals line
    err = _error(plan_set, invalid)
    if err is not None:
        raise err
    return 0


def untracked_note(root: Path, statuses: dict[str, PhaseStatus]) -> str:
    """One line when evidence or result files the statuses rest on are not tracked by git (a clone shows other
    statuses), with the ``git add`` that fixes it; "" otherwise (``tracker check`` fails on them, one line each)."""
    from tracker.commands.check import Problem, add_line, untracked_evidence

    found = untracked_evidence(root, statuses)
    if not found:
        return ""
    count = len(found)
    if count > NOTE_PATHS:  # the note stays one short line: their folders (tracker check names each file)
        folders: dict[tuple[str, str], Problem] = {}
        for problem in found:
            folder = problem.path.rsplit("/", 1)[0] + "/" if problem.path else ""
            folders.setdefault((problem.kind, folder), problem._replace(path=folder))
        found = list(folders.values())
    return (
        f"note: {count} evidence file(s) the statuses rest on are not tracked by git, so a clone shows other "
        f"statuses (tracker check lists them): {add_line(found)}\n"
    )


NOTE_PATHS = 3  # more untracked files than this: the note names their folders


def _text(
    plans: list[Plan],
    statuses: dict[str, PhaseStatus],
    invalid: list[InvalidPlan],
    color: bool,
    recorded: dict[str, str],
    columns: int | None = None,
) -> str:
    """The table of the valid plans with a line for each invalid plan file, in file order; each line cut to
    ``columns`` characters (:func:`_fit`)."""
    width = _width(plans)  # once: per plan it made a status of 1,000 plans quadratic (0.9 s of 1.6)
    blocks = [(p.path, table([p], statuses, color, recorded, width=width, columns=columns)) for p in plans]
    blocks += [(i.path, invalid_line(i)) for i in invalid]
    return "\n".join(text for _, text in sorted(blocks, key=lambda b: b[0]))


def _width(plans: list[Plan]) -> int:
    return max((len(ph.id) for p in plans for ph in p.phases), default=2)
