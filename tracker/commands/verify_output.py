"""Saying ``tracker verify``'s verdicts: one line per gate and per phase (:func:`_print_verdicts`,
:func:`phase_summary`), or the ``--json`` object (:func:`verdict_document`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from tracker.commands.common import inert
from tracker.commands.verify_judge import GateLine
from tracker.commands.verify_sessions import _Session
from tracker.core.model import GateVerdict, Phase, PhaseStatus, Plan

MARK = {"met": "met  ", "unmet": "UNMET", "stale": "STALE"}


def _print_verdicts(
    root: Path,
    chosen: list[tuple[Plan, Phase]],
    statuses: dict[str, PhaseStatus],
    gates: list[GateLine],
    session: _Session,
    out: TextIO,
) -> None:
    for g in gates:
        out.write(f"{MARK[g.verdict]} {inert(g.key)} {inert(g.label)}: {inert(g.reason)}\n")
    for file in session.files() or (None,):
        out.write(f"tracker: evidence {file.relative_to(root).as_posix() if file else '(none: nothing to run)'}\n")
    by_phase: dict[str, list[GateLine]] = {}
    for g in gates:
        by_phase.setdefault(g.key.partition("#")[0], []).append(g)
    for plan, phase in chosen:
        key = f"{plan.id}/{phase.id}"
        from tracker.report.render import status_phrase  # the status as every view says it (done*, ...)

        shown = status_phrase(plan, phase, statuses)
        out.write(f"tracker: {inert(phase_summary(key, statuses[key], by_phase.get(key, []), shown))}\n")


def phase_summary(key: str, st: PhaseStatus, gates: list[GateLine], shown: str | None = None) -> str:
    """``0001/P1 is done``, or what keeps it from being done: ``0001/P1 is in-progress: its test gates passed,
    but gate 2 (manual) is not signed off``. ``shown``: the status as every view says it
    (:func:`tracker.report.render.status_phrase`: ``done*``, ``blocked, and also failing 2 of its own gates``)."""
    word = shown or st.status.value
    if not gates:
        return f"{key} is {word}: it has no gates, so it is never done"
    left = [g for g in gates if g.verdict != "met"]
    if not left:
        return f"{key} is {word}"
    tests = [g for g in gates if g.kind == "test"]
    passed = (
        ("its test gate passed, but " if len(tests) == 1 else "its test gates passed, but ")
        if tests and all(g.verdict == "met" for g in tests)
        else ""
    )
    said = {("unmet", "manual"): "not signed off", ("stale", "manual"): "signed off on what has changed since"}
    what = ", ".join(f"gate {g.number} ({g.kind}) is {said.get((g.verdict, g.kind), g.verdict)}" for g in left)
    blocked = f"; blocked by {', '.join(st.blocked_by)}" if st.blocked_by else ""
    return f"{key} is {word}, not done: {passed}{what}{blocked}"


def verdict_document(
    root: Path,
    chosen: list[tuple[Plan, Phase]],
    statuses: dict[str, PhaseStatus],
    gates: list[GateLine],
    session: _Session,
    warnings: list[str],
    code: int,
) -> dict[str, Any]:
    """The ``tracker verify --json`` object (docs/reference.md): the exit code, this run's evidence file, the test
    gates it ran and those it did not re-run, and per selected phase its status, a one-line summary and every gate's
    verdict (``met``/``unmet``/``stale``) with its reason, what made it stale and its evidence's source."""

    def src(v: GateVerdict) -> dict[str, Any] | None:
        s = v.source
        return None if s is None else {"file": s.file, "machine": s.machine, "commit": s.commit, "time": s.time}

    by_phase: dict[str, list[GateLine]] = {}
    for g in gates:
        by_phase.setdefault(g.key.partition("#")[0], []).append(g)
    from tracker.report.render import status_phrase

    phases = []
    for plan, phase in chosen:
        key = f"{plan.id}/{phase.id}"
        st = statuses[key]
        phases.append(
            {
                "plan": plan.id,
                "id": phase.id,
                "status": st.status.value,
                "shown": (shown := status_phrase(plan, phase, statuses)),
                "summary": phase_summary(key, st, by_phase.get(key, []), shown),
                "blocked_by": list(st.blocked_by),
                "changed": list(st.changed),
                "note": st.note,
                "gates": [
                    {
                        "key": g.key,
                        "index": g.number,
                        "kind": g.kind,
                        "definition": g.gate.definition,
                        "verdict": g.verdict,
                        "failed": g.v.failed and g.verdict == "unmet",
                        "reason": g.reason,
                        "stale": g.stale,
                        "source": src(g.v),
                    }
                    for g in by_phase.get(key, [])
                ],
            }
        )
    return {
        "exit": code,
        "evidence": session.evidence.relative_to(root).as_posix() if session.evidence else None,
        "evidence_files": [f.relative_to(root).as_posix() for f in session.files()],
        "ran": session.ran,
        "not_rerun": session.fresh,
        "phases": phases,
        "warnings": warnings,
    }
