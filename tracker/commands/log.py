"""``tracker log PLAN[/PHASE]...``: a phase's status timeline from the evidence history (:mod:`tracker.core.timeline`),
one line per transition, oldest first, then the status now (every phase of a plan, one after another).

A line says when (the evidence's recorded time, UTC), from which status to which, why (the gates whose verdict
changed, or the dependency whose change alone moved it), and the evidence file: its kind, machine and commit.
Selectors, invalid plan files, colour and inert text are ``tracker show``'s (:mod:`tracker.commands.show`).

``--json`` prints one object::

    {"phases": [{"key", "title", "status", "note",
                 "history": [{"phase", "time", "from", "to", "file", "kind", "machine", "commit", "gates"}]}],
     "invalid": [{"path", "id", "problems"}]}

``status`` and ``note`` are the status now, as ``tracker status`` gives them (``stale`` included: the replayed
history has no tree of the past to judge it on, so it never holds ``stale``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tracker.base.cache import command_cache
from tracker.commands.common import inert, json_text
from tracker.commands.show import (
    Paint,
    cause,
    dependency_causes,
    error_for,
    now_line,
    selected,
    short,
    with_invalid_dependencies,
)
from tracker.commands.status import invalid_line, use_color

if TYPE_CHECKING:
    from tracker.base.contract import Clock
    from tracker.report.detail import PhaseDetail


def run(
    root: Path,
    targets: Sequence[str],
    as_json: bool = False,
    out: TextIO | None = None,
    color: str = "auto",
    clock: Clock | None = None,
) -> int:
    """Print the timeline of the phases ``targets`` name; exit 0, or 2/8 after the output when an invalid plan
    file bears on it (as ``tracker show``); ``clock``: the time evidence times are checked against (default: now)."""
    from tracker.report.repo_view import RepoView

    out = out or sys.stdout
    with command_cache(root) as cache:
        view = RepoView(root, cache, clock)
        pairs, invalid = selected(root, targets, view.plan_set)
        keys = [f"{p.id}/{ph.id}" for p, ph in pairs]
        # The details without bench figures: a timeline and the status now are all that is shown.
        details = view.details(keys, figures=False) if keys else []
        invalid = with_invalid_dependencies(details, invalid, view.plan_set)
        if as_json:
            phases = [
                {"key": d.key, "title": d.title, "status": d.status.value, "note": d.note,
                 "history": [t.as_json() for t in d.history]}
                for d in details
            ]  # fmt: skip
            data = {
                "phases": phases,
                "invalid": [{"path": i.path, "id": i.id, "problems": i.problems} for i in invalid],
            }
            out.write(json_text(out, data) + "\n")
        else:
            paint = Paint(use_color(out, color))
            causes = dependency_causes(view, details)
            blocks = [render(d, paint, causes) for d in details] + [inert(invalid_line(i)) for i in invalid]
            out.write("\n\n".join(blocks) + "\n")
        err = error_for(view.plan_set, invalid)
    if err is not None:
        raise err
    return 0


def render(d: PhaseDetail, paint: Paint, causes: Mapping[tuple[str, str, str], str]) -> str:
    """``PLAN/PHASE  title``, one line per transition in columns (``time  from -> to  why  kind  machine, commit
    file``), then the status now."""
    lines = [f"{inert(d.key)}  {inert(d.title)}"]
    if not d.history:
        lines.append("  no evidence has changed its status")
    rows = [
        (
            t,
            f"{t.previous.value} -> {t.status.value}",
            cause(t, causes),
            t.kind,
            f"{inert(t.machine)}, {short(t.commit)}",
        )
        for t in d.history
    ]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(1, 5)]
    for t, move, why, kind, where in rows:
        arrow = f"{paint.status(t.previous)} -> {paint.status(t.status)}" + " " * (widths[0] - len(move))
        columns = (f"{why:<{widths[1]}}", f"{kind:<{widths[2]}}", f"{where:<{widths[3]}}", inert(t.file))
        lines.append(f"  {inert(t.time)}  {arrow}  " + "  ".join(columns))
    lines.append(now_line(d, paint, "  "))
    return "\n".join(lines)
