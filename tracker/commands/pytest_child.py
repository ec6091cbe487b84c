"""The forked child's side of verify's pytest session: become what ``python -m pytest ARGS`` in the repository is
(:func:`_child`: its working directory, environment, ``sys.path``, finders, a new interpreter's modules, standard
streams and exit handlers) and run it, never returning; and that child's exit status as its parent reads it
(:func:`_wait`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from tracker.commands.fresh_modules import Fresh


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


def _stream(fd: int, like: list[str]) -> TextIO:
    """A text stream on file descriptor ``fd`` with a new interpreter's (encoding, errors) (``like``, read by
    :func:`tracker.commands.fresh_modules.fresh_modules`): the parent's may be something else (an embedding program's or
    a test's capture object; the console entry's ``errors``, round 23, F3: a test printing a lone surrogate passed)."""
    tty = os.isatty(fd)
    encoding, errors = like
    return open(fd, "w", encoding=encoding, errors=errors, closefd=False, buffering=1 if tty or fd == 2 else -1)


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


def _wait(pid: int) -> int:
    try:
        _, status = os.waitpid(pid, 0)  # an interrupted wait is retried by Python itself (PEP 475)
    except ChildProcessError:
        return 1
    return os.waitstatus_to_exitcode(status)
