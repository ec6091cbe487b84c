"""The per-machine cache, ``.tracker/cache/`` (gitignored): everything in it can be rebuilt, and it holds only what
the tracker computed itself, so it only ever costs or saves time. It is as trusted as the checkout it lives in: an
entry forged with the right key and shape (anyone who can write here can write the evidence and the code too) is
read as the tracker's own; deleting the folder is always safe.

One directory, one key scheme, one writer. Each cache is one file, ``.tracker/cache/<name>.json`` (:data:`NAMES`),
holding ``{"key": KEY, "data": DATA}``: KEY is the sha256 (hex, :func:`cache_key`) of everything DATA depends on
besides what its entries name themselves (the code that computed them, the inputs' identity). :meth:`Cache.read`
gives DATA only when the file is a regular file inside the repository, of bounded size, JSON, in this envelope,
and its KEY is the one asked for; anything else (missing, corrupt, foreign, hand-edited into another shape,
another key, a FIFO, a symlink out of the repository, a file from before this scheme) reads as no cache and is
rebuilt, never trusted. Readers still check each entry's shape before using it.

Evaluation writes nothing: readers hand what they learned to :meth:`Cache.put`, and the command writes it all at
its end with :meth:`Cache.write` (through :func:`tracker.base.contract.atomic_write`, without fsync: a cache lost in a
crash is rebuilt). Concurrent commands each write whole files: the last rename wins, a reader sees a whole file. A
cache that cannot be written (a read-only checkout, a full disk) only costs speed. A reader given no cache object
makes its own: it reads the repository's cache and, since nobody writes that one, keeps nothing.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tracker.base.contract import CACHE_DIR
from tracker.base.fileio import atomic_write, parse_json, read_regular
from tracker.base.hashing import sha256_hex
from tracker.errors import FileError

# Every cache file and what it holds (docs/evidence.md, "The cache"):
NAMES = (
    "plans",  # each plan file's parse by the sha256 of its text (tracker.plans.load)
    "status-index",  # status's answers by the identity of the store and result files (tracker.store.statusindex)
    "result-copies",  # the store's result copies found valid, by stat signature (tracker.store.evidence)
    "result-checks",  # result files' validation verdicts by content sha256 (tracker.store.result_files)
    "result-ids",  # result files' content sha256 by stat signature (tracker.store.bench_evaluator)
    "result-metrics",  # the metrics each result file holds, by content sha256 (tracker.store.result_metrics)
    "bench-verdicts",  # bench gates' verdicts by the repository's result set (tracker.store.bench_evaluator)
    "bootstrap",  # bootstrap bounds by their samples and parameters (tracker.core.stats.bootstrap_key)
    "doc-tables",  # the docs' results blocks validated, and doc texts known current (tracker.report.doc_files)
    "revision-plans",  # plan files parsed at a git revision, by path and blob id (tracker.git.at_revision)
    "revision-bench-verdicts",  # bench verdicts of a revision's result set (tracker.git.at_revision)
    "revision-index",  # the status index of a revision's evidence, by its files' blob ids (tracker.git.at_revision)
    "phase-history",  # each phase's transitions and each bench gate's figures (tracker.report.repo_view)
    "code-same",  # whether two versions of a file differ only in comments, by their blob ids (tracker.store.same_code)
    "pytest-fresh-modules",  # what a new pytest has loaded once imported (tracker.commands.fresh_modules)
    "report-charts",  # each chart's SVG by its data (tracker.report.chart_cache)
    "report-run-outcomes",  # each bench gate's outcome on each result run alone (tracker.report.families)
)
MAX_CACHE_BYTES = 1 << 28  # a larger file is not one the tracker wrote: rebuilt

# The libraries each answer depends on (by import name), besides Python itself (tomllib, json): a cache of answers
# one of them computed is keyed by their identity (:func:`library_key`), so a library upgraded, downgraded or edited
# in place (an editable install keeps its version string) is never answered from what its other self computed; a
# failure it caused (a plan it could not parse) is cured with it. result-ids (sha256 of bytes) needs none.
PARSE_LIBRARIES = ("markdown_it", "mdurl", "pydantic", "pydantic_core")  # plans, revision-plans (and all they feed)
VALIDATION_LIBRARIES = ("pydantic", "pydantic_core")  # result and doc-table validation (result-*, bench, doc-tables)


def cache_key(*parts: str) -> str:
    """The key of a cache: the sha256 of its parts (code versions, input identities), one per line.
    ``surrogateescape``: a file name that is not UTF-8 (its bytes as surrogates) still makes a key."""
    return sha256_hex("\n".join(parts).encode("utf-8", "surrogateescape"))


PACKAGE = Path(__file__).resolve().parents[1]  # the tracker's own package folder


def code_identity(folder: Path | None = None) -> str:
    """The identity of the code under ``folder`` (default: the tracker's package, every module of it): Python's
    version, then each ``.py`` or extension file's path, size, modification and change time (an edit, a checkout, a
    reinstall changes one; no ``touch`` sets a change time back). Every cache that keeps what the tracker computed is
    keyed by it, so no cached answer outlives the code that gave it, and nobody keeps a list of sources or a version
    to bump by hand. Read once a process (~1 ms): :func:`forget_code_identity` for a test that edits code."""
    return _code_identity(str(PACKAGE if folder is None else folder))


@functools.cache
def _code_identity(folder: str) -> str:
    import sys

    return sha256_hex("\n".join([sys.version, *_file_rows(folder)]).encode("utf-8", "surrogateescape"))


def forget_code_identity() -> None:
    """Read the code's identity again at the next :func:`code_identity` (in-process callers that edit code)."""
    _code_identity.cache_clear()


def library_key(*modules: str) -> str:
    """The identity of the installed libraries ``modules`` (top-level import names), without importing them (a warm
    status imports neither markdown-it-py nor pydantic): Python's version, then for each the path of its package
    and every ``.py`` or extension file under it (no ``__pycache__``) with its size, mtime and ctime (a write
    changes the ctime, whatever the mtime is set back to). Its version string is not read (importlib.metadata
    costs ~40 ms to import): an upgrade rewrites the files. ~2 ms for markdown-it-py and pydantic, once a process.
    A library that is not installed is named as such (its absence is an identity too)."""
    import sys

    return "\n".join([sys.version, *(_library(name) for name in modules)])


@functools.cache
def _library(name: str) -> str:
    """One library's part of :func:`library_key` (once a process: one command)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    if spec is not None and not where and spec.origin:
        where = [spec.origin]  # a single-module library
    parts = [f"{name}: {where or 'not installed'}"]
    for top in where:
        parts.extend(_file_rows(top))
    return "\n".join(parts)


def _file_rows(top: str) -> list[str]:
    """``path size mtime ctime`` of ``top`` (a file) or each code file under it (a folder), sorted."""
    rows: list[str] = []
    try:
        st = os.stat(top)
    except OSError as err:
        return [f"{top} unreadable {err.errno}"]
    if not os.path.isdir(top):
        return [f"{top} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"]
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".so", ".pyd")):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                    rows.append(f"{path} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}")
                except OSError as err:
                    rows.append(f"{path} unreadable {err.errno}")
    return rows


class Cache:
    """The caches of the repository at ``root`` (None: no cache at all, nothing read or written).

    Besides the files, :meth:`memo` holds what one command computes more than once (parsed result files), in
    memory only: nothing of it outlives the command."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.folder = None if root is None else root / CACHE_DIR
        self._pending: dict[str, tuple[str, Any]] = {}
        self._loaded: dict[str, Any] = {}  # name -> the envelope read (None: none usable), read once per command
        self._memos: dict[str, dict[str, Any]] = {}
        self._before_write: list[Callable[[], None]] = []

    def on_write(self, keep: Callable[[], None]) -> None:
        """Call ``keep`` at the start of every :meth:`write` (a reader that puts its answers only when it is done,
        and stops what it started: :class:`tracker.store.same_code.SameCode`)."""
        self._before_write.append(keep)

    def path(self, name: str) -> Path | None:
        """Where cache ``name`` lives (None without a repository)."""
        return None if self.folder is None else self.folder / f"{name}.json"

    def read(self, name: str, key: str) -> Any:
        """The data cache ``name`` holds for ``key`` (what was put this command, else the file's); None when
        it holds none this code could have written."""
        pending = self._pending.get(name)
        if pending is not None and pending[0] == key:
            return pending[1]
        if name not in self._loaded:
            self._loaded[name] = self._envelope(name)
        doc = self._loaded[name]
        return doc["data"] if doc is not None and doc["key"] == key else None

    def _envelope(self, name: str) -> dict[str, Any] | None:
        """The file of cache ``name`` as ``{"key", "data"}``, or None when it is not one."""
        path = self.path(name)
        if path is None:
            return None
        try:
            doc = parse_json(read_regular(path, root=self.root, limit=MAX_CACHE_BYTES))
        except (FileError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.keys() != {"key", "data"} or not isinstance(doc["key"], str):
            return None
        return doc

    def put(self, name: str, key: str, data: Any) -> None:
        """Set cache ``name`` to ``data`` under ``key``; written by :meth:`write` (a later put replaces it)."""
        if self.folder is not None:
            self._pending[name] = (key, data)

    def memo(self, name: str) -> dict[str, Any]:
        """A dict for this command alone, the same one each time ``name`` is asked for (never written)."""
        return self._memos.setdefault(name, {})

    def write(self) -> None:
        """Write every cache put since the last write; best effort (a failed write only costs speed)."""
        for keep in self._before_write:
            keep()
        pending, self._pending = self._pending, {}
        for name, (key, data) in pending.items():
            path = self.path(name)
            if path is None:
                continue
            try:
                # ASCII: a file name that is not UTF-8 (its bytes as lone surrogates) reads back as it was written
                text = json.dumps({"key": key, "data": data}, separators=(",", ":"), ensure_ascii=True)
                atomic_write(path, text.encode("ascii"), durable=False)
            except (OSError, ValueError, RecursionError):
                continue
            self._loaded[name] = {"key": key, "data": data}


class Overlay(Cache):
    """A cache seen through another's eyes: it reads what ``base`` holds and shares its memos. Caches in ``shared``
    (what is true of content wherever it lies) are put into ``base``; a cache in ``apart`` is read from ``base``
    under its own name, then under the name ``apart`` gives it, and is put under that name only, so that what the
    overlay learns never replaces ``base``'s own answer. Everything else lives in the overlay while the command
    runs. :meth:`write` writes nothing: ``base``'s owner writes ``base``."""

    def __init__(self, base: Cache, shared: frozenset[str], apart: Mapping[str, str]) -> None:
        super().__init__(None)
        self.base = base
        self.shared = shared
        self.apart = dict(apart)
        self.own: dict[str, tuple[str, Any]] = {}

    def read(self, name: str, key: str) -> Any:
        mine = self.own.get(name)
        if mine is not None and mine[0] == key:
            return mine[1]
        found = self.base.read(name, key)
        if found is None and name in self.apart:
            found = self.base.read(self.apart[name], key)
        return found

    def put(self, name: str, key: str, data: Any) -> None:
        if name in self.shared:
            self.base.put(name, key, data)
            return
        self.own[name] = (key, data)
        if name in self.apart:
            self.base.put(self.apart[name], key, data)

    def memo(self, name: str) -> dict[str, Any]:
        return self.base.memo(name)

    def write(self) -> None:
        """Nothing: the base's owner writes it."""


class BoundedMemo(MutableMapping[str, Any]):
    """A dict of answers kept in ``cache`` as cache ``name`` under ``key`` (None: no cache, a dict for this command
    alone): :meth:`keep` puts back the entries this command read or set, then earlier ones up to ``limit`` entries
    in all, and only when this command set something new (a read-only command leaves the file as it was).
    Readers check each entry's shape before they use it, as with every cache."""

    def __init__(self, cache: Cache | None, name: str, key: str, limit: int) -> None:
        self.cache, self.name, self.key, self.limit = cache, name, key, limit
        found = cache.read(name, key) if cache is not None else None
        self.earlier: dict[str, Any] = found if isinstance(found, dict) else {}
        self.used: dict[str, Any] = {}
        self.changed = False

    def __getitem__(self, entry: str) -> Any:
        if entry in self.used:
            return self.used[entry]
        value = self.earlier[entry]
        self.used[entry] = value
        return value

    def __setitem__(self, entry: str, value: Any) -> None:
        if self.earlier.get(entry, self) != value:
            self.changed = True
        self.used[entry] = value

    def __delitem__(self, entry: str) -> None:
        self.used.pop(entry, None)
        if self.earlier.pop(entry, None) is not None:
            self.changed = True

    def __iter__(self) -> Iterator[str]:
        yield from self.used
        yield from (entry for entry in self.earlier if entry not in self.used)

    def __len__(self) -> int:
        return len(self.used) + sum(1 for entry in self.earlier if entry not in self.used)

    def keep(self) -> None:
        """Put the entries back into the cache when this command changed them (written when the command ends)."""
        if self.cache is None or not self.changed:
            return
        kept = dict(self.used)  # all of them, whatever the limit: this command needed each
        for entry, value in self.earlier.items():
            if len(kept) >= self.limit:
                break
            kept.setdefault(entry, value)
        self.cache.put(self.name, self.key, kept)


@contextmanager
def command_cache(root: Path) -> Iterator[Cache]:
    """The cache of one command: what its readers learned is written when it ends, also when it ends with an
    error (every entry put is true whatever the command concludes); not when it is interrupted (Ctrl-C)."""
    cache = Cache(root)
    try:
        yield cache
    except Exception:
        cache.write()
        raise
    cache.write()
