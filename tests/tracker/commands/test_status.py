"""``tracker status`` (tracker/commands/status.py): selecting plans and phases, invalid and unreadable plan files, dependencies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text

GOOD = plan_text(
    phases=phase("P1", 'test = "tests/test_a.py::test_a"', 'manual = "Reviewed"')
    + phase("P2", 'test = "tests/test_a.py"', depends='"P1"')
)


SECOND = plan_text("0002", phases=phase("P1", 'manual = "Looked"'), title="Second")


BROKEN = plan_text("0003", phases='```phase\nid = "P1"\n```\n', title="Broken")


TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


HEAD_1 = "0001  Demo  (plans/0001-demo.md)"


HEAD_2 = "0002  Second  (plans/0002-second.md)"


@pytest.fixture
def two(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": SECOND, **TESTS})


@pytest.fixture
def mixed(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": SECOND, "plans/0003-broken.md": BROKEN, **TESTS})


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
    for spec in (
        "0002-second.md",
        "./0002-second.md",
        "../plans/0002-second.md",
        str(two / "plans/0002-second.md"),
        "plans/0002-second.md",
    ):
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


@pytest.mark.parametrize(("spec", "err"), [
    ("0001/P\x1b[2J\x1b[31mX", r"unknown phase 'P\x1b[2J\x1b[31mX' in plan 0001 (its phases: P1, P2)"),
    ("\x1b]0;pwned\x07", r"unknown plan '\x1b]0;pwned\x07' (known plans: 0001, 0002)"),
    ("1/P1\nPhase-Done: 0002/P1", r"unknown phase 'P1\nPhase-Done: 0002/P1' in plan 0001 (its phases: P1, P2)"),
    ("a\rb\u2028c\u202ed", r"unknown plan 'a\rb\u2028c\u202ed' (known plans: 0001, 0002)"),
    ("x\n\x1b[1m.md", r"'x\n\x1b[1m.md': not a plan file of this repository (plans/NNNN-slug.md in {root})"),
    ("0001/P\x9b2J", r"unknown phase 'P\x9b2J' in plan 0001 (its phases: P1, P2)"),
])  # fmt: skip
def test_a_selector_with_control_characters_is_shown_escaped(
    two: Path, cli: Callable[..., Any], spec: str, err: str
) -> None:
    """What a person typed goes back to the terminal as one line of printable text: an escape sequence in an
    unknown selector was written raw (it cleared the screen, set the window title), a newline forged a line."""
    r = cli(two, "status", spec)
    assert (r.code, r.out, r.err) == (3, "", f"tracker: error: {err.format(root=two)}\n")
    assert r.err.isascii() and r.err[:-1].isprintable()


def test_status_shows_the_valid_plans_and_a_line_per_invalid_file(mixed, cli) -> None:
    r = cli(mixed, "status")
    lines = r.out.splitlines()
    assert r.code == 2 and lines[0] == HEAD_1 and HEAD_2 in lines
    assert lines[-2:] == [
        "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`",
        "1 blocked, 2 planned of 3 phases; 1 invalid plan file",
    ]
    assert r.err == (
        "plans/0003-broken.md:8: phase P1: missing required key 'title'\n"
        "tracker: error: 1 problem(s) in plan files (see `tracker lint`)\n"
    )


def test_status_json_with_an_invalid_plan_is_a_document_with_invalid(mixed, cli) -> None:
    r = cli(mixed, "status", "--json")
    data = json.loads(r.out)
    assert r.code == 2 and [p["id"] for p in data["plans"]] == ["0001", "0002"]
    assert data["invalid"] == [
        {
            "path": "plans/0003-broken.md",
            "id": "0003",
            "problems": ["plans/0003-broken.md:8: phase P1: missing required key 'title'"],
        }
    ]


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
    assert (
        r.code == 8
        and r.out.splitlines()[-2] == "?  invalid plan file (plans/0004-latin1.md): 1 problem(s), see `tracker lint`"
    )
    assert HEAD_1 in r.out and HEAD_2 in r.out
    assert r.err == (
        "plans/0003-broken.md:8: phase P1: missing required key 'title'\n"
        "tracker: error: plans/0004-latin1.md: not UTF-8 text (byte 5: invalid continuation byte)\n"
    )
    data = json.loads(cli(mixed, "status", "--json").out)
    assert [i["path"] for i in data["invalid"]] == ["plans/0003-broken.md", "plans/0004-latin1.md"]


def test_only_invalid_plans_are_their_lines_not_no_plans_yet(repo, cli) -> None:
    root = repo({"plans/0003-broken.md": BROKEN})
    r = cli(root, "status")
    assert (r.code, r.out) == (2, "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`\n")


def test_a_done_phase_whose_dependency_is_not_done_is_marked(repo, cli) -> None:
    text = plan_text(
        phases=phase("P1", 'manual = "Checked"', paths='"src/**"') + phase("P2", 'manual = "Read"', depends='"P1"')
    )
    root = repo({"plans/0001-demo.md": text, "src/a.py": "x = 1\n"})
    assert cli(root, "signoff", "0001/P2", "--gate", "1", "--by", "Ada", "--why", "read").code == 0
    lines = cli(root, "status").out.splitlines()
    assert lines[2].startswith("  P2  done*  ") and lines[2].endswith("— depends on 0001/P1 (planned)"), lines
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "Ada", "--why", "checked").code == 0
    lines = cli(root, "status").out.splitlines()
    assert lines[1].startswith("  P1  done ") and lines[2].startswith("  P2  done ") and "depends" not in "".join(lines)
    (root / "src/a.py").write_text("x = 2\n")  # P1 is stale now
    r = cli(root, "status")
    assert r.out.splitlines()[2].startswith("  P2  done*  ") and r.out.splitlines()[2].endswith(
        "— depends on 0001/P1 (stale)"
    ), r.out
    phases = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"]
    assert [ph["dependencies_not_done"] for ph in phases] == [[], [{"id": "0001/P1", "status": "stale"}]]
    assert cli(root, "status", "1/P2").out.splitlines()[1].startswith("  P2  done*  ")


def test_a_dependency_into_an_invalid_plan_has_no_status(repo, cli) -> None:
    text = plan_text("0002", phases=phase("P1", 'manual = "Read"', depends='"0001/P1"'), title="Second")
    root = repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": text, **TESTS})
    assert cli(root, "signoff", "0002/P1", "--gate", "1", "--by", "Ada", "--why", "read").code == 0
    (root / "plans/0001-demo.md").write_text(BROKEN.replace('id = "0003"', 'id = "0001"'))
    r = cli(root, "status")
    assert (
        r.code == 2
        and "  P1  done*  " in r.out
        and r.out.splitlines()[2].endswith("— depends on 0001/P1 (no status: its plan file is invalid)")
    ), r.out
    data = json.loads(cli(root, "status", "--json").out)
    assert data["plans"][0]["phases"][0]["dependencies_not_done"] == [{"id": "0001/P1", "status": None}]
