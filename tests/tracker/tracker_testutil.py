"""Helpers for the tracker tests: real git repositories and plan text builders.

A plain module, not conftest.py: with several conftest.py files in the tree, ``from conftest import``
would find whichever was imported last.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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


def plan_text(plan_id: str = "0001", phases: str = "", title: str = "Demo") -> str:
    """A plan file's text with the given phase blocks appended."""
    return f'# {title}\n\n```plan\nid = "{plan_id}"\ntitle = "{title}"\n```\n\n{phases}'


def phase(pid: str, *gates: str, depends: str = "", paths: str = "") -> str:
    """A phase block; ``gates`` are TOML bodies of [[gate]] tables."""
    head = f'```phase\nid = "{pid}"\ntitle = "Phase {pid}"\n'
    head += f"depends = [{depends}]\n" if depends else ""
    head += f"paths = [{paths}]\n" if paths else ""
    return head + "".join(f"[[gate]]\n{g}\n" for g in gates) + "```\n\n"
