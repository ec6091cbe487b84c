"""Fixes of an adversarial review, gates and verify (real git, real pytest, real ingest in tmp repositories).

F2 a JUnit run (no markers) retired a marker gate's collection error and hid a failure; F5 a JUnit "passed"
overrode the plugin's ``xpassed``; F3 a file from a clock a few minutes ahead outranked verify's own run in
status; F8 a verify run that ran none of a gate's tests said "met" without saying from which evidence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracker_testutil import git, make_files, phase, plan_text

PYTEST_INI = "[pytest]\nmarkers =\n    slow: slow tests\n"
IGNORED = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.xml\next/\n"


def run_pytest(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real pytest session in ``root`` (its own process)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=root, capture_output=True, text=True, check=False, env=env)  # fmt: skip


def status_of(cli: Callable[..., Any], root: Path) -> tuple[str, dict[str, Any]]:
    """(status of plan 0001's first phase, its first gate) from ``status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.out + res.err
    phase_json = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_json["status"], phase_json["gates"][0]


def junit_run_and_ingest(cli: Callable[..., Any], root: Path, *args: str, env: dict[str, str] | None = None) -> None:
    """Run plain pytest with --junitxml on "CI" and ingest what it wrote."""
    run_pytest(root, f"--junitxml={root / 'j.xml'}", *args, env=env)
    res = cli(root, "ingest", "--host", "ci", str(root / "j.xml"))
    assert res.code == 0, res.out + res.err


# --- F2: a JUnit run and a marker gate's collection error ---------------------------------------------------------

EXT_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests"\nmarker = "slow"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_a.py": "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    assert True\n",
    "tests/test_x.py": "import extmod\nimport pytest\n\n@pytest.mark.slow\ndef test_x():\n    assert extmod.VALUE == 2\n",
    "ext/extmod.py": "VALUE = 1\n",
}


def test_a_junit_run_never_retires_a_marker_gates_collection_error(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """The review's reproduction: verify cannot collect test_x.py (extmod is importable only with
    PYTHONPATH=ext); CI runs it with PYTHONPATH=ext and test_x fails. JUnit says nothing of markers: its run
    collected test_x.py, but whether ``-m slow`` selects what it collected cannot be told, so the collection
    error stays, and the failure is not hidden ("1 passed", done, was the lie)."""
    root = repo(EXT_LAYOUT)
    res = cli(root, "verify", "0001/P1")
    assert res.code == 1 and "tests/test_x.py" in res.out, res.out + res.err
    assert status_of(cli, root)[0] == "planned"
    junit_run_and_ingest(cli, root, "tests", env={**os.environ, "PYTHONPATH": str(root / "ext")})
    status, gate = status_of(cli, root)
    assert status != "done" and gate["met"] is False, gate
    assert gate["reason"].startswith("tests/test_x.py"), gate


def test_a_blind_failure_of_a_test_of_unknown_markers_keeps_a_marker_gate_unmet(repo: Callable[..., Path],
                                                                               cli: Callable[..., Any]) -> None:  # fmt: skip
    """A test file added after verify's run, failing only in a JUnit run: no run with markers ever saw it, so
    whether ``-m slow`` selects it cannot be told; the gate is unmet, never met on test_a's pass."""
    layout = {k: v for k, v in EXT_LAYOUT.items() if k != "tests/test_x.py"}
    root = repo(layout)
    res = cli(root, "verify", "0001/P1")
    assert res.code == 0, res.out + res.err
    make_files(root, {"tests/test_y.py": "import pytest\n\n@pytest.mark.slow\ndef test_y():\n    assert False\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "add y")
    junit_run_and_ingest(cli, root, "tests")
    status, gate = status_of(cli, root)
    assert status != "done" and gate["met"] is False, gate
    assert (
        "tests/test_y.py::test_y" in gate["reason"] and "cannot tell whether -m 'slow' selects it" in gate["reason"]
    ), gate
    # A run with markers says which tests -m selects: with test_y fixed, the gate is met again.
    make_files(root, {"tests/test_y.py": "import pytest\n\n@pytest.mark.slow\ndef test_y():\n    assert True\n"})
    git(root, "commit", "-q", "-am", "fix y")
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 0, res.out + res.err
    assert status_of(cli, root)[0] == "done"


def test_a_blind_failure_of_a_test_the_marker_does_not_select_does_not_count(repo: Callable[..., Path],
                                                                            cli: Callable[..., Any]) -> None:  # fmt: skip
    """The other side: a test a run with markers recorded as unmarked fails in JUnit: -m slow does not select
    it, the gate stays met (only tests of unknown markers block)."""
    layout = {k: v for k, v in EXT_LAYOUT.items() if k != "tests/test_x.py"}
    root = repo({**layout, "tests/test_u.py": "def test_u():\n    assert True\n"})
    assert cli(root, "verify", "0001/P1").code == 0
    make_files(root, {"tests/test_u.py": "def test_u():\n    assert False\n"})
    git(root, "commit", "-q", "-am", "break u")
    junit_run_and_ingest(cli, root, "tests")
    _status, gate = status_of(cli, root)
    assert gate["met"] is True, gate


# --- F5: JUnit cannot tell an xpass from a pass --------------------------------------------------------------------

XFAIL_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/test_f.py"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_f.py": "import pytest\n\n@pytest.mark.xfail(reason='bug 7')\ndef test_f():\n    assert True\n",
}


def test_a_junit_pass_never_turns_an_xpass_into_a_pass(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """verify records the xfail test passing as ``xpassed`` (unmet); JUnit XML writes the same outcome as a plain
    pass: ingested, it met the gate. A JUnit pass of a test recorded as xfail-marked is no pass."""
    root = repo(XFAIL_LAYOUT)
    res = cli(root, "verify", "0001/P1")
    assert res.code == 1 and "xpassed" in res.out, res.out + res.err
    junit_run_and_ingest(cli, root, "tests")
    status, gate = status_of(cli, root)
    assert status != "done" and gate["met"] is False, gate
    assert (
        gate["reason"].startswith("tests/test_f.py::test_f: xpassed")
        and "JUnit XML writes an xpass as a pass" in gate["reason"]
    ), gate


def test_a_junit_pass_after_an_xfailed_is_no_pass(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """The same for a test verify recorded as ``xfailed``: JUnit's pass may be an xpass."""
    root = repo({**XFAIL_LAYOUT, "tests/test_f.py": "import pytest\n\n@pytest.mark.xfail(reason='bug 7')\ndef test_f():\n"
                                                    "    import os\n    assert os.environ.get('FIXED') == '1'\n"})  # fmt: skip
    res = cli(root, "verify", "0001/P1")
    assert res.code == 1 and "xfailed" in res.out, res.out + res.err
    junit_run_and_ingest(cli, root, "tests", env={**os.environ, "FIXED": "1"})
    _status, gate = status_of(cli, root)
    assert gate["met"] is False, gate


# --- F3: verify's own run put behind a file from a clock ahead --------------------------------------------------------

SIMPLE_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/test_a.py"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_a.py": "def test_a():\n    assert True\n",
}


def utc_after(seconds: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds))


def test_status_agrees_with_verify_after_a_file_from_a_clock_ahead(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """The review's reproduction: a pass recorded by a machine whose clock runs 4 minutes ahead; verify's own run
    of the broken test is put behind it and judged UNMET, but status ordered by time and said done. verify now
    records its run as later than that file (keeping its own clock's reading), so status judges as verify did."""
    from tracker.store.evidence_schema import check_document

    root = repo(SIMPLE_LAYOUT)
    assert cli(root, "verify", "0001/P1").code == 0
    (ahead,) = (root / ".tracker/evidence").glob("*.json")
    doc = json.loads(ahead.read_text())
    doc["provenance"]["time"] = utc_after(240)  # as another machine's clock would say it
    ahead.write_text(json.dumps(doc))
    make_files(root, {"tests/test_a.py": "def test_a():\n    assert False\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "evidence from ahead; break a")
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 1 and "UNMET 0001/P1#1" in res.out, res.out + res.err
    assert "recorded later than this run" in res.out and "provenance.clock_time" in res.out, res.out
    (own,) = set((root / ".tracker/evidence").glob("*.json")) - {ahead}
    own_doc = json.loads(own.read_text())
    check_document(own_doc)  # still a valid evidence file (clock_time is an unknown key holding a string)
    assert own_doc["provenance"]["time"] > doc["provenance"]["time"] > own_doc["provenance"]["clock_time"]
    status, gate = status_of(cli, root)
    assert (
        status == "regressed" and gate["met"] is False and gate["source"]["file"] == own.relative_to(root).as_posix()
    ), gate


# --- F8: a verify run that ran none of a gate's tests ---------------------------------------------------------------


def test_verify_says_a_verdict_comes_from_older_evidence_when_its_run_ran_none_of_the_tests(
    repo: Callable[..., Path],
    cli: Callable[..., Any],
) -> None:
    """``-k nomatch`` deselects the gate's only test: the gate stays met (deselection never un-meets), and verify
    says the verdict is the older evidence's, naming its file, instead of a bare "met ... 1 passed"."""
    root = repo(SIMPLE_LAYOUT)
    assert cli(root, "verify", "0001/P1").code == 0
    (older,) = (root / ".tracker/evidence").glob("*.json")
    for args in (
        ["--pytest-arg=-k", "--pytest-arg=nomatch"],
        ["--pytest-arg=--deselect", "--pytest-arg=tests/test_a.py::test_a"],
    ):
        res = cli(root, "verify", "--force", "0001/P1", *args)
        assert res.code == 0, res.out + res.err
        line = next(line for line in res.out.splitlines() if line.startswith("met   0001/P1#1"))
        assert "this run ran none of its tests" in line and older.relative_to(root).as_posix() in line, line
    res = cli(root, "verify", "--force", "0001/P1")
    line = next(line for line in res.out.splitlines() if line.startswith("met   0001/P1#1"))
    assert "older evidence" not in line, line


# --- verify's crash message names the test from the running slot ---------------------------------------------------

CRASH_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/test_c.py"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_c.py": "import os\n\ndef test_a():\n    pass\n\ndef test_b():\n    os._exit(3)\n\ndef test_c():\n    pass\n",
}


def test_verify_names_the_test_that_crashed_among_others_of_its_file(repo: Callable[..., Path]) -> None:
    """The evidence file names only the crashed test's file when other tests of it run (the plugin names the very
    test in its running slot, tracker.names.crashed_test): verify's message names the test, read from the slot."""
    from tracker.commands.common import pytest_env

    root = repo(CRASH_LAYOUT)
    proc = subprocess.run([sys.executable, "-m", "tracker", "verify"], cwd=root, env=pytest_env(root), capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert proc.returncode == 6, proc.stdout + proc.stderr
    assert "it crashed while running tests/test_c.py::test_b, which counts as an error" in proc.stderr, proc.stderr
