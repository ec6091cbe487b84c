"""Where the modules the tests imported came from (part of :mod:`tracker.pytest_plugin`; rule: :mod:`tracker.plugin`):
the repository's own modules imported from a copy that differs from the tree (:func:`shadowed_modules`), through a
link out of it (:func:`linked_out_modules`), or from files git ignores (:func:`ignored_modules`); a ``tracker`` of the
tests' own hidden by the tracker's (:func:`hidden_tracker`); the folders Python installs libraries into
(:func:`library_dirs`).

No cache here: :func:`library_dirs` and the prefixes are read again at each call, from the process's ``sys.prefix``
and ``site`` (the same for every session of a process), and :func:`hidden_tracker` and :func:`ignored_modules` read
``sys.path`` as the session left it."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracker.base.fingerprint import id_now
from tracker.base.installed import by_tail, installed_copies, project_files, recorded_files
from tracker.base.realpaths import RealPaths


def imported_modules() -> dict[str, str]:
    """{module name: its ``.py`` file} of every module imported in this process."""
    out: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py"):
            out[name] = file
    return out


def shadowed_modules(
    root: Path,
    files: dict[str, str],
    modules: dict[str, str],
    installed: dict[str, tuple[str, str]] | None = None,
    real_path: Callable[[str], str] = os.path.realpath,
) -> str | None:
    """The repository's own modules the tests imported (``modules``: :func:`imported_modules` of every process that
    ran tests) from a copy elsewhere whose source is not the tree's (a stale ``pip install .``, a ``.pth`` to another
    checkout: round 16, F5), as ``altered`` names them, or None. A module is the repository's when its dotted name is
    a file of the tree (``NAME.py`` or ``NAME/__init__.py``, at the root or under ``src/``), or when a distribution
    of the repository installed it (``installed``, default :func:`tracker.base.installed.installed_copies`: any layout,
    ``python/NAME``, ``lib/``, a ``package_dir`` remap; round 17, A1), a copy then of any tree file its installed
    path ends (``python/calc/core.py`` for ``calc/core.py``). A copy with the same bytes as one of those ran the same
    code. A subprocess's imports and compiled extensions are not seen (issue 24's note)."""

    base = os.path.realpath(root) + os.sep
    found: list[str] = []
    tails: dict[str, list[str]] | None = None
    for name, file in modules.items():
        real = real_path(file)
        if real.startswith(base):
            continue
        stem = name.replace(".", "/")
        leaf = "/__init__.py" if os.path.basename(file) == "__init__.py" else ".py"
        mine = [rel for rel in (f"{stem}{leaf}", f"src/{stem}{leaf}") if rel in files]
        if not mine:
            if installed is None:
                installed = installed_copies(root, candidates=project_files(files))
            if real not in installed:
                continue
            if tails is None:
                tails = by_tail(files)
            mine = _sources(tails.get(installed[real][0], []), installed[real][1])
            if not mine:
                continue  # no file of the tree: generated at build (setuptools-scm's _version.py)
        same = False
        with contextlib.suppress(OSError):
            ran = Path(file).read_bytes()
            same = any(ran == _bytes(root / rel) for rel in mine)
        if not same:
            found.append(f"{name} from {file}")
    if not found:
        return None
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return f"the repository's modules imported from copies that differ from the tree ({', '.join(found[:3])}{more})"


def hidden_tracker() -> str | None:
    """Why the tests could not import a ``tracker`` their path holds, or None: this plugin's own package is loaded
    under that name, and ``sys.path`` as the session left it (the ini's ``pythonpath``, a conftest's edits) finds
    another, which a ``python -m pytest`` without the tracker imports (round 23, third helper, F4: a broken
    ``tracker`` package of the tests' own passed, forked or not)."""
    import importlib.machinery

    loaded = sys.modules.get("tracker")
    try:
        found = importlib.machinery.PathFinder.find_spec("tracker", sys.path)
    except (ImportError, ValueError):
        return None
    if found is None or loaded is None:
        return None
    where = {os.path.realpath(p) for p in (found.submodule_search_locations or [found.origin or ""])}
    have = {os.path.realpath(p) for p in (getattr(loaded, "__path__", None) or [getattr(loaded, "__file__", "")])}
    if where == have or all((p + os.sep).startswith(library_dirs()) for p in where):
        return None  # the same, or an installed library (the tracker installed, run from a checkout): not the tests'
    return f"the tests' own tracker package ({', '.join(sorted(where))}) hidden by the tracker's"


MAX_IGNORED = 1000  # modules git ignores a run records at most (more makes its passes count for nothing)


def not_the_tree(
    root: Path, files: dict[str, str], modules: dict[str, str], prov: dict[str, Any]
) -> tuple[list[str], dict[str, str]]:
    """At a session's end, of the modules the tests imported (``modules``: :func:`imported_modules` of every process
    that ran tests): why what ran was not the code the tree's file ids (``files``) name (:func:`shadowed_modules`,
    :func:`linked_out_modules`, :func:`hidden_tracker`; more than :data:`MAX_IGNORED` modules git ignores), as
    ``altered`` names them, and {path: id} of the modules git ignores to record (:func:`ignored_modules`).
    ``prov``: the run's provenance (its ``outside``)."""
    real_path = RealPaths()
    whys = [
        why
        for why in (
            shadowed_modules(root, files, modules, real_path=real_path),
            linked_out_modules(root, modules, prov.get("outside"), real_path),
            hidden_tracker(),
        )
        if why
    ]
    ignored = ignored_modules(root, files, modules, real_path)
    if len(ignored) > MAX_IGNORED:
        return [*whys, f"more than {MAX_IGNORED} modules git ignores imported from the tree"], {}
    return whys, ignored


def _prefixes_below(base: str) -> tuple[str, ...]:
    """Python's prefixes (``sys.prefix``, ``base_prefix``, ``exec_prefix``) strictly inside the folder ``base`` (a
    realpath ending in a separator): a virtual environment or conda prefix in a subfolder. One at the repository's
    root itself (``python -m venv .``) would exempt every module of the tree: its libraries are told apart by their
    ``site-packages`` folder instead (round 18, F2b)."""
    reals = (os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    return tuple(dict.fromkeys(p for p in reals if p.startswith(base) and p != base))


def library_dirs() -> tuple[str, ...]:
    """The folders the running Python installs libraries into, as realpaths ending in a separator: the
    ``site-packages`` (Debian: ``dist-packages``) of its prefixes, a virtual environment's at the repository's root
    included, and the user's. A folder of the repository merely named ``site-packages`` is none of them (round 19,
    W3: that name alone exempted a module git ignores from being hashed)."""
    import site

    dirs: list[str] = []
    with contextlib.suppress(AttributeError):  # virtualenv < 20's site.py has neither
        dirs += site.getsitepackages([sys.prefix, sys.exec_prefix, sys.base_prefix])
        if site.ENABLE_USER_SITE:  # off in a virtual environment: a PYTHONUSERBASE in the repository is no library
            dirs.append(site.getusersitepackages())
    return tuple(dict.fromkeys(os.path.realpath(d) + os.sep for d in dirs))


def linked_out_modules(
    root: Path,
    modules: dict[str, str],
    outside: dict[str, str] | None = None,
    real_path: Callable[[str], str] = os.path.realpath,
) -> str | None:
    """The modules the tests imported by a path inside the repository that a link leads out of it (a tracked
    ``calc/settings.py -> /elsewhere/settings.py``: the tree's id is the link's text, so no edit of what it leads to
    is ever seen, and a clone runs whatever its machine has there), as ``altered`` names them, or None. Python's own
    prefixes and site folders (:func:`library_dirs`) are libraries, wherever their links lead (round 18, F2b). Test
    files and
    ``conftest.py`` files that ``outside`` (``provenance.outside``) names already meet no gate, with their own
    reason."""
    base = os.path.realpath(root) + os.sep
    prefixes = (os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    libraries = tuple(dict.fromkeys([*(p for p in prefixes if p != base), *library_dirs()]))
    found = []
    bases = _bases(root)
    for name, file in modules.items():
        if not _under(file, root, bases):
            continue
        real = real_path(file)
        if real.startswith(base) or real.startswith(libraries) or os.path.abspath(file).startswith(libraries):
            continue
        rel = Path(os.path.relpath(os.path.abspath(file), os.path.abspath(root))).as_posix()
        if outside and (rel in outside or os.path.basename(rel) == "conftest.py"):
            continue
        found.append(f"{name} -> {real}")
    if not found:
        return None
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return f"modules imported through links out of the repository ({', '.join(sorted(found)[:3])}{more})"


def ignored_modules(
    root: Path, files: dict[str, str], modules: dict[str, str], real_path: Callable[[str], str] = os.path.realpath
) -> dict[str, str]:
    """{path: id} of the modules the tests imported (``modules``: :func:`imported_modules` of every process that
    ran tests) from the tree that no id of the tree names (``files``: git ignores them, a generated ``_version.py``,
    a build's output) and that are not installed libraries: none under Python's prefixes (a virtual environment or
    conda prefix inside the repository) or in a folder of ``sys.path`` whose distributions' ``RECORD`` lists it
    (``pip install --target lib``). Round 17, F2: an edit to one changes what the tests ran, so status hashes them."""

    real_root = os.path.realpath(root)
    base = real_root + os.sep
    prefixes = (*_prefixes_below(base), *library_dirs())
    installed: set[str] | None = None
    out: dict[str, str] = {}
    for file in modules.values():
        real = real_path(file)
        if not real.startswith(base) or real.startswith(prefixes):
            continue
        rel = Path(os.path.relpath(real, real_root)).as_posix()
        if rel in files:
            continue
        if installed is None:
            installed = recorded_files(p for p in sys.path if os.path.realpath(p or ".").startswith(base))
        if real in installed:
            continue
        blob = id_now(Path(real_root), rel)
        if blob is not None:
            out[rel] = blob
    return dict(sorted(out.items()))


def _sources(candidates: list[str], scope: str) -> list[str]:
    """Of the tree's files whose path ends as an installed module's (``candidates``), those its project's folder
    (``scope``) holds, the shallowest: ``python/calc/core.py``, not a snapshot ``benchmarks/v0_1/calc/core.py``
    whose bytes a stale install may share (round 19, L3)."""
    inside = [c for c in candidates if not scope or c.startswith(scope + "/")]
    if not inside:
        return []
    depth = min(c.count("/") for c in inside)
    return [c for c in inside if c.count("/") == depth]


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _bases(root: Path) -> tuple[str, ...]:
    """``root`` as given and resolved, each absolute and normalized (for :func:`_under`)."""
    return tuple(dict.fromkeys((os.path.abspath(root), str(root.resolve()))))


def _under(file: str, root: Path, bases: tuple[str, ...] | None = None) -> bool:
    """Is ``file``, as named (its links not followed), under ``root`` (as given or resolved: :func:`_bases`, when the
    caller has them)? Compared as strings: pathlib's ``is_relative_to`` cost ~10 ms over a session's modules."""
    named = os.path.abspath(file)
    return any(named == base or named.startswith(base.rstrip(os.sep) + os.sep) for base in bases or _bases(root))
