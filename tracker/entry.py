"""The ``tracker`` console script and ``python -m tracker``: the process around one command line.

The command line itself is :mod:`tracker.cli`'s (every command declared once; a plain line runs without importing
typer); this module owns what a process needs around it: signals, output streams, the
exit status, a missing dependency.

Ctrl-C (SIGINT) ends every command the same way, wherever it lands: ``tracker: interrupted`` on stderr,
then the process ends by SIGINT itself, which a shell reports as 130 (and which stops a shell script's
loop, as a Ctrl-C should; an ``exit(130)`` would let the loop go on). Never a traceback. While a command
runs, the first Ctrl-C unwinds it as a KeyboardInterrupt, so its ``finally`` blocks run (the lock is
released, a half-written temp file removed, verify waits for pytest to record its run); before and
after that (imports, interpreter exit) and at a second Ctrl-C the process ends at once. The handler is
installed by this module's first statements, before any other import: the console script that pip
generates imports this module first (``tracker/__init__.py`` runs nothing), and ``python -m tracker``'s
``__main__`` does the same. Only Python's own start (before any tracker code) and its last steps of
shutdown are outside our reach: a Ctrl-C there also ends the process by SIGINT (at most a traceback of
Python's site import, which no package can prevent).

The output is the console's too: a reader that goes away (``tracker status | head -1``) ends the process
by SIGPIPE, silently (a shell's 141), as any tool in a pipeline; output that cannot be written (a full
disk) is ``<stdout>: cannot write: reason``, exit 8; a character the locale cannot encode is escaped and a
file name that is not UTF-8 is written back as its bytes; a stream closed from the start writes nowhere.
In-process callers (``main(argv)``) keep their signals and streams.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # `signal` is this C module plus enum wrappers, whose import (~1.5 ms) would come first
import os
import sys


def _die_interrupted(signum: int = _signal.SIGINT, frame: object = None) -> NoReturn:
    """Say so and end the process by SIGINT: a Ctrl-C with no command running, or a second one."""
    try:
        os.write(2, b"tracker: interrupted\n")
    except OSError:
        pass  # stderr closed: the exit status still says it
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    os.kill(os.getpid(), _signal.SIGINT)
    os._exit(128 + _signal.SIGINT)  # reached only where SIGINT could not end the process


def _imported_by_a_program() -> bool:
    """Is this module imported by a program's top-level code (the console script, ``python -m
    tracker``'s ``__main__``, ``python -c``) rather than by a library or a test, whose Ctrl-C is its own?"""
    frame: FrameType | None = sys._getframe(
        2
    )  # 0: this function, 1: this module, 2 and up: the import system, then the importer
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__"


if _imported_by_a_program():
    _signal.signal(_signal.SIGINT, _die_interrupted)

import gc  # noqa: E402 - every other import after the SIGINT handler, on purpose
import io  # noqa: E402
from typing import TYPE_CHECKING, NoReturn  # noqa: E402

from tracker.errors import OutputClosed, TrackerError  # noqa: E402

if TYPE_CHECKING:
    from types import FrameType

# Import names of the third-party packages the tracker needs (pyproject's dependencies and theirs). A command run
# by a Python without them (not the virtualenv it was installed into) says so instead of printing a traceback.
DEPENDENCIES = frozenset(
    {
        "typer",
        "click",
        "shellingham",
        "rich",
        "pydantic",
        "pydantic_core",
        "annotated_types",
        "typing_inspection",
        "markdown_it",
        "mdurl",
        "git",
        "gitdb",
        "smmap",
    }
)


_sigint_received = False  # set by the first Ctrl-C while a command runs
_command_running = False  # between main's installing and removing _interrupt_command


def _interrupt_command(signum: int, frame: object) -> NoReturn:
    """The first Ctrl-C while a command runs: unwind it as a KeyboardInterrupt so its cleanup runs."""
    global _sigint_received
    _sigint_received = True
    _signal.signal(_signal.SIGINT, _die_interrupted)  # a second Ctrl-C does not wait for the cleanup
    raise KeyboardInterrupt


def _lost_interrupt(unraisable: object) -> None:
    """``sys.unraisablehook``: a Ctrl-C that landed in a destructor or a weakref callback (importlib has
    some) cannot unwind anything there, and Python would print "Exception ignored ... KeyboardInterrupt"
    and carry on. Say nothing: the command runs to its end (its files complete), then the process ends
    by SIGINT all the same (``_sigint_received``); a next Ctrl-C unwinds the command as the first would have."""
    if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt) and _sigint_received:
        if _command_running:
            _signal.signal(_signal.SIGINT, _interrupt_command)
        return
    sys.__unraisablehook__(unraisable)  # type: ignore[arg-type]


def _end_output_closed() -> NoReturn:
    """The reader of our output went away (``tracker status | head -1``): end by SIGPIPE, silently, as
    any tool in a pipeline does (a shell shows 141; with ``pipefail`` it is the pipeline's status)."""
    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
    os.kill(os.getpid(), _signal.SIGPIPE)
    os._exit(128 + _signal.SIGPIPE)  # reached only where SIGPIPE could not end the process


def _encode_anyway(err: UnicodeError) -> tuple[bytes, int]:
    """Codec error handler of our output streams: a file name that is not UTF-8 (git hands its bytes over
    as surrogates) is written back as the bytes it was, like ``ls`` does; a character the stream's
    encoding lacks (``≥`` under an ASCII or latin-1 locale) as a backslash escape. Never an exception."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = bytearray()
    for char in err.object[err.start : err.end]:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(code - 0xDC00)
        else:
            out += (
                f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
            ).encode("ascii")
    return bytes(out), err.end


class _ConsoleFile(io.FileIO):
    """stdout's or stderr's file descriptor as the console script writes to it: a write that fails (a full
    disk, ``/dev/full``, an I/O error) is :class:`tracker.errors.FileError` ``<stdout>: cannot write: reason``
    (exit 8), reported like every other error, and what is written after that is dropped (so the
    interpreter's last flush has nothing to complain about). A closed pipe stays a BrokenPipeError."""

    label = "output"
    failed = False

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.failed:
            return len(data)
        try:
            return super().write(data) or 0
        except BrokenPipeError:
            raise
        except OSError as err:
            from tracker.errors import FileError

            self.failed = True
            raise FileError(f"<{self.label}>: cannot write: {err.strerror}") from None


def _own_output_streams() -> None:
    """Make stdout and stderr the console script's: writes go through :class:`_ConsoleFile`, never fail to
    encode (:func:`_encode_anyway`), and a stream that was closed when the process started (``tracker
    status >&-``) writes to /dev/null (the exit code still says how it went)."""
    import codecs

    codecs.register_error("tracker.encode-anyway", _encode_anyway)
    for name, fd in (("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        try:
            if old is not None and old.fileno() != fd:
                raise ValueError("not the standard file descriptor")
            raw = _ConsoleFile(fd, "w", closefd=False) if old is not None else _ConsoleFile(os.devnull, "w")
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            continue  # a stream replaced by whoever runs us: theirs to keep
        raw.label = name
        setattr(
            sys,
            name,
            io.TextIOWrapper(
                io.BufferedWriter(raw),
                encoding=getattr(old, "encoding", None) or "utf-8",
                errors="tracker.encode-anyway",
                line_buffering=getattr(old, "line_buffering", True),
            ),
        )


def _flush_output(code: int) -> int:
    """Flush stdout and stderr here, not in the interpreter's exit (where a failure is "Exception ignored"
    and a closed pipe a traceback); a failed write is reported as a command's error: exit 8."""
    from tracker.errors import report

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except TrackerError as err:
            code = report(err)
    return code


def _interrupted_after_cleanup() -> NoReturn:
    """What the command wrote reaches its reader; then ``tracker: interrupted`` and the end by SIGINT."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, TrackerError):  # a closed pipe, a full disk: nothing more can reach it
            pass
    _die_interrupted()


def main(argv: list[str] | None = None) -> None:
    """Run one command line (``sys.argv`` when ``argv`` is None); ends with ``sys.exit``.

    Without ``argv`` the process is ours: a Ctrl-C unwinds the command, then ends the process by SIGINT
    (module docstring). With ``argv`` (in-process callers such as tests) signals are left alone and a
    KeyboardInterrupt is the caller's.
    """
    global _command_running
    owns_process = argv is None
    try:
        try:
            if owns_process:
                _command_running = True
                sys.unraisablehook = _lost_interrupt
                _signal.signal(_signal.SIGINT, _interrupt_command)
                _own_output_streams()
            code = _run(argv)
            if owns_process:
                code = _flush_output(code)
        finally:
            if owns_process:  # from here to the process's end a Ctrl-C has nothing left to unwind
                _command_running = False
                _signal.signal(_signal.SIGINT, _die_interrupted)
    except KeyboardInterrupt:
        if not owns_process:
            raise
        _interrupted_after_cleanup()
    except (BrokenPipeError, OutputClosed):
        if not owns_process:
            raise
        _end_output_closed()
    except ModuleNotFoundError as err:
        code = _missing_dependency(err)
    if owns_process and _sigint_received:  # the command caught the KeyboardInterrupt (verify reports on its run)
        _interrupted_after_cleanup()
    sys.exit(code)


def _missing_dependency(err: ModuleNotFoundError) -> int:
    """Exit code 9 with a message naming a third-party package this Python lacks; our own modules stay bugs."""
    package = (err.name or "").partition(".")[0]
    if package not in DEPENDENCIES:
        raise err  # one of our own modules: a bug, kept as a traceback
    from tracker.errors import ExitCode

    print(
        f"tracker: error: the package {package!r} is not installed in this Python ({sys.executable}); "
        "install the tracker into it (`pip install .` in the repository, README) or run the `tracker` of "
        "the environment it was installed into",
        file=sys.stderr,
    )
    return int(ExitCode.MISSING_DEPENDENCY)


def _run(argv: list[str] | None) -> int:
    """The command's exit code (:func:`tracker.cli.run`)."""
    from tracker.cli import run

    owns_process = argv is None
    if owns_process:
        gc.freeze()  # as tracker.cli.main: what lives until exit is kept out of the cyclic GC's scans
    try:
        return run(argv)
    finally:
        if owns_process:
            gc.freeze()
