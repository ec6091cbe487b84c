"""Adversarial round 13 (issue 24): each finding a test that failed before its fix (A2, A2b, A3, A6; the others are
open, issue 24's note)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tracker_testutil import phase, plan_text, record, status_of

MARKED = (
    "import pytest\n\nSTATE = []\n\n\n@pytest.mark.slow\ndef test_a():\n    STATE.append('dirty')\n\n\n"
    "def test_c():\n    STATE.clear()\n\n\n@pytest.mark.slow\ndef test_b():\n    assert not STATE\n"
)
INI = "[pytest]\nmarkers =\n    slow: slow\n"


def test_a_run_without_the_gate_s_marker_is_not_a_run_of_the_gate_alone(repo: Any, cli: Any) -> None:
    """A2: test_c (not slow) ran between the slow gate's tests in a run without -m and cleared the state."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"\nmarker = "slow"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "pytest.ini": INI, "tests/test_x.py": MARKED})
    assert cli(root, "verify").code == 1
    assert record(root, "tests/test_x.py") == 0
    assert status_of(cli, root) == "planned"


def test_two_marker_gates_of_one_file_are_run_alone_by_verify(repo: Any, cli: Any) -> None:
    """A2b: verify counted gates by path, so two marker gates of one file were never run alone."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/test_x.py"\nmarker = "slow"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_x.py"\nmarker = "not slow"', paths='"tests/**"')
    )
    root: Path = repo({"plans/0001-demo.md": plan, "pytest.ini": INI, "tests/test_x.py": MARKED})
    assert cli(root, "verify", "0001/P1").code == 1
    r = cli(root, "verify")
    assert r.code == 1 and status_of(cli, root) == "planned", r.out


def test_a_run_that_ran_the_earlier_tests_after_the_failing_one_never_retires_it(repo: Any, cli: Any) -> None:
    """A3: ``addopts = --ff`` in the ini ran the failed test first; only that the earlier tests ran was asked."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))
    test = "STATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\ndef test_b():\n    assert not STATE\n"
    root: Path = repo(
        {"plans/0001-demo.md": plan, "pytest.ini": "[pytest]\naddopts = --ff\n", "tests/test_x.py": test,
         ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n.pytest_cache/\n"}
    )  # fmt: skip
    cmd = [sys.executable, "-m", "pytest", "-q", "tests/test_x.py", "--tracker-record"]
    assert subprocess.run(cmd, cwd=root, capture_output=True).returncode == 1
    assert subprocess.run(cmd, cwd=root, capture_output=True).returncode == 0  # --ff: test_b first
    assert status_of(cli, root) == "planned"


def test_a_run_with_a_collection_option_the_gate_lacks_is_not_a_run_of_the_gate_alone(repo: Any, cli: Any) -> None:
    """A6: --doctest-modules collected a doctest that reset the state between the gate's tests."""
    plan = plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"'))
    files = {
        "plans/0001-demo.md": plan,
        "tests/__init__.py": "",
        "tests/state.py": "SEEN = []\n",
        "tests/test_1.py": "from tests import state\n\n\ndef test_a():\n    state.SEEN.append(1)\n",
        "tests/test_2.py": (
            'from tests import state\n\n\ndef reset():\n    """Forget.\n\n    >>> reset()\n    """\n'
            "    state.SEEN.clear()\n\n\ndef test_b():\n    assert state.SEEN == []\n"
        ),
    }
    root: Path = repo(files)
    assert cli(root, "verify").code == 1
    assert record(root, "tests/", "--doctest-modules") == 0
    assert status_of(cli, root) == "planned"
