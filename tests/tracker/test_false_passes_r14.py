"""Adversarial round 14 (issue 24), against 12161e5: each finding a test that failed before its fix (F1, F2, F3, F4,
F5, F6, F7, F8, F9, F10; F12, F13 and the tree that any untracked file changes are open, issue 24's note).

`POLLUTES`: test_a leaves state that fails test_b, so `pytest tests/test_x.py` always fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tracker_testutil import phase, plan_text, record, status_of

POLLUTES = "STATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\ndef test_b():\n    assert not STATE\n"
PLAN = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))


def _root(repo: Any, body: str = POLLUTES, **more: str) -> Path:
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": body, **more})
    return root


def test_tests_split_over_xdist_workers_did_not_pass_together(repo: Any, cli: Any) -> None:
    """F1: under `-n 2` test_a and test_b ran in two processes: both passed, and `pytest GATE` fails."""
    root = _root(repo)
    assert record(root, "-n", "2", "tests/test_x.py") == 0 or True  # one worker each, or b fails beside a
    assert status_of(cli, root) != "done"


def test_a_test_the_run_of_all_did_not_collect_is_no_kept_pass(repo: Any, cli: Any) -> None:
    """F2: test_b passed alone, then a run of the file with test_b hidden (an environment variable) kept b's pass."""
    body = "import os\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\nif not os.environ.get('HIDE_B'):\n"
    body += "\n    def test_b():\n        assert not STATE\n"
    root = _root(repo, body)
    assert record(root, "tests/test_x.py::test_b") == 0
    assert record(root, "tests/test_x.py", env={"HIDE_B": "1"}) == 0
    assert status_of(cli, root) != "done"


SKIPPABLE = (
    "import os\n\nimport pytest\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\n"
    "@pytest.mark.skipif(bool(os.environ.get('SKIP_B')), reason='no GPU')\ndef test_b():\n    assert not STATE\n"
)


def test_a_skip_on_the_machine_of_the_pass_is_no_other_machine_s_test(repo: Any, cli: Any) -> None:
    """F3: the run of all skipped test_b (an environment variable), b passed alone on the same machine."""
    root = _root(repo, SKIPPABLE)
    assert record(root, "tests/test_x.py", env={"SKIP_B": "1"}) == 0
    assert record(root, "tests/test_x.py::test_b") == 0
    assert status_of(cli, root) != "done"


def test_an_ingested_session_is_no_run_of_all_of_the_gate(repo: Any, cli: Any, tmp_path: Path) -> None:
    """F4: a reportlog records no arguments, order or worker: it cannot show the tests passed together."""
    root = _root(repo)
    log = tmp_path / "x.log"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "tests/test_x.py"]
    subprocess.run([*cmd, f"--report-log={log}"], cwd=root, capture_output=True)
    assert record(root, "tests/test_x.py::test_b") == 0
    assert record(root, "tests/test_x.py", "-k", "test_a") == 0
    cli(root, "ingest", str(log))
    assert status_of(cli, root) != "done"


def test_a_run_alone_that_did_not_collect_the_polluter_retires_nothing(repo: Any, cli: Any) -> None:
    """F5: on the same tree, a run of the gate with test_a hidden passed test_b and retired its failure."""
    body = "import os\n\nSTATE = []\n\nif not os.environ.get('HIDE_A'):\n    def test_a():\n        STATE.append(1)\n"
    body += "\n\ndef test_b():\n    assert not STATE\n"
    root = _root(repo, body)
    assert record(root, "tests/test_x.py") == 1
    assert record(root, "tests/test_x.py", env={"HIDE_A": "1"}) == 0
    assert status_of(cli, root) != "done"


def test_passes_on_new_code_stand_on_the_old_run_of_all_as_stale(repo: Any, cli: Any) -> None:
    """F6: both passed together on v1; on v2 (test_a pollutes) a `-k test_b` run and test_a alone passed."""
    root = _root(repo, POLLUTES.replace("STATE.append('dirty')", "pass"))
    assert record(root, "tests/test_x.py") == 0
    (root / "tests" / "test_x.py").write_text(POLLUTES)
    assert record(root, "tests/test_x.py", "-k", "test_b") == 0
    assert record(root, "tests/test_x.py::test_a") == 0
    assert status_of(cli, root) == "stale"


def test_node_ids_in_another_order_are_no_run_of_all_of_the_gate(repo: Any, cli: Any) -> None:
    """F7: `pytest t.py::test_b t.py::test_a` ran b before a: both passed, `pytest t.py` fails."""
    root = _root(repo)
    assert record(root, "tests/test_x.py::test_b", "tests/test_x.py::test_a") == 0
    assert record(root, "tests/test_x.py", "-k", "test_a") == 0
    assert status_of(cli, root) != "done"


def test_verify_alone_runs_gates_up_to_date_from_a_run_of_more(repo: Any, cli: Any) -> None:
    """F8: a node-id gate met by a run of its whole file was "up to date": `verify --alone` did not run it."""
    body = "STATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\ndef test_b():\n    assert STATE\n"
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py::test_b"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": body})
    assert record(root, "tests/test_x.py") == 0
    assert status_of(cli, root) == "done"
    r = cli(root, "verify", "--alone")
    assert r.code == 1 and status_of(cli, root) != "done", r.out


def test_a_file_a_conftest_rewrites_before_the_session_starts_is_seen(repo: Any, cli: Any) -> None:
    """F9: a conftest.py rewrote a tracked file in pytest_configure, before the recorder read the tree."""
    conftest = (
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n"
        "import mod  # noqa: E402\n\n\ndef pytest_configure(config):\n"
        "    Path(mod.__file__).write_text('def answer():\\n    return 41\\n')\n"
    )
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"**"'))
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "mod.py": "def answer():\n    return 42\n",
            "tests/conftest.py": conftest,
            "tests/test_x.py": "import mod\n\n\ndef test_a():\n    assert mod.answer() == 42\n",
        }
    )
    r = cli(root, "verify")
    assert "files changed while it ran: mod.py" in r.out, r.out
    assert status_of(cli, root) != "done"


def test_a_pass_from_another_working_directory_counts_for_nothing(repo: Any, cli: Any) -> None:
    """F10: `cd tools; python -m pytest ../tests/test_x.py` passed a test that fails at the root, with no failure
    recorded before: the A4 rule covered only retiring one."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))
    body = "from pathlib import Path\n\n\ndef test_x():\n    assert not Path('flag').exists()\n"
    root: Path = repo(
        {"plans/0001-demo.md": plan, "pytest.ini": "[pytest]\n", "flag": "", "tools/keep": "", "tests/test_x.py": body}
    )
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "../tests/test_x.py", "--tracker-record"]
    assert subprocess.run(cmd, cwd=root / "tools", capture_output=True).returncode == 0
    r = cli(root, "status", "--json")
    assert status_of(cli, root) == "planned" and "the working directory tools (not the rootdir)" in r.out, r.out
