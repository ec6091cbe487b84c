"""Adversarial round 8 (issue 24): each finding a test that failed before its fix. The comment rule's findings
(F1-F6, F8, F11) are in test_comments.py, a file added under a result's globs (F10) in test_bench_walk.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tracker_testutil import phase, plan_text

WARNS = "import warnings\n\ndef f():\n    warnings.warn('old path', DeprecationWarning)\n    return 1\n"
TEST = "import sys\nsys.path.insert(0, 'src')\nimport mod\n\ndef test_w():\n    assert mod.f() == 1\n"


def warned_repo(repo: Any) -> Path:
    plan = plan_text(phases=phase("P1", 'test = "tests/test_w.py"', paths='"src/**"'))
    pyproject = '[project]\nname = "x"\nversion = "0"\n[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "pyproject.toml": pyproject,
            "src/mod.py": WARNS,
            "tests/test_w.py": TEST,
            "-pno:warnings/.keep": "",  # a path of that name: argparse then takes the option for a file
        }
    )
    return root


def p1(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 ")).split()[1]


def test_a_plugin_blocked_after_a_double_dash_is_seen(repo: Any, cli: Any) -> None:
    """F9: pytest's early scan reads ``-pno:warnings`` anywhere, after ``--`` too; argparse took it for a file, so the
    recorder and verify's check let a run without the warnings plugin (filterwarnings = error undone) pass."""
    root = warned_repo(repo)
    assert cli(root, "verify").code == 1  # the warning is an error: the test fails
    r = cli(root, "verify", "--pytest-arg=--", "--pytest-arg=-pno:warnings")
    assert r.code == 3 and "-p no:warnings" in r.err, r.out + r.err
    assert p1(cli, root) != "done"
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_w.py", "--tracker-record"]
    run = subprocess.run([*cmd, "--", "-pno:warnings"], cwd=root, env=base, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout  # the plugin blocked: the warning is no error, the test passes
    assert p1(cli, root) != "done"
