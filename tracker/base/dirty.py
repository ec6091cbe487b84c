"""The commit a piece of evidence was made on, and whether the tree was dirty: one definition for every writer.

``dirty`` means the working tree differs from that commit: a tracked file modified, staged or deleted, or an
untracked file git does not ignore. Evidence never makes a tree dirty: ``.tracker/`` (the store and the
tracker's caches, written by the tracker itself) and ``bench/results/`` (benchmark result files) are left out,
so recording a run, signing off or writing a result file never turns the next record dirty; nor do Python's bytecode
caches (``__pycache__/``), which the recorded run itself writes where nothing ignores them.

When ``TRACKER_COMMIT`` is set, the commit comes from it and the dirty flag from ``TRACKER_DIRTY`` (``1`` dirty,
``0`` clean, unset or empty unknown), even inside a git checkout: a copy of the tree on another machine may
carry a stale ``.git``. Otherwise both come from git; without a git repository or a commit, the environment
variables are all there is (so both are usually unknown, ``None``).

Standard library only: the pytest plugin records with it on machines where only pytest is installed.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

# Where evidence lives in a repository (tracker.store.evidence.EVIDENCE_DIR's parent,
# tracker.store.result_files.RESULT_DIRS).
EVIDENCE_PATHS = (".tracker", "bench/results")
# Python's bytecode caches, never source: importing a module writes them (where PYTHONDONTWRITEBYTECODE is unset), so
# the run being recorded would dirty a repository that does not ignore them (tracker.base.fingerprint leaves them out
# too).
BYTECODE_EXCLUDE = ":(exclude,glob)**/__pycache__/**"


def commit_state(root: Path, known: tuple[str | None, tuple[str, ...]] | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the tree at ``root`` by the rules above. ``known``: (the commit checked out, every path that
    differs from it) from a reading of the tree just taken (tracker.base.fingerprint.read_tree's ``state``: git status
    about everything but ``.tracker/`` and ``__pycache__/``, submodules' changes included, and the edits of files git
    was told not to look at): the answer comes from it, without a git call of its own. An assume-unchanged file
    edited is dirty here, where git status, and so the answer without ``known``, does not see it.

    Raises ValueError for a ``TRACKER_COMMIT`` that is not 40 lowercase hex digits, or a ``TRACKER_DIRTY``
    other than ``0``/``1`` where it is used: evidence recording it would be refused by every reader.
    """
    env_commit = _env_commit()
    if env_commit is None and known is not None:
        head, changed = known
        if head:
            return head, any(not _evidence(path) for path in changed)
        return env_commit, _env_dirty()
    if env_commit is None and (root / ".git").exists():
        # Both questions at once (the status is wasted only in a repository without a commit): one git call's
        # wait less at the start of every recording pytest session.
        head, status = _git_at_once(root, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], _STATUS)
        if head is not None and head.strip():
            return head.strip(), _dirty(status)
    return env_commit, _env_dirty()


# git status as the tree is, whatever the repository's configuration says to skip: a chmod is a change even where
# modes are ignored (core.fileMode); no file system monitor's word (core.fsmonitor: a hook may answer "nothing
# changed", round 25, F6); the inode change time counts and every stat field (core.trustctime, core.checkStat: a
# same-size edit with its modification time put back, F7); no cached list of untracked files. And git reads, never
# writes: without --no-optional-locks a status refreshes a stat-stale index in place, which takes .git/index.lock (a
# user's `git commit` at that moment fails) and changes the index's bytes under tracker.base.fingerprint's memo of its
# listing (CI, stop 40: a fresh clone's racily clean index was rewritten between two readings).
STATUS_AS_IS = (
    "--no-optional-locks",
    "-c",
    "core.fileMode=true",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.trustctime=true",
    "-c",
    "core.checkStat=default",
    "-c",
    "core.untrackedCache=false",
)

_STATUS = [
    *STATUS_AS_IS,
    "status",
    "--porcelain",
    "--untracked-files=normal",
    "--",
    ".",
    *(f":(exclude){path}" for path in EVIDENCE_PATHS),
    BYTECODE_EXCLUDE,
]


def _evidence(path: str) -> bool:
    """Is ``path`` (relative, as git status names it) under one of :data:`EVIDENCE_PATHS`?"""
    path = path.rstrip("/")
    return any(path == top or path.startswith(top + "/") for top in EVIDENCE_PATHS)


def tree_dirty(root: Path) -> bool | None:
    """Does the working tree at ``root`` differ from ``HEAD`` outside the evidence paths? None when git
    cannot tell (an unreadable repository): unknown, never "clean" by default."""
    return _dirty(_git(root, *_STATUS))


def _dirty(status: str | None) -> bool | None:
    return None if status is None else bool(status.strip())


def _env_commit() -> str | None:
    commit = os.environ.get("TRACKER_COMMIT") or None
    if commit is not None and not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"TRACKER_COMMIT: expected 40 lowercase hex digits, got {commit!r}")
    return commit


def _env_dirty() -> bool | None:
    dirty = os.environ.get("TRACKER_DIRTY") or None
    if dirty not in (None, "0", "1"):
        raise ValueError(f"TRACKER_DIRTY: expected '0' or '1' (or unset: unknown), got {dirty!r}")
    return None if dirty is None else dirty == "1"


def _git(root: Path, *args: str) -> str | None:
    """git's stdout, or None when git is missing or fails."""
    return _git_at_once(root, list(args))[0]


def _git_at_once(root: Path, *commands: list[str]) -> list[str | None]:
    """Each git command's stdout (None where git is missing or fails), the commands run side by side."""
    procs: list[subprocess.Popen[str] | None] = []
    try:
        for args in commands:
            try:
                procs.append(
                    subprocess.Popen(
                        ["git", *args],
                        cwd=root,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        text=True,
                        errors="surrogateescape",
                    )
                )
            except OSError:
                procs.append(None)
        out: list[str | None] = []
        for proc in procs:
            stdout = proc.communicate()[0] if proc is not None else None
            out.append(stdout if proc is not None and proc.returncode == 0 else None)
        return out
    finally:  # a Ctrl-C while waiting: no git process left behind unwaited
        for proc in procs:
            if proc is not None and proc.returncode is None:
                proc.kill()
                proc.wait()


def untracked(root: Path, paths: list[str]) -> dict[str, bool]:
    """Of ``paths`` (files relative to ``root``), those git does not track (not in its index: never added, or
    ignored), each mapped to whether git ignores it (then ``git add -f`` adds it). Empty outside a git repository
    and when git cannot tell (nothing is claimed then). One git call when every path is tracked (``tracker status``
    asks it each time), a second only for the others; each path is literal (no glob)."""
    wanted = sorted(set(paths))
    if not wanted or not (root / ".git").exists():
        return {}
    tracked = _ls_files(root, ["--cached"], wanted)
    if tracked is None:
        return {}
    missing = [p for p in wanted if p not in tracked]
    if not missing:
        return {}
    hidden = _ls_files(root, ["--others", "--ignored", "--exclude-standard"], missing)
    return {} if hidden is None else {p: p in hidden for p in missing}


def _ls_files(root: Path, options: list[str], paths: list[str]) -> set[str] | None:
    """The paths ``git ls-files OPTIONS -- PATHS`` lists (each literal), or None when git is missing or fails. Bytes,
    not text: text mode would read a ``\r`` in a name as a line end."""
    specs = [f":(literal){p}" for p in paths]
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=off", "ls-files", "-z", *options, "--", *specs],
            cwd=root,
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    return {raw.decode("utf-8", "surrogateescape") for raw in proc.stdout.split(b"\0") if raw}
