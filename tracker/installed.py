"""Which installed files are copies of this repository's own modules: the files a distribution built from the
repository put on ``sys.path`` (a non-editable ``pip install .``, or an install of another checkout of the same
project), whatever its layout (``src/NAME``, ``python/NAME``, ``lib/``, a ``package_dir`` remap).

A distribution is the repository's when its ``direct_url.json`` (PEP 610) names the repository's folder or anything
in it (a subfolder's project, a wheel built into ``dist/``), or its name is one of the repository's projects
(``[project] name`` or ``[tool.poetry] name`` of a ``pyproject.toml`` of the tree, normalized as PEP 503 says). Its
``RECORD`` lists the files it installed; a legacy ``.egg-info`` (``setup.py install``) its ``installed-files.txt``.
Standard library only: the pytest plugin asks this once a session, at its end, for the modules the tests imported
from outside the tree.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path

MAX_METADATA = 1 << 20  # bytes read of one dist-info file at most (a RECORD of a huge distribution is not ours)


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


MAX_PROJECTS = 20  # pyproject.toml files of the tree read at most


def project_names(root: Path, pyprojects: Iterable[str] = ("pyproject.toml",)) -> set[str]:
    """The repository's project names (``[project] name``, else ``[tool.poetry] name``) of the ``pyproject.toml``
    files ``pyprojects`` (paths in the tree; the shallowest :data:`MAX_PROJECTS`), normalized."""
    import tomllib  # here: the plugin imports this module in every pytest session, and asks only at its end

    out: set[str] = set()
    for rel in sorted(pyprojects, key=lambda p: (p.count("/"), p))[:MAX_PROJECTS]:
        try:
            data = tomllib.loads(_read(root / rel))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        for table in (
            data.get("project"),
            (data.get("tool") or {}).get("poetry") if isinstance(data.get("tool"), dict) else None,
        ):
            name = table.get("name") if isinstance(table, dict) else None
            if isinstance(name, str) and name:
                out.add(_normalized(name))
                break
    return out


def _read(path: Path) -> str:
    with open(path, "rb") as f:
        return f.read(MAX_METADATA).decode()


def _names_root(info: Path, root: str) -> bool:
    """Does ``info``'s ``direct_url.json`` name the folder ``root`` (a realpath) or anything in it?"""
    from urllib.parse import unquote, urlparse

    try:
        url = json.loads(_read(info / "direct_url.json")).get("url")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return False
    if not isinstance(url, str):
        return False
    parsed = urlparse(url)
    where = os.path.realpath(unquote(parsed.path))
    return parsed.scheme == "file" and (where == root or where.startswith(root + os.sep))


def _dist_name(info: Path) -> str | None:
    """The distribution's name, from ``METADATA``'s (an ``.egg-info``: ``PKG-INFO``'s) ``Name:`` header
    (normalized)."""
    try:
        text = _read(info / ("PKG-INFO" if info.name.endswith(".egg-info") else "METADATA"))
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        if not line.strip():
            return None  # the headers end at the first blank line
        if line.lower().startswith("name:"):
            return _normalized(line[5:].strip())
    return None


def installed_copies(
    root: Path, entries: Iterable[str] | None = None, pyprojects: Iterable[str] = ("pyproject.toml",)
) -> dict[str, str]:
    """{realpath of a ``.py`` file installed by a distribution of this repository: its path as installed, relative
    to the ``sys.path`` entry it went to (``calc/core.py``)}, over ``entries`` (default ``sys.path``);
    ``pyprojects``: the tree's ``pyproject.toml`` files (:func:`project_names`)."""
    here = os.path.realpath(root)
    projects = project_names(root, pyprojects)
    out: dict[str, str] = {}
    for entry in dict.fromkeys(sys.path if entries is None else entries):
        folder = os.path.realpath(entry or ".")
        if folder == here or folder.startswith(here + os.sep):
            continue  # the tree itself (an editable install imports from it)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            info = Path(folder, name)
            if not (_names_root(info, here) or _dist_name(info) in projects):
                continue
            for rel in _record(info):
                if rel.endswith(".py"):
                    out[os.path.realpath(os.path.join(folder, rel))] = rel.replace(os.sep, "/")
    return out


def recorded_files(entries: Iterable[str]) -> set[str]:
    """Realpaths of the files that the ``RECORD`` of any distribution in the folders ``entries`` lists: installed
    libraries (``pip install --target lib``)."""
    out: set[str] = set()
    for entry in dict.fromkeys(entries):
        folder = os.path.realpath(entry or ".")
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                out.update(os.path.realpath(os.path.join(folder, rel)) for rel in _record(Path(folder, name)))
    return out


def _record(info: Path) -> list[str]:
    """The paths ``info``'s ``RECORD`` lists, relative to its folder (none that leaves it); an ``.egg-info``'s
    ``installed-files.txt`` lists them relative to itself."""
    import csv

    if info.name.endswith(".egg-info"):
        try:
            lines = _read(info / "installed-files.txt").splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        rels = (os.path.normpath(os.path.join(info.name, line.strip())) for line in lines if line.strip())
        return [r.replace(os.sep, "/") for r in rels if not r.startswith(("..", "/"))]
    try:
        rows = list(csv.reader(_read(info / "RECORD").splitlines()))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    return [row[0] for row in rows if row and row[0] and not row[0].startswith(("..", "/"))]


def by_tail(files: Iterable[str]) -> dict[str, list[str]]:
    """{tail: the tree's ``.py`` files ending in it}: an installed ``calc/core.py`` may be a copy of
    ``calc/core.py``, ``src/calc/core.py``, ``python/calc/core.py`` or ``lib/calc/core.py``."""
    out: dict[str, list[str]] = {}
    for path in files:
        if path.endswith(".py"):
            parts = path.split("/")
            for i in range(len(parts)):
                out.setdefault("/".join(parts[i:]), []).append(path)
    return out
