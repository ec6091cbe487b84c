"""Ingest parsers over files written by real pytest runs (pytest-reportlog and --junitxml)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_evidence import FAST, TIMES, dumps, mutated, utc_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resultfiles import case, result, write
from tracker_testutil import git, make_files, phase, plan_text, record, status_of

from tracker.base.contract import EVIDENCE_DIR, utc_time
from tracker.store.evidence import load
from tracker.store.ingest import IngestError, parse_junit, parse_reportlog, shorten, sniff

SAMPLE = """
import os
import pytest

@pytest.fixture
def broken_setup():
    raise RuntimeError("no device")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("leaked handle")

def test_pass(): pass
def test_fail(): assert 1 == 2, "one is not two"
def test_skip(): pytest.skip("CUDA not available")
@pytest.mark.xfail(reason="known bug")
def test_xfail(): assert False
@pytest.mark.xfail(reason="maybe fixed")
def test_xpass(): pass
@pytest.mark.xfail(reason="must fail", strict=True)
def test_xpass_strict(): pass
def test_setup_error(broken_setup): pass
def test_teardown_error(broken_teardown): pass
class TestGroup:
    @pytest.mark.parametrize("n", [1, 2])
    def test_param(self, n): assert n == 1
"""

EXPECTED = {
    "test_pass": ("passed", ""),
    "test_fail": ("failed", "AssertionError: one is not two"),
    "test_skip": ("skipped", "CUDA not available"),
    "test_xfail": ("xfailed", "known bug"),
    "test_xpass": ("xpassed", "maybe fixed"),
    "test_xpass_strict": ("failed", "[XPASS(strict)] must fail"),
    "test_setup_error": ("error", "setup: RuntimeError: no device"),
    "test_teardown_error": ("error", "teardown: RuntimeError: leaked handle"),
    "TestGroup::test_param[1]": ("passed", ""),
    "TestGroup::test_param[2]": ("failed", "assert 2 == 1"),
}


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain pytest in ``root``, writing no bytecode cache: ``_failing_reportlog`` edits and restores a module within
    one second and one size, which a cached ``.pyc`` of the edit would outlive (Python trusts it), failing the next
    run's test (seen flaky where PYTHONDONTWRITEBYTECODE was unset)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / "tests").mkdir()
    (root / "tests" / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    proc = run_pytest(root, "tests", "--report-log=log.jsonl", "--junitxml=junit.xml")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return root


def test_reportlog_outcomes_for_every_phase(sample: Path) -> None:
    run = parse_reportlog(sample / "log.jsonl")
    assert run.complete and run.exitstatus == 1 and run.pytest_version == pytest.__version__
    got = {o.nodeid.removeprefix("tests/test_sample.py::"): (o.outcome, o.reason) for o in run.outcomes}
    assert {k: (v[0], v[1][: len(EXPECTED[k][1])]) for k, v in got.items()} == EXPECTED
    assert all(o.duration >= 0 for o in run.outcomes)


def test_junit_outcomes_and_losses(sample: Path) -> None:
    run = parse_junit(sample / "junit.xml", root=sample)
    got = {o.nodeid.removeprefix("tests/test_sample.py::"): o.outcome for o in run.outcomes}
    expected = {k: v[0] for k, v in EXPECTED.items()}
    expected["test_xpass"] = "passed"  # the documented loss
    assert got == expected
    assert any("xpass" in loss for loss in run.losses) and any("per-phase" in loss for loss in run.losses)
    # Without the root the module/class split is guessed, and that loss is reported too.
    guessed = parse_junit(sample / "junit.xml")
    assert "tests/test_sample.py::TestGroup::test_param[1]" in {o.nodeid for o in guessed.outcomes}
    assert any("guessed from classname" in loss for loss in guessed.losses)


def test_a_plugin_run_recorded_without_a_commit_is_refused(repo, cli, tmp_path: Path) -> None:
    """adv F4: a `pytest --tracker-record` run in a copy of the tree elsewhere (no .git there, no TRACKER_COMMIT) with a
    passing impostor of a failing test was ingested as this repository's and made the phase done: its null commit
    says nothing ties it to this tree. Refused (exit 8, nothing stored); the device machine's run names its commit
    with TRACKER_COMMIT and is taken (tests/tracker/e2e/test_evidence_cli.py)."""
    from tracker_testutil import phase, plan_text

    from tracker.commands.common import pytest_command

    files = {
        "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/"')),
        "tests/test_a.py": "def test_a():\n    pass\n",
        "tests/test_b.py": "def test_b():\n    assert False\n",
    }
    root = repo(files)
    assert cli(root, "verify").code == 1
    copy = tmp_path / "y"
    (copy / "tests").mkdir(parents=True)
    (copy / "tests" / "test_a.py").write_text(files["tests/test_a.py"])
    (copy / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")  # the impostor
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
    out = tmp_path / "ev"
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", "tests", f"--tracker-record={out}"]
    assert subprocess.run(cmd, cwd=copy, env=env, capture_output=True, check=False).returncode == 0
    [recorded] = out.glob("*.json")
    assert json.loads(recorded.read_text())["provenance"]["commit"] is None
    before = sorted((root / ".tracker" / "evidence").iterdir())
    r = cli(root, "ingest", str(recorded))
    assert r.code == 8, r.out + r.err
    assert f"{recorded}: recorded without a commit" in r.err and "TRACKER_COMMIT" in r.err, r.err
    assert sorted((root / ".tracker" / "evidence").iterdir()) == before
    assert json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["status"] == "planned"


def test_collection_error_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "test_broken.py").write_text("import not_a_module_xyz\n", encoding="utf-8")
    run_pytest(tmp_path, "--report-log=log.jsonl")
    run = parse_reportlog(tmp_path / "log.jsonl")
    [outcome] = run.outcomes
    assert (outcome.nodeid, outcome.outcome) == ("test_broken.py", "error")
    assert "ModuleNotFoundError" in outcome.reason


def test_interrupted_run_is_incomplete(tmp_path: Path) -> None:
    (tmp_path / "test_int.py").write_text(
        "def test_a(): pass\ndef test_b(): raise KeyboardInterrupt\n", encoding="utf-8"
    )
    proc = run_pytest(tmp_path, "--report-log=log.jsonl")
    assert proc.returncode == 2
    run = parse_reportlog(tmp_path / "log.jsonl")
    assert (run.complete, run.why_incomplete, run.exitstatus) == (False, "interrupted", 2)


def test_crashed_run_is_incomplete(tmp_path: Path) -> None:
    (tmp_path / "test_crash.py").write_text(
        "import os\ndef test_a(): pass\ndef test_b(): os._exit(9)\n", encoding="utf-8"
    )
    run_pytest(tmp_path, "--report-log=log.jsonl")
    run = parse_reportlog(tmp_path / "log.jsonl")
    assert not run.complete and "no SessionFinish" in run.why_incomplete
    outcomes = {o.nodeid: (o.outcome, o.reason) for o in run.outcomes}
    assert outcomes == {
        "test_crash.py::test_a": ("passed", ""),
        "test_crash.py::test_b": ("error", "no call report (the run stopped inside this test)"),
    }


def test_truncated_last_line_and_bad_lines(sample: Path, tmp_path: Path) -> None:
    text = (sample / "log.jsonl").read_text(encoding="utf-8")
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    run = parse_reportlog(cut)
    assert not run.complete
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"$report_type": "SessionStart"}\nnot json\n{"$report_type": "SessionFinish", "exitstatus": 0}\n')
    with pytest.raises(IngestError, match=r"bad.jsonl:2: not JSON"):
        parse_reportlog(bad)
    bad.write_text('{"x": 1}\n')
    with pytest.raises(IngestError, match=r"bad.jsonl:1: not a reportlog record"):
        parse_reportlog(bad)


def test_junit_errors(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    path.write_text("<testsuites><testsuite>\n<testcase", encoding="utf-8")
    with pytest.raises(IngestError, match=r"j.xml:2:\d+: malformed XML"):
        parse_junit(path)
    path.write_text("<html/>", encoding="utf-8")
    with pytest.raises(IngestError, match=r"not JUnit XML \(root element <html>\)"):
        parse_junit(path)


def test_sniff(sample: Path, tmp_path: Path) -> None:
    assert sniff(sample / "log.jsonl") == "reportlog"
    assert sniff(sample / "junit.xml") == "junit"
    (tmp_path / "r.json").write_text('{"schema": "tracker-bench-result"}')
    assert sniff(tmp_path / "r.json") == "json"
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(
        IngestError, match="not a pytest reportlog, JUnit XML, tracker evidence or benchmark result file"
    ):
        sniff(tmp_path / "x.txt")


def test_shorten() -> None:
    assert shorten(["f.py", 3, "Skipped: CUDA not available"]) == "CUDA not available"
    assert shorten({"reprcrash": {"message": "AssertionError: x\nmore"}}) == "AssertionError: x"
    assert (
        shorten(
            textwrap.dedent("""\
        def test(): ...
        E   ValueError: bad
        E   more""")
        )
        == "ValueError: bad"
    )
    assert len(shorten("x" * 500)) == 200


def test_junit_xunit1_file_attribute_gives_exact_node_ids(sample: Path) -> None:
    proc = run_pytest(sample, "tests", "-o", "junit_family=xunit1", "--junitxml=x1.xml")
    assert proc.returncode == 1
    run = parse_junit(sample / "x1.xml")  # no root: the file attribute alone is enough
    assert "tests/test_sample.py::TestGroup::test_param[2]" in {o.nodeid for o in run.outcomes}
    assert not any("guessed" in loss for loss in run.losses)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.fixed_dictionaries(
                {"$report_type": st.sampled_from(["TestReport", "CollectReport", "SessionStart", "SessionFinish"])},
                optional={
                    "nodeid": st.text(max_size=10),
                    "when": st.sampled_from(["setup", "call", "teardown"]),
                    "outcome": st.sampled_from(["passed", "failed", "skipped"]),
                    "exitstatus": st.one_of(st.integers(0, 5), st.text(max_size=2)),
                    "longrepr": st.one_of(st.none(), st.text(max_size=20), st.lists(st.text(max_size=5), max_size=3)),
                    "duration": st.one_of(st.floats(0, 1), st.text(max_size=3)),
                    "start": st.one_of(st.floats(), st.integers(-10, 10**13), st.text(max_size=3), st.booleans()),
                    "keywords": st.one_of(st.dictionaries(st.text(max_size=5), st.integers()), st.lists(st.integers())),
                },
            ).map(json.dumps),
        ),
        max_size=8,
    )
)
def test_arbitrary_reportlog_lines_never_crash(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        run = parse_reportlog(path)
    except IngestError as err:
        assert str(err).startswith(str(path))
    else:
        assert all(o.outcome in {"passed", "failed", "skipped", "xfailed", "xpassed", "error"} for o in run.outcomes)
        assert run.complete == (run.exitstatus is not None and run.exitstatus not in (2, 3))
        assert run.time is None or utc_time(run.time) == run.time  # a start is a real time or refused


def _tracker(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from evidence_repo import CHECKOUT

    code = f"from tracker.cli import main; main({list(args)!r})"
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False, env=env)


@pytest.fixture
def verified(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A repo whose one test gate passed in a real ``tracker verify``, and that run's evidence."""
    from evidence_repo import make_repo, phase_block, plan_text

    repo = make_repo(tmp_path / "repo", {
        "plans/0001-a.md": plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/test_a.py"'])]),
        "src/a.py": "X = 1\n", "conftest.py": "", "tests/test_a.py": "from src.a import X\n\ndef test_x():\n    assert X == 1\n",
        ".gitignore": ".tracker/\n__pycache__/\n",
    })  # fmt: skip
    proc = _tracker(repo, "verify")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [local] = list((repo / ".tracker/evidence").glob("*.json"))
    return repo, json.loads(local.read_text())


def _failed_copy(doc: dict[str, Any], path: Path, **provenance: Any) -> Path:
    copy = json.loads(json.dumps(doc))
    copy["provenance"].update(provenance)
    for rec in copy["tests"]:
        rec["outcome"], rec["reason"] = "failed", "AssertionError: on the other machine"
    path.write_text(json.dumps(copy))
    return path


BAD_PROVENANCE = [
    ({"time": "yesterday"}, "provenance.time 'yesterday' is not an ISO-8601 time with a time zone"),
    ({"time": "2026-11-29T11:02:03"}, "provenance.time '2026-11-29T11:02:03' is not an ISO-8601 time with a time zone"),
    ({"commit": "zzz"}, "provenance.commit 'zzz' is not 40 lowercase hex digits or null"),
    ({"commit": "A" * 40}, f"provenance.commit '{'A' * 40}' is not 40 lowercase hex digits or null"),
]


def test_ingested_test_run_needs_a_real_time_and_commit(verified: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    repo, doc = verified
    for provenance, reason in BAD_PROVENANCE:
        bad = _failed_copy(doc, tmp_path / "bad.json", **provenance)
        proc = _tracker(repo, "ingest", str(bad))
        assert (proc.returncode, proc.stderr) == (8, f"tracker: error: {bad}: {reason}\n")
    assert len(list((repo / ".tracker/evidence").glob("*.json"))) == 1  # nothing written
    # A plugin run without a commit ties itself to no tree (adversarial review F4: a copy of the tree elsewhere):
    # refused, saying how to record one; the same copy with its commit kept is accepted.
    nocommit = _failed_copy(doc, tmp_path / "nocommit.json", commit=None, time="2026-11-29T11:02:03.5+01:00")
    proc = _tracker(repo, "ingest", str(nocommit))
    assert proc.returncode == 8 and "recorded without a commit" in proc.stderr, proc.stderr
    proc = _tracker(repo, "ingest", str(_failed_copy(doc, tmp_path / "ok.json", time="2026-11-29T11:02:03.5+01:00")))
    assert proc.returncode == 0, proc.stderr


def test_store_orders_runs_by_utc_time_not_by_text(verified: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    repo, doc = verified
    local = datetime.fromisoformat(doc["provenance"]["time"].replace("Z", "+00:00"))
    # Half an hour before the local run, written with a +02:00 offset: later as text, earlier in time.
    earlier = (local - timedelta(minutes=30)).astimezone(timezone(timedelta(hours=2))).isoformat()
    assert earlier > doc["provenance"]["time"]
    proc = _tracker(repo, "ingest", str(_failed_copy(doc, tmp_path / "ci.json", time=earlier, host="ci")))
    assert proc.returncode == 0, proc.stderr
    phase = json.loads(_tracker(repo, "status", "--json").stdout)["plans"][0]["phases"][0]
    assert phase["status"] == "done", phase
    assert phase["gates"][0]["source"]["time"] == doc["provenance"]["time"]
    # The same failure four minutes after the local run (within the five minutes a clock may run ahead) is the
    # newest evidence: the phase regressed.
    later = (local + timedelta(minutes=4)).astimezone(timezone(timedelta(hours=-5))).isoformat()
    proc = _tracker(repo, "ingest", str(_failed_copy(doc, tmp_path / "ci2.json", time=later, host="ci2")))
    assert proc.returncode == 0, proc.stderr
    phase = json.loads(_tracker(repo, "status", "--json").stdout)["plans"][0]["phases"][0]
    assert phase["status"] == "regressed"
    assert phase["gates"][0]["source"]["time"] == (local + timedelta(minutes=4)).strftime("%Y-%m-%dT%H:%M:%SZ")
    # An hour after it is in the future of this machine's clock: refused, nothing written.
    future = (local + timedelta(hours=1)).astimezone(timezone(timedelta(hours=-5))).isoformat()
    proc = _tracker(repo, "ingest", str(_failed_copy(doc, tmp_path / "ci3.json", time=future, host="ci3")))
    assert proc.returncode == 8 and "is in the future: more than 5 minutes after this machine's clock" in proc.stderr
    assert len(list((repo / ".tracker/evidence").glob("*.json"))) == 3


def _shift_starts(path: Path, seconds: float, drop: bool = False) -> None:
    """Move every record's ``start``/``stop`` of a reportlog by ``seconds`` (a run made that much earlier), or
    ``drop`` them (a reportlog of a pytest that records no times)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for key in ("start", "stop"):
            if key in record:
                if drop:
                    del record[key]
                else:
                    record[key] += seconds
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _failing_reportlog(repo: Path, out: Path) -> Path:
    """A real reportlog of the verified repo's gate failing (its code changed for that run only)."""
    good = (repo / "src/a.py").read_text()
    (repo / "src/a.py").write_text("X = 2\n")
    try:
        proc = run_pytest(repo, "tests/test_a.py", f"--report-log={out}")
    finally:
        (repo / "src/a.py").write_text(good)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return out


def _gate_source(repo: Path) -> tuple[str, dict[str, Any]]:
    phase = json.loads(_tracker(repo, "status", "--json").stdout)["plans"][0]["phases"][0]
    return phase["status"], phase["gates"][0]["source"]


def test_a_reportlog_is_dated_by_its_records_not_its_mtime(
    verified: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A failure recorded an hour before the local pass, its file copied now (a fresh mtime), stays an hour old:
    it does not outrank the newer pass. The stored run says what its time came from."""
    repo, doc = verified
    log = _failing_reportlog(repo, tmp_path / "old_fail.jsonl")
    _shift_starts(log, -3600)
    first = min(json.loads(line).get("start", 1e99) for line in log.read_text().splitlines())
    proc = _tracker(repo, "ingest", "--host", "ci", "--commit", "HEAD", str(log))  # before HEAD's commit: named
    assert proc.returncode == 0, proc.stderr
    status, source = _gate_source(repo)
    assert status == "done" and source["time"] == doc["provenance"]["time"]
    assert "dated by its first test's start" in proc.stdout
    [stored] = [p for p in (repo / ".tracker/evidence").glob("*.json") if "-ci-" in p.name]
    prov = json.loads(stored.read_text())["provenance"]
    assert prov["time"] == time_utc(first) and prov["time_from"] == "first test's start"


def time_utc(seconds: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def test_a_run_without_times_of_its_own_is_refused_unless_time_says_when_it_ran(
    verified: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """adv G7: such a file was dated by its mtime, so a copy (a fresh mtime) of an old pass outranked every failure
    recorded since. Now it is refused (exit 8, nothing stored) unless --time says when it ran."""
    repo, _ = verified
    log = _failing_reportlog(repo, tmp_path / "old.jsonl")
    _shift_starts(log, 0, drop=True)
    junit = tmp_path / "j.xml"
    proc = run_pytest(repo, "tests/test_a.py", f"--junitxml={junit}")
    assert proc.returncode == 0
    junit.write_text(junit.read_text().replace("timestamp=", "x-timestamp="))
    before = sorted((repo / ".tracker/evidence").iterdir())
    for source in (log, junit):
        proc = _tracker(repo, "ingest", str(source))
        assert proc.returncode == 8 and "records no time of its own" in proc.stderr and "--time" in proc.stderr, (
            proc.stderr
        )
        assert "Traceback" not in proc.stderr
    assert sorted((repo / ".tracker/evidence").iterdir()) == before
    bad = _tracker(repo, "ingest", "--time", "yesterday", str(log))
    assert bad.returncode == 3 and "--time 'yesterday' is not an ISO 8601 time" in bad.stderr, bad.stderr
    proc = _tracker(repo, "ingest", "--time", "2023-11-14T22:13:20+00:00", "--commit", "HEAD", str(log), str(junit))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("dated by --time (it records no time of its own)") == 2
    times = {}
    for stored in (repo / ".tracker/evidence").glob("*-unknown-*.json"):
        prov = json.loads(stored.read_text())["provenance"]
        times[prov["ingested_from"]] = (prov["time"], prov["time_from"])
    assert times == {
        "reportlog": (time_utc(1_700_000_000), "--time"),
        "junit": (time_utc(1_700_000_000), "--time"),
    }


def test_a_copied_old_pass_without_times_never_outranks_a_newer_failure(
    verified: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """adv G7 as an attack: an old passing JUnit file without a timestamp, copied after the gate failed."""
    repo, _ = verified
    junit = tmp_path / "pass.xml"
    assert run_pytest(repo, "tests/test_a.py", f"--junitxml={junit}").returncode == 0
    junit.write_text(junit.read_text().replace("timestamp=", "x-timestamp="))
    log = _failing_reportlog(repo, tmp_path / "fail.jsonl")
    assert _tracker(repo, "ingest", str(log)).returncode == 0
    assert _gate_source(repo)[0] != "done"
    copy = tmp_path / "copy.xml"
    copy.write_bytes(junit.read_bytes())  # a fresh mtime
    assert _tracker(repo, "ingest", str(copy)).returncode == 8
    assert _gate_source(repo)[0] != "done"


def test_a_junit_timestamp_dates_the_run_and_says_so(verified: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    repo, _ = verified
    junit = tmp_path / "j.xml"
    assert run_pytest(repo, "tests/test_a.py", f"--junitxml={junit}").returncode == 0
    proc = _tracker(repo, "ingest", str(junit))
    assert proc.returncode == 0 and "dated by its testsuite timestamp" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("start", "reason"),
    [
        ('"abc"', "TestReport start 'abc' is not a time in seconds since 1970"),
        ("true", "TestReport start True is not a time in seconds since 1970"),
        ("-5", "TestReport start -5 is not a time in seconds since 1970"),
        ("1e12", "TestReport start 1000000000000.0 is not a time in seconds since 1970"),
        ("1e400", "TestReport start inf is not a time in seconds since 1970"),
    ],
)
def test_a_reportlog_start_that_is_no_time_is_refused(sample: Path, tmp_path: Path, start: str, reason: str) -> None:
    lines = (sample / "log.jsonl").read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines, 1) if '"start": ' in line)
    record = json.loads(lines[number - 1])
    lines[number - 1] = json.dumps({**record, "start": "@@"}).replace('"@@"', start)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(IngestError) as err:
        parse_reportlog(bad)
    assert str(err.value) == f"{bad}:{number}: {reason}"


def test_a_reportlog_from_the_future_is_refused(verified: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A run dated by its records an hour ahead of this clock would outrank every run until then: refused (8)."""
    repo, _ = verified
    log = _failing_reportlog(repo, tmp_path / "ahead.jsonl")
    _shift_starts(log, 3600)
    os.utime(log, (1_700_000_000, 1_700_000_000))  # an old mtime does not make it usable
    proc = _tracker(repo, "ingest", str(log))
    assert proc.returncode == 8
    assert f"tracker: error: {log}: first test's start " in proc.stderr and "is in the future" in proc.stderr
    assert len(list((repo / ".tracker/evidence").glob("*.json"))) == 1


def _tracker_bytes(root: Path, *args: bytes) -> subprocess.CompletedProcess[bytes]:
    """The real command line with arguments as raw bytes (what a shell passes for ``$'\\xff'``)."""
    from evidence_repo import CHECKOUT

    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"tracker", *args], cwd=root, capture_output=True, check=False, env=env
    )


def test_a_file_whose_name_is_not_utf8_is_ingested(verified: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    repo, _ = verified
    log = _failing_reportlog(repo, tmp_path / "log.jsonl")
    named = os.fsencode(tmp_path) + b"/\xffrun.jsonl"
    os.rename(log, named)
    proc = _tracker_bytes(repo, b"ingest", named)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(named + b" -> .tracker/evidence/")
    [stored] = (repo / ".tracker/evidence").glob("*-unknown-*.json")
    assert json.loads(stored.read_text())["provenance"]["command"] == "tracker ingest \\xffrun.jsonl"


def test_a_host_that_is_not_utf8_is_a_usage_error(verified: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    repo, _ = verified
    log = _failing_reportlog(repo, tmp_path / "log.jsonl")
    proc = _tracker_bytes(repo, b"ingest", b"--host", b"\xff", os.fsencode(log))
    assert (proc.returncode, proc.stderr) == (3, b"tracker: error: --host: not valid UTF-8 text ('\\udcff')\n")
    assert len(list((repo / ".tracker/evidence").glob("*.json"))) == 1


@pytest.mark.parametrize("form", ["reportlog", "junit"])
def test_an_ingested_run_names_test_files_linked_out_of_the_repository(repo, cli, tmp_path: Path, form: str) -> None:
    """A reportlog or JUnit run of ``tests/`` whose ``ext`` is a link out of the repository (issue 24 FP3): ingest
    records provenance.outside as the plugin does, judged on the tree it ingests into, so that run's passes of the
    outside tests meet no gate (its pass met the gate before)."""
    from tracker_testutil import git, phase, plan_text

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_x.py").write_text("def test_x():\n    pass\n")
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/"')),
            "tests/test_r.py": "def test_r(): pass\n",
        }
    )
    (root / "tests/ext").symlink_to(outside)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "link")
    log = tmp_path / ("log.jsonl" if form == "reportlog" else "junit.xml")
    run_pytest(root, "tests", f"--report-log={log}" if form == "reportlog" else f"--junitxml={log}")
    assert cli(root, "ingest", str(log)).code == 0
    [doc] = [json.loads(p.read_text()) for p in (root / ".tracker/evidence").glob("*.json")]
    why = f"tests/ext/test_x.py resolves to {(root / 'tests/ext/test_x.py').resolve()}, outside the repository"
    assert doc["provenance"]["outside"] == {"tests/ext/test_x.py": why}
    gate = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["gates"][0]
    assert gate["met"] is False and gate["reason"] == f"{why}: its tests are not the repository's (tracker lint)"


@pytest.mark.parametrize("option", ["--setup-only", "--setup-plan"])
def test_a_junit_of_a_session_that_ran_no_test_counts_for_nothing(repo, cli, tmp_path: Path, option: str) -> None:
    """``pytest --setup-only``/``--setup-plan --junitxml`` runs no test: its testsuite says tests="0" but lists a bare
    <testcase/> per test (issue 24 review F2). Ingested, every test counted as passed and the gate was met."""
    from tracker_testutil import phase, plan_text

    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"')),
            "tests/test_a.py": "def test_a():\n    assert False\n",
        }
    )
    junit = tmp_path / "junit.xml"
    run_pytest(root, "tests", option, f"--junitxml={junit}")
    assert 'tests="0"' in junit.read_text() and "<testcase " in junit.read_text()
    run = parse_junit(junit, root=root)
    assert not run.complete
    assert run.why_incomplete == (
        "testsuite 'pytest' lists 1 testcase(s) without a failure, error or skip but counts 0 test(s) run that "
        "passed (tests=0, failures=0, errors=0, skipped=0): no test ran (pytest --setup-only, --setup-plan?) or the "
        "session ended early"
    )
    result = cli(root, "ingest", str(junit))
    assert result.code == 0 and "interrupted (" in result.out and "counts for nothing" in result.out, result
    gate = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["gates"][0]
    assert gate["met"] is False, gate


def test_a_junit_testcase_without_a_name_is_refused(repo, cli, tmp_path: Path) -> None:
    """A test calling ``pytest.exit()`` leaves a nameless ``<testcase time="0.000" />`` in the JUnit file, which was
    stored as a pass under node id '.py::' and the session as complete (issue 24 review F2b). Refused, nothing
    written; the reportlog of the same session never counts the test that exited as passed."""
    from tracker_testutil import phase, plan_text

    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_b.py::test_b"')),
            "tests/test_a.py": "def test_a():\n    assert True\n",
            "tests/test_b.py": "import pytest\ndef test_b():\n    pytest.exit('bye', returncode=0)\n    assert False\n",
        }
    )
    junit, log = tmp_path / "junit.xml", tmp_path / "log.jsonl"
    run_pytest(root, "tests", f"--junitxml={junit}", f"--report-log={log}")
    result = cli(root, "ingest", str(junit))
    assert (result.code, result.err) == (8, f"tracker: error: {junit}: testcase 2 has no name\n"), result
    assert not (root / ".tracker/evidence").exists() or not list((root / ".tracker/evidence").iterdir())
    outcomes = {o.nodeid: o.outcome for o in parse_reportlog(log).outcomes}
    assert outcomes == {"tests/test_a.py::test_a": "passed", "tests/test_b.py::test_b": "error"}
    assert cli(root, "ingest", str(log)).code == 0
    gate = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["gates"][0]
    assert gate["met"] is False, gate


def test_a_file_skipped_or_broken_at_collection_is_a_record_of_the_file_in_both_formats(tmp_path: Path) -> None:
    # pytest writes a collection report into JUnit XML as a testcase with an empty classname, named by the module's
    # dotted path: a CPU run whose GPU files skip at import was refused as 'has no classname or file'. It is the
    # file's record, as the plugin and the reportlog have it (tracker.core.testgate keeps other runs' tests of the file).
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_gpu.py").write_text(
        "import pytest\npytest.skip('CUDA not available', allow_module_level=True)\n"
    )
    (tmp_path / "tests" / "test_bad.py").write_text("import no_such_module_xyz\n")
    (tmp_path / "tests" / "test_ok.py").write_text("def test_ok(): pass\n")
    proc = run_pytest(
        tmp_path, "tests", "--continue-on-collection-errors", "--report-log=log.jsonl", "--junitxml=j.xml"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for run in (parse_reportlog(tmp_path / "log.jsonl"), parse_junit(tmp_path / "j.xml", root=tmp_path)):
        got = {o.nodeid: (o.outcome, o.reason[:40]) for o in run.outcomes}
        assert got == {
            "tests/test_gpu.py": ("skipped", "CUDA not available"),
            "tests/test_bad.py": ("error", "collection: ModuleNotFoundError: No modu"),
            "tests/test_ok.py::test_ok": ("passed", ""),
        }, run.kind
    guessed = parse_junit(tmp_path / "j.xml")  # without the root: the same paths, said to be guessed
    assert {o.nodeid for o in guessed.outcomes} >= {"tests/test_gpu.py", "tests/test_bad.py"}


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(min_size=1, max_size=40), text=st.text(max_size=300), tag=st.sampled_from(["skipped", "error"]))
def test_any_collection_testcase_is_one_record_of_a_file_with_a_one_line_reason(
    tmp_path: Path, name: str, text: str, tag: str
) -> None:
    from xml.sax.saxutils import escape, quoteattr

    clean = "".join(c for c in name + text if c.isprintable() or c == "\n")  # what XML can hold
    name, text = clean[: len(name)] or "m", clean[len(name) :]
    path = tmp_path / "j.xml"
    body = (
        f'<testsuite><testcase classname="" name={quoteattr(name)}><{tag}>{escape(text)}</{tag}></testcase></testsuite>'
    )
    path.write_text(body, encoding="utf-8")
    (out,) = parse_junit(path, root=tmp_path).outcomes
    assert out.nodeid == name.replace(".", "/") + ".py" and out.outcome == ("skipped" if tag == "skipped" else "error")
    assert "\n" not in out.reason and len(out.reason) <= 200 + len("collection: ")


def test_a_junit_testcase_without_a_classname_or_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    path.write_text('<testsuite tests="1"><testcase name="test_a"/></testsuite>', encoding="utf-8")
    with pytest.raises(IngestError, match=r"j.xml: testcase 1 'test_a' has no classname or file"):
        parse_junit(path)
    path.write_text('<testsuite tests="x"><testcase classname="t" name="test_a"/></testsuite>', encoding="utf-8")
    with pytest.raises(IngestError, match=r"j.xml: testsuite 1: tests 'x' is not a whole number"):
        parse_junit(path)


COUNT = st.one_of(st.none(), st.integers(-2, 4).map(str), st.sampled_from(["", "x", "1.5", "٣"]))


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    suites=st.lists(
        st.tuples(
            st.fixed_dictionaries({}, optional={k: COUNT for k in ("tests", "failures", "errors", "skipped")}),
            st.lists(
                st.tuples(
                    st.sampled_from(["", "t.test_a", "t"]),
                    st.sampled_from(["", "test_x", "test_y"]),
                    st.sampled_from(["", "failure", "error", "skipped"]),
                ),
                max_size=4,
            ),
        ),
        max_size=3,
    )
)
def test_arbitrary_junit_counts_never_crash_nor_pass_more_than_the_suite_ran(tmp_path: Path, suites: Any) -> None:
    """Hostile testsuite counts and testcases: a clear ``path: ...`` refusal or a run; a complete run never holds
    more passing testcases in a suite than the suite counts as run and passed."""
    import xml.sax.saxutils as su

    body = ""
    for attrs, cases in suites:
        head = "".join(f" {k}={su.quoteattr(v)}" for k, v in attrs.items() if v is not None)
        inner = "".join(
            f"<testcase classname={su.quoteattr(c)} name={su.quoteattr(n)}>{f'<{child}/>' if child else ''}</testcase>"
            for c, n, child in cases
        )
        body += f"<testsuite{head}>{inner}</testsuite>"
    path = tmp_path / "fuzz.xml"
    path.write_text(f"<testsuites>{body}</testsuites>", encoding="utf-8")
    try:
        run = parse_junit(path)
    except IngestError as err:
        assert str(err).startswith(f"{path}: ")
        return
    assert all(o.nodeid and not o.nodeid.startswith((".py", "::")) for o in run.outcomes)
    if run.complete:
        for attrs, cases in suites:
            if attrs.get("tests") is not None:
                ran = int(attrs["tests"]) - sum(int(attrs.get(k) or 0) for k in ("failures", "errors", "skipped"))
                assert sum(1 for *_, child in cases if not child) <= ran


PYTEST8 = ("pytest==8.4.2", "pytest-subtests==0.15.0", "pytest-reportlog", "pluggy", "iniconfig", "packaging",
           "pygments", "attrs")  # fmt: skip


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def pytest8(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``python -m pytest`` with pytest 8.4 and pytest-subtests (pytest 9 has subtests of its own and never loads
    that plugin: its entry point's name is taken), pytest-reportlog and the tracker's plugin (from this checkout):
    a venv that pip fills from the package index (~4 s). Skips saying why where pip cannot; fails under CI."""
    venv = tmp_path_factory.mktemp("pytest8") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python), "install", "-q"]
    proc = subprocess.run([*pip, "--no-deps", *PYTEST8], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        why = f"pytest 8 and pytest-subtests cannot be installed: {proc.stderr.strip()[-300:]}"
        if _in_ci():
            pytest.fail(f"{why} (CI is set: CI must run this test, not skip it)", pytrace=False)
        pytest.skip(why)
    return [str(python), "-m", "pytest", "-p", "tracker.pytest_plugin"]


@pytest.mark.parametrize("which", ["pytest 9", "pytest 8 + pytest-subtests"])
def test_a_run_with_subtests_is_judged_alike_recorded_or_reportlogged(
    repo, cli, tmp_path: Path, request: pytest.FixtureRequest, which: str
) -> None:
    """Issue 30: one pytest session over unittest ``subTest`` loops and a ``subtests`` fixture, written both by
    ``--tracker-record`` and by ``--report-log``: the reportlog reader skipped the subtests' own reports (its
    SubTestReport lines), so a gate on a test whose subtest failed was met. Both files now give each test the same
    outcome and reason, ingested they give the same verdicts, and pytest-subtests on pytest 8 (whose subtest
    parameters a reportlog keeps as they were, not as their repr) the same as pytest 9's own subtests."""
    from tracker_testutil import SUBTEST_OUTCOMES, SUBTESTS, phase, plan_text

    from tracker.commands.common import pytest_command, pytest_env

    command = request.getfixturevalue("pytest8") if which.startswith("pytest 8") else pytest_command()
    # TestOk's one test by name: a class gate's tests are known only from a run that records its arguments (a
    # reportlog records none), whatever its subtests did (adv round 5)
    names = ("TestLoop", "TestSkip", "TestOk::test_ok", "test_native")
    gates = [f'test = "tests/test_sub.py::{name}"' for name in names]
    root = repo({"tests/test_sub.py": SUBTESTS, "plans/0001-demo.md": plan_text(phases=phase("P1", *gates))})
    log, record = tmp_path / "log.jsonl", tmp_path / "record"
    args = ["-q", "-p", "no:cacheprovider", "tests", f"--report-log={log}", f"--tracker-record={record}"]
    proc = subprocess.run([*command, *args], cwd=root, env=pytest_env(root), capture_output=True, text=True)
    assert proc.returncode == 1 and "SUBFAIL" in proc.stdout, proc.stdout + proc.stderr
    [evidence] = record.glob("*.json")
    recorded = {t["nodeid"]: (t["outcome"], t["reason"]) for t in json.loads(evidence.read_text())["tests"]}
    logged = {o.nodeid: (o.outcome, o.reason) for o in parse_reportlog(log).outcomes}
    assert recorded == logged == SUBTEST_OUTCOMES
    verdicts = []
    for file in (evidence, log):
        assert cli(root, "ingest", str(file)).code == 0
        [phase_] = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"]
        verdicts.append([(g["met"], g["reason"]) for g in phase_["gates"]])
        for stored in (root / ".tracker/evidence").glob("*.json"):
            stored.unlink()
    assert verdicts[0] == verdicts[1]
    assert [met for met, _ in verdicts[0]] == [False, False, True, False]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


def _report(kind: str, when: str, outcome: str, **extra: Any) -> str:
    record = {"$report_type": kind, "nodeid": "t.py::test_x", "when": when, "outcome": outcome, **extra}
    return json.dumps(record)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    contexts=st.lists(
        st.one_of(
            _JSON,
            st.fixed_dictionaries({}, optional={"msg": _JSON, "kwargs": _JSON}),
            st.fixed_dictionaries({"msg": st.none() | st.text(), "kwargs": st.dictionaries(st.text(), _JSON)}),
        ),
        max_size=4,
    ),
    outcomes=st.lists(st.sampled_from(["passed", "failed", "skipped"]), min_size=4, max_size=4),
    longrepr=st.one_of(st.none(), st.text(), st.lists(st.text(max_size=30), min_size=3, max_size=3)),
)
def test_arbitrary_subtest_reports_never_crash(
    tmp_path: Path, contexts: list[Any], outcomes: list[str], longrepr: Any
) -> None:
    """Hostile SubTestReport lines (any JSON as ``_subtest.context``, its msg and its kwargs; any text as what
    failed): a clear ``path:line: ...`` refusal, or outcomes whose reason is one printable line of at most 200
    characters, failed when a subtest failed."""
    lines = [_report("TestReport", "setup", "passed")]
    lines += [
        _report("SubTestReport", "call", out, longrepr=longrepr, **{"_subtest.context": ctx})
        for ctx, out in zip(contexts, outcomes, strict=False)
    ]
    lines += [_report("TestReport", "call", "passed"), _report("TestReport", "teardown", "passed")]
    lines.append(json.dumps({"$report_type": "SessionFinish", "exitstatus": 1}))
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        run = parse_reportlog(path)
    except IngestError as err:
        assert str(err).startswith(f"{path}:") and "_subtest.context" in str(err)
        return
    [test] = run.outcomes
    assert test.reason.isprintable() and len(test.reason) <= 200
    assert (test.outcome == "failed") == ("failed" in outcomes[: len(contexts)])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    phases=st.lists(st.sampled_from(["passed", "failed", "skipped"]), min_size=3, max_size=3),
    subtests=st.lists(st.sampled_from(["passed", "failed", "skipped"]), max_size=4),
    order=st.randoms(use_true_random=False),
)
def test_any_failing_report_fails_the_test_in_any_order(
    tmp_path: Path, phases: list[str], subtests: list[str], order: Any
) -> None:
    """The principle of issue 30: a test with a failing report (setup, call, teardown or a subtest) failed in that
    run (failed or error), whatever order its reports came in; a test with none did not."""
    lines = [_report("TestReport", when, out) for when, out in zip(["setup", "call", "teardown"], phases, strict=True)]
    lines += [_report("SubTestReport", "call", out, **{"_subtest.context": {"msg": None, "kwargs": {"i": n}}})
              for n, out in enumerate(subtests)]  # fmt: skip
    order.shuffle(lines)
    lines.append(json.dumps({"$report_type": "SessionFinish", "exitstatus": 1}))
    path = tmp_path / "order.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    [test] = parse_reportlog(path).outcomes
    assert (test.outcome in ("failed", "error")) == ("failed" in phases + subtests), test


def test_a_run_older_than_head_s_commit_is_never_stored_as_head_s(tmp_path: Path) -> None:
    """Round 20, N1: `pytest --junitxml`, then a commit that breaks the test, then `tracker ingest` without --commit:
    the pass was stored as HEAD's and the phase was done, though the test fails on HEAD. The run is refused (exit 8,
    nothing stored); named with --commit it is the commit it ran, and HEAD's broken code makes the phase stale."""
    import os
    import time

    from evidence_repo import git, make_repo, phase_block, plan_text

    repo = make_repo(tmp_path / "repo", {
        "plans/0001-a.md": plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/test_a.py::test_x"'])]),
        "src/a.py": "X = 1\n", "conftest.py": "", "tests/test_a.py": "from src.a import X\n\ndef test_x():\n    assert X == 1\n",
        ".gitignore": ".tracker/\n__pycache__/\n",
    })  # fmt: skip
    ran = git(repo, "rev-parse", "HEAD").strip()
    for kind, arg in (
        ("junit", f"--junitxml={tmp_path / 'ci.xml'}"),
        ("reportlog", f"--report-log={tmp_path / 'ci.jsonl'}"),
    ):
        assert run_pytest(repo, "tests/test_a.py", arg).returncode == 0, kind
    time.sleep(1.1)  # the breaking commit is a second later than the run, as the helper's was
    (repo / "src/a.py").write_text("X = 2\n")
    env = {**os.environ, "GIT_COMMITTER_DATE": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    subprocess.run(["git", "commit", "-qam", "broken"], cwd=repo, check=True, env=env, capture_output=True)
    for name in ("ci.xml", "ci.jsonl"):
        proc = _tracker(repo, "ingest", str(tmp_path / name))
        assert proc.returncode == 8, proc.stdout + proc.stderr
        assert "before HEAD (" in proc.stderr and "name the commit it ran with --commit" in proc.stderr
    assert not (repo / ".tracker/evidence").exists() or not list((repo / ".tracker/evidence").iterdir())
    assert _tracker(repo, "ingest", "--commit", ran, str(tmp_path / "ci.xml")).returncode == 0
    phase = json.loads(_tracker(repo, "status", "--json").stdout)["plans"][0]["phases"][0]
    assert phase["status"] == "stale"


def test_a_junit_file_of_several_suites_is_dated_by_its_earliest(tmp_path: Path) -> None:
    """Round 21, 6: the first suite dated the file, so an old run's suite merged after a new one's passed as new (and
    past the "older than HEAD" refusal). The earliest dates it; a suite without a timestamp leaves it undated."""
    from tracker.store.ingest import parse_junit

    case = '<testcase classname="tests.test_a" name="test_a" file="tests/test_a.py" time="0.1"/>'
    new, old = "2026-12-04T12:00:00+00:00", "2026-12-01T12:00:00+00:00"
    both = f'<testsuites><testsuite timestamp="{new}">{case}</testsuite><testsuite timestamp="{old}">{case}</testsuite></testsuites>'
    (tmp_path / "m.xml").write_text(both)
    assert parse_junit(tmp_path / "m.xml").time == "2026-12-01T12:00:00Z"
    (tmp_path / "u.xml").write_text(both.replace(f' timestamp="{old}"', ""))
    assert parse_junit(tmp_path / "u.xml").time is None
    nested = f'<testsuite timestamp="{new}"><testsuite timestamp="{old}">{case}</testsuite></testsuite>'  # round 22
    (tmp_path / "n.xml").write_text(nested)
    assert parse_junit(tmp_path / "n.xml").time == "2026-12-01T12:00:00Z"


def test_a_run_older_than_a_fast_forward_to_an_older_commit_is_refused(tmp_path: Path) -> None:
    """Round 21, 7: a colleague's commit made before the run, fast-forwarded to after it: the commit's time is older
    than the run, yet the run never ran it. When HEAD last moved (the reflog) counts too."""
    import time

    from evidence_repo import git, make_repo, phase_block, plan_text

    repo = make_repo(tmp_path / "repo", {
        "plans/0001-a.md": plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/test_a.py::test_x"'])]),
        "src/a.py": "X = 1\n", "conftest.py": "", "tests/test_a.py": "from src.a import X\n\ndef test_x():\n    assert X == 1\n",
        ".gitignore": ".tracker/\n__pycache__/\n",
    })  # fmt: skip
    git(repo, "checkout", "-q", "-b", "colleague")
    (repo / "src/a.py").write_text("X = 2\n")
    git(repo, "commit", "-qam", "broken")
    git(repo, "checkout", "-q", "main")
    time.sleep(1.1)
    assert run_pytest(repo, "tests/test_a.py", f"--junitxml={tmp_path / 'ci.xml'}").returncode == 0
    time.sleep(1.1)
    git(repo, "merge", "-q", "--ff-only", "colleague")
    proc = _tracker(repo, "ingest", str(tmp_path / "ci.xml"))
    assert proc.returncode == 8 and "before HEAD (" in proc.stderr and "checked out" in proc.stderr, proc.stderr


TEARDOWN_SKIP = (
    "import os\n\nimport pytest\n\n\n@pytest.fixture\ndef server():\n    yield 'srv'\n"
    "    pytest.skip('no server to clean up')\n\n\ndef test_a(server):\n"
    "    assert os.environ.get('DB_URL'), 'DB_URL must be set'\n"
)


@pytest.mark.parametrize("order", ["as pytest writes it", "skip first"])
def test_a_junit_testcase_that_failed_then_skipped_in_teardown_is_a_failure(
    repo: Any, cli: Any, tmp_path: Path, order: str
) -> None:
    """F3: pytest writes <failure> then <skipped> for a test whose call failed and whose fixture skipped in its
    teardown; the last child won, the failure read as a skip, and the older pass kept the gate met."""
    import os
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py::test_a"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": TEARDOWN_SKIP})
    record(root, "tests/test_x.py", env={"DB_URL": "sqlite://"})
    assert status_of(cli, root) == "done"
    xml = tmp_path / "ci.xml"
    env = {k: v for k, v in os.environ.items() if k != "DB_URL"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_x.py", f"--junitxml={xml}"]
    assert subprocess.run(cmd, cwd=root, capture_output=True, env=env).returncode == 1
    tree = ET.parse(xml)
    [case] = tree.iter("testcase")
    assert [c.tag for c in case] == ["failure", "skipped"]  # pytest's own shape
    if order == "skip first":
        failure = case[0]
        case.remove(failure)
        case.append(failure)
        tree.write(xml)
    r = cli(root, "ingest", "--host", "ci", str(xml))
    assert r.code == 0, r.out + r.err
    stored = max((root / ".tracker/evidence").glob("*-ci-*.json"))
    assert [t["outcome"] for t in json.loads(stored.read_text())["tests"]] == ["failed"]


def run_pytest_review_fixes(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real pytest session in ``root`` (its own process)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=root, capture_output=True, text=True, check=False)  # fmt: skip


def gate_of(cli: Callable[..., Any], root: Path) -> tuple[str, dict[str, Any]]:
    """(status of plan 0001's first phase, its first gate) from ``status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.out + res.err
    phase_json = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_json["status"], phase_json["gates"][0]


JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="{failures}" '
         'skipped="0" tests="1" time="0.01" timestamp="{stamp}" hostname="ci"><testcase classname="tests.test_a" '
         'name="test_x" file="tests/test_a.py" time="0.001">{inner}</testcase></testsuite></testsuites>')  # fmt: skip


def junit(stamp: str, failed: bool = False) -> str:
    return JUNIT.format(stamp=stamp, failures=int(failed), inner="<failure message='boom'/>" if failed else "")


PYTEST_INI = "[pytest]\nmarkers =\n    slow: slow tests\n"


IGNORED = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.jsonl\n*.xml\n"


@pytest.fixture(scope="module")
def marker_repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Repositories a real ``tracker verify`` made done: ``not_slow`` gates ``tests -m 'not slow'`` over two
    unmarked tests, one in a directory named ``slow``; ``slow`` gates ``tests -m slow`` over two marked tests."""
    from tracker.cli import main

    layouts = {
        "not_slow": {"plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests"\nmarker = "not slow"')),
                     "tests/slow/test_x.py": "def test_fast():\n    assert True\n", "tests/test_ok.py": "def test_ok():\n    pass\n"},
        "slow": {"plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests"\nmarker = "slow"')),
                 "tests/test_a.py": "import pytest\n\n@pytest.mark.slow\ndef test_one():\n    assert True\n",
                 "tests/test_b.py": "import pytest\n\n@pytest.mark.slow\ndef test_two():\n    assert True\n"},
    }  # fmt: skip
    out = {}
    for name, files in layouts.items():
        root = tmp_path_factory.mktemp(name) / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        make_files(root, {**files, "pytest.ini": PYTEST_INI, ".gitignore": IGNORED})
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "files")
        with pytest.raises(SystemExit) as exc:
            main(["--root", str(root), "verify", "0001/P1"])
        assert exc.value.code in (0, None)
        out[name] = root
    return out


def copy_of(marker_repos: dict[str, Path], name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(marker_repos[name], tmp_path / "repo", symlinks=True))


def fail_and_ingest_reportlog(cli: Callable[..., Any], root: Path, test_file: str, *pytest_args: str) -> None:
    """Break ``test_file``, commit, run plain pytest with ``--report-log`` on CI and ingest what it wrote."""
    path = root / test_file
    path.write_text(path.read_text().replace("assert True", "assert False"))
    git(root, "commit", "-q", "-am", "break it")
    run_pytest_review_fixes(root, "--report-log=rl.jsonl", *pytest_args)
    res = cli(root, "ingest", "--host", "ci", str(root / "rl.jsonl"))
    assert res.code == 0, res.out + res.err


STAMPS = st.one_of(
    st.datetimes(timezones=st.none() | st.timezones()).map(lambda d: d.isoformat()),
    st.text(alphabet="0123456789-T:Z+. ", max_size=32),
    st.sampled_from(["2026-02-30T11:02:03", "2026-11-29 11:02:03", "2026-11-29", "2026-11-29T11:02:03z", "24:00"]),
)


def test_a_junit_timestamp_without_a_time_zone_is_refused(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    """pytest before 8.3 writes local time without an offset: read as UTC, a run from west of UTC was backdated
    (an older pass then outranked a newer failure) and one from east of UTC was refused as future."""
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    naive = tmp_path / "junit.xml"
    naive.write_text(junit("2020-01-02T03:04:05.678901", failed=True))
    res = cli(root, "ingest", "--host", "ci", str(naive))
    assert res.code == 8, res.out + res.err
    assert res.err == (f"tracker: error: {naive}: testsuite timestamp '2020-01-02T03:04:05.678901' has no time zone (pytest "
                       "before 8.3 writes local time): record with pytest >= 8.3, --report-log or --tracker-record\n")  # fmt: skip
    assert not (root / ".tracker" / "evidence").exists() or not list((root / ".tracker" / "evidence").iterdir())


def test_a_junit_timestamp_with_an_offset_is_converted_to_utc() -> None:
    run = parse_junit(Path("j.xml"), data=junit("2020-01-02T22:04:05.5-05:00").encode())
    assert run.time == "2020-01-03T03:04:05Z"


def test_a_real_pytest_junit_file_is_ingested(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    """pytest >= 8.3 (this one) writes the offset: its files are taken as they are."""
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    proc = run_pytest_review_fixes(root, "tests", f"--junitxml={tmp_path / 'j.xml'}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = cli(root, "ingest", "--host", "ci", str(tmp_path / "j.xml"))
    assert res.code == 0 and "1 test(s), complete" in res.out, res.out + res.err


def test_a_future_junit_timestamp_with_a_time_zone_is_still_refused(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    (tmp_path / "j.xml").write_text(junit("2099-01-01T02:00:00+02:00"))
    res = cli(root, "ingest", str(tmp_path / "j.xml"))
    assert res.code == 8 and "2099-01-01T00:00:00Z is in the future" in res.err, res.err


def test_a_directory_named_like_a_marker_does_not_hide_a_failure(marker_repos: dict[str, Path], cli: Callable[..., Any],
                                                                 tmp_path: Path) -> None:  # fmt: skip
    """The review's reproduction: the failing test's reportlog keywords hold ``slow`` (its directory), and
    read as markers, ``not slow`` dropped it: the phase stayed done, "1 passed"."""
    root = copy_of(marker_repos, "not_slow", tmp_path)
    assert gate_of(cli, root)[0] == "done"
    fail_and_ingest_reportlog(cli, root, "tests/slow/test_x.py", "tests")
    status, gate = gate_of(cli, root)
    assert status == "regressed" and gate["failed"] is True, gate
    assert (
        gate["reason"].startswith("tests/slow/test_x.py::test_fast: failed")
        and "(1 of 2 not passing)" in gate["reason"]
    ), gate


def test_a_reportlog_of_part_of_a_marker_gate_cannot_drop_its_failure(marker_repos: dict[str, Path], cli: Callable[..., Any],
                                                                      tmp_path: Path) -> None:  # fmt: skip
    """Keywords are not markers either way: a reportlog whose records said "no markers" dropped its failing
    test from ``-m slow`` and the other test's older pass met the gate. Its records say nothing of markers:
    the outcome of a test a run with markers selected still counts."""
    root = copy_of(marker_repos, "slow", tmp_path)
    assert gate_of(cli, root)[0] == "done"
    fail_and_ingest_reportlog(cli, root, "tests/test_a.py", "tests/test_a.py")
    status, gate = gate_of(cli, root)
    assert status == "regressed" and gate["failed"] is True, gate
    assert gate["reason"].startswith("tests/test_a.py::test_one: failed"), gate


def test_a_reportlog_crash_inside_a_marked_test_regresses_its_gate(marker_repos: dict[str, Path], cli: Callable[..., Any],
                                                                   tmp_path: Path) -> None:  # fmt: skip
    """The test a crashed reportlog session stopped inside is an error of that run: its record must not say
    "no markers" either, or ``-m slow`` drops it and the other test's pass meets the gate."""
    root = copy_of(marker_repos, "slow", tmp_path)
    path = root / "tests/test_a.py"
    path.write_text(path.read_text().replace("assert True", "import os; os._exit(1)"))
    git(root, "commit", "-q", "-am", "crash it")
    run_pytest_review_fixes(root, "--report-log=rl.jsonl", "tests")
    res = cli(root, "ingest", "--host", "ci", str(root / "rl.jsonl"))
    assert res.code == 0 and "only tests/test_a.py::test_one counts, as an error" in res.out, res.out + res.err
    status, gate = gate_of(cli, root)
    assert status == "regressed" and gate["failed"] is True, gate
    assert gate["reason"].startswith("tests/test_a.py::test_one: error"), gate


def test_reportlog_and_junit_evidence_records_say_nothing_of_markers(tmp_path: Path) -> None:
    """What ingest stores for a reportlog: records without a ``markers`` key (marker-blind, as testgate reads
    them), whatever the keywords (here the marker ``slow``, the directory ``slow``, the parametrize id ``gpu``)."""
    from tracker.store.ingest import evidence_records, running_record

    make_files(tmp_path, {"pytest.ini": PYTEST_INI + "    gpu: gpu\n",
                          "tests/slow/test_k.py": "import pytest\n\n@pytest.mark.slow\n@pytest.mark.parametrize('x', [1], ids=['gpu'])\n"
                                                  "def test_k(x):\n    pass\n"})  # fmt: skip
    proc = run_pytest_review_fixes(tmp_path, "--report-log=rl.jsonl", "--junitxml=j.xml", "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    keywords = {
        k for line in (tmp_path / "rl.jsonl").read_text().splitlines() for k in json.loads(line).get("keywords", {})
    }
    assert {"slow", "gpu"} <= keywords  # what the parser used to read as markers
    for run in (parse_reportlog(tmp_path / "rl.jsonl"), parse_junit(tmp_path / "j.xml", tmp_path)):
        assert evidence_records(run) == [{"nodeid": "tests/slow/test_k.py::test_k[gpu]", "outcome": "passed", "reason": "",
                                          "duration": evidence_records(run)[0]["duration"]}]  # fmt: skip
        assert all(not o.markers for o in run.outcomes) and running_record(run) is None
        assert any("no markers" in loss for loss in run.losses)


@settings(max_examples=400, deadline=None)
@given(stamp=STAMPS)
def test_a_junit_timestamp_is_read_only_with_its_time_zone(stamp: str) -> None:
    """Whatever the timestamp: a UTC time when it has a zone, else IngestError (no zone, or not a time)."""
    from tracker.base.contract import utc_time
    from tracker.store.ingest import IngestError

    try:
        run = parse_junit(Path("j.xml"), data=junit(stamp).encode())
    except IngestError as err:
        assert utc_time(stamp) is None
        assert ("has no time zone (pytest before 8.3" in str(err)) == (utc_time(stamp + "+00:00") is not None)
    else:
        assert run.time == utc_time(stamp) and run.time is not None


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(stamp=STAMPS)
def test_a_junit_timestamp_is_read_only_with_its_time_zone_deep(stamp: str) -> None:
    test_a_junit_timestamp_is_read_only_with_its_time_zone.hypothesis.inner_test(stamp)  # type: ignore[attr-defined]


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


JUNIT_TWICE = (
    '<testsuites><testsuite name="pytest" timestamp="{stamp}">'
    '<testcase classname="tests.test_a" name="test_y" file="tests/test_a.py" time="0.1"/>'
    '<testcase classname="tests.test_a" name="test_y" file="tests/test_a.py" time="0.1">'
    '<error message="failed on teardown with &quot;OSError: leak&quot;">OSError: leak</error></testcase>'
    "</testsuite></testsuites>"
)


def test_a_junit_file_listing_a_test_twice_meets_no_gate_on_its_pass(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    """A JUnit XML file may list one test twice (pytest wrote a testcase for its call and another for its teardown
    error; shards merged into one file): that run's outcome of the test is the worst of them, whatever their order.
    The pass listed first made the gate met, though the same run says the test errored."""
    import time

    root = repo({"plans/0001-a.md": PLAN, **TESTS})
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT_TWICE.format(stamp=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 60))))
    res = cli(root, "ingest", "--commit", "HEAD", str(junit))
    assert res.code == 0, res.err
    assert cold(cli, root)["0001/P1"] == ("planned", [False])


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


JUNIT_REL_EVIDENCE = ('<testsuites><testsuite name="pytest" timestamp="{stamp}"><testcase classname="tests.test_a" name="test_x" '
         'file="tests/test_a.py" time="{time}"/></testsuite></testsuites>')  # fmt: skip


def test_a_future_junit_timestamp_is_refused_by_ingest(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT_REL_EVIDENCE.format(stamp="2099-01-01T00:00:00+00:00", time="0.1"))
    res = cli(root, "ingest", str(junit))
    assert res.code == 8
    assert res.err.startswith(f"tracker: error: {junit}: testsuite timestamp "), res.err
    assert "2099-01-01T00:00:00Z is in the future: more than 5 minutes after this machine's clock (" in res.err
    assert not (root / STORE).exists()


def test_an_ingested_run_a_little_ahead_is_recorded_at_ingest_time(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT_REL_EVIDENCE.format(stamp=utc(120), time="0.1"))
    before = utc()
    assert cli(root, "ingest", str(junit)).code == 0
    [stored] = (root / STORE).glob("*.json")
    assert before <= json.loads(stored.read_text())["provenance"]["time"] <= utc()


def test_junit_time_that_is_not_a_number(repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path) -> None:
    root = repo(FILES)
    for bad in ("abc", "nan", "1e400"):
        (tmp_path / "j.xml").write_text(JUNIT_REL_EVIDENCE.format(stamp="2026-11-29T11:02:03+00:00", time=bad))
        res = cli(root, "ingest", str(tmp_path / "j.xml"))
        assert (res.code, res.err) == (
            8,
            f"tracker: error: {tmp_path / 'j.xml'}: testcase 'tests/test_a.py::test_x': time '{bad}' is not a finite number of seconds\n",
        )
    (tmp_path / "j.xml").write_text(JUNIT_REL_EVIDENCE.format(stamp="2026-02-30T11:02:03", time="1"))
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


def test_ingest_in_a_repository_without_commits(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES, commit=False)
    (tmp_path / "j.xml").write_text(JUNIT_REL_EVIDENCE.format(stamp="2026-11-29T11:02:03+00:00", time="1"))
    res = cli(root, "ingest", str(tmp_path / "j.xml"))
    assert res.code == 3
    assert res.err == ("tracker: error: the repository has no commit yet: a reportlog or JUnit run is stored with the file ids of "
                       "the commit it ran on; commit that code first, or name it with --commit\n")  # fmt: skip
    assert "--commit HEAD" not in res.err
    # A result file or a plugin run carries its own provenance: no commit is needed for those.
    assert cli(root, "ingest", str(write(tmp_path / "r.json", result([case("m", {"k": 1}, [1.0])])))).code == 0


NODEID = "tests/test_a.py::test_x"


def run_doc(outcome: str, when: str = "2026-11-29T11:02:03Z") -> dict[str, Any]:
    return {
        "schema": "tracker-test-run", "version": 1, "status": "complete",
        "provenance": {"time": when, "host": "h", "commit": None, "dirty": None, "args": ["tests"]},
        "gates": {"0001/P1#1": "h"}, "files": {"tests/test_a.py": "a" * 40},
        "tests": [{"nodeid": NODEID, "outcome": outcome, "reason": "", "duration": 0.1, "markers": []}],
        "rootdir": "r", "exitstatus": 0, "duration": 1.0, "losses": [],
    }  # fmt: skip


def _result_base() -> dict[str, Any]:
    return result(
        [case("m", {"k": 1, "impl": "cuda"}, [3.0, 4.0, 5.0]), case("m", {"k": 1, "impl": "base"}, [9.0, 9.5, 10.0])]
    )


@pytest.fixture(scope="module")
def ingest_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tracker_testutil import git, make_files

    root = tmp_path_factory.mktemp("ingest") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_files(root, {"plans/.keep": "", "tests/test_a.py": "def test_x():\n    pass\n"})
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "files")
    return root


def check_ingest(root: Path, cli: Callable[..., Any], source: Path, data: bytes) -> None:
    shutil.rmtree(root / ".tracker", ignore_errors=True)
    source.write_bytes(data)
    res = cli(root, "ingest", str(source))
    assert res.code in (0, 8), (res.code, res.err)
    if res.code == 8:
        assert (
            res.err.startswith(f"tracker: error: {source}") and res.err.count("\n") == 1 and "Traceback" not in res.err
        ), res.err
        assert not (root / EVIDENCE_DIR).exists() or not list((root / EVIDENCE_DIR).iterdir())
        return
    store = load(root, strict=False)
    assert not store.invalid, store.invalid  # what ingest accepts, the store reads


REPORT = {
    "$report_type": "TestReport",
    "nodeid": NODEID,
    "when": "call",
    "outcome": "passed",
    "longrepr": None,
    "duration": 0.1,
}


@st.composite
def reportlogs(draw: st.DrawFn) -> bytes:
    records: list[Any] = [{"$report_type": "SessionStart", "pytest_version": "8"}]
    for when in ("setup", "call", "teardown"):
        records.append({**REPORT, "when": when})
    records.append(
        {"$report_type": "CollectReport", "nodeid": "tests/test_b.py", "outcome": "failed", "longrepr": "boom"}
    )
    records.append({"$report_type": "SessionFinish", "exitstatus": 1})
    records = [draw(mutated(lambda r=r: dict(r))) if draw(st.booleans()) else r for r in records]
    lines = [dumps(r) for r in records]
    if draw(st.booleans()):
        lines = lines[: draw(st.integers(1, len(lines)))]
    return b"\n".join(lines) + (b"\n" if draw(st.booleans()) else b"")


@st.composite
def junits(draw: st.DrawFn) -> bytes:
    attr = st.one_of(st.text(alphabet=st.characters(codec="ascii", exclude_characters='"<&\x00'), max_size=12), TIMES,
                     st.sampled_from(["abc", "nan", "1e400", "-1", "0.5"]))  # fmt: skip
    stamp, t1, t2 = draw(attr), draw(attr), draw(attr)
    inner = draw(
        st.sampled_from(
            ["", "<failure message='x'/>", "<skipped type='pytest.xfail'/>", "<error message='failed on teardown'/>"]
        )
    )
    return (f'<testsuites><testsuite name="pytest" timestamp="{stamp}"><testcase classname="tests.test_a" name="test_x" '
            f'file="tests/test_a.py" time="{t1}">{inner}</testcase><testcase classname="tests.test_a" name="test_y" time="{t2}"/>'
            "</testsuite></testsuites>").encode()  # fmt: skip


@settings(FAST, max_examples=250)
@given(
    doc=st.one_of(mutated(lambda: run_doc("passed")), mutated(_result_base), st.just(run_doc("passed", utc_at(3600))))
)
def test_ingest_of_mutated_evidence(
    ingest_repo: Path, cli: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, doc: dict[str, Any]
) -> None:
    check_ingest(ingest_repo, cli, tmp_path_factory.getbasetemp() / "in.json", dumps(doc))


@settings(FAST, max_examples=150)
@given(data=st.one_of(reportlogs(), junits(), st.binary(max_size=100).map(lambda b: b"<" + b)))
def test_ingest_of_hostile_reportlogs_and_junit(
    ingest_repo: Path, cli: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    check_ingest(ingest_repo, cli, tmp_path_factory.getbasetemp() / "in.log", data)


@pytest.mark.slow
@settings(FAST, max_examples=2000)
@given(
    data=st.one_of(
        reportlogs(), junits(), mutated(lambda: run_doc("passed")).map(dumps), mutated(_result_base).map(dumps)
    )
)
def test_ingest_deep(
    ingest_repo: Path, cli: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    check_ingest(ingest_repo, cli, tmp_path_factory.getbasetemp() / "in.any", data)
