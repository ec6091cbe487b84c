"""Repository queries: finding the repository root and reading ``--root``.

Finding the root is a plain directory walk (no gitpython, whose import alone costs ~150 ms). The commit and
dirty state that evidence records come from :func:`tracker.base.dirty.commit_state`, the one rule every writer uses.
"""

from __future__ import annotations

import os
from pathlib import Path

from tracker.errors import FileError, UsageError


def find_root(start: Path | None = None) -> Path:
    """The repository root: nearest ancestor with ``.git`` (or ``plans/`` when there is no git)."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    for d in (here, *here.parents):
        if (d / "plans").is_dir():
            return d
    raise FileError(f"{here}: not inside a git repository or a directory with plans/")


def root_from_option(raw: str | os.PathLike[str] | None) -> Path:
    """The repository root for ``--root RAW`` (None: found from the current directory, :func:`find_root`).

    RAW must name an existing directory, the repository's or one inside it; anything else is a usage
    error (exit 3) rather than a search from somewhere else: a mistyped relative ``--root`` used to find
    whatever repository held the current directory, and an empty one meant the current directory.
    """
    if raw is None:
        return find_root()
    text = os.fspath(raw)
    if not text:
        raise UsageError("--root: empty; name the repository's directory")
    start = Path(text)
    try:
        if start.is_dir():
            return find_root(start)
        missing = not start.exists()
    except (OSError, ValueError) as err:  # a name too long, a NUL byte (in-process callers)
        raise UsageError(f"--root {text}: {getattr(err, 'strerror', None) or err}") from None
    raise UsageError(f"--root {text}: {'no such directory' if missing else 'not a directory'}")
