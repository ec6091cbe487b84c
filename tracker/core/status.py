"""Status derivation (pure): plans + evidence + current file ids -> one PhaseStatus per phase. What reads the
repository's evidence for it is :mod:`tracker.store.derive`.

Precedence, first match wins (docs/reference.md, "Status rules"):

1. ``regressed``: a gate failed on its newest evidence, and the phase was done before: all its
   gates met together on the evidence as it stood at some earlier time (``tracker.core.history.was_done``).
2. ``stale``: every gate is met, but files under ``paths`` or a gate's definition changed since the
   evidence that met it.
3. ``done``: every gate is met (a phase without gates is never done).
4. ``blocked``: a dependency is not ``done``.
5. ``in-progress``: some gate is met.
6. ``planned``: no gate is met.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tracker.base.contract import shown_name
from tracker.base.file_index import FileIndex, changed_files
from tracker.base.selection import gate_inputs
from tracker.core.checks import qualify
from tracker.core.evidence_answers import Evidence, LiveEvidence
from tracker.core.manual_gate import manual_hashes
from tracker.core.model import (
    BenchEvaluator,
    BenchGate,
    Gate,
    GateVerdict,
    Phase,
    PhaseStatus,
    Plan,
    Status,
    Store,
    TestGate,
    gate_key,
)


def compute(
    plans: list[Plan],
    store: Store,
    files: Callable[[], FileIndex],
    bench: Callable[[], BenchEvaluator],
    outside: Callable[[str], str | None] | None = None,
    missing: Callable[[str], str | None] | None = None,
) -> dict[str, PhaseStatus]:
    """Status of every phase, keyed ``PLAN/PHASE``. ``files``/``bench`` are called only if needed; ``outside``,
    ``missing``: as for :func:`evaluate`."""
    return evaluate(plans, LiveEvidence(store, bench), files, outside, missing)


def evaluate(
    plans: list[Plan],
    evidence: Evidence,
    files: Callable[[], FileIndex],
    outside: Callable[[str], str | None] | None = None,
    missing: Callable[[str], str | None] | None = None,
) -> dict[str, PhaseStatus]:
    """Status of every phase from ``evidence``'s answers and the working tree's file ids (``files``, read only
    when a phase has all its gates met). ``outside``: why a test gate's pytest argument is not the repository's
    (it leaves it through a symlink: :class:`tracker.base.gate_paths.OutsideCheck`), asked of every test gate; such a
    gate is unmet with that reason, whatever the evidence says (a test file linked out under a gate's directory is
    the evidence's to tell: :mod:`tracker.core.testgate`, but a gate whose own path leaves says so first). ``missing``:
    why a test gate's file or directory does not exist on the tree now (:class:`tracker.base.gate_paths.MissingCheck`):
    a gate with evidence is unmet with that reason too, not failed (its tests are gone, not failing)."""
    own: dict[str, tuple[Plan, Phase, list[GateVerdict], list[bool]]] = {}
    for plan in plans:
        for phase in plan.phases:
            verdicts, ever = [], []
            manual = manual_hashes(phase)
            for i, gate in enumerate(phase.gates):
                v, was = evidence.verdict(gate_key(plan.id, phase.id, i), gate, manual)
                if outside is not None and isinstance(gate, TestGate) and (why := outside(gate.test)):
                    why = f"{why}: its tests are not the repository's (tracker lint)"
                    v = GateVerdict(False, why, v.source, failed=v.failed)
                elif (
                    v.source is not None
                    and missing is not None
                    and isinstance(gate, TestGate)
                    and (why := missing(gate.test))
                ):  # evidence of tests that are gone: never run, it says no more than "no evidence"
                    v = GateVerdict(False, why, v.source)
                verdicts.append(v)
                ever.append(was)
            own[f"{plan.id}/{phase.id}"] = (plan, phase, verdicts, ever)
    index: FileIndex | None = None
    memo: dict[tuple[str, tuple[str, ...]], set[str]] = {}  # phases share their runs and their patterns
    base: dict[str, tuple[Status, tuple[str, ...], str]] = {}
    for key, (plan, phase, verdicts, ever) in own.items():
        all_met = bool(verdicts) and all(v.met for v in verdicts)
        if any(v.failed for v in verdicts) and all(ever) and evidence.was_done(plan, phase):
            base[key] = (Status.REGRESSED, (), "")
        elif all_met:
            index = index or files()
            changed, note = _staleness(plan, phase, verdicts, evidence, index, memo)
            base[key] = (Status.STALE, changed, note) if note else (Status.DONE, (), "")
        else:
            base[key] = (Status.IN_PROGRESS if any(v.met for v in verdicts) else Status.PLANNED, (), "")
    out: dict[str, PhaseStatus] = {}
    for key, (plan, phase, verdicts, _) in own.items():
        status, changed, note = base[key]
        blockers: tuple[str, ...] = ()
        if status in (Status.IN_PROGRESS, Status.PLANNED):
            blockers = tuple(
                d for d in (qualify(plan.id, d) for d in phase.depends) if base.get(d, (None,))[0] != Status.DONE
            )
            if blockers:
                status, note = Status.BLOCKED, "blocked by " + ", ".join(blockers)
        out[key] = PhaseStatus(plan.id, phase.id, status, tuple(verdicts), blockers, changed, note)
    return out


def _staleness(
    plan: Plan,
    phase: Phase,
    verdicts: list[GateVerdict],
    evidence: Evidence,
    index: FileIndex,
    memo: dict[tuple[str, tuple[str, ...]], set[str]] | None = None,
) -> tuple[tuple[str, ...], str]:
    """(changed files, note) when the evidence behind a met phase no longer matches; note '' if fresh. ``memo``:
    the changed files per (evidence file, patterns), shared by the phases of one derivation."""
    changed: set[str] = set()
    notes: list[str] = []
    memo = {} if memo is None else memo
    for i, (gate, v) in enumerate(zip(phase.gates, verdicts, strict=False)):
        files, definition = _gate_changes(plan, phase, i, gate, v, evidence, index, memo)
        changed.update(files)
        if definition:
            notes.append(definition)
    if changed:
        notes.append(_changed_note(changed))
    return tuple(sorted(changed)), "; ".join(notes)


def _changed_note(changed: set[str] | list[str]) -> str:
    names = [shown_name(p) for p in sorted(changed)[:5]]  # a name that is not UTF-8: escaped, as a region is
    shown = ", ".join(names) + (f" (+{len(changed) - 5} more)" if len(changed) > 5 else "")
    return f"changed since evidence: {shown}"


def _gate_changes(
    plan: Plan,
    phase: Phase,
    i: int,
    gate: Gate,
    v: GateVerdict,
    evidence: Evidence,
    index: FileIndex,
    memo: dict[tuple[str, tuple[str, ...]], set[str]] | None = None,
) -> tuple[list[str], str]:
    """What no longer matches the evidence behind gate ``i``'s verdict: (files under the phase's ``paths``
    that changed since, a note when the gate's definition changed since; '' otherwise)."""
    if v.source is None:
        return [], ""
    if isinstance(gate, BenchGate):
        # Like test gates, a phase goes stale only through the code under its own ``paths`` (a phase
        # without paths never goes stale through files): a change to another measured file (the
        # baseline, the harness) belongs to the phases that cover it.
        if not phase.paths:
            return [], ""
        measured = evidence.recorded_files(v.source.file, phase.paths, bench=True)
        edited = [
            path
            for path, blob in measured.items()
            if index.files.get(path) != blob and not _same_code(index, phase, path, blob, index.files.get(path))
        ]
        # A file under the globs the run measured by, and under the phase's paths, that the run did not measure is
        # new code under the benchmark (a run that does not name its globs cannot tell).
        patterns = evidence.measured_patterns(v.source.file)
        if patterns:
            new = FileIndex(index.match(patterns)).match(phase.paths)
            edited += [path for path in new if path not in measured]
        return sorted(edited), ""
    # Every run the verdict rests on (a test's newest pass may be older than another's): each must still match.
    sources = (v.source.file, *v.also)
    key = gate_key(plan.id, phase.id, i)
    since = next((file for file in sources if evidence.definition_changed(file, key, gate)), None)
    note = f"gate {i + 1} definition changed since {since}" if since is not None else ""
    memo = {} if memo is None else memo

    def changed_since(file: str, patterns: tuple[str, ...]) -> set[str]:
        """Files under ``patterns`` whose code changed since evidence ``file`` (once per file and patterns; a
        comment edit is no change unless the phase is ``exact``)."""
        key = (file, (*patterns, "\0exact") if phase.exact else patterns)
        if key not in memo:
            then, now = evidence.recorded_files(file, patterns, False), index.match(patterns)
            memo[key] = {
                p for p in changed_files(then, now) if not _same_code(index, phase, p, then.get(p), now.get(p))
            }
        return memo[key]

    config = gate_inputs(gate.test) if isinstance(gate, TestGate) else ()
    changed: set[str] = set()
    # Its own tests and pytest's configuration are inputs of every test gate, whatever the phase's paths.
    for patterns in (config, tuple(phase.paths)) if phase.paths else (config,):
        if patterns:
            for file in sources:
                changed |= changed_since(file, patterns)
    # So are the modules git ignores that its tests imported from the tree (no id of the tree names them: round 17,
    # F2), each hashed as it is now (on a tree that cannot say, at a past revision, there are none).
    now, recorded = index.id_now, set[str]()
    for file in sources:
        ignored = evidence.ignored_modules(file)
        recorded.update(ignored)
        changed.update(p for p, blob in ignored.items() if now is not None and now(p) != blob)
    if isinstance(gate, TestGate):  # configuration or tests git ignores, new since its runs
        changed.update(index.unrecorded_inputs(gate.test, recorded))
    return sorted(changed), note


def _same_code(index: FileIndex, phase: Phase, path: str, then: str | None, now: str | None) -> bool:
    """Do the two versions of ``path`` differ only in comments and layout (:mod:`tracker.store.same_code`)? Never for an
    ``exact`` phase (its gates check the text itself), nor where the index cannot tell."""
    same = index.same_code
    return not phase.exact and same is not None and same(path, then, now)


def stale_gates(
    phases: Iterable[tuple[Plan, Phase]],
    statuses: dict[str, PhaseStatus],
    store: Store,
    index: FileIndex,
    bench: BenchEvaluator | None = None,
) -> dict[str, str]:
    """{gate key: why} for every met gate of a ``stale`` phase whose own evidence no longer matches (what
    ``tracker verify`` shows instead of "met"): the gate's definition changed since, or files under the
    phase's ``paths`` that its evidence saw (a bench result: measured) changed since. ``bench``: the bench
    evaluator the statuses were computed with."""

    def no_bench() -> BenchEvaluator:
        raise AssertionError("stale_gates: a bench gate's files asked without its evaluator")

    evidence = LiveEvidence(store, (lambda: bench) if bench is not None else no_bench)
    out: dict[str, str] = {}
    for plan, phase in phases:
        st = statuses.get(f"{plan.id}/{phase.id}")
        if st is None or st.status is not Status.STALE:
            continue
        for i, (gate, v) in enumerate(zip(phase.gates, st.verdicts, strict=False)):
            files, definition = _gate_changes(plan, phase, i, gate, v, evidence, index)
            why = "; ".join(x for x in (definition, _changed_note(files) if files else "") if x)
            if v.met and why:
                out[gate_key(plan.id, phase.id, i)] = why
    return out
