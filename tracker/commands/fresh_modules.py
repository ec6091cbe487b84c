"""What a new ``python -m pytest`` holds once pytest is imported (:func:`fresh_modules`): its modules, its
interpreter's settings, its standard streams and its ``sys.path``, read by starting one such interpreter outside the
repository, then kept in the repository's cache. The forked child that runs verify's session
(:mod:`tracker.commands.pytest_run`) keeps no more of its parent's modules than these, and takes these settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

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
    (:func:`tracker.commands.pytest_child._forget_modules_pytest_lacks`). Read by starting one such interpreter (~0.1 s)
    outside the repository, then kept in the repository's cache under everything that decides it: this interpreter, the
    whole environment (start-up code may read any variable: round 25, F3), the ``.pth`` files and ``sitecustomize`` of
    its library folders and ``PYTHONPATH``, pytest's code; a kept answer stands while every module file it loaded is as
    it was (size, modification and change time). None where it cannot be read, or where the repository had a part in it
    (a folder of it on that interpreter's ``sys.path``, a module loaded from it: round 24, F1, a root ``textwrap.py``
    whose imports stood for every new pytest's; round 25, F4, one that also faked its ``__file__``): then no fork, and
    nothing kept."""
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
