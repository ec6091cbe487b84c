"""A report's status changes (pure): the moves that stayed (:mod:`tracker.core.moves`), each with what moved the phase
(issue 26, part 4).

What moved a phase is said by the gates behind its end status, with the evidence each verdict comes from, never by
the kind of the evidence file that happened to come last: a phase regressed is regressed by its failing gates (a
benchmark that missed its threshold is "regressed at a benchmark run" even when a test run that unblocked the phase
came last); a phase done, in progress or planned by the gates whose verdict changed in the period; a phase blocked
or unblocked by its dependencies. Each cause names its evidence: a test gate its pytest argument and what the
verdict says (the failing node id and outcome, or how many passed), a bench gate its metric, case, value against the
threshold and result file, a manual gate its sign-off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from tracker.core.model import Status
from tracker.core.moves import Move, net_move
from tracker.core.timeline import Transition
from tracker.report.detail import BenchFigures, GateDetail, PhaseDetail

# A cause's kind as a change names it: "regressed at a benchmark run".
KINDS = {"test": "test run", "bench": "benchmark run", "manual": "sign-off"}
DEPENDENCY = "dependency"


class Cause(NamedTuple):
    """One thing that moved a phase: a gate's verdict with its evidence, or a dependency's status."""

    gate: int | None  # 1-based; None for a dependency
    kind: str  # "test run" | "benchmark run" | "sign-off" | "dependency"
    what: str  # the test argument, the metric and case, the sign-off, or the dependency (PLAN/PHASE)
    outcome: str  # the verdict's words (node id and outcome; value against threshold), or the dependency's status
    file: str | None  # the evidence file or result file the verdict comes from
    machine: str | None
    commit: str | None

    def as_json(self) -> dict[str, Any]:
        """The cause as ``--json`` prints it."""
        return self._asdict()


class Change(NamedTuple):
    """A phase's status change in the period: its status at the start (``previous``), at the end (``status``), when
    it reached it and what moved it."""

    key: str  # PLAN/PHASE
    time: str  # when the end status came (the period's last transition of the phase)
    previous: Status
    status: Status
    causes: tuple[Cause, ...]
    via: tuple[Status, ...]  # statuses passed through in the period, oldest first

    @property
    def kind(self) -> str:
        """The evidence that moved it: ``benchmark run``, ``test run``, ``sign-off``, ``dependency``, or those of
        several causes joined by " and " (in the causes' order)."""
        return " and ".join(dict.fromkeys(c.kind for c in self.causes)) or "evidence"

    @property
    def label(self) -> str:
        """How it moved, after its end status: ``at a benchmark run`` (regressed at a benchmark run), ``at a test run
        and a sign-off``, ``by a dependency``."""
        kinds = list(dict.fromkeys(c.kind for c in self.causes))
        if kinds == [DEPENDENCY]:
            return "by a dependency"
        return "at " + (" and ".join(f"a {k}" for k in kinds if k != DEPENDENCY) or "new evidence")

    @property
    def source(self) -> Cause:
        """The first cause with an evidence file (its machine and commit are the change's), else the first."""
        return next((c for c in self.causes if c.file), self.causes[0])

    @property
    def files(self) -> tuple[str, ...]:
        """The evidence files of the causes, each once, in their order."""
        return tuple(dict.fromkeys(c.file for c in self.causes if c.file))

    @property
    def sentence(self) -> str:
        """``done → regressed at a benchmark run``."""
        return f"{self.previous.value} → {self.status.value} {self.label}"

    def as_json(self) -> dict[str, Any]:
        """The change as ``--json`` prints it."""
        return {
            "phase": self.key,
            "time": self.time,
            "from": self.previous.value,
            "to": self.status.value,
            "label": f"{self.status.value} {self.label}",
            "causes": [c.as_json() for c in self.causes],
            "via": [s.value for s in self.via],
        }


def phase_change(
    detail: PhaseDetail,
    transitions: Sequence[Transition],
    start: Mapping[str, Status] | None = None,
    ended: Mapping[str, Status] | None = None,
) -> tuple[Move | None, tuple[Change, ...]]:
    """The phase's move made of ``transitions`` (its transitions in the period, oldest first) and the change it makes:
    (None, ()) without transitions, (the move, ()) when it came back to its start status. ``start``: {PLAN/PHASE: its
    status at the start} as the previous report recorded it (default: the timeline's). A phase the previous report
    had otherwise than the timeline on today's gates has at the end, with no transition in the period (its gates were
    rewritten since), moved with the transition that brought its status: a regression is never left out. ``ended``:
    for the same stretch again, the statuses the report of it recorded at its end: a phase without a transition in
    the period that is elsewhere now moved by evidence older than the period that arrived since (a pull of another
    machine's runs), and is listed from there."""
    known = (start or {}).get(detail.key)
    if not transitions and known is None:
        known = (ended or {}).get(detail.key)
    if not transitions and known is not None and detail.history and detail.history[-1].status is not known:
        transitions = detail.history[-1:]
    move = net_move(detail.key, transitions, known)
    change = None if move is None else change_of(move, detail)
    return move, () if change is None else (change,)


def change_of(move: Move, detail: PhaseDetail) -> Change | None:
    """The change ``move`` makes, with its causes read off ``detail`` (the phase at the end of the period), or None
    when the phase came back to where it started."""
    if not move.changed:
        return None
    return Change(move.key, move.last.time, move.previous, move.status, causes(move, detail), move.via)


def causes(move: Move, detail: PhaseDetail) -> tuple[Cause, ...]:
    """What moved the phase to ``move.status`` (module docstring): never empty."""
    gates = {g.number: g for g in detail.gates}
    if move.status is Status.BLOCKED:  # a dependency stale now was not done then, or one that is not done now
        return (
            _dependencies(detail, lambda s: s not in _DONE)
            or _dependencies(detail, lambda s: s != Status.DONE.value)
            or _gate_causes(gates, move.gates)
            or _evidence(move)
        )
    if move.status is Status.REGRESSED:
        failing = [n for n, g in gates.items() if g.failed]
        found = _gate_causes(gates, failing or move.gates)
    else:
        found = _gate_causes(gates, move.gates)
    if move.previous is Status.BLOCKED or not found:  # unblocked: its dependencies done (stale now: done then)
        found += _dependencies(detail, lambda s: s in _DONE)
    return found or _evidence(move)


_DONE = (Status.DONE.value, Status.STALE.value)


def _evidence(move: Move) -> tuple[Cause, ...]:
    """The evidence file that came last, as the cause of a move nothing else explains."""
    t = move.last
    kind = {"result": KINDS["bench"]}.get(t.kind, t.kind)
    return (Cause(None, kind, "", f"{t.previous.value} → {t.status.value}", t.file, t.machine, t.commit),)


def _gate_causes(gates: Mapping[int, GateDetail], numbers: Iterable[int]) -> tuple[Cause, ...]:
    return tuple(_gate_cause(gates[n]) for n in numbers if n in gates)


def _gate_cause(g: GateDetail) -> Cause:
    src = g.source
    machine, commit = (src.machine, src.commit) if src else (None, None)
    if g.kind == "bench" and g.bench is not None:
        return Cause(g.number, KINDS["bench"], _case(g.bench), _against(g.bench, g.met), g.bench.run, machine, commit)
    return Cause(g.number, KINDS[g.kind], g.label, g.reason, src.file if src else None, machine, commit)


def _dependencies(detail: PhaseDetail, keep: Callable[[str | None], bool]) -> tuple[Cause, ...]:
    return tuple(
        Cause(None, DEPENDENCY, dep, status or "its plan file is not valid", None, None, None)
        for dep, status in detail.depends
        if keep(status)
    )


def _case(f: BenchFigures) -> str:
    from tracker.core.bench_verdict import fmt_params

    case = fmt_params(f.params) if f.params else "its case"
    return f"{f.metric} {f.stat} at {case}" + (f" vs {fmt_params(f.baseline)}" if f.baseline else "")


def _against(f: BenchFigures, met: bool) -> str:
    """``12.3 us, needs ≤ 10 us (missed)``: the value (and the bound compared, if any) against the threshold."""
    from tracker.core.bench_verdict import fmt_num

    unit = f.unit if f.unit in ("", "×") else f" {f.unit}"  # 1.04×, 12.3 us
    compared = f"{fmt_num(f.value)}{unit}"
    if f.bound is not None:
        compared += f" ({round((f.confidence or 0) * 100)}% bound {fmt_num(f.bound)})"
    verdict = "undecided" if f.undecided else "met" if met else "missed"
    return f"{compared}, needs {f.op} {fmt_num(f.threshold)}{unit} ({verdict})"
