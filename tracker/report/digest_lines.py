"""The digest's lines as data (pure): what :mod:`tracker.report.digest` builds and a report holds
(:class:`tracker.report.data.Report`'s ``digest``), apart from the builder so that the report's data needs nothing
of how the lines are made."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from tracker.core.model import Status


class DigestLine(NamedTuple):
    """One phase of the digest."""

    key: str  # PLAN/PHASE
    title: str
    status: Status
    met: int
    total: int
    deciding: str  # the figure that decides when the phase is done, with its gap; "" for a done phase
    since: str  # what moved since the previous report; "" when nothing is known to have
    order: tuple[int, float, float]  # (blocked, share of gates unmet, worst relative gap): smaller is nearer done
    others: tuple[str, ...] = ()  # phases in the same state, told once (stale for the same changed files)

    def as_json(self) -> dict[str, Any]:
        """The line as ``--json`` prints it."""
        out = self._asdict()
        out["status"] = self.status.value
        out["order"] = [x if math.isfinite(x) else None for x in self.order]
        out["others"] = list(self.others)
        return out

    @property
    def keys(self) -> tuple[str, ...]:
        """The phases of the line: its own, then the others."""
        return (self.key, *self.others)


class Digest(NamedTuple):
    """The report's opening: how many phases and gates are done, and a line a phase (not done first, nearest
    first; then the done ones)."""

    done: int
    phases: int
    met: int
    gates: int
    changes: int
    pending: tuple[DigestLine, ...]
    finished: tuple[DigestLine, ...]

    @property
    def share_done(self) -> float:
        """Phases done over phases (0 for no phase)."""
        return self.done / self.phases if self.phases else 0.0

    def as_json(self) -> dict[str, Any]:
        """The digest as ``--json`` prints it."""
        return {
            "done": self.done,
            "phases": self.phases,
            "met": self.met,
            "gates": self.gates,
            "changes": self.changes,
            "pending": [x.as_json() for x in self.pending],
            "finished": [x.as_json() for x in self.finished],
        }
