"""The working tree's files as a sorted list answering phases' ``paths`` globs (:class:`FileIndex`): {path: id} of the
files they match, and the set fingerprint of those; and which paths differ between two such maps
(:func:`changed_files`). Standard library only.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Container, Iterable, Mapping

from tracker.base.contract import set_fingerprint
from tracker.base.globs import compile_glob, literal_prefix


class FileIndex:
    """A sorted file list answering glob queries by prefix range + :class:`Glob`, not filesystem walks."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = files
        self.paths = sorted(files)
        # (path, blob then, blob now) -> do the two differ only in comments? (tracker.store.same_code); None: every byte
        self.same_code: Callable[[str, str | None, str | None], bool] | None = None
        # rel -> the id now of a file the tree's ids leave out (one git ignores: tracker.base.fingerprint.id_now);
        # None: unknown
        self.id_now: Callable[[str], str | None] | None = None
        # a test gate's argument -> the files git ignores that pytest would read for it now
        # (tracker.base.ignored_inputs.IgnoredInputs)
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
