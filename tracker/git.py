"""Repository queries: the only module that imports gitpython (lazily, inside functions).

Finding the repository root is a plain directory walk (no gitpython), so read-only commands
never pay gitpython's ~150 ms import; commit/dirty provenance uses gitpython.
"""

from __future__ import annotations

import os
from pathlib import Path

from tracker.errors import FileError


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
