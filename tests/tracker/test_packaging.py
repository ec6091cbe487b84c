"""The built wheel ships the templates and the entry points (what `pip install .` installs)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="setuptools not installed")
def test_wheel_ships_templates_and_entry_points(tmp_path: Path) -> None:
    src = tmp_path / "src"
    # A copy: building in place would race with other runs over build/ and *.egg-info.
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", ".tracker", "node_modules"
        ),
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("plan_tracker-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert "tracker/templates/plan.md" in names
        assert zf.read("tracker/templates/plan.md") == (REPO / "templates/plan.md").read_bytes()
        assert {"tracker/cli.py", "tracker/pytest_plugin.py", "tracker/commands/status.py"} <= names
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "tracker = tracker.entry:main" in entry_points
    assert "[pytest11]\ntracker.pytest_plugin = tracker.pytest_plugin" in entry_points
