"""File edges: decoding that round-trips, atomic writes that happen only on change, the repo lock.

Plans are UTF-8, with or without a BOM; whatever a file has is written back the same way.
Reads use ``newline=""`` semantics (bytes decoded as they are) so CRLF survives untouched.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

# The one atomic writer (tracker.base.contract), re-exported: the commands write through this module.
from tracker.base.contract import GITIGNORE as GITIGNORE
from tracker.base.contract import atomic_write as atomic_write
from tracker.base.contract import check_inside as check_inside
from tracker.base.contract import ensure_tracker_dir as ensure_tracker_dir
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
            raise FileError(
                f"{path}: refused: it resolves to {real}, outside the repository {root.resolve()}"
            ) from None
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

    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
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


# A stat signature is trusted to stand for a file's bytes only when the file's last change (ctime, which
# no tool can set back) is this much older than when it was taken: a later write then moves ctime past it.
SETTLED_NS = 2_000_000_000


def signature(st: os.stat_result) -> list[int]:
    """What identifies a file's bytes without reading them, once settled (:data:`SETTLED_NS`)."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def settled(sig: list[int], now_ns: int) -> bool:
    """Was the file of ``sig`` (taken at ``now_ns``, ``time.time_ns()``) last changed long enough before?"""
    return now_ns - sig[4] > SETTLED_NS


_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
STALE_TEMP_AGE = 60.0  # seconds: no write of ours keeps a temp file that long; a live writer's is younger


def remove_stale_temps(directory: Path, *, older_than: float = STALE_TEMP_AGE) -> list[Path]:
    """Remove the temp files of :func:`atomic_write`'s naming in ``directory`` that are older than
    ``older_than`` seconds; return them.

    A process killed between creating its temp file and renaming it leaves one behind (the tree
    turns dirty). Only regular files whose name matches exactly are removed, and only old ones: a
    younger one may belong to a writer that is running now.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed  # no such directory (or unreadable): nothing of ours to clean
    now = time.time()
    for entry in entries:
        if not _TEMP_NAME.fullmatch(entry.name):
            continue
        try:
            if (
                not entry.is_file(follow_symlinks=False)
                or now - entry.stat(follow_symlinks=False).st_mtime <= older_than
            ):
                continue
            os.unlink(entry.path)
        except OSError:
            continue  # gone already, or not ours to remove: leave it
        removed.append(Path(entry.path))
    return removed


class FileStamp(NamedTuple):
    """What identifies one version of a file without reading it: device, inode, size, mtime (ns)."""

    dev: int
    ino: int
    size: int
    mtime_ns: int


def file_stamp(path: Path) -> FileStamp | None:
    """The file's :class:`FileStamp` (symlinks followed), None when it does not exist or cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileStamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class FileChangedError(LockedError):
    """A file changed (an editor saved it) after the tracker read it, or is being saved now: the
    tracker's output, made from what it read, must not replace it. Exit 7, like the lock: busy, try again."""

    def __init__(self, path: Path, reason: str, wait: float = 0.0) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.wait = wait  # seconds until the file would count as settled


# Without a way to ask whether a file is open for writing (see being_written), a file modified less than
# this long ago may be half-saved by an editor that writes in place: it is not replaced.
SETTLE = 0.1


def _take_read_lease(fd: int) -> bool | None:
    """Take a read lease on ``fd`` (open read-only): True when held; False when the file is open for
    writing somewhere (Linux refuses the lease then); None when leases cannot tell (another OS, a
    filesystem without them, a file owned by another user).

    While it is held, a process opening the file for writing waits (up to the kernel's lease-break
    time) until it is dropped, and the holder is signalled: SIGURG (ignored unless handled) is asked
    for instead of SIGIO, which would end the process.
    """
    try:
        import fcntl
        import signal

        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except BlockingIOError:  # EAGAIN: open for writing somewhere
        return False
    except (ImportError, AttributeError, OSError):
        return None
    return True


def _lease_kept(fd: int) -> bool:
    """Whether the read lease on ``fd`` is still whole: no process opened the file for writing since."""
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK


def _drop_lease(fd: int) -> None:
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)


def being_written(path: Path) -> bool | None:
    """Whether some process has ``path`` open for writing (an editor saving it in place); None when
    that cannot be told (see :func:`_take_read_lease`)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        leased = _take_read_lease(fd)
        if leased:
            _drop_lease(fd)
        return None if leased is None else not leased
    finally:
        os.close(fd)


def in_flux(path: Path, stamp: FileStamp) -> tuple[str, float] | None:
    """Why the file ``stamp`` describes may be half-saved now, and how long to wait before asking
    again; None when it is not: it is open for writing by another process or, when that cannot be
    told, it was modified less than :data:`SETTLE` seconds ago (a time in the future says nothing)."""
    return _flux(being_written(path), stamp)


def _flux(writing: bool | None, stamp: FileStamp) -> tuple[str, float] | None:
    if writing:
        return "open for writing by another process (still being saved?)", 0.05
    age = time.time() - stamp.mtime_ns / 1e9
    if writing is None and 0 <= age < SETTLE:
        return f"modified {age:.2f} s ago (still being saved?)", SETTLE - age
    return None


_EXCHANGE: list[Callable[[Path, Path], None] | None] = []  # looked up once


def _exchange_function() -> Callable[[Path, Path], None] | None:
    """Linux ``renameat2(RENAME_EXCHANGE)``: swap two names atomically; None where libc lacks it."""
    if not _EXCHANGE:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            renameat2 = libc.renameat2
            renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        except (ImportError, OSError, AttributeError):
            _EXCHANGE.append(None)
        else:

            def exchange(a: Path, b: Path) -> None:
                if renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
                    err = ctypes.get_errno()
                    raise OSError(err, os.strerror(err), str(b))

            _EXCHANGE.append(exchange)
    return _EXCHANGE[0]


def replace_unchanged(tmp: Path, path: Path, stamp: FileStamp, data: bytes) -> None:
    """Rename ``tmp`` over ``path`` only while ``path`` is still, complete, the version that was read
    (``stamp``, ``data``); FileChangedError, ``path`` untouched, otherwise.

    An editor that saves meanwhile must not lose its save, and a half-saved file must never be made
    permanent, so: a read lease is taken on the file (refused while another process has it open for
    writing: an in-place save in progress) and held to the end, which makes a writer that opens it
    meanwhile wait and lets us see it did; then its device, inode, size, mtime and bytes must be those
    read. The rename is an exchange: what it displaced must be the very file checked (not a file an
    editor renamed over it in between), and the lease still whole (no in-place save began); else the
    exchange is undone, which puts the editor's file back. Where leases or the exchange are missing, a
    file modified in the last :data:`SETTLE` seconds counts as being saved, and the rename is plain:
    a save made in the instant between the last check and the rename can then still be lost.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise FileChangedError(path, "removed after it was read") from None
    leased = _take_read_lease(fd)
    try:
        flux = _flux(not leased if leased is not None else None, stamp)
        if flux is not None:
            raise FileChangedError(path, flux[0], wait=flux[1])
        st = os.fstat(fd)
        if (
            FileStamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != stamp
            or _read_fd(fd, len(data)) != data
            or file_stamp(path) != stamp
        ):
            raise FileChangedError(path, "changed after it was read (saved by an editor?)")
        _swap_in(tmp, path, stamp, fd if leased else None)
    finally:
        if leased:
            _drop_lease(fd)
        os.close(fd)


def _read_fd(fd: int, size: int) -> bytes:
    """Up to ``size + 1`` bytes of ``fd`` from its start (one more than expected shows a longer file)."""
    chunks, total = [], 0
    while total <= size:
        chunk = os.pread(fd, size + 1 - total, total)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _swap_in(tmp: Path, path: Path, stamp: FileStamp, leased_fd: int | None) -> None:
    """Put ``tmp`` at ``path`` by an exchange, verified (see :func:`replace_unchanged`), or a plain rename."""
    import errno

    exchange = _exchange_function()
    try:
        if exchange is None:
            raise OSError(errno.ENOSYS, "no renameat2")
        exchange(tmp, path)
    except FileNotFoundError:
        raise FileChangedError(path, "removed while it was being replaced") from None
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM):
            raise
        os.replace(tmp, path)  # a filesystem or system without RENAME_EXCHANGE
        return
    displaced = os.stat(tmp)
    if (displaced.st_dev, displaced.st_ino) == (stamp.dev, stamp.ino) and (leased_fd is None or _lease_kept(leased_fd)):
        os.unlink(tmp)  # the version that was read
        return
    try:
        exchange(tmp, path)  # undo: the editor's file is back at ``path``, ours at ``tmp`` (removed by atomic_write)
    except OSError as err:
        kept = tmp.with_name(tmp.name.removesuffix(".tmp") + ".kept")
        os.replace(tmp, kept)  # atomic_write removes ``tmp`` on the way out: the editor's save must not go with it
        raise FileError(
            f"{path}: saved by an editor while it was being replaced, and it could not be put back "
            f"({err.strerror}): the editor's version is {kept}"
        ) from None
    raise FileChangedError(path, "saved by an editor while it was being replaced")


def write_text_if_changed(
    path: Path, old: str, new: str, *, stamp: FileStamp | None = None, root: Path | None = None
) -> bool:
    """Atomically write ``new`` when it differs from ``old``; True when the file was written.

    With ``stamp`` (the file's stamp when ``old`` was read), the file is replaced only if it is still,
    complete, exactly what was read (:func:`replace_unchanged`): a save made by an editor meanwhile is
    never overwritten, a half-saved file never made permanent; FileChangedError instead, nothing written.
    A symlink is written through: the file it resolves to is replaced and the link kept (a plan kept in
    ``docs/`` and linked from ``plans/``); with ``root``, a link that resolves outside ``root`` is refused
    (FileError), as reading it is.
    """
    if new == old:
        return False
    target = resolved_inside(path, root)
    read = old.encode("utf-8")
    replace = os.replace if stamp is None else (lambda tmp, dest: replace_unchanged(tmp, dest, stamp, read))
    try:
        atomic_write(target, new.encode("utf-8"), replace=replace)
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror}") from err
    return True


def write_file(path: Path, data: bytes, *, root: Path | None = None) -> None:
    """Write ``data`` to ``path``, a file a command writes where its user says (``report --out``, ``summary
    --write``), whole or not at all: the one rule for both. A symlink is written through (the file it resolves to is
    replaced, the link kept), as ``update`` does with plans; a destination that exists and is not a regular file (a
    FIFO, a device, a socket, a directory) is refused, nothing written. With ``root``, a path named inside the
    repository must resolve inside it (:func:`check_inside`: the readers' rule, ``plans/reports`` linked out).
    FileError ``path: reason``."""
    if root is not None and Path(os.path.abspath(path)).is_relative_to(os.path.abspath(root)):
        try:
            check_inside(root, path)
        except OSError as err:
            raise FileError(f"{path}: cannot write: {err.strerror or err}") from None
    target, _ = destination(path)
    try:
        atomic_write(target, data)
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror or err}") from None


def destination(path: Path) -> tuple[Path, bool]:
    """Where :func:`write_file` writes for ``path`` (its symlinks resolved), and whether a file is there now;
    FileError (``path: refused: not a regular file (a FIFO)``) for one that is not a regular file, which a read
    would block on and a write must not replace."""
    import stat

    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target, False
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):
        raise FileError(f"{path}: refused: not a regular file ({_file_kind(mode)})")
    return target, True


def resolved_inside(path: Path, root: Path | None = None) -> Path:
    """``path`` with its symlinks resolved (what a write through it must replace); FileError (``path: reason``)
    for a symlink loop or, with ``root``, a real path outside ``root``."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop (Python < 3.13)
        raise FileError(f"{path}: cannot write: {getattr(err, 'strerror', None) or err}") from None
    if root is not None and not target.is_relative_to(root.resolve()):
        raise FileError(f"{path}: refused: it resolves to {target}, outside the repository {root.resolve()}")
    return target


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
    try:
        check_inside(root, lock)  # the readers' rule: nothing of the tracker's is written outside the repository
        ensure_tracker_dir(lock.parent)
    except OSError as err:
        raise FileError(f"{lock}: cannot write: {err.strerror or err}") from None
    with open(lock, "a+") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockedError(
                        f"{lock}: another tracker process holds the lock (waited {timeout:.0f} s)"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
