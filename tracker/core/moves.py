"""A phase's net move over a period (pure): what a report lists as a status change (issue 26, part 4).

The timeline (:mod:`tracker.core.timeline`) records every status change evidence brought, one transition per evidence
file. A report of a period lists only the moves that stayed: the phase's status at the end of the period against its
status at the start. A phase that left its start status and came back inside the period (a run on another machine or
another pytest that named the tests otherwise, a dependency that regressed and was fixed, a re-run) made no change:
it is summarised ("flapped 2 times, ends done"), never listed. A phase done at the start and regressed at the end is
always listed, whatever happened between.

The start is the status before the period's first transition and the end the status after its last: a phase's
transitions form a chain (each one's ``previous`` is the status the one before it left), so for a period that is a
stretch of time these are the phase's statuses at its start and at its end. Ties (transitions of one second) keep
the replay's order, which is the store's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from tracker.core.model import Status
from tracker.core.timeline import Transition


class Move(NamedTuple):
    """A phase's transitions in a period, and what they add up to: ``previous`` (its status at the start) to
    ``status`` (at the end)."""

    key: str  # PLAN/PHASE
    previous: Status
    status: Status
    moved: tuple[Transition, ...]  # the period's transitions, oldest first (never empty)

    @property
    def changed(self) -> bool:
        """Did the status move and stay moved?"""
        return self.previous is not self.status

    @property
    def last(self) -> Transition:
        """The transition that brought the end status."""
        return self.moved[-1]

    @property
    def via(self) -> tuple[Status, ...]:
        """The statuses the phase passed through between the start and the end (none for a single move); the first
        transition's ``previous`` among them when the start came from elsewhere (:func:`net_move`) and differs."""
        first = self.moved[0].previous
        return (() if first is self.previous else (first,)) + tuple(t.status for t in self.moved[:-1])

    @property
    def gates(self) -> tuple[int, ...]:
        """The gates (1-based) whose verdict changed with some transition of the period, in order."""
        return tuple(sorted({n for t in self.moved for n in t.gates}))

    @property
    def summary(self) -> str:
        """One line on the moves that are not a change: ``flapped 2 times via regressed, ends done``, how often the
        phase left its start status and for what; ``re-read as planned on today's gates, ends done`` where the start
        came from the previous report and the timeline on today's gates had the phase elsewhere then (a test file
        moved, its gate rewritten). For a change that passed through other statuses, which (``via blocked,
        regressed``); empty for a single move."""
        if self.changed:
            return "via " + ", ".join(s.value for s in self.via) if self.via else ""
        first = self.moved[0].previous
        reread = "" if first is self.previous else f"re-read as {first.value} on today's gates, "
        between = " and ".join(dict.fromkeys(t.status.value for t in self.moved[:-1] if t.status is not self.status))
        times = sum(t.previous is self.previous for t in self.moved)
        flapped = f"flapped {times} time{'s' if times > 1 else ''} via {between}, " if times else ""
        return f"{reread}{flapped}ends {self.status.value}"

    def as_json(self) -> dict[str, Any]:
        """The move as ``--json`` prints it."""
        return {
            "phase": self.key,
            "from": self.previous.value,
            "to": self.status.value,
            "changed": self.changed,
            "moves": [t.as_json() for t in self.moved],
        }


def net_move(key: str, transitions: Sequence[Transition], start: Status | None = None) -> Move | None:
    """The move of phase ``key`` made of ``transitions`` (its transitions in a period, oldest first), or None when
    there are none. ``start``: the status the period starts from when known otherwise than from the timeline (the
    previous report's, when the gates were written otherwise then); default: the first transition's ``previous``. A
    phase done at the start by either and regressed at the end moves from done: a regression is never hidden."""
    if not transitions:
        return None
    first, end = transitions[0].previous, transitions[-1].status
    begin = first if start is None else start
    if end is Status.REGRESSED and Status.DONE in (start, first):
        # done at the start by the timeline or by the previous report's record (a line a hand or a merge can
        # edit): the regression is listed whatever the other says
        begin = Status.DONE
    return Move(key, begin, end, tuple(transitions))
