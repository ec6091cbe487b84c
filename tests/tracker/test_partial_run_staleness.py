"""A gate whose tests passed in several runs is only as fresh as the oldest of them.

A directory gate's verdict takes each test's newest outcome, so its passes can come from different runs: a full
``tracker verify`` at one commit and, after the code changed, a ``pytest --tracker-record`` of a few of its tests.
Status used to judge staleness (and verify its incremental skip) on the newest of those runs alone: the partial run
saw the new code, so the phase read ``done`` while the tests it did not run had only ever passed on the old code
(and one of them fails on the new). Real git, real pytest runs with the plugin, the real CLI.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracker_testutil import git, phase, plan_text

from tracker.commands.common import pytest_command, pytest_env

LIB = "X = 1\n"
TEST_A = "import sys\nsys.path.insert(0, 'src')\nimport lib\n\n\ndef test_a():\n    assert lib.X == 1\n"
TEST_B = "def test_b():\n    pass\n"
IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"


def record(root: Path, *args: str) -> None:
    """A real ``pytest --tracker-record`` run of ``args``, as a user runs it by hand."""
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", *args, "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def p1(root: Path, cli: Callable[..., Any]) -> dict[str, Any]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    phase_data: dict[str, Any] = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_data


def partly_rerun(repo: Callable[..., Path], cli: Callable[..., Any]) -> Path:
    """Verified at the first commit; the code changes so that test_a fails; only test_b is recorded again."""
    plan = plan_text("0001", phase("P1", 'test = "tests/"', paths='"src/**"'))
    root = repo(
        {
            "plans/0001-a.md": plan,
            "src/lib.py": LIB,
            "tests/test_a.py": TEST_A,
            "tests/test_b.py": TEST_B,
            ".gitignore": IGNORE,
        }
    )
    assert cli(root, "verify").code == 0
    assert p1(root, cli)["status"] == "done"
    (root / "src/lib.py").write_text("X = 2\n")
    git(root, "commit", "-qam", "X = 2: test_a fails now")
    assert p1(root, cli)["status"] == "stale"
    record(root, "tests/test_b.py")
    return root


def test_a_partial_run_on_new_code_does_not_make_the_tests_it_skipped_fresh(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = partly_rerun(repo, cli)
    for _ in ("cold", "warm: from the status index"):
        status = p1(root, cli)
        # test_a's only pass saw X = 1: the phase's evidence does not support "done" on X = 2.
        assert status["status"] == "stale", status
        assert status["changed"] == ["src/lib.py"]


def test_verify_reruns_a_gate_whose_older_passes_saw_other_code(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = partly_rerun(repo, cli)
    res = cli(root, "verify")
    assert "up to date with their evidence" not in res.err + res.out
    assert res.code == 1, res.out + res.err  # test_a runs on X = 2 and fails
    assert p1(root, cli)["status"] == "regressed"


def test_a_partial_run_on_the_same_code_keeps_the_phase_done_and_verify_incremental(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    plan = plan_text("0001", phase("P1", 'test = "tests/"', paths='"src/**"'))
    files = {"plans/0001-a.md": plan, "src/lib.py": LIB, "tests/test_a.py": TEST_A, "tests/test_b.py": TEST_B}
    root = repo({**files, ".gitignore": IGNORE})
    assert cli(root, "verify").code == 0
    record(root, "tests/test_b.py")  # both runs saw X = 1
    status = p1(root, cli)
    assert status["status"] == "done", status
    res = cli(root, "verify")
    assert res.code == 0 and "up to date with their evidence" in res.out, res.out + res.err
