"""Shared fixtures for the tracker tests: real git repositories in tmp_path and the real CLI."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

# tests/ and tests/tracker are packages (tests/tracker/<folder>/test_<module>.py mirror tracker/<folder>/<module>.py,
# and two folders may hold a test file of the same name), so pytest puts only the repository root on sys.path: the
# helpers imported by bare name (browser, tracker_testutil, evidence_repo, report_fixture, resultfiles) are found
# through these two folders, put last: first, tests/tracker/git/ would stand for GitPython's `git` and tests/tracker/
# for the `tracker` package itself.
for _folder in (Path(__file__).resolve().parent, Path(__file__).resolve().parent / "tracker"):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

LONG_ID = 100  # pytest 9.2 names a longer str/bytes parameter "argnameN" where 9.1 writes it out


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """The id of a long str/bytes parameter, the same under every pytest: its first 60 characters escaped and a
    hash of the whole. pytest 9.1 and 9.2 named such cases differently, so evidence from a machine with the other
    version listed, as deselected, tests no run here ran, which kept their gates unmet (never met falsely)."""
    if not isinstance(val, str | bytes) or len(val) <= LONG_ID:
        return None
    raw = val.encode("utf-8", "surrogatepass") if isinstance(val, str) else val
    shown = (val[:60] if isinstance(val, str) else val[:60].decode("latin-1")).encode("unicode_escape").decode("ascii")
    return f"{shown}...{hashlib.sha256(raw).hexdigest()[:12]}"


@dataclass
class Result:
    """What one CLI invocation gave: exit code, stdout, stderr."""

    code: int
    out: str
    err: str


@pytest.fixture
def repo(tmp_path: Path) -> Callable[..., Path]:
    """Build a committed git repository from ``{path: text}``; returns its root."""
    from tracker_testutil import git, make_files

    def build(files: dict[str, str], commit: bool = True) -> Path:
        root = tmp_path / "repo"
        root.mkdir(exist_ok=True)
        if not (root / ".git").exists():
            git(root, "init", "-q", "-b", "main")
        make_files(root, files)
        if commit:
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "files")
        return root

    return build


if os.environ.get("PYTEST_XDIST_WORKER") and (os.environ.get("COLUMNS"), os.environ.get("LINES")) == ("80", "24"):
    # GNU readline, imported by an xdist worker, exports the size of the terminal it has not got: not a width the
    # tests asked for (``cli`` then runs the CLI as wide as the tests expect).
    del os.environ["COLUMNS"], os.environ["LINES"]


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run the real ``tracker`` CLI (typer app + exit-code mapping) in process, on a repo root. ``status`` lines
    are cut to ``COLUMNS`` (100 where stdout is no terminal): unless a test sets ``COLUMNS`` (``""`` for the
    default), the CLI runs with ``COLUMNS=1000`` here, so the tests of what a line says see all of it."""
    import os

    from tracker.cli import main

    def run(root: Path, *args: str) -> Result:
        capfd.readouterr()
        wide = "COLUMNS" not in os.environ
        if wide:
            os.environ["COLUMNS"] = "1000"
        try:
            main(["--root", str(root), *args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        finally:
            if wide:
                del os.environ["COLUMNS"]
        out, err = capfd.readouterr()
        return Result(code, out, err)

    return run


# Property tests: CI runs every hypothesis test at its own max_examples (several thousand cases in all);
# the deeper runs of the same properties are marked `slow` and run only with TRACKER_SLOW=1
# (`TRACKER_SLOW=1 python -m pytest -m slow`).
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import os

    if os.environ.get("TRACKER_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set TRACKER_SLOW=1 to run it")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say it when tests/kernel is not collected for want of the `kernel` extra (tests/kernel/conftest.py)."""
    import importlib.util

    missing = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
    if missing:
        return f"tests/kernel: not collected, {', '.join(missing)} not installed (pip install '.[test,kernel]')"
    return None
