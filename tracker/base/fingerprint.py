"""File fingerprints (the shared contract) and linear-time glob matching of phases' ``paths``.

A file's id is its git blob id, its mode folded in where it is not a plain file (an executable, a link:
:func:`tracker.base.contract.file_id`); a set of files fingerprints as sha256 over sorted
``path\\0blob\\n`` lines. The whole tree costs two subprocess calls (``git ls-files -s -v -z`` and
``git status --porcelain -z``) plus hashing only the files git reports changed and those git was told not to
watch (``update-index --assume-unchanged``/``--skip-worktree``: their edits are in neither listing). Standard library
only, and subprocess rather than gitpython because gitpython's import alone would cost ~150 ms of
``tracker status``'s budget.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
import subprocess
from collections.abc import Callable, Container, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from tracker.base.contract import GITLINK_MODE, blob_id, file_id, link_id, mode_of, set_fingerprint
from tracker.base.dirty import BYTECODE_EXCLUDE, STATUS_AS_IS
from tracker.base.selection import INI_NAMES, config_paths, normalize_arg
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


MAX_WALKED = 2000  # entries of an ignored folder looked at for a file pytest reads, at most
NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")  # pytest's default


# By configuration file pytest reads (tracker.base.selection.INI_NAMES): the tables of its settings there, and whether
# the file is pytest's even without one (then its settings are the defaults).
_PYTEST_TABLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "pytest.toml": (("pytest",), True),
    ".pytest.toml": (("pytest",), True),
    "pytest.ini": (("pytest",), True),
    ".pytest.ini": (("pytest",), True),
    "pyproject.toml": (("tool.pytest.ini_options", "tool.pytest"), False),
    "tox.ini": (("pytest",), False),
    "setup.cfg": (("tool:pytest",), False),
}


def norecursedirs(root: Path) -> tuple[str, ...]:
    """The folder patterns pytest does not collect in, as the repository's root configuration file says (the first of
    pytest's order that is one: ``pytest.toml``, ``.pytest.toml``, ``pytest.ini`` and ``.pytest.ini`` even without a
    pytest section, ``pyproject.toml`` with ``[tool.pytest.ini_options]`` or pytest 9's ``[tool.pytest]``, ``tox.ini``
    with ``[pytest]``, ``setup.cfg`` with ``[tool:pytest]``), else pytest's default; ``__pycache__`` always."""
    import configparser
    import tomllib

    found: object = None
    for name in INI_NAMES:  # pytest's order
        keys, always = _PYTEST_TABLES[name]
        path = root / name
        try:
            if not path.is_file():
                continue
            tables: list[dict[str, object]] = []
            if name.endswith(".toml"):
                doc: object = tomllib.loads(path.read_text(encoding="utf-8"))
                for dotted in keys:
                    table = doc
                    for key in dotted.split("."):
                        table = table.get(key) if isinstance(table, dict) else None
                    if isinstance(table, dict):
                        tables.append(table)
            else:
                parser = configparser.ConfigParser(interpolation=None)
                parser.read_string(path.read_text(encoding="utf-8"))
                tables = [dict(parser.items(k)) for k in keys if parser.has_section(k)]
        except (OSError, ValueError, configparser.Error):
            return ()  # unreadable: pytest may look anywhere
        if not tables and not always:
            continue
        found = next((t["norecursedirs"] for t in tables if "norecursedirs" in t), None)
        break
    if isinstance(found, str):
        patterns: tuple[str, ...] = tuple(found.split())
    elif isinstance(found, list):
        patterns = tuple(str(p) for p in found)
    else:
        patterns = NORECURSE
    return (*patterns, "__pycache__")


def _pytest_reads(name: str) -> bool:
    """Does pytest collect a file so named under a folder it collects, by its defaults: a conftest.py or a test
    module (``python_files``: test_*.py, *_test.py)? Not a package's ``__init__.py`` there, nor a ``test*.txt`` (a
    test's own output as often as a doctest): a run records neither, so one git ignores would stale the gate for good
    (round 22)."""
    return name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))


class IgnoredInputs:
    """The files git ignores that pytest would read for a test gate now (rounds 20 and 21, N4): a ``conftest.py``,
    ini file or package ``__init__.py`` on the way to its path, and under a folder gate a file pytest reads by its
    defaults (:func:`_pytest_reads`), also inside an ignored folder or a link to one (walked up to :data:`MAX_WALKED`
    entries). A run that read
    such a conftest, ini or test file counts no passes (:func:`tracker.pytest_plugin.unrecorded_configuration`, a test
    file git ignores), and a module it imported is recorded with its id (``provenance.ignored_modules``, left out by
    the callers), so one there now came after the run that met the gate: a conftest with an autouse fixture that
    raises, an ini's ``filterwarnings = error``, a new failing test. No id of the tree names them. Not looked for:
    files a custom ``python_files`` or ``--doctest-glob`` names, doctest files, data files, the root's
    ``__init__.py``, and folders the root ini's ``norecursedirs`` (else pytest's default) or a virtual environment's
    ``pyvenv.cfg`` rule out: an ini elsewhere, or pytest's native ``[tool.pytest]`` table, is not read. One ``git
    ls-files --ignored --directory`` call for all gates, on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._listing: list[str] | None = None
        self._skip: tuple[str, ...] | None = None
        self._answers: dict[str, list[str]] = {}  # by test gate argument: phases share them, status asks per source

    def _skipped(self, parts: list[str]) -> bool:
        """Is a folder of these path parts one pytest does not collect in (its ``norecursedirs``)?"""
        import fnmatch

        if self._skip is None:
            self._skip = norecursedirs(self.root)
        return any(fnmatch.fnmatch(p, pattern) for p in parts for pattern in self._skip)

    def listing(self) -> list[str]:
        """The ignored files and folders (``dir/``) git lists, ``.tracker/`` and bytecode caches left out."""
        if self._listing is None:
            cmd = ["git", "-c", "core.quotepath=off", "ls-files", "--others", "--ignored", "--exclude-standard"]
            cmd += ["--directory", "-z", "--", ".", f":(exclude){TRACKER_DIR}/", BYTECODE_EXCLUDE]
            proc = subprocess.run(cmd, cwd=self.root, capture_output=True, check=False)
            names = proc.stdout.decode("utf-8", "surrogateescape").split("\0") if proc.returncode == 0 else []
            self._listing = [n for n in names if n]
        return self._listing

    def __call__(self, test: str) -> list[str]:
        if test not in self._answers:
            self._answers[test] = self._inputs(test)
        return self._answers[test]

    def _inputs(self, test: str) -> list[str]:
        path = normalize_arg(test).split("::", 1)[0].rstrip("/")
        path = "" if path in ("", ".") else path
        parts = path.split("/") if path else []
        on_the_way = {p for p in config_paths(test) if "*" not in p}
        on_the_way |= {"/".join([*parts[:d], "__init__.py"]) for d in range(1, len(parts) + 1)}
        folder = (self.root / path).is_dir() if path else True
        out = []
        for entry in self.listing():
            name = entry.rstrip("/")
            if name in on_the_way:
                out.append(name)
            elif folder and (not path or entry.startswith(path + "/")):
                full = self.root / name
                folders = name.split("/")[len(parts) :]
                if entry.endswith("/") or full.is_dir():  # a folder, or a link to one (git lists it as a file)
                    if self._skipped(folders):
                        continue
                    if self._holds_inputs(full):
                        out.append(name)
                elif self._skipped(folders[:-1]):
                    continue
                elif _pytest_reads(name.rsplit("/", 1)[-1]):
                    out.append(name)
        return out

    def _holds_inputs(self, folder: Path) -> bool:
        if (folder / "pyvenv.cfg").exists():
            return False  # a virtual environment: its libraries, never collected as tests
        seen = 0
        for _dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
            dirnames[:] = [d for d in dirnames if not self._skipped([d])]
            seen += len(dirnames) + len(filenames)
            if any(_pytest_reads(f) for f in filenames):
                return True
            if seen > MAX_WALKED:
                return False  # an ignored data folder (or a loop of links): past the bound, not looked through
        return False


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
HANDED_OVER: dict[
    str, tuple[dict[str, str], dict[str, tuple[int, int]], tuple[str | None, tuple[str, ...]] | None]
] = {}


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


# --- ``paths`` globs -------------------------------------------------------------------------------------
#
# Matching simulates the glob's automaton over the path with one integer as the set of live states (bit k:
# "the first k pattern positions matched"), so it costs O(len(path) * len(pattern) / 64) whatever the
# pattern: no backtracking, unlike a regex with several ``[^/]*`` (``*a*a*a*...b`` took minutes that way).

_LIT, _ANY, _CLASS, _STAR, _DSTAR, _DSTAR_SLASH = "lit", "any", "class", "*", "**", "**/"
# Runs of wildcards that can match the empty string, merged into one that matches the same strings, so the
# automaton's empty moves stay short: e.g. ``[^/]*`` then ``.*`` is ``.*``; ``(|.*/)`` then ``[^/]*`` is ``.*``.
_MERGE = {
    (_STAR, _STAR): _STAR,
    (_STAR, _DSTAR): _DSTAR,
    (_DSTAR, _STAR): _DSTAR,
    (_DSTAR, _DSTAR): _DSTAR,
    (_DSTAR, _DSTAR_SLASH): _DSTAR,
    (_DSTAR_SLASH, _DSTAR): _DSTAR,
    (_DSTAR_SLASH, _DSTAR_SLASH): _DSTAR_SLASH,
    (_DSTAR_SLASH, _STAR): _DSTAR,
}


class _Class:
    """A ``[...]`` class: one character (never ``/``) in ``chars`` or a range, or not in them with ``!``/``^``."""

    def __init__(self, negated: bool, chars: frozenset[str], ranges: tuple[tuple[str, str], ...]) -> None:
        self.negated, self.chars, self.ranges = negated, chars, ranges

    def matches(self, ch: str) -> bool:
        inside = ch in self.chars or any(lo <= ch <= hi for lo, hi in self.ranges)
        return ch != "/" and inside is not self.negated


def _class_at(pattern: str, i: int) -> tuple[_Class, int, str | None] | None:
    """The class starting at ``pattern[i] == "["``: (class, index after it, problem or None); None when no
    ``]`` closes it (the ``[`` is then a literal). A ``]`` right after ``[`` or ``[!`` is a member."""
    j = i + 1
    negated = pattern[j : j + 1] in ("!", "^")
    j += negated
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    problem = None
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            if "/" in chars or any(lo <= "/" <= hi for lo, hi in ranges):
                problem = (
                    f"a [...] class cannot match '/' (in {pattern[i : j + 1]!r}): '*', '?' and classes stay "
                    "inside one directory"
                )
            return _Class(negated, frozenset(chars), tuple(ranges)), j + 1, problem
        first = False
        if pattern[j + 1 : j + 2] == "-" and j + 2 < len(pattern) and pattern[j + 2] != "]":
            lo, hi = c, pattern[j + 2]
            if lo > hi:
                problem = problem or f"bad range {lo}-{hi} in a [...] class (it matches nothing)"
            ranges.append((lo, hi))
            j += 3
        else:
            chars.add(c)
            j += 1
    return None


def _glob_tokens(pattern: str) -> tuple[list[tuple[str, object]], list[str]]:
    """(tokens, problems): ``**/``, ``**``, ``*``, ``?``, classes and literal characters."""
    if pattern.endswith("/"):
        pattern += "**"
    tokens: list[tuple[str, object]] = []
    problems: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            tok: tuple[str, object] = (_DSTAR_SLASH, None)
            i += 3
        elif pattern.startswith("**", i):
            tok, i = (_DSTAR, None), i + 2
        elif c == "*":
            tok, i = (_STAR, None), i + 1
        elif c == "?":
            tok, i = (_ANY, None), i + 1
        elif c == "[" and (found := _class_at(pattern, i)) is not None:
            cls, i, problem = found
            tok = (_CLASS, cls)
            if problem:
                problems.append(problem)
        else:
            if c == "[":
                problems.append(f"unterminated [ at column {i + 1} (write [[] for a literal '[')")
            tok, i = (_LIT, c), i + 1
        while tokens and (merged := _MERGE.get((tokens[-1][0], tok[0]))) is not None:
            tokens.pop()
            tok = (merged, None)
        tokens.append(tok)
    return tokens, problems


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid ``paths`` glob, or None: plan validation reports it at its line.

    A glob is relative to the repository root and stays inside it (no leading ``/``, no ``.`` or ``..``
    segment, no empty segment), holds no control character, and its ``[...]`` classes are closed, have
    valid ranges and cannot match ``/``.
    """
    if not pattern:
        return "empty glob"
    if pattern.startswith("/"):
        return f"glob {pattern!r} is absolute: globs are relative to the repository root"
    bad = next((ch for ch in pattern if ord(ch) < 32 or ord(ch) == 127), None)
    if bad is not None:
        return f"glob {pattern!r} holds a control character ({bad!r})"
    segments = (pattern[:-1] if pattern.endswith("/") else pattern).split("/")
    if any(s in (".", "..") for s in segments):
        return (
            f"glob {pattern!r} has a '.' or '..' segment: globs are relative to the repository root and stay inside it"
        )
    if "" in segments:
        return f"glob {pattern!r} has an empty path segment ('//')"
    problems = _glob_tokens(pattern)[1]
    return f"glob {pattern!r}: {problems[0]}" if problems else None


class Glob:
    """A compiled ``paths`` glob: ``match(path)`` in time linear in the path (see the section comment).

    ``*`` and ``?`` match within one directory (not ``/``), ``**`` matches anything (``/`` included),
    ``**/`` matches nothing or anything ending in ``/``, ``[...]`` one character (never ``/``), a trailing
    ``/`` means everything below. Patterns that validation refuses still compile (an unterminated ``[``
    is literal, a bad range matches nothing): matching never raises.
    """

    _MEMO_LIMIT = 4096  # per-character masks kept per glob (paths use few distinct characters)

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._lits: dict[str, int] = {}  # character -> positions where the pattern has that literal
        self._any = 0  # positions of ``?``
        self._classes: list[tuple[int, _Class]] = []
        self._loop_any = 0  # states that ``**`` keeps alive on any character
        self._loop_dir = 0  # states that ``*`` keeps alive on any character but ``/``
        self._empty1 = 0  # positions that can match nothing (``*``, ``**``): k -> k + 1
        self._empty2 = 0  # ``**/`` groups, which can match nothing: k -> k + 2
        k = 0
        for kind, arg in _glob_tokens(pattern)[0]:
            bit = 1 << k
            if kind == _LIT:
                assert isinstance(arg, str)  # a literal token's argument is its character
                self._lits[arg] = self._lits.get(arg, 0) | bit
            elif kind == _ANY:
                self._any |= bit
            elif kind == _CLASS:
                self._classes.append((bit, arg))  # type: ignore[arg-type]
            elif kind == _STAR:
                self._loop_dir |= bit << 1
                self._empty1 |= bit
            else:  # ``**`` is position k; ``**/`` is ``**`` at k, then a literal ``/`` at k + 1, or nothing
                self._loop_any |= bit << 1
                self._empty1 |= bit
                if kind == _DSTAR_SLASH:
                    self._empty2 |= bit
                    self._lits["/"] = self._lits.get("/", 0) | bit << 1
                    k += 1
            k += 1
        self._final = 1 << k
        self._memo: dict[str, tuple[int, int]] = {}

    def _masks(self, ch: str) -> tuple[int, int]:
        """(positions that consume ``ch`` and advance, states that stay alive on ``ch``)."""
        hit = self._memo.get(ch)
        if hit is not None:
            return hit
        advance = self._lits.get(ch, 0)
        if ch != "/":
            advance |= self._any
        for bit, cls in self._classes:
            if cls.matches(ch):
                advance |= bit
        masks = (advance, self._loop_any | (self._loop_dir if ch != "/" else 0))
        if len(self._memo) < self._MEMO_LIMIT:
            self._memo[ch] = masks
        return masks

    def _closure(self, states: int) -> int:
        """``states`` plus every state reachable by matching nothing (short: runs of wildcards are merged)."""
        while True:
            more = states | ((states & self._empty1) << 1) | ((states & self._empty2) << 2)
            if more == states:
                return states
            states = more

    def match(self, path: str) -> bool:
        """Does the whole of ``path`` match?"""
        empty = self._empty1 | self._empty2
        states = self._closure(1)
        for ch in path:
            advance, stay = self._masks(ch)
            states = ((states & advance) << 1) | (states & stay)
            if not states:
                return False
            if states & empty:
                states = self._closure(states)
        return bool(states & self._final)


@lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> Glob:
    """The compiled glob (cached: phases share their patterns)."""
    return Glob(pattern)


_WILDCARD = re.compile(r"[*?\[]")


def literal_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard: every match starts with it."""
    m = _WILDCARD.search(pattern)
    return pattern if m is None else pattern[: m.start()]


class FileIndex:
    """A sorted file list answering glob queries by prefix range + :class:`Glob`, not filesystem walks."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = files
        self.paths = sorted(files)
        # (path, blob then, blob now) -> do the two differ only in comments? (tracker.store.same_code); None: every byte
        self.same_code: Callable[[str, str | None, str | None], bool] | None = None
        # rel -> the id now of a file the tree's ids leave out (one git ignores: :func:`id_now`); None: unknown
        self.id_now: Callable[[str], str | None] | None = None
        # a test gate's argument -> the files git ignores that pytest would read for it now (IgnoredInputs)
        self.ignored_inputs: Callable[[str], list[str]] | None = None
        self._memo: dict[tuple[str, ...], dict[str, str]] = {}  # phases often share their globs

    def unrecorded_inputs(self, test: str, recorded: Container[str]) -> list[str]:
        """The files git ignores that pytest would read now for the test gate ``test`` (:attr:`ignored_inputs`) and
        that its run did not record (``recorded``: the modules git ignores it imported, ``provenance.ignored_modules``):
        new since the run that met it (round 20, N4). None looked for where the index cannot tell."""
        if self.ignored_inputs is None:
            return []
        return [p for p in self.ignored_inputs(test) if p not in recorded]

    def match(self, patterns: Iterable[str]) -> dict[str, str]:
        """{path: blob} of the files any of ``patterns`` matches (do not mutate the result)."""
        key = tuple(patterns)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._match(key)
        return hit

    def _match(self, patterns: tuple[str, ...]) -> dict[str, str]:
        out: dict[str, str] = {}
        for pat in patterns:
            prefix = literal_prefix(pat)
            if prefix == pat and not pat.endswith("/"):  # a plain path: compiling a regex costs more
                if pat in self.files:
                    out[pat] = self.files[pat]
                continue
            start = bisect.bisect_left(self.paths, prefix)
            # ``dir/**`` (or ``dir/``): everything below dir/, no matching needed.
            below = prefix.endswith("/") and pat[len(prefix) :] in ("", "**")
            glob = None if below else compile_glob(pat)
            for path in self.paths[start:]:
                if not path.startswith(prefix):
                    break
                if glob is None or glob.match(path):
                    out[path] = self.files[path]
        return out

    def fingerprint(self, patterns: Iterable[str]) -> str:
        """Set fingerprint of the files ``patterns`` match."""
        return set_fingerprint(self.match(patterns))


def changed_files(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """Paths added, removed or modified between two {path: blob} maps, sorted."""
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
