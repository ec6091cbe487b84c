"""Region bodies for plan files, and status as plain data (``--json``) — pure functions.

Rendered text holds nothing that changes between two runs on the same evidence (no "now"), so a
second ``tracker update`` writes nothing; nor anything that names the evidence (its file, machine, commit or
time), which every ``verify`` replaces: a region changes only when a status, a verdict or its reason does, so a
verify that changes none leaves the plan files as they are (``tracker status``, ``show`` and ``log`` name the
evidence).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tracker.core.checks import qualify
from tracker.core.model import BenchGate, EvidenceSource, Gate, ManualGate, Phase, PhaseStatus, Plan, Status
from tracker.errors import RegionEditedError
from tracker.plans.regions import Region, find_regions

_RECORDED = re.compile(r"^\*\*Status: ([a-z-]+)(?:\*\*|\\\*|,)", re.MULTILINE)  # done\*, "blocked, and ..."

MARK = {True: "✅", False: "❌"}


def gate_label(gate: Gate) -> str:
    """Short human description of a gate."""
    if isinstance(gate, ManualGate):
        return f"manual: {gate.manual}"
    if isinstance(gate, BenchGate):
        op, val = ("≥", gate.at_least) if gate.at_least is not None else ("≤", gate.at_most)
        where = " ".join(f"{k}={v}" for k, v in gate.where.items())
        # With a baseline the threshold is a ratio to the baseline case, oriented so that above 1 is better.
        ratio = "× vs " + " ".join(f"{k}={v}" for k, v in gate.baseline.items()) if gate.baseline else ""
        return f"bench `{gate.bench}` {gate.stat} {op} {val}{ratio}" + (f" ({where})" if where else "")
    label = f"test `{gate.test}`" + (f" -m `{gate.marker}`" if gate.marker else "")
    if gate.skips_allowed:  # quoted as JSON: one line whatever a reason holds
        label += ", skips allowed: " + ", ".join(json.dumps(why, ensure_ascii=False) for why in gate.skips_allowed)
    if gate.xfails_allowed:
        label += ", xfails allowed: " + ", ".join(json.dumps(why, ensure_ascii=False) for why in gate.xfails_allowed)
    return label


def _cell(text: str) -> str:
    """Plan or evidence text (a title, a gate, a failing test's message) as inert Markdown on one line: the one
    escaper of the Markdown report's ``|md`` (no HTML, comment, image, link or emphasis; a ``\\|`` cannot end the
    cell), its code spans kept."""
    from tracker.report.md_filters import md

    return md(text)


def dependencies_not_done(plan: Plan, phase: Phase, statuses: dict[str, PhaseStatus]) -> list[tuple[str, str | None]]:
    """``(PLAN/PHASE, status)`` of each dependency of ``phase`` that is not done; the status is None for a
    dependency without one (its plan file is invalid). A done, stale or regressed phase may rest on such a
    dependency (its own gates decide its status): status marks it."""
    out: list[tuple[str, str | None]] = []
    for dep in (qualify(plan.id, d) for d in phase.depends):
        st = statuses.get(dep)
        if st is None or st.status != Status.DONE:
            out.append((dep, None if st is None else st.status.value))
    return out


def status_word(plan: Plan, phase: Phase, statuses: dict[str, PhaseStatus]) -> str:
    """The status as every view says it: ``done*`` for a done phase whose dependency is not done (its own gates
    decide its status; the star says it rests on something unfinished), else the status itself."""
    st = statuses[f"{plan.id}/{phase.id}"]
    return "done*" if st.status is Status.DONE and dependencies_not_done(plan, phase, statuses) else st.status.value


def status_phrase(plan: Plan, phase: Phase, statuses: dict[str, PhaseStatus]) -> str:
    """:func:`status_word` with what the word alone hides, in every view alike: ``blocked, and also failing 11 of its
    own gates``; ``done, 1 gate undecided`` (a bench gate whose newest run could not decide)."""
    st = statuses[f"{plan.id}/{phase.id}"]
    word = status_word(plan, phase, statuses)
    failing = sum(v.failed for v in st.verdicts)
    if st.status is Status.BLOCKED and failing:
        word += f", and also failing {failing} of its own gate{'' if failing == 1 else 's'}"
    undecided = sum(v.undecided for v in st.verdicts)
    if undecided:
        word += f", {undecided} gate{'' if undecided == 1 else 's'} undecided"
    return word


def summary_body(plan: Plan, statuses: dict[str, PhaseStatus]) -> str:
    """The table near the top of a plan file."""
    rows = ["| Phase | Status | Gates met |", "| --- | --- | --- |"]
    for ph in plan.phases:
        st = statuses[f"{plan.id}/{ph.id}"]
        status = _cell(status_phrase(plan, ph, statuses)) + (
            f" ({_cell(', '.join(st.blocked_by))})" if st.blocked_by else ""
        )
        rows.append(f"| {_cell(ph.id)} · {_cell(ph.title)} | **{status}** | {st.met_count} |")
    if not plan.phases:
        rows.append("| — | no phases yet | — |")
    return "\n".join(["", *rows, ""])


def phase_body(plan: Plan, phase_index: int, st: PhaseStatus, statuses: dict[str, PhaseStatus] | None = None) -> str:
    """The status block written right after a phase block (``statuses``: every phase's, for ``done*`` and the
    rest of :func:`status_phrase`; the status word alone without them)."""
    phase = plan.phases[phase_index]
    said = _cell(status_phrase(plan, phase, statuses)) if statuses is not None else st.status.value
    head = f"**Status: {said}** — {st.met_count} gates met"
    lines = ["", head + (f"; {_cell(st.note)}" if st.note else ""), ""]
    if phase.gates:
        lines += ["| # | Gate | Verdict |", "| --- | --- | --- |"]
        for i, (gate, v) in enumerate(zip(phase.gates, st.verdicts, strict=True), 1):
            lines.append(f"| {i} | {_cell(gate_label(gate))} | {MARK[v.met]} {_cell(v.reason)} |")
    else:
        lines.append("No gates yet: a phase without gates is never done.")
    lines.append("")
    return "\n".join(lines)


def recorded_statuses(plan: Plan, text: str) -> dict[str, str]:
    """Status each phase's region in the plan file shows (what the last ``update`` wrote).

    Hand-edited or broken regions are skipped: ``update`` reports those.
    """
    try:
        places = {"summary": plan.end_line, **{f"phase:{ph.id}": ph.end_line for ph in plan.phases}}
        regions = find_regions(text, plan.path, places)
    except RegionEditedError:
        return {}
    out = {}
    for key, found in regions.items():
        m = _RECORDED.search(found.body) if key.startswith("phase:") else None
        if m:
            out[f"{plan.id}/{key.removeprefix('phase:')}"] = m.group(1)
    return out


def plan_regions(plan: Plan, statuses: dict[str, PhaseStatus]) -> list[Region]:
    """Every region a plan file should hold: its summary and one block per phase."""
    regions = [Region("summary", summary_body(plan, statuses), plan.end_line)]
    for i, ph in enumerate(plan.phases):
        regions.append(
            Region(f"phase:{ph.id}", phase_body(plan, i, statuses[f"{plan.id}/{ph.id}"], statuses), ph.end_line)
        )
    return regions


def status_data(
    plans: list[Plan], statuses: dict[str, PhaseStatus], recorded: dict[str, str] | None = None
) -> dict[str, Any]:
    """The ``tracker status --json`` document (shape documented in docs/reference.md)."""
    recorded = recorded or {}

    def src(s: EvidenceSource | None) -> dict[str, Any] | None:
        return None if s is None else {"file": s.file, "machine": s.machine, "commit": s.commit, "time": s.time}

    return {
        "plans": [
            {
                "id": plan.id,
                "title": plan.title,
                "path": plan.path,
                "milestone": plan.milestone,
                "phases": [
                    {
                        "id": ph.id,
                        "title": ph.title,
                        "status": (st := statuses[f"{plan.id}/{ph.id}"]).status.value,
                        "shown": status_phrase(plan, ph, statuses),  # done*, blocked and failing, undecided
                        "recorded_status": recorded.get(f"{plan.id}/{ph.id}"),
                        "blocked_by": list(st.blocked_by),
                        "dependencies_not_done": [
                            {"id": dep, "status": status} for dep, status in dependencies_not_done(plan, ph, statuses)
                        ],
                        "changed": list(st.changed),
                        "note": st.note,
                        "gates": [
                            {
                                "index": i,
                                "kind": type(g).__name__.removesuffix("Gate").lower(),
                                "definition": g.definition,
                                "met": v.met,
                                "failed": v.failed,
                                "undecided": v.undecided,
                                "reason": v.reason,
                                "source": src(v.source),
                            }
                            for i, (g, v) in enumerate(zip(ph.gates, st.verdicts, strict=True), 1)
                        ],
                    }
                    for ph in plan.phases
                ],
            }
            for plan in plans
        ]
    }
