"""Adversarial round 15 (issue 24), against caf8559: each finding a test that failed before its fix (A1, A2, A3, A5,
A7, A9; A4, A6 and A8 are open, issue 24's note).

`POLLUTES`-like files: test_a leaves state that fails test_b, so `pytest tests/test_x.py` always fails."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tracker_testutil import phase, plan_text, record, status_of

PLAN = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))


def test_a_run_with_doctests_the_gate_lacks_is_no_run_of_all_of_it(repo: Any, cli: Any) -> None:
    """A1: `--doctest-modules` added the module's doctest, which set the state test_b needs, to a file gate without
    it: "2 passed", while `pytest tests/test_x.py` fails."""
    body = '""">>> import os; os.environ["READY"] = "1"\n"""\nimport os\n\n\ndef test_b():\n'
    body += '    assert os.environ.get("READY") == "1"\n'
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": body})
    assert record(root, "tests/test_x.py", "--doctest-modules") == 0
    assert status_of(cli, root) != "done"


SKIPPABLE = (
    "import os\n\nimport pytest\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\n"
    "@pytest.mark.skipif(bool(os.environ.get('SKIP_B')), reason='no GPU')\ndef test_b():\n    assert not STATE\n"
)


def test_a_gpu_named_by_torch_alone_makes_no_other_machine(repo: Any, cli: Any) -> None:
    """A2: the run of all imported a torch (here a stand-in that reports CUDA) and recorded an H200, b alone did
    not: one machine, two labels, and b's skip there was taken for a CPU machine's."""
    torch = (
        "class cuda:\n    @staticmethod\n    def is_available():\n        return True\n\n"
        "    @staticmethod\n    def get_device_name(i):\n        return 'NVIDIA H200'\n"
    )
    body = SKIPPABLE.replace("def test_a():\n", "def test_a():\n    import torch  # noqa: F401\n\n")
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": body, "torch/__init__.py": torch})
    assert record(root, "tests/test_x.py", env={"SKIP_B": "1", "PYTHONPATH": str(root)}) == 0
    assert record(root, "tests/test_x.py::test_b") == 0
    assert status_of(cli, root) != "done"


def test_an_ingested_pass_is_no_other_machine(repo: Any, cli: Any, tmp_path: Path) -> None:
    """A3: an ingested run records no CPU: its machine never equalled the run of all's, so a skip there counted."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": SKIPPABLE})
    assert record(root, "tests/test_x.py", env={"SKIP_B": "1"}) == 0
    log = tmp_path / "b.jsonl"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_x.py::test_b"]
    assert subprocess.run([*cmd, f"--report-log={log}"], cwd=root, capture_output=True).returncode == 0
    cli(root, "ingest", str(log), "--host", socket.gethostname())
    assert status_of(cli, root) != "done"


def test_options_declared_by_the_environment_are_only_those_a_gate_may_carry(repo: Any, cli: Any) -> None:
    """A5: TRACKER_GATE_OPTIONS (verify's, but anyone's to set) declared `-W ignore` as the gate's own, so a run
    that ignored the warning the ini makes an error recorded nothing altered."""
    ini = "[pytest]\nfilterwarnings =\n    error\n"
    body = "import warnings\n\n\ndef test_w():\n    warnings.warn('no')\n"
    root: Path = repo({"plans/0001-demo.md": PLAN, "pytest.ini": ini, "tests/test_x.py": body})
    gates = root / "gates.json"
    gates.write_text("{}")
    env = {"TRACKER_GATE_OPTIONS": json.dumps(["-W", "ignore"])}
    assert record(root, "tests/test_x.py", "-W", "ignore", f"--tracker-gates={gates}", env=env) == 0
    assert status_of(cli, root) != "done"


def test_an_allowed_xfail_in_the_run_of_all_does_not_stand_for_a_pass(repo: Any, cli: Any) -> None:
    """A9: test_b xfailed (allowed) in the run of all, then passed alone: its counted outcome is the pass, which
    never ran beside test_a."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"\nxfails_allowed = ["known"]', paths='"tests/**"'))
    body = (
        "import os\n\nimport pytest\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\n"
        "@pytest.mark.xfail(bool(os.environ.get('XF_B')), reason='known')\ndef test_b():\n    assert not STATE\n"
    )
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": body})
    assert record(root, "tests/test_x.py", env={"XF_B": "1"}) == 0
    assert record(root, "tests/test_x.py::test_b") == 0
    assert status_of(cli, root) != "done"
    assert os.environ.get("XF_B") is None


def test_a_test_file_git_ignores_counts_no_pass(repo: Any, cli: Any) -> None:
    """A7: tests/test_gen.py is in .gitignore: it has no file id, so editing it to fail never made the folder gate
    stale. A run that ran such a file counts none of its passes."""
    plan = plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"'))
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            ".gitignore": "tests/test_gen.py\n__pycache__/\n.tracker/cache/\n.tracker/lock\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        }
    )
    (root / "tests" / "test_gen.py").write_text("def test_gen():\n    pass\n")
    assert record(root, "tests") == 0
    r = cli(root, "status", "--json")
    assert status_of(cli, root) != "done" and "test files git ignores (tests/test_gen.py)" in r.out, r.out
