"""Issue 31, item 6: one vocabulary everywhere. ``done*`` (done over an unfinished dependency), "blocked, and also
failing N of its own gates" and "N gates undecided" are said alike by the plan regions, verify and ``--json``."""

from __future__ import annotations

from tracker.core.model import GateVerdict, Phase, PhaseStatus, Plan, Status, TestGate
from tracker.report.render import phase_body, status_data, status_phrase, summary_body

GATES = (TestGate("t.py::a"), TestGate("t.py::b"))
P1, P2 = Phase("P1", "one", gates=GATES), Phase("P2", "two", gates=GATES, depends=("P1",))
PLAN = Plan("0001", "p", "plans/0001-p.md", phases=(P1, P2))


def statuses(p1: Status, p2: Status, verdicts: tuple[GateVerdict, ...]) -> dict[str, PhaseStatus]:
    met = (GateVerdict(True, "1 passed"),) * 2
    return {
        "0001/P1": PhaseStatus("0001", "P1", p1, met),
        "0001/P2": PhaseStatus("0001", "P2", p2, verdicts, ("0001/P1",) if p2 is Status.BLOCKED else ()),
    }


def said(st: dict[str, PhaseStatus]) -> list[str]:
    """What the phrase, the summary table, the phase region and --json say of P2."""
    doc = status_data([PLAN], st)
    return [
        status_phrase(PLAN, P2, st),
        summary_body(PLAN, st).splitlines()[-1],
        phase_body(PLAN, 1, st["0001/P2"], st).splitlines()[1],
        doc["plans"][0]["phases"][1]["shown"],
    ]


def test_done_over_an_unfinished_dependency_is_done_star_everywhere() -> None:
    st = statuses(Status.STALE, Status.DONE, (GateVerdict(True, "1 passed"),) * 2)
    phrase, row, region, shown = said(st)
    assert phrase == shown == "done*"
    assert "**done\\***" in row and region.startswith("**Status: done\\*** — 2/2 gates met")


def test_blocked_and_failing_says_both_everywhere() -> None:
    failing = (GateVerdict(False, "failed: boom", failed=True), GateVerdict(False, "failed: bang", failed=True))
    st = statuses(Status.IN_PROGRESS, Status.BLOCKED, failing)
    phrase, row, region, shown = said(st)
    assert phrase == shown == "blocked, and also failing 2 of its own gates"
    assert "blocked, and also failing 2 of its own gates" in row and phrase in region


def test_an_undecided_gate_is_said_beside_a_done_status() -> None:
    undecided = (GateVerdict(True, "1 passed"), GateVerdict(True, "undecided: 1.2x ...", undecided=True))
    st = statuses(Status.DONE, Status.DONE, undecided)
    phrase, row, region, shown = said(st)
    assert phrase == shown == "done, 1 gate undecided"
    assert phrase in row and phrase in region
