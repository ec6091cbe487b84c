"""Each phase's status over time, replayed from the evidence history (pure): ``tracker log``, the history in
``tracker show`` and the transitions of a report.

The store is replayed in the order :func:`tracker.core.history.was_done` uses (test runs, sign-offs and result runs by
their recorded time; a run the store ordered after newer ones takes the latest time before it), and after each
evidence file every phase gets the status the rules give on the evidence as it stood then. Only the gates an
evidence file can change are evaluated again: a test run those whose test argument selects one of its records or
that it ran whole (its arguments cover the gate's, or verify ran the gate), a sign-off the manual gates of its
phase, a result run the bench gates of a metric it measured; then only the phases whose gates changed, and their
dependents, get a status again. So a replay costs one evaluation per (evidence file, gate it touches), not one per
(file, gate). A test in ``tests/tracker/test_timeline.py`` holds it to a naive replay that evaluates every gate
of every phase after every file, and holds its end to ``tracker status``.

The gates are today's: the timeline answers "when did the evidence meet the phase as it is written now". Two
statuses are not part of it. ``stale`` is judged on the working tree, and the tree of a past moment is not in the
evidence (the current status says whether the phase is stale now). An evidence file that cannot be read has no
time; it makes every gate unmet now (status shows it), and the replay leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tracker.base.contract import utc_time
from tracker.core.checks import qualify
from tracker.core.manual_gate import manual_hashes
from tracker.core.model import (
    BenchGate,
    GateVerdict,
    ManualGate,
    Phase,
    Plan,
    ResultRun,
    Status,
    Store,
    TestGate,
    TestRun,
    gate_key,
)
from tracker.core.run_facts import covers
from tracker.core.testgate import TestIndex, gate_verdict

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
    # 1-based numbers of the phase's gates whose verdict changed with it (met, failed, or "met at some time", which
    # decides a regression); empty when a dependency's change alone moved it (blocked, unblocked)
    gates: tuple[int, ...]

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

    def row(self) -> list[Any]:
        """The transition as the phase-history cache keeps it (its phase is the entry's key)."""
        return [self.time, self.previous.value, self.status.value, self.file, self.kind, self.machine, self.commit,
                list(self.gates)]  # fmt: skip

    @classmethod
    def from_row(cls, key: str, row: object) -> Transition | None:
        """The transition a cached :meth:`row` holds, or None when it is not one this code wrote (then the phase
        is replayed again)."""
        if not (isinstance(row, list) and len(row) == 8):
            return None
        time, previous, status, file, kind, machine, commit, gates = row
        if not all(isinstance(x, str) for x in (time, file, kind, machine)) or not (
            commit is None or isinstance(commit, str)
        ):
            return None
        if previous not in _STATUSES or status not in _STATUSES or not isinstance(gates, list):
            return None
        if not all(type(n) is int and n > 0 for n in gates):
            return None
        return cls(key, time, Status(previous), Status(status), file, kind, machine, commit, tuple(gates))


_STATUSES = frozenset(s.value for s in Status)


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
    events += [_Event(_time(data.get("time", "")), 1, i) for i, (_, data) in enumerate(store.signoffs)]
    events += [_Event(utc(r.time), 2, i) for i, r in enumerate(results)]
    events.sort(key=lambda e: e.time)  # stable: runs within one second keep the store's order
    return events


def _time(raw: object) -> str:
    """A sign-off's recorded time as the store orders it (UTC, seconds), as is when it is no time."""
    return utc_time(raw) or str(raw)


def _touches(index: TestIndex, run: TestRun, key: str, gate: TestGate) -> bool:
    """Can ``run`` change test gate ``key``'s verdict? When it holds a record the gate selects, and when it ran the
    whole gate (verify ran it, or its arguments cover the gate's) though none is left: it drops the tests gone
    from the code, so a gate can end with "0 tests collected"."""
    return key in run.gates or index.touches(run, gate.test) or covers(run.provenance.get("args"), gate.test)


class _Phase:
    """One phase's state during the replay: each gate's verdict and what status asks besides it."""

    __slots__ = ("deps", "done_once", "ever", "key", "manual", "met_once", "own", "phase", "plan", "verdicts")

    def __init__(self, plan: Plan, phase: Phase) -> None:
        self.plan, self.phase = plan, phase
        self.key = f"{plan.id}/{phase.id}"
        self.deps = tuple(qualify(plan.id, d) for d in phase.depends)
        self.manual = manual_hashes(phase)
        self.verdicts: list[GateVerdict] = [GateVerdict(False, "no evidence yet")] * len(phase.gates)
        self.ever = [False] * len(phase.gates)  # each gate's "met at some time", as status asks it
        self.met_once = [False] * len(phase.gates)  # a bench gate met on some earlier result set
        self.done_once = False  # all gates met together once
        self.own = Status.PLANNED  # the status on its own gates

    def own_status(self) -> Status:
        """The status on the phase's own gates (docs/reference.md precedence, without ``stale``, which needs the tree
        of then): regressed when a gate fails, each gate was met at some time (a failing test that never passed is new
        work) and all of them were met together once."""
        verdicts = self.verdicts
        if self.done_once and any(v.failed for v in verdicts) and all(self.ever):
            return Status.REGRESSED
        if verdicts and all(v.met for v in verdicts):
            return Status.DONE
        return Status.IN_PROGRESS if any(v.met for v in verdicts) else Status.PLANNED


class _Statuses:
    """The replayed phases' statuses, brought up to date after each evidence file for the phases it changed and
    their dependents only (a report replays 10,000 phases)."""

    def __init__(self, states: dict[str, _Phase]) -> None:
        self.states = states
        self.dependents: dict[str, list[str]] = {}
        for key, state in states.items():
            for dep in state.deps:
                self.dependents.setdefault(dep, []).append(key)
        self.now = {key: self._status(state) for key, state in states.items()}

    def _status(self, state: _Phase) -> Status:
        """The phase's own status, or ``blocked`` where a dependency is not done (one that is not replayed, in a
        plan file that is not valid, has no status: it blocks, as it does in ``tracker status``)."""
        if state.own in (Status.IN_PROGRESS, Status.PLANNED):
            states = self.states
            if any(d not in states or states[d].own is not Status.DONE for d in state.deps):
                return Status.BLOCKED
        return state.own

    def update(self, changed: Iterable[str]) -> dict[str, Status]:
        """The statuses after the gates of the ``changed`` phases changed: {PLAN/PHASE: its status before} of each
        phase (one of those or a dependent) whose status changed."""
        affected: dict[str, None] = {}
        for key in changed:
            state = self.states[key]
            if state.verdicts and all(v.met for v in state.verdicts):
                state.done_once = True
            state.own = state.own_status()
            affected[key] = None
            affected.update(dict.fromkeys(self.dependents.get(key, ())))
        before: dict[str, Status] = {}
        for key in affected:
            status = self._status(self.states[key])
            if status is not self.now[key]:
                before[key], self.now[key] = self.now[key], status
        return before


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
    index = TestIndex(store)
    runs_seen = 0
    prefix = Store(signoffs=[])  # the sign-offs replayed so far
    seen_results: list[ResultRun] = []

    def bench(gate: BenchGate) -> GateVerdict:
        from tracker.core.bench_verdict import evaluate_bench_gate

        return evaluate_bench_gate(gate, seen_results, bounds)

    # The gates each kind of evidence file can change: a test run those its records or arguments reach, a sign-off
    # the manual gates of its phase (by PLAN/PHASE#), a result run the bench gates of a metric it measured.
    tests: list[tuple[_Phase, int, str, TestGate]] = []
    manual: dict[str, list[tuple[_Phase, int]]] = {}
    by_metric: dict[str, list[tuple[_Phase, int]]] = {}
    for state in states.values():
        for i, gate in enumerate(state.phase.gates):
            if isinstance(gate, TestGate):
                tests.append((state, i, gate_key(state.plan.id, state.phase.id, i), gate))
            elif isinstance(gate, ManualGate):
                manual.setdefault(state.key + "#", []).append((state, i))
            else:
                by_metric.setdefault(gate.bench, []).append((state, i))

    statuses = _Statuses(states)
    out: dict[str, list[Transition]] = {k: [] for k in states}
    for event in _events(store, results):
        touched: list[tuple[_Phase, int]]
        if event.kind == 0:
            run = store.runs[event.position]
            runs_seen += 1
            touched = [(s, i) for s, i, key, gate in tests if _touches(index, run, key, gate)]
            file, kind, machine = run.file, "test run", str(run.provenance.get("host", "?"))
            commit = run.provenance.get("commit")
        elif event.kind == 1:
            file, data = store.signoffs[event.position]
            prefix.signoffs.append((file, data))
            touched = manual.get(str(data.get("gate_key", "")).rsplit("#", 1)[0] + "#", [])
            kind, machine, commit = "sign-off", str(data.get("host", "?")), data.get("commit")
        else:
            result = results[event.position]
            seen_results.append(result)
            touched = [pair for metric in {c.metric for c in result.cases} for pair in by_metric.get(metric, [])]
            file, kind, commit = result.path, "result", result.commit
            machine = f"{result.host} ({result.gpu})" if result.gpu else result.host
        if not touched:
            continue
        view = index.before(runs_seen)
        changed: dict[str, list[int]] = {}
        for state, i in touched:
            gate = state.phase.gates[i]
            key = gate_key(state.plan.id, state.phase.id, i)
            verdict, ever = gate_verdict(key, gate, view, prefix, state.manual, bench)
            if isinstance(gate, BenchGate):
                # As status asks it (LiveEvidence): a failing bench gate was met if it was on an earlier result set.
                state.met_once[i] = state.met_once[i] or verdict.met
                ever = verdict.met or (verdict.failed and state.met_once[i])
            old = state.verdicts[i]
            if (verdict.met, verdict.failed, ever) != (old.met, old.failed, state.ever[i]):
                changed.setdefault(state.key, []).append(i + 1)
            state.verdicts[i], state.ever[i] = verdict, ever
        for key, previous in statuses.update(changed).items():
            gates = tuple(sorted(changed.get(key, ())))
            out[key].append(
                Transition(key, event.time, previous, statuses.now[key], file, kind, machine, commit, gates)
            )
    return out if only is None else {k: v for k, v in out.items() if k in set(only)}


def _with_dependencies(keys: set[str], states: Mapping[str, _Phase]) -> set[str]:
    """``keys`` and the phases their dependencies name (direct ones: blocked looks one level down)."""
    out = {k for k in keys if k in states}
    for key in list(out):
        out |= {d for d in states[key].deps if d in states}
    return out


def status_at(transitions: Sequence[Transition], time: str, start: Status = Status.PLANNED) -> Status:
    """The status a phase had at ``time`` (UTC string), from its transitions; ``start`` before the first."""
    status = start
    for t in transitions:
        if t.time > time:
            break
        status = t.status
    return status
