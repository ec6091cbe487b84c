"""Shared fixtures: real git repositories in tmp_path and the real CLI, in process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` and return its stdout."""
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def make_files(root: Path, files: dict[str, str]) -> None:
    """Write ``{relative path: text}`` under ``root`` (cog's make_files), bytes exactly as given."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def repo(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Build a committed git repository from ``{path: text}``; returns its root."""

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


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run the real ``tracker`` CLI (typer app + exit-code mapping) in process, on a repo root."""
    from tracker.cli import main

    def run(root: Path, *args: str) -> Result:
        capfd.readouterr()
        try:
            main(["--root", str(root), *args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capfd.readouterr()
        return Result(code, out, err)

    return run


def plan_text(plan_id: str = "0001", phases: str = "", title: str = "Demo") -> str:
    """A plan file's text with the given phase blocks appended."""
    return f'# {title}\n\n```plan\nid = "{plan_id}"\ntitle = "{title}"\n```\n\n{phases}'


def phase(pid: str, *gates: str, depends: str = "", paths: str = "") -> str:
    """A phase block; ``gates`` are TOML bodies of [[gate]] tables."""
    head = f'```phase\nid = "{pid}"\ntitle = "Phase {pid}"\n'
    head += f"depends = [{depends}]\n" if depends else ""
    head += f"paths = [{paths}]\n" if paths else ""
    return head + "".join(f"[[gate]]\n{g}\n" for g in gates) + "```\n\n"


PYTHON = sys.executable
