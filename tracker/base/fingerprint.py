"""The working tree's file ids: one reading of the tree (:func:`read_tree`), through git or, without git, a walk.

A file's id is its git blob id, its mode folded in where it is not a plain file (an executable, a link:
:func:`tracker.base.contract.file_id`); a set of files fingerprints as sha256 over sorted
``path\\0blob\\n`` lines (:func:`tracker.base.contract.set_fingerprint`). The whole tree costs two subprocess calls
(``git ls-files -s -v -z`` and ``git status --porcelain=v2 -z``) plus hashing only the files git reports changed and
those git was told not to watch (``update-index --assume-unchanged``/``--skip-worktree``: their edits are in neither
listing); a submodule's id is the commit it has out. Standard library only, and subprocess rather than gitpython
because gitpython's import alone would cost ~150 ms of ``tracker status``'s budget. Phases' ``paths`` globs over
these ids: :mod:`tracker.base.globs` and :mod:`tracker.base.file_index`; the ignored files a test gate's pytest would
read: :mod:`tracker.base.ignored_inputs`.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import NamedTuple

from tracker.base.contract import GITLINK_MODE, blob_id, file_id, link_id, mode_of
from tracker.base.dirty import BYTECODE_EXCLUDE, STATUS_AS_IS
from tracker.errors import FileError

TRACKER_DIR = ".tracker"  # the tracker's own files (evidence, caches): never part of a fingerprint
# Directories never fingerprinted when walking a tree without git.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "__pycache__",
        "build",
        "dist",
        ".tracker",
        ".pytest_cache",
        ".hypothesis",
        ".mypy_cache",
        ".ruff_cache",
        "node_modules",
    }
)


def read_in_place(path: Path) -> tuple[int, bytes | None]:
    """(``st_mode``, bytes) of the file at ``path``, opened never through a link and never blocking (a FIFO with no
    writer opens at once); the bytes only of a regular file, else None. OSError as ``os.open`` raises it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return mode, None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return mode, f.read()
    finally:
        os.close(fd)


def _hash_file(path: Path) -> str | None:
    """The blob id of the file at ``path`` as git would store it; None when there is none (gone, a directory).
    Never blocks and never follows a link: a FIFO, a socket or a device there (planted, or left by a tool) gets
    the id of :data:`NOT_REGULAR` and its kind, unlike any committed file's: the phases covering it go stale."""
    try:
        if path.is_symlink():  # git stores a link's target as its blob
            return link_id(path)
        mode, data = read_in_place(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as err:  # a link put there since (ELOOP), a FIFO with no writer on a system without O_NONBLOCK
        return blob_id(NOT_REGULAR + os.strerror(err.errno or 0).encode())
    if stat.S_ISDIR(mode):
        return None
    return (
        file_id(blob_id(data), mode_of(mode))
        if data is not None
        else blob_id(NOT_REGULAR + oct(stat.S_IFMT(mode)).encode())
    )


NOT_REGULAR = b"\0tracker: not a regular file: "


def id_now(root: Path, rel: str) -> str | None:
    """The id of file ``rel`` of ``root`` as it is now, as :func:`tree_file_ids` gives a file git does not list
    (one it ignores); None when there is none, or ``rel`` is no plain relative path under ``root``."""
    parts = rel.split("/")
    if not rel or "\0" in rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    try:
        return _hash_file(root.joinpath(*parts))
    except ValueError:  # a name the system cannot take
        return None


def walk_file_ids(root: Path) -> dict[str, str]:
    """Blob ids of every file under ``root`` except SKIP_DIRS (for trees without git). A symlink is a file, as git
    has it (its target's name, never what it leads to): also one to a directory, which ``os.walk`` lists among the
    directories (and does not enter)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in [*filenames, *links]:
            full = Path(dirpath, name)
            blob = _hash_file(full)
            if blob is not None:
                out[full.relative_to(root).as_posix()] = blob
    return out


# By a tree's realpath: its file ids and their (inode, ctime) (:func:`tree_file_ids`, :func:`file_stats`), read by a
# process just before it forks a pytest session there (tracker.commands.pytest_run, tracker.commands.standby), for the
# session's recorder to take as its first reading (tracker.pytest_plugin): git is not asked twice in a row (plan 0003,
# P5). Set only around the fork, so only the child finds it. Here, not in the plugin: the forking process must not
# import the plugin, which pytest, told ``-p tracker.pytest_plugin``, would find imported already and warn it cannot
# rewrite (issue 24).
# The third item: (commit checked out, paths git status reported) of the same reading, for the recorder's commit and
# dirty flag (tracker.base.dirty.commit_state's ``known``); None where the reading had no git.
# A reading as it is handed over: (file ids, their (inode, ctime), the third item above).
HandedReading = tuple[dict[str, str], dict[str, tuple[int, int]], tuple[str | None, tuple[str, ...]] | None]
HANDED_OVER: dict[str, HandedReading] = {}


def file_stats(root: Path, files: dict[str, str]) -> dict[str, tuple[int, int]]:
    """(inode, inode change time in ns) of each of the tree's ``files`` that can be read now (a write, a rename over
    it or a ``touch`` changes them; reading does not)."""
    out = {}
    base = os.fspath(root)
    for path in files:
        try:
            st = os.lstat(os.path.join(base, path))  # strings: a Path a file cost ~5 us, half the lstat's time
        except OSError:
            continue
        out[path] = (st.st_ino, st.st_ctime_ns)
    return out


def tree_file_ids(root: Path) -> dict[str, str]:
    """Blob ids of the working tree: git's index ids, re-hashed where git reports changes.

    Tracked, modified and untracked (not ignored) files but bytecode caches (``__pycache__/``, as
    :func:`walk_file_ids`); deleted files are left out; ``.tracker/``
    (the evidence store itself) is left out, and git is asked not to report changes under it: an untracked
    evidence file would be read and hashed only to be dropped (a thousand uncommitted runs cost half a
    second of every status). Without a git repository, walks the tree.
    """
    return read_tree(root).ids


class TreeReading(NamedTuple):
    """One reading of the working tree (:func:`read_tree`): the file ids (:func:`tree_file_ids`); every path git
    named doing so (tracked, deleted ones too, changed and untracked, a nested repository as ``NAME/``; empty without
    git); and, when asked for, the paths git ignores (a folder of them as ``FOLDER/``; None when not asked or git
    failed)."""

    ids: dict[str, str]
    named: list[str]
    ignored: list[str] | None
    # With ``commit`` asked for: (the commit checked out, as ``git rev-parse HEAD^{commit}`` peels it; None before the
    # first), and every path that differs from it: what git status reported (changed, staged, deleted, untracked) and
    # the files git was told not to look at (assume-unchanged, skip-worktree) whose bytes differ from the index's.
    # None when not asked for, or without git.
    state: tuple[str | None, tuple[str, ...]] | None = None


def read_tree(root: Path, ignored: bool = False, commit: bool = False) -> TreeReading:
    """The tree's ids (:func:`tree_file_ids`) and the paths git named reading them; ``ignored``: also what git
    ignores; ``commit``: also the commit checked out and what differs from it (:attr:`TreeReading.state`, what
    tracker.base.dirty answers a recorded run's commit and dirty flag from); each one more git call, side by side."""
    if not (root / ".git").exists():
        return TreeReading(walk_file_ids(root), [], None)

    # The git calls run at once: together they are most of this function's wall time.
    base = ["git", "-c", "core.quotepath=off"]
    outside = [
        "--",
        ".",
        f":(exclude){TRACKER_DIR}/",
        BYTECODE_EXCLUDE,  # as walk_file_ids skips __pycache__: running the tests changes no phase's files
    ]  # committed evidence is listed by neither: its count does not matter
    where = os.path.realpath(root)
    index = _index_bytes(root)
    known = _INDEX_LISTING.get(where)
    listing = (
        None
        if index is not None and known is not None and known[0] == index
        else subprocess.Popen(  # -v: the tag says which entries git was told not to look at (see below)
            [*base, "ls-files", "-s", "-v", "-z", *outside], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    )
    # core.fileMode=true: a chmod is a change even where the repository says to ignore modes (WSL, network file
    # systems): an executable's mode is part of its id (adversarial round 10)
    # --ignore-submodules=none: a submodule's changes count whatever .gitmodules or the configuration says
    status = [*_CHANGES_V2, *outside]
    changes = subprocess.Popen(
        [*base, *STATUS_AS_IS, *status], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    hidden = (
        subprocess.Popen(
            [*base, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        if ignored
        else None
    )
    peeled = (  # not the status header's branch.oid: a hand-written HEAD may name a tag object (adversarial, F4)
        subprocess.Popen(
            ["git", "rev-parse", "--verify", "-q", "HEAD^{commit}"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        if commit
        else None
    )
    outputs: list[bytes] = []
    try:
        for proc, what in ((listing, "git ls-files"), (changes, "git status")):
            if proc is None:  # the index is byte for byte the one listed before: so is its listing
                assert known is not None
                outputs.append(known[1])
                continue
            out, err = proc.communicate()
            if proc.returncode:
                raise FileError(f"{root}: `{what}` failed: {err.decode(errors='replace').strip()}")
            outputs.append(out)
        if listing is not None and index is not None and _index_bytes(root) == index:
            _INDEX_LISTING[where] = (index, outputs[0])  # the index did not change while git listed it
        ignored_paths = None
        if hidden is not None:
            out = hidden.communicate()[0]
            ignored_paths = [os.fsdecode(p) for p in out.split(b"\0") if p] if hidden.returncode == 0 else None
        head = None
        if peeled is not None:
            out = peeled.communicate()[0]
            head = out.decode(errors="replace").strip() or None if peeled.returncode == 0 else None
    finally:  # an error or a Ctrl-C above: no git process left behind unwaited
        for left in (listing, changes, hidden, peeled):
            if left is not None and left.returncode is None:
                left.kill()
                left.wait()
    ids: dict[str, str] = {}
    unwatched: list[str] = []
    gitlinks: set[str] = set()
    for entry in outputs[0].split(b"\0"):
        if entry:
            tag, _, rest = entry.partition(b" ")
            meta, _, raw = rest.partition(b"\t")
            path = raw.decode("utf-8", "surrogateescape")
            mode, oid = meta.decode().split(" ")[:2]
            ids[path] = file_id(oid, mode)  # an executable's or a link's mode is part of its id
            if mode == GITLINK_MODE:
                gitlinks.add(path)
            if tag.islower() or tag == b"S":  # assume-unchanged, skip-worktree: git status never reports an edit
                unwatched.append(path)
    changed = _status_paths(root, outputs[1])
    named = [*ids, *changed]
    differ = list(changed)
    for path in (*unwatched, *changed):  # unwatched: their bytes are read here, as any changed file's (absent: gone)
        indexed = ids.get(path)
        blob = _submodule_id(root / path) if path in gitlinks else _hash_file(root / path)
        if blob is None:
            ids.pop(path, None)
        else:
            ids[path] = blob
        if path in unwatched and blob != indexed:  # an edit git status was told not to see (adversarial, F2)
            differ.append(path)
    kept = {p: b for p, b in ids.items() if not p.startswith(f"{TRACKER_DIR}/")}
    state = (head, tuple(differ)) if commit else None
    return TreeReading(kept, named, ignored_paths, state)


# By a repository's realpath: its index file's bytes and what ``git ls-files -s -v -z`` (read_tree's pathspec)
# printed for it. That listing is a function of the index's bytes alone (the stage, mode, id, flags and path of each
# entry; no tag says anything about the working tree without -m, -d, -o or -f), so an index unchanged since lists
# the same: a verify reads the tree before its session, its session's recorder at the end (a forked child inherits
# this) and verify again to judge, and git lists the index once. Kept for this process (and its forked children)
# only, never on disk.
_INDEX_LISTING: dict[str, tuple[bytes, bytes]] = {}


def _index_bytes(root: Path) -> bytes | None:
    """The bytes of ``root``'s git index (compared whole: no digest, whose hashlib import alone costs more than the
    comparison), or None where it is not simply ``.git/index`` (a worktree's or a submodule's ``.git`` file, a link,
    ``GIT_DIR`` or ``GIT_INDEX_FILE`` and the like set) or cannot be read."""
    if any(name in os.environ for name in _GIT_PLACES):
        return None
    try:
        if not stat.S_ISDIR(os.lstat(root / ".git").st_mode):
            return None
        fd = os.open(root / ".git" / "index", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


# Where git may be told to find a repository or its index other than ``.git/index`` under the working tree.
_GIT_PLACES = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


def _status_paths(root: Path, out: bytes) -> list[str]:
    """The paths ``git status --porcelain=v2 -z`` reported: ``1``, ``u``, ``?`` (and ``2``, whose original path
    follows in a field of its own) entries, each with its path after a fixed number of fields; ``#`` headers skipped."""
    paths: list[str] = []
    fields = iter(out.split(b"\0"))
    for field in fields:
        if not field:
            continue
        kind = field[:2]
        if kind == b"# ":
            continue
        cut = {b"1 ": 8, b"2 ": 9, b"u ": 10, b"? ": 1, b"! ": 1}.get(kind)
        parts = field.split(b" ", cut) if cut is not None else []
        if cut is None or len(parts) != cut + 1 or not parts[cut]:
            raise FileError(f"{root}: `git status` printed a line this tracker cannot read: {field[:80]!r}")
        paths.append(parts[cut].decode("utf-8", "surrogateescape"))
        if kind == b"2 ":
            next(fields, None)  # the path it was renamed from
    return paths


# What changed in a working tree, as tree_file_ids and _submodule_id read it (paths after it).
_CHANGES = ("status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=none")
# The same in porcelain v2 (one shape of line per kind of entry, each path after a fixed number of fields).
_CHANGES_V2 = (
    "status",
    "--porcelain=v2",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=none",
)


def _submodule_id(path: Path, depth: int = 0) -> str | None:
    """The id of submodule ``path`` as checked out: the commit it has out (as git records a submodule), or, with
    changes in it, an id of that commit, its status and each changed file's id; None when it is not checked out.
    git status reports a submodule at another commit or with changes; reading it as a file dropped it from the
    fingerprint, so a further change to it staled nothing (adversarial round 10)."""
    if not path.is_dir():
        return _hash_file(path)
    git = ["git", "-C", str(path), "-c", "core.quotepath=off", *STATUS_AS_IS]
    head = subprocess.run([*git, "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, check=False)
    if head.returncode or not (path / ".git").exists():
        return None if not any(path.iterdir()) else blob_id(NOT_REGULAR + b"submodule without a commit")
    commit = head.stdout.decode().strip()
    status = subprocess.run([*git, *_CHANGES], capture_output=True, check=False)
    if status.returncode:
        return blob_id(NOT_REGULAR + b"submodule git status failed")
    if not status.stdout:
        return file_id(commit, GITLINK_MODE)
    parts = [b"\0tracker: a submodule with changes: ", commit.encode(), b"\0", status.stdout]
    for field in status.stdout.split(b"\0"):
        if len(field) > 3:
            inner = path / os.fsdecode(field[3:])
            found = _submodule_id(inner, depth + 1) if inner.is_dir() and depth < 8 else _hash_file(inner)
            parts += [field[3:], b"\0", (found or "-").encode(), b"\n"]
    return blob_id(b"".join(parts))
