"""What status asks of the evidence, and the answers a loaded store gives.

:class:`Evidence` is the interface (four questions); :class:`LiveEvidence` answers from a loaded store;
:mod:`tracker.store.statusindex` records those answers and gives them back without the store. Kept apart from
:mod:`tracker.core.status` (which asks) and :mod:`tracker.store.statusindex` (which remembers), so each imports this
one and neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable

from tracker.base.file_index import FileIndex
from tracker.core.history import was_done
from tracker.core.manual_gate import gate_changed
from tracker.core.model import BenchEvaluator, BenchGate, Gate, GateVerdict, ManualGate, Phase, Plan, Store
from tracker.core.testgate import TestIndex, gate_verdict


class Evidence:
    """What status reads from the evidence, as five questions (one gate's verdict, whether a phase was done
    before, whether a gate's definition changed since the evidence that decided it, and the file ids that
    evidence recorded under some ``paths``). :class:`LiveEvidence` answers from a loaded store;
    :mod:`tracker.store.statusindex` records those answers and gives them back without the store. Each answer
    depends only on the evidence and on its own arguments' identities (keys, definition hashes, paths)."""

    def verdict(self, key: str, gate: Gate, manual: tuple[str, ...]) -> tuple[GateVerdict, bool]:
        """(verdict, ever met) of gate ``key``; ``manual``: the definition hashes of its phase's manual gates."""
        raise NotImplementedError

    def was_done(self, plan: Plan, phase: Phase) -> bool:
        """Were all the phase's gates met together once? (``tracker.core.history.was_done``)"""
        raise NotImplementedError

    def definition_changed(self, source: str, key: str, gate: Gate) -> bool:
        """Did gate ``key``'s definition change since evidence file ``source`` recorded its hash?"""
        raise NotImplementedError

    def recorded_files(self, source: str, paths: tuple[str, ...], bench: bool) -> dict[str, str]:
        """{path: blob id} of the files under ``paths`` that evidence file ``source`` recorded (``bench``: that the
        benchmark run of result file ``source`` measured)."""
        raise NotImplementedError

    def measured_patterns(self, source: str) -> tuple[str, ...]:
        """The globs that named the files result file ``source``'s run measured (empty where it does not say)."""
        raise NotImplementedError

    def ignored_modules(self, source: str) -> dict[str, str]:
        """{path: id} of the modules git ignores that the tests of evidence file ``source`` imported from the tree
        (``provenance.ignored_modules``; empty where it does not say)."""
        raise NotImplementedError


class LiveEvidence(Evidence):
    """The answers from a loaded store, its test index, and bench gates' evaluator (``bench``, built on first use)."""

    def __init__(self, store: Store, bench: Callable[[], BenchEvaluator]) -> None:
        self.store = store
        self.tests = TestIndex(store)
        self.invalid = _invalid_evidence(store)
        self._bench_factory = bench
        self._bench: BenchEvaluator | None = None
        self._recorded: dict[str, tuple[dict[str, str], dict[str, str]]] | None = None
        self._then: dict[str, FileIndex] = {}
        self._ignored: dict[str, dict[str, str]] | None = None

    def bench(self) -> BenchEvaluator:
        """The bench evaluator (built once)."""
        if self._bench is None:
            self._bench = self._bench_factory()
        return self._bench

    def verdict(self, key: str, gate: Gate, manual: tuple[str, ...]) -> tuple[GateVerdict, bool]:
        if self.invalid is not None and not isinstance(gate, ManualGate):
            return self.invalid, False
        verdict, ever = gate_verdict(key, gate, self.tests, self.store, manual, self._bench_verdict)
        if isinstance(gate, BenchGate) and verdict.failed and not ever:
            # Met on an earlier run and failing now is a regression (asked only on failure: costly).
            ever = self.bench().ever_met(gate)
        return verdict, ever

    def _bench_verdict(self, gate: BenchGate) -> GateVerdict:
        return self.bench()(gate)

    def was_done(self, plan: Plan, phase: Phase) -> bool:
        bench = self.bench() if any(isinstance(g, BenchGate) for g in phase.gates) else None
        return _was_done(plan, phase, self.store, bench, self.tests)

    def _evidence_files(self, source: str) -> tuple[dict[str, str], dict[str, str]]:
        """(file ids, gate hashes) recorded by the evidence file a verdict came from."""
        if self._recorded is None:
            self._recorded = {}
            for run in self.store.runs:
                self._recorded.setdefault(run.file, (run.files, run.gates))
            for file, data in self.store.signoffs:
                self._recorded.setdefault(
                    file, (data.get("files", {}), {data.get("gate_key", ""): data.get("gate_hash", "")})
                )
        return self._recorded.get(source, ({}, {}))

    def definition_changed(self, source: str, key: str, gate: Gate) -> bool:
        return gate_changed(key, gate, self._evidence_files(source)[1])  # type: ignore[arg-type]

    def recorded_files(self, source: str, paths: tuple[str, ...], bench: bool) -> dict[str, str]:
        if bench:  # a result's own fingerprint: the files the benchmark measured
            return FileIndex(self.bench().measured(source)).match(paths)
        if source not in self._then:
            self._then[source] = FileIndex(self._evidence_files(source)[0])
        return self._then[source].match(paths)

    def measured_patterns(self, source: str) -> tuple[str, ...]:
        return self.bench().patterns(source)

    def ignored_modules(self, source: str) -> dict[str, str]:
        if self._ignored is None:
            self._ignored = {}
            for run in self.store.runs:
                self._ignored.setdefault(run.file, run.provenance.get("ignored_modules") or {})
        return self._ignored.get(source, {})


def _invalid_evidence(store: Store) -> GateVerdict | None:
    """The verdict of every test and bench gate while a file in the store cannot be read: it could be
    the newest run, so the others must not decide in its place."""
    bad = store.invalid
    if not bad:
        return None
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    return GateVerdict(False, f"invalid evidence file, fix or remove it: {bad[0]}{more}")


def _was_done(plan: Plan, phase: Phase, store: Store, bench_eval: BenchEvaluator | None, tests: TestIndex) -> bool:
    """Exact check that the gates were all met together once (``tracker.core.history.was_done``). ``bench_eval``: only
    for a phase with a bench gate (the results are parsed then): the others' answer does not depend on them."""
    if bench_eval is None:
        return was_done(plan, phase, store, (), tests)
    return was_done(plan, phase, store, bench_eval.results, tests, bench_eval.bounds)
