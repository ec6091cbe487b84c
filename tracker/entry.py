"""The ``tracker`` console script and ``python -m tracker``.

``tracker status`` is the command run most (at the end of every work session), and importing typer is
more than half of its time (~110 ms of ~200 ms). So its plain forms, ``[--root DIR] status [PLAN]
[--json]``, go straight to :mod:`tracker.commands.status`; every other command line, help and errors
included, goes through the typer CLI (:mod:`tracker.cli`), which defines them all. Both report errors
through :func:`tracker.errors.report`, so the output and exit codes are the same either way (a test
compares them).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

# Import names of the third-party packages the tracker needs (pyproject's dependencies and theirs). A command run
# by a Python without them (not the virtualenv it was installed into) says so instead of printing a traceback.
DEPENDENCIES = frozenset({"typer", "click", "shellingham", "rich", "pydantic", "pydantic_core", "annotated_types",
                          "typing_inspection", "markdown_it", "mdurl", "git", "gitdb", "smmap"})


def status_args(args: list[str]) -> tuple[Path | None, str | None, bool] | None:
    """``(root, plan, as_json)`` when ``args`` is a plain status command line, else None."""
    raw: str | None = None
    if len(args) >= 2 and args[0] == "--root":
        raw, args = args[1], args[2:]
    elif args and args[0].startswith("--root="):
        raw, args = args[0][len("--root="):], args[1:]
    if not args or args[0] != "status" or raw == "":
        return None
    root = None if raw is None else Path(raw)
    plan: str | None = None
    as_json = False
    for arg in args[1:]:
        if arg == "--json" and not as_json:
            as_json = True
        elif plan is None and arg and not arg.startswith("-"):
            plan = arg
        else:
            return None  # help, an unknown option, a second plan: typer's to handle
    return root, plan, as_json


def main(argv: list[str] | None = None) -> None:
    """Run one command line (``sys.argv`` when ``argv`` is None); ends with ``sys.exit``."""
    try:
        _run(argv)
    except ModuleNotFoundError as err:
        package = (err.name or "").partition(".")[0]
        if package not in DEPENDENCIES:
            raise  # one of our own modules: a bug, kept as a traceback
        from tracker.errors import ExitCode

        print(f"tracker: error: the package {package!r} is not installed in this Python ({sys.executable}); "
              "install the tracker into it (`pip install .` in the repository, README) or run the `tracker` of "
              "the environment it was installed into", file=sys.stderr)
        sys.exit(ExitCode.MISSING_DEPENDENCY)


def _run(argv: list[str] | None) -> None:
    fast = status_args(sys.argv[1:] if argv is None else argv)
    if fast is None:
        from tracker.cli import main as cli_main

        cli_main(argv)
        return
    owns_process = argv is None
    if owns_process:
        gc.freeze()  # as tracker.cli.main: what lives until exit is kept out of the cyclic GC's scans
    from tracker.commands import status
    from tracker.errors import TrackerError, report
    from tracker.git import find_root

    root, plan, as_json = fast
    try:
        code = status.run(find_root(root), plan, as_json)
    except TrackerError as err:
        code = report(err)
    finally:
        if owns_process:
            gc.freeze()
    sys.exit(code)
