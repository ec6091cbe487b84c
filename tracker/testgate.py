"""Verdicts of test gates and manual gates from the evidence store (pure functions).

A test's outcome for a gate comes from the newest evidence where it actually ran (passed,
failed, error, xfailed, xpassed); a skip or deselection never meets nor un-meets a gate that
earlier evidence decided. The set of tests a gate covers comes from the newest run that
collected anything under its pytest argument (or that ``tracker verify`` ran for this gate).
"""

from __future__ import annotations

import bisect
from typing import Any

from tracker.evidence import RAN, Store, TestRun
from tracker.model import EvidenceSource, GateVerdict, ManualGate, TestGate, gate_hash
from tracker.selection import marker_matches, selects


def source_of(run: TestRun) -> EvidenceSource:
    """Where a verdict drawn from ``run`` came from."""
    commit = run.provenance.get("commit")
    return EvidenceSource(run.file, str(run.provenance.get("host", "?")), commit, run.time)


class TestIndex:
    """Per-nodeid history over the complete runs, newest first."""

    __test__ = False

    def __init__(self, store: Store) -> None:
        self.runs = list(reversed(store.runs))
        self.history: dict[str, list[tuple[TestRun, dict[str, Any]]]] = {}
        # Per run: records sorted by node id (prefix queries by bisect) and file-level records.
        self.sorted: dict[str, tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]] = {}
        for run in self.runs:
            recs = sorted(run.tests, key=lambda r: r["nodeid"])
            self.sorted[run.file] = ([r["nodeid"] for r in recs], recs, [r for r in recs if "::" not in r["nodeid"]])
            for rec in run.tests:
                self.history.setdefault(rec["nodeid"], []).append((run, rec))

    def _matching(self, run: TestRun, arg: str) -> list[dict[str, Any]]:
        ids, recs, file_level = self.sorted[run.file]
        # Every node id the argument selects starts with the normalized argument itself.
        prefix = arg.removeprefix("./").rstrip("/")
        out = [r for r in file_level if selects(arg, r["nodeid"]) and not r["nodeid"].startswith(prefix)]
        for i in range(bisect.bisect_left(ids, prefix), len(ids)):
            if not ids[i].startswith(prefix):
                break
            if selects(arg, ids[i]):
                out.append(recs[i])
        return out

    def selection(self, key: str, gate: TestGate) -> tuple[TestRun | None, list[dict[str, Any]]]:
        """(the run that defines the gate's test set, the records it selects)."""
        for run in self.runs:
            recs = self._matching(run, gate.test)
            if recs or key in run.gates:
                return run, [r for r in recs if marker_matches(gate.marker, r.get("markers", []))]
        return None, []

    def verdict(self, key: str, gate: TestGate) -> tuple[GateVerdict, bool]:
        """(verdict, was met at some time) for test gate ``key`` ("PLAN/PHASE#N")."""
        run, recs = self.selection(key, gate)
        if run is None:
            return GateVerdict(False, "no evidence: never run"), False
        if not recs:
            what = f"-m {gate.marker!r} selects 0 tests" if gate.marker else "0 tests collected"
            return GateVerdict(False, f"{what} (an empty gate is unmet)", source_of(run), failed=True), False
        passed, first_bad, sources, ever = 0, None, [], True
        for rec in recs:
            hist = self.history.get(rec["nodeid"], [])
            ran = next(((r, x) for r, x in hist if x["outcome"] in RAN), None)
            ever = ever and any(x["outcome"] == "passed" for _, x in hist)
            if ran is not None and ran[1]["outcome"] == "passed":
                passed += 1
                sources.append(ran[0])
                continue
            if first_bad is None:
                newest = ran or (hist[0] if hist else (run, rec))
                first_bad = (newest[0], newest[1])
        if first_bad is None:
            newest_run = max(sources, key=lambda r: (r.time, r.file))
            return GateVerdict(True, f"{passed} passed", source_of(newest_run)), True
        bad_run, bad = first_bad
        outcome, reason = bad["outcome"], bad.get("reason") or ""
        detail = f"{outcome}: {reason}" if reason else outcome
        if outcome == "notrun":
            detail = "collected but not run"
        who = "" if bad["nodeid"] == gate.test.removeprefix("./") else f"{bad['nodeid']}: "
        text = f"{who}{detail}" + (f" ({len(recs) - passed} of {len(recs)} not passing)" if len(recs) > 1 else "")
        failed = outcome in ("failed", "error", "xpassed")
        return GateVerdict(False, text, source_of(bad_run), failed=failed), ever


def manual_verdict(key: str, gate: ManualGate, store: Store) -> tuple[GateVerdict, dict[str, Any] | None]:
    """The newest sign-off recorded for gate ``key``; (verdict, the sign-off's data)."""
    for file, data in reversed(store.signoffs):
        if data.get("gate_key") == key:
            src = EvidenceSource(file, str(data.get("host", "?")), data.get("commit"), str(data.get("time", "")))
            return GateVerdict(True, f"signed off by {data.get('by')}: {data.get('why')}", src), data
    return GateVerdict(False, "no sign-off recorded (tracker signoff)"), None


def gate_changed(key: str, gate: TestGate | ManualGate, recorded: dict[str, str]) -> bool:
    """Did the gate's definition change since evidence that recorded its hash?"""
    return key in recorded and recorded[key] != gate_hash(gate)
