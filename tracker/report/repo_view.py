"""A repository's plans, statuses and evidence read once, for the commands that explain rather than judge
(``show``, ``log``, ``report``, ``summary``): the readers at the edge, handing :mod:`tracker.report.detail` and
:mod:`tracker.core.timeline` their data.

Statuses come from :func:`tracker.store.derive.derive` (the same answers ``tracker status`` gives, through the status
index when it holds them); the store and the result runs are read only when a view asks for history or for bench
figures, and the result runs only when a phase asked about has a bench gate. Bootstrap bounds computed along the
way go to the command's cache (:mod:`tracker.base.cache`), so a second command pays none of them again.

Replaying the history costs far more than a status (a bench gate is evaluated again after every result file that
measured its metric: ~0.3 s for plan 0002's P7 here, against ~40 ms for ``tracker status``), so what it gives is
kept in the cache ``phase-history`` (:data:`HISTORY`): each phase's transitions and each bench gate's figures, under
the key of the evidence as the status index takes it (:func:`tracker.store.statusindex.listing`: every evidence and
result file's stat signature and the evaluation code) and of this module's own code. An entry is keyed by exactly
what it depends on besides: a phase's transitions by the phase's gates and its direct dependencies' (their status
blocks it), a gate's figures by the gate. A warm ``show`` reads neither the store nor a result file for them. It is
kept as the status index is: not while a file was still being written when the evidence was listed, nor while a
time was refused as in the future, nor read back once this machine's clock is behind the time it was built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tracker.base.cache import PARSE_LIBRARIES, Cache, cache_key, code_identity, library_key
from tracker.base.contract import Clock
from tracker.base.file_index import FileIndex
from tracker.base.fingerprint import tree_file_ids
from tracker.core.checks import qualify
from tracker.core.model import BenchEvaluator, BenchGate, Phase, PhaseStatus, Plan, ResultRun, Store, gate_key
from tracker.core.timeline import Transition, replay
from tracker.plans.load import PlanSet, load_plan_set
from tracker.report.detail import BenchFigures, PhaseDetail, bench_figures, phase_detail
from tracker.store import evidence, statusindex
from tracker.store.derive import derive, repo_bench_evaluator

HISTORY = "phase-history"  # the cache's name (tracker.base.cache)


def _code() -> str:
    """The identity of the code this cache's answers come from: the tracker's, and the libraries plans are parsed
    and results validated with."""
    return cache_key(HISTORY, code_identity(), library_key(*PARSE_LIBRARIES))


class _Kept:
    """The ``phase-history`` cache as this command sees it: ``timelines`` {phase identity: transition rows} and
    ``figures`` {gate identity: figures or null}, both read once and handed back whole when an entry is added."""

    def __init__(self, root: Path, cache: Cache, clock: Clock) -> None:
        self.listing, self.settled = statusindex.listing(root)  # before the store is read (derive's rule)
        self.key = cache_key(HISTORY, self.listing, _code())
        self.cache, self.clock = cache, clock
        data = cache.read(HISTORY, self.key)
        usable = isinstance(data, dict) and isinstance(data.get("built"), str) and clock.now >= data["built"]
        self.timelines: dict[str, Any] = _dict(data, "timelines") if usable else {}
        self.figures: dict[str, Any] = _dict(data, "figures") if usable else {}

    def keep(self) -> None:
        """Hand the entries to the command's cache, unless the evidence was not settled or a time was refused."""
        if self.settled and self.clock.soonest is None:
            data = {"built": self.clock.now, "timelines": self.timelines, "figures": self.figures}
            self.cache.put(HISTORY, self.key, data)


def _dict(data: Any, name: str) -> dict[str, Any]:
    value = data.get(name)
    return dict(value) if isinstance(value, dict) else {}


def _gates_id(phase: Phase | None) -> str:
    return "none" if phase is None else "\0".join(map(statusindex.gate_id, phase.gates))


class RepoView:
    """One repository as a command that explains sees it; each part read on first use, at most once."""

    def __init__(self, root: Path, cache: Cache, clock: Clock | None = None) -> None:
        self.root = root
        self.cache = cache
        self.clock = clock or Clock()
        self.kept = _Kept(root, cache, self.clock)
        self.plan_set: PlanSet = load_plan_set(root, cache=cache)
        self.plans: list[Plan] = self.plan_set.plans
        self._scanned: list[FileIndex] = []  # the working tree's index when derive read it
        self.statuses: dict[str, PhaseStatus] = (
            derive(root, self.plans, self.clock, cache, self._scanned) if self.plans else {}
        )
        self._store: Store | None = None
        self._bench: BenchEvaluator | None = None
        self._tree: FileIndex | None = None
        self._timelines: dict[str, list[Transition]] = {}  # the phases replayed so far (a dependency's too)
        self._by_key = {f"{p.id}/{ph.id}": ph for p in self.plans for ph in p.phases}

    @property
    def store(self) -> Store:
        """The evidence store (invalid files listed, not fatal: status shows them on the gates)."""
        if self._store is None:
            self._store = evidence.load(self.root, strict=False, clock=self.clock, results=False, cache=self.cache)
        return self._store

    @property
    def bench(self) -> BenchEvaluator:
        """The bench evaluator over every valid result run (parsed on first use); the store is not read for its
        result copies where the status index names them (:meth:`store_files`)."""
        if self._bench is None:
            listed = self.store_files()
            copies = listed.copies if listed is not None else [rel for rel, _ in self.store.bench]
            self._bench = repo_bench_evaluator(self.root, copies, self.clock, self.cache)
        return self._bench

    def store_files(self) -> statusindex.StoreFiles | None:
        """The store's result copies and files (:class:`tracker.store.statusindex.StoreFiles`): the store's when it
        was read, else the status index's for the evidence as it was listed when this view began (what the statuses
        were judged on), without reading the store; None when neither knows them."""
        if self._store is not None:
            return statusindex.StoreFiles.of(self._store)
        tables = statusindex.read_tables(self.cache, self.kept.listing, self.clock)
        try:
            return None if tables is None else tables.store_files()
        except statusindex.Miss:
            return None

    @property
    def tree(self) -> FileIndex:
        """The working tree's file ids."""
        if self._tree is None:  # the ids the statuses were judged on, when derive read them (one reading)
            self._tree = FileIndex(self._scanned[0].files if self._scanned else tree_file_ids(self.root))
        return self._tree

    def phases(self, keys: Iterable[str] | None = None) -> list[tuple[Plan, Phase]]:
        """(plan, phase) of every phase, or of ``keys`` (PLAN/PHASE) in plan file order."""
        wanted = None if keys is None else set(keys)
        return [(p, ph) for p in self.plans for ph in p.phases if wanted is None or f"{p.id}/{ph.id}" in wanted]

    def phase_keys(self) -> list[str]:
        """Every phase's PLAN/PHASE, in plan file order."""
        return list(self._by_key)

    def results_for(self, phases: Sequence[tuple[Plan, Phase]]) -> Sequence[ResultRun]:
        """Every valid result run when one of ``phases`` has a bench gate (else none are parsed)."""
        if any(isinstance(g, BenchGate) for _, ph in phases for g in ph.gates):
            return self.bench.results
        return ()

    def _history_id(self, plan: Plan, phase: Phase) -> str:
        """What a phase's transitions depend on besides the evidence: its gates, and its direct dependencies'."""
        deps = [qualify(plan.id, d) for d in phase.depends]
        parts = [f"{plan.id}/{phase.id}", _gates_id(phase)]
        parts += [f"{dep}\0{_gates_id(self._by_key.get(dep))}" for dep in deps]
        return cache_key(*parts)

    def _dependencies(self, phases: Sequence[tuple[Plan, Phase]]) -> list[tuple[Plan, Phase]]:
        """(plan, phase) of the direct dependencies of ``phases`` that are valid phases."""
        return self.phases({qualify(p.id, d) for p, ph in phases for d in ph.depends})

    def timeline(self, keys: Iterable[str] | None = None) -> dict[str, list[Transition]]:
        """{PLAN/PHASE: transitions} of ``keys`` (default: every phase), replayed from the store and results, or
        read from the cache. A phase replayed once (asked, or the direct dependency of one asked) is not replayed
        again."""
        wanted = list(self.phase_keys() if keys is None else dict.fromkeys(keys))
        ids = {f"{p.id}/{ph.id}": self._history_id(p, ph) for p, ph in self.phases(wanted)}
        for key, ident in ids.items():
            rows = self.kept.timelines.get(ident)
            if key not in self._timelines and isinstance(rows, list):
                found = [Transition.from_row(key, row) for row in rows]
                if all(t is not None for t in found):
                    self._timelines[key] = [t for t in found if t is not None]
        missing = [k for k in ids if k not in self._timelines]
        if missing:
            phases = self.phases(missing)
            deps = self._dependencies(phases)
            # The dependencies' own dependencies are replayed too (they block them): their bench gates need results.
            results = self.results_for(phases + deps + self._dependencies(deps))
            bounds = self.bench.bounds if results else None
            only = None if len(missing) == len(self._by_key) else [f"{p.id}/{ph.id}" for p, ph in phases + deps]
            replayed = replay(self.plans, self.store, results, bounds, only=only)
            for p, ph in self.phases(replayed):
                key = f"{p.id}/{ph.id}"
                self._timelines.setdefault(key, replayed[key])
                self.kept.timelines[self._history_id(p, ph)] = [t.row() for t in replayed[key]]
            self.kept.keep()
            if results:
                self.bench.keep_bounds()
        return {k: self._timelines[k] for k in wanted if k in self._timelines}

    def figures(self, phases: Sequence[tuple[Plan, Phase]]) -> dict[str, BenchFigures | None]:
        """{gate key: figures} of every bench gate of ``phases``, read from the cache or evaluated (the result runs
        are parsed only then)."""
        out: dict[str, BenchFigures | None] = {}
        added = False
        for p, ph in phases:
            for i, gate in enumerate(ph.gates):
                if not isinstance(gate, BenchGate):
                    continue
                ident = statusindex.gate_id(gate)
                entry = self.kept.figures.get(ident)
                if isinstance(entry, dict) and entry.keys() == {"figures"}:
                    found = BenchFigures.from_json(entry["figures"])
                    if found is not None or entry["figures"] is None:
                        out[gate_key(p.id, ph.id, i)] = found
                        continue
                found = bench_figures(gate, self.bench.results, self.bench.bounds) if self.bench.results else None
                out[gate_key(p.id, ph.id, i)] = found
                if found is None or BenchFigures.from_json(found._asdict()) is not None:  # finite: JSON keeps it
                    self.kept.figures[ident] = {"figures": None if found is None else found._asdict()}
                    added = True
        if added:
            self.kept.keep()
            self.bench.keep_bounds()
        return out

    def details(
        self, keys: Iterable[str] | None = None, *, history: bool = True, figures: bool = True
    ) -> list[PhaseDetail]:
        """The detail of ``keys`` (default: every phase), in plan file order; ``history``: with transitions;
        ``figures``: with bench figures and why a stale phase's gates are stale (``tracker log`` needs neither)."""
        from tracker.core.status import stale_gates

        phases = self.phases(keys)
        times = self.timeline([f"{p.id}/{ph.id}" for p, ph in phases]) if history else {}
        known = self.figures(phases) if figures else {}
        stale_phases = [(p, ph) for p, ph in phases if self.statuses[f"{p.id}/{ph.id}"].status.value == "stale"]
        stale = {}
        if stale_phases and figures:
            bench = self.bench if any(isinstance(g, BenchGate) for _, ph in stale_phases for g in ph.gates) else None
            stale = stale_gates(stale_phases, self.statuses, self.store, self.tree, bench)
        return [
            phase_detail(
                p,
                ph,
                self.statuses,
                history=times.get(f"{p.id}/{ph.id}", ()),
                stale=stale,
                figures=known,
            )
            for p, ph in phases
        ]
