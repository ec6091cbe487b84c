"""Each phase's status over time, replayed from the evidence history (pure): ``tracker log``, the history in
``tracker show`` and the transitions of a report.

The store is replayed in the order :func:`tracker.history.was_done` uses (test runs, sign-offs and result runs by
their recorded time; a run the store ordered after newer ones takes the latest time before it), and after each
evidence file every phase gets the status the rules give on the evidence as it stood then. Only the gates an
evidence file can change are evaluated again: a test run those whose test argument selects one of its records, a
sign-off the manual gates of its phase, a result run the bench gates of a metric it measured. So a replay costs
one evaluation per (evidence file, gate it touches), not one per (file, gate).

The gates are today's: the timeline answers "when did the evidence meet the phase as it is written now". Two
statuses are not part of it. ``stale`` is judged on the working tree, and the tree of a past moment is not in the
evidence (the current status says whether the phase is stale now). An evidence file that cannot be read has no
time; it makes every gate unmet now (status shows it), and the replay leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tracker.checks import qualify
from tracker.model import (
    BenchGate,
    GateVerdict,
    ManualGate,
    Phase,
    Plan,
    ResultRun,
    Status,
    Store,
    TestGate,
    gate_key,
)
from tracker.testgate import TestIndex, gate_verdict, manual_hashes

if TYPE_CHECKING:
    from datetime import datetime


class Transition(NamedTuple):
    """A phase's status changed with one evidence file: from ``previous`` to ``status`` at ``time``."""

    key: str  # PLAN/PHASE
    time: str  # the evidence's recorded time, UTC ``YYYY-MM-DDTHH:MM:SSZ``
    previous: Status
    status: Status
    file: str  # the evidence file (store or result file) that brought the change
    kind: str  # "test run" | "sign-off" | "result"
    machine: str
    commit: str | None
    gates: tuple[int, ...]  # 1-based numbers of the phase's gates whose verdict changed with it

    def as_json(self) -> dict[str, Any]:
        """The transition as ``--json`` prints it."""
        return {
            "phase": self.key,
            "time": self.time,
            "from": self.previous.value,
            "to": self.status.value,
            "file": self.file,
            "kind": self.kind,
            "machine": self.machine,
            "commit": self.commit,
            "gates": list(self.gates),
        }


class _Event(NamedTuple):
    time: str
    kind: int  # 0 test run, 1 sign-off, 2 result run
    position: int


def utc(when: datetime) -> str:
    """A result run's time as the store's times are written (UTC, seconds)."""
    from datetime import UTC

    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _events(store: Store, results: Sequence[ResultRun]) -> list[_Event]:
    events: list[_Event] = []
    latest = ""
    for i, run in enumerate(store.runs):
        latest = max(latest, run.time)
        events.append(_Event(latest, 0, i))
    events += [_Event(str(data.get("time", "")), 1, i) for i, (_, data) in enumerate(store.signoffs)]
    events += [_Event(utc(r.time), 2, i) for i, r in enumerate(results)]
    events.sort(key=lambda e: e.time)  # stable: runs within one second keep the store's order
    return events


def _status(verdicts: Sequence[GateVerdict], was_done: bool) -> Status:
    """The status on a phase's own gates (README precedence, without ``stale``, which needs the tree of then)."""
    if was_done and any(v.failed for v in verdicts):
        return Status.REGRESSED
    if verdicts and all(v.met for v in verdicts):
        return Status.DONE
    return Status.IN_PROGRESS if any(v.met for v in verdicts) else Status.PLANNED


class _Phase:
    """One phase's state during the replay."""

    __slots__ = ("done_once", "key", "manual", "phase", "plan", "verdicts")

    def __init__(self, plan: Plan, phase: Phase) -> None:
        self.plan, self.phase = plan, phase
        self.key = f"{plan.id}/{phase.id}"
        self.manual = manual_hashes(phase)
        self.verdicts: list[GateVerdict] = [GateVerdict(False, "no evidence yet")] * len(phase.gates)
        self.done_once = False


def replay(
    plans: Iterable[Plan],
    store: Store,
    results: Sequence[ResultRun] = (),
    bounds: MutableMapping[str, float] | None = None,
    only: Iterable[str] | None = None,
) -> dict[str, list[Transition]]:
    """{PLAN/PHASE: its transitions, oldest first} over the store's test runs and sign-offs and ``results``
    (every valid result run). ``only``: the phases whose transitions are wanted (their dependencies are replayed
    too, since a dependency not done blocks); default every phase. ``bounds``: bootstrap bounds known already."""
    plans = list(plans)
    everything = {f"{p.id}/{ph.id}": _Phase(p, ph) for p in plans for ph in p.phases}
    wanted = set(everything) if only is None else _with_dependencies(set(only), everything)
    states = {k: s for k, s in everything.items() if k in wanted}
    events = _events(store, results)
    index = TestIndex(store)
    runs_seen = 0
    signoffs: list[tuple[str, dict[str, Any]]] = []
    seen_results: list[ResultRun] = []
    prefix = Store(signoffs=signoffs)
    by_metric: dict[str, list[tuple[_Phase, int]]] = {}
    by_phase: dict[str, list[_Phase]] = {}
    tests: list[tuple[_Phase, int, TestGate]] = []
    for state in states.values():
        by_phase.setdefault(state.key + "#", []).append(state)
        for i, gate in enumerate(state.phase.gates):
            if isinstance(gate, BenchGate):
                by_metric.setdefault(gate.bench, []).append((state, i))
            elif isinstance(gate, TestGate):
                tests.append((state, i, gate))

    statuses = _statuses(states)
    out: dict[str, list[Transition]] = {k: [] for k in states}
    for event in events:
        touched: list[tuple[_Phase, int]]
        if event.kind == 0:
            run = store.runs[event.position]
            runs_seen += 1
            touched = [(s, i) for s, i, gate in tests if index.touches(run, gate.test)]
            file, kind, machine = run.file, "test run", str(run.provenance.get("host", "?"))
            commit = run.provenance.get("commit")
        elif event.kind == 1:
            file, data = store.signoffs[event.position]
            signoffs.append((file, data))
            phase_prefix = str(data.get("gate_key", "")).rsplit("#", 1)[0] + "#"
            touched = [
                (s, i)
                for s in by_phase.get(phase_prefix, [])
                for i, g in enumerate(s.phase.gates)
                if isinstance(g, ManualGate)
            ]
            kind, machine, commit = "sign-off", str(data.get("host", "?")), data.get("commit")
        else:
            result = results[event.position]
            seen_results.append(result)
            metrics = {c.metric for c in result.cases}
            touched = [pair for metric in metrics for pair in by_metric.get(metric, [])]
            file, kind, commit = result.path, "result", result.commit
            machine = f"{result.host} ({result.gpu})" if result.gpu else result.host
        if not touched:
            continue
        view = index.before(runs_seen)
        changed: dict[str, list[int]] = {}
        for state, i in touched:
            gate = state.phase.gates[i]
            key = gate_key(state.plan.id, state.phase.id, i)

            def bench(g: BenchGate) -> GateVerdict:
                from tracker.bench_verdict import evaluate_bench_gate

                return evaluate_bench_gate(g, seen_results, bounds)

            verdict = gate_verdict(key, gate, view, prefix, state.manual, bench)[0]
            old = state.verdicts[i]
            if (verdict.met, verdict.failed) != (old.met, old.failed):
                changed.setdefault(state.key, []).append(i + 1)
            state.verdicts[i] = verdict
        if not changed:
            continue
        for key in changed:
            state = states[key]
            if state.verdicts and all(v.met for v in state.verdicts):
                state.done_once = True
        now = _statuses(states)
        for key, status in now.items():
            if status is not statuses[key]:
                gates = tuple(sorted(changed.get(key, ())))
                out[key].append(Transition(key, event.time, statuses[key], status, file, kind, machine, commit, gates))
        statuses = now
    return out if only is None else {k: v for k, v in out.items() if k in set(only)}


def _statuses(states: Mapping[str, _Phase]) -> dict[str, Status]:
    """Every replayed phase's status on its gates now, then ``blocked`` where a dependency is not done."""
    own = {k: _status(s.verdicts, s.done_once) for k, s in states.items()}
    out: dict[str, Status] = {}
    for key, state in states.items():
        status = own[key]
        if status in (Status.IN_PROGRESS, Status.PLANNED):
            deps = (qualify(state.plan.id, d) for d in state.phase.depends)
            if any(own.get(d, Status.PLANNED) is not Status.DONE for d in deps):
                status = Status.BLOCKED
        out[key] = status
    return out


def _with_dependencies(keys: set[str], states: Mapping[str, _Phase]) -> set[str]:
    """``keys`` and the phases their dependencies name (direct ones: blocked looks one level down)."""
    out = {k for k in keys if k in states}
    for key in list(out):
        state = states[key]
        out |= {d for d in (qualify(state.plan.id, dep) for dep in state.phase.depends) if d in states}
    return out


def status_at(transitions: Sequence[Transition], time: str, start: Status = Status.PLANNED) -> Status:
    """The status a phase had at ``time`` (UTC string), from its transitions; ``start`` before the first."""
    status = start
    for t in transitions:
        if t.time > time:
            break
        status = t.status
    return status
