"""Read evidence produced elsewhere: pytest-reportlog JSON lines, JUnit XML, benchmark result files.

Pure parsing (files in, typed runs out); copying into the store is :mod:`tracker.commands.ingest`.
Per-test outcomes use the evidence vocabulary: passed, failed, skipped, xfailed, xpassed, error.
A reportlog without ``SessionFinish`` (a crash) or with an interrupted exit status is ``complete=False``
and must never count as a pass; of a crash, the test it stopped inside (``crashed_in``) counts as an
error, as for the plugin's own crashed runs. JUnit XML loses information; what it lost is listed in ``losses``.
Neither format says which markers a test has (a reportlog's ``keywords`` hold marker names mixed with the
parts of the node's name): the evidence records of both carry no ``markers`` (:func:`evidence_records`).
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracker.base.contract import UTC_FORMAT, utc_time
from tracker.base.fileio import parse_json, read_regular
from tracker.base.subtests import FAILING, Subtests, subtest_name
from tracker.errors import FileError
from tracker.store.evidence_schema import parse_document, show, wrong

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
    markers: set[str] = field(default_factory=set)  # always empty: neither format records markers (evidence_records)


@dataclass
class ForeignRun:
    """One pytest session read from a file produced elsewhere (a reportlog or JUnit XML), before it becomes
    the store's :class:`tracker.core.model.TestRun`."""

    source: str
    kind: str  # "reportlog" | "junit"
    outcomes: list[TestOutcome] = field(default_factory=list)
    complete: bool = True
    why_incomplete: str = ""
    pytest_version: str | None = None
    exitstatus: int | None = None
    losses: list[str] = field(default_factory=list)
    crashed_in: TestOutcome | None = None  # the test a crashed session (no SessionFinish) stopped inside
    time: str | None = None  # UTC, when the file records when the session started (JUnit's timestamp, with a time zone)
    time_from: str = ""  # what ``time`` was read from (:data:`REPORTLOG_TIME`, :data:`JUNIT_TIME`)


def _text(value: object) -> str:
    """A scalar as text; a list or an object (which could be nested thousands deep) as nothing."""
    return value if isinstance(value, str) else "" if value is None or isinstance(value, (list, dict)) else show(value)


def shorten(longrepr: Any) -> str:
    """One line of a pytest ``longrepr`` (string, skip tuple or serialized exception), at most 200 chars."""
    text = ""
    if isinstance(longrepr, (list, tuple)) and len(longrepr) == 3:
        text = _text(longrepr[2]).removeprefix("Skipped: ")
    elif isinstance(longrepr, dict):
        crash = longrepr.get("reprcrash") or {}
        text = _text(crash.get("message", "")) if isinstance(crash, dict) else ""
    elif longrepr is not None:
        lines = [ln for ln in _text(longrepr).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("E ")]
        text = errors[0][1:] if errors else lines[-1] if lines else ""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= REASON_CHARS else first[: REASON_CHARS - 1] + "…"


def seconds(value: object, what: str) -> float:
    """A duration as a finite float; ValueError naming ``what`` otherwise (``time="abc"``, ``1e400``)."""
    try:
        number = float(value) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None
    except (ValueError, OverflowError):
        number = None
    if number is None or number - number != 0:
        raise ValueError(wrong(what, value, "a finite number of seconds"))
    return number


PHASES = ("setup", "call", "teardown")
PHASE_OUTCOMES = ("passed", "failed", "skipped")


def _check_report(report: dict[str, Any]) -> str | None:
    """Why a TestReport record cannot be folded (a field of the wrong type or value), or None."""
    if report.get("when") not in PHASES:
        return wrong("TestReport when", report.get("when"), f"one of {', '.join(PHASES)}")
    if report.get("outcome") not in PHASE_OUTCOMES:
        return wrong("TestReport outcome", report.get("outcome"), f"one of {', '.join(PHASE_OUTCOMES)}")
    if "wasxfail" in report and not isinstance(report["wasxfail"], str):
        return wrong("TestReport wasxfail", report["wasxfail"], "a string")
    if report.get("duration") is not None:
        try:
            seconds(report["duration"], "TestReport duration")
        except ValueError as err:
            return str(err)
    return None


# The $report_type of a subtest's report: pytest-subtests' and pytest 9's.
SUBTEST_REPORTS = ("SubTestReport", "SubtestReport")


def _subtest(report: dict[str, Any]) -> tuple[str, str, str] | str:
    """(outcome, name, reason) of a subtest's report (checked by :func:`_check_report`), or why its
    ``_subtest.context`` cannot be read (absent or null: a subtest without a name, ``(<subtest>)``)."""
    context = report.get("_subtest.context")
    if context is None:
        context = {}
    if not isinstance(context, dict):
        return wrong("SubTestReport _subtest.context", context, "an object")
    msg, kwargs = context.get("msg"), context.get("kwargs")
    if msg is not None and not isinstance(msg, str):
        return wrong("SubTestReport _subtest.context msg", msg, "a string or null")
    if kwargs is not None and not isinstance(kwargs, dict):
        return wrong("SubTestReport _subtest.context kwargs", kwargs, "an object or null")
    outcome, wasxfail = report["outcome"], report.get("wasxfail")
    if wasxfail is not None and outcome == "skipped":
        return "xfailed", subtest_name(msg, kwargs), wasxfail or shorten(report.get("longrepr"))
    return outcome, subtest_name(msg, kwargs), shorten(report.get("longrepr"))


def _apply(test: TestOutcome, report: dict[str, Any]) -> None:
    """Fold one phase report (checked by :func:`_check_report`) into the test's outcome (setup/teardown
    failures are errors)."""
    when, outcome = report.get("when"), report.get("outcome")
    duration = report.get("duration")
    test.duration += seconds(duration, "duration") if duration is not None else 0.0
    if test.outcome in FAILING and outcome != "failed":  # a failing report fails the test whatever comes after
        return
    wasxfail = "wasxfail" in report
    reason = shorten(report.get("longrepr"))
    if when == "call":
        if wasxfail and outcome == "skipped":
            test.outcome, test.reason = "xfailed", report["wasxfail"] or reason
        elif wasxfail and outcome == "passed":
            test.outcome, test.reason = "xpassed", report["wasxfail"]
        elif outcome in ("failed", "skipped"):
            test.outcome, test.reason = outcome, reason
    elif outcome == "failed":
        test.outcome, test.reason = "error", f"{when}: {reason}"
    elif outcome == "skipped" and test.outcome == "passed":
        test.outcome, test.reason = ("xfailed" if wasxfail else "skipped"), reason


REPORTLOG_TIME = "first test's start"  # the earliest ``start`` of its TestReport records (where its pytest wrote one)
JUNIT_TIME = "testsuite timestamp"
LATEST_TIME_S = 253402300799  # 9999-12-31T23:59:59Z: the last second a recorded time can name


def start_seconds(value: object) -> float | None:
    """A TestReport's ``start`` (seconds since 1970, UTC) when it is one a time can have, else None (text, a bool,
    a negative number, NaN, infinity, a year after 9999)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= LATEST_TIME_S:
        return None
    return float(value)


def _read(path: Path, data: bytes | None) -> bytes:
    """The file's bytes: ``data`` when the caller read them already, else a bounded read of a regular file
    (a FIFO or a device is refused, never waited on)."""
    return read_regular(path) if data is None else data


def parse_reportlog(path: Path, data: bytes | None = None) -> ForeignRun:
    """Parse a pytest-reportlog (``--report-log``) JSON-lines file (its bytes ``data`` when already read)."""
    try:
        text = _read(path, data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: cannot read: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    run = ForeignRun(source=str(path), kind="reportlog", losses=list(REPORTLOG_LOSSES))
    tests: dict[str, TestOutcome] = {}
    seen: dict[str, set[str]] = {}
    subtests: dict[str, Subtests] = {}  # what the subtests of each test that has any said (tracker.base.subtests)
    first: float | None = None  # the earliest test phase's start: when the run ran (never the file's mtime)
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = parse_json(line)
        except ValueError as exc:
            if number == len(lines) and not text.endswith("\n") and "nested too deeply" not in str(exc):
                run.complete, run.why_incomplete = False, f"truncated last line {number} (the run crashed)"
                break
            raise IngestError(f"{path}:{number}: not JSON: {exc}") from None
        if not isinstance(record, dict) or "$report_type" not in record:
            raise IngestError(f"{path}:{number}: not a reportlog record (no $report_type)")
        kind = record["$report_type"]
        if kind == "SessionStart":
            version = record.get("pytest_version")
            if version is not None and not isinstance(version, str):
                raise IngestError(f"{path}:{number}: {wrong('SessionStart pytest_version', version, 'a string')}")
            run.pytest_version = version
        elif kind == "SessionFinish":
            status = record.get("exitstatus")
            if not isinstance(status, int):
                raise IngestError(f"{path}:{number}: SessionFinish without an integer exitstatus")
            run.exitstatus = status
        elif kind == "TestReport":
            nodeid = record.get("nodeid")
            if not isinstance(nodeid, str) or not nodeid:
                raise IngestError(f"{path}:{number}: TestReport without a nodeid")
            problem = _check_report(record)
            if problem:
                raise IngestError(f"{path}:{number}: {problem}")
            if record.get("start") is not None:
                start = start_seconds(record["start"])
                if start is None:
                    why = wrong("TestReport start", record["start"], "a time in seconds since 1970")
                    raise IngestError(f"{path}:{number}: {why}")
                first = start if first is None else min(first, start)
            test = tests.setdefault(nodeid, TestOutcome(nodeid))
            # No markers from ``keywords``: they also hold the node name's parts (a directory ``slow``, a
            # parametrize id ``[slow]``), and read as markers, ``-m "not slow"`` dropped a failing test.
            _apply(test, record)
            seen.setdefault(nodeid, set()).add(record["when"])
        elif kind in SUBTEST_REPORTS:  # its test's own reports come apart; its start and duration are its call's
            nodeid = record.get("nodeid")
            if not isinstance(nodeid, str) or not nodeid:
                raise IngestError(f"{path}:{number}: SubTestReport without a nodeid")
            problem = _check_report(record)
            sub = problem or _subtest(record)
            if isinstance(sub, str):
                raise IngestError(f"{path}:{number}: {sub}")
            tests.setdefault(nodeid, TestOutcome(nodeid))
            seen.setdefault(nodeid, set())
            subtests.setdefault(nodeid, Subtests()).add(*sub)
        elif kind == "CollectReport" and record.get("outcome") == "failed":
            nodeid = record.get("nodeid")
            if nodeid is not None and not isinstance(nodeid, str):
                raise IngestError(f"{path}:{number}: {wrong('CollectReport nodeid', nodeid, 'a string')}")
            nodeid = nodeid or "<collection>"
            tests[nodeid] = TestOutcome(nodeid, "error", "collection: " + shorten(record.get("longrepr")))
        elif kind == "CollectReport" and record.get("outcome") == "skipped" and isinstance(record.get("nodeid"), str):
            # A file skipped at collection (importorskip, allow_module_level): the file's record, as the plugin's.
            nodeid = record["nodeid"] or "<collection>"
            tests.setdefault(nodeid, TestOutcome(nodeid, "skipped", shorten(record.get("longrepr"))))
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
    for nodeid, subs in subtests.items():  # a failed subtest fails its test: tracker.base.subtests
        test = tests[nodeid]
        test.outcome, test.reason = subs.verdict(test.outcome, test.reason)
    run.outcomes = list(tests.values())
    if first is not None:
        run.time, run.time_from = time.strftime(UTC_FORMAT, time.gmtime(first)), REPORTLOG_TIME
    return run


def evidence_records(run: ForeignRun) -> list[dict[str, Any]]:
    """The ``tests`` records of the ``tracker-test-run`` evidence of a reportlog or JUnit run, by node id.

    They have no ``markers`` key: neither format says which markers a test has (JUnit XML has none; a
    reportlog's ``keywords`` mix marker names with directory, module, class and parametrize-id names), and a
    record without one is marker-blind (:func:`tracker.core.testgate.has_markers`): for a gate with ``-m`` it only
    gives the outcome of a test that a run with markers selected, and never adds a test to the gate or drops one.
    """
    records = (
        {"nodeid": o.nodeid, "outcome": o.outcome, "reason": o.reason, "duration": round(o.duration, 6)}
        for o in run.outcomes
    )
    return sorted(records, key=lambda r: r["nodeid"])


def running_record(run: ForeignRun) -> dict[str, Any] | None:
    """The evidence's ``running`` record (the test a crashed session stopped inside), without markers as in
    :func:`evidence_records`; None when the session did not crash."""
    return None if run.crashed_in is None else {"nodeid": run.crashed_in.nodeid}


REPORTLOG_LOSSES = (
    "a reportlog has no markers (its keywords mix them with node-name parts): for a gate's marker expression "
    "these records only give the outcome of tests a run with markers selected",
)


JUNIT_LOSSES = (
    "JUnit XML has no per-phase reports: setup/teardown errors are inferred from pytest's 'failed on "
    "setup/teardown' messages",
    "JUnit XML records a non-strict xpass as a plain pass (xpassed cannot be told apart)",
    "JUnit XML cannot tell an interrupted session from a finished one: only the tests it lists count",
    "JUnit XML durations include setup and teardown",
    "JUnit XML has no markers: for a gate's marker expression these records only give the outcome of tests a run "
    "with markers selected",
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


def _junit_collect_report(case: ET.Element, root: Path | None) -> tuple[TestOutcome, bool] | None:
    """pytest's testcase for a collection report (an empty classname, the module's dotted path as its name, one
    <skipped> or <error>) as (the record of its file, whether that path was found under ``root``): ``tests.test_gpu``
    is ``tests/test_gpu.py``, or the folder ``tests/test_gpu`` where that is one; skipped, or an error "collection:
    ...". None for any other testcase."""
    if case.get("classname") or case.get("file") or not case.get("name"):
        return None
    child = next((c for c in case if c.tag in ("skipped", "error")), None)
    if child is None:
        return None
    path = str(case.get("name")).replace(".", "/")
    inside = root is not None and all(part not in ("", "..") for part in path.split("/"))  # never looks outside it
    module = inside and root is not None and (root / f"{path}.py").is_file()
    folder = inside and root is not None and not module and (root / path).is_dir()
    nodeid = path if folder else f"{path}.py"
    text = child.text or child.get("message") or ""
    if child.tag == "skipped":
        return TestOutcome(nodeid, "skipped", shorten(skip_reason(text))), module or folder
    return TestOutcome(nodeid, "error", "collection: " + shorten(text)), module or folder


def skip_reason(text: str) -> str:
    """The reason in pytest's text of a collection skip, ``('path', 2, 'Skipped: why')``: ``why`` (else the text)."""
    at = text.find("'Skipped: ")
    return text[at + len("'Skipped: ") :].removesuffix(")").removesuffix("'") if at >= 0 else text


def junit_time(path: Path, stamp: str) -> str:
    """A JUnit ``timestamp`` as UTC (:func:`tracker.store.evidence.utc_time`); IngestError when it is not an ISO-8601
    time, or has no time zone: pytest before 8.3 writes local time without one, and no reading of it is safe
    (read as UTC, a run from west of UTC was backdated, and an older pass outranked a newer failure)."""
    when = utc_time(stamp)
    if when is not None:
        return when
    if utc_time(stamp + "+00:00") is not None:
        raise IngestError(
            f"{path}: testsuite timestamp {show(stamp)} has no time zone (pytest before 8.3 writes local "
            "time): record with pytest >= 8.3, --report-log or --tracker-record"
        )
    raise IngestError(f"{path}: testsuite timestamp {show(stamp)} is not an ISO-8601 time")


def parse_junit(path: Path, root: Path | None = None, data: bytes | None = None) -> ForeignRun:
    """Parse a JUnit XML file (as pytest's ``--junitxml`` writes it; its bytes ``data`` when already read);
    ``root`` helps rebuild node ids."""
    try:
        top = ET.fromstring(_read(path, data))
    except ET.ParseError as exc:
        line, col = exc.position
        raise IngestError(f"{path}:{line}:{col}: malformed XML: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    if top.tag not in ("testsuites", "testsuite"):
        raise IngestError(f"{path}: not JUnit XML (root element <{_text(top.tag)[:60]}>)")
    run = ForeignRun(source=str(path), kind="junit", losses=list(JUNIT_LOSSES))
    # Its earliest suite dates it (round 21: a new file's suite merged before an old one's hid the old pass's time),
    # and a suite without a timestamp leaves it undated (--time says when), as a file without any does.
    suites = list(top.iter("testsuite"))  # the root itself when it is one, and every suite nested in it (round 22)
    stamps = [s.get("timestamp") for s in suites]
    if stamps and all(stamp is not None for stamp in stamps):
        run.time, run.time_from = min(junit_time(path, str(stamp)) for stamp in stamps), JUNIT_TIME
    guessed = 0
    for number, case in enumerate(top.iter("testcase"), 1):
        if not case.get("name"):  # pytest.exit() in a test leaves <testcase time="0.000" />: no test of any name
            raise IngestError(f"{path}: testcase {number} has no name")
        collected = _junit_collect_report(case, root)
        if collected is not None:  # a file skipped or broken at collection
            run.outcomes.append(collected[0])
            guessed += not collected[1]
            continue
        if not case.get("classname") and not case.get("file"):
            raise IngestError(f"{path}: testcase {number} {show(case.get('name'))} has no classname or file")
        nodeid, exact = _junit_nodeid(case, root)
        guessed += not exact
        try:
            duration = seconds(case.get("time") or 0.0, "time")
        except ValueError as err:
            raise IngestError(f"{path}: testcase {show(nodeid)}: {err}") from None
        test = TestOutcome(nodeid, duration=duration)
        for child in case:  # the worst wins, whatever the order: a failure then a teardown's skip is a failure (F3)
            message = shorten(child.get("message") or (child.text or ""))
            if child.tag == "skipped" and test.outcome == "passed":
                is_xfail = child.get("type") == "pytest.xfail"
                test.outcome, test.reason = ("xfailed" if is_xfail else "skipped"), message
            elif child.tag == "failure" and test.outcome != "failed":
                test.outcome, test.reason = "failed", message
            elif child.tag == "error" and test.outcome not in ("failed", "error"):
                phase = "teardown" if "teardown" in (child.get("message") or "") else "setup"
                test.outcome, test.reason = "error", f"{phase}: {message}"
        run.outcomes.append(test)
    _check_counts(path, top, run)
    if guessed:
        run.losses.append(f"{guessed} node id(s) guessed from classname (no 'file' attribute, module not found)")
    return run


COUNTS = ("tests", "failures", "errors", "skipped")


def _check_counts(path: Path, top: ET.Element, run: ForeignRun) -> None:
    """Mark ``run`` incomplete when a testsuite lists more testcases without a failure, error or skip (each read as a
    pass) than its counts say ran and passed (``tests`` less ``failures``, ``errors`` and ``skipped``): pytest
    ``--setup-only``/``--setup-plan`` writes tests="0" with a bare <testcase/> per test, which ran no test, and a
    session ended early (``pytest.exit``) writes fewer. A suite without ``tests`` is not checked; a count that is not
    a whole number is refused (IngestError)."""
    suites = [top] if top.tag == "testsuite" else list(top.iter("testsuite"))
    for number, suite in enumerate(suites, 1):
        counts: dict[str, int] = {}
        for key in COUNTS:
            value = suite.get(key)
            if value is None:
                continue
            if not (value.isascii() and value.isdigit()):
                raise IngestError(f"{path}: testsuite {number}: {key} {show(value)} is not a whole number")
            counts[key] = int(value)
        if "tests" not in counts:
            continue
        bare = sum(1 for case in suite.findall("testcase") if not any(c.tag in OUTCOME_TAGS for c in case))
        ran = counts["tests"] - sum(counts.get(k, 0) for k in COUNTS[1:])
        if bare > ran and run.complete:
            given = ", ".join(f"{k}={counts.get(k, 0)}" for k in COUNTS)
            run.complete = False
            run.why_incomplete = (
                f"testsuite {show(suite.get('name') or str(number))} lists {bare} testcase(s) without a failure, "
                f"error or skip but counts {max(ran, 0)} test(s) run that passed ({given}): no test ran (pytest "
                "--setup-only, --setup-plan?) or the session ended early"
            )


OUTCOME_TAGS = ("failure", "error", "skipped")


def sniff(path: Path, data: bytes | None = None) -> str:
    """Which kind of evidence a file holds: ``reportlog``, ``junit`` or ``json``, from its content (its
    bytes ``data`` when already read)."""
    head = _read(path, data)[:4096].lstrip()
    if head.startswith(b"<"):
        return "junit"
    if b'"$report_type"' in head.split(b"\n", 1)[0]:
        return "reportlog"
    if head.startswith(b"{"):
        return "json"  # a benchmark result or a tracker-test-run evidence file: its "schema" says which
    raise IngestError(f"{path}: not a pytest reportlog, JUnit XML, tracker evidence or benchmark result file")


def check_test_run(path: Path, data: bytes, clock: Any = None) -> dict[str, Any]:
    """Validate a ``tracker-test-run`` file written by ``pytest --tracker-record`` elsewhere, by the very
    rules the store reads it with (:func:`tracker.store.evidence_schema.check_document`: kind, version, the type of
    every value the tracker reads, a valid time that is not in the future); raises :class:`IngestError` with
    ``path: reason``."""
    try:
        doc = parse_json(data)
    except ValueError as exc:
        raise IngestError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != "tracker-test-run":
        raise IngestError(f"{path}: not a tracker-test-run file")
    try:
        parse_document(data, clock)
    except ValueError as exc:
        raise IngestError(f"{path}: {exc}") from None
    return doc
