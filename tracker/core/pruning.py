"""What ``tracker gc`` keeps: the evidence files every current verdict and its history depend on.

Pure functions over the loaded store, plans and result runs. ``gc`` keeps, per test node id, the newest run
where it ran, the newest where it passed and the newest where it appeared at all (so every verdict, its "was
met" history and its skip reasons survive); per gate, the newest run that named it; the newest sign-off per
manual gate; per bench case, the newest result file plus the run that last met each bench gate; and every
evidence file that brought a status transition (:func:`tracker.core.timeline.replay`: what ``tracker log``, ``show``
and a report list, so a regression episode and the date a phase became done survive gc).
Everything else is superseded; :func:`settle` then adds back what showing that a phase was done, and the
timeline as it was, needs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from tracker.base.contract import utc_time
from tracker.core.bench_verdict import evaluate
from tracker.core.model import RAN, BenchGate, Plan, ResultRun, Store
from tracker.core.timeline import Transition, replay


class KeepSet:
    """Evidence files to keep, each with the first reason found (shown by ``tracker gc --dry-run``)."""

    def __init__(self) -> None:
        self.why: dict[str, str] = {}

    def add(self, file: str | None, reason: str) -> None:
        """Keep ``file`` for ``reason`` (the first reason wins)."""
        if file is not None:
            self.why.setdefault(file, reason)


def _case_key(metric: str, params: Mapping[str, object], gpu: str | None) -> str:
    typed = sorted((k, type(v).__name__, v) for k, v in params.items())
    return json.dumps([metric, typed, gpu], default=str)


def needed(
    plans: Sequence[Plan],
    store: Store,
    results: Sequence[ResultRun] = (),
    bounds: MutableMapping[str, float] | None = None,
) -> KeepSet:
    """Which evidence files every current verdict and its history depend on (see module docstring).

    ``results`` are the repository's result runs (empty when there are none); ``bounds``: bootstrap bounds known
    already (gets the ones the replay computes).
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
        # Sign-offs follow their gate's text (tracker.core.testgate.manual_verdict): keep the newest per text too.
        signed[f"{key.rsplit('#', 1)[0]}#{data.get('gate_hash', '')}"] = file
    for key, file in signed.items():
        keep.add(file, f"newest sign-off of {key}")
    _keep_bench(plans, results, keep, bounds)
    for key, transitions in replay(plans, store, results, bounds).items():
        for t in transitions:
            keep.add(t.file, f"status history: {key} {t.previous.value} -> {t.status.value} at {t.time}")
    return keep


def _keep_bench(
    plans: Sequence[Plan],
    results: Sequence[ResultRun],
    keep: KeepSet,
    bounds: MutableMapping[str, float] | None = None,
) -> None:
    """Keep the newest result of each case, and the last run meeting each bench gate: the gate judged on the runs up
    to each one that measured its metric, newest first (a prefix ending in a run without it judges as the shorter
    one; ``bounds`` shared, as the replay shares them: gc spent most of its time here without them)."""
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
            if not any(c.metric == gate.bench for c in runs[i - 1].cases):
                continue
            outcome = evaluate(gate, runs[:i], bounds)
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
    store: Store,
    keep: KeepSet,
    results: Sequence[ResultRun],
    view: Callable[[Store, Sequence[ResultRun]], object],
    deletable: Callable[[str], bool] = lambda path: True,
    since: Callable[[Any, Any], str | None] | None = None,
) -> KeepSet:
    """Grow ``keep`` until pruning changes nothing ``view`` shows (statuses, verdicts, timelines).

    The per-test rules of :func:`needed` keep every current verdict, but the moment a phase was
    done (what makes it ``regressed`` now) may live in a run they drop. Dropped files are added
    back newest first until the pruned store looks the same; one evaluation per file at worst.
    ``since(target, pruned)``: the earliest time (UTC) at which two views differ, or None when they differ in no
    time (a status now): the file added back is then the newest dropped one at or before that time (a history
    that goes wrong at some moment goes wrong through a file of that moment or before).
    """
    target = view(store, results)
    dropped = sorted(
        [(r.time, r.file) for r in store.runs if r.file not in keep.why]
        + [(_utc(d.get("time", "")), f) for f, d in store.signoffs if f not in keep.why]
        + [(_utc(r.time.isoformat()), r.path) for r in results if r.path not in keep.why and deletable(r.path)],
        reverse=True,
    )
    while True:
        gone = {f for _, f in dropped}
        pruned = view(without(store, gone), [r for r in results if r.path not in gone])
        if pruned == target or not dropped:
            return keep
        when = since(target, pruned) if since is not None else None
        pick = next((i for i, (t, _) in enumerate(dropped) if when is None or t <= when), 0)
        keep.add(dropped.pop(pick)[1], "needed to show that a phase was done before, or its status history")


def _utc(raw: object) -> str:
    return utc_time(raw) or str(raw)


def first_difference(
    target: Mapping[str, Sequence[Transition]], pruned: Mapping[str, Sequence[Transition]]
) -> str | None:
    """The earliest time at which two timelines ({PLAN/PHASE: transitions}) part, or None when they are the same."""
    times: list[str] = []
    for key in target.keys() | pruned.keys():
        a, b = list(target.get(key, ())), list(pruned.get(key, ()))
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        times += [t.time for t in (a[at : at + 1] + b[at : at + 1])]
    return min(times, default=None)
