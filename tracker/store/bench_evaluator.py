"""Bench gates as ``tracker status`` sees them: the repository's results, evaluated once per content.

Result files are large (all raw samples: ~400 KB per run here) and status runs often, so verdicts
are cached (``bench-verdicts``, :mod:`tracker.base.cache`) under a key that hashes every result file's path
and content hash plus the evaluation code (:func:`logic_key`: the tracker's code identity); bootstrap bounds
(``bootstrap``) under the evaluation code alone. Content hashes are memoized by each file's stat signature
(``result-ids``, :func:`_content_ids`), so a warm status reads no result file at all; it parses no JSON sample and
imports no pydantic. Any change to a result file, a gate definition or the evaluation code misses the cache and
evaluates afresh. Everything learned goes to the command's cache object, which the command writes at its end.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from tracker.base.cache import VALIDATION_LIBRARIES, Cache, cache_key, code_identity, library_key
from tracker.base.contract import Clock
from tracker.base.file_index import FileIndex
from tracker.base.fileio import read_regular, settled, signature
from tracker.core.model import BenchGate, EvidenceSource, GateVerdict, ResultRun, gate_hash
from tracker.errors import FileError, ResultFileError
from tracker.store.result_files import known_result, load_repo_results, load_results, repo_result_files, result_set
from tracker.store.result_metrics import MetricIndex


def logic_key() -> str:
    """The evaluation's identity: the tracker's code (:func:`tracker.base.cache.code_identity`) and the libraries
    results are validated with (pydantic): another version of any rule makes another key."""
    return cache_key("bench-verdicts", code_identity(), library_key(*VALIDATION_LIBRARIES))


CONTENT_IDS = "result-ids"  # the caches (tracker.base.cache): {path: [stat signature..., sha256]}
VERDICTS = "bench-verdicts"  # {"now": when cached, "gates": {gate hash: entry}}
BOUNDS = "bootstrap"  # {bootstrap key: bound} (tracker.core.stats.bootstrap_key)


def cached_bounds(cache: Cache, logic: str | None = None) -> dict[str, float]:
    """The bootstrap bounds ``cache`` holds for this evaluation code (``logic``: :func:`logic_key`), floats only; {}
    when it holds none or something else. Bounds are pure functions of their samples: every command shares them."""
    known = cache.read(BOUNDS, cache_key(BOUNDS, logic or logic_key()))
    return {k: v for k, v in known.items() if isinstance(v, float)} if isinstance(known, dict) else {}


def put_bounds(cache: Cache, bounds: Mapping[str, float], logic: str | None = None) -> None:
    """Hand ``bounds`` to ``cache`` (written with it), unless there are none: an empty set never replaces a kept one."""
    if bounds:
        cache.put(BOUNDS, cache_key(BOUNDS, logic or logic_key()), bounds)


def _content_ids(root: Path, paths: list[Path], cache: Cache) -> dict[str, str]:
    """{relative path: sha256 of its bytes} for ``paths``; a file whose stat signature matches the memo in
    ``cache`` is not read (result files hold every raw sample: ~400 KB each)."""
    key = cache_key(CONTENT_IDS, "1")
    known = cache.read(CONTENT_IDS, key)
    memo: dict[str, Any] = known if isinstance(known, dict) else {}  # missing or broken: every file is hashed
    now = time.time_ns()
    out: dict[str, str] = {}
    fresh: dict[str, list[Any]] = {}
    for path in paths:
        rel = path.relative_to(root).as_posix()
        try:
            sig = signature(path.stat())
            hit = memo.get(rel)
            if isinstance(hit, list) and hit[:-1] == sig:
                out[rel] = hit[-1]
                fresh[rel] = hit
                continue
            from hashlib import sha256

            # Bounded, never from a FIFO or a device, never outside the repository: load_result says why.
            out[rel] = sha256(read_regular(path, root=root)).hexdigest()
        except (OSError, FileError):
            out[rel] = "unreadable"
            continue
        if settled(sig, now):
            fresh[rel] = [*sig, out[rel]]
    if fresh != memo:
        cache.put(CONTENT_IDS, key, fresh)  # the command writes it: a read-only checkout hashes again, never wrong
    return out


class RepoResults:
    """The repository's result files, identified by content up front and parsed only when a verdict
    is not cached. ``files``: the result files when the caller knows them (``repo_result_files(root, copies)``);
    ``clock``: the time their recorded times are checked against (default: now); ``cache``: the command's (None:
    the repository's cache read, nothing kept)."""

    def __init__(
        self, root: Path, files: list[Path] | None = None, clock: Clock | None = None, cache: Cache | None = None
    ) -> None:
        self.root = root
        self.cache = Cache(root) if cache is None else cache
        self.files = repo_result_files(root) if files is None else files
        self.clock = clock or Clock()
        self.logic = logic_key()
        self.ids = _content_ids(root, self.files, self.cache)  # {relative path: sha256 of its bytes}
        self.key = cache_key(VERDICTS, self.logic, *sorted(f"{rel}\0{digest}" for rel, digest in self.ids.items()))
        self._runs: list[ResultRun] | None = None
        self._errors: list[ResultFileError] = []
        self._read: dict[Path, ResultRun | ResultFileError] = {}  # the files runs_for read, by their path
        self._by_path: list[tuple[Path, str | None]] | None = None  # each file with its content id
        self._for: dict[str, list[ResultRun]] = {}  # runs_for's answers, by metric

    def runs(self) -> list[ResultRun]:
        """Every valid run (parsed now if not yet); invalid files end up in :meth:`errors`."""
        if self._runs is None:
            loaded = load_repo_results(self.root, strict=False, files=self.files, clock=self.clock, cache=self.cache)
            self._runs, self._errors = list(loaded), loaded.errors
            MetricIndex.of(self.cache).note(self._runs)
        return self._runs

    def runs_for(self, metric: str) -> list[ResultRun]:
        """The valid runs with a case of ``metric``, oldest first: :meth:`runs` less the runs without one, reading
        only the files whose content may hold it (:mod:`tracker.store.result_metrics`: a file whose content is not
        known to hold other metrics only is read)."""
        if self._runs is not None:
            return [run for run in self._runs if any(c.metric == metric for c in run.cases)]
        if metric not in self._for:
            self._for[metric] = self._load_for(metric)
        return list(self._for[metric])

    def _load_for(self, metric: str) -> list[ResultRun]:
        index = MetricIndex.of(self.cache)
        if self._by_path is None:
            self._by_path = [(path, self.ids.get(path.relative_to(self.root).as_posix())) for path in self.files]
        wanted = []
        for path, sha in self._by_path:
            held = index.metrics(sha)
            if held is None or metric in held:
                wanted.append(path)
        todo = [path for path in wanted if path not in self._read]
        # A file whose content this command parsed already (the other side of a summary: REF's and the working
        # tree's files are mostly the same) is that run again: its time is checked, its bytes are not read again.
        ids = dict(self._by_path)
        known = {path: known_result(path, ids.get(path), self.cache, self.clock) for path in todo}
        again = {path: run for path, run in known.items() if run is not None}
        good, bad = load_results([path for path in todo if path not in again], self.cache, self.root, self.clock)
        good += [run for run in again.values() if isinstance(run, ResultRun)]
        bad += [err for err in again.values() if isinstance(err, ResultFileError)]
        index.note(good)
        self._read.update({Path(run.path): run for run in good})
        self._read.update({Path(err.path): err for err in bad})
        read = [self._read[path] for path in wanted]
        loaded = result_set(
            self.root,
            [r for r in read if not isinstance(r, ResultFileError)],
            [r for r in read if isinstance(r, ResultFileError)],
        )
        return [run for run in loaded if any(c.metric == metric for c in run.cases)]

    def errors(self) -> list[ResultFileError]:
        """Files that were rejected (parses the results if needed)."""
        self.runs()
        return self._errors


def added_since(files: Mapping[str, str], patterns: Sequence[str], current: Mapping[str, str]) -> list[str]:
    """Files of ``current`` matching ``patterns`` (the globs a run measured by) that the run did not measure."""
    if not patterns:
        return []
    return sorted(path for path in FileIndex(current).match(patterns) if path not in files)


def changed_since(files: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """Measured files whose blob id differs now (or that are gone): the evidence is stale."""
    return sorted(path for path, blob in files.items() if current.get(path) != blob)


def ever_met(gate: BenchGate, results: Sequence[ResultRun], bounds: MutableMapping[str, float] | None = None) -> bool:
    """Was the gate met on the results as they stood after some run (each prefix in time order)?

    Only the runs with a case of the gate's metric and ``where`` are evaluated, each with those before it, and with
    only those cases and their baselines' (their params with the baseline's: they match ``where`` updated with it):
    the rest change no prefix's ``met`` (evaluation selects among the matching cases, a prefix without one is unmet;
    the other cases of the metric name the run in the verdict's text, not its outcome). Every prefix of all the runs
    cost a cold ``status`` of this repository 10 s of 18 profiled (1.8 million matches)."""
    from tracker.core.bench_verdict import evaluate, matches, newest_may_meet

    based = {**gate.where, **gate.baseline} if gate.baseline else None
    measured = []
    for run in sorted(results, key=lambda r: (r.time, r.path)):
        kept = tuple(
            c
            for c in run.cases
            if c.metric == gate.bench and (matches(c.params, gate.where) or (based and matches(c.params, based)))
        )
        if any(matches(c.params, gate.where) for c in kept):
            measured.append(run._replace(cases=kept))
    # A prefix is met when its newest run is met by its own samples, or when that run is undecided and an older
    # run met, in which case that older run's own prefix was met already: so only prefixes whose newest run's
    # value clears the threshold need the bootstrap (a met verdict needs the value to clear too). That spared a
    # cold status of the bundled plans 125 s of 146 profiled (1,003 bootstraps, 27 gates).
    return any(
        newest_may_meet(gate, measured[: i + 1]) and evaluate(gate, measured[: i + 1], bounds).met
        for i in range(len(measured))
    )


def _to_json(verdict: GateVerdict, files: Mapping[str, str] | None, patterns: Sequence[str] = ()) -> dict[str, Any]:
    src = verdict.source
    return {
        "patterns": list(patterns),
        "met": verdict.met,
        "reason": verdict.reason,
        "failed": verdict.failed,
        "undecided": verdict.undecided,
        "files": dict(files or {}),
        "source": None
        if src is None
        else {"file": src.file, "machine": src.machine, "commit": src.commit, "time": src.time},
    }


def _from_json(entry: dict[str, Any]) -> GateVerdict | None:
    """The cached verdict, or None when the entry is not one this code wrote (then it is evaluated again)."""
    try:
        src = entry["source"]
        verdict = GateVerdict(
            entry["met"],
            entry["reason"],
            None if src is None else EvidenceSource(**src),
            entry["failed"],
            undecided=entry["undecided"],
        )
    except (KeyError, TypeError):
        return None
    ok = type(verdict.met) is bool and type(verdict.failed) is bool and isinstance(verdict.reason, str)
    ok = ok and type(verdict.undecided) is bool
    patterns = entry.get("patterns", [])
    ok = ok and isinstance(patterns, list) and all(isinstance(p, str) for p in patterns)
    return verdict if ok and isinstance(entry.get("files", {}), dict) else None


class Evaluator:
    """Bench gates bound to a repository's (or a given list of) results: what ``tracker.core.status`` calls.

    Calling it gives the verdict; ``ever_met`` answers the regression question and ``changed`` the
    staleness one (the measured files whose blob ids differ now from the verdict's result file).
    """

    def __init__(self, results: RepoResults | Sequence[ResultRun]) -> None:
        self._repo = results if isinstance(results, RepoResults) else None
        self._given = None if isinstance(results, RepoResults) else list(results)
        self._cache: dict[str, dict[str, Any]] = {}  # every verdict of this evaluator
        self._lasting: dict[str, dict[str, Any]] = {}  # those the cache may keep (none rests on a time to come)
        # Bootstrap bounds by their key (tracker.core.stats.bootstrap_bound): pure functions of the samples.
        self.bounds: MutableMapping[str, float] = {}
        if self._repo is not None:
            repo = self._repo
            self._lasting = _cached_verdicts(repo.cache.read(VERDICTS, repo.key), repo.clock)
            self._cache = dict(self._lasting)
            self.bounds.update(cached_bounds(repo.cache, repo.logic))
        self._files: dict[str, dict[str, str]] = {}  # verdict source file -> its measured files
        self._patterns: dict[str, tuple[str, ...]] = {}  # verdict source file -> the globs that named them

    @property
    def results(self) -> Sequence[ResultRun]:
        """Every valid run (parsed on first use)."""
        return self._repo.runs() if self._repo is not None else list(self._given or [])

    @property
    def errors(self) -> list[ResultFileError]:
        """Rejected result files."""
        return self._repo.errors() if self._repo is not None else []

    def results_for(self, metric: str) -> Sequence[ResultRun]:
        """The valid runs with a case of ``metric``, oldest first (what a gate of that metric is evaluated on: the
        same figures as on every run), parsing only the result files that may hold it."""
        if self._repo is not None:
            return self._repo.runs_for(metric)
        return [run for run in self._given or [] if any(c.metric == metric for c in run.cases)]

    def __call__(self, gate: BenchGate) -> GateVerdict:
        key = gate_hash(gate)
        cached = self._cache.get(key)
        entry: dict[str, Any] = cached if isinstance(cached, dict) else {}
        verdict = _from_json(entry) if isinstance(cached, dict) else None
        if verdict is None:
            errors = self.errors
            if errors:
                # A rejected file may be the newest run: using the others could hide a regression.
                more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
                verdict, files = GateVerdict(False, f"invalid result file, fix or remove it: {errors[0]}{more}"), None
                patterns: tuple[str, ...] = ()
            else:
                from tracker.core.bench_verdict import evaluate_bench_gate

                verdict = evaluate_bench_gate(gate, self.results, self.bounds)
                run = next((r for r in self.results if verdict.source and r.path == verdict.source.file), None)
                files = run.files if run is not None else None
                patterns = run.patterns if run is not None else ()
            # A file rejected for a time still to come is usable later: that verdict is never cached on disk.
            lasting = all(err.lasting for err in errors)
            entry = self._store(key, {**self._own(key), **_to_json(verdict, files, patterns)}, persist=lasting)
        if verdict.source is not None:
            self._files[verdict.source.file] = entry.get("files") or {}
            self._patterns[verdict.source.file] = tuple(entry.get("patterns") or ())
        return verdict

    def _own(self, key: str) -> dict[str, Any]:
        entry = self._cache.get(key)
        return entry if isinstance(entry, dict) else {}

    def ever_met(self, gate: BenchGate) -> bool:
        """Was the gate met after some earlier run? (cached with the verdict)"""
        key = gate_hash(gate)
        entry = self._own(key)
        if type(entry.get("ever")) is not bool:
            lasting = all(err.lasting for err in self.errors)
            entry = self._store(key, {**entry, "ever": ever_met(gate, self.results, self.bounds)}, persist=lasting)
        return bool(entry["ever"])

    def measured(self, source_file: str) -> dict[str, str]:
        """The files ``source_file``'s run measured, {path: blob id} (empty for an unknown file)."""
        files = self._files.get(source_file)
        if files is None:
            run = next((r for r in self.results if r.path == source_file), None)
            files = run.files if run is not None else {}
        return dict(files)

    def patterns(self, source_file: str) -> tuple[str, ...]:
        """The globs that named the files ``source_file``'s run measured (empty when the file does not say)."""
        patterns = self._patterns.get(source_file)
        if patterns is None:
            run = next((r for r in self.results if r.path == source_file), None)
            patterns = run.patterns if run is not None else ()
        return patterns

    def changed(self, source_file: str, current: Mapping[str, str]) -> list[str]:
        """Files measured by ``source_file``'s run that changed since, and files matching its globs now that it did
        not measure (new code under the benchmark); empty for an unknown file."""
        measured = self.measured(source_file)
        return sorted({*changed_since(measured, current), *added_since(measured, self.patterns(source_file), current)})

    def keep_bounds(self) -> None:
        """Hand the bootstrap bounds known now to the command's cache (a replay of the history computes many)."""
        repo = self._repo
        if repo is not None:
            put_bounds(repo.cache, self.bounds, repo.logic)

    def _store(self, key: str, entry: dict[str, Any], persist: bool = True) -> dict[str, Any]:
        """Note a verdict; one that rests on no time still to come (``persist``) goes to the command's cache."""
        self._cache[key] = entry
        repo = self._repo
        if persist and repo is not None:
            self._lasting[key] = entry
            # The dicts themselves: what is added until the command writes the cache is written with them.
            repo.cache.put(VERDICTS, repo.key, {"now": repo.clock.now, "gates": self._lasting})
            put_bounds(repo.cache, self.bounds, repo.logic)
        return entry


def _cached_verdicts(data: Any, clock: Clock) -> dict[str, Any]:
    """The verdicts of cached ``data``, {gate hash: entry}, a copy; {} when there are none, or when this machine's
    clock is now behind the time they were cached: a result time they accepted may now be in the future (refused).
    Each entry's shape is checked where it is used (:func:`_from_json`)."""
    if not isinstance(data, dict):
        return {}
    stamp, gates = data.get("now"), data.get("gates")
    if not isinstance(stamp, str) or not isinstance(gates, dict) or clock.now < stamp:
        return {}
    return dict(gates)
