"""Where the pytest that ``tracker verify`` runs keeps Python's bytecode caches, and why it can trust them.

Python trusts a cached ``.pyc`` while its source keeps the size and the whole second of modification time the cache
recorded, so an edit that keeps both (inside one second, or with a restored or normalised modification time) runs
the old code. A ``__pycache__`` of the tree may hold such an entry (the user's own test run wrote it): verify's
pytest never reads one. Its caches live in ``.tracker/cache/pycache/`` (``PYTHONPYCACHEPREFIX``; gitignored,
rebuilt at will) and persist between runs, so that unchanged code compiles once; before each run :func:`prefix`
drops every entry of a file under the repository whose inode changed (``st_ctime_ns``: any write, rename or
``utime``, which no one can set back) at or after the entry was written, or whose path did: a link on the way
pointed elsewhere, a folder on the way renamed into place (a rename keeps the files' own times). pytest keeps
its rewritten test modules there too (it follows ``sys.pycache_prefix``), judged alike.

Standard library only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tracker.base.contract import CACHE_DIR, check_inside, ensure_tracker_dir
from tracker.errors import FileError

PYCACHE = CACHE_DIR / "pycache"
# "<module>.<tag>[-<pytest tag>].pyc" -> "<module>": how Python and pytest name a cache entry.
_ENTRY = re.compile(r"^(?P<module>[^.]+)\..*\.pyc$")


def prefix(root: Path) -> Path:
    """The bytecode cache prefix of ``root``'s verify runs, rid of every entry its source may have outdated.
    FileError (exit 8) when it would lie outside the repository (``.tracker`` or its ``cache/`` linked out):
    :func:`tracker.base.contract.check_inside`, every writer's rule."""
    base = root / PYCACHE
    try:
        check_inside(root, base)
        ensure_tracker_dir(root / CACHE_DIR.parent)
    except OSError as err:
        raise FileError(f"{base}: cannot write: {err.strerror or err}") from None
    base.mkdir(parents=True, exist_ok=True)
    for tree in {root.absolute(), root.resolve()}:  # Python mirrors the path it imported from
        _prune(base / tree.relative_to(tree.anchor), tree)
    return base


def _prune(mirror: Path, tree: Path) -> None:
    """Remove the entries under ``mirror`` (the cache of ``tree``) whose source is gone or changed since."""
    folders: dict[Path, int] = {}
    for dirpath, _, filenames in os.walk(mirror):
        source_dir = tree / Path(dirpath).relative_to(mirror)
        for name in filenames:
            found = _ENTRY.match(name)
            entry = Path(dirpath, name)
            try:
                written = entry.stat().st_mtime_ns
                try:
                    changed = _changed(source_dir / f"{found['module']}.py", tree, folders) if found else None
                except (FileNotFoundError, NotADirectoryError, RuntimeError):
                    changed = None
                if changed is None or changed >= written:
                    entry.unlink()
            except OSError:
                continue  # another run's entry, gone or being replaced: judged again next time


def _changed(source: Path, tree: Path, folders: dict[Path, int]) -> int:
    """When the code at ``source`` last changed: the newest inode change of the file it leads to, of each link on
    the way (a link pointed elsewhere is a new link) and of each folder between ``tree`` and it (a folder renamed
    into place keeps its files' times: adversarial round 10). Folders' times are kept in ``folders``."""
    newest = source.stat().st_ctime_ns  # the file itself, links followed
    hop, hops = source, 0
    while True:  # the link chain: each hop's own inode (lstat)
        st = hop.lstat()
        newest = max(newest, st.st_ctime_ns)
        if not os.path.islink(hop):
            break
        hops += 1
        if hops > 40:
            raise RuntimeError("too many links")
        hop = hop.parent / os.readlink(hop)
    # Each folder on the way, as written and as resolved: a folder reached through a link (pkg -> impl) changes
    # when the folder the link leads to is renamed into place, which the link's own times never show (round 11).
    real = tree.resolve()
    for start, top in ((source.parent, tree), (source.resolve().parent, real)):
        folder = start
        while folder != top and top in folder.parents:
            if folder not in folders:
                folders[folder] = folder.lstat().st_ctime_ns
            newest = max(newest, folders[folder])
            folder = folder.parent
    return newest
