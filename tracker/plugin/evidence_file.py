"""The evidence file being written (part of :mod:`tracker.pytest_plugin`; rule: :mod:`tracker.plugin`): where it goes
(:func:`evidence_path`), its first write (``incomplete``), its ``running`` part and the running slot beside it, named
before each test so that a run that crashes says which test did it, and its last write (:class:`EvidenceFile`)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tracker.base.contract import atomic_write, check_inside, evidence_name, process_identity, running_file
from tracker.plugin.outcomes import _file_of


def evidence_path(config: pytest.Config, root: Path) -> Path:
    """The evidence file this session writes: ``--tracker-file`` (or a new name) in the ``--tracker-record`` folder
    (default the store, ``<rootdir>/.tracker/evidence``). pytest's usage error for a ``--tracker-record`` that names a
    file, or a store linked out of the repository."""
    given = config.getoption("tracker_record")
    where = given or str(root / ".tracker" / "evidence")
    if given and Path(given).exists() and not Path(given).is_dir():
        # `pytest --tracker-record tests/test_x.py`: the option's optional folder took the test path.
        raise pytest.UsageError(
            f"--tracker-record: {given!r} is a file, not a folder for the evidence: put --tracker-record after "
            "the test paths, or name the folder with --tracker-record=DIR"
        )
    path = Path(where) / (config.getoption("tracker_file") or evidence_name("pytest"))
    if not given:  # the store linked out of the repository: every reader would refuse what is written there
        try:
            check_inside(root, path.parent)
        except OSError as err:
            raise pytest.UsageError(f"--tracker-record: {path.parent}: {err.strerror or err}") from None
    return path


class EvidenceFile:
    """The evidence file of a session, written by the recorder: whole at the session's start (:meth:`start`), its
    ``running`` part before tests (:meth:`name_running`), without it once every test finished (:meth:`tests_done`),
    whole at the end (:meth:`finish`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._head = (
            ""  # the incomplete file's JSON without its closing brace (written when the running test's file changes)
        )
        self._running_where: str | None = None  # what the evidence file names as running: a test, or its file
        self._tail: _Tail | None = None  # the incomplete evidence file's ``running`` part, rewritten in place
        self._last_file: str | None = None  # the file of the test run last
        self._pid_start: str | None = None  # this process's identity (contract.process_identity; "" where unknown)
        self.slot = _RunningSlot(running_file(path))

    def start(self, data: dict[str, Any]) -> None:
        """The session's first write (``"status": "incomplete"``)."""
        # No fsync (1-4 ms of wall): until it names a running test this file counts for nothing, and the rewrites
        # that name one are not fsynced either (only the process dies); the last write is.
        write_json_atomic(self.path, data, durable=False)

    def name_running(self, data: dict[str, Any], nodeid: str, markers: list[str], next_nodeid: str | None) -> None:
        """Name the test about to run, ``nodeid`` (``next_nodeid`` runs after it), so that a run it kills (a
        segfault, ``os._exit``, SIGKILL) says which test crashed. The running slot beside the evidence file names the
        test itself, rewritten in place (:class:`_RunningSlot`); the incomplete evidence file (``data`` as written
        first) names the test too when it is the only one of its file that runs here (between tests of other
        files), else its file, and is rewritten only when that changes: rewriting it before every test cost ~0.2 ms a
        test (it holds every file id and gate). Whoever reads only the evidence file counts a crash as an error of
        every test in that file. No fsync: only the process dies."""
        file = _file_of(nodeid)
        alone = file != self._last_file and (next_nodeid is None or _file_of(next_nodeid) != file)
        self._last_file = file
        where = nodeid if alone else file
        if where != self._running_where:
            if not self._head:
                self._head = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).removesuffix("}").rstrip()
            running = {"nodeid": where, "markers": markers if where == nodeid else [], "pid": os.getpid()}
            if self._pid_start is None:  # read once (~60 us): a recycled pid is another process
                self._pid_start = process_identity(os.getpid()) or ""
            if self._pid_start:
                running["pid_start"] = self._pid_start
            tail = f',\n "running": {json.dumps(running, ensure_ascii=False)}\n}}\n'
            if self._tail is None or not self._tail.write(tail):
                self._tail = _Tail.start(self.path, self._head, tail)
            self._running_where = where
        self.slot.name(nodeid, markers)

    def tests_done(self) -> None:
        """Every test finished: a crash from here on names no test."""
        if self._tail is not None:
            self._tail.close()
            self._tail = None
        if self._head:  # every test finished: a crash from here on names no test
            _replace(self.path, self._head + "\n}\n")
            self._running_where = None
        self.slot.remove()

    def finish(self, data: dict[str, Any]) -> None:
        """The session's last write (fsynced)."""
        write_json_atomic(self.path, data)


def write_json_atomic(path: Path, data: dict[str, Any], durable: bool = True) -> None:
    """Write JSON through a temp file + os.replace (fsynced when ``durable``): readers never see half a file."""
    _write_atomic(path, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", durable=durable)


def _replace(path: Path, text: str) -> None:
    """Atomic rewrite without fsync (cheap enough before every test)."""
    _write_atomic(path, text, durable=False)


def _write_atomic(path: Path, text: str, durable: bool) -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`tracker.base.contract.atomic_write`; a new file gets
    ``0o666`` less the umask, like every other file in the tree).

    A file name that is not UTF-8 reaches us as lone surrogates (git's bytes, decoded with surrogateescape);
    they only occur inside JSON strings, where backslashreplace writes them as the JSON escape \\udcXX, which
    reads back as the same string.
    """
    atomic_write(path, text.encode("utf-8", "backslashreplace"), durable=durable, keep_mode=False)


class _Tail:
    """The incomplete evidence file's ``running`` part, rewritten in place: the file is written whole once (the
    run's provenance, file ids and gates, then ``running``, then spaces, which JSON reads as nothing), and each
    test file after names itself with one ``pwrite`` of that part (~2 us) where a whole rewrite cost ~0.5 ms (it
    holds every file id and gate: ~100 KB at 1,000 gates). A longer part than the room left, or a failed write,
    rewrites the file whole again. Readers judge the file only once the run's process is gone."""

    ROOM = 1024  # spaces after the first ``running`` part, for longer ones

    def __init__(self, fd: int, offset: int, room: int) -> None:
        self.fd, self.offset, self.room = fd, offset, room

    @classmethod
    def start(cls, path: Path, head: str, tail: str) -> _Tail | None:
        """Write the file whole (atomically); the tail to rewrite, or None where the file cannot be opened."""
        data = tail.encode("utf-8", "backslashreplace")
        room = len(data) + cls.ROOM
        _replace(path, head + tail + " " * cls.ROOM)
        flags = os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            return None
        return cls(fd, len(head.encode("utf-8", "backslashreplace")), room)

    def write(self, tail: str) -> bool:
        """Rewrite the tail in place; False when it does not fit or the write failed (the caller starts anew)."""
        data = tail.encode("utf-8", "backslashreplace")
        if len(data) > self.room:
            self.close()
            return False
        try:
            if os.pwrite(self.fd, data.ljust(self.room), self.offset) == self.room:
                return True
        except OSError:
            pass
        self.close()
        return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class _RunningSlot:
    """The running slot (:func:`tracker.base.contract.running_file`): the test being run as one JSON record, rewritten
    in place with one ``pwrite`` (~3 µs), padded with spaces to the longest record so far so that nothing of an
    earlier one is left. Readers read it only once the run's process is gone, when nothing writes it any more.

    Should a write fail (a full disk), the slot is emptied and removed and no more are written: readers then go
    by the evidence file's ``running``, the test file, so a crash still counts, against that file's tests. The
    slot is created new (``O_EXCL``: never through a link planted there), ``0o666`` less the umask.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.size = 0  # the longest record written: each write covers it
        self.failed = False

    def name(self, nodeid: str, markers: list[str]) -> None:
        """Say that ``nodeid`` runs now."""
        if self.failed:
            return
        record = json.dumps({"nodeid": nodeid, "markers": markers, "pid": os.getpid()}, ensure_ascii=False)
        data = record.encode("utf-8", "backslashreplace").ljust(self.size)
        try:
            if self.fd is None:
                self.fd = self._create()
            if os.pwrite(self.fd, data, 0) != len(data):
                raise OSError("short write")
        except OSError:
            self.failed = True
            self.remove()
            return
        self.size = len(data)

    def _create(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            return os.open(self.path, flags, 0o666)
        except FileExistsError:  # left by a run of the same --tracker-file name
            os.unlink(self.path)
            return os.open(self.path, flags, 0o666)

    def remove(self) -> None:
        """Empty, close and remove the slot (nothing when there is none)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)  # should the unlink fail, what is left names no test
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)
