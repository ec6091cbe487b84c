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
    assert status_args(["status"]) == (None, None, False, "auto")
    assert status_args(["--root", "r", "status", "0001", "--json"]) == (Path("r"), "0001", True, "auto")
    assert status_args(["--root=r", "status", "--json", "0001"]) == (Path("r"), "0001", True, "auto")
    assert status_args(["status", "2", "--root", "r"]) == (Path("r"), "2", False, "auto")  # --root after the command too
    assert status_args(["--color", "always", "status"]) == (None, None, False, "always")
    assert status_args(["status", "--color=never", "--json"]) == (None, None, True, "never")
    assert status_args(["--no-color", "status"]) == (None, None, False, "never")
    for args in (["status", "--help"], ["status", "-h"], ["status", "a", "b"], ["status", "--json", "--json"], ["status", "-x"],
                 ["verify"], [], ["--root"], ["--root=", "status"], ["status", "--", "0001"], ["status", "--root"],
                 ["--root", "a", "status", "--root", "a"], ["--json", "status"], ["status", "--color=blue"],
                 ["--no-color", "status", "--color", "never"], ["status", "--no-color=1"], ["--version"], ["status", "--version"]):
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
                                  ["status", "plans/0001-demo.md", "--json"], ["status", "README.md"],
                                  ["status", "--color=always"], ["--no-color", "status", "1"], ["status", "--color", "red"],
                                  ["status", "--no-color", "--color=auto"], ["--color=never", "status", "--no-color"]])
def test_fast_path_matches_the_typer_cli(repo, capfd, args: list[str]) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    argv = ["--root", str(root), *args]
    fast = run("entry", argv, capfd)
    assert fast == run("cli", argv, capfd)
    assert fast[0] == (3 if args[-1] in ("9999", "0002", "README.md", "red", "--color=auto", "--no-color") else 0), fast


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


def test_root_after_the_command_is_the_same_as_before_it_on_both_paths(repo, capfd, tmp_path) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    before = run("cli", ["--root", str(root), "status"], capfd)
    for main_name in ("entry", "cli"):
        assert run(main_name, ["status", "--root", str(root)], capfd) == before
        assert run(main_name, ["status", f"--root={root}", "--json"], capfd) == run("cli", ["--root", str(root), "status", "--json"], capfd)
        code, _, err = run(main_name, ["--root", str(root), "status", "--root", str(tmp_path)], capfd)
        assert (code, err) == (3, "tracker: error: --root given both before and after the command\n")


@pytest.mark.parametrize("args", [["status"], ["--color=never", "status"], ["status", "--no-color", "--root", "{root}"]])
def test_fast_path_does_not_import_typer(repo, args: list[str]) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    argv = ["--root", str(root), *args] if "--root" not in args else [a.format(root=root) for a in args]
    code = (f"import sys\nfrom tracker.entry import main\nsys.argv = ['tracker', *{argv!r}]\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "sys.stderr.write('typer imported' if 'typer' in sys.modules else 'typer not imported')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    assert proc.stderr.endswith("typer not imported") and proc.stdout.startswith("0001  Demo")
