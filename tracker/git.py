"""Repository queries: the only module that imports gitpython (lazily, inside functions).

Finding the repository root is a plain directory walk (no gitpython), so read-only commands
never pay gitpython's ~150 ms import; commit/dirty provenance uses gitpython.
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


def head_commit(root: Path) -> tuple[str | None, bool | None]:
    """(HEAD commit hex, dirty) of the repository at ``root``; env TRACKER_COMMIT/DIRTY without git."""
    if not (root / ".git").exists():
        dirty = os.environ.get("TRACKER_DIRTY")
        return os.environ.get("TRACKER_COMMIT") or None, None if dirty is None else dirty == "1"
    import git  # gitpython

    try:
        repo = git.Repo(root)
        commit = repo.head.commit.hexsha if repo.head.is_valid() else None
        return commit, repo.is_dirty(untracked_files=True)
    except git.GitError as err:  # a broken repository is a user-facing problem, not a bug
        raise FileError(f"{root}: git: {err}") from err
