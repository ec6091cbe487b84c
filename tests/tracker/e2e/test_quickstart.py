"""docs/quickstart.md does what it says: its bash blocks, exactly as written and in order, run in a fresh directory
as one script (``set -euo pipefail``: a step that fails fails the test), as a new user runs them: a fresh virtualenv
into which ``pip install "$TRACKER" pytest-benchmark`` installs this checkout (about 20 s here; pip needs the package
index or a mirror of it for the dependencies). Then the outcome is checked: the phase is done and the commit carries
the ``Phase-Done:`` trailer ``tracker summary`` drafted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[3]
QUICKSTART = CHECKOUT / "docs" / "quickstart.md"
FENCE = re.compile(r"^(`{3,})bash\n(.*?)^\1$", re.S | re.M)
# What a reader is promised, each a command the blocks must run (a step left out fails here, before anything runs).
STEPS = (
    'pip install "$TRACKER" pytest-benchmark',
    "tracker new ",
    'test = "tests/test_parse.py::test_parse"',
    'bench = "tests/test_parse.py::test_parse_speed"',
    "--benchmark-json=../bench.json",
    "tracker ingest ../bench.json",
    "tracker verify",
    "tracker status",
    "tracker report",
    '"$(tracker summary)"',
)
# What the user's environment may hold that a new user's has not (this suite's own settings).
DROPPED = ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "TRACKER_COMMIT", "TRACKER_DIRTY")


def blocks() -> list[str]:
    return [body for _, body in FENCE.findall(QUICKSTART.read_text(encoding="utf-8"))]


def test_the_quickstart_is_short_and_has_every_step() -> None:
    assert len(QUICKSTART.read_text(encoding="utf-8").splitlines()) <= 80
    script = "\n".join(blocks())
    missing = [step for step in STEPS if step not in script]
    assert not missing, f"docs/quickstart.md lost a step: {missing}"


def test_the_quickstart_runs_as_written(tmp_path: Path) -> None:
    script = "set -euo pipefail\n" + "\n".join(blocks())
    env = {k: v for k, v in os.environ.items() if k not in DROPPED and not k.startswith(("COV_", "PYTEST_XDIST_"))}
    env.update(
        TRACKER=str(CHECKOUT),
        GIT_AUTHOR_NAME="Quick Start",
        GIT_AUTHOR_EMAIL="qs@example.com",
        GIT_COMMITTER_NAME="Quick Start",
        GIT_COMMITTER_EMAIL="qs@example.com",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",  # python3: this suite's Python
    )
    ran = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    said = ran.stdout[-6000:] + ran.stderr[-6000:]
    assert ran.returncode == 0, said
    demo = tmp_path / "demo"
    assert (tmp_path / ".venv/bin/tracker").is_file()  # the fresh virtualenv's, not this suite's
    assert re.search(r"P1\s+done\s+2/2", ran.stdout), said
    message = subprocess.run(
        ["git", "log", "-1", "--format=%B"], cwd=demo, capture_output=True, text=True, check=True
    ).stdout
    assert "Phase-Done: 0001/P1" in message and "bench/results/" in message, message
    assert "0001" in (tmp_path / "report.md").read_text(encoding="utf-8")
    untracked = subprocess.run(
        ["git", "status", "--porcelain"], cwd=demo, capture_output=True, text=True, check=True
    ).stdout
    assert ".tracker/evidence" not in untracked and "bench/results" not in untracked, untracked


@pytest.mark.parametrize("step", ["tracker ingest ../bench.json", "tracker verify"])
def test_a_step_left_out_is_caught(step: str) -> None:
    script = "\n".join(blocks()).replace(step, "true")
    assert [s for s in STEPS if s not in script]
