"""The evidence store (tracker/store/evidence.py): hostile, future or malformed files are invalid, never a crash; the running slot names the test that crashed."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_evidence import FAST, HOSTILE, TIMES, dumps, mutated, utc_at
from hypothesis import example, given, settings
from hypothesis import strategies as st
from resultfiles import case, result, write
from tracker_testutil import phase, plan_text

from tracker.base.contract import EVIDENCE_DIR, RUNNING_SLOT_LIMIT, running_file, utc_time
from tracker.base.file_index import FileIndex
from tracker.core.model import BenchGate, GateVerdict, ManualGate, Phase, Plan, Store, TestGate
from tracker.core.status import compute
from tracker.store.evidence import crashed_test, load

CHECKOUT = Path(__file__).resolve().parents[3]


RECORDING = [sys.executable, "-m", "pytest", "-p", "tracker.pytest_plugin", "--tracker-record", "-q", "-p",
             "no:cacheprovider"]  # fmt: skip


# test_y passes; test_x passes, or kills its interpreter when CRASH is set (a segfault, an OOM kill).
TESTS = {
    "tests/test_a.py": (
        "import os\n\n\ndef test_y():\n    pass\n\n\n"
        "def test_x():\n    if os.environ.get('CRASH'):\n        os._exit(3)\n"
    ),
}


PLAN = plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_y"'))


def statuses(cli: Callable[..., Any], root: Path) -> dict[str, tuple[str, list[bool]]]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return {
        f"{p['id']}/{ph['id']}": (ph["status"], [g["met"] for g in ph["gates"]])
        for p in json.loads(res.out)["plans"]
        for ph in p["phases"]
    }


def cold(cli: Callable[..., Any], root: Path) -> dict[str, tuple[str, list[bool]]]:
    """Status with no cache at all."""
    shutil.rmtree(root / ".tracker/cache", ignore_errors=True)
    return statuses(cli, root)


def record(root: Path, crash: bool = False) -> None:
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    env.pop("CRASH", None)
    if crash:
        env["CRASH"] = "1"
    proc = subprocess.run([*RECORDING, "tests"], cwd=root, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == (3 if crash else 0), proc.stdout + proc.stderr


def test_a_crashed_runs_slot_removed_is_seen_by_a_warm_status(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """A run that crashed in test_x names its file in the evidence file and test_x in the running slot beside it
    (``.NAME.json.running``, untracked: ``git clean``, ``git stash -u`` remove it). With the slot, only test_x
    crashed and the gate on test_y is met; without it the crash counts against every test of the file. A warm
    status after the slot went must say what a cold one says, not keep the met gate."""
    root = repo({"plans/0001-a.md": PLAN, **TESTS})
    record(root)
    record(root, crash=True)
    (slot,) = (root / ".tracker/evidence").glob(".*.running")
    assert cold(cli, root)["0001/P1"] == ("done", [True])
    assert statuses(cli, root)["0001/P1"] == ("done", [True])  # warm, from the index
    slot.unlink()
    warm = statuses(cli, root)
    assert warm == cold(cli, root)
    assert warm["0001/P1"] != ("done", [True])


TEST_A = "def test_x():\n    assert True\n"


PLAN_REL_EVIDENCE = plan_text(
    "0001", phase("P1", 'test = "tests/test_a.py"') + phase("P2", 'bench = "m"\nwhere = { k = 1 }\nat_most = 5')
)


FILES = {"plans/0001-a.md": PLAN_REL_EVIDENCE, "tests/test_a.py": TEST_A, "conftest.py": "",
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


def test_a_store_that_is_a_regular_file(repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path) -> None:
    plan = PLAN_REL_EVIDENCE + phase("P3", 'manual = "looked at it"')
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


NODEID = "tests/test_a.py::test_x"


PLANS = [
    Plan(
        "0001",
        "P",
        "plans/0001-p.md",
        None,
        (Phase("P1", "t", (), (), (TestGate("tests/test_a.py"), ManualGate("ok"))),),
    )
]


def run_doc_props_evidence(outcome: str, when: str = "2026-11-29T11:02:03Z") -> dict[str, Any]:
    return {
        "schema": "tracker-test-run", "version": 1, "status": "complete",
        "provenance": {"time": when, "host": "h", "commit": None, "dirty": None, "args": ["tests"]},
        "gates": {"0001/P1#1": "h"}, "files": {"tests/test_a.py": "a" * 40},
        "tests": [{"nodeid": NODEID, "outcome": outcome, "reason": "", "duration": 0.1, "markers": []}],
        "rootdir": "r", "exitstatus": 0, "duration": 1.0, "losses": [],
    }  # fmt: skip


def signoff_doc_props_evidence() -> dict[str, Any]:
    return {"schema": "tracker-signoff", "version": 1, "gate_key": "0001/P1#2", "gate_hash": "h", "phase_manual": ["h"], "manual": "ok",
            "by": "me", "why": "looked", "time": "2026-11-29T11:02:03Z", "host": "h", "commit": None, "dirty": None, "files": {}}  # fmt: skip


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    (root / EVIDENCE_DIR).mkdir(parents=True)
    return root


def _bench_never(gate: BenchGate) -> GateVerdict:
    return GateVerdict(False, "no benchmark evidence")


def check_store(root: Path, data: bytes) -> Store:
    """Write ``data`` as the store's one file; load and derive: the properties that must hold whatever it holds."""
    (root / EVIDENCE_DIR / "x.json").write_bytes(data)
    store = load(root, strict=False)
    files = (
        [r.file for r in store.runs] + [f for f, _ in store.signoffs] + [f for f, _ in store.bench] + store.incomplete
    )
    assert len(files) + len(store.invalid) == 1
    for line in store.invalid:
        path, _, reason = line.partition(": ")
        assert path == ".tracker/evidence/x.json" and reason and "\n" not in reason and len(reason) < 2000, line
    statuses = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)
    test_gate, manual_gate = statuses["0001/P1"].verdicts
    for verdict in (test_gate, manual_gate):  # what status prints can be printed
        (verdict.reason + repr(verdict.source)).encode("utf-8")
    passing = [r for r in store.runs for rec in r.tests if rec["nodeid"] == NODEID and rec["outcome"] == "passed"]
    if test_gate.met:  # never a false pass
        assert passing and not store.invalid
    if manual_gate.met:
        assert store.signoffs
    return store


def _half_pair(text: str) -> bool:
    try:
        json.loads(json.dumps(text)).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


DOCTEST_PLANS = [
    Plan("0001", "P", "plans/0001-p.md", None,
         (Phase("P1", "t", (), (), (TestGate("tests/test_a.py", options=("--doctest-modules", "-p", "x")),)),))
]  # fmt: skip


@settings(FAST, max_examples=400)
@given(doc=st.one_of(mutated(lambda: run_doc_props_evidence("passed")), mutated(lambda: run_doc_props_evidence("failed")), mutated(signoff_doc_props_evidence),
                     mutated(lambda: result([case("m", {"k": 1}, [1.0, 2.0])]))))  # fmt: skip
def test_a_mutated_store_file_is_used_or_invalid_never_a_crash(store_root: Path, doc: dict[str, Any]) -> None:
    check_store(store_root, dumps(doc))


@settings(FAST, max_examples=200)
@given(data=st.one_of(st.binary(max_size=200), st.binary(max_size=40).map(lambda b: b"\xff\xfe" + b + json.dumps(run_doc_props_evidence("passed")).encode()),
                      st.builds(lambda d: json.dumps(run_doc_props_evidence("passed")).encode()[:d], st.integers(0, 400))))  # fmt: skip
def test_raw_bytes_in_the_store(store_root: Path, data: bytes) -> None:
    check_store(store_root, data)


@settings(FAST, max_examples=150)
@given(when=TIMES, outcome=st.sampled_from(["passed", "failed"]))
def test_any_time_in_the_store(store_root: Path, when: str, outcome: str) -> None:
    limit_before = utc_at(300)
    store = check_store(store_root, json.dumps(run_doc_props_evidence(outcome, when)).encode())
    utc_when = utc_time(when)
    if utc_when is None or utc_when > utc_at(300):
        assert store.invalid and not store.runs  # impossible, naive or future: unusable
    elif utc_when <= limit_before:  # (a time within the second the clock ticked may go either way)
        assert store.runs and store.runs[0].time == utc_when


@settings(FAST, max_examples=150)
@example(value="\ud800\udc00")  # JSON writes it as an escaped surrogate pair: U+10000, valid text
@example(value="\udc80")  # half a pair: not text
@example(value="--ignore=a\nb\x1b[2J\u202e")  # a line break, a terminal escape, a bidirectional override
@given(value=HOSTILE)
def test_any_narrowed_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.narrowed`` (the options that narrowed a run's collection): a non-empty string is used, and then the
    run never names its gate's tests (the only run: unmet), the reason naming the value as read (JSON joins an escaped
    surrogate pair into its one character) on one line, each unprintable character as its escape; half a surrogate
    pair is not text: the file is invalid, the reason naming that half (escaped); anything else makes the file
    invalid, never a crash."""
    doc = run_doc_props_evidence("passed")
    doc["provenance"]["narrowed"] = value
    data = dumps(doc)
    store = check_store(store_root, data)
    if store.runs:
        assert isinstance(value, str) and value
        read = store.runs[0].provenance["narrowed"]
        assert read == json.loads(data)["provenance"]["narrowed"]
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in read)
        test_gate = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
        assert not test_gate.met and f"narrowed by {shown}, and no run" in test_gate.reason
        assert test_gate.reason.isprintable()
    elif isinstance(value, str) and value and json.loads(data)["provenance"]["narrowed"] == value:
        (line,) = store.invalid  # a string the file holds as it is, refused: only half a surrogate pair
        head, _, named = line.partition(": holds text that is not valid Unicode (a lone surrogate, ")
        half = ast.literal_eval(named.removesuffix(")"))
        assert head == ".tracker/evidence/x.json" and half in value and all(0xD800 <= ord(c) <= 0xDFFF for c in half)


@settings(FAST, max_examples=150)
@example(value="-p no:warnings")
@example(value="\udc80")  # half a surrogate pair: not text
@example(value="-W\n\x1b[2J\u202e")  # a line break, a terminal escape, a bidirectional override
@given(value=HOSTILE)
def test_any_altered_or_inifile_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.altered`` (options that may have turned a failure into a pass, adv F6): a non-empty string is used,
    and then the run's pass meets no gate, the reason naming the value on one line; ``provenance.inifile``: a string
    or null is used; anything else makes the file invalid, never a crash."""
    for key in ("altered", "inifile"):
        doc = run_doc_props_evidence("passed")
        doc["provenance"][key] = value
        store = check_store(store_root, dumps(doc))
        fine = (isinstance(value, str) and (value != "" or key == "inifile")) or (value is None and key == "inifile")
        if not fine:
            assert store.invalid and not store.runs, (key, value)
            continue
        if not store.runs:  # a string the file cannot hold as text: half a surrogate pair
            assert isinstance(value, str) and _half_pair(value) and store.invalid
            continue
        test_gate = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
        if key == "inifile":
            assert test_gate.met, test_gate
            continue
        assert not test_gate.met and " is not counted: it ran with " in test_gate.reason, test_gate
        assert test_gate.reason.isprintable()


@settings(FAST, max_examples=150)
@given(
    value=st.one_of(
        HOSTILE,
        st.dictionaries(st.sampled_from(["tests/test_a.py", "tests", "tests/test_a.py::test_x", ""]), HOSTILE),
        st.dictionaries(st.text(max_size=20), st.text(max_size=20)),
    )
)
def test_any_outside_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.outside`` ({test file: why it is not the repository's}): an object of strings is used, and a pass of
    a test whose file it names meets no gate (its reason says why); anything else makes the file invalid."""
    doc = run_doc_props_evidence("passed")
    doc["provenance"]["outside"] = value
    store = check_store(store_root, dumps(doc))
    strings = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if store.runs:
        assert strings
        read = store.runs[0].provenance["outside"]  # as read back (JSON joins an escaped surrogate pair)
        test_gate = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
        named = read.get("tests/test_a.py")
        assert test_gate.met == (named is None)
        if named is not None:
            assert test_gate.reason == f"{named}: its tests are not the repository's (tracker lint)"
    else:  # not an object of strings, or one holding half a surrogate pair (not Unicode text)
        assert not strings or any(_half_pair(t) for t in (*value, *value.values()))  # type: ignore[union-attr]


@settings(FAST, max_examples=150)
@example(value=["--doctest-modules", "-p x"])
@example(value=["-p x", "--doctest-modules", "--import-mode=prepend"])
@example(value=["--doctest-modules", "-p", "x"])  # the gate's spelling, not a run's: -p without its plugin
@example(value=["--doctest-modules"])
@given(
    value=st.one_of(
        HOSTILE,
        st.lists(st.sampled_from(["--doctest-modules", "-p x", "-p", "x", "--import-mode=importlib", "", "\udc80"])),
    )
)
def test_any_options_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.options`` (the gate options a run had): a list of strings is used, and the run names the tests of
    a gate with options (``--doctest-modules``, ``-p x``) only when it holds each of them as a run spells it (``-p
    x``), else the gate, whose only run it is, is unmet saying which it lacked; anything else makes the file
    invalid, never a crash."""
    doc = run_doc_props_evidence("passed")
    doc["provenance"]["options"] = value
    store = check_store(store_root, dumps(doc))
    strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if not store.runs:
        assert not strings or any(_half_pair(t) for t in value)  # type: ignore[union-attr]
        return
    assert strings
    verdict = compute(DOCTEST_PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
    had = {"--doctest-modules", "-p x"} <= set(value)  # type: ignore[arg-type]
    assert verdict.met == had, verdict
    if not had:
        lacking = [u for u in ("--doctest-modules", "-p x") if u not in value]  # type: ignore[operator]
        assert f"ran it without {', '.join(lacking)}, and no run" in verdict.reason, verdict


@pytest.mark.slow
@settings(FAST, max_examples=5000)
@given(
    doc=st.one_of(
        mutated(lambda: run_doc_props_evidence("passed")),
        mutated(lambda: run_doc_props_evidence("failed")),
        mutated(signoff_doc_props_evidence),
    )
)
def test_a_mutated_store_file_deep(store_root: Path, doc: dict[str, Any]) -> None:
    check_store(store_root, dumps(doc))


RUNNING = {"nodeid": "tests/test_c.py", "markers": [], "pid": 4242}


def slot_of(tmp_path: Path, content: bytes) -> Path:
    evidence = tmp_path / "run.json"
    evidence.write_text("{}")
    running_file(evidence).write_bytes(content)
    return evidence


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["nodeid", "markers", "pid", "x"]), inner, max_size=4)
    ),
    max_leaves=12,
)


CRASH_PLAN = """# Demo

```plan
id = "0001"
title = "Demo"
```

```phase
id = "P1"
title = "Crash"

[[gate]]
test = "tests/test_c.py"
```
"""


def test_the_slot_names_the_test_inside_the_file_the_evidence_names(tmp_path: Path) -> None:
    record = {"nodeid": "tests/test_c.py::test_b[1]", "markers": ["gpu"], "pid": 4242}
    evidence = slot_of(tmp_path, json.dumps(record).encode().ljust(300))
    assert running_file(evidence).name == ".run.json.running"
    assert crashed_test(evidence, RUNNING) == record
    exact = {**record, "markers": ["gpu"]}
    assert crashed_test(evidence, exact) == record  # the evidence file named the test itself: the same


@pytest.mark.parametrize(
    "slot",
    [
        {"nodeid": "tests/test_c.py::test_b", "markers": [], "pid": 4243},  # another process's
        {"nodeid": "tests/test_c.pyx::test_b", "markers": [], "pid": 4242},  # not inside tests/test_c.py
        {"nodeid": "tests/test_d.py::test_b", "markers": [], "pid": 4242},
        {"nodeid": "tests/test_c.py::test_b", "markers": "gpu", "pid": 4242},
        {"nodeid": "tests/test_c.py::test_b", "markers": [], "pid": True},
        {"nodeid": 7, "markers": [], "pid": 4242},
        {"nodeid": "tests/test_c.py::test_b", "markers": []},
        ["tests/test_c.py::test_b"],
    ],
)
def test_a_slot_that_does_not_agree_leaves_the_file(tmp_path: Path, slot: object) -> None:
    evidence = slot_of(tmp_path, json.dumps(slot).encode())
    assert crashed_test(evidence, RUNNING) == RUNNING


def test_a_slot_that_is_missing_cut_or_no_file_leaves_the_file(tmp_path: Path) -> None:
    evidence = slot_of(tmp_path, b'{"nodeid": "tests/test_c.py::test_b", "mar')
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).unlink()
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).mkdir()
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).rmdir()
    os.mkfifo(running_file(evidence))  # never blocks on a FIFO
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).unlink()
    with open(running_file(evidence), "wb") as fh:
        fh.truncate(RUNNING_SLOT_LIMIT + 1)
    assert crashed_test(evidence, RUNNING) == RUNNING
    assert crashed_test(evidence, {"nodeid": "tests/test_c.py", "markers": []}) == {
        "nodeid": "tests/test_c.py",
        "markers": [],
    }  # no pid


@given(
    st.one_of(
        st.binary(max_size=300),
        JSONISH.map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries(
            {
                "nodeid": st.sampled_from(["tests/test_c.py", "tests/test_c.py::a", "tests/test_c.pyz::a", "x::y", ""]),
                "markers": st.lists(st.text(max_size=5), max_size=3),
                "pid": st.sampled_from([4242, 4241, 0, -1]),
            }
        ).map(lambda v: json.dumps(v).encode()),
    )
)
@settings(max_examples=600, deadline=None)
def test_whatever_the_slot_holds_the_crash_stays_inside_the_file(content: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        got = crashed_test(slot_of(Path(tmp), content), RUNNING)
    inside = got["nodeid"] == "tests/test_c.py" or got["nodeid"].startswith("tests/test_c.py::")
    assert got == RUNNING or (got["pid"] == 4242 and inside and all(isinstance(m, str) for m in got["markers"]))


def test_the_store_and_verify_name_the_test_that_crashed_among_others_of_its_file(repo) -> None:
    from tracker.commands.common import pytest_env
    from tracker.store import evidence

    root = repo(
        {
            "plans/0001-demo.md": CRASH_PLAN,
            "tests/test_c.py": "import os\ndef test_a(): pass\ndef test_b(): os._exit(3)\n",
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tracker", "verify"], cwd=root, env=pytest_env(root), capture_output=True, text=True
    )
    assert (
        proc.returncode == 6
        and "it crashed while running tests/test_c.py::test_b, which counts as an error" in proc.stderr
    ), proc.stderr
    [run] = evidence.load(root, strict=False).runs
    assert [r["nodeid"] for r in run.tests] == ["tests/test_c.py::test_b"]


@pytest.mark.parametrize("last", ["tests/t.py", "tests/" + "/".join(["d" * 200] * 6) + "/t.py"], ids=["short", "long"])
def test_the_evidence_file_names_the_crashed_file_after_its_running_part_was_rewritten_in_place(
    repo, tmp_path: Path, last: str
) -> None:
    """The incomplete evidence file's ``running`` part is rewritten in place for each test file (tracker.pytest_plugin
    ``_Tail``): after a longer part, a shorter one leaves spaces, never a piece of the old; one longer than the room
    rewrites the file whole. Read without the slot (as a reader with the evidence file alone), the crash is the
    last file's."""
    import json as _json

    from tracker.base.contract import running_file
    from tracker.store import evidence

    name = last.rsplit("/", 1)[-1]
    files = {f"tests/test_{'m' * 60}_{i}.py": "def test_a(): pass\ndef test_b(): pass\n" for i in range(3)}
    files[last.replace(name, "test_" + name)] = (
        "import os, signal\ndef test_a(): pass\ndef test_z(): os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    root = repo({"plans/0001-demo.md": CRASH_PLAN.replace("tests/test_c.py", "tests/"), **files})
    out = tmp_path / "ev"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files, f"--tracker-record={out}"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    assert proc.returncode < 0, proc.stdout + proc.stderr  # killed
    [path] = [p for p in out.glob("*.json")]
    running_file(path).unlink(missing_ok=True)  # the evidence file alone
    data = _json.loads(path.read_bytes())
    assert data["status"] == "incomplete"
    crashed = evidence.crashed_run(path.name, data)
    assert crashed is not None and crashed.tests[0]["nodeid"] == last.replace(name, "test_" + name)
