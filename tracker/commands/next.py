"""``tracker next``: phases that are not done and whose dependencies are all done."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from tracker.checks import qualify
from tracker.model import Status
from tracker.plans import load_plans
from tracker.status import derive


def run(root: Path, out: TextIO | None = None) -> int:
    """List workable phases as ``PLAN/PHASE  status  title``; exit 0."""
    out = out or sys.stdout
    _, plans = load_plans(root)
    statuses = derive(root, plans)
    rows: list[tuple[str, str, str]] = []
    for plan in plans:
        for ph in plan.phases:
            st = statuses[f"{plan.id}/{ph.id}"]
            deps_done = all(statuses[qualify(plan.id, d)].status == Status.DONE for d in ph.depends)
            if st.status != Status.DONE and deps_done:
                rows.append((f"{plan.id}/{ph.id}", st.status.value, ph.title))
    width = max((len(key) for key, _, _ in rows), default=0)
    for key, status, title in rows:
        out.write(f"{key:<{width}}  {status:<11}  {title}\n")
    if not rows:
        out.write("nothing to do: every phase is done or blocked\n")
    return 0
