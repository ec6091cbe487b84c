"""Run one pytest session for ``verify``: in a forked copy of this process where the system can fork, else in
a new interpreter.

A pytest session of do-nothing tests costs ~0.3 s, of which a fresh interpreter's start-up is ~25 ms: most of
the 10% that verify may add to plain pytest (plan 0003, P5). A fork skips that start, and pytest is imported
once, before the fork. The child still isolates the tests from the tracker: a test that crashes the process
(``os._exit``, a segfault, a signal) ends the child, and verify reports it as before. The tree the child's
recorder reads first, before any conftest.py runs, is the reading the parent took just before the fork
(``tracker.base.fingerprint.HANDED_OVER``): git is not asked twice in a row.

The child holds only what a new ``python -m pytest`` would hold once pytest is imported
(:func:`tracker.commands.fresh_modules.fresh_modules`, read once by starting one, then cached): every other module
the parent imported (parsing plans: pydantic, secrets, ...) leaves ``sys.modules`` and its package (round 23: a
submodule the parent imported answered a test that forgot its import; a module it loaded hid the repository's from a
``pythonpath`` folder). Its garbage collector is a new interpreter's over every object: none stays frozen (the
console entry freezes what lives until exit: frozen objects are never collected, so a finalizer a test relied on
never ran). To keep that cheap, verify forks its first session's child at its start
(:mod:`tracker.commands.standby`), before it reads the store or judges anything: the child drops what a new pytest
lacks, imports pytest as ``python -m pytest`` in the repository would, and waits on a socket for the session's
arguments, environment and standard streams. One reading of the tree, taken just before that fork
(:func:`tracker.base.fingerprint.read_tree`), serves the shadow check, the child's recorder and the run's commit and
dirty flag: six git calls a ``verify --force``, twelve before. bench/plan_tracker/verify_overhead.py on the 2-core VM,
100 gates: ~1.08x plain pytest's CPU so (95% bounds ~1.07-1.08 over 12 rounds), ~1.11x with twelve git calls, ~1.15x
forking when the session starts.

The child runs as ``python -m pytest ARGS`` would in ``root``: that working directory and environment, ``sys.path`` a
new interpreter's (the directory first, as ``-m`` puts it; the session's ``PYTHONPATH`` then, which verify's
environment may extend: :meth:`tracker.commands.fresh_modules.Fresh.sys_path`), ``sys.argv`` pytest's, the parent's
exit handlers dropped (they belong to verify: its temporary directory must outlive the child), the tests' own exit
handlers run, output flushed, and the exit status pytest returned. Modules the parent imported from anywhere but the
interpreter's own libraries and the tracker are forgotten first (:mod:`tracker.commands.pytest_child`): a process
that embeds the tracker, such as a test suite calling it, must not hand the child its own ``test_render`` for the
repository's ``tests/test_render.py`` (pytest: "import file mismatch").

A repository that holds a module this process loaded from elsewhere (its own ``secrets.py``, a vendored
``src/pydantic/``) gets the new interpreter instead (:func:`tracker.commands.forkable.shadowed`): there ``python -m
pytest`` imports the repository's, which a forked child, holding the loaded one, never would.
``TRACKER_PYTEST_SPAWN=1`` forces the new interpreter (also used where ``os.fork`` is missing, as on Windows).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracker.commands.forkable import _forkable
from tracker.commands.fresh_modules import Fresh
from tracker.commands.pytest_child import _child, _wait
from tracker.commands.standby import _STANDBY, _handed
from tracker.errors import InterruptedRunError

if TYPE_CHECKING:
    from tracker.base.fingerprint import HandedReading


def run_pytest(
    args: list[str], root: Path, env: dict[str, str], interrupted: Callable[[], str], as_read: bool = False
) -> int:
    """pytest's exit status for ``python -m pytest ARGS`` run in ``root`` with ``env`` (negative: killed by that
    signal). On Ctrl-C, waits for pytest to finish (it got the same SIGINT and records the interruption), then raises
    InterruptedRunError(``interrupted()``). ``as_read``: nothing but the tracker itself ran since
    :func:`tracker.commands.standby.stand_by` read the tree (no bench command, no pytest), so that reading and its
    shadow check stand."""
    standby = _STANDBY.pop(os.path.realpath(root), None)
    if standby is not None:
        if as_read and standby.reading is not None:
            return standby.run(args, env, standby.reading, interrupted)
        # What the repository holds now, not when the child was forked (round 23, third helper, F1: a --bench command
        # that wrote a textwrap/ package before the session; the child had imported pytest, and textwrap, before),
        # and what a new interpreter starts with now (round 25, F2: one that wrote a sitecustomize.py or a .pth).
        if _forkable(root, env) == standby.fresh:
            return standby.run(args, env, _tree_now(root), interrupted)
        standby.release()
    fresh = _forkable(root, env)
    if fresh is not None:
        return _forked(args, root, env, interrupted, fresh, _tree_now(root))
    from tracker.pytest_boot import command

    proc = subprocess.Popen([*command(), *args], cwd=root, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.wait()
        raise InterruptedRunError(interrupted()) from None


def _tree_now(root: Path) -> HandedReading | None:
    """The tree read now (None where it cannot be: the child's recorder then says why): what the forked child's
    recorder would read first, before any conftest.py runs (:data:`tracker.base.fingerprint.HANDED_OVER`)."""
    from tracker.base.fingerprint import read_tree
    from tracker.errors import FileError

    try:
        return _handed(root, read_tree(root, commit=True))
    except (FileError, OSError):
        return None


def _forked(
    args: list[str],
    root: Path,
    env: dict[str, str],
    interrupted: Callable[[], str],
    fresh: Fresh,
    tree: HandedReading | None = None,
) -> int:
    """Run pytest in a forked child, handing it ``tree`` (:func:`_tree_now`, read just before) as its recorder's
    first reading of the tree."""
    import gc

    collecting = gc.isenabled()
    gc.disable()  # until the fork: no collection walks what pytest's import makes while it is being made (~5 ms)
    handed: dict[str, Any] = {}
    try:
        import pytest

        from tracker.base.fingerprint import HANDED_OVER as handed

        sys.stdout.flush()
        sys.stderr.flush()
        if tree is not None:
            handed[os.path.realpath(root)] = tree
        pid = os.fork()
    except BaseException:
        _after_fork(handed, collecting)
        raise
    if pid == 0:  # pragma: no cover - the child's coverage is the test run itself
        # The collector of a fresh interpreter, over every object (round 23, F2: frozen ones, the parent's, were
        # never collected, so a finalizer a test relied on never ran, and gc.get_referrers never found them).
        gc.unfreeze()
        gc.enable()
        _child(pytest, args, root, env, fresh)
    _after_fork(handed, collecting)
    try:
        return _wait(pid)
    except KeyboardInterrupt:
        _wait(pid)
        raise InterruptedRunError(interrupted()) from None


def _after_fork(handed: dict[str, Any], collecting: bool) -> None:
    """The parent after its fork, as it was before: nothing handed over left, its collector as it was."""
    import gc

    handed.clear()
    if collecting:
        gc.enable()
