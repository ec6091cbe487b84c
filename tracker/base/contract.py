"""The file contract every writer of tracker files shares: where files live, their names, their times, the ids
of the code they saw, and how they are written.

Standard library only (of the tracker it imports only :mod:`tracker.base.hashing`, itself standard library): the
pytest plugin (which runs where only pytest is installed), ``bench/`` (the GPU machine has no pydantic) and the
commands all write by these rules, so a file any of them writes reads the same way everywhere (docs/evidence.md
documents each rule).

- Places: the evidence store :data:`EVIDENCE_DIR`, benchmark output :data:`RESULTS_DIR`, the per-machine
  :data:`CACHE_DIR` (gitignored: :func:`ensure_tracker_dir`).
- Kinds: the ``schema`` names and versions of test runs, sign-offs and benchmark results.
- Names: :func:`evidence_name`, one rule for every file of the store; :func:`shown_name`, a file name as text.
- Times: :data:`UTC_FORMAT` and :func:`utc_time`, the one parser of recorded times.
- Code ids: :func:`blob_id` (git's id of a file's bytes) and :func:`set_fingerprint` (a set of them).
- Writes: :func:`atomic_write`, a whole file or none.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tracker.base.hashing import sha1_hex, sha256_hex

# --- places ------------------------------------------------------------------------------------------------------
TRACKER_DIR = Path(".tracker")
EVIDENCE_DIR = TRACKER_DIR / "evidence"  # committed: one file per run, never edited
CACHE_DIR = TRACKER_DIR / "cache"  # per machine, gitignored: only what can be rebuilt
RESULTS_DIR = Path("bench") / "results"  # where benchmarks write their result files
RESULT_DIRS = (EVIDENCE_DIR, RESULTS_DIR)  # where result files are read from (the store holds ingested copies)
GITIGNORE = "# Written by tracker: per-machine files. Evidence (evidence/) is meant to be committed.\ncache/\nlock\n"

# --- kinds ---------------------------------------------------------------------------------------------------------
TEST_RUN_SCHEMA = "tracker-test-run"
SIGNOFF_SCHEMA = "tracker-signoff"
RESULT_SCHEMA = "tracker-bench-result"
RESULT_VERSION = 1
VERSIONS = {TEST_RUN_SCHEMA: 1, SIGNOFF_SCHEMA: 1, RESULT_SCHEMA: RESULT_VERSION}  # the versions this code reads

# --- names ---------------------------------------------------------------------------------------------------------


def evidence_name(kind: str, host: str | None = None) -> str:
    """A file name two branches never both create, for the store and for result files alike:
    ``<UTC time to the µs>-<host>-<kind>-<6 hex>.json`` (a result file's kind is its benchmark).

    The time sorts the names by when they were made; ``host`` (this machine's name when None) and ``kind`` are each
    cut to 40 characters, each one other than a letter, digit, ``-`` or ``_`` written as ``-``; three random
    bytes keep two files of the same microsecond apart.
    """
    now = time.time_ns()
    seconds, micros = divmod(now // 1000, 1_000_000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds)) + f"{micros:06d}Z"
    name = hostname() if host is None else host
    return f"{stamp}-{_name_part(name, 'host')}-{_name_part(kind, 'run')}-{os.urandom(3).hex()}.json"


def shown_name(name: str) -> str:
    """A file name as text a UTF-8 file holds: a name that is not UTF-8 (git's or the file system's bytes as lone
    surrogates) with those bytes as ``\\xNN`` escapes."""
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no file name's byte decodes to
        raw = name.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def utf8_name(name: str) -> bool:
    """Can ``name`` (git's or the file system's bytes decoded with surrogateescape) be written in a UTF-8 file as
    itself? A measured file whose name cannot is refused by the writers of result files: left out of a fingerprint it
    could change unseen."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


UNREADABLE_ID = "0" * 40  # no file's id: what a record says of a file whose name it cannot hold


def recordable_ids(files: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(the {path: id} entries a UTF-8 evidence file can hold, the paths it cannot: names that are not UTF-8). Such a
    name is recorded escaped (:func:`shown_name`) with :data:`UNREADABLE_ID`, an id no file has: a phase whose
    ``paths`` cover it finds that entry changed or gone whatever happens to the file (present, edited, deleted:
    adversarial round 11 deleted it after a run that left it out, and the phase was done), so it is never done on
    that record. (Written as itself, the whole evidence file was refused as not valid Unicode.)"""
    kept = {p: i for p, i in files.items() if utf8_name(p)}
    left = sorted(p for p in files if p not in kept)
    for p in left:
        kept.setdefault(shown_name(p), UNREADABLE_ID)
    return kept, left


def unrecordable_warning(names: Sequence[str]) -> str:
    """The warning for :func:`recordable_ids`'s left-out names."""
    shown = ", ".join(shown_name(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
    return (
        f"tracker: warning: {len(names)} file(s) whose name is not UTF-8 left out of the record ({shown}): a phase "
        "whose paths cover one stays stale; rename them"
    )


def _name_part(text: str, empty: str) -> str:
    """``text`` as one part of a file name (:func:`evidence_name`); ``empty`` when nothing of it is left."""
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)[:40] or empty


def hostname() -> str:
    """This machine's name, as :func:`socket.gethostname` says it (the kernel's node name), without importing
    :mod:`socket` where ``os.uname`` gives it (~4 ms of verify's start-up)."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return str(uname().nodename)
    import socket

    return socket.gethostname()


# --- the running test ----------------------------------------------------------------------------------------
# While a recording run's tests run, its evidence file's ``running`` names the test being run when it is the only
# one of its file that runs, else its file (a reader with that file alone counts a crash against all of the file's
# tests), and the running slot beside it names the very test, rewritten in place before each test (a few µs, where
# rewriting the evidence file cost ~0.2 ms a test, with every file id and gate in it). The slot is read only once
# the run's process is gone, when nothing writes it any more: never half.
RUNNING_SLOT_LIMIT = 1024 * 1024  # a slot larger than this is no record the plugin wrote


RUNNING_SUFFIX = ".running"


def running_file(evidence: Path) -> Path:
    """The file naming the test a recording run is running: ``.<evidence file name>.running`` beside it (hidden,
    and no ``*.json``: the store never reads it as evidence)."""
    return evidence.with_name(f".{evidence.name}{RUNNING_SUFFIX}")


# A pid names a process only while it lives: the kernel gives it to the next process once it is free, so a crashed
# run's pid, alive again, may be another process. A running record names the process by its pid and its start
# (``pid_start``: :func:`process_identity`); where that is unknown (an older plugin, no /proc), a process of that pid
# that started more than RECYCLED_AFTER_S after the run's recorded time is taken for another one (the run's own
# process started before the run: the slack covers the second the time is cut to and a clock stepped meanwhile).
RECYCLED_AFTER_S = 300


def _proc_start_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22); None without one."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        # Field 2, the command name in parentheses, may hold spaces and parentheses: count from the last ")".
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def process_identity(pid: int) -> str | None:
    """``<boot id>:<start in clock ticks since boot>`` of process ``pid`` here: what no other process of this
    machine has, in this boot or any other, unlike its pid. None where ``/proc`` does not say (not Linux, no such
    process)."""
    ticks = _proc_start_ticks(pid)
    if ticks is None:
        return None
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as fh:
            boot = fh.read().decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return f"{boot}:{ticks}" if boot else None


def process_started(pid: int) -> float | None:
    """When process ``pid`` here started, in seconds since 1970 (boot time from ``/proc/stat`` plus its start
    ticks); None where ``/proc`` does not say."""
    ticks = _proc_start_ticks(pid)
    if ticks is None:
        return None
    try:
        with open("/proc/stat", "rb") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith(b"btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


# --- times ---------------------------------------------------------------------------------------------------------
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_SHAPE = "0000-00-00T00:00:00Z"
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def utc_now() -> str:
    """This machine's time as UTC ``YYYY-MM-DDTHH:MM:SSZ`` (how every writer records a time)."""
    return time.strftime(UTC_FORMAT, time.gmtime())


def _days_in(year: int, month: int) -> int:
    """Days of ``month`` (1-12) in ``year`` of the proleptic Gregorian calendar."""
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return _MONTH_DAYS[month - 1] + leap


def utc_time(text: object) -> str | None:
    """``text``, an ISO-8601 time with a time zone, as UTC ``YYYY-MM-DDTHH:MM:SSZ``; None if it is not one.

    The one time parser of the store, ``tracker ingest`` and result files. Strings in that form (what the
    tracker writes) are checked by arithmetic, without importing datetime (status's path): an impossible
    date (``2026-02-30``, ``0000-01-01``) or time of day is not a time. Any other offset or precision is
    parsed by datetime and converted, so times order correctly as strings.
    """
    if not isinstance(text, str):
        return None
    return _utc_time_cached(text) if len(text) <= 64 else _utc_time(text)


@functools.lru_cache(maxsize=8192)  # status asks the same evidence times once per gate
def _utc_time_cached(text: str) -> str | None:
    return _utc_time(text)


def _utc_time(text: str) -> str | None:
    if len(text) == 20 and all(c == s or (s == "0" and "0" <= c <= "9") for c, s in zip(text, _SHAPE, strict=False)):
        year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
        valid = year >= 1 and 1 <= month <= 12 and 1 <= day <= _days_in(year, month)
        if valid and text[11:13] < "24" and text[14:16] < "60" and text[17:19] < "60":
            return text
        return None  # the tracker's own shape with impossible values: datetime would refuse it too
    from datetime import UTC, datetime  # only for times in another form: not on status's path

    try:
        when = datetime.fromisoformat(text)
        if when.tzinfo is None:
            return None
        u = when.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: an offset that moves year 1 or 9999 out of range
        return None
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


# A file whose recorded time is more than this after this machine's clock cannot be ordered: a clock
# running ahead (or a hand-made time) would make it the newest run for as long as it lies, hiding every
# real failure recorded meanwhile. Five minutes tolerates ordinary clock drift between machines.
MAX_FUTURE_S = 300


class Clock:
    """This machine's time as UTC strings (the store's shape), read once per load: ``now`` and the
    latest acceptable recorded time, ``limit`` (``now`` + :data:`MAX_FUTURE_S`). No datetime import.

    ``soonest`` is the earliest time it refused as in the future (None: none refused). While it is None, every
    time it accepted stays accepted however far the clock moves on (never back): what the status index relies on;
    a refusal names the clock in its reason, so no index is kept then."""

    __slots__ = ("limit", "now", "soonest")

    def __init__(self, seconds: float | None = None) -> None:
        at = time.time() if seconds is None else seconds
        self.now = time.strftime(UTC_FORMAT, time.gmtime(at))
        self.limit = time.strftime(UTC_FORMAT, time.gmtime(at + MAX_FUTURE_S))
        self.soonest: str | None = None

    def future(self, utc: str, what: str = "time") -> str | None:
        """Why ``utc`` (a :func:`utc_time` string) cannot be used, or None when it is not in the future."""
        if utc <= self.limit:
            return None
        if self.soonest is None or utc < self.soonest:
            self.soonest = utc
        return (
            f"{what} {utc} is in the future: more than {MAX_FUTURE_S // 60} minutes after this machine's "
            f"clock ({self.now}); runs are ordered by time, so it would hide every run recorded until then "
            "(is the clock of the machine that wrote it ahead?)"
        )


# --- code ids ------------------------------------------------------------------------------------------------------


def blob_id(data: bytes) -> str:
    """Git's blob id of ``data`` (what ``git hash-object`` prints): sha1 of ``blob <size>`` NUL and the bytes."""
    return sha1_hex(b"blob %d\0" % len(data) + data)


PLAIN_MODE = "100644"  # git's mode of a plain file: its id in a fingerprint is its blob id
EXEC_MODE = "100755"  # an executable file
LINK_MODE = "120000"  # a symbolic link: its blob is the target's name
GITLINK_MODE = "160000"  # a submodule's entry: the commit it records


def file_id(blob: str, mode: str) -> str:
    """A file's id in fingerprints: its blob id, with its git mode folded in when it is not a plain file (``100755``
    executable, ``120000`` a link, ``160000`` a submodule): a ``chmod -x`` or a file turned into a link with the same
    bytes changes what runs, so it changes the id (adversarial round 8). As long as the blob id, and as hex."""
    if mode == PLAIN_MODE:
        return blob
    folded = f"tracker-mode {mode} {blob}".encode()
    return sha1_hex(folded) if len(blob) == 40 else sha256_hex(folded)


def mode_of(st_mode: int) -> str:
    """The git mode of a file with ``os.lstat`` mode ``st_mode``: a link, an executable (owner's x bit), plain."""
    import stat

    if stat.S_ISLNK(st_mode):
        return LINK_MODE
    return EXEC_MODE if st_mode & stat.S_IXUSR else PLAIN_MODE


def link_id(path: str | os.PathLike[str]) -> str:
    """The id of the link at ``path`` in fingerprints, as git stores it: its target's name, its mode folded in."""
    return file_id(blob_id(os.fsencode(os.readlink(path))), LINK_MODE)


def set_fingerprint(files: Mapping[str, str]) -> str:
    """The fingerprint of a set of files given as {posix path: blob id}: sha256 of one ``<path>`` NUL
    ``<blob id>`` LF line per file, in path order (docs/evidence.md)."""
    text = "".join(f"{path}\0{blob}\n" for path, blob in sorted(files.items()))
    return sha256_hex(text.encode("utf-8"))


# --- writes --------------------------------------------------------------------------------------------------------


def check_inside(root: Path, path: Path) -> None:
    """OSError (``strerror``: ``refused: it resolves to REAL, outside the repository ROOT``) unless ``path``, its
    symlinks followed as far as they exist, lies inside ``root``. The readers' rule (a file of the tracker that
    resolves outside the repository is refused: ``tracker.base.fileio.read_regular``), applied by every writer first, so
    that nothing is written where it would then be refused: ``.tracker``, its ``evidence/`` or ``cache/``, a
    report or a result folder linked out of the repository."""
    import errno

    try:
        real, base = path.resolve(), root.resolve()
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop (Python < 3.13)
        raise OSError(errno.ELOOP, getattr(err, "strerror", None) or str(err), str(path)) from None
    if not real.is_relative_to(base):
        raise OSError(errno.EPERM, f"refused: it resolves to {real}, outside the repository {base}", str(path))


def _tracker_root(path: Path) -> Path | None:
    """The repository ``path`` is in when it lies under a ``.tracker`` folder (the last one), else None."""
    parts = path.parts
    if TRACKER_DIR.name not in parts:
        return None
    return Path(*parts[: len(parts) - 1 - parts[::-1].index(TRACKER_DIR.name)])


def ensure_tracker_dir(tracker_dir: Path) -> None:
    """Create ``.tracker/`` with a ``.gitignore`` for ``cache/`` and ``lock`` unless it has one already; OSError
    when it resolves outside its repository (:func:`check_inside`)."""
    check_inside(tracker_dir.parent, tracker_dir)
    ignore = tracker_dir / ".gitignore"
    if ignore.exists():
        return
    tracker_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError), open(ignore, "x", encoding="utf-8") as fh:
        fh.write(GITIGNORE)


def atomic_write(
    path: Path,
    data: bytes,
    *,
    durable: bool = True,
    keep_mode: bool = True,
    before_replace: Callable[[], None] | None = None,
    replace: Callable[[Path, Path], None] = os.replace,
    root: Path | None = None,
) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory and ``replace`` (a rename).

    Readers see the old file or the new one, never a partial one. The temp name is new each time (``O_EXCL``:
    never an existing file or a symlink planted there) and removed whatever stops the write, a Ctrl-C included.
    ``durable``: the bytes are fsynced before the rename (evidence; a cache lost in a crash is only rebuilt).
    ``keep_mode``: an existing file keeps its mode; a new one gets ``0o666`` less the umask, like any file a
    shell creates. Writing under ``.tracker/`` first makes sure its ``.gitignore`` exists. ``before_replace``
    runs right before the rename, once the data is written: raising there, or in ``replace``, leaves no temp file.
    A file under ``.tracker/`` (evidence, a cache) whose folder resolves outside its repository is refused before
    anything is written or created (:func:`check_inside`: OSError); so is, with ``root``, any folder outside it.
    """
    repository = _tracker_root(path) if root is None else root
    if repository is not None:  # the folder: a symlink at ``path`` itself is replaced by the rename, not followed
        check_inside(repository, path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    tracker_root = _tracker_root(path.parent / "x")
    if tracker_root is not None:
        ensure_tracker_dir(tracker_root / TRACKER_DIR.name)
    while True:
        tmp = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"
        try:  # O_EXCL: never follows or reuses an existing name; 0o666 lets the umask decide the mode
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except BaseException:  # a Ctrl-C just after the file was created
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        break
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if keep_mode:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        if before_replace is not None:
            before_replace()
        replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
