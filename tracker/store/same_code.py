"""Do two versions of a file differ only in what no tool reads (issue 31: comments change nothing)?

:class:`SameCode` answers for a path, the blob id its evidence recorded and the blob id it has now: it reads the old
bytes from git's object database (one ``git cat-file --batch`` process for the command, started on the first
question) and the new ones from there or from the working tree (checked against the id), and compares their
:func:`tracker.base.code_tokens.code_key`. No key (a language not known, a file that does not tokenize), bytes git no
longer has (evidence recorded on an uncommitted edit, pruned since), a file that is not regular: not the same. The
answers are kept in the cache ``code-same`` (:mod:`tracker.base.cache`), keyed by the two blob ids and the tokenizer's
own source, so each pair is tokenized once.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import IO, Any

from tracker.base.cache import Cache, cache_key, code_identity
from tracker.base.code_tokens import code_key, language
from tracker.base.contract import blob_id
from tracker.base.fingerprint import read_in_place
from tracker.base.hashing import sha256_hex

CACHE = "code-same"
MAX_ANSWERS = 20_000  # beyond this many pairs the cache starts afresh


class SameCode:
    """``same(path, old_blob, new_blob)``: True when the two versions of ``path`` have the same code."""

    def __init__(self, root: Path, cache: Cache | None = None) -> None:
        self.root = root
        self.cache = cache
        self._key = ""
        self._known: dict[str, bool] | None = None  # the cache's answers, read at the first question (_answers)
        self._proc: subprocess.Popen[bytes] | None = None
        self._dirty = False

    @property
    def _answers(self) -> dict[str, bool]:
        """The answers so far: the cache's, read once, at the first question (a command that asks none, such as
        ``verify --force`` on an unchanged tree, pays nothing for them)."""
        if self._known is None:
            self._key = cache_key(CACHE, code_identity())
            known = self.cache.read(CACHE, self._key) if self.cache is not None else None
            self._known = {k: v for k, v in known.items() if isinstance(v, bool)} if isinstance(known, dict) else {}
        return self._known

    def __call__(self, path: str, old: str | None, new: str | None) -> bool:
        if old is None or new is None:
            return False  # added or gone: a change whatever it holds
        if old == new:
            return True
        kind = language(path)
        if kind is None or os.path.islink(self.root / path):
            return False  # read byte for byte; a link's bytes are the name of what it points to
        key = f"{old}:{new}:{kind}"  # the answer for this pair read as this language
        hit = self._answers.get(key)
        if hit is None:
            hit = self._answers[key] = self._compare(path, old, new)
            self._dirty = True
        return hit

    def _compare(self, path: str, old: str, new: str) -> bool:
        then = self._blob(old)
        now = self._blob(new)
        if now is None:
            now = _working_bytes(self.root / path, new)
        if then is None or now is None:
            return False
        a = code_key(path, then)
        return a is not None and a == code_key(path, now)

    def _blob(self, blob: str) -> bytes | None:
        """The bytes of ``blob`` from git's object database, or None when it has none (or git cannot say)."""
        if not all(c in "0123456789abcdef" for c in blob) or len(blob) not in (40, 64):
            return None
        try:
            if self._proc is None:
                self._proc = subprocess.Popen(
                    ["git", "cat-file", "--batch"],
                    cwd=self.root,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            stdin, stdout = self._proc.stdin, self._proc.stdout
            assert stdin is not None and stdout is not None
            stdin.write(blob.encode() + b"\n")
            stdin.flush()
            head = stdout.readline().split()
            if len(head) != 3 or head[1] != b"blob":
                return None
            data = _read_exactly(stdout, int(head[2]))
            stdout.read(1)  # the newline after the contents
            # The bytes must be the blob's own: a `git replace` ref makes cat-file answer another object's.
            own = blob_id(data) if len(blob) == 40 else sha256_hex(b"blob %d\0" % len(data) + data)
            return data if own == blob else None
        except (OSError, ValueError, AssertionError):
            self.close()
            return None

    def keep(self) -> None:
        """Hand the answers to the command's cache (written at its end) and stop git."""
        if self.cache is not None and self._dirty:
            answers = self._answers if len(self._answers) <= MAX_ANSWERS else {}
            self.cache.put(CACHE, self._key, answers)
            self._dirty = False
        self.close()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:  # git ended first (not a repository): nothing left to flush to
                        pass
            proc.wait()

    def __del__(self) -> None:  # pragma: no cover - the process ends its git child with it anyway
        try:
            self.close()
        except Exception:
            pass


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            raise ValueError("git cat-file ended early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _working_bytes(path: Path, blob: str) -> bytes | None:
    """The working tree's bytes of ``path`` when they are ``blob`` (a regular file, never through a link, never
    blocking: :func:`tracker.base.fingerprint.read_in_place`), else None."""
    try:
        _, data = read_in_place(path)
    except OSError:
        return None
    return data if data is not None and blob_id(data) == blob else None


def attach(index: Any, root: Path, cache: Cache | None) -> Any:
    """``index`` (a :class:`tracker.base.file_index.FileIndex` of the working tree) answering :meth:`same_code`."""
    same = SameCode(root, cache)
    if cache is not None:
        cache.on_write(same.keep)  # its answers kept and its git stopped when the command's cache is written
    index.same_code = same
    return index
