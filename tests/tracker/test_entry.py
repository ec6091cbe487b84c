"""The console script's fast path for `tracker status`: same output and exit code as the typer CLI, and no
typer import (the point of it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text

from tracker.entry import status_args

GOOD = plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"') + phase("P2", 'manual = "Reviewed"'))
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


def test_status_args_takes_only_plain_status_lines() -> None:
    assert status_args(["status"]) == (None, None, False)
    assert status_args(["--root", "r", "status", "0001", "--json"]) == (Path("r"), "0001", True)
    assert status_args(["--root=r", "status", "--json", "0001"]) == (Path("r"), "0001", True)
    for args in (["status", "--help"], ["status", "a", "b"], ["status", "--json", "--json"], ["status", "-x"],
                 ["verify"], [], ["--root"], ["--root=", "status"], ["status", "--", "0001"]):
        assert status_args(args) is None, args


def run(main_name: str, argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    if main_name == "entry":
        from tracker.entry import main
    else:
        from tracker.cli import main
    capfd.readouterr()
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["status", "0001"], ["status", "--json", "0001"],
                                  ["status", "9999"], ["status", "--json", "0002"], ["status", "1"], ["status", "1/P2"],
                                  ["status", "plans/0001-demo.md", "--json"], ["status", "README.md"]])
def test_fast_path_matches_the_typer_cli(repo, capfd, args: list[str]) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    argv = ["--root", str(root), *args]
    fast = run("entry", argv, capfd)
    assert fast == run("cli", argv, capfd)
    assert fast[0] == (3 if args[-1] in ("9999", "0002", "README.md") else 0), fast


def test_fast_path_reports_invalid_plans_like_the_cli(repo, capfd) -> None:
    root = repo({"plans/0001-demo.md": plan_text(phases='```phase\nid = "P1"\n```\n')})
    argv = ["--root", str(root), "status"]
    fast = run("entry", argv, capfd)
    assert fast == run("cli", argv, capfd) and fast[0] == 2 and "problem(s) in plan files" in fast[2]


@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["status", "2"], ["status", "0001/P1"]])
def test_fast_path_shows_valid_plans_beside_invalid_ones_like_the_cli(repo, capfd, args: list[str]) -> None:
    root = repo({"plans/0001-demo.md": GOOD, "plans/0002-bad.md": plan_text("0002", phases='```phase\nid = "P1"\n```\n'), **TESTS})
    argv = ["--root", str(root), *args]
    fast = run("entry", argv, capfd)
    assert fast == run("cli", argv, capfd) and fast[0] == (0 if args[-1] == "0001/P1" else 2), fast


def test_fast_path_does_not_import_typer(repo) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    code = ("import sys\nfrom tracker.entry import main\nsys.argv = ['tracker', '--root', sys.argv[1], 'status']\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "sys.stderr.write('typer imported' if 'typer' in sys.modules else 'typer not imported')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    assert proc.stderr.endswith("typer not imported") and proc.stdout.startswith("0001  Demo")
