"""The status index: what ``tracker status`` needs from the evidence store, so that its cost does not grow with
history. The cache ``status-index`` (:mod:`tracker.base.cache`: gitignored, per machine) holds, for the evidence as it
stands:

- per gate (its key ``PLAN/PHASE#N`` and every field of its definition; a manual gate also the hashes of its
  phase's manual gates): the verdict (with every evidence file it rests on) and whether the gate was ever met; per
  evidence file that decided one, whether the gate's definition changed since;
- per phase asked (its key and its gates): whether all its gates were met together once (``regressed``);
- per verdict source and ``paths`` of a phase: the file ids that evidence recorded (or measured) under those
  paths, for staleness, which is always judged against the working tree as it is now (never cached);
- the processes that incomplete runs named as running a test, with whether they were alive;
- the store's files and which of them are result copies (:class:`StoreFiles`), so that a reader of the result files
  (``tracker summary``'s figures) finds the copies without opening the store.

Its size depends on the plans and the repository, not on how many evidence files there are. A warm status lists
the two evidence folders (one ``stat`` per file), reads this file and never opens the store.

The index is used only while all of these hold, else status computes from the store and hands a new one to the
command's cache (:func:`put_tables`), which the command writes at its end:

- its key is the current one: the hash of the tracker's code (:func:`tracker.base.cache.code_identity`: each
  module's stat signature, as Python's own bytecode cache trusts them) and of the listing of every ``*.json`` in
  ``.tracker/evidence/`` and ``bench/results/`` (and every running slot beside a run, ``.NAME.json.running``: which test
  a crashed run was running, :func:`tracker.store.evidence.crashed_test`) with its stat signature (device, inode, size,
  mtime and ctime in ns, mode; a symlink's real path), the folders' own identity and the repository's real path. Adding,
  removing, replacing or editing any file, ``tracker gc`` included, changes it;
- the listing was taken before the store was read, and no file had changed within :data:`SETTLED_NS` of it:
  a later write then necessarily moves its ctime, so an equal listing means equal bytes (an index built while a
  file was fresh is not written at all; the next status builds it);
- this machine's clock is not behind the time it was built: every time accepted then is still accepted (none was
  refused as in the future: while one is, no index is kept, since the reason shown names the clock's time);
- every process it recorded is still as alive (or dead) as it was.

A lost race costs a recompute, never a wrong answer: concurrent writers each write a whole file and the last
rename wins; a reader compares the key (the cache's key) with the listing it takes itself.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, NamedTuple

from tracker.base.cache import PARSE_LIBRARIES, Cache, code_identity, library_key
from tracker.base.contract import EVIDENCE_DIR, RUNNING_SUFFIX, Clock
from tracker.base.fileio import SETTLED_NS
from tracker.base.hashing import sha256_hex
from tracker.core.evidence_answers import Evidence, LiveEvidence
from tracker.core.model import EvidenceSource, Gate, GateVerdict, ManualGate, Phase, Plan, Store

INDEX = "status-index"  # the cache's name (tracker.base.cache)
FOLDERS = (EVIDENCE_DIR, Path("bench") / "results")  # where evidence and benchmark results live


class Miss(Exception):
    """The index lacks an answer status needs (a plan or gate it has not seen): computed from the store instead."""


def _folder_row(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError as err:
        return f"{path.name} missing {err.errno}"
    return f"{path.name} {os.path.realpath(path)} {st.st_dev} {st.st_ino} {st.st_mode}"


def listing(root: Path) -> tuple[str, bool]:
    """(the store's key, whether every file in it had settled): see the module docstring. One ``stat`` per file."""
    import time

    now = time.time_ns()
    # Not ``.tracker`` itself: the command creates it when it writes its cache, after this listing (the evidence
    # folder's row says whether ``.tracker`` was replaced: its real path, inode, or why it cannot be read).
    rows = [INDEX, code_identity(), library_key(*PARSE_LIBRARIES), os.path.realpath(root)]
    newest = 0  # the latest ctime of them all
    for folder in FOLDERS:
        where = root / folder
        rows.append(_folder_row(where))
        try:
            # A crashed run's running slot (``.NAME.json.running``) decides which of its tests crashed: a slot gone
            # (``git clean``, ``git stash -u``) or rewritten changes the store's answers as a file of it would.
            entries = [e for e in os.scandir(where) if e.name.endswith((".json", f".json{RUNNING_SUFFIX}"))]
        except OSError as err:
            rows.append(f"{folder} cannot list {err.errno}")
            continue
        prefix = f"{folder.as_posix()}/"
        for entry in entries:
            try:
                st = entry.stat()  # a symlink's target: its bytes are what is read
            except OSError as err:
                rows.append(f"{prefix}{entry.name}\0error {err.errno}")
                continue
            link = os.path.realpath(entry.path) if entry.is_symlink() else ""
            ctime = st.st_ctime_ns
            rows.append(
                f"{prefix}{entry.name}\0{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {ctime} "
                f"{st.st_mode}\0{link}"
            )
            if ctime > newest:
                newest = ctime
    settled = now - newest > SETTLED_NS
    rows[3:] = sorted(rows[3:])
    # surrogateescape: a file name that is not UTF-8 (its bytes as surrogates) still has a key
    return sha256_hex("\n".join(rows).encode("utf-8", "surrogateescape")), settled


def read_tables(cache: Cache, key: str, clock: Clock, name: str = INDEX) -> Tables | None:
    """The index's tables when ``cache`` holds one for ``key`` (of this format: :func:`listing` puts it in the
    key) that is still true at ``clock`` (module docstring); None otherwise. ``name``: the cache that holds it (a
    revision's evidence has its own, :mod:`tracker.git.at_revision`)."""
    data = cache.read(name, key)
    if not isinstance(data, dict):
        return None
    built, processes = data.get("built"), data.get("processes")
    if not isinstance(built, str) or clock.now < built:  # the clock went back: a time accepted then may not be now
        return None
    if not isinstance(processes, list) or not _same_processes(processes):
        return None
    return Tables(data)


def _same_processes(processes: list[Any]) -> bool:
    """Is every recorded process still as alive as it was? (A run whose process died counts as crashed.)"""
    if not processes:
        return True
    from tracker.store.evidence import _maybe_alive

    for item in processes:
        if not (isinstance(item, list) and len(item) == 5 and type(item[2]) is bool):
            return False  # (pid, host, alive, pid_start, run time): tracker.store.evidence.crashed_run
        if _maybe_alive(item[0], item[1], item[3], item[4]) != item[2]:
            return False
    return True


class StoreFiles(NamedTuple):
    """What a loaded store listed, for a reader of result files that needs no more of it: ``copies``, its result
    copies (``Store.bench``'s paths, in its order), and ``listed``, every file it listed (:func:`store_files`)."""

    copies: list[str]
    listed: list[str]

    @classmethod
    def of(cls, store: Store) -> StoreFiles:
        return cls([rel for rel, _ in store.bench], store_files(store))


def store_files(store: Store) -> list[str]:
    """Every file a loaded store listed (used or not), paths relative to the root."""
    return (
        [r.file for r in store.runs]
        + [f for f, _ in store.signoffs]
        + [f for f, _ in store.bench]
        + store.incomplete
        + [x.split(": ", 1)[0] for x in store.invalid]
    )


class Tables:
    """The index's answers, each keyed by exactly what it depends on besides the evidence (whose identity is the
    index's key): ``gates`` (verdict and "ever met"), ``defs`` (definition changed since the deciding evidence),
    ``done`` ("was done") and ``then`` (recorded file ids under a phase's paths); ``sources`` and ``maps`` hold
    the evidence sources and file maps the entries point to, each once; ``store`` the store's files
    (:class:`StoreFiles`), so that a reader of the result files needs not read the store to find its copies."""

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        data = data or {}
        self.store: Any = data.get("store")
        self.sources: list[Any] = _list(data.get("sources"))
        self.maps: list[Any] = _list(data.get("maps"))
        self.gates: dict[str, Any] = _dict(data.get("gates"))
        self.defs: dict[str, Any] = _dict(data.get("defs"))
        self.done: dict[str, Any] = _dict(data.get("done"))
        self.then: dict[str, Any] = _dict(data.get("then"))
        # Rows added, by their content: each source and map is stored once, however many entries point to it.
        self._source_ids: dict[EvidenceSource, int] = {}
        self._map_ids: dict[tuple[tuple[str, str], ...], int] = {}

    def keep(self, old: Tables) -> None:
        """Take over the entries of ``old`` (an index of the same evidence) that this one lacks and that read back
        as valid: answers about gates and phases status did not ask for this time (another plan set, a
        selection) stay until the evidence changes."""
        for key in old.gates.keys() - self.gates.keys():
            with contextlib.suppress(Miss):
                self.put_verdict(key, *old.verdict(key))
        for key in old.then.keys() - self.then.keys():
            with contextlib.suppress(Miss):
                self.put_files(key, old.files(key))
        for mine, theirs in ((self.defs, old.defs), (self.done, old.done)):
            for key in theirs.keys() - mine.keys():
                if type(theirs[key]) is bool:
                    mine[key] = theirs[key]

    def document(self, clock: Clock, store: Store) -> dict[str, Any]:
        """The whole index as cached (``store``: the store the answers were computed from, read after the listing
        that gave its key, with ``clock``)."""
        return {
            "built": clock.now,
            "processes": [list(p) for p in store.processes],
            "sources": self.sources,
            "maps": self.maps,
            "gates": self.gates,
            "defs": self.defs,
            "done": self.done,
            "then": self.then,
            "store": [*StoreFiles.of(store)],
        }

    def store_files(self) -> StoreFiles:
        """The files of the store the index was built from (:class:`StoreFiles`); :class:`Miss` when it holds none
        this code wrote."""
        row = self.store
        if not (isinstance(row, list) and len(row) == 2 and all(isinstance(x, list) for x in row)):
            raise Miss
        if not all(isinstance(f, str) for x in row for f in x):
            raise Miss
        return StoreFiles(list(row[0]), list(row[1]))

    @staticmethod
    def _add(rows: list[Any], ids: dict[Any, int], key: Any, row: Any) -> int:
        """The position of ``row`` (identified by ``key``) in ``rows``, appended when new."""
        found = ids.get(key)
        if found is None:
            found = ids[key] = len(rows)
            rows.append(row)
        return found

    def put_verdict(self, key: str, verdict: GateVerdict, ever: bool) -> None:
        src = verdict.source
        source = (
            -1
            if src is None
            else self._add(self.sources, self._source_ids, src, [src.file, src.machine, src.commit, src.time])
        )
        self.gates[key] = [
            verdict.met,
            verdict.reason,
            verdict.failed,
            source,
            ever,
            list(verdict.also),
            verdict.undecided,
        ]

    def verdict(self, key: str) -> tuple[GateVerdict, bool]:
        """(verdict, ever met) stored under ``key``; :class:`Miss` when there is none this code wrote."""
        entry = self.gates.get(key)
        if not (isinstance(entry, list) and len(entry) == 7):
            raise Miss
        met, reason, failed, source, ever, also, undecided = entry
        if not (type(met) is bool and isinstance(reason, str) and type(failed) is bool and type(ever) is bool):
            raise Miss
        if type(undecided) is not bool:
            raise Miss
        if not (isinstance(also, list) and all(isinstance(x, str) for x in also)):
            raise Miss
        if type(source) is not int or not -1 <= source < len(self.sources):
            raise Miss
        src = None
        if source >= 0:
            row = self.sources[source]
            if not (
                isinstance(row, list) and len(row) == 4 and all(isinstance(x, str) for x in (row[0], row[1], row[3]))
            ):
                raise Miss
            if row[2] is not None and not isinstance(row[2], str):
                raise Miss
            src = EvidenceSource(*row)
        return GateVerdict(met, reason, src, failed, tuple(also), undecided), ever

    def put_files(self, key: str, files: dict[str, str]) -> None:
        items = tuple(sorted(files.items()))
        self.then[key] = self._add(self.maps, self._map_ids, items, dict(items))

    def files(self, key: str) -> dict[str, str]:
        """The ``{path: blob id}`` map stored under ``key``; :class:`Miss` when there is none."""
        entry = self.then.get(key)
        if type(entry) is not int or not 0 <= entry < len(self.maps):
            raise Miss
        files = self.maps[entry]
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise Miss
        return files

    @staticmethod
    def flag(table: dict[str, Any], key: str) -> bool:
        """A stored yes/no; :class:`Miss` when there is none."""
        value = table.get(key)
        if type(value) is not bool:
            raise Miss
        return value


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def put_tables(cache: Cache, key: str, document: dict[str, Any], name: str = INDEX) -> None:
    """Hand a new index (:meth:`Tables.document`) for the evidence of ``key`` to ``cache`` (its cache ``name``):
    written when the command ends (best effort: a read-only checkout, a full disk, and the next status computes
    again)."""
    cache.put(name, key, document)


def gate_id(gate: Gate) -> str:
    """A gate's exact identity, its position in the plan file aside: every field, in order (a ``where``'s key order
    shows in verdict reasons, so two orders are two gates here)."""
    return repr(gate._replace(line=0))


def verdict_key(key: str, gate: Gate, manual: tuple[str, ...]) -> str:
    """A verdict's entry: the gate's key and identity; a manual gate's also its phase's manual gates (they decide
    which sign-off is its)."""
    base = f"{key}\0{gate_id(gate)}"
    return f"{base}\0{','.join(manual)}" if isinstance(gate, ManualGate) else base


def done_key(plan: Plan, phase: Phase) -> str:
    """A "was done" entry: the phase's key and its gates, in order."""
    return "\0".join([f"{plan.id}/{phase.id}", *map(gate_id, phase.gates)])


def definition_key(source: str, key: str, gate: Gate) -> str:
    """A "definition changed" entry: the evidence file, the gate's key and identity."""
    return f"{source}\0{key}\0{gate_id(gate)}"


def files_key(source: str, paths: tuple[str, ...], bench: bool) -> str:
    """A recorded-files entry: the kind of evidence, the file and the phase's ``paths``."""
    return "\0".join(["bench" if bench else "run", source, *paths])


def patterns_key(source: str) -> str:
    """A measured-globs entry (held as a map of the globs to ''): the result file."""
    return "\0".join(["globs", source])


def ignored_key(source: str) -> str:
    """An ignored-modules entry: the evidence file."""
    return "\0".join(["ignored", source])


class Indexed(Evidence):
    """Status's answers read back from the index; :class:`Miss` for any it does not hold."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    def verdict(self, key: str, gate: Gate, manual: tuple[str, ...]) -> tuple[GateVerdict, bool]:
        return self.tables.verdict(verdict_key(key, gate, manual))

    def was_done(self, plan: Plan, phase: Phase) -> bool:
        return Tables.flag(self.tables.done, done_key(plan, phase))

    def definition_changed(self, source: str, key: str, gate: Gate) -> bool:
        return Tables.flag(self.tables.defs, definition_key(source, key, gate))

    def recorded_files(self, source: str, paths: tuple[str, ...], bench: bool) -> dict[str, str]:
        return self.tables.files(files_key(source, paths, bench))

    def measured_patterns(self, source: str) -> tuple[str, ...]:
        return tuple(self.tables.files(patterns_key(source)))

    def ignored_modules(self, source: str) -> dict[str, str]:
        return self.tables.files(ignored_key(source))


class Recording(Evidence):
    """The answers of a store (:class:`~tracker.core.evidence_answers.LiveEvidence`), each noted in ``tables`` as it is
    given."""

    def __init__(self, live: LiveEvidence) -> None:
        self.live = live
        self.tables = Tables()

    def verdict(self, key: str, gate: Gate, manual: tuple[str, ...]) -> tuple[GateVerdict, bool]:
        verdict, ever = self.live.verdict(key, gate, manual)
        self.tables.put_verdict(verdict_key(key, gate, manual), verdict, ever)
        return verdict, ever

    def was_done(self, plan: Plan, phase: Phase) -> bool:
        done = self.live.was_done(plan, phase)
        self.tables.done[done_key(plan, phase)] = done
        return done

    def definition_changed(self, source: str, key: str, gate: Gate) -> bool:
        changed = self.live.definition_changed(source, key, gate)
        self.tables.defs[definition_key(source, key, gate)] = changed
        return changed

    def recorded_files(self, source: str, paths: tuple[str, ...], bench: bool) -> dict[str, str]:
        files = self.live.recorded_files(source, paths, bench)
        self.tables.put_files(files_key(source, paths, bench), files)
        return files

    def measured_patterns(self, source: str) -> tuple[str, ...]:
        patterns = self.live.measured_patterns(source)
        self.tables.put_files(patterns_key(source), dict.fromkeys(patterns, ""))
        return patterns

    def ignored_modules(self, source: str) -> dict[str, str]:
        modules = self.live.ignored_modules(source)
        self.tables.put_files(ignored_key(source), modules)
        return modules
