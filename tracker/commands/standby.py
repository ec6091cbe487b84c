"""The standby child: forked at verify's start (:func:`stand_by`), before the tracker reads the store or judges
anything, it drops what a new pytest lacks, imports pytest as ``python -m pytest`` in the repository would, and waits
on a socket for the first session's arguments, environment and standard streams (:class:`Standby`), which
:func:`tracker.commands.pytest_run.run_pytest` hands it; :func:`release_standbys` ends one that no session took.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tracker.commands.forkable import SPAWN_ENV, _forkable, _listing
from tracker.commands.fresh_modules import Fresh
from tracker.commands.pytest_child import (
    _child,
    _forget_finders,
    _forget_foreign_modules,
    _forget_modules_pytest_lacks,
    _wait,
)
from tracker.errors import InterruptedRunError

if TYPE_CHECKING:
    from tracker.base.fingerprint import HandedReading, TreeReading


class Standby:
    """A child forked at verify's start (:func:`stand_by`), before the tracker builds anything: it holds a new
    interpreter's modules and pytest, imported as ``python -m pytest`` in the repository imports it, and waits for one
    session's arguments. The session then costs no interpreter start and no pytest import, and the child walks and
    copies none of what the tracker built after the fork (its plans, store, statuses)."""

    def __init__(self, pid: int, channel: object, fresh: Fresh, reading: HandedReading | None) -> None:
        self.pid, self.channel, self.fresh = pid, channel, fresh  # the socket to the child; what it holds
        self.reading = reading  # the tree as read just before the fork (its shadow check passed on it)

    def run(
        self,
        args: list[str],
        env: dict[str, str],
        tree: HandedReading | None,
        interrupted: Callable[[], str],
    ) -> int:
        """Hand the child its session (``tree``: the tree read just now, for its recorder) and this process's standard
        streams as they are now (verify's ``--json`` sends pytest's output to stderr; a caller may have replaced
        them since the fork), and wait for it."""
        import json
        import socket

        payload = json.dumps({"args": args, "env": env, "tree": tree}).encode()
        channel: socket.socket = self.channel  # type: ignore[assignment]
        try:
            with channel:
                socket.send_fds(channel, [len(payload).to_bytes(8, "big")], [0, 1, 2])
                channel.sendall(payload)
        except OSError:  # the child is gone (killed meanwhile): its exit status says so
            pass
        try:
            return _wait(self.pid)
        except KeyboardInterrupt:
            _wait(self.pid)
            raise InterruptedRunError(interrupted()) from None

    def release(self) -> None:
        """The child is not needed: it has run nothing and written nothing, so it is ended at once."""
        import signal

        self.channel.close()  # type: ignore[attr-defined]
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        _wait(self.pid)


_STANDBY: dict[str, Standby] = {}  # by the repository's realpath: the child waiting for its session


def stand_by(root: Path, env: dict[str, str]) -> None:
    """Fork the child that will run verify's first pytest session in ``root`` (:class:`Standby`), where it can
    fork: the system can, ``TRACKER_PYTEST_SPAWN`` does not say otherwise, the repository shadows no module loaded
    here (:func:`tracker.commands.forkable.shadowed`), and a new pytest's modules are known
    (:func:`tracker.commands.fresh_modules.fresh_modules`). ``env``: the session's environment as far as known now (its
    bytecode prefix)."""
    if not hasattr(os, "fork") or os.environ.get(SPAWN_ENV, "") not in ("", "0"):
        return
    # One reading of the tree serves the shadow check (the names git gave, what it ignores: one more git call, side by
    # side) and the session's recorder, when verify runs nothing else before the session (run_pytest's as_read).
    from tracker.base.fingerprint import read_tree
    from tracker.errors import FileError

    try:
        tree = read_tree(root, ignored=True, commit=True)
    except (FileError, OSError):
        tree = None
    fresh = _forkable(root, env, None if tree is None else _listing(root, tree))
    if fresh is None:
        return
    reading = None if tree is None else _handed(root, tree)
    import socket

    release_standbys()
    sys.stdout.flush()
    sys.stderr.flush()
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is the test run itself
        mine.close()
        _standing_by(theirs, root, env, fresh)
    theirs.close()
    _STANDBY[os.path.realpath(root)] = Standby(pid, mine, fresh, reading)


def release_standbys() -> None:
    """End every child still waiting (verify ran no session, or fewer than it prepared for)."""
    while _STANDBY:
        _STANDBY.popitem()[1].release()


def _standing_by(channel: object, root: Path, env: dict[str, str], fresh: Fresh) -> None:
    """The standby child: become what a new ``python -m pytest`` in ``root`` is once pytest is imported, wait for
    the session (its arguments, environment and standard streams; nothing: end), run it; never returns."""
    import gc
    import json
    import socket

    sock: socket.socket = channel  # type: ignore[assignment]

    try:
        gc.unfreeze()  # a new interpreter's collector, over every object (the entry froze what it had)
        gc.enable()
        os.chdir(root)
        sys.path[:] = fresh.sys_path(root)
        _forget_finders()
        sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        _forget_foreign_modules()
        _forget_modules_pytest_lacks(fresh.modules)
        import pytest

        head, fds, _, _ = socket.recv_fds(sock, 8, 3)
        while head and len(head) < 8:
            more = sock.recv(8 - len(head))
            if not more:
                break
            head += more
        if len(head) < 8 or len(fds) != 3:
            os._exit(0)  # released: no session
        size, message = int.from_bytes(head, "big"), bytearray()
        while len(message) < size:
            chunk = sock.recv(min(1 << 20, size - len(message)))
            if not chunk:
                os._exit(1)
            message += chunk
        sock.close()
        for target, fd in zip((0, 1, 2), fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        data = json.loads(message)
        if data.get("tree"):
            from tracker.base.fingerprint import HANDED_OVER

            ids, stats, state = data["tree"]
            known = None if state is None else (state[0], tuple(state[1]))
            HANDED_OVER[os.path.realpath(root)] = (ids, {k: (v[0], v[1]) for k, v in stats.items()}, known)
    except BaseException:
        os._exit(1)
    _child(pytest, data["args"], root, data["env"], fresh)


# A tree's file ids, their (inode, ctime), and (commit checked out, what git status reported) where git answered.


def _handed(root: Path, tree: TreeReading) -> HandedReading:
    """What the child's recorder takes from ``tree``: its ids, their stats read now, its commit and changes."""
    from tracker.base.fingerprint import file_stats

    return tree.ids, file_stats(root, tree.ids), tree.state
