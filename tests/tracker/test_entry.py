"""The command line's plain-line reader (tracker.cli.plain): it reads a line as click does, from the commands' one
declaration, and a plain line's output and exit code are the typer CLI's, without importing typer (the point of it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import phase, plan_text

from tracker.cli.declared import ReportFormat
from tracker.cli.plain import read
from tracker.cli.spec import ColorWhen

GOOD = plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"') + phase("P2", 'manual = "Reviewed"'))
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


def run(main_name: str, argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    if main_name == "entry":
        from tracker.entry import main
    else:
        from tracker.cli.app import run_typer

        def main(argv: list[str]) -> None:  # every line through typer, the plain ones too
            sys.exit(run_typer(argv))

    capfd.readouterr()
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["status", "--json"],
        ["status", "0001"],
        ["status", "--json", "0001"],
        ["status", "9999"],
        ["status", "--json", "0002"],
        ["status", "1"],
        ["status", "1/P2"],
        ["status", "plans/0001-demo.md", "--json"],
        ["status", "README.md"],
        ["status", "--color=always"],
        ["--no-color", "status", "1"],
        ["status", "--color", "red"],
        ["status", "--no-color", "--color=auto"],
        ["--color=never", "status", "--no-color"],
    ],
)
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
    root = repo(
        {
            "plans/0001-demo.md": GOOD,
            "plans/0002-bad.md": plan_text("0002", phases='```phase\nid = "P1"\n```\n'),
            **TESTS,
        }
    )
    argv = ["--root", str(root), *args]
    fast = run("entry", argv, capfd)
    assert fast == run("cli", argv, capfd) and fast[0] == (0 if args[-1] == "0001/P1" else 2), fast


def test_root_after_the_command_is_the_same_as_before_it_on_both_paths(repo, capfd, tmp_path) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    before = run("cli", ["--root", str(root), "status"], capfd)
    for main_name in ("entry", "cli"):
        assert run(main_name, ["status", "--root", str(root)], capfd) == before
        assert run(main_name, ["status", f"--root={root}", "--json"], capfd) == run(
            "cli", ["--root", str(root), "status", "--json"], capfd
        )
        code, _, err = run(main_name, ["--root", str(root), "status", "--root", str(tmp_path)], capfd)
        assert (code, err) == (3, "tracker: error: --root given both before and after the command\n")


@pytest.mark.parametrize(
    "args", [["status"], ["--color=never", "status"], ["status", "--no-color", "--root", "{root}"]]
)
def test_fast_path_does_not_import_typer(repo, args: list[str]) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    argv = ["--root", str(root), *args] if "--root" not in args else [a.format(root=root) for a in args]
    code = (
        f"import sys\nfrom tracker.entry import main\nsys.argv = ['tracker', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "sys.stderr.write('typer imported' if 'typer' in sys.modules else 'typer not imported')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    assert proc.stderr.endswith("typer not imported") and proc.stdout.startswith("0001  Demo")


# --- reading a line: the plain reader against click, over every declared command ----------------------------------


def plain(argv: list[str]) -> tuple[str, dict, dict] | None:
    """(command, the app's options given before it, the command's values) as the plain-line reader reads ``argv``;
    None where it leaves the line to typer."""
    call = read(list(argv))
    return None if call is None else (call.command.name, call.before, call.values)


def test_plain_status_lines_are_read_as_typer_passes_them() -> None:
    assert plain(["status"]) == ("status", {}, {"plan": None, "json": False, "root": None, "color": None,
                                                "no_color": False})  # fmt: skip
    assert plain(["--root", "r", "status", "0001", "--json"]) == (
        "status", {"root": "r"}, {"plan": "0001", "json": True, "root": None, "color": None, "no_color": False}
    )  # fmt: skip
    _, before, values = plain(["--root=r", "--no-color", "status", "--json", "2", "--root", "s", "--color=never"])
    assert before == {"root": "r", "no_color": True}
    assert values == {"plan": "2", "json": True, "root": "s", "color": ColorWhen.never, "no_color": False}
    for args in (
        ["status", "--help"],
        ["status", "-h"],
        ["status", "a", "b"],
        ["status", "--json", "--json"],
        ["status", "-x"],
        [],
        ["--root"],
        ["status", "--", "0001"],
        ["status", "--root"],
        ["--json", "status"],
        ["status", "--color=blue"],
        ["status", "--no-color=1"],
        ["--version"],
        ["status", "--version"],
        ["statu"],
        ["hook", "install"],  # a group's command: typer's
        ["result", "new", "b"],
    ):
        assert plain(args) is None, args


def test_plain_lines_of_every_command_are_read() -> None:
    """Every top-level command declared has plain lines (none needs typer to run), read with the declared values."""
    from tracker.cli.declared import COMMANDS

    lines = {
        "status": ["status"],
        "verify": ["verify", "--force", "--pytest-arg", "-x", "0001/P1", "--pytest-arg=--lf"],
        "update": ["update", "--check", "0001"],
        "lint": ["lint", "--no-collect", "--json"],
        "next": ["next"],
        "new": ["new", "A title"],
        "schema": ["schema", "--results"],
        "signoff": ["signoff", "0001/P2", "--gate", "1", "--by", "me", "--why", "read it"],
        "ingest": ["ingest", "a.jsonl", "b.xml", "--host", "h", "--time", "2026-01-01T00:00:00Z"],
        "check": ["check", "--json"],
        "gc": ["gc", "--dry-run"],
        "summary": ["summary", "--against", "HEAD~2", "--write", "m"],
        "show": ["show", "0001/P1", "2"],
        "log": ["--no-color", "log", "1"],
        "report": ["report", "--milestone", "m", "--format", "html", "--out", "r.html"],
    }
    assert sorted(lines) == sorted(c.name for c in COMMANDS if c.group is None)
    for name, argv in lines.items():
        read_ = plain(argv)
        assert read_ is not None and read_[0] == name and read_ == click_values(argv), argv
    assert plain(lines["signoff"])[2]["gate"] == 1  # type: ignore[index]
    assert plain(lines["ingest"])[2]["files"] == [Path("a.jsonl"), Path("b.xml")]  # type: ignore[index]
    assert plain(lines["report"])[2]["fmt"] is ReportFormat.html  # type: ignore[index]
    assert plain(lines["verify"])[2]["pytest_arg"] == ["-x", "--lf"]  # type: ignore[index]


def click_parse(argv: list[str]) -> tuple[str, dict, dict] | None:
    """(command, the app's parameters, the command's) as click's own parser reads ``argv`` over the real command
    definitions (nothing is run); None when click refuses the line."""
    import warnings

    import click
    import typer
    import typer.main

    from tracker.cli.app import typer_app

    group = typer.main.get_command(typer_app())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # click 8.2+ deprecates protected_args
            ctx = group.make_context("tracker", list(argv))
            name, command, rest = group.resolve_command(ctx, [*ctx.protected_args, *ctx.args])
            sub = command.make_context(name, rest, parent=ctx)
    except (click.ClickException, click.exceptions.Exit, typer.Exit):
        return None
    return str(name), ctx.params, sub.params


def click_values(argv: list[str]) -> tuple[str, dict, dict] | None:
    """:func:`plain`'s triple as typer would pass it (click's values converted as typer converts them: a path, an
    enum; a repeatable parameter given nowhere as the declaration's default), else None."""
    from tracker.cli.declared import COMMANDS
    from tracker.cli.spec import shape

    parsed = click_parse(argv)
    if parsed is None:
        return None
    name, top, params = parsed
    if top.get("version") or isinstance(params, type(None)):
        return None
    [command] = [c for c in COMMANDS if c.name == name and c.group is None] or [None]
    if command is None:
        return None
    values = {}
    for key, param, annotation in command.params:
        kind, many = shape(annotation)
        value = params[key]
        if many:
            value = [kind(v) for v in value] if value else param.default if param.flag else []
        elif value is not None and kind is not bool:
            value = kind(value)
        values[key] = value
    before = {k: v for k, v in top.items() if k != "version" and v not in (None, False)}
    return name, before, values


def vocabulary(command: str) -> list[str]:
    """Words a line of ``command`` may hold: its options (alone and ``=``-joined), the app's, values of each kind,
    and words click and the reader must refuse or read alike."""
    from tracker.cli.declared import COMMANDS
    from tracker.cli.spec import APP_OPTIONS

    [declared] = [c for c in COMMANDS if c.name == command and c.group is None]
    flags = [*APP_OPTIONS, *(p.flag for _, p, _ in declared.params if p.flag)]
    return [
        command, *flags, *(f"{f}=v" for f in flags), "--color=never", "always", "never", "md", "html", "pdf", "1",
        "x1", "-1", "r", "0001", "0001/P1", "--", "-", "", "--help", "-h", "--version", "--jso", "é", "\udcff",
        "a=b", "-x", "status", "verify",
    ]  # fmt: skip


def lines() -> st.SearchStrategy[list[str]]:
    from tracker.cli.declared import COMMANDS

    names = sorted(c.name for c in COMMANDS if c.group is None)
    return st.sampled_from(names).flatmap(
        lambda name: st.tuples(st.lists(st.sampled_from(vocabulary(name)), max_size=7), st.integers(0, 7)).map(
            lambda drawn: [*drawn[0][: drawn[1]], name, *drawn[0][drawn[1] :]]
        )
    )


@given(lines())
@settings(max_examples=3000, deadline=None)
def test_the_plain_reader_reads_every_line_it_takes_as_click_does(argv: list[str]) -> None:
    """Every line the plain-line reader takes, typer takes with the same values, for every command (it may leave
    typer more)."""
    fast = plain(argv)
    if fast is not None:
        assert fast == click_values(argv), argv


@given(lines())
@settings(max_examples=30000, deadline=None)
@pytest.mark.slow
def test_the_plain_reader_reads_every_line_it_takes_as_click_does_deep(argv: list[str]) -> None:
    fast = plain(argv)
    if fast is not None:
        assert fast == click_values(argv), argv


def test_plain_verify_lines_do_take_the_fast_path() -> None:
    for argv in (
        ["verify"],
        ["verify", "--force"],
        ["--root", "r", "verify", "0001/P1", "--json", "--pytest-arg=-q"],
        ["verify", "--bench", "2", "--root", "r"],
        ["verify", "--bench", "--pytest-arg=-k=a b", "--root=r", "--pytest-arg", "--force"],  # the next word, as click
    ):
        assert plain(argv) is not None and plain(argv) == click_values(argv), argv


VERIFY_PLAN = plan_text(
    phases=phase("P1", 'test = "tests/test_a.py::test_a"') + phase("P2", 'test = "tests/test_b.py"')
)
VERIFY_TESTS = {
    "tests/test_a.py": "def test_a():\n    pass\n",
    "tests/test_b.py": "def test_b():\n    assert False, 'no'\n",
}


def normalized(result: tuple[int, str, str]) -> tuple[int, str, str]:
    """A verify's output without what differs from run to run: evidence file names, durations, pids."""
    import re

    def clean(text: str) -> str:
        text = re.sub(r"\d{8}T\d{12}Z-[\w-]+-verify-[0-9a-f]{6}\.json", "EVIDENCE.json", text)
        text = re.sub(r'"commit": "[0-9a-f]{40}"', '"commit": "C"', text)  # each repository's own commit (--json)
        text = re.sub(r'"time": "[0-9TZ:-]+"', '"time": "T"', text)
        return re.sub(r"\d+\.\d+s\b", "Ns", text)

    return result[0], clean(result[1]), clean(result[2])


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "--force"],
        ["verify", "0001/P1"],
        ["verify", "--json", "1/P1", "--force"],
        ["verify", "9999"],
        ["verify", "--pytest-arg=--collect-only"],
        ["verify", "--bench", "0001/P2"],
        ["verify", "--pytest-arg", "-q", "0001/P2", "--force"],
    ],
)
def test_verify_fast_path_matches_the_typer_cli(repo, capfd, args: list[str]) -> None:
    """Same output and exit code on both paths: the evidence each run records makes the next one's verdicts, so
    the typer run goes first on a fresh repository and the fast one on another, built the same."""
    outputs = []
    for main_name in ("cli", "entry"):
        root = repo({"plans/0001-demo.md": VERIFY_PLAN, **VERIFY_TESTS})
        argv = ["--root", str(root), *args]
        outputs.append(normalized(run(main_name, argv, capfd)))
        import shutil

        shutil.rmtree(root)
    assert outputs[0] == outputs[1]
    expected = {
        "9999": 3,
        "--pytest-arg=--collect-only": 3,
        "0001/P1": 0,
        "1/P1": 0,
    }  # verify takes a plan's number too (1/P1: 0001/P1)
    assert outputs[1][0] == expected.get(args[-1] if args[-1] != "--force" else args[-2], 1), outputs[1]


def test_verify_fast_path_does_not_import_typer(repo) -> None:
    root = repo({"plans/0001-demo.md": VERIFY_PLAN, **VERIFY_TESTS})
    code = (
        f"import sys\nfrom tracker.entry import main\nsys.argv = ['tracker', '--root', {str(root)!r}, 'verify', '0001/P1']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "sys.stderr.write('typer imported' if 'typer' in sys.modules else 'typer not imported')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr.endswith("typer not imported"), proc.stderr
    assert "met   0001/P1#1 tests/test_a.py::test_a" in proc.stdout


# --- show, log and summary through both readers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["show", "0001/P1"],
        ["show", "0001", "--json"],
        ["show", "1/P2", "--color=always"],
        ["show", "9999"],
        ["show", "0001/P9"],
        ["log", "0001/P1"],
        ["log", "--json", "1"],
        ["--no-color", "log", "0001"],
        ["log", "0001/P1", "--color", "red"],
        ["summary"],
        ["summary", "--json"],
        ["summary", "--against", "HEAD"],
        ["summary", "--against", "nosuchref"],
        ["summary", "--write", "MSG"],
    ],
)
def test_show_log_and_summary_fast_paths_match_the_typer_cli(repo, capfd, args: list[str]) -> None:
    """Same output, exit code and written file on both paths, on a repository with evidence the last commit lacks."""
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    from tracker.cli.app import run_typer

    assert run_typer(["--root", str(root), "verify"]) == 1  # P2's sign-off is missing; P1 passes
    outputs = []
    for main_name in ("cli", "entry"):
        argv = ["--root", str(root), *[str(root / a) if a == "MSG" else a for a in args]]
        (root / "MSG").write_text("subject\n", encoding="utf-8")
        outputs.append((*run(main_name, argv, capfd), (root / "MSG").read_text(encoding="utf-8")))
    assert outputs[0] == outputs[1]
    code = outputs[1][0]
    assert code == (3 if args[-1] in ("9999", "0001/P9", "red", "nosuchref") else 0), outputs[1]


@pytest.mark.parametrize("args", [["show", "0001/P1"], ["log", "0001"], ["summary"]])
def test_show_log_and_summary_fast_paths_do_not_import_typer(repo, args: list[str]) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    argv = ["--root", str(root), *args]
    code = (
        f"import sys\nfrom tracker.entry import main\nsys.argv = ['tracker', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "sys.stderr.write('typer imported' if 'typer' in sys.modules else 'typer not imported')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr.endswith("typer not imported") and proc.stdout, proc.stderr
