"""File edges: decoding that round-trips, atomic writes that happen only on change, the repo lock.

Plans are UTF-8, with or without a BOM; whatever a file has is written back the same way.
Reads use ``newline=""`` semantics (bytes decoded as they are) so CRLF survives untouched.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from tracker.errors import FileError, LockedError, UsageError

BOM = "\ufeff"


def read_text(path: Path, *, root: Path | None = None, limit: int | None = None) -> str:
    """The file's text exactly (BOM kept as U+FEFF, newlines untouched); FileError if unreadable, not a
    regular file, larger than ``limit`` (default :data:`MAX_READ`) or, with ``root``, outside ``root``."""
    data = read_regular(path, root=root, limit=MAX_READ if limit is None else limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise FileError(f"{path}: not UTF-8 text (byte {err.start}: {err.reason})") from err


# What the tracker reads is bounded: a plan, an evidence or a result file larger than this is refused with
# a message rather than read into memory (the largest real result file is ~0.6 MB).
MAX_READ = 64 * 1024 * 1024


def read_regular(path: Path, *, root: Path | None = None, limit: int = MAX_READ) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes; FileError (``path: reason``) otherwise.

    Never blocks and never reads without bound: a FIFO, a device (``/dev/zero``), a socket or a directory
    is refused without reading it. With ``root``, the file (after following symlinks) must lie inside
    ``root``: a plan or evidence file that is a symlink out of the repository is refused.
    """
    import stat

    if root is not None:
        try:
            real = path.resolve()
            real.relative_to(root.resolve())
        except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop (Python < 3.13)
            raise FileError(f"{path}: cannot read: {getattr(err, 'strerror', None) or err}") from None
        except ValueError:
            raise FileError(f"{path}: refused: it resolves to {real}, outside the repository {root.resolve()}") from None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as err:
        raise FileError(f"{path}: cannot read: {err.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileError(f"{path}: refused: not a regular file ({_file_kind(info.st_mode)})")
        if info.st_size > limit:
            raise FileError(f"{path}: refused: {info.st_size} bytes, more than the {limit}-byte limit")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # grew while being read
            raise FileError(f"{path}: refused: more than the {limit}-byte limit")
        return b"".join(chunks)
    except OSError as err:
        raise FileError(f"{path}: cannot read: {err.strerror}") from None
    finally:
        os.close(fd)


def _file_kind(mode: int) -> str:
    import stat

    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def parse_json(data: bytes | str) -> object:
    """``json.loads`` whose every failure is a ValueError: nesting too deep for the parser (RecursionError)
    and numbers too large for a float included."""
    import json

    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except (ValueError, TypeError) as err:
        raise ValueError(str(err)) from None


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory and ``os.replace``.

    Readers see the old file or the new one, never a partial one. An existing file keeps its mode; a
    new one gets ``0o666`` less the umask, like any file a shell creates. Writing under ``.tracker/``
    first makes sure its ``.gitignore`` exists.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if ".tracker" in path.parent.parts:
        parts = path.parent.parts
        ensure_tracker_dir(Path(*parts[: len(parts) - parts[::-1].index(".tracker")]))
    while True:
        tmp = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"
        try:  # O_EXCL: never follows or reuses an existing name; 0o666 lets the umask decide the mode
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


GITIGNORE = "# Written by tracker: per-machine files. Evidence (evidence/) is meant to be committed.\ncache/\nlock\n"


def ensure_tracker_dir(tracker_dir: Path) -> None:
    """Create ``.tracker/`` with a ``.gitignore`` for ``cache/`` and ``lock`` unless it has one already."""
    ignore = tracker_dir / ".gitignore"
    if ignore.exists():
        return
    tracker_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        with open(ignore, "x", encoding="utf-8") as fh:
            fh.write(GITIGNORE)


def write_text_if_changed(path: Path, old: str, new: str) -> bool:
    """Atomically write ``new`` when it differs from ``old``; True when the file was written."""
    if new == old:
        return False
    try:
        atomic_write(path, new.encode("utf-8"))
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror}") from err
    return True


def lock_timeout() -> float:
    """Seconds to wait for the lock: env ``TRACKER_LOCK_TIMEOUT`` (a number >= 0), else 10."""
    raw = os.environ.get("TRACKER_LOCK_TIMEOUT", "10")
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= 0:  # also refuses nan
        raise UsageError(f"TRACKER_LOCK_TIMEOUT={raw!r}: expected a number of seconds >= 0")
    return value


@contextlib.contextmanager
def repo_lock(root: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold ``.tracker/lock`` (an exclusive flock) so concurrent updates serialize.

    Waits up to ``timeout`` seconds (default: env ``TRACKER_LOCK_TIMEOUT``, else 10) for another holder.
    """
    import fcntl  # POSIX only; imported here so read-only commands never pay for it

    if timeout is None:
        timeout = lock_timeout()
    lock = root / ".tracker" / "lock"
    ensure_tracker_dir(lock.parent)
    with open(lock, "a+") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockedError(f"{lock}: another tracker process holds the lock (waited {timeout:.0f} s)") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
