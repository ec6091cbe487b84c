"""``tracker status``: every plan and phase with its derived status; never runs tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from tracker.commands.common import select
from tracker.model import PhaseStatus, Plan, Status
from tracker.plans import load_plans
from tracker.render import recorded_statuses
from tracker.status import derive

COLOR = {
    Status.DONE: "32", Status.IN_PROGRESS: "33", Status.BLOCKED: "35",
    Status.REGRESSED: "31;1", Status.STALE: "36", Status.PLANNED: "2",
}  # fmt: skip


def _note(st: PhaseStatus) -> str:
    if st.note:
        return st.note
    bad = next((v for v in st.verdicts if not v.met), None)
    if bad is None:
        return ""
    where = f" [{bad.source.machine}]" if bad.source else ""
    return f"gate {st.verdicts.index(bad) + 1}: {bad.reason}{where}"


def table(plans: list[Plan], statuses: dict[str, PhaseStatus], color: bool, recorded: dict[str, str] | None = None) -> str:
    """The compact plain-text table: one line per plan, one per phase (status, gates met, the
    machines its verdicts came from, note).

    ``recorded``: the status each phase's plan-file region shows; a difference is what changed
    since the last ``tracker update`` and is called out ("was done").
    """
    recorded = recorded or {}
    lines = []
    width = max((len(ph.id) for p in plans for ph in p.phases), default=2)
    for plan in plans:
        lines.append(f"{plan.id}  {plan.title}  ({plan.path})")
        for ph in plan.phases:
            st = statuses[f"{plan.id}/{ph.id}"]
            word = f"{st.status.value:<11}"
            if color:
                word = f"\x1b[{COLOR[st.status]}m{word}\x1b[0m"
            note = _note(st)
            machines = ", ".join(dict.fromkeys(v.source.machine for v in st.verdicts if v.source))  # where its verdicts came from
            was = recorded.get(f"{plan.id}/{ph.id}")
            if was is not None and was != st.status.value:
                note = f"was {was} in the plan file; " + note if note else f"was {was} in the plan file"
            lines.append(f"  {ph.id:<{width}}  {word}  {st.met_count:>5}  {ph.title}" + (f"  [{machines}]" if machines else "") + (f"  — {note}" if note else ""))
    return "\n".join(lines)


def _json_for(out: TextIO, data: object) -> str:
    """``data`` as JSON that ``out`` can carry as it is: readable UTF-8 where the stream's encoding has every
    character, else ASCII with ``\\u`` escapes (a latin-1 or ASCII locale, a file name that is not UTF-8),
    so what a program reads is valid JSON either way."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return json.dumps(data, indent=2)
    return text


def run(root: Path, plan: str | None = None, as_json: bool = False, out: TextIO | None = None) -> int:
    """Print the status of every plan (or of one plan); exit 0: status informs, it does not check."""
    out = out or sys.stdout
    files, plans = load_plans(root)
    statuses = derive(root, plans)  # all plans: dependencies may live in other plans
    if plan is not None:
        select(plans, [plan])  # UsageError for an unknown id
        plans = [p for p in plans if p.id == plan.split("/")[0]]
    if not plans and not as_json:
        out.write(f"no plans yet: add plans/NNNN-slug.md (tracker new TITLE) under {root}\n")
        return 0
    shown = {p.id for p in plans}
    recorded = {k: v for f in files if f.plan is not None and f.plan.id in shown for k, v in recorded_statuses(f.plan, f.text).items()}
    if as_json:
        from tracker.render import status_data

        out.write(_json_for(out, status_data(plans, statuses, recorded)) + "\n")
    else:
        out.write(table(plans, statuses, out.isatty(), recorded) + "\n")
    return 0
