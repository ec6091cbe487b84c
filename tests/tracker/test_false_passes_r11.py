"""Adversarial round 11 (issue 24): each finding a test that failed before its fix (the stricter rule for
retiring a failure, F1/F3/F4, is not in yet)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import git, phase, plan_text


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
