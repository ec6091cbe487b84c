"""``tracker update [--check] [--diff] [--force]``: rewrite the generated regions of plan files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from tracker.commands.common import select
from tracker.errors import ExitCode
from tracker.fileio import repo_lock, write_text_if_changed
from tracker.plans import PlanFile, load_plans
from tracker.regions import rewrite
from tracker.render import plan_regions
from tracker.status import derive


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff of one file's old and new text."""
    import difflib

    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def pending(root: Path, force: bool = False, only: list[str] | None = None) -> list[tuple[PlanFile, str]]:
    """(plan file, new text) for every plan file (or those of the plan ids in ``only``) whose
    regions are out of date. Statuses are always derived from every plan (cross-plan dependencies)."""
    files, plans = load_plans(root)
    if only:
        select(plans, only)  # UsageError for an unknown plan id
    statuses = derive(root, plans)
    out = []
    for f in files:
        assert f.plan is not None  # load_plans raised otherwise
        if only and f.plan.id not in {spec.split("/")[0] for spec in only}:
            continue
        new = rewrite(f.text, plan_regions(f.plan, statuses), f.path, force=force)
        if new != f.text:
            out.append((f, new))
    return out


def run(
    root: Path, check: bool = False, diff: bool = False, force: bool = False, out: TextIO | None = None, plans: list[str] | None = None
) -> int:
    """Write regions (or with ``check`` only report): exit 1 when ``check`` finds files out of date."""
    out = out or sys.stdout
    if check:
        stale = pending(root, force, plans)
        for f, new in stale:
            out.write(unified_diff(f.path, f.text, new))
        if stale:
            out.write(f"{len(stale)} plan file(s) out of date: {', '.join(f.path for f, _ in stale)} (run `tracker update`)\n")
            return int(ExitCode.CHECK_FAILED)
        out.write("plan files are up to date\n")
        return 0
    with repo_lock(root):  # read, derive and write under one lock: concurrent runs serialize
        changes = pending(root, force, plans)
        for f, new in changes:
            write_text_if_changed(root / f.path, f.text, new)
            if diff:
                out.write(unified_diff(f.path, f.text, new))
    out.write(f"updated {len(changes)} plan file(s)" + (f": {', '.join(f.path for f, _ in changes)}" if changes else "") + "\n")
    return 0
