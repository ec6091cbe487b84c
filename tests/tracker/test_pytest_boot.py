"""The tracker's pytest in a repository with a ``tracker`` of its own (tracker/pytest_boot.py).

CI of 2026-12-03 failed on it: verify's new interpreter (a repository that shadows the tracker is run in one)
loaded ``-p tracker.pytest_plugin`` from the repository's ``tracker/`` ("No module named"), so nothing ran. The
repository's tests must still import its own ``tracker``, as a plain ``python -m pytest`` there would.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text

IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"
MINE = "def test_mine():\n    import tracker\n    assert tracker.MINE == 'the repository'\n"
FAILS = "def test_fails():\n    import tracker\n    assert tracker.MINE == 'someone else'\n"
PACKAGE = {"tracker/__init__.py": "MINE = 'the repository'\n"}
MODULE = {"tracker.py": "MINE = 'the repository'\n"}


def _repo(repo: Callable[..., Path], own: dict[str, str], test: str = MINE) -> Path:
    return repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_mine.py"')),
            "tests/test_mine.py": test,
            ".gitignore": IGNORE,
            **own,
        }
    )


def _verify(root: Path, *args: str, spawn: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TRACKER_PYTEST_SPAWN"}
    if spawn:
        env["TRACKER_PYTEST_SPAWN"] = "1"
    cmd = [sys.executable, "-m", "tracker", "verify", "--root", str(root), *args]
    return subprocess.run(cmd, cwd=root.parent, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("own", [PACKAGE, MODULE], ids=["package", "module"])
@pytest.mark.parametrize("spawn", [False, True], ids=["default", "spawned"])
def test_verify_runs_the_repository_tracker_with_the_tracker_plugin(
    repo: Callable[..., Path], own: dict[str, str], spawn: bool
) -> None:
    root = _repo(repo, own)
    r = _verify(root, spawn=spawn)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "met   0001/P1#1 tests/test_mine.py: 1 passed\n" in r.stdout
    r = _verify(root, "--force", "--pytest-arg=-q", spawn=spawn)  # --pytest-arg: the argument check runs too
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("spawn", [False, True], ids=["default", "spawned"])
def test_a_failing_test_of_the_repository_tracker_stays_unmet(repo: Callable[..., Path], spawn: bool) -> None:
    root = _repo(repo, PACKAGE, FAILS)
    r = _verify(root, spawn=spawn)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "UNMET 0001/P1#1 tests/test_mine.py: tests/test_mine.py::test_fails: failed" in r.stdout, r.stdout


def test_lint_collects_in_a_repository_with_its_own_tracker(
    repo: Callable[..., Path], cli: Callable[..., object]
) -> None:
    root = _repo(repo, PACKAGE)
    r = subprocess.run(
        [sys.executable, "-m", "tracker", "lint", "--root", str(root)], cwd=root.parent, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pytest_plugin" not in r.stdout + r.stderr


def _loaded_in_pytest() -> list[str]:
    """The tracker's modules a pytest with its plugins holds."""
    code = (
        "import json, sys; import tracker.pytest_plugin, tracker.pytest_argcheck; "
        "print(json.dumps(sorted(n for n in sys.modules if n.split('.')[0] == 'tracker')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_no_module_in_pytest_imports_the_tracker_inside_a_function() -> None:
    """Once pytest runs, ``tracker`` may be the repository's (tracker.pytest_boot): an import of the tracker's own
    inside a function would find that one."""
    late = []
    for name in _loaded_in_pytest():
        module = sys.modules.get(name) or __import__(name, fromlist=["_"])
        path = Path(str(module.__file__))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and (inner.module or "").split(".")[0] == "tracker":
                        late.append(f"{path.name}:{inner.lineno}")
                    if isinstance(inner, ast.Import) and any(a.name.split(".")[0] == "tracker" for a in inner.names):
                        late.append(f"{path.name}:{inner.lineno}")
    assert "tracker.pytest_plugin" in _loaded_in_pytest()
    assert late == []


def test_a_copy_of_the_tracker_on_the_path_is_no_clash(repo: Callable[..., Path], tmp_path: Path) -> None:
    """CI of 2026-12-03: ``pip install .`` (not editable) puts a copy of the tracker in site-packages beside the
    checkout whose ``tracker`` the tests import; in a repository without a ``tracker`` of its own, pytest's path
    found that copy, and the boot refused it as "the repository's tracker/pytest_plugin.py" (exit 4, nothing
    ran). A copy of the tracker holds the same plugins: the run goes on and records."""
    import shutil

    import tracker
    from tracker.commands.common import pytest_command

    site = tmp_path / "site"
    shutil.copytree(Path(tracker.__file__).parent, site / "tracker", ignore=shutil.ignore_patterns("__pycache__"))
    root = repo({"tests/test_a.py": "def test_a():\n    pass\n", ".gitignore": IGNORE})
    out = tmp_path / "ev"
    env = {**os.environ, "PYTHONPATH": str(site)}
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", "tests", f"--tracker-record={out}"]
    r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(list(out.glob("*.json"))) == 1
