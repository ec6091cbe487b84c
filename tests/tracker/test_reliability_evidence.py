"""Issue 11, evidence and result files: future times, bad shapes, deep nesting, huge numbers, non-regular
files, ingest's edge cases and the trust model, through the real CLI in throwaway git repositories."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from resultfiles import case, result, write
from tracker_testutil import git, phase, plan_text

from tracker.base.contract import utc_time
from tracker.store.evidence import load

CHECKOUT = Path(__file__).resolve().parents[2]
TEST_A = "def test_x():\n    assert True\n"
FAILING_A = "def test_x():\n    assert False, 'broken now'\n"
PLAN = plan_text(
    "0001", phase("P1", 'test = "tests/test_a.py"') + phase("P2", 'bench = "m"\nwhere = { k = 1 }\nat_most = 5')
)
FILES = {"plans/0001-a.md": PLAN, "tests/test_a.py": TEST_A, "conftest.py": "",
         ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n"}  # fmt: skip
STORE = ".tracker/evidence"


def utc(offset_s: float = 0.0) -> str:
    """This machine's time plus ``offset_s``, in the store's shape."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


def run_doc(when: str, outcome: str = "passed", **top: Any) -> dict[str, Any]:
    """A complete tracker-test-run holding one record of tests/test_a.py::test_x."""
    doc: dict[str, Any] = {
        "schema": "tracker-test-run", "version": 1, "status": "complete",
        "provenance": {"time": when, "host": "elsewhere", "commit": None, "dirty": None, "args": ["tests"]},
        "gates": {}, "files": {},
        "tests": [{"nodeid": "tests/test_a.py::test_x", "outcome": outcome, "reason": "", "duration": 0.1, "markers": []}],
    }  # fmt: skip
    doc.update(top)
    return doc


def signoff_doc(**top: Any) -> dict[str, Any]:
    doc = {"schema": "tracker-signoff", "version": 1, "gate_key": "0001/P1#1", "gate_hash": "h", "manual": "ok", "by": "me",
           "why": "looked", "time": "2026-11-29T11:02:03Z", "host": "h", "commit": None, "dirty": None, "files": {}}  # fmt: skip
    doc.update(top)
    return doc


def put(root: Path, name: str, doc: object) -> Path:
    """Write ``doc`` (JSON, or bytes as they are) into the evidence store."""
    path = root / STORE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


def gates(cli: Callable[..., Any], root: Path) -> list[tuple[bool, str]]:
    """(met, reason) of every gate, from ``tracker status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return [(g["met"], g["reason"]) for p in json.loads(res.out)["plans"] for ph in p["phases"] for g in ph["gates"]]


def tracker(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process (for what could hang: a FIFO must not)."""
    code = f"import sys; from tracker.cli import main; main({list(args)!r})"
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False, env=env, timeout=timeout
    )


JUNIT = ('<testsuites><testsuite name="pytest" timestamp="{stamp}"><testcase classname="tests.test_a" name="test_x" '
         'file="tests/test_a.py" time="{time}"/></testsuite></testsuites>')  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# 1. A future timestamp hides real failures.


def test_a_future_junit_timestamp_is_refused_by_ingest(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT.format(stamp="2099-01-01T00:00:00+00:00", time="0.1"))
    res = cli(root, "ingest", str(junit))
    assert res.code == 8
    assert res.err.startswith(f"tracker: error: {junit}: testsuite timestamp "), res.err
    assert "2099-01-01T00:00:00Z is in the future: more than 5 minutes after this machine's clock (" in res.err
    assert not (root / STORE).exists()


def test_a_future_file_in_the_store_is_invalid_and_verify_says_so(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """The issue's reproduction: a passing run from 2099 in the store, then the test fails and ``verify --force``."""
    root = repo(FILES)
    put(root, "future.json", run_doc("2099-01-01T00:00:00Z"))
    [(met, reason), _] = gates(cli, root)
    assert not met
    assert reason.startswith("invalid evidence file, fix or remove it: .tracker/evidence/future.json: provenance.time "
                             "2099-01-01T00:00:00Z is in the future: more than 5 minutes after this machine's clock (")  # fmt: skip
    res = cli(root, "check")
    assert res.code == 1 and "future.json: provenance.time 2099-01-01T00:00:00Z is in the future" in res.out
    (root / "tests/test_a.py").write_text(FAILING_A)
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P1#1" not in res.out and "UNMET 0001/P1#1" in res.out
    assert (
        "tracker: not used, and every test and bench gate is unmet until it is fixed or removed: .tracker/evidence/future.json"
        in res.out
    )


def test_verify_judges_with_its_own_run_after_a_run_from_a_clock_ahead(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Four minutes ahead is within the tolerated drift: the file is valid, but what verify just ran decides."""
    root = repo(FILES)
    ahead = put(root, "ahead.json", run_doc(utc(240)))
    assert gates(cli, root)[0] == (True, "1 passed")
    (root / "tests/test_a.py").write_text(FAILING_A)
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 1, res.out + res.err
    assert "UNMET 0001/P1#1 tests/test_a.py: tests/test_a.py::test_x: failed: AssertionError: broken now" in res.out
    assert (
        f"tracker: {STORE}/{ahead.name} is recorded later than this run (a clock ahead of this one?): it is put behind it"
        in res.out
    )


def test_load_orders_the_named_run_last_and_lists_what_it_overtook(repo: Callable[..., Path]) -> None:
    root = repo(FILES)
    put(root, "a-ahead.json", run_doc(utc(200)))
    put(root, "b-older.json", run_doc(utc(-600)))
    put(root, "c-mine.json", run_doc(utc(-5), outcome="failed"))
    store = load(root, last="c-mine.json")
    assert [r.file.rsplit("/", 1)[1] for r in store.runs] == ["b-older.json", "a-ahead.json", "c-mine.json"]
    assert store.reordered == [f"{STORE}/a-ahead.json"]
    assert [r.file.rsplit("/", 1)[1] for r in load(root).runs] == ["b-older.json", "c-mine.json", "a-ahead.json"]


def test_every_input_format_is_refused_with_a_future_time(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"$report_type": "SessionStart", "pytest_version": "8"}\n{"$report_type": "SessionFinish", "exitstatus": 0}\n'
    )
    os.utime(log, (time.time() + 86400, time.time() + 86400))
    plugin = tmp_path / "plugin.json"
    plugin.write_text(json.dumps(run_doc(utc(3600))))
    bench = write(tmp_path / "r.json", result([case("m", {"k": 1}, [1.0, 2.0])], time=utc(3600)))
    ahead = ("--time", utc(86400))  # the log records no time: --time says when it ran
    for path, what, extra in ((log, "--time", ahead), (plugin, "provenance.time", ()), (bench, "provenance.time", ())):
        res = cli(root, "ingest", *extra, str(path))
        assert res.code == 8 and f"{path}: {what}" in res.err and "is in the future" in res.err, res.err
    assert not (root / STORE).exists()
    # The same bound for result files the repository holds itself.
    write(root / "bench/results/r.json", result([case("m", {"k": 1}, [1.0, 2.0])], time=utc(3600)))
    reason = gates(cli, root)[1][1]
    assert (
        reason.startswith("invalid result file, fix or remove it: bench/results/r.json: provenance.time ")
        and "is in the future" in reason
    )
    assert cli(root, "check").code == 1


def test_a_result_rejected_for_its_future_time_is_not_cached(tmp_path: Path) -> None:
    from tracker.base.cache import Cache
    from tracker.base.contract import Clock
    from tracker.errors import ResultFileError
    from tracker.store.result_files import load_result

    path = write(tmp_path / "r.json", result([case("m", {"k": 1}, [1.0])], time=utc(3600)))
    cache = Cache(tmp_path)
    with pytest.raises(ResultFileError, match="is in the future") as err:
        load_result(path, cache)
    assert not err.value.lasting
    cache.write()
    checks = json.loads((tmp_path / ".tracker/cache/result-checks.json").read_text())["data"]
    assert list(checks.values()) == [""]  # valid bytes: only the time is early
    assert load_result(path, Cache(tmp_path), clock=Clock(time.time() + 7200)).host == "gpu-box"


def test_an_ingested_run_a_little_ahead_is_recorded_at_ingest_time(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT.format(stamp=utc(120), time="0.1"))
    before = utc()
    assert cli(root, "ingest", str(junit)).code == 0
    [stored] = (root / STORE).glob("*.json")
    assert before <= json.loads(stored.read_text())["provenance"]["time"] <= utc()


# ---------------------------------------------------------------------------------------------------------------
# 10 (times). One time parser, for the store, ingest and result files.


@pytest.mark.parametrize("text", ["2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "0000-01-01T00:00:00Z",
                                  "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
                                  "2026-01-01T00:00:60Z", "2026-02-30T00:00:00+01:00", "0001-01-01T00:30:00+01:00",
                                  "9999-12-31T23:30:00-01:00", "2026-01-01T00:00:00", "yesterday", ""])  # fmt: skip
def test_impossible_or_naive_times_are_not_times(text: str) -> None:
    assert utc_time(text) is None


@pytest.mark.parametrize(("text", "expected"), [("2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z"), ("2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"),
                                                ("2026-11-29T12:30:00+02:00", "2026-11-29T10:30:00Z"), ("2026-12-31T23:59:59.9Z", "2026-12-31T23:59:59Z")])  # fmt: skip
def test_valid_times_in_any_offset(text: str, expected: str) -> None:
    assert utc_time(text) == expected


def test_the_store_rejects_an_impossible_date_as_ingest_does(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    put(root, "feb30.json", run_doc("2026-02-30T11:02:03Z"))
    assert gates(cli, root)[0][1] == (
        "invalid evidence file, fix or remove it: .tracker/evidence/feb30.json: provenance.time '2026-02-30T11:02:03Z' "
        "is not an ISO-8601 time with a time zone"
    )
    (tmp_path / "feb30.json").write_text(json.dumps(run_doc("2026-02-30T11:02:03Z")))
    res = cli(root, "ingest", str(tmp_path / "feb30.json"))
    assert (
        res.code == 8 and "provenance.time '2026-02-30T11:02:03Z' is not an ISO-8601 time with a time zone" in res.err
    )


# ---------------------------------------------------------------------------------------------------------------
# 4. Evidence with a valid schema and time but a bad shape.


def _set(doc: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    *parents, last = dotted.split(".")
    node: Any = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


DELETE = object()
RUN_SHAPES = [
    ("tests", "abc", "tests 'abc' is not a list of test records"),
    ("tests", 5, "tests 5 is not a list of test records"),
    ("tests", {"a": 1}, "tests is an object, not a list of test records"),
    (
        "tests.0",
        "tests/test_a.py::test_x",
        "tests[0] 'tests/test_a.py::test_x' is not an object with a nodeid and an outcome",
    ),
    ("tests.0.nodeid", DELETE, "tests[0].nodeid is missing (a non-empty string)"),
    (
        "tests.0.outcome",
        DELETE,
        "tests[0].outcome is missing (one of deselected, error, failed, notrun, passed, skipped, xfailed, xpassed)",
    ),
    ("tests.0.nodeid", 5, "tests[0].nodeid 5 is not a non-empty string"),
    ("tests.0.outcome", ["passed"], "tests[0].outcome is a list, not one of"),
    ("tests.0.markers", "gpu", "tests[0].markers 'gpu' is not a list of strings"),
    ("tests.0.markers", [1], "tests[0].markers is a list, not a list of strings"),
    ("tests.0.duration", "0.1", "tests[0].duration '0.1' is not a finite number"),
    ("tests.0.reason", {"x": 1}, "tests[0].reason is an object, not a string"),
    ("provenance", [], "provenance is a list, not an object with a time and a host"),
    ("provenance.host", 5, "provenance.host 5 is not a string"),
    ("provenance.commit", "zzz", "provenance.commit 'zzz' is not 40 lowercase hex digits or null"),
    ("provenance.args", "tests", "provenance.args 'tests' is not a list of strings or null"),
    (
        "provenance.python",
        ["3.11"],
        "provenance.python is a list: an unknown key may only hold a string, number, boolean or null",
    ),
    ("gates", [], "gates is a list, not a {gate: hash} object"),
    ("gates", {"0001/P1#1": 5}, "gates is an object, not a {gate: hash} object"),
    ("files", "x", "files 'x' is not a {path: blob id} object"),
    ("files", {"src/a.py": 5}, "files is an object, not a {path: blob id} object"),
    ("status", "done", "status 'done' is not complete, interrupted or incomplete"),
    ("exitstatus", "0", "exitstatus '0' is not an integer or null"),
    ("version", 99, "unsupported tracker-test-run version 99 (this tracker reads version 1)"),
    ("version", True, "unsupported tracker-test-run version True (this tracker reads version 1)"),
    ("version", 1.0, "unsupported tracker-test-run version 1.0 (this tracker reads version 1)"),
    ("running", [], "running is a list, not an object"),
]
SIGNOFF_SHAPES = [
    ("by", 5, "by 5 is not a string"),
    ("gate_key", None, "gate_key None is not a string"),
    ("phase_manual", "abc", "phase_manual 'abc' is not a list of strings"),
    ("files", [], "files is a list, not a {path: blob id} object"),
    ("commit", 5, "commit 5 is not 40 lowercase hex digits or null"),
    ("version", 99, "unsupported tracker-signoff version 99 (this tracker reads version 1)"),
]


@pytest.mark.parametrize(
    ("dotted", "value", "reason"), RUN_SHAPES + [(f"signoff:{d}", v, r) for d, v, r in SIGNOFF_SHAPES]
)
def test_a_bad_shape_is_invalid_in_the_store_and_refused_by_ingest(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path, dotted: str, value: Any, reason: str
) -> None:
    root = repo(FILES)
    doc = signoff_doc() if dotted.startswith("signoff:") else run_doc("2026-11-29T11:02:03Z")
    put(root, "bad.json", _set(doc, dotted.removeprefix("signoff:"), value))
    for met, why in gates(cli, root):
        assert not met and why.startswith(
            f"invalid evidence file, fix or remove it: .tracker/evidence/bad.json: {reason}"
        ), why
    res = cli(root, "check")
    assert res.code == 1 and f".tracker/evidence/bad.json: {reason}" in res.out
    assert cli(root, "update").code == 0
    res = cli(root, "gc", "--dry-run")
    assert res.code == 8 and f"bad.json: {reason}" in res.err
    if not dotted.startswith("signoff:"):
        (tmp_path / "bad.json").write_bytes((root / STORE / "bad.json").read_bytes())
        res = cli(root, "ingest", str(tmp_path / "bad.json"))
        assert res.code == 8 and res.err.startswith(f"tracker: error: {tmp_path / 'bad.json'}: {reason}"), res.err
        assert len(list((root / STORE).iterdir())) == 1


def test_a_run_that_counts_for_nothing_needs_only_its_time() -> None:
    from tracker.store.evidence_schema import check_document

    interrupted = {
        "schema": "tracker-test-run",
        "version": 1,
        "status": "interrupted",
        "provenance": {"time": "2026-11-29T11:02:03Z"},
    }
    assert check_document(interrupted) == "2026-11-29T11:02:03Z"
    with pytest.raises(ValueError, match=r"^tests 'x' is not a list of test records$"):
        check_document({**interrupted, "tests": "x"})
    with pytest.raises(ValueError, match=r"^provenance\.host is missing"):  # a crash names its test: that record counts
        check_document(
            {**interrupted, "status": "incomplete", "running": {"nodeid": "t.py::a"}, "files": {}, "tests": []}
        )


def test_text_no_output_can_print_is_refused(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    doc = run_doc("2026-11-29T11:02:03Z", outcome="failed")
    doc["tests"][0]["reason"] = "broken \udc80"
    put(root, "lone.json", doc)
    res = cli(root, "status")
    assert res.code == 0 and "lone.json: holds text that is not valid Unicode (a lone surrogate, '\\udc80')" in res.out
    (tmp_path / "lone.json").write_bytes((root / STORE / "lone.json").read_bytes())
    assert cli(root, "ingest", str(tmp_path / "lone.json")).code == 8
    text = json.dumps(result([case("m", {"k": "\udc80"}, [1.0])]))
    (tmp_path / "r.json").write_text(text)
    res = cli(root, "ingest", str(tmp_path / "r.json"))
    assert res.code == 8 and "r.json: holds text that is not valid Unicode" in res.err


# ---------------------------------------------------------------------------------------------------------------
# 5. Deep nesting.


def test_json_nested_100k_deep_in_the_store_or_bench_results(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    deep = b"[" * 100_000 + b"]" * 100_000
    put(root, "deep.json", deep)
    (root / "bench/results").mkdir(parents=True)
    (root / "bench/results/deep.json").write_bytes(b'{"schema": "tracker-bench-result", "x": ' + deep + b"}")
    [(_, test_reason), (_, bench_reason)] = gates(cli, root)
    assert (
        test_reason
        == "invalid evidence file, fix or remove it: .tracker/evidence/deep.json: not a readable evidence file: JSON nested too deeply"
    )
    assert bench_reason.startswith("invalid evidence file")
    res = cli(root, "check")
    assert (
        res.code == 1
        and "bench/results/deep.json: JSON nested too deeply" in res.out
        and ".tracker/evidence/deep.json" in res.out
    )
    assert cli(root, "update").code == 0
    assert cli(root, "gc").code == 8
    for name, head in (
        ("deep.json", b'{"schema": "tracker-test-run", "x": '),
        ("deep.jsonl", b'{"$report_type": "SessionStart", "x": '),
    ):
        (tmp_path / name).write_bytes(head + deep + b"}")
        res = cli(root, "ingest", str(tmp_path / name))
        assert res.code == 8 and "nested too deeply" in res.err, res.err
    (root / STORE / "deep.json").unlink()
    assert (
        gates(cli, root)[1][1]
        == "invalid result file, fix or remove it: bench/results/deep.json: JSON nested too deeply"
    )


def test_a_nested_but_parseable_record_crashes_nothing(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    nested: Any = "x"
    for _ in range(400):
        nested = [nested]
    doc = run_doc("2026-11-29T11:02:03Z")
    doc["tests"][0]["reason"] = nested
    doc["tests"].append({"nodeid": "tests/test_a.py::test_y", "outcome": "passed", "extra": {"deep": nested}})
    put(root, "nested.json", doc)
    assert gates(cli, root)[0][1].endswith("tests[0].reason is a list, not a string")
    log = tmp_path / "log.jsonl"
    reports = [{"$report_type": "TestReport", "nodeid": "tests/test_a.py::test_x", "when": when, "longrepr": nested, "duration": 0.1,
                "outcome": "failed" if when == "call" else "passed"} for when in ("setup", "call", "teardown")]  # fmt: skip
    records = [
        {"$report_type": "SessionStart", "pytest_version": "8"},
        *reports,
        {"$report_type": "SessionFinish", "exitstatus": 1},
    ]
    log.write_text("".join(json.dumps(x) + "\n" for x in records))
    (root / STORE / "nested.json").unlink()
    res = cli(root, "ingest", "--time", "2026-11-29T11:02:04Z", "--commit", "HEAD", str(log))
    assert res.code == 0, res.err
    assert gates(cli, root)[0] == (False, "tests/test_a.py::test_x: failed")


# ---------------------------------------------------------------------------------------------------------------
# 6. Huge finite samples, non-finite values.


def _huge_case(metric: str, samples: list[float], unit: str = "us") -> dict[str, Any]:
    s = sorted(samples)
    n = len(s)
    pos = 0.9 * (n - 1)
    lo, frac = math.floor(pos), 0.9 * (n - 1) - math.floor(pos)
    p90 = s[lo] if frac == 0 else s[lo] * (1 - frac) + s[min(lo + 1, n - 1)] * frac
    median = s[n // 2] if n % 2 else s[n // 2 - 1] / 2 + s[n // 2] / 2
    stats = {"n": n, "median": median, "min": s[0], "mean": math.fsum(x / n for x in s), "p90": p90}
    return {
        "metric": metric,
        "params": {"k": 1},
        "unit": unit,
        "direction": "lower",
        "samples": samples,
        "stats": stats,
    }


@pytest.mark.parametrize(
    "samples", [[1.7e308, 1.7e308, 1.6e308], [1.7e308, 1.79e308], [-1.7e308, 1.7e308, 1.0, 1.7e308]]
)
@pytest.mark.parametrize("stat", ["mean", "median", "p90", "min"])
def test_huge_finite_samples_are_valid_and_evaluate(tmp_path: Path, samples: list[float], stat: str) -> None:
    from tracker.core.bench_verdict import evaluate
    from tracker.core.model import BenchGate
    from tracker.core.stats import compute_stat
    from tracker.store.result_files import load_result

    unit = "us" if min(samples) > 0 else "x"
    run = load_result(write(tmp_path / "r.json", result([_huge_case("m", samples, unit)])))
    assert math.isfinite(compute_stat(stat, run.cases[0].samples))
    for confidence in (None, 0.9):
        outcome = evaluate(BenchGate(bench="m", where={"k": 1}, at_most=1e308, stat=stat, confidence=confidence), [run])
        assert outcome.summary and outcome.value is not None and math.isfinite(outcome.value)


@pytest.mark.parametrize(("where", "reason"), [("samples", "cases[0].samples[1]: Input should be a finite number"),
                                               ("params", "cases[0].params.k"), ("info", "cases[0].info.k"),
                                               ("stats", "cases[0].stats.mean: Input should be a finite number")])  # fmt: skip
def test_non_finite_values_are_rejected_with_a_reason(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path, where: str, reason: str
) -> None:
    root = repo(FILES)
    text = json.dumps(result([case("m", {"k": 1}, [1.0, 2.0])]))
    if where == "samples":
        text = text.replace('"samples": [1.0, 2.0]', '"samples": [1.0, 1e400]')
    elif where == "params":
        text = text.replace('"params": {"k": 1}', '"params": {"k": 1e400}')
    elif where == "info":
        text = text.replace('"params": {"k": 1}', '"params": {"k": 1}, "info": {"k": -1e400}')
    else:
        text = text.replace('"mean": 1.5', '"mean": 1e400')
    (tmp_path / "r.json").write_text(text)
    res = cli(root, "ingest", str(tmp_path / "r.json"))
    assert res.code == 8 and f"r.json: {reason}" in res.err, res.err


def test_the_mean_of_samples_whose_sum_overflows() -> None:
    from tracker.core.stats import compute_stat, interpolate

    assert compute_stat("mean", [1.7e308, 1.7e308]) == 1.7e308
    assert compute_stat("median", [1.7e308, 1.7e308]) == 1.7e308
    assert compute_stat("p90", [-1.7e308, 1.7e308]) == pytest.approx(0.8 * 1.7e308)
    assert interpolate(-1.7e308, 1.7e308, 0.0) == -1.7e308 and interpolate(1.0, 3.0, 0.5) == 2.0


# ---------------------------------------------------------------------------------------------------------------
# 9 (files). FIFOs, devices, symlinks out of the repository: refused, never waited on.


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_devices_and_symlinks_out_of_the_repository(repo: Callable[..., Path], tmp_path: Path) -> None:
    root = repo(FILES)
    (root / STORE).mkdir(parents=True)
    os.mkfifo(root / STORE / "fifo.json")
    os.symlink("/dev/zero", root / STORE / "zero.json")
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(run_doc("2026-11-29T11:02:03Z")))
    os.symlink(outside, root / STORE / "out.json")
    (root / "bench/results").mkdir(parents=True)
    os.mkfifo(root / "bench/results/fifo.json")
    os.symlink(write(tmp_path / "r.json", result([case("m", {"k": 1}, [1.0])])), root / "bench/results/out.json")
    store = load(root, strict=False)
    assert store.invalid == [
        f"{STORE}/fifo.json: refused: not a regular file (a FIFO)",
        f"{STORE}/out.json: refused: it resolves to {outside.resolve()}, outside the repository {root.resolve()}",
        f"{STORE}/zero.json: refused: it resolves to /dev/zero, outside the repository {root.resolve()}",
    ]
    proc = tracker(root, "check", timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "bench/results/fifo.json: refused: not a regular file (a FIFO)" in proc.stdout
    assert "bench/results/out.json: refused: it resolves to" in proc.stdout
    for name in ("fifo.json", "zero.json", "out.json"):
        (root / STORE / name).unlink()
    proc = tracker(root, "status", "--json", timeout=60)
    reason = json.loads(proc.stdout)["plans"][0]["phases"][1]["gates"][0]["reason"]
    assert reason.startswith(
        "invalid result file, fix or remove it: bench/results/fifo.json: refused: not a regular file (a FIFO)"
    )
    os.mkfifo(tmp_path / "in.fifo")
    proc = tracker(root, "ingest", str(tmp_path / "in.fifo"), timeout=60)
    assert (proc.returncode, proc.stderr) == (
        8,
        f"tracker: error: {tmp_path / 'in.fifo'}: refused: not a regular file (a FIFO)\n",
    )
    proc = tracker(root, "ingest", "/dev/zero", timeout=60)
    assert (proc.returncode, proc.stderr) == (
        8,
        "tracker: error: /dev/zero: refused: not a regular file (a character device)\n",
    )


# ---------------------------------------------------------------------------------------------------------------
# 10. ingest's tracebacks, a store that is a file, a repository without commits.


def test_junit_time_that_is_not_a_number(repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path) -> None:
    root = repo(FILES)
    for bad in ("abc", "nan", "1e400"):
        (tmp_path / "j.xml").write_text(JUNIT.format(stamp="2026-11-29T11:02:03+00:00", time=bad))
        res = cli(root, "ingest", str(tmp_path / "j.xml"))
        assert (res.code, res.err) == (
            8,
            f"tracker: error: {tmp_path / 'j.xml'}: testcase 'tests/test_a.py::test_x': time '{bad}' is not a finite number of seconds\n",
        )
    (tmp_path / "j.xml").write_text(JUNIT.format(stamp="2026-02-30T11:02:03", time="1"))
    res = cli(root, "ingest", str(tmp_path / "j.xml"))
    assert res.code == 8 and "testsuite timestamp '2026-02-30T11:02:03' is not an ISO-8601 time" in res.err


@pytest.mark.parametrize(("record", "reason"), [
    ({"$report_type": "CollectReport", "nodeid": 5, "outcome": "failed"}, ":2: CollectReport nodeid 5 is not a string"),
    ({"$report_type": "TestReport", "nodeid": "t.py::a", "when": ["call"], "outcome": "passed"}, ":2: TestReport when is a list, not one of setup"),
    ({"$report_type": "TestReport", "nodeid": "t.py::a", "when": "call", "outcome": 1}, ":2: TestReport outcome 1 is not one of passed"),
    ({"$report_type": "TestReport", "nodeid": "t.py::a", "when": "call", "outcome": "passed", "duration": 1e400},
     ":2: TestReport duration inf is not a finite number of seconds"),
    ({"$report_type": "TestReport", "nodeid": "t.py::a", "when": "call", "outcome": "passed", "wasxfail": [1]}, ":2: TestReport wasxfail is a list, not a string"),
    ({"$report_type": "SessionStart", "pytest_version": {"v": 8}}, ":2: SessionStart pytest_version is an object, not a string"),
])  # fmt: skip
def test_reportlog_records_of_the_wrong_type(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path, record: dict[str, Any], reason: str
) -> None:
    root = repo(FILES)
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"$report_type": "SessionStart", "pytest_version": "8"}) + "\n" + json.dumps(record)
                   + '\n{"$report_type": "SessionFinish", "exitstatus": 0}\n')  # fmt: skip
    res = cli(root, "ingest", str(log))
    assert res.code == 8 and res.err.startswith(f"tracker: error: {log}:") and reason in res.err, res.err


def test_a_store_that_is_a_regular_file(repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path) -> None:
    plan = PLAN + phase("P3", 'manual = "looked at it"')
    root = repo({**FILES, "plans/0001-a.md": plan})
    (root / ".tracker").mkdir()
    (root / STORE).write_text("not a directory")
    (tmp_path / "j.xml").write_text(JUNIT.format(stamp="2026-11-29T11:02:03+00:00", time="1"))
    message = f"{root / STORE}: not a directory (the evidence store .tracker/evidence/ must be one)"
    res = cli(root, "ingest", str(tmp_path / "j.xml"))
    assert (res.code, res.err) == (8, f"tracker: error: {message}\n")
    res = cli(root, "signoff", "0001/P3", "--gate", "1", "--by", "me", "--why", "ok")
    assert (res.code, res.err) == (8, f"tracker: error: {message}\n")
    res = cli(root, "verify", "0001/P1")
    assert (res.code, res.err) == (8, f"tracker: error: {message}\n")
    assert gates(cli, root)[0] == (
        False,
        "invalid evidence file, fix or remove it: .tracker/evidence: not a directory (the evidence store .tracker/evidence/ must be one)",
    )
    assert cli(root, "check").code == 1


def test_ingest_in_a_repository_without_commits(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES, commit=False)
    (tmp_path / "j.xml").write_text(JUNIT.format(stamp="2026-11-29T11:02:03+00:00", time="1"))
    res = cli(root, "ingest", str(tmp_path / "j.xml"))
    assert res.code == 3
    assert res.err == ("tracker: error: the repository has no commit yet: a reportlog or JUnit run is stored with the file ids of "
                       "the commit it ran on; commit that code first, or name it with --commit\n")  # fmt: skip
    assert "--commit HEAD" not in res.err
    # A result file or a plugin run carries its own provenance: no commit is needed for those.
    assert cli(root, "ingest", str(write(tmp_path / "r.json", result([case("m", {"k": 1}, [1.0])])))).code == 0


# ---------------------------------------------------------------------------------------------------------------
# Trust model: unknown versions, commits that are not in the history.


def test_check_names_evidence_whose_commit_is_not_in_the_history(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = repo(FILES)
    head = git(root, "rev-parse", "HEAD").strip()
    made_up = "1234567" + "0" * 33
    put(
        root,
        "real.json",
        run_doc("2026-11-29T11:02:03Z", provenance={"time": "2026-11-29T11:02:03Z", "host": "h", "commit": head}),
    )
    put(
        root,
        "fake.json",
        run_doc("2026-11-29T11:02:04Z", provenance={"time": "2026-11-29T11:02:04Z", "host": "h", "commit": made_up}),
    )
    put(root, "signoff.json", signoff_doc(commit=made_up))
    write(root / "bench/results/r.json", result([case("m", {"k": 1}, [1.0])], commit=made_up))
    assert cli(root, "update").code == 0
    res = cli(root, "check")
    assert res.code == 1
    lines = [ln for ln in res.out.splitlines() if "is not in this repository's history" in ln]
    why = f"its commit {made_up} is not in this repository's history (evidence is trusted like a committed file: fetch that history, or remove the file)"
    assert lines == [
        f".tracker/evidence/fake.json: {why}",
        f".tracker/evidence/signoff.json: {why}",
        f"bench/results/r.json: {why}",
    ]
    for name in ("fake.json", "signoff.json"):
        (root / STORE / name).unlink()
    (root / "bench/results/r.json").unlink()
    assert cli(root, "update").code == 0
    git(root, "add", STORE)  # evidence a status rests on is committed, or check names it
    assert cli(root, "check").out == "tracker check: no regressions, plan files up to date\n"


def test_result_versions_the_code_does_not_know(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    for version in (99, True, 1.0, "1"):
        doc = {**result([case("m", {"k": 1}, [1.0])]), "version": version}
        res = cli(root, "ingest", str(write(tmp_path / "r.json", doc)))
        assert res.code == 8 and f"unsupported version {version!r} (this tracker reads version 1)" in res.err, res.err
        put(root, "r.json", doc)
        assert gates(cli, root)[1] == (
            False,
            f"invalid evidence file, fix or remove it: .tracker/evidence/r.json: unsupported tracker-bench-result version {version!r} (this tracker reads version 1)",
        )


# ---------------------------------------------------------------------------------------------------------------
# 11 (verify's message): SIGINT to the tracker alone, while its pytest goes on to finish.


SLOW_A = "import os, time\n\ndef test_x():\n    open(os.environ['MARK'], 'w').close()\n    time.sleep(2)\n"


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_an_interrupted_verify_says_what_its_finished_run_recorded(repo: Callable[..., Path], tmp_path: Path) -> None:
    root = repo({**FILES, "tests/test_a.py": SLOW_A})
    mark = tmp_path / "started"
    code = "from tracker.cli import main; main(['verify', '0001/P1'])"
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "MARK": str(mark)}
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert mark.exists()
    os.kill(proc.pid, signal.SIGINT)  # the tracker alone: its pytest is not signalled and finishes its run
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    [stored] = (root / STORE).glob("*.json")
    assert json.loads(stored.read_text())["status"] == "complete"
    assert "no result was recorded as passing" not in err
    assert (f"the tracker was stopped, but its pytest run finished and recorded complete evidence in {STORE}/{stored.name} "
            "(1 passed); it counts") in err  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Smaller: the bootstrap's cost is bounded.


def test_the_bootstrap_over_200k_samples_is_bounded_and_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted, not timed: the values the bootstrap's resamples draw. 200k samples a side cost what 2,000 do
    # (2 x 2,000 resamples of a 2,000-sample subsample: 8M draws, ~3 s); resampling all of them was 800M (~5 min).
    import random

    from tracker.core import stats

    rng = random.Random(7)
    cand = [rng.gauss(10, 1) for _ in range(200_000)]
    base = [rng.gauss(20, 1) for _ in range(200_000)]
    budget, drawn = 2 * stats.RESAMPLES * 2_000, [0]
    choices = random.Random.choices

    def counting(self: random.Random, population: Any, *args: Any, k: int = 1, **kwargs: Any) -> list[Any]:
        drawn[0] += k
        assert drawn[0] <= budget, f"over {budget} values drawn: the bootstrap resamples all the samples"
        return choices(self, population, *args, k=k, **kwargs)

    monkeypatch.setattr(random.Random, "choices", counting)
    bound = stats.bootstrap_bound("mean", cand, 0.95, False, base, "lower")
    assert 0 < drawn[0] <= budget, drawn  # the mean's resamples are drawn by choices() (0 would prove nothing)
    monkeypatch.undo()
    assert stats.bootstrap_bound("mean", cand, 0.95, False, base, "lower") == bound
    assert 1.9 < bound < 2.0  # the subsample's bound, a little wider than all samples' (~1.998)

    # An order statistic draws its resample's value directly: two Beta draws per resample and side, no choices().
    betas, beta = [0], random.Random.betavariate

    def counted_beta(self: random.Random, alpha: float, b: float) -> float:
        betas[0] += 1
        return beta(self, alpha, b)

    monkeypatch.setattr(random.Random, "betavariate", counted_beta)
    monkeypatch.setattr(random.Random, "choices", counting)
    drawn[0] = budget  # any choices() call now fails
    median = stats.bootstrap_bound("median", cand, 0.95, False, base, "lower")
    assert 0 < betas[0] <= 2 * 2 * stats.RESAMPLES, betas
    monkeypatch.undo()
    assert stats.bootstrap_bound("median", cand, 0.95, False, base, "lower") == median
    assert 1.9 < median < 2.0


def test_small_sample_counts_bootstrap_as_before() -> None:
    from tracker.core import stats

    samples = [float(x % 17) + 1 for x in range(300)]
    assert stats.subsample(samples, None) == samples  # no subsample: the rng is not even asked


def test_max_future_is_five_minutes() -> None:
    from tracker.base.contract import MAX_FUTURE_S, Clock

    assert MAX_FUTURE_S == 300
    clock = Clock(0)
    assert (clock.now, clock.limit) == ("1970-01-01T00:00:00Z", "1970-01-01T00:05:00Z")
    assert clock.future("1970-01-01T00:05:00Z") is None and clock.future("1970-01-01T00:05:01Z")
