"""Evidence across runs: was a phase done before (``regressed``), which gates are still fresh
(incremental ``verify``), the regression lines of ``tracker check``, and what ``tracker gc`` keeps.

Pure functions over the loaded store, plans and result runs. A phase is ``regressed`` when it was
done and a gate now fails: :func:`was_done` replays the store to confirm that all its gates were
met together once (``tracker.status`` asks it only when a gate failed). ``gc`` keeps, per test node id, the newest run where it ran, the newest where it passed
and the newest where it appeared at all (so every verdict, its "was met" history and its skip reasons
survive); per gate, the newest run that named it; the newest sign-off per manual gate; and per bench
case, the newest result file plus the run that last met each bench gate. Everything else is superseded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from tracker.evidence import RAN, Store
from tracker.fingerprint import FileIndex
from tracker.model import BenchGate, Phase, PhaseStatus, Plan, Status, TestGate, gate_hash, gate_key
from tracker.results import ResultRun

if TYPE_CHECKING:
    from tracker.testgate import TestIndex


def regressions(statuses: Mapping[str, PhaseStatus]) -> list[str]:
    """One line per regressed phase: ``PLAN/PHASE: regressed: gate N: reason (evidence, machine, commit)``."""
    out: list[str] = []
    for key, st in statuses.items():
        if st.status is not Status.REGRESSED:
            continue
        for i, v in enumerate(st.verdicts):
            if v.failed:
                where = f" ({v.source.file}, {v.source.machine}, {(v.source.commit or 'no commit')[:7]})" if v.source else ""
                out.append(f"{key}: regressed: gate {i + 1}: {v.reason}{where}")
    return out


@dataclass
class KeepSet:
    """Evidence files to keep, each with the first reason found (shown by ``tracker gc --dry-run``)."""

    why: dict[str, str] = field(default_factory=dict)

    def add(self, file: str | None, reason: str) -> None:
        """Keep ``file`` for ``reason`` (the first reason wins)."""
        if file is not None:
            self.why.setdefault(file, reason)


def _case_key(metric: str, params: Mapping[str, object], gpu: str | None) -> str:
    typed = sorted((k, type(v).__name__, v) for k, v in params.items())
    return json.dumps([metric, typed, gpu], default=str)


def needed(plans: Sequence[Plan], store: Store, results: Sequence[ResultRun] = ()) -> KeepSet:
    """Which evidence files every current verdict and its history depend on (see module docstring).

    ``results`` are the repository's result runs (empty when there are none).
    """
    keep = KeepSet()
    newest_ran: dict[str, str] = {}
    newest_pass: dict[str, str] = {}
    newest_seen: dict[str, str] = {}
    newest_gate: dict[str, str] = {}
    for run in store.runs:  # oldest first: later assignments win
        for rec in run.tests:
            nodeid = rec["nodeid"]
            newest_seen[nodeid] = run.file
            if rec.get("outcome") in RAN:
                newest_ran[nodeid] = run.file
            if rec.get("outcome") == "passed":
                newest_pass[nodeid] = run.file
        for key in run.gates:
            newest_gate[key] = run.file
    for nodeid, file in newest_ran.items():
        keep.add(file, f"newest run of {nodeid}")
    for nodeid, file in newest_pass.items():
        keep.add(file, f"newest pass of {nodeid}")
    for nodeid, file in newest_seen.items():
        keep.add(file, f"newest record of {nodeid}")
    for key, file in newest_gate.items():
        keep.add(file, f"newest run of gate {key}")
    signed: dict[str, str] = {}
    for file, data in store.signoffs:
        key = str(data.get("gate_key", file))
        signed[key] = file
        # Sign-offs follow their gate's text (tracker.testgate.manual_verdict): keep the newest per text too.
        signed[f"{key.rsplit('#', 1)[0]}#{data.get('gate_hash', '')}"] = file
    for key, file in signed.items():
        keep.add(file, f"newest sign-off of {key}")
    _keep_bench(plans, results, keep)
    return keep


def _keep_bench(plans: Sequence[Plan], results: Sequence[ResultRun], keep: KeepSet) -> None:
    from tracker.benchgate import evaluate  # noqa: PLC0415 - only when there are results

    runs = sorted(results, key=lambda r: (r.time, r.path))
    newest: dict[str, str] = {}
    for run in runs:
        for case in run.cases:
            newest[_case_key(case.metric, case.params, run.gpu)] = run.path
    for key, file in newest.items():
        keep.add(file, f"newest result of {json.loads(key)[0]}")
    gates = [g for p in plans for ph in p.phases for g in ph.gates if isinstance(g, BenchGate)]
    for gate in gates:
        for i in range(len(runs), 0, -1):
            outcome = evaluate(gate, runs[:i])
            if outcome.met and outcome.source is not None:
                keep.add(outcome.source.path, f"last run meeting bench gate {gate.bench}")
                break


def superseded(store: Store, keep: KeepSet, bench_files: Sequence[str] = ()) -> list[str]:
    """Complete evidence files (test runs, sign-offs, stored results) that nothing needs any more."""
    files = [r.file for r in store.runs] + [f for f, _ in store.signoffs] + list(bench_files)
    return sorted(f for f in files if f not in keep.why)


def without(store: Store, drop: set[str]) -> Store:
    """The store minus the files in ``drop``."""
    return Store(
        runs=[r for r in store.runs if r.file not in drop],
        signoffs=[s for s in store.signoffs if s[0] not in drop],
        bench=[b for b in store.bench if b[0] not in drop],
        incomplete=[f for f in store.incomplete if f not in drop],
    )


def settle(
    store: Store, keep: KeepSet, results: Sequence[ResultRun], view: Callable[[Store, Sequence[ResultRun]], object],
    deletable: Callable[[str], bool] = lambda path: True,
) -> KeepSet:
    """Grow ``keep`` until pruning changes nothing ``view`` shows (statuses and verdicts).

    The per-test rules of :func:`needed` keep every current verdict, but the moment a phase was
    done (what makes it ``regressed`` now) may live in a run they drop. Dropped files are added
    back newest first until the pruned store looks the same; one evaluation per file at worst.
    """
    target = view(store, results)
    dropped = sorted(
        [(r.time, r.file) for r in store.runs if r.file not in keep.why]
        + [(str(d.get("time", "")), f) for f, d in store.signoffs if f not in keep.why]
        + [(r.time.isoformat(), r.path) for r in results if r.path not in keep.why and deletable(r.path)],
        reverse=True,
    )
    while True:
        gone = {f for _, f in dropped}
        if view(without(store, gone), [r for r in results if r.path not in gone]) == target or not dropped:
            return keep
        keep.add(dropped.pop(0)[1], "needed to show that a phase was done before")


def fresh_test_gates(
    plans: Sequence[Plan], store: Store, statuses: Mapping[str, PhaseStatus], index: FileIndex, keys: Sequence[str]
) -> set[str]:
    """Test gates (``PLAN/PHASE#N``) whose passing evidence still matches: incremental ``verify``.

    Fresh means met, and the run that met it recorded the same gate definition hash (when it
    recorded one) and the same blob ids for the phase's ``paths`` and the gate's test file or
    directory as the working tree has now.
    """
    phases = {f"{p.id}/{ph.id}": ph for p in plans for ph in p.phases}
    runs = {r.file: r for r in store.runs}
    then: dict[str, FileIndex] = {}
    fresh: set[str] = set()
    for key in keys:
        plan_phase, _, num = key.partition("#")
        phase, st = phases.get(plan_phase), statuses.get(plan_phase)
        if phase is None or st is None:
            continue
        gate, verdict = phase.gates[int(num) - 1], st.verdicts[int(num) - 1]
        run = runs.get(verdict.source.file) if verdict.met and verdict.source else None
        if run is None or not isinstance(gate, TestGate):
            continue
        if key in run.gates and run.gates[key] != gate_hash(gate):
            continue
        test_path = gate.test.split("::", 1)[0].rstrip("/")
        patterns = [*phase.paths, test_path, test_path + "/"]
        if run.file not in then:
            then[run.file] = FileIndex(run.files)
        if then[run.file].match(patterns) == index.match(patterns):
            fresh.add(key)
    return fresh


def _utc(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def was_done(plan: Plan, phase: Phase, store: Store, results: Sequence[ResultRun] = (), tests: TestIndex | None = None) -> bool:
    """Were all of the phase's gates met together on the evidence as it stood at some earlier time?

    The exact "was done" behind ``regressed`` (a gate that was met once and another met later, never
    both at once, is not a regression). Replays the store in time order, newest first; asked only
    for phases that have a failed gate and whose every gate was met at some time. One test index serves
    every prefix (:meth:`~tracker.testgate.TestIndex.before`), so a replay costs one evaluation per
    evidence time, not one index build. ``results`` matter only to a phase with a bench gate; ``tests``: the
    store's test index when the caller has one.
    """
    from tracker.testgate import TestIndex, manual_hashes, manual_verdict  # noqa: PLC0415 - core evaluation, replayed

    if not any(isinstance(g, BenchGate) for g in phase.gates):
        results = ()  # their times would only add prefixes that hold the same runs and sign-offs
    # One event per evidence file as (time, kind, index), in store order (time, then name: runs
    # within one second keep their order thanks to the stable sort). A run the store put after newer ones
    # (verify's own run, ``evidence.load(last=...)``) takes the latest time before it: replayed in that order,
    # so the runs of every prefix are the store's oldest ones.
    events: list[tuple[str, int, int]] = []
    latest = ""
    for i, r in enumerate(store.runs):
        latest = max(latest, r.time)
        events.append((latest, 0, i))
    events += [(str(d.get("time", "")), 1, i) for i, (_, d) in enumerate(store.signoffs)]
    events += [(_utc(r.time), 2, i) for i, r in enumerate(results)]
    events.sort(key=lambda e: e[0])
    every = tests if tests is not None else TestIndex(store)
    manual = manual_hashes(phase)
    # The evidence of the prefix events[:k], shrunk one event at a time as k goes down.
    runs_seen = sum(kind == 0 for _, kind, _ in events)
    prefix = Store(signoffs=[store.signoffs[i] for _, kind, i in events if kind == 1])
    runs = [results[i] for _, kind, i in events if kind == 2]
    for k in range(len(events), 0, -1):
        tests = every.before(runs_seen)
        met = True
        for i, gate in enumerate(phase.gates):
            key = gate_key(plan.id, phase.id, i)
            if isinstance(gate, TestGate):
                met = tests.verdict(key, gate)[0].met
            elif isinstance(gate, BenchGate):
                from tracker.benchgate import evaluate  # noqa: PLC0415

                met = evaluate(gate, runs).met
            else:
                met = manual_verdict(key, gate, prefix, manual)[0].met
            if not met:
                break
        if met and phase.gates:
            return True
        dropped = events[k - 1][1]
        if dropped == 0:
            runs_seen -= 1
        else:
            (prefix.signoffs if dropped == 1 else runs).pop()
    return False
