"""Issue 24, round 6: false passes an adversarial pass found after round 5's fixes; each test is its repro, through
the real CLI, git and pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tracker_testutil import git, phase, plan_text

from tracker.core.model import TestGate, gate_hash

TWO = "def test_a():\n    pass\n\ndef test_b():\n    assert False, 'b fails'\n"
FLIP = (
    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n"
    "    report = outcome.get_result()\n"
    "    report.outcome = 'passed'\n"
)


def one_gate(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**", "tests/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 "))


def plain(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=root, env={**base, **(env or {})}, capture_output=True, text=True, check=False)


def test_a_plain_run_claiming_to_be_verifys_neither_hides_a_plugin_nor_stands_for_the_whole_gate(
    repo: Any, cli: Any, tmp_path: Path
) -> None:
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": TWO})
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "flip.py").write_text(FLIP)
    gates = tmp_path / "gates.json"
    gates.write_text(json.dumps({"0001/P1#1": gate_hash(TestGate("tests/test_a.py"))}))
    flipped = plain(
        root, "tests/test_a.py", "-p", "flip", f"--tracker-gates={gates}", "--tracker-record",
        env={"PYTHONPATH": str(plugins)},
    )  # fmt: skip
    assert flipped.returncode == 0, flipped.stdout  # the plugin made both pass
    assert " done " not in status_line(cli, root)
    for f in (root / ".tracker/evidence").glob("*.json"):
        f.unlink()
    partial = plain(root, "tests/test_a.py::test_a", f"--tracker-gates={gates}", "--tracker-record")
    assert partial.returncode == 0, partial.stdout
    assert " done " not in status_line(cli, root)


def test_verify_refuses_a_debugger_and_another_import_mode(repo: Any, cli: Any) -> None:
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": TWO})
    for arg in ("--trace", "--pdb", "--import-mode=importlib", "--capture=no"):
        r = cli(root, "verify", f"--pytest-arg={arg}")
        assert r.code == 3 and "may turn a failing test into a pass" in r.err, (arg, r.out, r.err)
    assert " done " not in status_line(cli, root)


def test_a_test_added_since_the_run_that_named_the_gates_tests_makes_it_stale(repo: Any, cli: Any) -> None:
    # Normal work, no malice: verify, add a failing test to the gate's file, run only the old test.
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": "def test_a():\n    pass\n"})
    assert cli(root, "verify").code == 0
    (root / "tests/test_a.py").write_text(TWO.replace("test_b", "test_new_feature"))
    git(root, "commit", "-qam", "a new test")
    assert plain(root, "tests/test_a.py::test_a", "--tracker-record").returncode == 0
    line = status_line(cli, root)
    assert " done " not in line, line
    assert cli(root, "verify").code == 1  # and verify runs it: the new test fails


def test_a_git_ignored_pytest_configuration_makes_a_run_count_for_nothing(repo: Any, cli: Any) -> None:
    warns = "import warnings\n\ndef test_w():\n    warnings.warn('old', DeprecationWarning)\n"
    root = one_gate(
        repo,
        "tests/test_a.py",
        {"tests/test_a.py": warns, "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'},
    )
    assert cli(root, "verify").code == 1
    with (root / ".git/info/exclude").open("a") as f:
        f.write(".pytest.ini\n")
    (root / ".pytest.ini").write_text("[pytest]\n")
    cli(root, "verify", "--force")
    (root / ".pytest.ini").unlink()
    assert " done " not in status_line(cli, root)
    [newest] = sorted((root / ".tracker/evidence").glob("*.json"))[-1:]
    assert "configuration git ignores (.pytest.ini)" in newest.read_text()


def test_bytecode_read_before_the_recorder_moved_the_caches_is_named(repo: Any, cli: Any) -> None:
    # A -p plugin in the ini's addopts imports the repository's code before any hook of the recorder runs.
    files = {
        "pytest.ini": "[pytest]\naddopts = -p mypkg.fixtures\n",
        "mypkg/__init__.py": "",
        "mypkg/fixtures.py": "from mypkg import core\n",
        "mypkg/core.py": "def add(a, b):\n    return a + b\n",
        "tests/test_a.py": "from mypkg import core\n\ndef test_add():\n    assert core.add(2, 2) == 4\n",
    }
    root = one_gate(repo, "tests/test_a.py", files)
    assert plain(root, "tests/test_a.py", env={"PYTHONPATH": str(root)}).returncode == 0  # writes mypkg/__pycache__
    core = root / "mypkg/core.py"
    st = core.stat()
    core.write_text("def add(a, b):\n    return a - b\n")  # same size, its time restored: Python trusts the cache
    os.utime(core, ns=(st.st_atime_ns, st.st_mtime_ns))
    git(root, "commit", "-qam", "break")
    plain(root, "tests/test_a.py", "--tracker-record", env={"PYTHONPATH": str(root)})
    assert " done " not in status_line(cli, root)


def test_a_run_in_another_order_meets_nothing(repo: Any, cli: Any) -> None:
    # adv round 7: test_b fails after test_a (shared state); --ff runs it first, where it passes.
    src = "CACHE = {}\n\ndef get(k):\n    return CACHE.setdefault(k, k * 2)\n"
    tests = (
        "import sys\nsys.path.insert(0, 'src')\nimport m\n\n"
        "def test_a():\n    m.CACHE['x'] = 'stale'\n\n"
        "def test_b():\n    assert m.get('x') == 'xx'\n"
    )
    root = one_gate(repo, "tests/test_a.py", {"src/m.py": src, "tests/test_a.py": tests})
    assert cli(root, "verify").code == 1
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "tests/test_a.py"]
    subprocess.run(cmd, cwd=root, env=base, capture_output=True, check=False)  # the cache: test_b failed
    ordered = subprocess.run([*cmd, "--ff", "--tracker-record"], cwd=root, env=base, capture_output=True, text=True)
    assert ordered.returncode == 0, ordered.stdout  # test_b first: both pass
    assert " done " not in status_line(cli, root)
    r = cli(root, "verify", "--pytest-arg=--ff")
    assert r.code == 3 and "may turn a failing test into a pass" in r.err, r.out + r.err
