"""A repository's plans, statuses and evidence read once, for the commands that explain rather than judge
(``show``, ``log``, ``report``, ``summary``): the readers at the edge, handing :mod:`tracker.detail` and
:mod:`tracker.timeline` their data.

Statuses come from :func:`tracker.derive.derive` (the same answers ``tracker status`` gives, through the status
index when it holds them); the store and the result runs are read only when a view asks for history or for bench
figures, and the result runs only when a phase asked about has a bench gate. Bootstrap bounds computed along the
way go to the command's cache (:mod:`tracker.cache`), so a second command pays none of them again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from tracker import evidence
from tracker.cache import Cache
from tracker.checks import qualify
from tracker.contract import Clock
from tracker.derive import derive, repo_bench_evaluator
from tracker.detail import PhaseDetail, phase_detail
from tracker.fingerprint import FileIndex, tree_file_ids
from tracker.model import BenchEvaluator, BenchGate, Phase, PhaseStatus, Plan, ResultRun, Store
from tracker.plans import PlanSet, load_plan_set
from tracker.timeline import Transition, replay


class RepoView:
    """One repository as a command that explains sees it; each part read on first use, at most once."""

    def __init__(self, root: Path, cache: Cache, clock: Clock | None = None) -> None:
        self.root = root
        self.cache = cache
        self.clock = clock or Clock()
        self.plan_set: PlanSet = load_plan_set(root, cache=cache)
        self.plans: list[Plan] = self.plan_set.plans
        self.statuses: dict[str, PhaseStatus] = derive(root, self.plans, self.clock, cache) if self.plans else {}
        self._store: Store | None = None
        self._bench: BenchEvaluator | None = None
        self._tree: FileIndex | None = None
        self._timelines: dict[str, list[Transition]] = {}  # the phases replayed so far (a dependency's too)

    @property
    def store(self) -> Store:
        """The evidence store (invalid files listed, not fatal: status shows them on the gates)."""
        if self._store is None:
            self._store = evidence.load(self.root, strict=False, clock=self.clock, results=False, cache=self.cache)
        return self._store

    @property
    def bench(self) -> BenchEvaluator:
        """The bench evaluator over every valid result run (parsed on first use)."""
        if self._bench is None:
            self._bench = repo_bench_evaluator(self.root, self.store, self.clock, self.cache)
        return self._bench

    @property
    def tree(self) -> FileIndex:
        """The working tree's file ids."""
        if self._tree is None:
            self._tree = FileIndex(tree_file_ids(self.root))
        return self._tree

    def phases(self, keys: Iterable[str] | None = None) -> list[tuple[Plan, Phase]]:
        """(plan, phase) of every phase, or of ``keys`` (PLAN/PHASE) in plan file order."""
        wanted = None if keys is None else set(keys)
        return [(p, ph) for p in self.plans for ph in p.phases if wanted is None or f"{p.id}/{ph.id}" in wanted]

    def results_for(self, phases: Sequence[tuple[Plan, Phase]]) -> Sequence[ResultRun]:
        """Every valid result run when one of ``phases`` has a bench gate (else none are parsed)."""
        if any(isinstance(g, BenchGate) for _, ph in phases for g in ph.gates):
            return self.bench.results
        return ()

    def timeline(self, keys: Iterable[str] | None = None) -> dict[str, list[Transition]]:
        """{PLAN/PHASE: transitions} of ``keys`` (default: every phase), replayed from the store and results. A
        phase replayed once (asked, or the direct dependency of one asked) is not replayed again."""
        wanted = list(self.phase_keys() if keys is None else dict.fromkeys(keys))
        missing = [k for k in wanted if k not in self._timelines]
        if missing:
            phases = self.phases(missing)
            deps = self.phases({qualify(p.id, d) for p, ph in phases for d in ph.depends})
            results = self.results_for(phases + deps)
            bounds = self.bench.bounds if results else None
            replayed = [f"{p.id}/{ph.id}" for p, ph in phases + deps]
            only = None if keys is None else replayed
            self._timelines.update(replay(self.plans, self.store, results, bounds, only=only))
            if results:
                self.bench.keep_bounds()
        return {k: self._timelines[k] for k in wanted if k in self._timelines}

    def phase_keys(self) -> list[str]:
        """Every phase's PLAN/PHASE, in plan file order."""
        return [f"{p.id}/{ph.id}" for p in self.plans for ph in p.phases]

    def details(
        self, keys: Iterable[str] | None = None, *, history: bool = True, figures: bool = True
    ) -> list[PhaseDetail]:
        """The detail of ``keys`` (default: every phase), in plan file order; ``history``: with transitions;
        ``figures``: with bench figures and why a stale phase's gates are stale (``tracker log`` needs neither)."""
        from tracker.status import stale_gates

        phases = self.phases(keys)
        results = self.results_for(phases) if figures else ()
        times = self.timeline([f"{p.id}/{ph.id}" for p, ph in phases]) if history else {}
        stale_phases = [(p, ph) for p, ph in phases if self.statuses[f"{p.id}/{ph.id}"].status.value == "stale"]
        stale = (
            stale_gates(stale_phases, self.statuses, self.store, self.tree, self.bench if results else None)
            if stale_phases and figures
            else {}
        )
        bounds = self.bench.bounds if results else None
        return [
            phase_detail(
                p,
                ph,
                self.statuses,
                history=times.get(f"{p.id}/{ph.id}", ()),
                stale=stale,
                results=results,
                bounds=bounds,
            )
            for p, ph in phases
        ]
