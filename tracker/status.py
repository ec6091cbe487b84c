"""Status derivation (pure): plans + evidence + current file ids -> one PhaseStatus per phase.

Precedence, first match wins (README "Status rules"):

1. ``regressed``: a gate failed on its newest evidence, and the phase was done before: all its
   gates met together on the evidence as it stood at some earlier time (``tracker.history.was_done``).
2. ``stale``: every gate is met, but files under ``paths`` or a gate's definition changed since the
   evidence that met it.
3. ``done``: every gate is met (a phase without gates is never done).
4. ``blocked``: a dependency is not ``done``.
5. ``in-progress``: some gate is met.
6. ``planned``: no gate is met.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from tracker.checks import qualify
from tracker.evidence import Clock, Store
from tracker.fingerprint import FileIndex, changed_files
from tracker.model import BenchGate, Gate, GateVerdict, ManualGate, Phase, PhaseStatus, Plan, Status, TestGate, gate_hash
from tracker.testgate import TestIndex, gate_changed, manual_hashes, manual_verdict

BenchEvaluator = Callable[[BenchGate], GateVerdict]


def gate_key(plan_id: str, phase_id: str, index: int) -> str:
    """Key of a phase's gate in evidence files: ``0002/P1#1`` (1-based, as shown to users)."""
    return f"{plan_id}/{phase_id}#{index + 1}"


def bench_evaluator(root: Path, store: Store, clock: Clock | None = None) -> BenchEvaluator:
    """Bench gates bound to the repository's results (``tracker.benchstatus.Evaluator``): verdicts
    cached by result-file content, plus ``ever_met`` (for regressed) and ``changed`` (for stale).
    Imported only when a plan has bench gates; a warm call parses no result file. The store's result
    copies are the ones ``store`` lists (its files are not read again to find them); ``clock``: the time
    result times are checked against (default: now)."""
    from tracker.benchstatus import Evaluator, load_results
    from tracker.results import repo_result_files

    return Evaluator(load_results(root, repo_result_files(root, [rel for rel, _ in store.bench]), clock))


def _evidence_files(store: Store, source_file: str) -> tuple[dict[str, str], dict[str, str]]:
    """(file ids, gate hashes) recorded by the evidence file a verdict came from."""
    for run in store.runs:
        if run.file == source_file:
            return run.files, run.gates
    for file, data in store.signoffs:
        if file == source_file:
            return data.get("files", {}), {data.get("gate_key", ""): data.get("gate_hash", "")}
    return {}, {}


def compute(
    plans: list[Plan],
    store: Store,
    files: Callable[[], FileIndex],
    bench: Callable[[], BenchEvaluator],
) -> dict[str, PhaseStatus]:
    """Status of every phase, keyed ``PLAN/PHASE``. ``files``/``bench`` are called only if needed."""
    tests = TestIndex(store)
    invalid = _invalid_evidence(store)
    own: dict[str, tuple[Plan, Phase, list[GateVerdict], list[bool]]] = {}
    bench_eval: BenchEvaluator | None = None
    for plan in plans:
        for phase in plan.phases:
            verdicts, ever = [], []
            manual = manual_hashes(phase)
            for i, gate in enumerate(phase.gates):
                key = gate_key(plan.id, phase.id, i)
                if invalid is not None and not isinstance(gate, ManualGate):
                    v, was = invalid, False
                elif isinstance(gate, TestGate):
                    v, was = tests.verdict(key, gate)
                elif isinstance(gate, ManualGate):
                    v, _ = manual_verdict(key, gate, store, manual)
                    was = v.met
                else:
                    bench_eval = bench_eval or bench()
                    v = bench_eval(gate)
                    # Met on an earlier run and failing now is a regression (asked only on failure: costly).
                    was = v.met or (v.failed and bool(getattr(bench_eval, "ever_met", lambda g: False)(gate)))
                verdicts.append(v)
                ever.append(was or v.met)
            own[f"{plan.id}/{phase.id}"] = (plan, phase, verdicts, ever)
    index: FileIndex | None = None
    then_cache: dict[str, FileIndex] = {}
    base: dict[str, tuple[Status, tuple[str, ...], str]] = {}
    for key, (plan, phase, verdicts, ever) in own.items():
        all_met = bool(verdicts) and all(v.met for v in verdicts)
        if any(v.failed for v in verdicts) and all(ever) and _was_done(plan, phase, store, bench_eval, tests):
            base[key] = (Status.REGRESSED, (), "")
        elif all_met:
            index = index or files()
            changed, note = _staleness(plan, phase, verdicts, store, index, then_cache, getattr(bench_eval, "changed", None))
            base[key] = (Status.STALE, changed, note) if note else (Status.DONE, (), "")
        else:
            base[key] = (Status.IN_PROGRESS if any(v.met for v in verdicts) else Status.PLANNED, (), "")
    out: dict[str, PhaseStatus] = {}
    for key, (plan, phase, verdicts, _) in own.items():
        status, changed, note = base[key]
        blockers: tuple[str, ...] = ()
        if status in (Status.IN_PROGRESS, Status.PLANNED):
            blockers = tuple(d for d in (qualify(plan.id, d) for d in phase.depends) if base.get(d, (None,))[0] != Status.DONE)
            if blockers:
                status, note = Status.BLOCKED, "blocked by " + ", ".join(blockers)
        out[key] = PhaseStatus(plan.id, phase.id, status, tuple(verdicts), blockers, changed, note)
    return out


def _invalid_evidence(store: Store) -> GateVerdict | None:
    """The verdict of every test and bench gate while a file in the store cannot be read: it could be
    the newest run, so the others must not decide in its place."""
    bad = store.invalid
    if not bad:
        return None
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    return GateVerdict(False, f"invalid evidence file, fix or remove it: {bad[0]}{more}")


def _was_done(plan: Plan, phase: Phase, store: Store, bench_eval: BenchEvaluator | None, tests: TestIndex) -> bool:
    """Exact check that the gates were all met together once (``tracker.history.was_done``). The results are
    parsed only for a phase with a bench gate: the others' answer does not depend on them."""
    from tracker.history import was_done

    bench = any(isinstance(g, BenchGate) for g in phase.gates)
    return was_done(plan, phase, store, getattr(bench_eval, "results", ()) if bench else (), tests)


def _staleness(
    plan: Plan, phase: Phase, verdicts: list[GateVerdict], store: Store, index: FileIndex, then_cache: dict[str, FileIndex],
    bench_changed: Callable[[str, dict[str, str]], list[str]] | None = None,
) -> tuple[tuple[str, ...], str]:
    """(changed files, note) when the evidence behind a met phase no longer matches; note '' if fresh."""
    changed: set[str] = set()
    notes: list[str] = []
    for i, (gate, v) in enumerate(zip(phase.gates, verdicts)):
        files, definition = _gate_changes(plan, phase, i, gate, v, store, index, then_cache, bench_changed)
        changed.update(files)
        if definition:
            notes.append(definition)
    if changed:
        notes.append(_changed_note(changed))
    return tuple(sorted(changed)), "; ".join(notes)


def _changed_note(changed: set[str] | list[str]) -> str:
    shown = ", ".join(sorted(changed)[:5]) + (f" (+{len(changed) - 5} more)" if len(changed) > 5 else "")
    return f"changed since evidence: {shown}"


def _gate_changes(
    plan: Plan, phase: Phase, i: int, gate: Gate, v: GateVerdict, store: Store, index: FileIndex,
    then_cache: dict[str, FileIndex], bench_changed: Callable[[str, dict[str, str]], list[str]] | None,
) -> tuple[list[str], str]:
    """What no longer matches the evidence behind gate ``i``'s verdict: (files under the phase's ``paths``
    that changed since, a note when the gate's definition changed since; '' otherwise)."""
    if v.source is None:
        return [], ""
    if isinstance(gate, BenchGate):  # a result's own fingerprint: the files the benchmark measured
        # Like test gates, a phase goes stale only through the code under its own ``paths`` (a phase
        # without paths never goes stale through files): a change to another measured file (the
        # baseline, the harness) belongs to the phases that cover it.
        measured = bench_changed(v.source.file, dict(index.files)) if bench_changed and phase.paths else []
        return (list(FileIndex(dict.fromkeys(measured, "")).match(phase.paths)) if measured else []), ""
    recorded_files, recorded_gates = _evidence_files(store, v.source.file)
    note = f"gate {i + 1} definition changed since {v.source.file}" if gate_changed(gate_key(plan.id, phase.id, i), gate, recorded_gates) else ""
    if not phase.paths:
        return [], note
    if v.source.file not in then_cache:
        then_cache[v.source.file] = FileIndex(recorded_files)
    then = then_cache[v.source.file].match(phase.paths)
    return changed_files(then, index.match(phase.paths)), note


def stale_gates(
    phases: Iterable[tuple[Plan, Phase]], statuses: dict[str, PhaseStatus], store: Store, index: FileIndex,
    bench_changed: Callable[[str, dict[str, str]], list[str]] | None = None,
) -> dict[str, str]:
    """{gate key: why} for every met gate of a ``stale`` phase whose own evidence no longer matches (what
    ``tracker verify`` shows instead of "met"): the gate's definition changed since, or files under the
    phase's ``paths`` that its evidence saw (a bench result: measured) changed since."""
    out: dict[str, str] = {}
    then_cache: dict[str, FileIndex] = {}
    for plan, phase in phases:
        st = statuses.get(f"{plan.id}/{phase.id}")
        if st is None or st.status is not Status.STALE:
            continue
        for i, (gate, v) in enumerate(zip(phase.gates, st.verdicts)):
            files, definition = _gate_changes(plan, phase, i, gate, v, store, index, then_cache, bench_changed)
            why = "; ".join(x for x in (definition, _changed_note(files) if files else "") if x)
            if v.met and why:
                out[gate_key(plan.id, phase.id, i)] = why
    return out


def derive(root: Path, plans: list[Plan]) -> dict[str, PhaseStatus]:
    """Statuses of ``plans`` from the repository's evidence store and working tree."""
    from tracker import evidence
    from tracker.fingerprint import tree_file_ids

    clock = evidence.Clock()
    # Unreadable files: listed in store.invalid, shown on gates. Result copies are read through tracker.results.
    store = evidence.load(root, strict=False, clock=clock, results=False)
    return compute(plans, store, lambda: FileIndex(tree_file_ids(root)), lambda: bench_evaluator(root, store, clock))


__all__ = ["compute", "derive", "bench_evaluator", "gate_key", "gate_hash", "stale_gates"]
