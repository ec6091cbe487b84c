"""Run one pytest session for ``verify``: in a forked copy of this process where the system can fork, else in
a new interpreter.

A pytest session of do-nothing tests costs ~0.3 s, of which a fresh interpreter's start-up is ~25 ms: most of
the 10% that verify may add to plain pytest (plan 0003, P5). A fork skips that start, and pytest is imported
once, before the fork. The child still isolates the tests from the tracker: a test that crashes the process
(``os._exit``, a segfault, a signal) ends the child, and verify reports it as before. The tree the child's
recorder reads first, before any conftest.py runs, is the reading the parent took just before the fork
(``tracker.base.fingerprint.HANDED_OVER``): git is not asked twice in a row.

The child holds only what a new ``python -m pytest`` would hold once pytest is imported (:func:`fresh_modules`,
read once by starting one, then cached): every other module the parent imported (parsing plans: pydantic, secrets,
...) leaves ``sys.modules`` and its package (round 23: a submodule the parent imported answered a test that forgot
its import; a module it loaded hid the repository's from a ``pythonpath`` folder). Its garbage collector is a new
interpreter's over every object: none stays frozen (the console entry freezes what lives until exit: frozen objects
are never collected, so a finalizer a test relied on never ran). To keep that cheap, verify forks its first
session's child at its start (:func:`stand_by`, :class:`Standby`), before it reads the store or judges anything: the
child drops what a new pytest lacks, imports pytest as ``python -m pytest`` in the repository would, and waits on a
socket for the session's arguments, environment and standard streams. One reading of the tree, taken just before
that fork (:func:`tracker.base.fingerprint.read_tree`), serves the shadow check, the child's recorder and the run's
commit and dirty flag: six git calls a ``verify --force``, twelve before. bench/plan_tracker/verify_overhead.py on the
2-core VM, 100 gates: ~1.08x plain pytest's CPU so (95% bounds ~1.07-1.08 over 12 rounds), ~1.11x with twelve git
calls, ~1.15x forking when the session starts.

The child runs as ``python -m pytest ARGS`` would in ``root``: that working directory and environment,
``sys.path`` a new interpreter's (the directory first, as ``-m`` puts it; the session's ``PYTHONPATH`` then, which
verify's environment may extend: :meth:`Fresh.sys_path`), ``sys.argv`` pytest's, the parent's exit handlers
dropped (they belong to verify: its temporary directory must outlive the child), the tests' own exit handlers
run, output flushed, and the exit status pytest returned. Modules the parent imported from anywhere but the
interpreter's own libraries and the tracker are forgotten first (:func:`_forget_foreign_modules`): a process that
embeds the tracker, such as a test suite calling it, must not hand the child its own ``test_render`` for the
repository's ``tests/test_render.py`` (pytest: "import file mismatch").

A repository that holds a module this process loaded from elsewhere (its own ``secrets.py``, a vendored
``src/pydantic/``) gets the new interpreter instead (:func:`shadowed`): there ``python -m pytest`` imports the
repository's, which a forked child, holding the loaded one, never would. ``TRACKER_PYTEST_SPAWN=1`` forces the new
interpreter (also used where ``os.fork`` is missing, as on Windows).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from tracker.errors import InterruptedRunError

if TYPE_CHECKING:
    from tracker.base.fingerprint import TreeReading

SPAWN_ENV = "TRACKER_PYTEST_SPAWN"


def run_pytest(
    args: list[str], root: Path, env: dict[str, str], interrupted: Callable[[], str], as_read: bool = False
) -> int:
    """pytest's exit status for ``python -m pytest ARGS`` run in ``root`` with ``env`` (negative: killed by
    that signal). On Ctrl-C, waits for pytest to finish (it got the same SIGINT and records the interruption),
    then raises InterruptedRunError(``interrupted()``). ``as_read``: nothing but the tracker itself ran since
    :func:`stand_by` read the tree (no bench command, no pytest), so that reading and its shadow check stand."""
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


def _top_names(modules: frozenset[str]) -> set[str]:
    return {name.split(".", 1)[0] for name in modules}


def _forkable(root: Path, env: dict[str, str], listing: list[str] | None = None) -> Fresh | None:
    """What a new ``python -m pytest`` in ``root`` holds (:func:`fresh_modules`), where a forked child may stand in
    for it: the system can fork, ``TRACKER_PYTEST_SPAWN`` does not say otherwise, the tracker's own package is not
    the repository's (round 25, F5: the child keeps the tracker's modules, imported before the session, for a test
    of the tracker that forgot to import one), the interpreter's settings are a new one's, and the repository shadows
    none of the modules loaded here or that a new pytest imports (:func:`shadowed`; round 24, F3). Else None: a new
    interpreter runs the session."""
    if not hasattr(os, "fork") or os.environ.get(SPAWN_ENV, "") not in ("", "0"):
        return None
    import tracker

    inside = os.path.join(os.path.realpath(root), "")
    if any(os.path.join(os.path.realpath(p), "").startswith(inside) for p in getattr(tracker, "__path__", ())):
        return None
    fresh = fresh_modules(root, env)
    if fresh is None or fresh.state != interpreter_state():  # -X int_max_str_digits=0, -W error, ...: a new one
        return None
    return None if shadowed(root, _top_names(fresh.modules), listing) else fresh


def shadowed(root: Path, names: set[str] | frozenset[str] = frozenset(), listing: list[str] | None = None) -> list[str]:
    """Modules this process has loaded from outside ``root`` that the repository may provide itself: a file or folder
    of that name anywhere in it (git's tracked and untracked files; the folder listing without git). A fresh
    ``python -m pytest`` may import the repository's (``sys.path[0]`` is the root; pytest puts test folders,
    ``pythonpath`` entries and a conftest's ``sys.path`` edits first), a forked child holds the loaded one, so such
    a repository's tests run in a new interpreter (adversarial rounds 10 and 11: ``secrets.py``, ``tests/secrets.py``,
    ``src/markdown_it/``). A name counts as a folder on the way to a file, as a module file (``NAME.py``, ``.pyc``,
    ``.so``, ``.pyd``, ``NAME.cpython-311-x86_64-linux-gnu.so``), or as a whole name without a suffix: a link to a
    folder, a submodule, a nested repository (round 23, F1 and F4). Over-cautious by design: a name deep in a package
    only costs the fork's saving. Built-in and frozen modules come first in any interpreter: never shadowed.
    ``listing``: the repository's paths as :func:`_listing` made them from a tree reading (else git is asked here)."""
    from tracker.base.realpaths import RealPaths

    loaded: dict[str, object] = {}
    inside = os.path.join(os.path.realpath(root), "")
    real = RealPaths()
    for name, module in list(sys.modules.items()):
        if "." in name or name in sys.builtin_module_names or name == "__main__":
            continue
        spec = getattr(module, "__spec__", None)
        if spec is None or spec.origin in ("built-in", "frozen"):
            continue
        places = [spec.origin] if isinstance(spec.origin, str) else list(spec.submodule_search_locations or ())
        if not all(real(p).startswith(inside) for p in places if isinstance(p, str)):
            loaded[name] = module
    skip = {"__main__", *sys.builtin_module_names}
    loaded.update((name, None) for name in names if name not in loaded and name not in skip)
    if not loaded:
        return []
    found: set[str] = set()
    for path in _repository_files(root) if listing is None else listing:
        parts = path.rstrip("/").split("/")
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            stem = part.split(".", 1)[0] if last else part
            if stem in loaded and (not last or stem == part or part.endswith((".py", ".pyc", ".so", ".pyd"))):
                found.add(stem)
    return sorted(found)


def _repository_files(root: Path) -> list[str]:
    """Paths under ``root``: git's tracked and untracked files (a nested repository as its folder, ``NAME/``) and
    those it ignores (a folder of them as the folder: round 23, F5, a ``shlex.py`` git ignores is imported all the
    same); a walk where git cannot answer."""
    base = ["git", "-c", "core.quotepath=off", "ls-files", "-z"]
    listed = subprocess.run([*base, "--cached", "--others", "--exclude-standard"], cwd=root, capture_output=True)
    ignored = subprocess.run(
        [*base, "--others", "--ignored", "--exclude-standard", "--directory"], cwd=root, capture_output=True
    )
    if listed.returncode == 0 and ignored.returncode == 0:
        return [os.fsdecode(p) for p in (listed.stdout + b"\0" + ignored.stdout).split(b"\0") if p]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".tracker", "__pycache__")]
        rel = os.path.relpath(dirpath, root)
        out += [n if rel == "." else f"{rel}/{n}" for n in filenames]
    return out


class Standby:
    """A child forked at verify's start (:func:`stand_by`), before the tracker builds anything: it holds a new
    interpreter's modules and pytest, imported as ``python -m pytest`` in the repository imports it, and waits for one
    session's arguments. The session then costs no interpreter start and no pytest import, and the child walks and
    copies none of what the tracker built after the fork (its plans, store, statuses)."""

    def __init__(self, pid: int, channel: object, fresh: Fresh, reading: Handed | None) -> None:
        self.pid, self.channel, self.fresh = pid, channel, fresh  # the socket to the child; what it holds
        self.reading = reading  # the tree as read just before the fork (its shadow check passed on it)

    def run(
        self,
        args: list[str],
        env: dict[str, str],
        tree: Handed | None,
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
    here (:func:`shadowed`), and a new pytest's modules are known (:func:`fresh_modules`). ``env``: the session's
    environment as far as known now (its bytecode prefix)."""
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


def _listing(root: Path, tree: TreeReading) -> list[str] | None:
    """The repository's paths for :func:`shadowed` from one tree reading: what git named reading it, what it
    ignores, and what lies under ``.tracker/`` (which the reading leaves out) but in a folder git ignores whole;
    None where the reading has no list of what git ignores (then :func:`shadowed` asks git itself)."""
    from tracker.base.contract import TRACKER_DIR

    if tree.ignored is None:
        return None
    whole = {p.rstrip("/") for p in tree.ignored if p.endswith("/")}
    out = [*tree.named, *tree.ignored]
    for dirpath, dirnames, filenames in os.walk(root / TRACKER_DIR):  # links are listed, never followed
        rel = Path(dirpath).relative_to(root).as_posix()
        dirnames[:] = [d for d in dirnames if f"{rel}/{d}" not in whole]
        out += [f"{rel}/{name}" for name in (*dirnames, *filenames)]
    return out


# A tree's file ids, their (inode, ctime), and (commit checked out, what git status reported) where git answered.
Handed = tuple[dict[str, str], dict[str, tuple[int, int]], tuple[str | None, tuple[str, ...]] | None]


def _handed(root: Path, tree: TreeReading) -> Handed:
    """What the child's recorder takes from ``tree``: its ids, their stats read now, its commit and changes."""
    from tracker.base.fingerprint import file_stats

    return tree.ids, file_stats(root, tree.ids), tree.state


def _tree_now(root: Path) -> Handed | None:
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
    tree: Handed | None = None,
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


def _wait(pid: int) -> int:
    try:
        _, status = os.waitpid(pid, 0)  # an interrupted wait is retried by Python itself (PEP 475)
    except ChildProcessError:
        return 1
    return os.waitstatus_to_exitcode(status)


def _stream(fd: int, like: list[str]) -> TextIO:
    """A text stream on file descriptor ``fd`` with a new interpreter's (encoding, errors) (``like``, read by
    :func:`fresh_modules`): the parent's may be something else (an embedding program's or a test's capture object;
    the console entry's ``errors``, round 23, F3: a test printing a lone surrogate passed)."""
    tty = os.isatty(fd)
    encoding, errors = like
    return open(fd, "w", encoding=encoding, errors=errors, closefd=False, buffering=1 if tty or fd == 2 else -1)


def _child(pytest: object, args: list[str], root: Path, env: dict[str, str], fresh: Fresh) -> None:
    """Become ``python -m pytest ARGS``; never returns."""
    import atexit
    import signal

    code = 1
    try:
        atexit._clear()  # the parent's handlers are the parent's
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, as pytest expects
        if hasattr(signal, "SIGPIPE"):
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        os.chdir(root)
        os.environ.clear()
        os.environ.update(env)
        # What a fresh interpreter reads from this environment at its start: where bytecode caches live, whether
        # to write them (pytest_env puts them in a scratch directory, so that no stale one of the tree is read).
        sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        sys.path[:] = fresh.sys_path(root)
        _forget_finders()
        _forget_foreign_modules()
        _forget_modules_pytest_lacks(fresh.modules)
        sys.stdout, sys.stderr = _stream(1, fresh.streams[0]), _stream(2, fresh.streams[1])
        sys.argv = [str(Path(pytest.__file__).with_name("__main__.py")), *args]  # type: ignore[attr-defined]
        code = int(pytest.main(args))  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    except KeyboardInterrupt:  # before or after pytest's session (it handles those inside): end by SIGINT, quietly
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except SystemExit as exc:  # a conftest or plugin that exits: as the interpreter would
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF if code >= 0 else 1)


FRESH = "pytest-fresh-modules"  # the cache's name (tracker.base.cache)
# What verify sets in one session's environment alone (its gates' options, the argument check's files): read by the
# tracker's plugin, not by start-up code; in the key, they would make every session's probe another.
SESSION_VARS = ("TRACKER_GATE_OPTIONS", "TRACKER_ARGCHECK")
# The cache holds the probes of the last FRESH_KEPT interpreters and environments, by their key: ``tracker`` and
# ``python -m tracker`` start with other ``sys.path[0]``, so alternating them would probe (~0.1 s) every time.
FRESH_SLOTS, FRESH_KEPT = "recent", 4
_FRESH_CODE = (
    "import json, sys, pytest; json.dump({'modules': sorted(sys.modules), 'state': ["
    "list(sys.flags), sorted((k, str(v)) for k, v in sys._xoptions.items()), list(sys.warnoptions), "
    "sys.get_int_max_str_digits()], 'streams': [[s.encoding, s.errors] for s in (sys.stdout, sys.stderr)], "
    "'path': sys.path, 'files': sorted({p for m in list(sys.modules.values()) for p in [getattr(m, '__file__', None), "
    "*(getattr(m, '__path__', None) or ())] if isinstance(p, str)})}, sys.stdout)"
)


class Fresh(NamedTuple):
    """A new ``python -m pytest``'s interpreter once pytest is imported (:func:`fresh_modules`): its modules, its
    settings (flags, ``-X`` options, ``-W`` options, the int-to-str digit limit: :func:`interpreter_state`) and its
    standard streams' (encoding, errors), and its ``sys.path`` (its first entry ``''``: the working directory, which
    ``-m`` puts there as an absolute path)."""

    modules: frozenset[str]
    state: list[Any]
    streams: list[list[str]]
    path: list[str]

    def sys_path(self, root: Path) -> list[str]:
        """``sys.path`` of ``python -m pytest`` in ``root``: the session's own ``PYTHONPATH`` entries (verify's
        environment adds the tracker's checkout when it is not installed), ``.pth`` folders, in their order; the
        parent's ``sys.path`` may differ in any of them."""
        return [str(root), *self.path[1:]]


def interpreter_state() -> list[Any]:
    """This interpreter's settings a test can see and a fork inherits, as :data:`_FRESH_CODE` reads a new one's."""
    return [
        list(sys.flags),
        sorted((k, str(v)) for k, v in sys._xoptions.items()),
        list(sys.warnoptions),
        sys.get_int_max_str_digits(),
    ]


def fresh_modules(root: Path, env: dict[str, str]) -> Fresh | None:
    """The modules a new ``python -m pytest`` in ``root`` with ``env`` has loaded once pytest is imported (the
    interpreter's start-up's, a ``.pth`` file's, pytest's own): what the forked child may keep of its parent's
    (:func:`_forget_modules_pytest_lacks`). Read by starting one such interpreter (~0.1 s) outside the repository,
    then kept in the repository's cache under everything that decides it: this interpreter, the whole environment
    (start-up code may read any variable: round 25, F3), the ``.pth`` files and ``sitecustomize`` of its library
    folders and ``PYTHONPATH``, pytest's code; a kept answer stands while every module file it loaded is as it was
    (size, modification and change time). None where it cannot be read, or where the repository had a part in it (a
    folder of it on that interpreter's ``sys.path``, a module loaded from it: round 24, F1, a root ``textwrap.py``
    whose imports stood for every new pytest's; round 25, F4, one that also faked its ``__file__``): then no fork,
    and nothing kept."""
    import tempfile

    from tracker.base.cache import Cache, cache_key, library_key

    key = cache_key(FRESH, _startup_identity(env), library_key("pytest", "_pytest", "pluggy"), os.path.realpath(root))
    cache = Cache(root)
    kept = cache.read(FRESH, FRESH_SLOTS)
    kept = {k: v for k, v in kept.items() if isinstance(k, str)} if isinstance(kept, dict) else {}
    entry = kept.get(key)
    known = _fresh(entry)
    if known is not None and isinstance(entry, dict) and entry.get("stats") == _file_stats(entry.get("files")):
        return known
    try:
        with tempfile.TemporaryDirectory(prefix="tracker-probe-") as away:  # sys.path[0] is no folder of the repository
            proc = subprocess.run(
                [sys.executable, "-c", _FRESH_CODE], cwd=away, env=env, capture_output=True, text=True, timeout=60
            )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return None
    fresh = _fresh(data)
    if fresh is None:
        return None
    # A relative entry names a folder of the repository for pytest there (the probe's was its own folder); one naming
    # nothing there is a marker (setuptools' editable finder puts its path hook's name on sys.path).
    entries = fresh.path[1:]
    if any(not os.path.isabs(p) and os.path.lexists(os.path.join(root, p)) for p in entries):
        return None
    if _from_the_tree(root, [p for p in entries if os.path.isabs(p)]) or _from_the_tree(root, data.get("files")):
        return None
    data["stats"] = _file_stats(data.get("files"))
    kept.pop(key, None)
    kept[key] = data  # the newest last; the oldest go past FRESH_KEPT
    cache.put(FRESH, FRESH_SLOTS, dict(list(kept.items())[-FRESH_KEPT:]))
    cache.write()
    return fresh


def _file_stats(files: Any) -> list[list[int]] | None:
    """(size, modification and change time) of each of ``files`` (-1s where one is gone); None for another shape."""
    if not (isinstance(files, list) and all(isinstance(f, str) for f in files)):
        return None
    out = []
    for file in files:
        try:
            st = os.stat(file)
        except OSError:
            out.append([-1, -1, -1])
            continue
        out.append([st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return out


def _from_the_tree(root: Path, files: Any) -> bool:
    """Is any of ``files`` (the probe's module files, or its ``sys.path``) inside ``root`` (or not a list of paths)?"""
    from tracker.base.realpaths import RealPaths

    if not (isinstance(files, list) and all(isinstance(f, str) for f in files)):
        return True
    inside, real = os.path.join(os.path.realpath(root), ""), RealPaths()
    return any(real(os.path.join(root, f)).startswith(inside) for f in files)


def _fresh(data: Any) -> Fresh | None:
    """A :class:`Fresh` from what the probe printed (or the cache kept), None where it is not that shape."""
    if not isinstance(data, dict):
        return None
    modules, state, streams = data.get("modules"), data.get("state"), data.get("streams")
    if not (isinstance(modules, list) and all(isinstance(n, str) for n in modules) and isinstance(state, list)):
        return None
    if not (isinstance(streams, list) and len(streams) == 2):
        return None
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in streams):
        return None
    path = data.get("path")
    if not (isinstance(path, list) and path and path[0] == "" and all(isinstance(p, str) for p in path)):
        return None
    return Fresh(frozenset(modules), state, streams, path)


def _startup_identity(env: dict[str, str]) -> str:
    """What decides a new interpreter's modules before it runs a line: the interpreter, every variable of ``env``
    (start-up code may read any: round 25, F3) but those verify sets for one session alone (:data:`SESSION_VARS`),
    and each ``.pth``, ``sitecustomize`` and ``usercustomize`` file of its library folders and ``PYTHONPATH`` (name,
    size, modification and change time)."""
    import site

    rows = [sys.executable, sys.version, *sorted(f"{k}={v}" for k, v in env.items() if not k.startswith(SESSION_VARS))]
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    folders = list(dict.fromkeys([*site.getsitepackages(), site.getusersitepackages(), *sys.path, *extra]))
    for folder in folders:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for name in names:
            if name.endswith(".pth") or name in ("sitecustomize.py", "usercustomize.py"):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                rows.append(f"{folder}/{name} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}")
    return "\n".join(rows)


def _forget_finders() -> None:
    """A new interpreter's import system has looked in no folder yet: drop what this one's finders learned (round 25,
    F1: a ``PYTHONPATH`` folder missing when verify started stayed "no such folder" for the child after a bench
    command or an earlier session made it, so the child imported another module of that name than pytest would)."""
    import importlib

    sys.path_importer_cache.clear()
    importlib.invalidate_caches()


# The tracker's pytest plugins: the session imports them itself (``-p``), through pytest's assertion rewriting, as a
# new pytest would. One a process embedding verify had imported otherwise (pytest_boot, a test) made pytest warn it
# cannot rewrite it: an error in a repository with ``filterwarnings = error``.
_PLUGINS = frozenset({"tracker.pytest_plugin", "tracker.pytest_argcheck"})


def _forget_modules_pytest_lacks(fresh: frozenset[str]) -> None:
    """Drop from ``sys.modules`` every module a new ``python -m pytest`` would not have loaded yet (``fresh``), but
    the tracker's own (its plugin runs here) and ``__main__``; and the attribute each left on a package kept. Round 23,
    F1: the tracker had imported ``pydantic.json_schema`` parsing plans, so ``pydantic.json_schema`` was there for a
    test that forgot to import it, and passed where pytest fails it; and a module the tracker loaded (``secrets``)
    hid the repository's, which a ``pythonpath`` folder git ignores, or a zip, or a folder outside it, provided.
    Imported again here, each is the one a new interpreter would import."""
    doomed = [
        name
        for name in sys.modules
        if name not in fresh
        and name != "__main__"
        and (name in _PLUGINS or (name != "tracker" and not name.startswith("tracker.")))
    ]
    gone = {name: sys.modules.pop(name) for name in doomed}
    for name, module in gone.items():
        parent, _, leaf = name.rpartition(".")
        holder = sys.modules.get(parent) if parent else None
        if holder is not None and getattr(holder, leaf, None) is module:
            try:
                delattr(holder, leaf)
            except (AttributeError, TypeError):
                continue


def _library_roots() -> tuple[str, ...]:
    """Where a fresh interpreter's modules come from: its prefixes (standard library, site-packages), the user's
    site-packages, and the tracker itself."""
    import site

    import tracker

    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, getattr(site, "USER_SITE", None)}
    found.update(getattr(tracker, "__path__", ()))
    return tuple(os.path.join(os.path.realpath(p), "") for p in found if p)


def _forget_foreign_modules() -> None:
    """Drop from ``sys.modules`` every module whose folder (for a namespace package, every folder) lies outside
    :func:`_library_roots`: those were imported by whatever embeds the tracker, and a fresh ``python -m pytest``
    would import its own."""
    roots = _library_roots()
    seen: dict[str, bool] = {}

    def foreign(folder: object) -> bool:
        if not isinstance(folder, str):
            return False
        if folder not in seen:
            seen[folder] = not (folder + os.sep).startswith(roots) and not os.path.join(
                os.path.realpath(folder), ""
            ).startswith(roots)
        return seen[folder]

    doomed = []
    for name, module in list(sys.modules.items()):  # decided first: a namespace package's __path__ reads sys.modules
        if name == "__main__":
            continue
        try:
            file = getattr(module, "__file__", None)
            places = [os.path.dirname(file)] if isinstance(file, str) else list(getattr(module, "__path__", None) or ())
        except Exception:  # a broken module object (a namespace path whose parent is gone): left as it is
            continue
        if places and all(foreign(p) for p in places):
            doomed.append(name)
    for name in doomed:
        sys.modules.pop(name, None)
