"""One error root, one exit-code table, one place that maps errors to exit codes.

Every expected failure raises a :class:`TrackerError` subclass carrying its :class:`ExitCode`;
:func:`exit_code_for` is the only mapping. Internal bugs are not TrackerErrors and stay tracebacks.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The documented exit codes of every ``tracker`` command (docs/reference.md, "Exit codes")."""

    OK = 0
    CHECK_FAILED = 1  # --check found out-of-date files, or tests/gates failed in verify
    INVALID_PLANS = 2  # a plan file does not parse or validate (lint found problems)
    USAGE = 3  # bad command-line argument: unknown plan/phase/gate id, bad option value
    REGION_EDITED = 4  # a generated region was edited by hand (use --force)
    NO_TESTS = 5  # a test gate collected zero tests, or pytest could not run them
    INTERRUPTED = 6  # verify's pytest run was interrupted or crashed (its evidence says so); nothing counts as passed
    LOCKED = 7  # another tracker process holds the repository lock
    IO = 8  # a file could not be read or written (encoding, permissions, not a repository)
    MISSING_DEPENDENCY = 9  # a package the tracker needs is not installed in the Python that runs it
    KEYBOARD_INTERRUPT = 130  # Ctrl-C (SIGINT) reached the tracker: it ends by SIGINT, which a shell shows as 128 + 2
    OUTPUT_CLOSED = 141  # the reader of the output went away (`| head`): it ends by SIGPIPE, silently (128 + 13)


class TrackerError(Exception):
    """Root of every expected tracker failure. ``str(err)`` is the message shown to the user."""

    exit_code: ExitCode = ExitCode.IO


class PlanError(TrackerError):
    """One or more problems in plan files, each already formatted ``path:line: message``."""

    exit_code = ExitCode.INVALID_PLANS

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class UsageError(TrackerError):
    """A command-line argument names something that does not exist or has a bad value."""

    exit_code = ExitCode.USAGE


class RegionEditedError(TrackerError):
    """A generated region's checksum does not match its content: someone edited it by hand."""

    exit_code = ExitCode.REGION_EDITED


class NoTestsError(TrackerError):
    """A gate's pattern collected zero tests, or pytest could not collect at all."""

    exit_code = ExitCode.NO_TESTS


class InterruptedRunError(TrackerError):
    """The pytest run did not complete (Ctrl-C, crash); its evidence counts for nothing."""

    exit_code = ExitCode.INTERRUPTED


class LockedError(TrackerError):
    """Another tracker process holds the repository lock."""

    exit_code = ExitCode.LOCKED


class FileError(TrackerError):
    """A file could not be read, decoded or written."""

    exit_code = ExitCode.IO


class ResultFileError(FileError):
    """A benchmark result file that cannot be used, rendered as ``path: reason``. ``lasting`` is False for a
    reason that passes with time (a time in the future): such a verdict is never cached."""

    def __init__(self, path: object, reason: str, lasting: bool = True) -> None:
        self.path = str(path)
        self.reason = reason
        self.lasting = lasting
        super().__init__(f"{self.path}: {reason}")


class OutputClosed(BaseException):
    """The reader of the tracker's output went away (a pipe closed early). Not a failure of the command:
    like KeyboardInterrupt a BaseException, which typer (it turns an EPIPE OSError into exit 1) lets
    through to :mod:`tracker.entry`, where the process ends by SIGPIPE as any tool in a pipeline does."""


def exit_code_for(err: BaseException) -> int:
    """Map an exception to the process exit code; the single place this mapping lives."""
    if isinstance(err, TrackerError):
        return int(err.exit_code)
    if isinstance(err, KeyboardInterrupt):
        return int(ExitCode.KEYBOARD_INTERRUPT)
    if isinstance(err, (OutputClosed, BrokenPipeError)):
        return int(ExitCode.OUTPUT_CLOSED)
    raise err


def report(err: TrackerError) -> int:
    """Write an expected error to stderr as the CLI shows it; return its exit code."""
    import sys

    if isinstance(err, PlanError):
        sys.stderr.write(f"{err}\ntracker: error: {len(err.problems)} problem(s) in plan files (see `tracker lint`)\n")
    else:
        sys.stderr.write(f"tracker: error: {err}\n")
    return exit_code_for(err)
