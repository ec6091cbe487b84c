"""Start ``python -m pytest ARGS`` with the tracker's own plugins, in a repository that has a ``tracker`` of its own.

Every pytest the tracker starts in a new interpreter (verify's run where it cannot fork, lint's collection, the
check of ``--pytest-arg`` values) loads :mod:`tracker.pytest_plugin` by name. ``python -m pytest`` puts the
repository first on ``sys.path``, so a repository holding a ``tracker`` package or ``tracker.py`` of its own (a
common name) would hand pytest that one: "No module named 'tracker.pytest_plugin'", and nothing ran (CI of
2026-12-03). Its tests must still import the repository's ``tracker``, as a plain ``python -m pytest`` would.

So the interpreter starts as ``python -c`` :data:`START`: the tracker's folder goes first on ``sys.path`` just
long enough to import the ``-p tracker.*`` plugins, then ``sys.path`` is what ``-m`` gives (the working directory
first) and, where that path finds another ``tracker``, the tracker's modules leave ``sys.modules`` so that the
tests import the repository's. The plugins stay registered as the objects imported (pytest skips a ``-p`` or an
entry point naming a plugin registered already), so no module of the tracker may import another of it inside a
function once pytest runs (tests/tracker/test_pytest_boot.py checks). Standard library only.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from pathlib import Path

PACKAGE = "tracker"
_HOME = str(Path(__file__).resolve().parents[1])  # the folder holding this package

# What ``python -c`` runs: this module imported from the tracker's folder, whatever the working directory holds.
START = f"import sys; sys.path.insert(0, {_HOME!r}); import tracker.pytest_boot as b; b.main()"


def command() -> list[str]:
    """The interpreter and its start, before pytest's own arguments."""
    return [sys.executable, "-c", START]


def plugin_names(args: list[str]) -> list[str]:
    """The tracker's modules that ``args`` load with ``-p NAME`` (or ``-pNAME``)."""
    names = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        name = args[i + 1] if arg == "-p" and i + 1 < len(args) else arg[2:] if arg.startswith("-p") else ""
        if name.startswith(PACKAGE + ".") and name not in names:  # a plugin is registered once
            names.append(name)
    return names


def main() -> None:
    """Run pytest on ``sys.argv[1:]`` as ``python -m pytest`` would, the tracker's plugins imported from its own
    folder; exit with pytest's status."""
    args = sys.argv[1:]
    plugins = [importlib.import_module(name) for name in plugin_names(args)]
    import pytest

    del sys.path[0]  # the tracker's folder, inserted by START
    if not sys.flags.safe_path:
        sys.path[0] = os.getcwd()  # ``-c`` put "" there; ``-m`` puts the working directory itself
    ours = os.path.join(_HOME, PACKAGE)
    found = importlib.machinery.PathFinder.find_spec(PACKAGE, sys.path)
    where = [] if found is None else list(found.submodule_search_locations or [found.origin or ""])
    if [os.path.realpath(p) for p in where] != [os.path.realpath(ours)]:
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]  # the repository's own tracker (or none) for its tests; the plugins keep ours
        clash = _clash(found, [p.__name__ for p in plugins])
        if clash:
            sys.stderr.write(
                f"tracker: error: this repository's {clash} has the name of the tracker's own pytest plugin: pytest "
                "registers one module of a name, so one of the two would be left out of the run (rename yours)\n"
            )
            raise SystemExit(4)  # pytest's usage error: nothing ran
    sys.argv = [str(Path(pytest.__file__).with_name("__main__.py")), *args]
    code = pytest.main(args, plugins=plugins)
    sys.stdout.flush()
    raise SystemExit(int(code))


def _clash(found: importlib.machinery.ModuleSpec | None, names: list[str]) -> str | None:
    """The repository's module (``found``: its ``tracker``) named as one of the tracker's plugins ``names``, as a
    path; None when it has none."""
    if found is None:
        return None
    places = list(found.submodule_search_locations or [])
    if any(os.path.isfile(os.path.join(place, "pytest_boot.py")) for place in places):
        return None  # a copy of the tracker (``pip install .`` beside a checkout, CI of 2026-12-03): same plugins
    for name in names:
        sub = name.split(".", 1)[1]
        spec = importlib.machinery.PathFinder.find_spec(sub, places) if places else None
        if spec is not None:
            return os.path.relpath(spec.origin or sub, os.getcwd())
    return None
