"""Whether a forked child may stand in for a new ``python -m pytest`` in a repository (:func:`_forkable`): the
system can fork, ``TRACKER_PYTEST_SPAWN`` (:data:`SPAWN_ENV`) does not say otherwise, the tracker's own package is not
the repository's, the interpreter's settings are a new one's, and the repository shadows no module this process loaded
or a new pytest imports (:func:`shadowed`, over the repository's paths: :func:`_listing` makes them from one tree
reading, else git or a walk is asked).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracker.commands.fresh_modules import Fresh, fresh_modules, interpreter_state

if TYPE_CHECKING:
    from tracker.base.fingerprint import TreeReading


SPAWN_ENV = "TRACKER_PYTEST_SPAWN"


def _forkable(root: Path, env: dict[str, str], listing: list[str] | None = None) -> Fresh | None:
    """What a new ``python -m pytest`` in ``root`` holds (:func:`tracker.commands.fresh_modules.fresh_modules`), where a
    forked child may stand in for it: the system can fork, ``TRACKER_PYTEST_SPAWN`` does not say otherwise, the
    tracker's own package is not the repository's (round 25, F5: the child keeps the tracker's modules, imported before
    the session, for a test of the tracker that forgot to import one), the interpreter's settings are a new one's, and
    the repository shadows none of the modules loaded here or that a new pytest imports (:func:`shadowed`; round 24,
    F3). Else None: a new interpreter runs the session."""
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


def _top_names(modules: frozenset[str]) -> set[str]:
    return {name.split(".", 1)[0] for name in modules}


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
