"""``tracker check``: for CI; fails on a regressed phase, on plan files whose regions are out of date
or were edited by hand, or on an invalid benchmark result file in the repository or an unreadable file in
the evidence store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from tracker.errors import ExitCode, RegionEditedError
from tracker.history import regressions
from tracker.plans import load_plans
from tracker.regions import rewrite
from tracker.render import plan_regions
from tracker.status import derive


def run(root: Path, out: TextIO | None = None) -> int:
    """Print one line per problem; exit 1 (CHECK_FAILED) when there is any, else 0."""
    out = out or sys.stdout
    files, plans = load_plans(root)
    statuses = derive(root, plans)
    problems = regressions(statuses)
    from tracker.evidence import load as load_store
    from tracker.results import load_repo_results, repo_result_files

    invalid = load_store(root, strict=False).invalid  # unreadable store files: every test and bench gate unmet
    problems += [f"invalid evidence file, fix or remove it: {line}" for line in invalid]
    listed = {line.split(": ", 1)[0] for line in invalid}
    if repo_result_files(root):  # invalid result files make every bench gate unmet: say which
        problems += [f"{err}" for err in load_repo_results(root, strict=False).errors if err.path not in listed]
    for f in files:
        assert f.plan is not None  # load_plans raised otherwise
        try:
            stale = rewrite(f.text, plan_regions(f.plan, statuses), f.path) != f.text
        except RegionEditedError as err:  # one problem among others, not the end of the check
            problems.append(str(err))
            continue
        if stale:
            problems.append(f"{f.path}: generated regions out of date (run `tracker update`)")
    for line in problems:
        out.write(line + "\n")
    if problems:
        out.write(f"tracker check: {len(problems)} problem(s)\n")
        return int(ExitCode.CHECK_FAILED)
    out.write("tracker check: no regressions, plan files up to date\n")
    return 0
