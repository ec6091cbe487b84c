"""Issue 11, the plan side: -m expressions, globs, deep TOML, plan files that are not what they seem,
test ids outside the repository, and `tracker new` titles. Through the real CLI, real pytest, real files."""

from __future__ import annotations

import json
import subprocess
import time
import sys
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text

from tracker.commands.common import pytest_command, pytest_env

# --- item 7: -m expressions --------------------------------------------------------------------------------

MARKED = {"tests/test_m.py": "import pytest\n\n@getattr(pytest.mark, 'a-b')\ndef test_ab(): pass\n\ndef test_plain(): pass\n"}


def record(root: Path) -> None:
    """A plain `pytest --tracker-record` run in ``root`` (as a developer runs it)."""
    cmd = pytest_command() + ["-q", "-p", "no:cacheprovider", f"--rootdir={root}", "tests", "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_marker_pytest_accepts_is_evaluated_as_pytest_does(repo, cli) -> None:
    # `a-b` is one marker name for pytest; status, update and check used to die on it with ValueError.
    text = plan_text(phases=phase("P1", 'test = "tests/test_m.py"\nmarker = "a-b"'))
    root = repo({"plans/0001-demo.md": text, **MARKED})
    record(root)
    r = cli(root, "status", "--json")
    assert (r.code, r.err) == (0, "")
    [p1] = json.loads(r.out)["plans"][0]["phases"]
    assert (p1["status"], p1["gates"][0]["reason"]) == ("done", "1 passed")  # test_plain is not marked a-b
    assert cli(root, "update").code == 0
    assert cli(root, "check").code == 0
    assert cli(root, "lint").code == 0


def test_a_marker_pytest_accepts_runs_in_verify(repo, cli) -> None:
    # verify used to end in pytest INTERNALERROR (exit 6): the plugin's selection raised ValueError.
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_m.py"\nmarker = "a-b"')), **MARKED})
    r = cli(root, "verify")
    assert r.code == 0, r.out + r.err
    assert "0001/P1#1 tests/test_m.py: 1 passed" in r.out


BAD_MARKER = plan_text(phases=phase("P1", 'test = "tests/test_m.py"', 'test = "tests/test_m.py"\nmarker = "a and"'))
BAD_MARKER_PROBLEM = (
    "plans/0001-demo.md:15: phase P1 gate 2: invalid -m expression 'a and': column 6: "
    "expected not or left parenthesis or identifier; got end of input"
)


@pytest.mark.parametrize("command", [["status"], ["update"], ["check"], ["verify"], ["next"], ["gc", "--dry-run"]])
def test_an_invalid_marker_is_a_plan_problem_for_every_command(repo, cli, command: list[str]) -> None:
    root = repo({"plans/0001-demo.md": BAD_MARKER, **MARKED})
    r = cli(root, *command)
    assert (r.code, r.err) == (2, BAD_MARKER_PROBLEM + "\ntracker: error: 1 problem(s) in plan files (see `tracker lint`)\n")


def test_lint_names_an_invalid_marker_with_its_line(repo, cli) -> None:
    root = repo({"plans/0001-demo.md": BAD_MARKER, **MARKED})
    for args in (["lint"], ["lint", "--no-collect"]):
        r = cli(root, *args)
        assert (r.code, r.out) == (2, BAD_MARKER_PROBLEM + "\n1 problem(s) in 1 file(s)\n")


def test_an_invalid_marker_reaching_evaluation_is_an_unmet_gate() -> None:
    # Plans are validated first; the API still never raises on one (a plan built in code, an old cache).
    from tracker.evidence import Store
    from tracker.model import Phase, Plan, TestGate
    from tracker.testgate import TestIndex

    gate = TestGate("tests/test_m.py", "a and")
    verdict, ever = TestIndex(Store([], [], [])).verdict("0001/P1#1", gate)
    assert (verdict.met, verdict.failed, ever) == (False, False, False)
    assert verdict.reason.startswith("invalid -m expression 'a and': column 6")
    assert Plan("0001", "t", "plans/0001-x.md", phases=(Phase("P1", "t", gates=(gate,)),))


# --- item 8: paths globs -----------------------------------------------------------------------------------


def test_a_pathological_glob_costs_status_no_time(repo, cli) -> None:
    # `*a*a*...*b` against a 40-character name took over a minute (regex backtracking) in status/update/check.
    glob = "*a" * 16 + "*b"
    text = plan_text(phases=phase("P1", 'test = "tests/test_a.py"', paths=f'"{glob}", "src/**"'))
    root = repo({"plans/0001-demo.md": text, "tests/test_a.py": "def test_a(): pass\n", "a" * 40: "x\n", "src/x.py": "1\n"})
    assert cli(root, "verify").code == 0
    start = time.perf_counter()
    r = cli(root, "status")
    assert (r.code, r.err) == (0, "") and " done " in r.out
    (root / "src/x.py").write_text("2\n")
    assert " stale " in cli(root, "status").out
    assert time.perf_counter() - start < 5


def test_bad_globs_are_plan_problems_at_their_line(repo, cli) -> None:
    text = plan_text(phases=phase("P1", 'manual = "ok"', paths='"src/**", "/etc/**"') + phase("P2", 'manual = "ok"', paths='"../up/*.py"') + phase("P3", 'manual = "ok"', paths='"src/[ab.py"'))
    root = repo({"plans/0001-demo.md": text})
    expected = [
        "plans/0001-demo.md:11: phase P1: glob '/etc/**' is absolute: globs are relative to the repository root",
        "plans/0001-demo.md:19: phase P2: glob '../up/*.py' has a '.' or '..' segment: globs are relative to the repository root and stay inside it",
        "plans/0001-demo.md:27: phase P3: glob 'src/[ab.py': unterminated [ at column 5 (write [[] for a literal '[')",
    ]
    r = cli(root, "lint")
    assert (r.code, r.out.splitlines()) == (2, [*expected, "3 problem(s) in 1 file(s)"])
    for command in ("status", "update", "check"):
        r = cli(root, command)
        assert (r.code, r.err.splitlines()[:-1]) == (2, expected), command
