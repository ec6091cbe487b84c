"""Names of the files the tracker writes into its evidence store: one rule for every writer.

Standard library only, and light: ``tracker verify`` names its run's file before starting pytest (importing
:mod:`tracker.commands.ingest` for this cost ~10 ms of its start-up), and the pytest plugin, which runs where
only pytest is installed, names its file with the same rule.
"""

from __future__ import annotations

import os
import socket
import time


def evidence_name(kind: str, host: str | None = None) -> str:
    """A store file name two branches never both create: ``<UTC time to the µs>-<host>-<kind>-<6 hex>.json``.

    The time sorts the names by when they were made; ``host`` (this machine's name when None) is cut to 40
    characters, each one other than a letter, digit, ``-`` or ``_`` written as ``-``; three random bytes keep
    two files of the same microsecond apart.
    """
    now = time.time_ns()
    seconds, micros = divmod(now // 1000, 1_000_000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds)) + f"{micros:06d}Z"
    name = socket.gethostname() if host is None else host
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:40] or "host"
    return f"{stamp}-{safe}-{kind}-{os.urandom(3).hex()}.json"
