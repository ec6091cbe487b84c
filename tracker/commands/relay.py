"""Output nobody here controls, relayed as plain lines (``verify --format github``).

While :func:`relayed` runs, file descriptors 1 and 2 (what pytest, its forked session and every process a test starts
inherit) are one pipe; a thread reads it and writes each line to the real stdout through
:func:`tracker.base.annotations.plain`, so that no line of it is a workflow command. When the block ends, the real
descriptors come back, what is left in the pipe is read for at most :data:`DRAIN_S`, and the pipe is closed: a process
a test left behind, still printing, writes into a closed pipe, never after the lines that follow (the resume line and
the annotations, which it could otherwise stop with ``::stop-commands::``).
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tracker.base.annotations import plain

DRAIN_S = 0.2  # how long the pipe is read after the block ends (what the block's own processes wrote last)
_POLL_S = 0.05
MAX_LINE = 1 << 20  # a line longer than this (a progress bar redrawn with CR) is relayed in lines of this many bytes
_REAL: set[int] = set()  # the descriptors of a relay running now: a child forked meanwhile closes them (_forked)


def _forked() -> None:
    """In a child forked while a relay runs (verify's later pytest sessions): close the real stdout and stderr and
    the pipe's read end. A fork keeps every descriptor, close-on-exec or not, and with the real stdout a test could
    write a workflow command around the relay."""
    for fd in sorted(_REAL):
        try:
            os.close(fd)
        except OSError:
            pass
    _REAL.clear()


os.register_at_fork(after_in_child=_forked)


@contextmanager
def relayed() -> Iterator[None]:
    """Descriptors 1 and 2 through a pipe whose lines reach the real stdout made plain (module docstring)."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    real_out = os.dup(1)
    try:
        real_err: int | None = os.dup(2)
    except OSError:  # no stderr at all
        real_err = None
    _REAL.update(fd for fd in (read_end, real_out, real_err) if fd is not None)
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    os.close(write_end)
    ended = threading.Event()
    pump = threading.Thread(target=_pump, args=(read_end, real_out, ended), daemon=True)
    pump.start()
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(real_out, 1)
        if real_err is not None:
            os.dup2(real_err, 2)
            os.close(real_err)
        ended.set()
        pump.join()
        _REAL.clear()
        os.close(read_end)  # a writer left behind now gets EPIPE
        os.close(real_out)


def _pump(read_end: int, real_out: int, ended: threading.Event) -> None:
    """Copy the pipe to ``real_out`` line by line, each made plain; after ``ended``, for at most :data:`DRAIN_S`. Only
    each new chunk is split: the part of a line not ended yet is kept as pieces (joined once, when it ends or reaches
    :data:`MAX_LINE`), so a long line costs its length, not its length squared."""
    pending: list[bytes] = []
    size = 0
    deadline: float | None = None
    while True:
        if ended.is_set() and deadline is None:
            deadline = time.monotonic() + DRAIN_S
        if deadline is not None and time.monotonic() >= deadline:
            break
        ready, _, _ = select.select([read_end], [], [], _POLL_S)
        if not ready:
            if deadline is not None:
                break  # quiet since the block ended: nothing more of its own
            continue
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break  # every writer closed
        *ended_lines, rest = chunk.split(b"\n")
        out: list[bytes] = []
        if ended_lines:
            out = [b"".join([*pending, ended_lines[0]]), *ended_lines[1:]]
            pending, size = [], 0
        if rest:
            pending.append(rest)
            size += len(rest)
        if size >= MAX_LINE:
            whole = b"".join(pending)
            cut = len(whole) - len(whole) % MAX_LINE
            out += [whole[i : i + MAX_LINE] for i in range(0, cut, MAX_LINE)]
            pending, size = ([whole[cut:]], len(whole) - cut) if cut < len(whole) else ([], 0)
        if out:
            _write(real_out, out)
    if pending:
        _write(real_out, [b"".join(pending)])


def _write(fd: int, lines: list[bytes]) -> None:
    text = "".join(plain(line.decode("utf-8", "replace")) + "\n" for line in lines)
    data = text.encode("utf-8", "replace")
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:  # the reader of our stdout went away: nothing to keep
        pass
