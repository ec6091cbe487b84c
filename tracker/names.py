"""Names of the files the tracker writes into its evidence store, one rule for every writer; and the file that
names the test a recording run is running.

Standard library only, and light: ``tracker verify`` names its run's file before starting pytest (importing
:mod:`tracker.commands.ingest` for this cost ~10 ms of its start-up), and the pytest plugin, which runs where
only pytest is installed, names its files with the same rules.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def evidence_name(kind: str, host: str | None = None) -> str:
    """A store file name two branches never both create: ``<UTC time to the µs>-<host>-<kind>-<6 hex>.json``.

    The time sorts the names by when they were made; ``host`` (this machine's name when None) is cut to 40
    characters, each one other than a letter, digit, ``-`` or ``_`` written as ``-``; three random bytes keep
    two files of the same microsecond apart.
    """
    now = time.time_ns()
    seconds, micros = divmod(now // 1000, 1_000_000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds)) + f"{micros:06d}Z"
    name = hostname() if host is None else host
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:40] or "host"
    return f"{stamp}-{safe}-{kind}-{os.urandom(3).hex()}.json"


def hostname() -> str:
    """This machine's name, as :func:`socket.gethostname` says it (the kernel's node name), without importing
    :mod:`socket` where ``os.uname`` gives it (~4 ms of verify's start-up)."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return uname().nodename
    import socket  # noqa: PLC0415 - where there is no os.uname (Windows)

    return socket.gethostname()


# --- the running test ------------------------------------------------------------------------------------------
# While a recording run's tests run, its evidence file's ``running`` names the test being run when it is the only
# one of its file that runs, else its file (a reader with that file alone counts a crash against all of the file's
# tests), and the running slot beside it names the very test, rewritten in place before each test (a few µs, where
# rewriting the evidence file cost ~0.2 ms a test, with every file id and gate in it). The slot is read only once
# the run's process is gone, when nothing writes it any more: never half.
RUNNING_SLOT_LIMIT = 1024 * 1024  # a slot larger than this is no record the plugin wrote


def running_file(evidence: Path) -> Path:
    """The file naming the test a recording run is running: ``.<evidence file name>.running`` beside it (hidden,
    and no ``*.json``: the store never reads it as evidence)."""
    return evidence.with_name(f".{evidence.name}.running")


def crashed_test(evidence: Path, running: dict[str, Any], *, root: Path | None = None) -> dict[str, Any]:
    """The ``running`` record of the test a crashed run was running: the one in :func:`running_file` when it is
    whole and agrees with the evidence file's own ``running`` (the same process; the test that names, or one
    inside the file it names), else ``running`` itself (a reader that has only the evidence file counts the
    crash against all of that file's tests). Call it only once the run's process is gone.
    """
    from tracker.errors import FileError  # noqa: PLC0415 - the plugin imports this module, and only names files
    from tracker.fileio import parse_json, read_regular  # noqa: PLC0415

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
