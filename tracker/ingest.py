"""Read evidence produced elsewhere: pytest-reportlog JSON lines, JUnit XML, benchmark result files.

Pure parsing (files in, typed runs out); copying into the store is :mod:`tracker.commands.ingest`.
Per-test outcomes use the evidence vocabulary: passed, failed, skipped, xfailed, xpassed, error.
A reportlog without ``SessionFinish`` (a crash) or with an interrupted exit status is ``complete=False``
and must never count as a pass; of a crash, the test it stopped inside (``crashed_in``) counts as an
error, as for the plugin's own crashed runs. JUnit XML loses information; what it lost is listed in ``losses``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracker.errors import FileError

INTERRUPTED_EXIT = 2  # pytest.ExitCode.INTERRUPTED
INTERNAL_ERROR_EXIT = 3  # pytest.ExitCode.INTERNAL_ERROR
REASON_CHARS = 200


class IngestError(FileError):
    """An evidence file that cannot be read, rendered ``path[:line]: reason``."""


@dataclass
class TestOutcome:
    """The combined outcome of one test over its setup, call and teardown phases."""

    __test__ = False

    nodeid: str
    outcome: str = "passed"
    reason: str = ""
    duration: float = 0.0
    markers: set[str] = field(default_factory=set)


@dataclass
class TestRun:
    """One pytest session read from a file produced elsewhere."""

    __test__ = False

    source: str
    kind: str  # "reportlog" | "junit"
    outcomes: list[TestOutcome] = field(default_factory=list)
    complete: bool = True
    why_incomplete: str = ""
    pytest_version: str | None = None
    exitstatus: int | None = None
    losses: list[str] = field(default_factory=list)
    crashed_in: TestOutcome | None = None  # the test a crashed session (no SessionFinish) stopped inside

    def by_nodeid(self) -> dict[str, TestOutcome]:
        """Outcomes keyed by node id."""
        return {o.nodeid: o for o in self.outcomes}


def shorten(longrepr: Any) -> str:
    """One line of a pytest ``longrepr`` (string, skip tuple or serialized exception), at most 200 chars."""
    text = ""
    if isinstance(longrepr, (list, tuple)) and len(longrepr) == 3:
        text = str(longrepr[2]).removeprefix("Skipped: ")
    elif isinstance(longrepr, dict):
        crash = longrepr.get("reprcrash") or {}
        text = str(crash.get("message", "")) if isinstance(crash, dict) else ""
    elif longrepr is not None:
        lines = [ln for ln in str(longrepr).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("E ")]
        text = (errors[0][1:] if errors else lines[-1] if lines else "")
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= REASON_CHARS else first[: REASON_CHARS - 1] + "…"


def _apply(test: TestOutcome, report: dict[str, Any]) -> None:
    """Fold one phase report into the test's outcome (setup/teardown failures are errors)."""
    when, outcome = report.get("when"), report.get("outcome")
    duration = report.get("duration")
    test.duration += float(duration) if isinstance(duration, (int, float)) else 0.0
    wasxfail = "wasxfail" in report
    reason = shorten(report.get("longrepr"))
    if when == "call":
        if wasxfail and outcome == "skipped":
            test.outcome, test.reason = "xfailed", str(report["wasxfail"]) or reason
        elif wasxfail and outcome == "passed":
            test.outcome, test.reason = "xpassed", str(report["wasxfail"])
        elif outcome in ("failed", "skipped"):
            test.outcome, test.reason = outcome, reason
    elif outcome == "failed":
        test.outcome, test.reason = "error", f"{when}: {reason}"
    elif outcome == "skipped" and test.outcome == "passed":
        test.outcome, test.reason = ("xfailed" if wasxfail else "skipped"), reason


def parse_reportlog(path: Path) -> TestRun:
    """Parse a pytest-reportlog (``--report-log``) JSON-lines file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: cannot read: {exc}") from None
    run = TestRun(source=str(path), kind="reportlog")
    tests: dict[str, TestOutcome] = {}
    seen: dict[str, set[str]] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n"):
                run.complete, run.why_incomplete = False, f"truncated last line {number} (the run crashed)"
                break
            raise IngestError(f"{path}:{number}: not JSON: {exc.msg}") from None
        if not isinstance(record, dict) or "$report_type" not in record:
            raise IngestError(f"{path}:{number}: not a reportlog record (no $report_type)")
        kind = record["$report_type"]
        if kind == "SessionStart":
            run.pytest_version = record.get("pytest_version")
        elif kind == "SessionFinish":
            status = record.get("exitstatus")
            if not isinstance(status, int):
                raise IngestError(f"{path}:{number}: SessionFinish without an integer exitstatus")
            run.exitstatus = status
        elif kind == "TestReport":
            nodeid = record.get("nodeid")
            if not isinstance(nodeid, str):
                raise IngestError(f"{path}:{number}: TestReport without a nodeid")
            test = tests.setdefault(nodeid, TestOutcome(nodeid))
            # reportlog has no marker list: its keywords hold marker names plus node-name parts.
            keywords = record.get("keywords")
            if isinstance(keywords, dict):
                test.markers.update(k for k in keywords if isinstance(k, str) and k.isidentifier())
            _apply(test, record)
            seen.setdefault(nodeid, set()).add(str(record.get("when")))
        elif kind == "CollectReport" and record.get("outcome") == "failed":
            nodeid = record.get("nodeid") or "<collection>"
            tests[nodeid] = TestOutcome(nodeid, "error", "collection: " + shorten(record.get("longrepr")))
    if run.complete and run.exitstatus is None:
        run.complete, run.why_incomplete = False, "no SessionFinish record (the run crashed or is still running)"
    elif run.exitstatus in (INTERRUPTED_EXIT, INTERNAL_ERROR_EXIT):
        run.complete = False
        run.why_incomplete = "interrupted" if run.exitstatus == INTERRUPTED_EXIT else "pytest internal error"
    crashed = run.exitstatus is None and not run.complete  # no SessionFinish: the process died (or still runs)
    for nodeid, test in tests.items():
        # A test whose call or teardown never reported (crash mid-test) did not pass, whatever setup said.
        missing = [w for w in ("call", "teardown") if w not in seen.get(nodeid, set())]
        if test.outcome == "passed" and missing and nodeid in seen:
            test.outcome, test.reason = "error", f"no {missing[0]} report (the run stopped inside this test)"
            if crashed:
                run.crashed_in = test  # the last such test is the one the process died in
    run.outcomes = list(tests.values())
    return run


JUNIT_LOSSES = (
    "JUnit XML has no per-phase reports: setup/teardown errors are inferred from pytest's 'failed on setup/teardown' messages",
    "JUnit XML records a non-strict xpass as a plain pass (xpassed cannot be told apart)",
    "JUnit XML cannot tell an interrupted session from a finished one: only the tests it lists count",
    "JUnit XML durations include setup and teardown",
    "JUnit XML has no markers: a gate's marker expression selects none of these tests",
)


def _junit_nodeid(case: ET.Element, root: Path | None) -> tuple[str, bool]:
    """Rebuild a pytest node id; returns (nodeid, exact). Without ``file`` the module/class split is guessed."""
    name, classname, file = case.get("name", ""), case.get("classname", ""), case.get("file")
    parts = classname.split(".") if classname else []
    if file:
        module = file.replace("\\", "/").removesuffix(".py").replace("/", ".")
        classes = parts[len(module.split(".")) :] if classname.startswith(module) else []
        return "::".join([file.replace("\\", "/"), *classes, name]), True
    # Guess: the longest dotted prefix naming an existing .py file (under root) is the module.
    for cut in range(len(parts), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if root is not None and (root / candidate).is_file():
            return "::".join([candidate, *parts[cut:], name]), True
    cut = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts))
    return "::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], name]), False


def parse_junit(path: Path, root: Path | None = None) -> TestRun:
    """Parse a JUnit XML file (as pytest's ``--junitxml`` writes it); ``root`` helps rebuild node ids."""
    try:
        tree = ET.parse(path)
    except ET.ParseError as exc:
        line, col = exc.position
        raise IngestError(f"{path}:{line}:{col}: malformed XML: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    except OSError as exc:
        raise IngestError(f"{path}: cannot read: {exc.strerror}") from None
    top = tree.getroot()
    if top.tag not in ("testsuites", "testsuite"):
        raise IngestError(f"{path}: not JUnit XML (root element <{top.tag}>)")
    run = TestRun(source=str(path), kind="junit", losses=list(JUNIT_LOSSES))
    guessed = 0
    for case in top.iter("testcase"):
        nodeid, exact = _junit_nodeid(case, root)
        guessed += not exact
        test = TestOutcome(nodeid, duration=float(case.get("time") or 0.0))
        for child in case:
            message = shorten(child.get("message") or (child.text or ""))
            if child.tag == "skipped":
                is_xfail = child.get("type") == "pytest.xfail"
                test.outcome, test.reason = ("xfailed" if is_xfail else "skipped"), message
            elif child.tag == "failure":
                test.outcome, test.reason = "failed", message
            elif child.tag == "error":
                phase = "teardown" if "teardown" in (child.get("message") or "") else "setup"
                test.outcome, test.reason = "error", f"{phase}: {message}"
        run.outcomes.append(test)
    if guessed:
        run.losses.append(f"{guessed} node id(s) guessed from classname (no 'file' attribute, module not found)")
    return run


def sniff(path: Path) -> str:
    """Which kind of evidence a file holds: ``reportlog``, ``junit`` or ``json``, from its content."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).lstrip()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read: {exc.strerror}") from None
    if head.startswith(b"<"):
        return "junit"
    if b'"$report_type"' in head.split(b"\n", 1)[0]:
        return "reportlog"
    if head.startswith(b"{"):
        return "json"  # a benchmark result or a tracker-test-run evidence file: its "schema" says which
    raise IngestError(f"{path}: not a pytest reportlog, JUnit XML, tracker evidence or benchmark result file")


OUTCOMES = frozenset({"passed", "failed", "skipped", "xfailed", "xpassed", "error", "notrun", "deselected"})


def _aware_time(text: str) -> bool:
    """Is ``text`` an ISO-8601 time with a time zone (``2026-11-29T11:02:03Z``, ``...+02:00``)?"""
    from datetime import datetime  # noqa: PLC0415

    try:
        return datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def check_test_run(path: Path, data: bytes) -> dict[str, Any]:
    """Validate a ``tracker-test-run`` file written by ``pytest --tracker-record`` elsewhere.

    Checks what status derivation relies on (schema, version, status, provenance host, a time that is
    ISO 8601 with a time zone, a 40-hex commit or null, per-test node id and outcome, file ids);
    raises :class:`IngestError` with ``path: reason``.
    """
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise IngestError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != "tracker-test-run":
        raise IngestError(f"{path}: not a tracker-test-run file")
    problems = []
    if doc.get("version") != 1:
        problems.append(f"unsupported version {doc.get('version')!r}")
    if doc.get("status") not in ("complete", "interrupted", "incomplete"):
        problems.append(f"status {doc.get('status')!r} is not complete/interrupted/incomplete")
    prov = doc.get("provenance")
    if not isinstance(prov, dict) or not isinstance(prov.get("time"), str) or not isinstance(prov.get("host"), str):
        problems.append("provenance needs a time and a host")
    else:
        if not _aware_time(prov["time"]):
            problems.append(f"provenance.time {prov['time']!r} is not an ISO-8601 time with a time zone")
        commit = prov.get("commit")
        if commit is not None and not (isinstance(commit, str) and len(commit) == 40 and all(c in "0123456789abcdef" for c in commit)):
            problems.append(f"provenance.commit {commit!r} is not 40 lowercase hex digits or null")
    tests = doc.get("tests")
    if not isinstance(tests, list):
        problems.append("tests is not a list")
    else:
        for i, rec in enumerate(tests):
            if not isinstance(rec, dict) or not isinstance(rec.get("nodeid"), str) or rec.get("outcome") not in OUTCOMES:
                problems.append(f"tests[{i}] needs a nodeid and an outcome ({', '.join(sorted(OUTCOMES))})")
                break
    files = doc.get("files")
    if not isinstance(files, dict) or not all(isinstance(b, str) and len(b) == 40 for b in files.values()):
        problems.append("files is not a {path: blob id} map")
    if problems:
        raise IngestError(f"{path}: {'; '.join(problems)}")
    return doc
