"""The evidence store: ``.tracker/evidence/*.json``, one file per run, never edited afterwards.

Kinds (the ``schema`` field): ``tracker-test-run`` (written by :mod:`tracker.pytest_plugin`),
``tracker-signoff`` (``tracker signoff``) and ``tracker-bench-result`` (benchmark results, issue 4).
Test runs whose ``status`` is not ``complete`` (interrupted, crashed) are ignored, except the test a
crashed run was running (the plugin names it in ``running``): once that process is gone, that test
is an error of that run (:func:`crashed_run`). What each file must hold, and the reading of one file's bytes:
:mod:`tracker.store.evidence_schema`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tracker.base.cache import VALIDATION_LIBRARIES, Cache, cache_key, code_identity, library_key
from tracker.base.contract import EVIDENCE_DIR, RUNNING_SLOT_LIMIT, Clock, check_inside, running_file, utc_time
from tracker.base.fileio import parse_json, read_regular, settled, signature
from tracker.core.model import Store, TestRun
from tracker.errors import FileError
from tracker.store.evidence_schema import parse_document


def _read(path: Path, root: Path | None, clock: Clock) -> tuple[str, dict[str, Any]]:
    """(UTC time, document) of one store file; raises ValueError with the reason it cannot be used. ``root``:
    refuse a file whose real path is outside it (None: the caller knows it is inside)."""
    try:
        data = read_regular(path, root=root)
    except FileError as err:  # a FIFO, a device, a symlink out of the repository, too large, unreadable
        raise ValueError(str(err).removeprefix(f"{path}: ")) from None
    return parse_document(data, clock)


def _not_a_directory(root: Path) -> Path | None:
    """``.tracker`` or ``.tracker/evidence`` when it exists but is not a directory, else None."""
    for folder in (EVIDENCE_DIR.parent, EVIDENCE_DIR):
        where = root / folder
        if (where.exists() or where.is_symlink()) and not where.is_dir():
            return folder
    return None


def check_store_dir(root: Path) -> None:
    """FileError (exit 8) unless ``.tracker`` and ``.tracker/evidence`` are directories or absent, and lie inside
    the repository (:func:`tracker.base.contract.check_inside`, the rule :func:`load` reads by): the commands that write
    evidence say so before they try, instead of failing halfway or writing what would then be refused."""
    bad = _not_a_directory(root)
    if bad is not None:
        raise FileError(f"{root / bad}: not a directory (the evidence store {EVIDENCE_DIR.as_posix()}/ must be one)")
    for folder in (EVIDENCE_DIR.parent, EVIDENCE_DIR):
        try:
            check_inside(root, root / folder)
        except OSError as err:
            raise FileError(f"{root / folder}: {err.strerror or err}") from None


def load(
    root: Path,
    strict: bool = True,
    last: str | tuple[str, ...] | None = None,
    *,
    clock: Clock | None = None,
    results: bool = True,
    cache: Cache | None = None,
) -> Store:
    """Read the store under ``root``; files are ordered by their recorded time (in UTC), then name.

    A file that cannot be used (not a regular file inside the repository, not JSON, not an evidence kind
    or version this code reads, a value of the wrong type, no valid time, a time in the future:
    :func:`check_document`) raises :class:`FileError` (``path: reason``) when ``strict``; otherwise it is
    skipped and listed in the store's ``invalid``, for status to show on every test and bench gate and for
    check to list.

    ``last`` names a store file (its name), or several, to order after every other one, whatever its time: ``tracker
    verify`` judges with the runs this machine just made (one per set of gate options, in their order), which an
    older file, or one from a machine whose clock runs ahead, must never hide. Files recorded later than the first
    of them are listed in ``reordered``.

    ``clock``: the time files are checked against (default: now). ``results=False``: for a caller that reads
    benchmark results through :mod:`tracker.store.result_files`; a result copy this code already found valid, unchanged
    since (:class:`_ResultCopies`, in ``cache``: the command's, None: read, nothing kept), is listed in ``bench``
    without its document instead of being parsed again (they are the store's largest files).
    """
    store = Store()
    folder = root / EVIDENCE_DIR
    if not folder.is_dir():
        bad = _not_a_directory(root)
        if bad is not None:  # no evidence can be read: every test and bench gate is unmet, saying why
            if strict:
                check_store_dir(root)
            store.invalid.append(
                f"{bad.as_posix()}: not a directory (the evidence store {EVIDENCE_DIR.as_posix()}/ must be one)"
            )
        return store
    clock = clock or Clock()
    try:
        entries = _json_entries(folder)
    except OSError as err:  # a store that cannot be listed must not read as an empty one
        if strict:
            raise FileError(f"{folder}: cannot read: {err.strerror or err}") from None
        store.invalid.append(f"{EVIDENCE_DIR.as_posix()}: cannot read: {err.strerror or err}")
        return store
    copies = None if results else _ResultCopies(Cache(root) if cache is None else cache)
    inside = _inside(folder, root)
    pinned = frozenset((last,) if isinstance(last, str) else last or ())
    items: list[tuple[bool, str, str, dict[str, Any] | None]] = []
    for entry in entries:
        path = folder / entry.name
        try:
            known = copies.valid(entry) if copies is not None else None
            if known is not None:  # the document is not needed: only its validity and time, which stay
                future = clock.future(known, "provenance.time")
                if future:
                    raise ValueError(future)
                items.append((entry.name in pinned, known, entry.name, None))
                continue
            # A file of a folder inside the repository that is no symlink lies inside it: no path to resolve.
            when, data = _read(path, None if inside and not entry.is_symlink() else root, clock)
        except ValueError as err:
            if strict:
                raise FileError(f"{path}: {err}") from None
            store.invalid.append(f"{(EVIDENCE_DIR / entry.name).as_posix()}: {err}")
            continue
        if copies is not None and data["schema"] == "tracker-bench-result":
            copies.remember(entry, when)
        items.append((entry.name in pinned, when, entry.name, data))
    if copies is not None:
        copies.save()
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    if pinned and items and items[-1][0]:
        first = min(when for mine, when, _, _ in items if mine)
        store.reordered = [
            (EVIDENCE_DIR / name).as_posix() for mine, when, name, _ in items if not mine and when > first
        ]
    prefix = f"{EVIDENCE_DIR.as_posix()}/"
    for _, _, name, doc in items:
        rel = prefix + name
        if doc is None:  # a result copy known valid (_ResultCopies): its document is not needed
            store.bench.append((rel, None))
            continue
        data = doc
        kind = data["schema"]
        if kind == "tracker-test-run":
            if data["status"] != "complete":
                crashed = crashed_run(rel, data, store.processes, root=root)
                if crashed is None:
                    store.incomplete.append(rel)
                else:
                    store.runs.append(crashed)
                continue
            store.runs.append(TestRun(rel, data["provenance"], data.get("gates", {}), data["files"], data["tests"]))
        elif kind == "tracker-signoff":
            store.signoffs.append((rel, data))
        elif kind == "tracker-bench-result":
            store.bench.append((rel, data))
    return store


def _json_entries(folder: Path) -> list[os.DirEntry[str]]:
    """The folder's ``*.json`` entries (what ``folder.glob("*.json")`` lists), sorted by name."""
    with os.scandir(folder) as entries:
        return sorted((e for e in entries if e.name.endswith(".json")), key=lambda e: e.name)


def _inside(folder: Path, root: Path) -> bool:
    """Does ``folder``'s real path lie inside ``root``'s (so a plain file in it does)?"""
    real, top = os.path.realpath(folder), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


class _ResultCopies:
    """Benchmark result copies of the store this code found valid, by stat signature: the cache ``result-copies``
    (:mod:`tracker.base.cache`), keyed by the hash of this module (other validation rules: other verdicts), holding
    ``{name: [signature..., UTC time]}``.

    A copy is ~0.6 MB of raw samples; status needs only to know it is valid and its time (its samples are read,
    cached by content, by :mod:`tracker.store.result_files`). A signature is remembered only once settled
    (:func:`settled`), so an equal one means the same bytes; the time is checked against the clock on every load."""

    NAME = "result-copies"

    def __init__(self, cache: Cache) -> None:
        import time

        self.cache = cache
        self.key = cache_key(self.NAME, code_identity(), library_key(*VALIDATION_LIBRARIES))
        self.now = time.time_ns()
        known = cache.read(self.NAME, self.key)  # missing or broken: every copy is read once more
        self.before: dict[str, Any] = known if isinstance(known, dict) else {}
        self.after: dict[str, list[Any]] = {}

    def _signature(self, entry: os.DirEntry[str]) -> list[int] | None:
        try:
            return signature(entry.stat())
        except OSError:
            return None

    def valid(self, entry: os.DirEntry[str]) -> str | None:
        """The UTC time of the entry's copy when it is known valid and unchanged; None otherwise."""
        hit = self.before.get(entry.name)
        if not (isinstance(hit, list) and len(hit) == 6 and isinstance(hit[5], str) and utc_time(hit[5]) == hit[5]):
            return None
        sig = self._signature(entry)
        if sig is None or hit[:5] != sig:
            return None
        self.after[entry.name] = hit
        return hit[5]

    def remember(self, entry: os.DirEntry[str], when: str) -> None:
        """Note a copy just found valid, recorded at ``when``, if it has settled."""
        # Taken after the read and judged against when the load began: a write during or after the read left a
        # ctime too recent to be settled, so what was read is what the signature stands for.
        sig = self._signature(entry)
        if sig is not None and settled(sig, self.now):
            self.after[entry.name] = [*sig, when]

    def save(self) -> None:
        """Hand the memo to the cache when it changed (the command writes it)."""
        if self.after != self.before:
            self.cache.put(self.NAME, self.key, self.after)


def crashed_run(
    rel: str,
    data: dict[str, Any],
    seen: list[tuple[object, object, bool, object, object]] | None = None,
    *,
    root: Path | None = None,
) -> TestRun | None:
    """An ``incomplete`` run whose process died while a test ran, as a run where only that test
    errored (nothing else of it counts); None while its process may still be running here. ``seen``
    collects (pid, host, alive, pid_start, run time) of the process it asked about (:func:`_maybe_alive`)."""
    running = data.get("running")
    if (
        data.get("status") != "incomplete"
        or not isinstance(running, dict)
        or not isinstance(running.get("nodeid"), str)
    ):
        return None
    given = data.get("provenance")
    prov: dict[str, Any] = given if isinstance(given, dict) else {}
    process = (running.get("pid"), prov.get("host"), running.get("pid_start"), prov.get("time"))
    alive = _maybe_alive(*process)
    if seen is not None:
        seen.append((process[0], process[1], alive, process[2], process[3]))
    if alive:
        return None
    if (
        root is not None
    ):  # the plugin names the test it runs in a slot beside the file (tracker.base.contract.running_file)
        running = crashed_test(root / rel, running, root=root)
    rec = {
        "nodeid": running["nodeid"],
        "outcome": "error",
        "reason": "crashed: the pytest process died while this test ran",
        "duration": 0.0,
    }
    if isinstance(running.get("markers"), list):  # none (an ingested reportlog's running test): marker-blind
        rec["markers"] = running["markers"]
    # No gates, no args: the run collected nothing whole, it only adds this one record.
    return TestRun(rel, {k: v for k, v in prov.items() if k != "args"}, {}, data.get("files") or {}, [rec])


def crashed_test(evidence: Path, running: dict[str, Any], *, root: Path | None = None) -> dict[str, Any]:
    """The ``running`` record of the test a crashed run was running: the one in :func:`running_file` when it is
    whole and agrees with the evidence file's own ``running`` (the same process; the test that names, or one
    inside the file it names), else ``running`` itself (a reader that has only the evidence file counts the
    crash against all of that file's tests). Call it only once the run's process is gone.
    """
    where, pid = running.get("nodeid"), running.get("pid")
    if not isinstance(where, str) or type(pid) is not int:
        return running
    try:
        slot = parse_json(read_regular(running_file(evidence), root=root, limit=RUNNING_SLOT_LIMIT))
    except (FileError, ValueError):
        return running
    if not isinstance(slot, dict) or slot.get("pid") != pid or type(slot.get("pid")) is not int:
        return running
    nodeid, markers = slot.get("nodeid"), slot.get("markers", [])
    if not isinstance(nodeid, str) or not (nodeid == where or nodeid.startswith(where + "::")):
        return running
    if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
        return running
    return {"nodeid": nodeid, "markers": markers, "pid": pid}


def _maybe_alive(pid: object, host: object, pid_start: object = None, since: object = None) -> bool:
    """Is process ``pid`` of this host still the run's, and alive? (A file from another host: its run is over.) A
    pid no process can have (0 or less: ``kill`` would ask about a process group; too large) names no live process.

    A pid alive again may be another process's (the kernel recycles free pids): one whose start differs from the
    recorded ``pid_start`` (:func:`tracker.base.contract.process_identity`), or, without one, that started more than
    :data:`~tracker.base.contract.RECYCLED_AFTER_S` after the run's time ``since``, is not the run's, which crashed.
    Where ``/proc`` does not say (not Linux), a live pid is the run's."""
    import socket
    import time

    from tracker.base.contract import RECYCLED_AFTER_S, UTC_FORMAT, process_identity, process_started

    if type(pid) is not int or not 0 < pid <= _MAX_PID or host != socket.gethostname() or os.name != "posix":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        pass
    if isinstance(pid_start, str):
        now = process_identity(pid)
        return now is None or now == pid_start
    run_time = utc_time(since)
    if run_time is not None:
        started = process_started(pid)
        if started is not None and time.strftime(UTC_FORMAT, time.gmtime(started - RECYCLED_AFTER_S)) > run_time:
            return False
    return True


_MAX_PID = 2**31 - 1  # pid_t is a signed 32-bit integer
