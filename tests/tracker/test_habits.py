"""The project's habits hold: ruff (lint and format) and mypy --strict on tracker/ pass over the checkout, with
the versions pyproject.toml pins (the test extra). This is where CI runs them (README's test command), and a
gate of plan 0001 P9: a tool that is missing skips here, but fails under CI, as the browser test does."""

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
        from browser import in_ci  # the one reading of the CI variable (tests/browser.py)

        why = f"{name} is not installed (pip install '.[test]')"
        if in_ci():
            pytest.fail(why)
        pytest.skip(why)
    return found


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff(args: list[str]) -> None:
    proc = subprocess.run([tool("ruff"), *args], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_on_the_tracker() -> None:
    proc = subprocess.run([tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("ci", "outcome"), [("1", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_a_missing_tool_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="no-such-tool-here is not installed"):
        tool("no-such-tool-here")
