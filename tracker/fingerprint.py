"""File fingerprints (the shared contract) and fast glob matching of phases' ``paths``.

A file's id is its git blob id; a set of files fingerprints as sha256 over sorted
``path\\0blob\\n`` lines. The whole tree costs two subprocess calls (``git ls-files -s -z`` and
``git status --porcelain -z``) plus hashing only the files git reports changed. Standard library
only, and subprocess rather than gitpython because gitpython's import alone would cost ~150 ms of
``tracker status``'s budget.
"""

from __future__ import annotations

import bisect
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

from tracker.errors import FileError
from tracker.hashing import sha1_hex, sha256_hex

# Directories never fingerprinted when walking a tree without git.
SKIP_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", "build", "dist", ".tracker", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache", "node_modules"})


def blob_id(data: bytes) -> str:
    """Git's blob id of ``data`` (what ``git hash-object`` prints)."""
    return sha1_hex(b"blob %d\0" % len(data) + data)


def set_fingerprint(files: Mapping[str, str]) -> str:
    """Fingerprint of a set of files given as {posix path: blob id}."""
    text = "".join(f"{path}\0{blob}\n" for path, blob in sorted(files.items()))
    return sha256_hex(text.encode("utf-8"))


def _hash_file(path: Path) -> str | None:
    try:
        if path.is_symlink():  # git stores a link's target as its blob
            return blob_id(os.readlink(path).encode())
        return blob_id(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def walk_file_ids(root: Path) -> dict[str, str]:
    """Blob ids of every file under ``root`` except SKIP_DIRS (for trees without git)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in filenames:
            full = Path(dirpath, name)
            blob = _hash_file(full)
            if blob is not None:
                out[full.relative_to(root).as_posix()] = blob
    return out


def tree_file_ids(root: Path) -> dict[str, str]:
    """Blob ids of the working tree: git's index ids, re-hashed where git reports changes.

    Tracked, modified and untracked (not ignored) files; deleted files are left out; ``.tracker/``
    (the evidence store itself) is left out. Without a git repository, walks the tree.
    """
    if not (root / ".git").exists():
        return walk_file_ids(root)

    # Both git calls run at once: together they are most of this function's wall time.
    base = ["git", "-c", "core.quotepath=off"]
    listing = subprocess.Popen([*base, "ls-files", "-s", "-z"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    changes = subprocess.Popen(
        [*base, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    outputs: list[bytes] = []
    for proc, what in ((listing, "git ls-files"), (changes, "git status")):
        out, err = proc.communicate()
        if proc.returncode:
            raise FileError(f"{root}: `{what}` failed: {err.decode(errors='replace').strip()}")
        outputs.append(out)
    ids: dict[str, str] = {}
    for entry in outputs[0].split(b"\0"):
        if entry:
            meta, _, raw = entry.partition(b"\t")
            ids[raw.decode("utf-8", "surrogateescape")] = meta.split(b" ")[1].decode()
    for field in outputs[1].split(b"\0"):
        if len(field) > 3:
            path = field[3:].decode("utf-8", "surrogateescape")
            blob = _hash_file(root / path)
            if blob is None:
                ids.pop(path, None)
            else:
                ids[path] = blob
    return {p: b for p, b in ids.items() if not p.startswith(".tracker/")}


@lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a ``paths`` glob: ``*`` and ``?`` stay within a directory, ``**`` crosses them,
    ``[...]`` is a class; a pattern ending in ``/`` means everything below that directory."""
    if pattern.endswith("/"):
        pattern += "**"
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and "]" in pattern[i + 2 :]:
            j = pattern.index("]", i + 2)
            body = pattern[i + 1 : j]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def literal_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard: every match starts with it."""
    m = re.search(r"[*?\[]", pattern)
    return pattern if m is None else pattern[: m.start()]


class FileIndex:
    """A sorted file list answering glob queries by prefix range + regex, not filesystem walks."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = files
        self.paths = sorted(files)
        self._memo: dict[tuple[str, ...], dict[str, str]] = {}  # phases often share their globs

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
            # ``dir/**`` (or ``dir/``): everything below dir/, as glob_regex's ``.*`` (no newline) says.
            below = prefix.endswith("/") and pat[len(prefix) :] in ("", "**")
            rx = None if below else glob_regex(pat)
            for path in self.paths[start:]:
                if not path.startswith(prefix):
                    break
                if (rx.match(path) is not None) if rx is not None else ("\n" not in path[len(prefix) :]):
                    out[path] = self.files[path]
        return out

    def fingerprint(self, patterns: Iterable[str]) -> str:
        """Set fingerprint of the files ``patterns`` match."""
        return set_fingerprint(self.match(patterns))


def changed_files(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """Paths added, removed or modified between two {path: blob} maps, sorted."""
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
