"""``--format github`` of ``check``, ``lint`` and ``verify``: GitHub Actions annotations
(:mod:`tracker.base.annotations`) at the plan's line of each phase or gate, and of each lint problem.

The level says what the exit code says: what makes the command fail is an ``::error``, what it names without failing
is a ``::warning``. ``check``: a regression, an invalid evidence or result file, an unknown commit, ignored evidence,
an edited or out-of-date region or report are errors (exit 1); evidence not added yet and an undecided bench gate
are warnings (never check's exit: noise must not fail CI). ``verify``: every gate of the selected phases that is not
met (unmet, failed, undecided, stale) is an error, as each makes verify exit 1. ``lint``: problems are errors (exit
2), warnings warnings. Every other line printed is made inert (:func:`tracker.base.annotations.plain`).

``check`` also appends a short Markdown summary to the file ``$GITHUB_STEP_SUMMARY`` names (the job's summary page),
when that variable is set: appended, never truncated (other steps write there too); a file that cannot be written is
said on stderr and changes no exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from tracker.base.annotations import Annotation, plain
from tracker.core.model import Plan
from tracker.errors import ExitCode

if TYPE_CHECKING:
    from tracker.commands.verify_judge import GateLine


class Problem(Protocol):
    """A problem of ``tracker check`` (:class:`tracker.commands.check.Problem`, which imports this module)."""

    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str | None: ...
    @property
    def message(self) -> str: ...
    @property
    def phase(self) -> str | None: ...
    @property
    def gate(self) -> int | None: ...


SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
SUMMARY_ROWS = 30  # rows of the step summary's table; the rest are counted


class Places:
    """Where each phase and gate is written: (plan file, 1-based line)."""

    def __init__(self, plans: Sequence[Plan]) -> None:
        self.phases = {f"{p.id}/{ph.id}": (p.path, ph.line, ph.gates) for p in plans for ph in p.phases}

    def of(self, phase: str | None, gate: int | None = None) -> tuple[str, int] | None:
        """The plan file and line of ``phase`` (``PLAN/PHASE``), of its gate ``gate`` (1-based) when given."""
        found = self.phases.get(phase or "")
        if found is None:
            return None
        path, line, gates = found
        if gate is not None and 1 <= gate <= len(gates) and gates[gate - 1].line:
            return path, gates[gate - 1].line
        return path, line or 1


def _line_in(message: str, path: str | None) -> int | None:
    """The line a message names after its file (``docs/x.md:12: ...``, ``plans/0001-a.md:30: ...``), or None."""
    text = _unwarned(message)
    if not path or not text.startswith(path + ":"):
        return None
    number = text[len(path) + 1 :].partition(":")[0]
    return int(number) if number.isascii() and number.isdigit() and int(number) > 0 else None


def _unwarned(message: str) -> str:
    return message.removeprefix("warning: ")


def check_annotations(
    plans: Sequence[Plan], found: Sequence[Problem], warning_kinds: Collection[str]
) -> list[Annotation]:
    """One annotation per problem (``::error``) and warning (``::warning``) of ``tracker check``."""
    places = Places(plans)
    out: list[Annotation] = []
    for p in found:
        level = "warning" if p.kind in warning_kinds else "error"
        at = places.of(p.phase, p.gate)
        file, line = at if at is not None and at[0] == p.path else (p.path, _line_in(p.message, p.path))
        title = f"tracker check: {p.kind}" + (f" {p.phase}" if p.phase else "") + (f" gate {p.gate}" if p.gate else "")
        out.append(Annotation(level, _unwarned(p.message), file, line, title))
    return out


def check_output(
    plans: Sequence[Plan], found: Sequence[Problem], warning_kinds: Collection[str], add: str, out: TextIO
) -> int:
    """Print ``tracker check``'s annotations and its last lines (``add``: the git commands that add the evidence
    not committed yet, or ""), append the step summary; the exit code."""
    annotations = check_annotations(plans, found, warning_kinds)
    problems = sum(a.level == "error" for a in annotations)
    warnings = len(annotations) - problems
    head = f"{problems} problem(s), {warnings} warning(s)" if problems else f"no problems, {warnings} warning(s)"
    last = [f"tracker check: commit the evidence the statuses rest on: {add}"] if add else []
    write_lines(out, annotations, [*last, f"tracker check: {head}"])
    append_step_summary(check_summary(annotations, head))
    return int(ExitCode.CHECK_FAILED) if problems else 0


def check_summary(annotations: Sequence[Annotation], head: str) -> str:
    """``tracker check``'s Markdown for the job's summary page: a heading, then a table of at most
    :data:`SUMMARY_ROWS` problems and warnings (errors first)."""
    from tracker.report.md_filters import md, md_code

    mark = "❌" if any(a.level == "error" for a in annotations) else "✅"
    lines = [f"### {mark} tracker check: {head}", ""]
    ordered = sorted(annotations, key=lambda a: a.level != "error")
    if ordered:
        lines += ["| Level | Where | What |", "| --- | --- | --- |"]
        for a in ordered[:SUMMARY_ROWS]:
            where = md_code(f"{a.file}:{a.line}" if a.line else a.file) if a.file else "—"
            lines.append(f"| {a.level} | {where} | {md(a.message)} |")
        if len(ordered) > SUMMARY_ROWS:
            lines.append(f"\n… and {len(ordered) - SUMMARY_ROWS} more: see the job's annotations or `tracker check`.")
    return "\n".join(lines) + "\n\n"


def append_step_summary(text: str, env: dict[str, str] | None = None, err: TextIO | None = None) -> bool:
    """Append ``text`` to the file ``$GITHUB_STEP_SUMMARY`` names (nothing when it is unset or empty); never
    truncates it. A file that cannot be written is said on stderr: False."""
    target = (env if env is not None else os.environ).get(SUMMARY_ENV, "")
    if not target:
        return False
    try:
        with open(target, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
    except OSError as error:
        (err or sys.stderr).write(
            f"tracker: cannot append the summary to ${SUMMARY_ENV} ({target!a}): {error.strerror or error}\n"
        )
        return False
    return True


def lint_annotations(problems: Sequence[dict[str, Any]], warnings: Sequence[dict[str, Any]]) -> list[Annotation]:
    """``tracker lint``'s problems (``::error``) and warnings (``::warning``), each at its plan file and line
    (:func:`tracker.commands.lint._located`'s split)."""
    return [
        Annotation(level, _unwarned(p["message"]), p["path"], p["line"], "tracker lint")
        for level, found in (("error", problems), ("warning", warnings))
        for p in found
    ]


def verify_annotations(plans: Sequence[Plan], gates: Sequence[GateLine]) -> list[Annotation]:
    """One ``::error`` per gate ``verify`` judged not met (unmet, stale), at the gate's line: each makes it exit 1."""
    places = Places(plans)
    out: list[Annotation] = []
    for g in gates:
        if g.verdict == "met":
            continue
        phase = g.key.partition("#")[0]
        at = places.of(phase, g.number)
        word = "failed" if g.v.failed and g.verdict == "unmet" else "undecided" if g.v.undecided else g.verdict
        title = f"tracker verify: {phase} gate {g.number} ({g.kind}) {word}"
        file, line = at if at is not None else (None, None)
        out.append(Annotation("error", g.reason, file, line, title))
    return out


def write_lines(out: TextIO, annotations: Sequence[Annotation], lines: Sequence[str] = ()) -> None:
    """The annotations, then ``lines`` made inert."""
    for a in annotations:
        out.write(a.command() + "\n")
    for line in lines:
        out.write(plain(line) + "\n")
