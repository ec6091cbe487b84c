"""``tracker check``: for CI; fails on a regressed phase or on plan files whose regions are out of date."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from tracker.commands.update import pending
from tracker.errors import ExitCode
from tracker.history import regressions
from tracker.plans import load_plans
from tracker.status import derive


def run(root: Path, out: TextIO | None = None) -> int:
    """Print one line per problem; exit 1 (CHECK_FAILED) when there is any, else 0."""
    out = out or sys.stdout
    _, plans = load_plans(root)
    problems = regressions(derive(root, plans))
    problems += [f"{f.path}: generated regions out of date (run `tracker update`)" for f, _ in pending(root)]
    for line in problems:
        out.write(line + "\n")
    if problems:
        out.write(f"tracker check: {len(problems)} problem(s)\n")
        return int(ExitCode.CHECK_FAILED)
    out.write("tracker check: no regressions, plan files up to date\n")
    return 0
