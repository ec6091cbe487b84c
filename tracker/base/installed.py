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


PROJECT_FILES = ("pyproject.toml", "setup.cfg")


def project_files(files: Iterable[str]) -> list[str]:
    """The tree's files that may name its projects: ``pyproject.toml`` and ``setup.cfg`` at the root or one folder
    down (Triton's ``python/``). Deeper ones are most often vendored libraries (``third_party/NAME/``): a library the
    tests import from an install is not the repository's code (round 19, FP1)."""
    return sorted(f for f in files if f.count("/") <= 1 and f.rpartition("/")[2] in PROJECT_FILES)


def project_names(root: Path, candidates: Iterable[str] = PROJECT_FILES) -> dict[str, str]:
    """{normalized project name: the folder of the tree it is declared in ("" for the root)} from ``candidates``
    (:func:`project_files`): ``[project] name``, else ``[tool.poetry] name`` of a ``pyproject.toml``, ``[metadata]
    name`` of a ``setup.cfg``."""
    out: dict[str, str] = {}
    for rel in candidates:
        name = _declared_name(root / rel)
        if name:
            out.setdefault(_normalized(name), rel.rpartition("/")[0])
    return out


def _declared_name(path: Path) -> str | None:
    try:
        text = _read(path)
    except (OSError, UnicodeDecodeError):
        return None
    if path.name == "setup.cfg":
        import configparser

        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return None
        return parser.get("metadata", "name", fallback=None) or None
    import tomllib  # here: the plugin imports this module in every pytest session, and asks only at its end

    try:
        data = tomllib.loads(text)
    except ValueError:
        return None
    tool = data.get("tool")
    for table in (data.get("project"), tool.get("poetry") if isinstance(tool, dict) else None):
        name = table.get("name") if isinstance(table, dict) else None
        if isinstance(name, str) and name:
            return name
    return None


def _read(path: Path) -> str:
    with open(path, "rb") as f:
        return f.read(MAX_METADATA).decode()


def _source_folder(info: Path, root: str) -> str | None:
    """The folder of the tree (relative, "" for the root) that ``info``'s ``direct_url.json`` names, when it names
    ``root`` (a realpath) or anything in it: a folder, or a wheel or archive built there (then the whole tree)."""
    from urllib.parse import unquote, urlparse

    try:
        url = json.loads(_read(info / "direct_url.json")).get("url")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return None
    if not isinstance(url, str):
        return None
    parsed = urlparse(url)
    where = os.path.realpath(unquote(parsed.path))
    if parsed.scheme != "file" or not (where == root or where.startswith(root + os.sep)):
        return None
    rel = os.path.relpath(where, root).replace(os.sep, "/")
    return "" if rel == "." or not os.path.isdir(where) else rel


def _dist_name(info: Path) -> str | None:
    """The distribution's name, from ``METADATA``'s (an ``.egg-info`` or ``EGG-INFO``: ``PKG-INFO``'s) ``Name:``
    header (normalized)."""
    try:
        text = _read(info / ("METADATA" if info.name.endswith(".dist-info") else "PKG-INFO"))
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.partition("\n\n")[0].splitlines():  # not the long description after the headers
        if not line.strip():
            return None  # the headers end at the first blank line
        if line.lower().startswith("name:"):
            return _normalized(line[5:].strip())
    return None


def installed_copies(
    root: Path, entries: Iterable[str] | None = None, candidates: Iterable[str] = PROJECT_FILES
) -> dict[str, tuple[str, str]]:
    """{realpath of a ``.py`` file installed by a distribution of this repository: (its path as installed, relative
    to the ``sys.path`` entry it went to, ``calc/core.py``; the tree's folder of its project, "" for the root)}, over
    ``entries`` (default ``sys.path``); ``candidates``: the tree's project files (:func:`project_files`). An ``.egg``
    folder on the path (``EGG-INFO/PKG-INFO``) holds its modules itself."""
    here = os.path.realpath(root)
    projects = project_names(root, candidates)
    out: dict[str, tuple[str, str]] = {}
    for entry in dict.fromkeys(sys.path if entries is None else entries):
        folder = os.path.realpath(entry or ".")
        if folder == here or folder.startswith(here + os.sep):
            continue  # the tree itself (an editable install imports from it)
        if folder.endswith(".egg") and os.path.isdir(os.path.join(folder, "EGG-INFO")):
            scope = projects.get(_dist_name(Path(folder, "EGG-INFO")) or "")
            if scope is not None:
                out.update((real, (rel, scope)) for real, rel in _egg_modules(folder))
            continue
        for info in _distributions(folder):
            scope = _source_folder(info, here)
            if scope is None and projects:
                scope = projects.get(_dist_name(info) or "")
            if scope is None:
                continue
            for rel in _record(info):
                if rel.endswith(".py"):
                    out[os.path.realpath(os.path.join(folder, rel))] = (rel.replace(os.sep, "/"), scope)
    return out


def _distributions(folder: str) -> list[Path]:
    """The ``.dist-info`` and ``.egg-info`` folders of the folder ``folder`` (none when it cannot be listed)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [Path(folder, name) for name in names if name.endswith((".dist-info", ".egg-info"))]


MAX_EGG_FILES = 10_000  # files of one .egg folder walked at most


def _egg_modules(folder: str) -> list[tuple[str, str]]:
    """(realpath, path inside) of the ``.py`` files of an ``.egg`` folder (its ``EGG-INFO`` aside)."""
    out: list[tuple[str, str]] = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "EGG-INFO")
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(top, name)
                out.append((os.path.realpath(path), os.path.relpath(path, folder).replace(os.sep, "/")))
            if len(out) >= MAX_EGG_FILES:
                return out
    return out


def recorded_files(entries: Iterable[str]) -> set[str]:
    """Realpaths of the files that the ``RECORD`` of any distribution in the folders ``entries`` lists: installed
    libraries (``pip install --target lib``)."""
    out: set[str] = set()
    for entry in dict.fromkeys(entries):
        folder = os.path.realpath(entry or ".")
        for info in _distributions(folder):
            out.update(os.path.realpath(os.path.join(folder, rel)) for rel in _record(info))
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
