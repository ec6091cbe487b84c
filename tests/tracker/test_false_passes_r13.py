"""Adversarial round 13 (issue 24): each finding a test that failed before its fix (A1, A2, A2b, A3, A4, A6, B1, C1;
A5 and D2 are open, issue 24's note)."""

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


POLLUTES = "STATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\ndef test_b():\n    assert not STATE\n"


def test_passes_of_parts_of_a_gate_never_combine_into_a_pass_of_all_of_it(repo: Any, cli: Any) -> None:
    """A1: `pytest t.py::test_b` passed b alone, `pytest t.py -k test_a` passed a (and named the file's tests), and
    the gate was met while `pytest t.py` fails (a leaves state that fails b). No failure was ever recorded."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": POLLUTES})
    assert record(root, "tests/test_x.py::test_b") == 0
    assert record(root, "tests/test_x.py", "-k", "test_a") == 0
    assert status_of(cli, root) == "planned"
    assert "its 2 tests never passed together" in cli(root, "status", "--json").out
    assert record(root, "tests/test_x.py") == 1  # the gate's own run fails, as it always would have
    assert status_of(cli, root) == "planned"


def test_a_run_of_all_of_a_gate_is_what_its_partial_passes_stand_on(repo: Any, cli: Any) -> None:
    """The newest run of all of the gate's tests decides whether passes of parts since count: a failure there is not
    hidden by a node id's pass on other code, and a pass of all of it lets a rerun of one test count."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))
    fixed = "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": POLLUTES})
    assert record(root, "tests/test_x.py") == 1
    (root / "tests" / "test_x.py").write_text(POLLUTES + "\n")  # other code: the failure is older code's
    assert record(root, "tests/test_x.py::test_b") == 0
    r = cli(root, "status", "--json")
    assert status_of(cli, root) == "planned" and "the newest run of all 2 of its tests together" in r.out, r.out
    (root / "tests" / "test_x.py").write_text(fixed)
    assert record(root, "tests/test_x.py") == 0
    assert record(root, "tests/test_x.py::test_b") == 0
    assert status_of(cli, root) == "done"


def test_a_test_a_run_skipped_is_left_to_the_runs_that_ran_it() -> None:
    """A CPU run of a gate with a GPU test skips that test; the GPU machine's run (`-m gpu`) passed it: the CPU run
    ran all the others together, and the gate is met. The same skip on the machine of the pass is no such case
    (round 14, F3): machines differ by host, CPU or the driver's GPUs (round 15, A2)."""
    from tracker.core.model import Store, TestGate, TestRun
    from tracker.core.testgate import TestIndex

    def run(name: str, accelerator: str | None, outcomes: dict[str, str], args: list[str]) -> TestRun:
        prov = {"time": f"2026-12-01T00:00:0{name[-1]}Z", "host": "vm", "cpu": "Intel Xeon", "commit": "c" * 40}
        prov |= {"accelerator": accelerator, "args": args}
        tests = [{"nodeid": f"t.py::{n}", "outcome": o, "reason": "", "markers": []} for n, o in outcomes.items()]
        return TestRun(f".tracker/evidence/{name}.json", prov, {}, {"t.py": "1" * 40}, tests)

    gpu = run("r1", "NVIDIA H200", {"test_cpu": "deselected", "test_gpu": "passed"}, ["t.py"])
    cpu = run("r2", None, {"test_cpu": "passed", "test_gpu": "skipped"}, ["t.py"])
    verdict, _ = TestIndex(Store(runs=[gpu, cpu])).verdict("0001/P1#1", TestGate("t.py"))
    assert (verdict.met, verdict.reason) == (True, "2 passed")
    here = run("r1", None, {"test_cpu": "deselected", "test_gpu": "passed"}, ["t.py"])
    verdict, _ = TestIndex(Store(runs=[here, cpu])).verdict("0001/P1#1", TestGate("t.py"))
    assert not verdict.met and "t.py::test_gpu: skipped in" in verdict.reason


def test_verify_alone_finds_a_gate_that_passes_only_beside_another(repo: Any, cli: Any) -> None:
    """B1: test_2 needs the state test_1 sets, so verify's one session meets both gates; `verify --alone` runs each
    as `pytest GATE` would, and the failure it records stands against the next shared session's pass."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/test_1.py"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_2.py"', paths='"tests/**"')
    )
    files = {
        "plans/0001-demo.md": plan,
        "tests/shared.py": "STATE = []\n",
        "tests/test_1.py": "from shared import STATE\n\n\ndef test_1():\n    STATE.append(1)\n",
        "tests/test_2.py": "from shared import STATE\n\n\ndef test_2():\n    assert STATE\n",
        "tests/conftest.py": "",
    }
    root: Path = repo(files)
    assert cli(root, "verify").code == 0  # beside test_1, test_2 passes: what one session can tell
    r = cli(root, "verify", "--alone", "--force")
    assert r.code == 1 and "UNMET 0001/P2#1 tests/test_2.py: tests/test_2.py::test_2: failed" in r.out, r.out
    assert "running 1 test gate(s) in one pytest session" in r.out
    assert status_of(cli, root, "P1") == "done" and status_of(cli, root, "P2") == "regressed"
    r = cli(root, "verify", "--force")
    assert r.code == 1 and status_of(cli, root, "P2") == "regressed", r.out


def test_a_run_started_in_another_directory_is_not_a_run_of_the_gate_alone(repo: Any, cli: Any) -> None:
    """A4: `cd tools; pytest ../tests/test_x.py` passed a test that fails at the root (it reads a file relative to the
    working directory, which `python -m pytest` also puts first on sys.path), and retired its failure there."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))
    body = "from pathlib import Path\n\n\ndef test_x():\n    assert not Path('flag').exists()\n"
    root: Path = repo(
        {"plans/0001-demo.md": plan, "pytest.ini": "[pytest]\n", "flag": "", "tools/keep": "", "tests/test_x.py": body}
    )
    assert record(root, "tests/test_x.py") == 1
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "../tests/test_x.py", "--tracker-record"]
    assert subprocess.run(cmd, cwd=root / "tools", capture_output=True).returncode == 0
    evidence = sorted((root / ".tracker" / "evidence").glob("*.json"))
    assert len(evidence) == 2 and '"cwd": "tools"' in evidence[-1].read_text()
    assert status_of(cli, root) == "planned"


def test_a_file_edited_and_put_back_while_the_run_ran_leaves_its_passes_uncounted(repo: Any, cli: Any) -> None:
    """C1: a file saved with other code mid-run and put back before the run ended has its start's content id at the
    end; its inode change time moved. Here the tests make the edit and take it back themselves."""
    test = (
        "from pathlib import Path\n\n\ndef test_a_edit():\n"
        "    Path('mod.py').write_text('def answer():\\n    return 42\\n')\n\n\n"
        "def test_b_answer():\n    import mod\n\n    assert mod.answer() == 42\n\n\n"
        "def test_c_put_back():\n    Path('mod.py').write_text('def answer():\\n    return 41\\n')\n"
    )
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": test, "mod.py": "def answer():\n    return 41\n"})
    r = cli(root, "verify")
    assert "files changed while it ran: mod.py" in r.out, r.out
    assert (root / "mod.py").read_text() == "def answer():\n    return 41\n"
    assert status_of(cli, root) != "done"


def test_a_collection_error_only_beside_another_file_stands_until_the_gate_alone_collects(repo: Any, cli: Any) -> None:
    """A5: two test_util.py without packages fail `pytest tests` ("import file mismatch" of the second); a run of
    tests/b/test_util.py alone collected it and retired the error, so the folder gate was met while `pytest tests`
    fails to collect."""
    plan = plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"'))
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "tests/a/test_util.py": "HELPER = 1\n",
            "tests/b/test_util.py": "def test_b():\n    pass\n",
        }
    )
    assert record(root, "tests") != 0
    assert record(root, "tests/b/test_util.py") == 0
    assert status_of(cli, root) != "done"
    assert record(root, "tests") != 0  # as `pytest tests` always would
    assert status_of(cli, root) != "done"
