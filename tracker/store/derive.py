"""The statuses of a repository's plans: its evidence read (through the status index when that holds every
answer, else from the store and the result files) and handed to the pure evaluation, :mod:`tracker.core.status`.

The file readers live here, at the edge: :mod:`tracker.store.evidence` (the store), :mod:`tracker.store.result_files`
(result files, through :mod:`tracker.store.bench_evaluator`), :mod:`tracker.store.statusindex` (the index) and the
working tree's file ids (:mod:`tracker.base.fingerprint`); the evaluating core imports none of them. What the readers
learn goes to the command's cache object (:mod:`tracker.base.cache`), written by the command at its end: deriving writes
nothing.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracker.base.cache import Cache
from tracker.base.contract import Clock
from tracker.base.file_index import FileIndex
from tracker.base.fingerprint import id_now, tree_file_ids
from tracker.base.gate_paths import MissingCheck, OutsideCheck
from tracker.base.ignored_inputs import IgnoredInputs
from tracker.core.evidence_answers import LiveEvidence
from tracker.core.model import BenchEvaluator, PhaseStatus, Plan, Store
from tracker.core.status import evaluate
from tracker.store import evidence, statusindex


def repo_bench_evaluator(
    root: Path, store: Store | list[str], clock: Clock | None = None, cache: Cache | None = None
) -> BenchEvaluator:
    """Bench gates bound to the repository's results (``tracker.store.bench_evaluator.Evaluator``): verdicts
    cached by result-file content, plus ``ever_met`` (for regressed) and ``changed`` (for stale).
    Imported only when a plan has bench gates; a warm call parses no result file. The store's result
    copies are the ones ``store`` lists (its files are not read again to find them), or ``store`` is that list;
    ``clock``: the time result times are checked against (default: now); ``cache``: the command's (None: read,
    nothing kept)."""
    from tracker.store.bench_evaluator import Evaluator, RepoResults
    from tracker.store.result_files import repo_result_files

    copies = store if isinstance(store, list) else [rel for rel, _ in store.bench]
    files = repo_result_files(root, copies)
    return Evaluator(RepoResults(root, files, clock, Cache(root) if cache is None else cache))


def working_tree_index(root: Path, cache: Cache | None, ignored_inputs: bool = True) -> FileIndex:
    """The working tree's file ids as status judges them, for every command that judges staleness: a comment edit
    answered by :mod:`tracker.store.same_code`, the ids of files git ignores read on demand, and (``ignored_inputs``)
    the files git ignores that a test gate would read, one ``git ls-files`` on first use. (``tracker verify`` judged
    on bare ids and re-ran a gate status called done.)"""
    from tracker.store.same_code import attach

    index = FileIndex(tree_file_ids(root))
    attach(index, root, cache)
    index.id_now = functools.partial(id_now, root)
    if ignored_inputs:
        index.ignored_inputs = IgnoredInputs(root)
    return index


def derive(
    root: Path,
    plans: list[Plan],
    clock: Clock | None = None,
    cache: Cache | None = None,
    scanned: list[FileIndex] | None = None,
) -> dict[str, PhaseStatus]:
    """Statuses of ``plans`` from the repository's evidence store and working tree: from the status index
    (:mod:`tracker.store.statusindex`) when it holds every answer, else from the store, handing ``cache`` the index
    anew. ``clock``: the time evidence times are checked against (default: now); ``cache``: the command's,
    which it writes at its end (None: the repository's cache is read, nothing is kept); ``scanned``: a list that
    gets the working tree's index (:func:`working_tree_index`) when it was read, for a caller that needs its ids too."""
    clock = clock or Clock()
    cache = Cache(root) if cache is None else cache
    scanned = [] if scanned is None else scanned

    def tree() -> FileIndex:
        """The working tree's file ids, read once (staleness is judged on the tree as it is now, never cached)."""
        if not scanned:
            scanned.append(working_tree_index(root, cache))
        return scanned[0]

    outside = OutsideCheck(root)  # a test path that leaves the repository meets no gate (judged on the tree now)
    missing = MissingCheck(root)  # nor one that does not exist on the tree now (deleted after it passed)
    key, settled = statusindex.listing(root)  # before the store is read: a file changed meanwhile changes the key
    kept = statusindex.read_tables(cache, key, clock)
    try:
        return _derive(root, plans, clock, cache, tree, outside, missing, key, settled, kept)
    finally:
        keeper = scanned[0].same_code if scanned else None
        if keeper is not None and hasattr(keeper, "keep"):
            keeper.keep()  # its answers to the command's cache; its git process stopped


def _derive(
    root: Path,
    plans: list[Plan],
    clock: Clock,
    cache: Cache,
    tree: Callable[[], FileIndex],
    outside: OutsideCheck,
    missing: MissingCheck,
    key: str,
    settled: bool,
    kept: Any,
) -> dict[str, PhaseStatus]:
    if kept is not None:
        with contextlib.suppress(statusindex.Miss):
            return evaluate(plans, statusindex.Indexed(kept), tree, outside, missing)
    # Unreadable files: listed in store.invalid, shown on gates. Result copies are read through
    # tracker.store.result_files.
    store = evidence.load(root, strict=False, clock=clock, results=False, cache=cache)
    live = LiveEvidence(store, lambda: repo_bench_evaluator(root, store, clock, cache))
    recording = statusindex.Recording(live)
    out = evaluate(plans, recording, tree, outside, missing)
    # Not kept while a file is refused for a time in the future: the reason shown names this machine's clock,
    # which moves on (and once it is close enough, the file counts).
    if settled and clock.soonest is None:
        if kept is not None:
            recording.tables.keep(kept)
        statusindex.put_tables(cache, key, recording.tables.document(clock, store))
    return out
