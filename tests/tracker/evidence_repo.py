"""A real temporary git repository with plans, code and tests, driven through the command functions."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path
from typing import Any

from tracker.core.model import PhaseStatus

CHECKOUT = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` (fixed identity so commits work on any machine)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


def make_repo(root: Path, files: dict[str, str]) -> Path:
    """Create ``files`` under ``root``, ``git init`` and commit them."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "initial")
    return root


def commit_all(root: Path, message: str) -> None:
    """Commit everything (the repo is a test fixture we own entirely)."""
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)


def call(module: str, root: Path, *args: Any, **kw: Any) -> tuple[int, str]:
    """Run ``tracker.commands.<module>.run(root, ...)`` and capture (exit code, output)."""
    import importlib

    out = io.StringIO()
    code = importlib.import_module(f"tracker.commands.{module}").run(root, *args, out=out, **kw)
    return code, out.getvalue()


def statuses(root: Path) -> dict[str, PhaseStatus]:
    """{PLAN/PHASE: PhaseStatus} as ``tracker status`` derives them."""
    from tracker.plans.load import load_plans
    from tracker.store.derive import derive

    _, plans = load_plans(root)
    return derive(root, plans)


def phase_block(pid: str, paths: list[str], gates: list[str], depends: list[str] | None = None) -> str:
    """A ``phase`` fenced block with the given TOML gate bodies."""
    lines = [f'id = "{pid}"', f'title = "Phase {pid}"', f"paths = {paths!r}".replace("'", '"')]
    if depends:
        lines.append(f"depends = {depends!r}".replace("'", '"'))
    for body in gates:
        lines += ["", "[[gate]]", body]
    return "```phase\n" + "\n".join(lines) + "\n```\n"


def plan_text(pid: str, phases: list[str]) -> str:
    """A whole plan file."""
    return f'# Plan {pid}\n\n```plan\nid = "{pid}"\ntitle = "Plan {pid}"\n```\n\n' + "\n".join(phases)
