"""Each test's record in the evidence file (``tests``: outcome, reason, duration, markers, the order it ran in), made
from pytest's reports (part of :mod:`tracker.pytest_plugin`; rule: :mod:`tracker.plugin`); and the helpers that read
node ids, markers and reports."""

from __future__ import annotations

from typing import Any

import pytest

from tracker.base.subtests import FAILING, Subtests, subtest_name

# The class names of a subtest's report: pytest 9's own, and pytest-subtests' (before pytest 9).
SUBTEST_REPORTS = ("SubtestReport", "SubTestReport")


class Outcomes:
    """The tests' records, by node id: one per test collected, deselected or reported, and one per file that failed
    to collect or was skipped at collection."""

    def __init__(self) -> None:
        self.tests: dict[str, dict[str, Any]] = {}
        self.subtests: dict[str, Subtests] = {}  # what the subtests of each test that has any said
        self._order = 0  # the next test's place in the order the tests ran in (a record's ``order``)

    def record(self, nodeid: str, markers: list[str] | None = None) -> dict[str, Any]:
        """The record of ``nodeid`` (made ``notrun`` with ``markers`` when there is none yet)."""
        rec = self.tests.get(nodeid)
        if rec is None:
            rec = self.tests[nodeid] = {
                "nodeid": nodeid,
                "outcome": "notrun",
                "reason": "",
                "duration": 0.0,
                "markers": markers or [],
            }
        return rec

    def collect_report(self, report: pytest.CollectReport) -> None:
        """A collector's report: a file (or the rootdir) that failed to collect is an error, one skipped at collection
        is skipped."""
        if report.failed:
            rec = self.record(report.nodeid or ".")
            rec.update(outcome="error", reason="collection error: " + _reason(report))
        elif report.skipped and report.nodeid:  # skipped at collection (importorskip, allow_module_level): the
            # tests it holds are unknown here, and the tracker keeps those other runs recorded (tracker.core.testgate)
            self.record(report.nodeid).update(outcome="skipped", reason=_reason(report))

    def report(self, report: pytest.TestReport) -> None:
        """A test's own report (setup, call, teardown; xdist's for a test whose worker died)."""
        rec = self.record(report.nodeid)
        if "order" not in rec:  # its first report: the order tests ran in, per xdist worker (tracker.core.testgate)
            rec["order"], self._order = self._order, self._order + 1
            worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
            if isinstance(worker, str):
                rec["worker"] = worker
        rec["duration"] = round(rec["duration"] + report.duration, 6)
        if rec["outcome"] in FAILING and not report.failed:  # a failing report fails the test whatever comes after
            return
        xfail = hasattr(report, "wasxfail")
        if report.when not in ("setup", "call", "teardown"):  # xdist's report of a test whose worker died ("???")
            said = [line.strip() for line in str(report.longrepr).splitlines() if line.strip()]  # xdist's one line
            rec.update(outcome="error", reason="crashed: " + _short(said[-1] if said else "its worker died"))
        elif report.when == "setup":
            if report.failed:
                rec.update(outcome="error", reason="setup error: " + _reason(report))
            elif report.skipped:
                rec.update(
                    outcome="xfailed" if xfail else "skipped", reason=_reason(report) if not xfail else report.wasxfail
                )
        elif report.when == "call":
            if report.passed:
                rec.update(outcome="xpassed" if xfail else "passed", reason="")
            elif report.failed:
                rec.update(outcome="failed", reason=_reason(report))
            else:
                rec.update(
                    outcome="xfailed" if xfail else "skipped", reason=report.wasxfail if xfail else _reason(report)
                )
        elif report.failed:  # teardown error: whatever happened before, the test did not pass cleanly
            rec.update(outcome="error", reason="teardown error: " + _reason(report))

    def subtest(self, report: pytest.TestReport) -> None:
        """A subtest's report (unittest's ``subTest``, the ``subtests`` fixture): kept apart from its test's own, whose
        "passed" comes after it, until the session's end (:meth:`settle`). Its duration is part of its test's
        call's."""
        self.record(report.nodeid)
        if report.passed:
            return
        xfail = hasattr(report, "wasxfail")
        outcome = "failed" if report.failed else "xfailed" if xfail else "skipped"
        reason = str(report.wasxfail or _reason(report)) if xfail else _reason(report)
        context = getattr(report, "context", None)
        name = subtest_name(getattr(context, "msg", None), getattr(context, "kwargs", None))
        self.subtests.setdefault(report.nodeid, Subtests()).add(outcome, name, reason)

    def settle(self) -> None:
        """At the session's end: a failed subtest fails its test (:meth:`tracker.base.subtests.Subtests.verdict`)."""
        for nodeid, subtests in self.subtests.items():
            rec = self.record(nodeid)
            rec["outcome"], rec["reason"] = subtests.verdict(rec["outcome"], rec["reason"])

    def in_order(self) -> list[dict[str, Any]]:
        """The records, by node id (the evidence file's ``tests``)."""
        return sorted(self.tests.values(), key=lambda r: r["nodeid"])


def _markers(item: pytest.Item) -> list[str]:
    return sorted({m.name for m in item.iter_markers()})


def _dropped(before: list[pytest.Item], after: list[pytest.Item], deselected: set[int]) -> int:
    """How many of the items ``before`` the collection hooks ran are gone from ``after`` without having been
    deselected (``pytest_deselected``): dropped silently."""
    kept = {id(i) for i in after}
    return sum(1 for i in before if id(i) not in kept and id(i) not in deselected)


def _file_of(nodeid: str) -> str:
    """The file part of a node id (what pytest reports a file it could not collect as)."""
    return nodeid.split("::", 1)[0]


def _short(text: str, limit: int = 200) -> str:
    line = next((s.strip() for s in text.strip().splitlines() if s.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """A one-line reason: the skip message, or the failure's crash line."""
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:  # skips are (file, line, "Skipped: why")
        return _short(str(lr[2]).removeprefix("Skipped: "))
    if isinstance(report, pytest.CollectReport):  # import errors: the last "E   ..." line says what broke
        errors = [line[1:].strip() for line in (report.longreprtext or "").splitlines() if line.startswith("E ")]
        if errors:
            return _short(errors[-1])
    crash = getattr(lr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _short(crash.message)
    return _short(report.longreprtext or "")
