"""Adversarial round 11 (issue 24): each finding a test that failed before its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import git, phase, plan_text

STATE = (
    "import os\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\n"
    "def test_b():\n    assert os.environ.get('FLAKE') != '1', 'a flake'\n    assert STATE == [], 'test_a left state'\n"
)


def status_of(cli: Any, root: Path, pid: str = "P1") -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith(f"{pid} ")).split()[1]


def state_repo(repo: Any) -> Path:
    plan = plan_text(phases=phase("P1", 'test = "tests/test_state.py"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_state.py": STATE})
    return root


def recorded(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FLAKE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "--tracker-record"]
    subprocess.run(cmd, cwd=root, env=env, capture_output=True, check=False)


@pytest.mark.parametrize(
    "args",
    [
        ["tests/test_state.py::test_b"],  # F1b: a run of the one test
        ["tests/test_state.py::test_b", "tests/test_state.py::test_a"],  # F4: both, in another order
    ],
)
def test_a_run_of_part_of_the_gate_retires_no_failure(repo: Any, cli: Any, args: list[str]) -> None:
    """F1, F4: a test the passing run did not record counted as gone, so a plain recorded run of the failing test
    alone (or of both tests in another order) retired the failure that pytest on the gate shows."""
    root = state_repo(repo)
    assert cli(root, "verify").code == 1
    recorded(root, *args)
    assert status_of(cli, root) != "done"


def test_a_run_of_another_gate_retires_no_failure_of_a_wider_one(repo: Any, cli: Any) -> None:
    """F1a: P1 gates tests/, P2 one file of it; verify of P2 alone passed the test that fails after test_1.py ran,
    and P1 turned done."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/"', paths='"tests/**"') + phase("P2", 'test = "tests/test_2.py"')
    )
    files = {
        "plans/0001-demo.md": plan,
        "tests/test_1.py": "import os\n\n\ndef test_a():\n    os.environ['LEFT_BEHIND'] = '1'\n",
        "tests/test_2.py": "import os\n\n\ndef test_b():\n    assert 'LEFT_BEHIND' not in os.environ\n",
    }
    root: Path = repo(files)
    assert cli(root, "verify", "0001/P1").code == 1
    assert cli(root, "verify", "0001/P2").code == 0
    assert status_of(cli, root, "P1") != "done" and status_of(cli, root, "P2") == "done"


def test_every_failure_needs_a_run_of_the_whole_gate(repo: Any, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """F3: only the newest failure was judged, so a failure of the test alone (a flake) replaced the failure with
    the gate's other tests, and the next pass alone retired it."""
    root = state_repo(repo)
    assert cli(root, "verify").code == 1
    narrow = ("--pytest-arg=-k", "--pytest-arg=test_b")
    monkeypatch.setenv("FLAKE", "1")
    assert cli(root, "verify", "--force", *narrow).code == 1
    monkeypatch.delenv("FLAKE")
    cli(root, "verify", "--force", *narrow)
    assert status_of(cli, root) != "done"


def test_a_skipped_polluter_lets_the_fixed_gate_recover(repo: Any, cli: Any) -> None:
    """F8 (a false fail): once test_a is skipped, a run of the whole gate passes test_b with it, which retires the
    failure (a skip is the test's own choice, not a run of part of the gate)."""
    root = state_repo(repo)
    assert cli(root, "verify").code == 1
    skipped = STATE.replace("def test_a", "@pytest.mark.skip(reason='pollutes')\ndef test_a")
    (root / "tests/test_state.py").write_text("import pytest\n" + skipped)
    git(root, "commit", "-qam", "skip the polluter")
    cli(root, "verify")
    assert "test_b: failed" not in cli(root, "show", "0001/P1").out


def test_a_module_the_repository_provides_below_its_root_is_its_own(repo: Any, cli: Any) -> None:
    """F2: only the root was checked for modules the tracker had loaded; tests/secrets.py (the test folder is put
    first on sys.path) and src/markdown_it/ (pythonpath = src) ran the tracker's copies in the forked child."""
    import secrets  # noqa: F401

    import markdown_it  # noqa: F401 - loaded in this process, which verify forks

    plan = plan_text(phases=phase("P1", 'test = "tests/test_mod.py"', paths='"src/**", "tests/**"'))
    test = (
        "def test_secrets():\n    import secrets\n    assert secrets.compare_digest('a', 'b')\n\n\n"
        "def test_markdown():\n    from markdown_it import MarkdownIt\n    assert MarkdownIt().render('x') == 'own'\n"
    )
    files = {
        "plans/0001-demo.md": plan,
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "tests/secrets.py": "def compare_digest(a, b):\n    return True\n",
        "src/markdown_it/__init__.py": "class MarkdownIt:\n    def render(self, text):\n        return 'own'\n",
        "tests/test_mod.py": test,
    }
    root: Path = repo(files)
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    assert subprocess.run(plain, cwd=root, capture_output=True).returncode == 0
    r = cli(root, "verify")
    assert r.code == 0, r.out + r.err


def test_a_folder_behind_a_link_renamed_into_place_never_runs_the_old_bytecode(
    repo: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F6: pkg -> impl; the bytecode cache was judged by the link's own times, so an impl/ renamed into place with
    files of the same size and second ran the old .pyc."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    plan = plan_text(phases=phase("P1", 'test = "tests/test_pkg.py"', paths='"pkg", "impl/**"'))
    test = "import os\nimport sys\n\nsys.path.insert(0, os.getcwd())\nfrom pkg.mod import answer\n\n\n"
    files = {
        "impl/__init__.py": "",
        "impl/mod.py": "def answer():\n    return 42\n",
        "alt/__init__.py": "",
        "alt/mod.py": "def answer():\n    return 41\n",
        "tests/test_pkg.py": test + "def test_answer():\n    assert answer() == 42\n",
        ".gitignore": "alt/\n",
    }
    root: Path = repo({"plans/0001-demo.md": plan, **files}, commit=False)
    for name in ("impl/mod.py", "alt/mod.py"):
        os.utime(root / name, (1767225600, 1767225600))
    (root / "pkg").symlink_to("impl")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "42")
    assert cli(root, "verify").code == 0
    (root / "impl").rename(root / "old")
    (root / "alt").rename(root / "impl")
    git(root, "commit", "-qam", "41")
    assert cli(root, "verify").code == 1
