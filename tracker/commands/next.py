"""``tracker next``: phases that are not done and whose dependencies are all done.

``--json`` prints one object::

    {"plans_dir": "/abs/repo/plans", "plans": 2, "phases": 7, "done": 3, "blocked": 2,
     "next": [{"id": "0001/P3", "status": "in-progress", "title": "...", "path": "plans/0001-x.md", "line": 40}],
     "invalid": [{"path": "plans/0002-y.md", "id": "0002", "problems": ["plans/0002-y.md:9: ..."]}]}

``plans_dir`` is where plan files were looked for (``NNNN-slug.md`` in it), ``plans``/``phases`` how many
valid ones were found, ``done``/``blocked`` how many phases have that status, ``next`` the workable phases
in plan order (``line``: the phase block's opening fence), ``invalid`` the plan files that are not valid
(:class:`tracker.plans.load.InvalidPlan`; ``id`` null when none validated). Exit 0, no plans included; with an
invalid plan file, the valid plans' phases are listed (a dependency into the invalid plan blocks), then
every problem goes to stderr and the exit code is 2 (8 when a plan file cannot be read).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from tracker.commands.common import json_text
from tracker.core.checks import qualify
from tracker.core.model import PhaseStatus, Plan, Status
from tracker.plans.load import load_plan_set


def workable(plans: list[Plan], statuses: dict[str, PhaseStatus]) -> list[dict[str, Any]]:
    """Phases not done whose dependencies are all done, in plan order, as the JSON rows."""
    rows: list[dict[str, Any]] = []
    for plan in plans:
        for ph in plan.phases:
            st = statuses[f"{plan.id}/{ph.id}"]
            # A dependency into an invalid plan has no status: not done.
            deps_done = all(
                getattr(statuses.get(qualify(plan.id, d)), "status", None) == Status.DONE for d in ph.depends
            )
            if st.status != Status.DONE and deps_done:
                rows.append(
                    {
                        "id": f"{plan.id}/{ph.id}",
                        "status": st.status.value,
                        "title": ph.title,
                        "path": plan.path,
                        "line": ph.line,
                    }
                )
    return rows


def nothing_to_do(root: Path, plans: list[Plan], statuses: dict[str, PhaseStatus], invalid: int = 0) -> str:
    """Why ``next`` lists nothing: no plans (and where it looked), no valid plans, no phases, or every phase
    done (the dependencies of valid plans have no cycle, so some phase not done always has its dependencies
    done)."""
    where = root / "plans"
    if not plans and invalid:
        return f"nothing to do: no valid plan ({invalid} invalid plan file(s), see `tracker lint`)"
    if not plans:
        found = "does not exist" if not where.exists() else "holds no plan file (NNNN-slug.md)"
        return f"no plans: {where} {found}; `tracker new TITLE` creates one"
    if not statuses:
        return f"nothing to do: the {len(plans)} plan(s) have no phases"
    return f"nothing to do: all {len(statuses)} phase(s) are done"


def run(root: Path, out: TextIO | None = None, as_json: bool = False) -> int:
    """List workable phases as ``PLAN/PHASE  status  title`` (or the JSON above); exit 0, or the plan set's
    error (exit 2 or 8) after listing what the valid plans allow."""
    from tracker.store.derive import derive

    out = out or sys.stdout
    plan_set = load_plan_set(root)
    plans = plan_set.plans
    statuses = derive(root, plans) if plans else {}
    rows = workable(plans, statuses)
    if as_json:
        count = {s: sum(st.status == s for st in statuses.values()) for s in (Status.DONE, Status.BLOCKED)}
        invalid = [{"path": i.path, "id": i.id, "problems": i.problems} for i in plan_set.invalid]
        doc = {
            "plans_dir": str(root / "plans"),
            "plans": len(plans),
            "phases": len(statuses),
            "done": count[Status.DONE],
            "blocked": count[Status.BLOCKED],
            "next": rows,
            "invalid": invalid,
        }
        out.write(json_text(out, doc, indent=None) + "\n")
    else:
        width = max((len(r["id"]) for r in rows), default=0)
        for r in rows:
            out.write(f"{r['id']:<{width}}  {r['status']:<11}  {r['title']}\n")
        if not rows:
            out.write(nothing_to_do(root, plans, statuses, len(plan_set.invalid)) + "\n")
    err = plan_set.error()
    if err is not None:
        raise err
    return 0
