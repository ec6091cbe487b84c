"""Run one command line: the plain-line reader's when it takes the line, else typer's (:mod:`tracker.cli`)."""

import gc as _gc
import sys


def run(argv: list[str] | None = None) -> int:
    """Run one command line (``sys.argv`` when ``argv`` is None); its exit code. A plain line runs without typer
    (:mod:`tracker.cli.plain`), every other one through :func:`tracker.cli.app.run_typer`."""
    from tracker.cli.plain import read
    from tracker.cli.spec import before
    from tracker.errors import TrackerError, report

    args = sys.argv[1:] if argv is None else argv
    try:
        call = read(args)
        if call is not None:
            before.update({"root": None, "color": None, "no_color": False, **call.before})
            return call.command.call(call.values)
        from tracker.cli.app import run_typer

        return run_typer(argv)
    except TrackerError as err:  # a plain line's errors, and output that failed while click wrote it (help)
        return report(err)


def main(argv: list[str] | None = None) -> None:
    """Entry point for in-process callers (the console script is :func:`tracker.entry.main`); ends with
    ``sys.exit``.

    Without ``argv`` the process is ours and ends here: what exists by then lives until exit, so it is
    frozen out of the cyclic GC, whose scans of it during the command and in the interpreter's final
    collection cost ~20 ms of a ~200 ms ``tracker status``. With ``argv`` (in-process callers such as
    tests) the GC is left alone.
    """
    owns_process = argv is None
    if owns_process:
        _gc.freeze()
    try:
        code = run(argv)
    finally:
        if owns_process:
            _gc.freeze()  # what the command imported and built, too: the exit's collection scans nothing
    sys.exit(code)
