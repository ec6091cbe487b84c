"""Where a test gate's pytest argument points on disk, and the one rule ``lint``, ``status`` and ``verify`` share
about it: a test path that leaves the repository through a symlink is not the repository's test.

Plan validation already refuses a test path that leaves the repository as written (absolute, ``~``, ``..``). A
symlink can still take it out: pytest would then import and run the outside file, fingerprints would record the
link (its target's name) and never the outside file's content, so editing it would never make the phase stale.
``lint`` lists such a gate as a problem, ``verify`` refuses to run it (exit 2, ``path:line``) and ``status`` shows
the gate unmet with the same words, whatever evidence says.

A gate whose own path stays inside can still collect a test file that leaves (``tests/`` holding ``test_x.py ->
/elsewhere/test_x.py`` or ``sub -> /elsewhere/``), or load a ``conftest.py`` that does (its code decides outcomes):
:class:`TestFileCheck` says so for a test's file, and the pytest plugin records its answers for the tests a run
collected (``provenance.outside``), so that such a test's pass meets no gate (:mod:`tracker.core.testgate`) and ``lint``
names it at the gate's line.

Standard library only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def gate_path(test: str) -> str:
    """The file or directory part of a test gate's pytest argument (``tests/x.py::test_a`` -> ``tests/x.py``,
    ``tests/`` -> ``tests``, ``""`` -> ``.``)."""
    return test.split("::", 1)[0].rstrip("/") or "."


def leaves_repository(root: Path, path: str) -> str | None:
    """Why ``path`` (relative to ``root``) is not the repository's: ``test path 'x' resolves to REAL, outside the
    repository`` when its real path (symlinks followed) lies outside ``root``; None when it is inside or does not
    exist. OSError/RuntimeError (a symlink loop) propagate: lint says it cannot look at the path."""
    target = root / path
    if not target.exists():
        return None
    real = target.resolve()
    if real.is_relative_to(root.resolve()):
        return None
    return f"test path {path!r} resolves to {real}, outside the repository"


class OutsideCheck:
    """:func:`leaves_repository` for many gates of one repository, answered from one ``lstat`` per path component
    (remembered): only a path with a symlink in it is resolved. Called with a gate's ``test``; a path that cannot be
    looked at is not called outside (lint reports it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._links: dict[str, bool] = {}  # path component prefix -> is a symlink (missing: False)
        self._answers: dict[str, str | None] = {}

    def _is_link(self, prefix: str) -> bool:
        found = self._links.get(prefix)
        if found is None:
            try:
                found = stat.S_ISLNK(os.lstat(self.root / prefix).st_mode)
            except (OSError, ValueError):
                found = False
            self._links[prefix] = found
        return found

    def __call__(self, test: str) -> str | None:
        path = gate_path(test)
        if path in self._answers:
            return self._answers[path]
        parts = path.split("/")
        answer = None
        if any(self._is_link("/".join(parts[: i + 1])) for i in range(len(parts))):
            try:
                answer = leaves_repository(self.root, path)
            except (OSError, RuntimeError, ValueError):
                answer = None
        self._answers[path] = answer
        return answer


class MissingCheck:
    """Why a test gate is unmet on the tree now because its file or directory does not exist there (deleted after
    its run passed: old evidence of it must not meet it): ``no such test file or directory: PATH (tracker lint)``,
    lint's words; None when it exists or cannot be looked at (lint reports that). Called with a gate's ``test``;
    answers remembered per path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._answers: dict[str, str | None] = {}

    def __call__(self, test: str) -> str | None:
        path = gate_path(test)
        if path not in self._answers:
            try:
                gone = not os.path.lexists(self.root / path)  # a link (a loop too) is there: lint judges it
            except (OSError, RuntimeError, ValueError):
                gone = False
            self._answers[path] = f"no such test file or directory: {path} (tracker lint)" if gone else None
        return self._answers[path]


class TestFileCheck:
    """Why a collected test's file (its node id's file part, relative to ``root``) is not the repository's, or None:
    the file, or a ``conftest.py`` of its directory or of one above it up to ``root`` (pytest loads those, and their
    code decides outcomes), resolves outside ``root`` (``tests/ext/test_x.py resolves to /elsewhere/test_x.py,
    outside the repository``). Answers are remembered per file and per directory; a path that cannot be looked at
    (or a link loop) is not called outside. Never raises."""

    __test__ = False

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self._real_root: str | None = str(root.resolve())
        except (OSError, RuntimeError, ValueError):
            self._real_root = None
        self._files: dict[str, str | None] = {}
        self._dirs: dict[str, str | None] = {}
        self._folders: dict[str, str] = {}

    def _leaves(self, path: str) -> str | None:
        """``path 'resolves to REAL, outside the repository'`` when ``path`` exists and its real path lies outside.
        A path whose last part is no symlink is its folder's real path (resolved once per folder) and its name: one
        ``lstat`` a file (resolving each of 5,000 test files cost verify ~0.25 s)."""
        if self._real_root is None:
            return None
        try:
            target = os.path.join(self.root, path)
            folder, _, name = path.rpartition("/")
            if ".." in path.split("/") or path.startswith("/") or stat.S_ISLNK(os.lstat(target).st_mode):
                if not os.path.exists(target):
                    return None
                real = os.path.realpath(target)
            else:
                real = os.path.join(self._real_folder(folder), name)
        except (OSError, RuntimeError, ValueError):
            return None
        if real == self._real_root or real.startswith(self._real_root.rstrip(os.sep) + os.sep):
            return None
        return f"{path} resolves to {real}, outside the repository"

    def _real_folder(self, folder: str) -> str:
        """The real path of ``folder`` (relative to the root), remembered."""
        found = self._folders.get(folder)
        if found is None:
            found = self._folders[folder] = str((self.root / folder).resolve(strict=True))
        return found

    def _conftests(self, folder: str) -> str | None:
        """Why a ``conftest.py`` of ``folder`` ("" for the root) or of a folder above it leaves the repository."""
        if folder in self._dirs:
            return self._dirs[folder]
        answer = self._leaves(f"{folder}/conftest.py" if folder else "conftest.py")
        if answer is None and folder:
            answer = self._conftests(folder.rpartition("/")[0])
        self._dirs[folder] = answer
        return answer

    def __call__(self, file: str) -> str | None:
        if file in self._files:
            return self._files[file]
        parts = [p for p in file.split("/") if p not in ("", ".")]
        answer = self._leaves(file) if parts else None
        if answer is None and parts and ".." not in parts and not file.startswith("/"):
            answer = self._conftests("/".join(parts[:-1]))
        self._files[file] = answer
        return answer
