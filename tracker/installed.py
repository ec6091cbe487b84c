"""Which installed files are copies of this repository's own modules: the files a distribution built from the
repository put on ``sys.path`` (a non-editable ``pip install .``, or an install of another checkout of the same
project), whatever its layout (``src/NAME``, ``python/NAME``, ``lib/``, a ``package_dir`` remap).

A distribution is the repository's when its ``direct_url.json`` (PEP 610) names the repository's folder, or its
name is the project's (``[project] name`` of the repository's ``pyproject.toml``, normalized as PEP 503 says). Its
``RECORD`` lists the files it installed. Standard library only: the pytest plugin asks this once a session, at its
end, for the modules the tests imported from outside the tree.
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


def project_name(root: Path) -> str | None:
    """The repository's project name (``[project] name`` of its ``pyproject.toml``), normalized; None without one."""
    import tomllib  # here: the plugin imports this module in every pytest session, and asks only at its end

    try:
        data = tomllib.loads(_read(root / "pyproject.toml"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return _normalized(name) if isinstance(name, str) and name else None


def _read(path: Path) -> str:
    with open(path, "rb") as f:
        return f.read(MAX_METADATA).decode()


def _names_root(info: Path, root: str) -> bool:
    """Does ``info``'s ``direct_url.json`` name the folder ``root`` (a realpath)?"""
    from urllib.parse import unquote, urlparse

    try:
        url = json.loads(_read(info / "direct_url.json")).get("url")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return False
    if not isinstance(url, str):
        return False
    parsed = urlparse(url)
    return parsed.scheme == "file" and os.path.realpath(unquote(parsed.path)) == root


def _dist_name(info: Path) -> str | None:
    """The distribution's name, from ``METADATA``'s ``Name:`` header (normalized)."""
    try:
        text = _read(info / "METADATA")
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        if not line.strip():
            return None  # the headers end at the first blank line
        if line.lower().startswith("name:"):
            return _normalized(line[5:].strip())
    return None


def installed_copies(root: Path, entries: Iterable[str] | None = None) -> dict[str, str]:
    """{realpath of a ``.py`` file installed by a distribution of this repository: its path as installed, relative
    to the ``sys.path`` entry it went to (``calc/core.py``)}, over ``entries`` (default ``sys.path``)."""
    here = os.path.realpath(root)
    project = project_name(root)
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
            if not name.endswith(".dist-info"):
                continue
            info = Path(folder, name)
            if not (_names_root(info, here) or (project is not None and _dist_name(info) == project)):
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
            if name.endswith(".dist-info"):
                out.update(os.path.realpath(os.path.join(folder, rel)) for rel in _record(Path(folder, name)))
    return out


def _record(info: Path) -> list[str]:
    """The paths ``info``'s ``RECORD`` lists, relative to its folder (none that leaves it)."""
    import csv

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
