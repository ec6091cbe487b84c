"""``os.path.realpath`` of many paths at once, each folder resolved once.

Standard library only: the pytest plugin's end-of-session module scans and verify's shadow check use it.
"""

from __future__ import annotations

import os


class RealPaths:
    """``os.path.realpath`` of many files, each folder resolved once: a folder's realpath joined with the file's name,
    unless the name is itself a link (then resolved whole). The recorder resolves every imported module's file three
    times at a session's end (hundreds of them, each one ``lstat`` per path component): ~20 ms of the ~50 that
    recording added to a session of 100 tests (bench/plan_tracker/verify_overhead.py --breakdown); verify's shadow check
    (tracker.commands.forkable.shadowed) resolves every loaded module's before it forks."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}
        self._files: dict[str, str] = {}

    def __call__(self, file: str) -> str:
        real = self._files.get(file)
        if real is None:
            real = self._files[file] = self._resolve(file)
        return real

    def _resolve(self, file: str) -> str:
        head, name = os.path.split(file)
        if name in ("", ".", ".."):
            return os.path.realpath(file)
        folder = self._folders.get(head)
        if folder is None:
            folder = self._folders[head] = os.path.realpath(head)
        path = os.path.join(folder, name)
        return os.path.realpath(path) if os.path.islink(path) else path
