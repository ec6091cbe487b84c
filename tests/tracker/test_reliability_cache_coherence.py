"""The status index (tracker/store/statusindex.py) against a cold status, through the real CLI in throwaway git
repositories: every input status reads must be part of the index's key, or a warm status can keep a verdict the
evidence no longer supports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text

from tracker.base import fileio
from tracker.store import statusindex

CHECKOUT = Path(__file__).resolve().parents[2]
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


@pytest.fixture(autouse=True)
def settle_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep an index at once (no two-second wait for the files to settle)."""
    monkeypatch.setattr(statusindex, "SETTLED_NS", 0)
    monkeypatch.setattr(fileio, "SETTLED_NS", 0)


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


# --- ingest: one JUnit XML file that lists a test twice -----------------------------------------------------------

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
