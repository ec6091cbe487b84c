"""Which metrics each result file holds, by its content: the cache ``result-metrics`` (:mod:`tracker.base.cache`),
``{sha256 of the file's bytes: [metric, ...]}``, so that a bench gate's figures parse only the result files that can
hold its metric (:meth:`tracker.store.bench_evaluator.RepoResults.runs_for`), not every raw sample of the repository.

An entry is written only from a file that was read, validated and parsed (:func:`note`): the metrics of a run are
what its cases name, a fact of its bytes. Its key is the tracker's code and the validation libraries, as the other
caches of parsed results (another reading of a file: another key). A file whose content has no entry (new, edited,
unreadable, never valid) is read as it always was; one that has an entry without the metric asked can add no case
of it to any gate: evaluation selects a gate's runs by the cases of its metric (a ratio's baseline is a case of the
same metric), so leaving that file out changes no figure. Validity and times are still checked on every file that
is read (:func:`tracker.store.result_files.load_result`); a file left out is one the figures would never use.
"""

from __future__ import annotations

from collections.abc import Iterable

from tracker.base.cache import VALIDATION_LIBRARIES, Cache, cache_key, code_identity, library_key
from tracker.core.model import ResultRun

METRICS = "result-metrics"  # the cache's name (tracker.base.cache)
MAX_KEPT = 4096  # entries kept beyond the files one command noted (older ones go first)
_MEMO = "result-metrics-index"  # the command's one index (Cache.memo: shared with a revision's overlay)


def holds(run: ResultRun) -> list[str]:
    """The metrics ``run``'s cases name, sorted, each once."""
    return sorted({c.metric for c in run.cases})


class MetricIndex:
    """The cache ``result-metrics`` as one command sees it: read once, handed back whole when it learns a file."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self.key = cache_key(METRICS, code_identity(), library_key(*VALIDATION_LIBRARIES))
        known = cache.read(METRICS, self.key)
        self.known: dict[str, object] = dict(known) if isinstance(known, dict) else {}

    @classmethod
    def of(cls, cache: Cache) -> MetricIndex:
        """The command's index (one per command: a revision's overlay shares its base's memo)."""
        memo = cache.memo(_MEMO)
        index = memo.get("index")
        if not isinstance(index, MetricIndex):
            index = memo["index"] = cls(cache)
        return index

    def metrics(self, sha256: str | None) -> frozenset[str] | None:
        """The metrics of the content ``sha256`` holds; None when it is not known (then the file must be read)."""
        entry = self.known.get(sha256) if sha256 else None
        if not (isinstance(entry, list) and all(isinstance(m, str) for m in entry)):
            return None
        return frozenset(entry)

    def note(self, runs: Iterable[ResultRun]) -> None:
        """Learn the metrics of ``runs`` (parsed and valid); the cache gets them when something is new."""
        new = {run.sha256: holds(run) for run in runs if self.known.get(run.sha256) != holds(run)}
        if not new:
            return
        kept = {k: v for k, v in self.known.items() if k not in new}
        while len(kept) + len(new) > MAX_KEPT and kept:
            del kept[next(iter(kept))]
        self.known = {**kept, **new}
        self.cache.put(METRICS, self.key, self.known)
