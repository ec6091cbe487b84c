"""The CLI as a new user meets it (issue 12): status selects what it is given and shows valid plans next to
invalid ones, colour, command-line conventions, --json everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text

GOOD = plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"', 'manual = "Reviewed"') + phase("P2", 'test = "tests/test_a.py"', depends='"P1"'))
SECOND = plan_text("0002", phases=phase("P1", 'manual = "Looked"'), title="Second")
BROKEN = plan_text("0003", phases='```phase\nid = "P1"\n```\n', title="Broken")
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}
HEAD_1 = "0001  Demo  (plans/0001-demo.md)"
HEAD_2 = "0002  Second  (plans/0002-second.md)"


@pytest.fixture
def two(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": SECOND, **TESTS})


# --- status PLAN and PLAN/PHASE select what they name (issue 12 items 5, 11; CLI conventions) -----------------


@pytest.mark.parametrize("spec", ["0002", "2", "02", "plans/0002-second.md"])
def test_status_of_a_plan_shows_only_that_plan(two, cli, spec: str) -> None:
    r = cli(two, "status", spec)
    assert r.code == 0 and r.out.splitlines()[0] == HEAD_2 and len(r.out.splitlines()) == 2, r.out
    data = json.loads(cli(two, "status", spec, "--json").out)
    assert [p["id"] for p in data["plans"]] == ["0002"] and data["invalid"] == []


def test_status_of_a_phase_shows_that_phase_s_line(two, cli) -> None:
    for spec in ("0001/P2", "1/P2"):
        lines = cli(two, "status", spec).out.splitlines()
        assert lines[0] == HEAD_1 and len(lines) == 2 and lines[1].startswith("  P2  blocked"), lines
    data = json.loads(cli(two, "status", "1/P2", "--json").out)
    assert [(p["id"], [ph["id"] for ph in p["phases"]]) for p in data["plans"]] == [("0001", ["P2"])]


def test_status_accepts_a_plan_file_path_from_the_current_directory_or_the_root(two, cli, monkeypatch) -> None:
    monkeypatch.chdir(two / "plans")
    for spec in ("0002-second.md", "./0002-second.md", "../plans/0002-second.md", str(two / "plans/0002-second.md"), "plans/0002-second.md"):
        assert cli(two, "status", spec).out.splitlines()[0] == HEAD_2, spec


@pytest.mark.parametrize(("spec", "err"), [
    ("9", "unknown plan '0009' (known plans: 0001, 0002)"),
    ("1/P9", "unknown phase 'P9' in plan 0001 (its phases: P1, P2)"),
    ("plans/0009-none.md", "plans/0009-none.md: not a plan file of this repository (plans/NNNN-slug.md in {root})"),
    ("README.md", "README.md: not a plan file of this repository (plans/NNNN-slug.md in {root})"),
    ("123456", "unknown plan '123456' (known plans: 0001, 0002)"),
    ("9" * 5000, "unknown plan '" + "9" * 5000 + "' (known plans: 0001, 0002)"),
])  # fmt: skip
def test_status_of_what_does_not_exist_is_a_usage_error(two, cli, spec: str, err: str) -> None:
    (two / "README.md").write_text("# readme\n")
    r = cli(two, "status", spec)
    assert (r.code, r.out, r.err) == (3, "", f"tracker: error: {err.format(root=two)}\n")


# --- one invalid plan does not hide the others (issue 12 item 11) -------------------------------------------------


@pytest.fixture
def mixed(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": SECOND, "plans/0003-broken.md": BROKEN, **TESTS})


def test_status_shows_the_valid_plans_and_a_line_per_invalid_file(mixed, cli) -> None:
    r = cli(mixed, "status")
    lines = r.out.splitlines()
    assert r.code == 2 and lines[0] == HEAD_1 and HEAD_2 in lines
    assert lines[-1] == "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`"
    assert r.err == ("plans/0003-broken.md:8: phase P1: missing required key 'title'\n"
                     "tracker: error: 1 problem(s) in plan files (see `tracker lint`)\n")


def test_status_json_with_an_invalid_plan_is_a_document_with_invalid(mixed, cli) -> None:
    r = cli(mixed, "status", "--json")
    data = json.loads(r.out)
    assert r.code == 2 and [p["id"] for p in data["plans"]] == ["0001", "0002"]
    assert data["invalid"] == [{"path": "plans/0003-broken.md", "id": "0003", "problems": ["plans/0003-broken.md:8: phase P1: missing required key 'title'"]}]


def test_status_of_a_valid_plan_beside_an_invalid_one_is_ok_and_of_the_invalid_one_its_error(mixed, cli) -> None:
    r = cli(mixed, "status", "1")
    assert (r.code, r.err, r.out.splitlines()[0]) == (0, "", HEAD_1)
    r = cli(mixed, "status", "3")
    assert (r.code, r.out) == (2, "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`\n")
    assert r.err.endswith("tracker: error: 1 problem(s) in plan files (see `tracker lint`)\n")
    assert cli(mixed, "status", "plans/0003-broken.md", "--json").code == 2


def test_an_unreadable_plan_file_is_a_line_and_exit_8_with_the_other_problems_said(mixed, cli) -> None:
    (mixed / "plans/0004-latin1.md").write_bytes(b"# Caf\xe9\n")
    r = cli(mixed, "status")
    assert r.code == 8 and r.out.splitlines()[-1] == "?  invalid plan file (plans/0004-latin1.md): 1 problem(s), see `tracker lint`"
    assert HEAD_1 in r.out and HEAD_2 in r.out
    assert r.err == ("plans/0003-broken.md:8: phase P1: missing required key 'title'\n"
                     "tracker: error: plans/0004-latin1.md: not UTF-8 text (byte 5: invalid continuation byte)\n")
    data = json.loads(cli(mixed, "status", "--json").out)
    assert [i["path"] for i in data["invalid"]] == ["plans/0003-broken.md", "plans/0004-latin1.md"]


def test_only_invalid_plans_are_their_lines_not_no_plans_yet(repo, cli) -> None:
    root = repo({"plans/0003-broken.md": BROKEN})
    r = cli(root, "status")
    assert (r.code, r.out) == (2, "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`\n")


# --- colour: NO_COLOR, TERM=dumb, --color/--no-color (issue 12 item 3) ---------------------------------------------


def _status_on_a_terminal(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """``tracker status`` run by the console script with its stdout on a pseudo-terminal; what it printed."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | {"TERM": "xterm"} | (env or {})
    with subprocess.Popen([sys.executable, "-m", "tracker", *args], cwd=root, stdout=follower, stderr=subprocess.DEVNULL, env=environ) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait()
    os.close(leader)
    return b"".join(chunks).decode()


@pytest.mark.parametrize(("args", "env", "colored"), [
    (["status"], {}, True),
    (["status"], {"NO_COLOR": "1"}, False),
    (["status"], {"NO_COLOR": ""}, True),  # no-color.org: set and not empty
    (["status"], {"TERM": "dumb"}, False),
    (["--no-color", "status"], {}, False),
    (["status", "--no-color"], {}, False),
    (["--color=never", "status"], {}, False),
    (["status", "--color", "always"], {"NO_COLOR": "1"}, True),
    (["--color=auto", "status"], {"TERM": "dumb"}, False),
])  # fmt: skip
def test_colour_on_a_terminal_honours_no_color_term_dumb_and_the_options(two, args: list[str], env: dict[str, str], colored: bool) -> None:
    out = _status_on_a_terminal(two, *args, env=env)
    assert HEAD_1 in out and ("\x1b[" in out) == colored, out


@pytest.mark.parametrize("args", [["--color=always", "status"], ["status", "--color", "always"]])
def test_color_always_colours_a_pipe_too(two, cli, args: list[str]) -> None:
    assert "\x1b[2mplanned" in cli(two, *args).out
    assert "\x1b[" not in cli(two, "status").out and "\x1b[" not in cli(two, "--color=always", "status", "--json").out


def test_color_options_that_contradict_are_usage_errors(two, cli) -> None:
    r = cli(two, "--no-color", "status", "--color=always")
    assert (r.code, r.err) == (3, "tracker: error: --color/--no-color given both before and after the command\n")
    r = cli(two, "status", "--color=always", "--no-color")
    assert (r.code, r.err) == (3, "tracker: error: give one of --color and --no-color\n")
    r = cli(two, "--color=blue", "status")
    assert r.code == 3 and "'blue' is not one of 'auto', 'always', 'never'" in r.err


def test_a_mistyped_command_is_suggested_once(two, cli) -> None:
    r = cli(two, "statu")
    assert r.code == 3 and r.err.count("Did you mean 'status'?") == 1, r.err
