"""The project's habits hold: ruff (lint and format) and mypy --strict on tracker/ pass over the checkout, with
the versions pyproject.toml pins. `.ci/run` runs the same three commands; here they are a gate (plan 0001 P9)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install '.[test]')")
    return found


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff(args: list[str]) -> None:
    proc = subprocess.run([tool("ruff"), *args], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_on_the_tracker() -> None:
    proc = subprocess.run([tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
