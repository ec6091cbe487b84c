"""Issue 24, round 5: what an adversarial pass made the tracker call done while pytest said the tests fail, or made
it hang; each test is that pass's repro, driven through the real CLI, git and pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import git, phase, plan_text


def one_gate(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line(cli: Any, root: Path) -> str:
    out = cli(root, "status").out
    return next(line for line in out.splitlines() if line.strip().startswith("P1 "))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_tests_forked_child_that_goes_on_with_the_session_writes_no_evidence(repo: Any, cli: Any) -> None:
    # The child forgets os._exit: it finishes its copy of the session later, where its test "passed".
    test = (
        "import os, time\n"
        "def test_worker():\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(1.0)\n"
        "        return\n"
        "    assert False, 'worker never reported'\n"
    )
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test})
    r = cli(root, "verify")
    assert r.code == 1 and "worker never reported" in r.out, r.out
    import time

    time.sleep(2.5)  # the child's session has ended by now
    assert " done " not in status_line(cli, root)
    assert cli(root, "verify").code == 1


def test_a_fifo_where_a_covered_file_was_neither_hangs_nor_passes(repo: Any, cli: Any) -> None:
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": "def test_a():\n    pass\n"})
    assert cli(root, "verify").code == 0
    (root / "src/m.py").unlink()
    os.mkfifo(root / "src/m.py")
    proc = subprocess.run(
        [sys.executable, "-m", "tracker", "status"], cwd=root, capture_output=True, text=True, timeout=60, check=False
    )
    line = next(x for x in proc.stdout.splitlines() if x.strip().startswith("P1 "))
    assert " stale " in line and "src/m.py" in line, proc.stdout


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_git_was_told_not_to_watch_still_stales_the_phase(repo: Any, cli: Any, flag: str) -> None:
    test = "import sys\nsys.path.insert(0, 'src')\nimport m\n\ndef test_a():\n    assert m.x == 1\n"
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test})
    assert cli(root, "verify").code == 0
    git(root, "update-index", flag, "src/m.py")
    (root / "src/m.py").write_text("x = 2\n")
    line = status_line(cli, root)
    assert " stale " in line and "src/m.py" in line, line
    r = cli(root, "verify")
    assert r.code == 1, r.out


def test_a_recorded_plain_run_never_runs_bytecode_older_than_the_source(repo: Any, cli: Any) -> None:
    # An edit that keeps the file's size and modification time (inside one second, `cp -p`, `rsync -t`): Python
    # trusts the __pycache__ entry of the old code; the recorded run must not.
    test = "import sys\nsys.path.insert(0, 'src')\nfrom m import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    root = one_gate(
        repo, "tests/test_a.py", {"src/m.py": "def add(a, b):\n    return a + b\n", "tests/test_a.py": test}
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_a.py", *args]
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)

    assert pytest_run().returncode == 0  # writes src/__pycache__/m.*.pyc
    source = root / "src/m.py"
    st = source.stat()
    source.write_text("def add(a, b):\n    return a - b\n")  # same size
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    git(root, "commit", "-qam", "break")
    recorded = pytest_run("--tracker-record")
    assert recorded.returncode == 1, recorded.stdout
    assert " done " not in status_line(cli, root)


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


LOGS = (
    "import logging\n\n"
    "def test_no_errors_logged(caplog):\n"
    "    logging.getLogger('app').error('db connection lost')\n"
    "    assert not caplog.records\n"
)
# fails only through pytest's log handler (a bad format call), which -p no:logging removes
BADLOG = "import logging\n\ndef test_log_call():\n    logging.getLogger('a').warning('%d', 'x')\n"
WARNS = "import warnings\n\ndef test_no_deprecated_calls():\n    warnings.warn('old_api', DeprecationWarning)\n"


@pytest.mark.parametrize(
    ("args", "test", "ini"),
    [
        (["-o", "addopts="], WARNS, "[pytest]\naddopts = -W error::DeprecationWarning\n"),
        (["--log-level=CRITICAL"], LOGS, ""),
        (["-o", "log_level=CRITICAL"], LOGS, ""),
        (["--log-disable=app"], LOGS, ""),
        (["-p", "no:logging"], BADLOG, ""),
    ],
    ids=["-o addopts=", "--log-level", "-o log_level", "--log-disable", "-p no:logging"],
)
def test_an_option_that_turns_a_failure_into_a_pass_meets_nothing(
    repo: Any, cli: Any, args: list[str], test: str, ini: str
) -> None:
    files = {"tests/test_a.py": test, **({"pytest.ini": ini} if ini else {})}
    root = one_gate(repo, "tests/test_a.py", files)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_a.py"]
    assert subprocess.run(plain, cwd=root, env=env, capture_output=True, check=False).returncode == 1
    assert cli(root, "verify").code == 1  # a run of all of the gate, as the repository configures it: it fails
    r = cli(root, "verify", *(f"--pytest-arg={a}" for a in args))
    assert r.code != 0 or " done " not in status_line(cli, root), r.out
    recorded = subprocess.run(
        [*plain, *args, "--tracker-record"], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    assert " done " not in status_line(cli, root), recorded.stdout


def test_an_ini_setting_of_a_plugin_not_loaded_meets_nothing(repo: Any, cli: Any) -> None:
    # pytest-timeout's `timeout = 1` fails a slow test where the plugin loads; with autoloading off (or the plugin
    # not installed) the test passes: a pass that is not the repository's.
    test = "import time\n\ndef test_fast_enough():\n    time.sleep(1.5)\n"
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test, "pytest.ini": "[pytest]\ntimeout = 1\n"})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tracker.pytest_plugin", "tests/test_a.py", "--tracker-record"]
    subprocess.run(cmd, cwd=root, env={**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, capture_output=True, check=False)
    evidence = sorted((root / ".tracker/evidence").glob("*.json"))
    assert evidence and "ini settings no loaded plugin reads (timeout)" in evidence[-1].read_text()
    assert " done " not in status_line(cli, root)
