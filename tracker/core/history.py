"""Evidence across runs: was a phase done before (``regressed``), which gates are still fresh
(incremental ``verify``), and the regression lines of ``tracker check``.

Pure functions over the loaded store, plans and result runs. A phase is ``regressed`` when it was
done and a gate now fails: :func:`was_done` replays the store to confirm that all its gates were
met together once (``tracker.core.status`` asks it only when a gate failed). What ``tracker gc`` keeps is
:mod:`tracker.core.pruning`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING

from tracker.base.contract import utc_time
from tracker.base.file_index import FileIndex
from tracker.base.selection import gate_inputs
from tracker.core.manual_gate import manual_hashes
from tracker.core.model import (
    BenchGate,
    GateVerdict,
    Phase,
    PhaseStatus,
    Plan,
    ResultRun,
    Status,
    Store,
    TestGate,
    TestRun,
    gate_hash,
    gate_key,
)
from tracker.core.testgate import TestIndex, gate_verdict

if TYPE_CHECKING:  # datetime is imported only when result times are replayed
    from datetime import datetime


def regressions(statuses: Mapping[str, PhaseStatus]) -> list[str]:
    """One line per regressed phase: ``PLAN/PHASE: regressed: gate N: reason (evidence, machine, commit)``."""
    out: list[str] = []
    for key, st in statuses.items():
        if st.status is not Status.REGRESSED:
            continue
        for i, v in enumerate(st.verdicts):
            if v.failed:
                where = (
                    f" ({v.source.file}, {v.source.machine}, {(v.source.commit or 'no commit')[:7]})"
                    if v.source
                    else ""
                )
                out.append(f"{key}: regressed: gate {i + 1}: {v.reason}{where}")
    return out


def fresh_test_gates(
    plans: Sequence[Plan], store: Store, statuses: Mapping[str, PhaseStatus], index: FileIndex, keys: Sequence[str]
) -> set[str]:
    """Test gates (``PLAN/PHASE#N``) whose passing evidence still matches: incremental ``verify``.

    Fresh means met, and the run that met it recorded the same gate definition hash (when it
    recorded one) and the same blob ids for the phase's ``paths``, the gate's test file or
    directory and pytest's configuration files on the way to it (:func:`tracker.base.selection.config_paths`) as the
    working tree has now, and the modules git ignores that its tests imported (``provenance.ignored_modules``) are as
    they were (``index.id_now``: a tree that cannot say has nothing fresh that imported one).
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
        if not (verdict.met and verdict.source and isinstance(gate, TestGate)):
            continue
        # Every run a pass of the gate comes from (a partial run leaves the other tests' passes in older runs).
        met_by = [runs.get(file) for file in (verdict.source.file, *verdict.also)]
        patterns = [*phase.paths, *gate_inputs(gate.test)]
        same = None if phase.exact else index.same_code  # as status judges it: a comment edit is no change
        if all(run is not None and _fresh_run(run, key, gate, patterns, index, then, same) for run in met_by):
            fresh.add(key)
    return fresh


def _fresh_run(
    run: TestRun,
    key: str,
    gate: TestGate,
    patterns: list[str],
    index: FileIndex,
    then: dict[str, FileIndex],
    same: Callable[[str, str | None, str | None], bool] | None = None,
) -> bool:
    """Did ``run`` record the gate's definition as it is now (when it recorded one) and the blob ids the working tree
    (``index``) has now under ``patterns``, or versions of them that ``same`` says are the same code (a comment
    edit, as status judges it)? ``then``: the runs' file indexes built so far, by file."""
    if key in run.gates and run.gates[key] != gate_hash(gate):
        return False
    ignored = run.provenance.get("ignored_modules") or {}  # what its tests imported that git ignores (round 18, F2a)
    if ignored and (index.id_now is None or any(index.id_now(p) != blob for p, blob in ignored.items())):
        return False
    if index.unrecorded_inputs(gate.test, ignored):
        return False  # pytest reads what git ignores, and the run did not (round 20, N4)
    if run.file not in then:
        then[run.file] = FileIndex(run.files)
    old, new = then[run.file].match(patterns), index.match(patterns)
    if old == new:
        return True
    if same is None or old.keys() != new.keys():
        return False
    return all(old[p] == new[p] or same(p, old[p], new[p]) for p in old)


def _utc(when: datetime) -> str:

    from datetime import UTC  # only for result runs, which are parsed with datetime anyway

    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def was_done(
    plan: Plan,
    phase: Phase,
    store: Store,
    results: Sequence[ResultRun] = (),
    tests: TestIndex | None = None,
    bounds: MutableMapping[str, float] | None = None,
) -> bool:
    """Were all of the phase's gates met together on the evidence as it stood at some earlier time?

    The exact "was done" behind ``regressed`` (a gate that was met once and another met later, never
    both at once, is not a regression). Replays the store in time order, newest first; asked only
    for phases that have a failed gate and whose every gate was met at some time. One test index serves
    every prefix (:meth:`~tracker.core.testgate.TestIndex.before`), so a replay costs one evaluation per
    evidence time, not one index build. ``results`` matter only to a phase with a bench gate; ``tests``: the
    store's test index when the caller has one; ``bounds``: bootstrap bounds known already (gets new ones).
    """
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
    # a sign-off at its UTC time: any ISO-8601 offset or precision is valid in the store, and text orders only UTC
    events += [(utc_time(d.get("time")) or str(d.get("time", "")), 1, i) for i, (_, d) in enumerate(store.signoffs)]
    events += [(_utc(r.time), 2, i) for i, r in enumerate(results)]
    events.sort(key=lambda e: e[0])
    every = tests if tests is not None else TestIndex(store)
    manual = manual_hashes(phase)
    # The evidence of the prefix events[:k], shrunk one event at a time as k goes down.
    runs_seen = sum(kind == 0 for _, kind, _ in events)
    prefix = Store(signoffs=[store.signoffs[i] for _, kind, i in events if kind == 1])
    runs = [results[i] for _, kind, i in events if kind == 2]

    def bench(gate: BenchGate) -> GateVerdict:
        from tracker.core.bench_verdict import evaluate_bench_gate

        return evaluate_bench_gate(gate, runs, bounds)

    for k in range(len(events), 0, -1):
        tests = every.before(runs_seen)
        met = True
        for i, gate in enumerate(phase.gates):
            met = gate_verdict(gate_key(plan.id, phase.id, i), gate, tests, prefix, manual, bench)[0].met
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
