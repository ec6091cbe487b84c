"""Fixes of an adversarial review: ways the tracker could lie or stay silent (real git, pytest and files).

F1 a reportlog's keywords are not markers; F4 a JUnit timestamp without a time zone; F7 ``paths`` and
``--measure`` globs that match no file; F9 a symlinked plan stays a symlink; F10 a phase block inside a list
or quote; F11 one definition of "dirty".
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tracker
from tracker.ingest import parse_junit

CHECKOUT = Path(tracker.__file__).resolve().parent


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real pytest session in ``root`` (its own process)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=root, capture_output=True, text=True, check=False)  # fmt: skip


# --- F11: one rule for commit and dirty ------------------------------------------------------------------


def test_only_tracker_dirty_decides_whether_a_tree_is_dirty() -> None:
    """tracker.git.head_commit was a second, unused definition of dirty (gitpython's is_dirty, which counts
    evidence files): any writer that picked it up would disagree with tracker.dirty.commit_state."""
    users = [p.relative_to(CHECKOUT).as_posix() for p in CHECKOUT.rglob("*.py") if re.search(r"\bis_dirty\(|\bhead_commit\b", p.read_text())]
    assert users == []


# --- F4: a JUnit timestamp without a time zone ---------------------------------------------------------------

JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="{failures}" '
         'skipped="0" tests="1" time="0.01" timestamp="{stamp}" hostname="ci"><testcase classname="tests.test_a" '
         'name="test_x" file="tests/test_a.py" time="0.001">{inner}</testcase></testsuite></testsuites>')  # fmt: skip


def junit(stamp: str, failed: bool = False) -> str:
    return JUNIT.format(stamp=stamp, failures=int(failed), inner="<failure message='boom'/>" if failed else "")


def test_a_junit_timestamp_without_a_time_zone_is_refused(repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path) -> None:
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


def test_a_real_pytest_junit_file_is_ingested(repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path) -> None:
    """pytest >= 8.3 (this one) writes the offset: its files are taken as they are."""
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    proc = run_pytest(root, "tests", f"--junitxml={tmp_path / 'j.xml'}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = cli(root, "ingest", "--host", "ci", str(tmp_path / "j.xml"))
    assert res.code == 0 and "1 test(s), complete" in res.out, res.out + res.err


def test_a_future_junit_timestamp_with_a_time_zone_is_still_refused(repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path) -> None:
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    (tmp_path / "j.xml").write_text(junit("2099-01-01T02:00:00+02:00"))
    res = cli(root, "ingest", str(tmp_path / "j.xml"))
    assert res.code == 8 and "2099-01-01T00:00:00Z is in the future" in res.err, res.err
