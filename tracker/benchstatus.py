"""Bench gates as ``tracker status`` sees them: the repository's results, evaluated once per content.

Result files are large (all raw samples: ~400 KB per run here) and status runs often, so verdicts
are cached under ``.tracker/cache/results/verdicts-<key>.json``, where the key hashes every result
file's path and content hash plus the evaluation code (:func:`logic_key`: its version and the hash of
each evaluation source). Content hashes are memoized by each file's stat signature
(:func:`_content_ids`), so a warm status reads no result file at all; it parses no JSON sample and
imports no pydantic. Any change to a result file, a gate definition or the evaluation code misses
the cache and evaluates afresh.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from tracker import __version__
from tracker.contract import Clock
from tracker.errors import FileError, ResultFileError
from tracker.fileio import atomic_write, ensure_tracker_dir, parse_json, read_regular, settled, signature
from tracker.hashing import sha256_hex
from tracker.model import BenchGate, EvidenceSource, GateVerdict, ResultRun, gate_hash
from tracker.results import CACHE_DIR, load_repo_results, repo_result_files

LOGIC = f"bench-verdicts-4/{__version__}"  # bump when evaluation rules change (2: undefined ratios never meet;
# 3: a ratio gate reads the newest run that holds both cases; 4: the file says when it was written)
# The evaluation code itself is part of the cache key too, so an edited rule is never answered from verdicts
# the old code cached (a forgotten LOGIC bump, an editable install between releases).
EVAL_DIR = Path(__file__).resolve().parent
EVAL_SOURCES = ("benchgate.py", "stats.py", "model.py", "results.py", "results_schema.py")


def logic_key() -> str:
    """LOGIC plus the content hash of each evaluation source (a name alone where it cannot be read)."""
    parts = [LOGIC]
    for name in EVAL_SOURCES:
        try:
            parts.append(sha256_hex((EVAL_DIR / name).read_bytes()))
        except OSError:
            parts.append(f"{name}: unreadable")
    return "\n".join(parts)
CONTENT_IDS = "content-ids.json"  # in CACHE_DIR: {path: [stat signature..., sha256]}
BOUNDS = "bootstrap.json"  # in CACHE_DIR: {bootstrap key: bound} (tracker.stats.bootstrap_key)


def _content_ids(root: Path, paths: list[Path]) -> dict[str, str]:
    """{relative path: sha256 of its bytes} for ``paths``; a file whose stat signature matches the
    memo under the cache directory is not read (result files hold every raw sample: ~400 KB each)."""
    memo_file = root / CACHE_DIR / CONTENT_IDS
    memo = _read_cache(memo_file)  # missing or broken: every file is hashed
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
            from hashlib import sha256  # noqa: PLC0415 - OpenSSL: fast on large files, ~5 ms to import

            # Bounded, never from a FIFO or a device, never outside the repository: load_result says why.
            out[rel] = sha256(read_regular(path, root=root)).hexdigest()
        except (OSError, FileError):
            out[rel] = "unreadable"
            continue
        if settled(sig, now):
            fresh[rel] = [*sig, out[rel]]
    if fresh != memo:
        try:
            atomic_write(memo_file, json.dumps(fresh).encode())
        except OSError:
            pass  # a read-only checkout: hashed again next time, never wrong
    return out


def write_cache(path: Path, data: bytes) -> None:
    """Replace a cache file at once (a temp file renamed over it: readers see the old one or the new one), without
    the fsync of evidence writes: a cache lost in a crash is rebuilt. Raises OSError when it cannot be written.
    Under ``.tracker/``, makes sure of its ``.gitignore`` first (a cache must not make the tree dirty)."""
    parts = path.parent.parts
    if ".tracker" in parts:
        ensure_tracker_dir(Path(*parts[: len(parts) - parts[::-1].index(".tracker")]))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _read_cache(path: Path) -> dict[str, Any]:
    """A JSON object the tracker cached under ``path``; {} when it is missing or is not one (a cache
    only ever costs speed: whatever is wrong with it, it is rebuilt)."""
    try:
        data = parse_json(read_regular(path))
    except (FileError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class RepoResults:
    """The repository's result files, identified by content up front and parsed only when a verdict
    is not cached. ``files``: the result files when the caller knows them (``repo_result_files(root, copies)``);
    ``clock``: the time their recorded times are checked against (default: now)."""

    def __init__(self, root: Path, files: list[Path] | None = None, clock: Clock | None = None) -> None:
        self.root = root
        self.files = repo_result_files(root) if files is None else files
        self.clock = clock or Clock()
        listing = [f"{rel}\0{digest}" for rel, digest in _content_ids(root, self.files).items()]
        # surrogateescape: a file name that is not UTF-8 (its bytes as surrogates) still keys the cache
        self.key = sha256_hex("\n".join([logic_key(), *sorted(listing)]).encode("utf-8", "surrogateescape"))
        self._runs: list[ResultRun] | None = None
        self._errors: list[ResultFileError] = []

    def runs(self) -> list[ResultRun]:
        """Every valid run (parsed now if not yet); invalid files end up in :meth:`errors`."""
        if self._runs is None:
            loaded = load_repo_results(self.root, strict=False, files=self.files, clock=self.clock)
            self._runs, self._errors = list(loaded), loaded.errors
        return self._runs

    def errors(self) -> list[ResultFileError]:
        """Files that were rejected (parses the results if needed)."""
        self.runs()
        return self._errors


def load_results(root: Path, files: list[Path] | None = None, clock: Clock | None = None) -> RepoResults:
    """The results ``tracker status`` evaluates bench gates against; ``files`` and ``clock`` as :class:`RepoResults`."""
    return RepoResults(root, files, clock)


def changed_since(files: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """Measured files whose blob id differs now (or that are gone): the evidence is stale."""
    return sorted(path for path, blob in files.items() if current.get(path) != blob)


def ever_met(gate: BenchGate, results: Sequence[ResultRun], bounds: MutableMapping[str, float] | None = None) -> bool:
    """Was the gate met on the results as they stood after some run (each prefix in time order)?"""
    from tracker.benchgate import evaluate  # noqa: PLC0415 - a warm status computes no verdict

    ordered = sorted(results, key=lambda r: (r.time, r.path))
    return any(evaluate(gate, ordered[: i + 1], bounds).met for i in range(len(ordered)))


def _to_json(verdict: GateVerdict, files: Mapping[str, str] | None) -> dict[str, Any]:
    src = verdict.source
    return {
        "met": verdict.met, "reason": verdict.reason, "failed": verdict.failed, "files": dict(files or {}),
        "source": None if src is None else {"file": src.file, "machine": src.machine, "commit": src.commit, "time": src.time},
    }  # fmt: skip


def _from_json(entry: dict[str, Any]) -> GateVerdict | None:
    """The cached verdict, or None when the entry is not one this code wrote (then it is evaluated again)."""
    try:
        src = entry["source"]
        verdict = GateVerdict(entry["met"], entry["reason"], None if src is None else EvidenceSource(**src), entry["failed"])
    except (KeyError, TypeError):
        return None
    ok = type(verdict.met) is bool and type(verdict.failed) is bool and isinstance(verdict.reason, str)
    return verdict if ok and isinstance(entry.get("files", {}), dict) else None


class Evaluator:
    """Bench gates bound to a repository's (or a given list of) results: what ``tracker.status`` calls.

    Calling it gives the verdict; ``ever_met`` answers the regression question and ``changed`` the
    staleness one (the measured files whose blob ids differ now from the verdict's result file).
    """

    def __init__(self, results: RepoResults | Sequence[ResultRun]) -> None:
        self._repo = results if isinstance(results, RepoResults) else None
        self._given = None if isinstance(results, RepoResults) else list(results)
        self._cache: dict[str, dict[str, Any]] = {}
        self._cache_file: Path | None = None
        self._bounds_file: Path | None = None
        # Bootstrap bounds by their key (tracker.stats.bootstrap_bound): pure functions of the samples.
        self.bounds: dict[str, float] = {}
        self._swept = False  # verdict files of other result sets removed (once per evaluator)
        if self._repo is not None:
            self._cache_file = self._repo.root / CACHE_DIR / f"verdicts-{self._repo.key}.json"
            self._cache = _cached_verdicts(self._cache_file, self._repo.clock)
            self._bounds_file = self._repo.root / CACHE_DIR / BOUNDS
            known = _read_cache(self._bounds_file)
            self.bounds.update((k, v) for k, v in known.items() if isinstance(v, float))
        self._files: dict[str, dict[str, str]] = {}  # verdict source file -> its measured files

    @property
    def results(self) -> Sequence[ResultRun]:
        """Every valid run (parsed on first use)."""
        return self._repo.runs() if self._repo is not None else list(self._given or [])

    @property
    def errors(self) -> list[ResultFileError]:
        """Rejected result files."""
        return self._repo.errors() if self._repo is not None else []

    def __call__(self, gate: BenchGate) -> GateVerdict:
        key = gate_hash(gate)
        entry = self._cache.get(key)
        verdict = _from_json(entry) if isinstance(entry, dict) else None
        if verdict is None:
            errors = self.errors
            if errors:
                # A rejected file may be the newest run: using the others could hide a regression.
                more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
                verdict, files = GateVerdict(False, f"invalid result file, fix or remove it: {errors[0]}{more}"), None
            else:
                from tracker.benchgate import evaluate_bench_gate  # noqa: PLC0415 - a warm status computes no verdict

                verdict = evaluate_bench_gate(gate, self.results, self.bounds)
                run = next((r for r in self.results if verdict.source and r.path == verdict.source.file), None)
                files = run.files if run is not None else None
            # A file rejected for a time still to come is usable later: that verdict is never cached on disk.
            lasting = all(err.lasting for err in errors)
            entry = self._store(key, {**self._own(key), **_to_json(verdict, files)}, persist=lasting)
        if verdict.source is not None:
            self._files[verdict.source.file] = entry.get("files") or {}
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

    def changed(self, source_file: str, current: Mapping[str, str]) -> list[str]:
        """Files measured by ``source_file``'s run that changed since (empty for an unknown file)."""
        return changed_since(self.measured(source_file), current)

    def _store(self, key: str, entry: dict[str, Any], persist: bool = True) -> dict[str, Any]:
        self._cache[key] = entry
        if self._cache_file is not None and persist and self._repo is not None:
            # A failed write or removal (read-only checkout) only costs speed next time.
            with contextlib.suppress(OSError):
                if not self._swept:
                    for old in self._cache_file.parent.glob("verdicts-*.json"):
                        if old != self._cache_file:  # verdicts for result sets that no longer exist
                            old.unlink(missing_ok=True)
                    self._swept = True
                write_cache(self._cache_file, json.dumps({"now": self._repo.clock.now, "gates": self._cache}).encode())
                if self._bounds_file is not None and self.bounds:
                    write_cache(self._bounds_file, json.dumps(self.bounds).encode())
        return entry


def _cached_verdicts(path: Path, clock: Clock) -> dict[str, Any]:
    """The verdicts cached in ``path``, {gate hash: entry}; {} when there are none, or when this machine's clock is
    now behind the time they were cached: a result time they accepted may now be in the future (refused)."""
    data = _read_cache(path)
    stamp, gates = data.get("now"), data.get("gates")
    if not isinstance(stamp, str) or not isinstance(gates, dict) or clock.now < stamp:
        return {}
    return gates
