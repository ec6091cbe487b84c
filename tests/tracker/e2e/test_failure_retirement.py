"""A failure stands until a run of its gate alone passes it, walked through a real repository: order-dependent tests, runs of all and of parts, other machines, xdist, ingested and JUnit runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import SKIPPABLE, git, make_files, phase, plan_text, record, set_newest_provenance, status_of


def one_gate(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line(cli: Any, root: Path) -> str:
    out = cli(root, "status").out
    return next(line for line in out.splitlines() if line.strip().startswith("P1 "))


@pytest.mark.parametrize(
    ("gate", "ran", "test"),
    [
        (
            "tests/test_a.py::TestParser",
            "tests/test_a.py::TestParser::test_ok",
            "class TestParser:\n    def test_ok(self):\n        pass\n\n"
            "    def test_last_token(self):\n        assert False, 'drops the last token'\n",
        ),
        (
            "tests/test_a.py::test_parse",
            "tests/test_a.py::test_parse[a]",
            "import pytest\n\n@pytest.mark.parametrize('text', ['a', 'a b'])\n"
            "def test_parse(text):\n    assert ' ' not in text\n",
        ),
    ],
    ids=["class", "parametrized function"],
)
def test_a_node_id_gate_of_many_tests_is_not_met_by_a_run_of_one(
    repo: Any, cli: Any, gate: str, ran: str, test: str
) -> None:
    root = one_gate(repo, gate, {"tests/test_a.py": test})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", ran, "--tracker-record"]
    assert subprocess.run(cmd, cwd=root, env=env, capture_output=True, check=False).returncode == 0
    line = status_line(cli, root)
    assert " done " not in line and "which tests" in line, line
    r = cli(root, "verify")  # runs all of the gate: the failing test is found
    assert r.code == 1, r.out
    assert " done " not in status_line(cli, root)


def one_gate_r6(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**", "tests/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line_r6(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 "))


def test_a_run_in_another_order_meets_nothing(repo: Any, cli: Any) -> None:
    # adv round 7: test_b fails after test_a (shared state); --ff runs it first, where it passes.
    src = "CACHE = {}\n\ndef get(k):\n    return CACHE.setdefault(k, k * 2)\n"
    tests = (
        "import sys\nsys.path.insert(0, 'src')\nimport m\n\n"
        "def test_a():\n    m.CACHE['x'] = 'stale'\n\n"
        "def test_b():\n    assert m.get('x') == 'xx'\n"
    )
    root = one_gate_r6(repo, "tests/test_a.py", {"src/m.py": src, "tests/test_a.py": tests})
    assert cli(root, "verify").code == 1
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "tests/test_a.py"]
    subprocess.run(cmd, cwd=root, env=base, capture_output=True, check=False)  # the cache: test_b failed
    ordered = subprocess.run([*cmd, "--ff", "--tracker-record"], cwd=root, env=base, capture_output=True, text=True)
    assert ordered.returncode == 0, ordered.stdout  # test_b first: both pass
    assert " done " not in status_line_r6(cli, root)
    r = cli(root, "verify", "--pytest-arg=--ff")
    assert r.code == 3 and "may turn a failing test into a pass" in r.err, r.out + r.err


STATE = "STATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\ndef test_b():\n    assert STATE == [], 'test_a left state'\n"


@pytest.mark.parametrize("narrow", [["-k", "test_b"], ["--deselect", "tests/test_state.py::test_a"]])
def test_a_failure_stands_until_it_passes_with_the_tests_it_failed_with(repo: Any, cli: Any, narrow: list[str]) -> None:
    """F8: each test's newest outcome counted, so a test that fails only after another ran (state left behind)
    passed under ``-k`` or a ``--deselect`` of that other, and the gate was met while pytest on the gate failed."""
    plan = plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_state.py": STATE})
    assert cli(root, "verify").code == 1
    r = cli(root, "verify", "--force", *(f"--pytest-arg={a}" for a in narrow))
    assert r.code == 1 and status_of(cli, root) != "done", r.out + r.err
    (root / "tests/test_state.py").write_text(STATE.replace("STATE.append(1)", "pass"))  # the fix
    git(root, "commit", "-qam", "test_a leaves nothing")
    assert cli(root, "verify").code == 0 and status_of(cli, root) == "done"  # together now: the failure is retired


STATE_R11 = (
    "import os\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\n"
    "def test_b():\n    assert STATE == [], 'test_a left state'\n    assert not os.environ.get('BREAK')\n"
)


A, B = "tests/test_state.py::test_a", "tests/test_state.py::test_b"


def state_repo(repo: Any, cli: Any) -> Path:
    """test_b fails after test_a (state left behind): verify on the gate fails."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_state.py"', paths='"tests/**"'))
    plan2 = plan_text(plan_id="0002", title="Other", phases=phase("P1", f'test = "{B}"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "plans/0002-other.md": plan2, "tests/test_state.py": STATE_R11})
    assert cli(root, "verify", "0001").code == 1
    return root


@pytest.mark.parametrize("how", ["node id", "other phase", "junit"])
def test_a_run_of_part_of_the_gate_never_retires_an_order_dependent_failure(
    repo: Any, cli: Any, how: str, tmp_path: Path
) -> None:
    """F1: a test of the failing run that a passing run did not record was taken for gone, so test_b passed alone
    (its node id run on its own, another phase's verify of it, an ingested JUnit run of it) retired its failure
    after test_a, and the gate was met while pytest on it failed."""
    root = state_repo(repo, cli)
    if how == "node id":
        assert record(root, B) == 0
    elif how == "other phase":
        assert cli(root, "verify", "0002").code == 0
    else:
        xml = tmp_path / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", B, f"--junitxml={xml}"]
        assert subprocess.run(cmd, cwd=root, capture_output=True).returncode == 0
        assert cli(root, "ingest", str(xml)).code == 0
    assert status_of(cli, root, "P1", "0001") == "planned"
    assert cli(root, "verify", "0001").code == 1


def test_a_pass_in_another_order_never_retires_an_order_dependent_failure(repo: Any, cli: Any) -> None:
    """F4: the rule asked only that the passing run ran the same tests: test_b run before test_a passed."""
    root = state_repo(repo, cli)
    assert record(root, B, A) == 0
    assert status_of(cli, root, "P1", "0001") == "planned"


def test_an_older_failure_stands_when_only_a_newer_narrower_one_was_retired(repo: Any, cli: Any) -> None:
    """F3: only the newest failure was judged: test_b failed after test_a, then alone (another cause), then passed
    alone; the pass retired the failure alone, and the one after test_a was never looked at."""
    root = state_repo(repo, cli)
    assert record(root, B, env={"BREAK": "1"}) == 1
    assert record(root, B) == 0
    assert status_of(cli, root, "P1", "0001") == "planned"


def test_a_pass_on_another_xdist_worker_never_retires_an_order_dependent_failure(repo: Any, cli: Any) -> None:
    """F4 under xdist: test_b passes when test_a ran on another worker (or after it on the same one)."""
    pytest.importorskip("xdist")
    root = state_repo(repo, cli)
    assert record(root, "-n", "2", "tests/test_state.py") in (0, 1)
    assert status_of(cli, root, "P1", "0001") == "planned"


def test_a_failure_is_retired_by_a_pass_after_the_same_tests_or_their_removal(repo: Any, cli: Any) -> None:
    """The rule's other side: a run that passes test_b after test_a (the fix), or after test_a was deleted from the
    file it covers, retires the failure."""
    root = state_repo(repo, cli)
    (root / "tests/test_state.py").write_text(STATE_R11.replace("STATE.append(1)", "pass"))
    git(root, "commit", "-qam", "the fix")
    assert record(root, "tests/test_state.py") == 0
    assert status_of(cli, root, "P1", "0001") == "done"
    (root / "tests/test_state.py").write_text(STATE_R11)
    git(root, "commit", "-qam", "the bug again")
    assert cli(root, "verify", "0001").code == 1
    (root / "tests/test_state.py").write_text(STATE_R11.replace("def test_a():\n    STATE.append(1)\n\n\n", ""))
    git(root, "commit", "-qam", "test_a deleted")
    assert record(root, "tests/test_state.py") == 0
    assert status_of(cli, root, "P1", "0001") == "done"


def one_gate_r12(repo: Any, test: str, **files: str) -> Path:
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**", "mod.py"'))
    return repo(
        {"plans/0001-demo.md": plan, "tests/test_x.py": test, **{k.replace("__", "/"): v for k, v in files.items()}}
    )


def test_a_test_that_passes_only_after_another_is_not_met_by_running_that_one_first(repo: Any, cli: Any) -> None:
    """F1: b runs first in its file and passes only after a: its failure was retired by ``pytest ::a ::b``."""
    test = "STATE = []\n\n\ndef test_b():\n    assert STATE == ['a']\n\n\ndef test_a():\n    STATE.append('a')\n"
    root = one_gate_r12(repo, test)
    assert cli(root, "verify").code == 1
    assert record(root, "tests/test_x.py::test_a", "tests/test_x.py::test_b") == 0
    assert status_of(cli, root) == "planned"
    assert cli(root, "verify").code == 1


def test_a_test_that_fails_alone_is_not_met_by_verify_running_it_beside_another_gate(repo: Any, cli: Any) -> None:
    """F2: verify ran every gate in one session, where another gate's test set the state this one needs; pytest on
    the gate alone fails. verify now runs such an unmet gate alone."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/test_1.py"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_2.py"', paths='"tests/**"')
    )
    files = {
        "plans/0001-demo.md": plan,
        "tests/__init__.py": "",
        "tests/state.py": "SEEN = []\n",
        "tests/test_1.py": "from tests import state\n\n\ndef test_setup_state():\n    state.SEEN.append(1)\n",
        "tests/test_2.py": "from tests import state\n\n\ndef test_needs_state():\n    assert state.SEEN == [1]\n",
    }
    root: Path = repo(files)
    assert record(root, "tests/test_2.py") == 1
    r = cli(root, "verify", "--force")
    assert r.code == 1 and "running 1 unmet gate(s) alone" in r.out, r.out + r.err
    assert (status_of(cli, root, "P1"), status_of(cli, root, "P2")) == ("done", "planned")


def test_a_run_that_skipped_a_test_the_failure_ran_after_never_retires_it(repo: Any, cli: Any) -> None:
    """F5: a skipped in the passing run (its backend missing) left nothing behind for b."""
    test = (
        "import os\n\nimport pytest\n\nSTATE = []\n\n\n"
        "@pytest.mark.skipif(bool(os.environ.get('NO_A')), reason='needs the A backend')\n"
        "def test_a():\n    STATE.append('dirty')\n\n\ndef test_b():\n    assert not STATE\n"
    )
    root = one_gate_r12(repo, test)
    assert cli(root, "verify").code == 1
    assert record(root, "tests/test_x.py", env={"NO_A": "1"}) == 0
    assert status_of(cli, root) == "planned"


def test_a_module_imported_beside_the_gate_never_retires_its_failure_but_its_own_gate_alone_is_met(
    repo: Any, cli: Any
) -> None:
    """F8: test_z sets decimal's precision at import, so pytest on tests/ fails test_b; P2's run of test_b.py alone
    passed it and retired the failure for P1's gate too."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_b.py"', paths='"tests/test_b.py"')
    )
    files = {
        "plans/0001-demo.md": plan,
        "tests/test_b.py": "import decimal\n\n\ndef test_default_precision():\n    assert decimal.getcontext().prec == 28\n",
        "tests/test_z.py": (
            "import decimal\n\ndecimal.getcontext().prec = 5\n\n\n"
            "def test_rounding():\n    assert str(decimal.Decimal(1) / 3) == '0.33333'\n"
        ),
    }
    root: Path = repo(files)
    assert cli(root, "verify", "0001/P1").code == 1
    assert cli(root, "verify", "0001/P2").code == 0
    assert (status_of(cli, root, "P1"), status_of(cli, root, "P2")) == ("planned", "done")
    r = cli(root, "verify", "--force")  # both gates in one session: P2 fails there (pytest's failure there too)
    assert r.code == 1 and "alone" not in r.out and status_of(cli, root, "P2") == "regressed", r.out
    assert cli(root, "verify", "0001/P2").code == 0 and status_of(cli, root, "P2") == "done"


def test_an_ingested_pass_never_retires_a_failure(repo: Any, cli: Any, tmp_path: Path) -> None:
    """F4: an ingested reportlog is judged without its order; it records no arguments either, so it is never a run of
    the gate alone."""
    test = "STATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\ndef test_b():\n    assert not STATE\n"
    root = one_gate_r12(repo, test)
    assert cli(root, "verify").code == 1
    log = tmp_path / "rl.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_x.py::test_b",
        "tests/test_x.py::test_a",
    ]
    assert subprocess.run([*cmd, f"--report-log={log}"], cwd=root, capture_output=True).returncode == 0
    assert cli(root, "ingest", str(log)).code == 0
    assert status_of(cli, root) == "planned"


MARKED = (
    "import pytest\n\nSTATE = []\n\n\n@pytest.mark.slow\ndef test_a():\n    STATE.append('dirty')\n\n\n"
    "def test_c():\n    STATE.clear()\n\n\n@pytest.mark.slow\ndef test_b():\n    assert not STATE\n"
)


INI = "[pytest]\nmarkers =\n    slow: slow\n"


POLLUTES = "STATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\ndef test_b():\n    assert not STATE\n"


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


PLAN = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))


def _root(repo: Any, body: str = POLLUTES, **more: str) -> Path:
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": body, **more})
    return root


SKIPPABLE_R14 = (
    "import os\n\nimport pytest\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\n"
    "@pytest.mark.skipif(bool(os.environ.get('SKIP_B')), reason='no GPU')\ndef test_b():\n    assert not STATE\n"
)


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


def test_a_skip_on_the_machine_of_the_pass_is_no_other_machine_s_test(repo: Any, cli: Any) -> None:
    """F3: the run of all skipped test_b (an environment variable), b passed alone on the same machine."""
    root = _root(repo, SKIPPABLE_R14)
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


SKIPPABLE_R15 = (
    "import os\n\nimport pytest\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\n"
    "@pytest.mark.skipif(bool(os.environ.get('SKIP_B')), reason='no GPU')\ndef test_b():\n    assert not STATE\n"
)


def test_a_run_with_doctests_the_gate_lacks_is_no_run_of_all_of_it(repo: Any, cli: Any) -> None:
    """A1: `--doctest-modules` added the module's doctest, which set the state test_b needs, to a file gate without
    it: "2 passed", while `pytest tests/test_x.py` fails."""
    body = '""">>> import os; os.environ["READY"] = "1"\n"""\nimport os\n\n\ndef test_b():\n'
    body += '    assert os.environ.get("READY") == "1"\n'
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": body})
    assert record(root, "tests/test_x.py", "--doctest-modules") == 0
    assert status_of(cli, root) != "done"


def test_a_gpu_named_by_torch_alone_makes_no_other_machine(repo: Any, cli: Any) -> None:
    """A2: the run of all imported a torch (here a stand-in that reports CUDA) and recorded an H200, b alone did
    not: one machine, two labels, and b's skip there was taken for a CPU machine's."""
    torch = (
        "class cuda:\n    @staticmethod\n    def is_available():\n        return True\n\n"
        "    @staticmethod\n    def get_device_name(i):\n        return 'NVIDIA H200'\n"
    )
    body = SKIPPABLE_R15.replace("def test_a():\n", "def test_a():\n    import torch  # noqa: F401\n\n")
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": body, "torch/__init__.py": torch})
    assert record(root, "tests/test_x.py", env={"SKIP_B": "1", "PYTHONPATH": str(root)}) == 0
    assert record(root, "tests/test_x.py::test_b") == 0
    assert status_of(cli, root) != "done"


def test_an_ingested_pass_is_no_other_machine(repo: Any, cli: Any, tmp_path: Path) -> None:
    """A3: an ingested run records no CPU: its machine never equalled the run of all's, so a skip there counted."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": SKIPPABLE_R15})
    assert record(root, "tests/test_x.py", env={"SKIP_B": "1"}) == 0
    log = tmp_path / "b.jsonl"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_x.py::test_b"]
    assert subprocess.run([*cmd, f"--report-log={log}"], cwd=root, capture_output=True).returncode == 0
    cli(root, "ingest", str(log), "--host", socket.gethostname())
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


def test_a_host_name_alone_is_no_other_machine(repo: Any, cli: Any) -> None:
    """F4: two CI runners of the same hardware (hosts ci-fast and ci-slow): the fast job's run of all skipped test_b
    (an environment variable), the slow job passed b alone; the skip was taken for another machine's, and the file
    gate met though its tests never passed together (`pytest tests/test_x.py` fails)."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": SKIPPABLE})
    assert record(root, "tests/test_x.py", env={"FAST": "1"}) == 0
    set_newest_provenance(root, "host", "ci-fast")
    assert record(root, "tests/test_x.py::test_b") == 0
    set_newest_provenance(root, "host", "ci-slow")
    assert status_of(cli, root) != "done"


def test_a_cpu_model_alone_is_no_other_machine(repo: Any, cli: Any) -> None:
    """M1: two runners of one image on different CPU models (a cloud pool mixes them): the run of all on one skipped
    test_b (an environment variable), the other passed b alone; the skip was taken for another machine's, and the
    file gate met though its tests never passed together."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": SKIPPABLE})
    assert record(root, "tests/test_x.py", env={"FAST": "1"}) == 0
    set_newest_provenance(root, "cpu", "Intel(R) Xeon(R) Platinum 8480+")
    assert record(root, "tests/test_x.py::test_b") == 0
    set_newest_provenance(root, "cpu", "AMD EPYC 9654 96-Core Processor")
    assert status_of(cli, root) != "done"


PYTEST_INI = "[pytest]\nmarkers =\n    slow: slow tests\n"


IGNORED = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.xml\next/\n"


def run_pytest(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real pytest session in ``root`` (its own process)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=root, capture_output=True, text=True, check=False, env=env)  # fmt: skip


def status_of_review_fixes_gates(cli: Callable[..., Any], root: Path) -> tuple[str, dict[str, Any]]:
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


EXT_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests"\nmarker = "slow"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_a.py": "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    assert True\n",
    "tests/test_x.py": "import extmod\nimport pytest\n\n@pytest.mark.slow\ndef test_x():\n    assert extmod.VALUE == 2\n",
    "ext/extmod.py": "VALUE = 1\n",
}


XFAIL_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/test_f.py"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_f.py": "import pytest\n\n@pytest.mark.xfail(reason='bug 7')\ndef test_f():\n    assert True\n",
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
    assert status_of_review_fixes_gates(cli, root)[0] == "planned"
    junit_run_and_ingest(cli, root, "tests", env={**os.environ, "PYTHONPATH": str(root / "ext")})
    status, gate = status_of_review_fixes_gates(cli, root)
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
    status, gate = status_of_review_fixes_gates(cli, root)
    assert status != "done" and gate["met"] is False, gate
    assert (
        "tests/test_y.py::test_y" in gate["reason"] and "cannot tell whether -m 'slow' selects it" in gate["reason"]
    ), gate
    # A run with markers says which tests -m selects: with test_y fixed, the gate is met again.
    make_files(root, {"tests/test_y.py": "import pytest\n\n@pytest.mark.slow\ndef test_y():\n    assert True\n"})
    git(root, "commit", "-q", "-am", "fix y")
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 0, res.out + res.err
    assert status_of_review_fixes_gates(cli, root)[0] == "done"


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
    _status, gate = status_of_review_fixes_gates(cli, root)
    assert gate["met"] is True, gate


def test_a_junit_pass_never_turns_an_xpass_into_a_pass(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """verify records the xfail test passing as ``xpassed`` (unmet); JUnit XML writes the same outcome as a plain
    pass: ingested, it met the gate. A JUnit pass of a test recorded as xfail-marked is no pass."""
    root = repo(XFAIL_LAYOUT)
    res = cli(root, "verify", "0001/P1")
    assert res.code == 1 and "xpassed" in res.out, res.out + res.err
    junit_run_and_ingest(cli, root, "tests")
    status, gate = status_of_review_fixes_gates(cli, root)
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
    _status, gate = status_of_review_fixes_gates(cli, root)
    assert gate["met"] is False, gate
