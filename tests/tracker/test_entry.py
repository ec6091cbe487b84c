"""The console script's fast paths for `tracker status` and `tracker verify`: same output and exit code as the
typer CLI, and no typer import (the point of them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import phase, plan_text

from tracker.cli import PhaseLine, SummaryLine, VerifyLine, phase_args, status_args, summary_args, verify_args

GOOD = plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"') + phase("P2", 'manual = "Reviewed"'))
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


def test_status_args_takes_only_plain_status_lines() -> None:
    assert status_args(["status"]) == (None, None, False, "auto")
    assert status_args(["--root", "r", "status", "0001", "--json"]) == (Path("r"), "0001", True, "auto")
    assert status_args(["--root=r", "status", "--json", "0001"]) == (Path("r"), "0001", True, "auto")
    assert status_args(["status", "2", "--root", "r"]) == (
        Path("r"),
        "2",
        False,
        "auto",
    )  # --root after the command too
    assert status_args(["--color", "always", "status"]) == (None, None, False, "always")
    assert status_args(["status", "--color=never", "--json"]) == (None, None, True, "never")
    assert status_args(["--no-color", "status"]) == (None, None, False, "never")
    for args in (
        ["status", "--help"],
        ["status", "-h"],
        ["status", "a", "b"],
        ["status", "--json", "--json"],
        ["status", "-x"],
        ["verify"],
        [],
        ["--root"],
        ["--root=", "status"],
        ["status", "--", "0001"],
        ["status", "--root"],
        ["--root", "a", "status", "--root", "a"],
        ["--json", "status"],
        ["status", "--color=blue"],
        ["--no-color", "status", "--color", "never"],
        ["status", "--no-color=1"],
        ["--version"],
        ["status", "--version"],
    ):
        assert status_args(args) is None, args


def run(main_name: str, argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    if main_name == "entry":
        from tracker.entry import main
    else:
        from tracker.cli import run_typer

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


# --- tracker verify without typer ---------------------------------------------------------------------------------


def test_verify_args_takes_only_plain_verify_lines() -> None:
    assert verify_args(["verify"]) == VerifyLine(None, [], [], False, False, False)
    assert verify_args(
        ["--root", "r", "verify", "0001", "--force", "--pytest-arg", "-x", "2/P1", "--json"]
    ) == VerifyLine(Path("r"), ["0001", "2/P1"], ["-x"], False, True, True)
    assert verify_args(
        ["verify", "--bench", "--pytest-arg=-k=a b", "--root=r", "--pytest-arg", "--force"]
    ) == VerifyLine(
        Path("r"), [], ["-k=a b", "--force"], True, False, False
    )  # --pytest-arg takes the next argument, as click does
    for args in (
        ["verify", "--help"],
        ["verify", "-h"],
        ["verify", "--force", "--force"],
        ["verify", "--"],
        ["verify", "-x"],
        ["verify", ""],
        ["verify", "--pytest-arg"],
        ["verify", "--root"],
        ["--root=", "verify"],
        ["--root", "a", "verify", "--root", "b"],
        ["--pytest-arg", "x", "verify"],
        ["--force", "verify"],
        ["--no-color", "verify"],
        ["--color", "never", "verify"],
        ["verify", "--force=1"],
        ["verify", "--version"],
        ["status"],
        [],
        ["lint"],
        ["verify", "-"],
    ):
        assert verify_args(args) is None, args


def click_parse(argv: list[str]) -> tuple[str, dict, dict] | None:
    """(command, the app's parameters, the command's) as click's own parser reads ``argv`` over the real command
    definitions (nothing is run); None when click refuses the line."""
    import warnings

    import click
    import typer
    import typer.main

    from tracker.cli import typer_app

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


def typer_verify_line(argv: list[str]) -> VerifyLine | None:
    """What the typer CLI parses ``argv`` into when it is a verify command that would run, else None: click's own
    parser over the real command definitions (nothing is run)."""
    parsed = click_parse(argv)
    if parsed is None:
        return None
    name, top, params = parsed
    if name != "verify" or (top["root"] is not None and params["root"] is not None):
        return None  # another command, or --root given twice (verify's UsageError, exit 3)
    assert top["color"] is None and not top["no_color"], "the fast path takes no colour option"
    root = params["root"] if params["root"] is not None else top["root"]
    return VerifyLine(
        None if root is None else Path(root),
        list(params["targets"] or []),
        list(params["pytest_arg"] or []),
        params["bench"],
        params["force"],
        params["json"],
    )


WORDS = [
    "verify",
    "--root",
    "--root=r",
    "r",
    "0001",
    "0001/P1",
    "--pytest-arg",
    "--pytest-arg=-x",
    "--pytest-arg=",
    "-x",
    "--force",
    "--bench",
    "--json",
    "--",
    "-",
    "",
    "--help",
    "-h",
    "--color",
    "never",
    "--no-color",
    "--version",
    "--forc",
    "--force=1",
    "status",
    "é",
    "--root=",
    "a=b",
    "-k",
    "not slow",
    "\udcff",
]


@given(st.lists(st.sampled_from(WORDS), max_size=8))
@settings(max_examples=1500, deadline=None)
def test_the_fast_path_parses_verify_lines_as_click_does(argv: list[str]) -> None:
    """Every line the fast path takes, typer takes with the same parameters (it may leave typer more)."""
    fast = verify_args(argv)
    if fast is not None:
        assert fast == typer_verify_line(argv)


@given(st.lists(st.sampled_from(WORDS), max_size=14))
@settings(max_examples=20000, deadline=None)
@pytest.mark.slow
def test_the_fast_path_parses_verify_lines_as_click_does_deep(argv: list[str]) -> None:
    fast = verify_args(argv)
    if fast is not None:
        assert fast == typer_verify_line(argv)


def test_plain_verify_lines_do_take_the_fast_path() -> None:
    for argv in (
        ["verify"],
        ["verify", "--force"],
        ["--root", "r", "verify", "0001/P1", "--json", "--pytest-arg=-q"],
        ["verify", "--bench", "2", "--root", "r"],
    ):
        assert verify_args(argv) is not None and verify_args(argv) == typer_verify_line(argv), argv


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


# --- one definition of the command line ----------------------------------------------------------------------------


def test_the_plain_commands_table_is_what_typer_declares() -> None:
    """The options the plain lines take (tracker.cli.PLAIN_COMMANDS) are the typer declarations' own: every option
    a plain command declares, as a flag or with a value, repeatable or not, with its choices; the app's options
    before the command; the arguments' count. An option added or changed on one side only fails here."""
    import click
    import typer.main

    from tracker.cli import PLAIN_COMMANDS, typer_app

    group = typer.main.get_command(typer_app())
    assert isinstance(group, click.Group)

    def declared(params: list[click.Parameter]) -> dict[str, click.Option]:
        return {name: p for p in params if isinstance(p, click.Option) for name in p.opts if name.startswith("--")}

    app_options = declared(group.params)
    for command, spec in PLAIN_COMMANDS.items():
        sub = group.commands[command]
        options = {name: p for name, p in declared(sub.params).items() if name not in ("--help",)}
        assert options.keys() == spec.options.keys(), command
        for name, option in spec.options.items():
            param = options[name]
            assert option.takes_value == (not param.is_flag), (command, name)
            assert option.repeatable == param.multiple, (command, name)
            choices = tuple(param.type.choices) if isinstance(param.type, click.Choice) else ()
            assert option.choices == tuple(str(c) for c in choices), (command, name)
            if option.before:
                assert name in app_options and app_options[name].is_flag == param.is_flag, (command, name)
        arguments = [p for p in sub.params if isinstance(p, click.Argument)]
        if not arguments:
            assert (spec.most_args, spec.least_args) == (0, 0), command
            continue
        [argument] = arguments
        assert spec.most_args == (None if argument.nargs == -1 else argument.nargs), command
        assert spec.least_args == (max(argument.nargs, 1) if argument.required else 0), command


# --- show, log and summary without typer ---------------------------------------------------------------------------


def test_phase_and_summary_args_take_only_their_plain_lines() -> None:
    assert phase_args(["show", "0001/P1"]) == PhaseLine("show", None, ["0001/P1"], False, "auto")
    assert phase_args(["--no-color", "log", "1", "2/P1", "--json", "--root=r"]) == PhaseLine(
        "log", Path("r"), ["1", "2/P1"], True, "never"
    )
    assert phase_args(["show", "0001", "--color", "always"]) == PhaseLine("show", None, ["0001"], False, "always")
    assert summary_args(["summary"]) == SummaryLine(None, "HEAD", None, False)
    assert summary_args(["--root", "r", "summary", "--against=HEAD~2", "--write", "m", "--json"]) == SummaryLine(
        Path("r"), "HEAD~2", Path("m"), True
    )
    for args in (
        ["show"],  # a missing argument: typer says so
        ["log", "--json"],
        ["show", "--help", "1"],
        ["show", "1", "--no-color", "--color=never"],
        ["show", "1", "--json", "--json"],
        ["log", "1", "-x"],
        ["log", "--", "1"],
        ["summary", "HEAD"],  # summary takes no argument
        ["summary", "--against"],
        ["summary", "--write"],
        ["--color=never", "summary"],  # not one of summary's options
        ["summary", "--json=1"],
        ["summary", "--against", "a", "--against", "b"],
        ["status"],
        ["verify"],
    ):
        assert phase_args(args) is None and summary_args(args) is None, args


def typer_line(argv: list[str]) -> PhaseLine | SummaryLine | None:
    """What the typer CLI parses ``argv`` into when it is a show, log or summary command that would run, else
    None: click's own parser over the real command definitions (nothing is run)."""
    parsed = click_parse(argv)
    if parsed is None:
        return None
    name, top, params = parsed
    if name not in ("show", "log", "summary") or (top["root"] is not None and params["root"] is not None):
        return None
    root = params["root"] if params["root"] is not None else top["root"]
    if name == "summary":
        if top["color"] is not None or top["no_color"]:
            return None  # accepted by click, but the fast path leaves it to typer
        write = None if params["write"] is None else Path(params["write"])  # typer's conversion of the option
        return SummaryLine(None if root is None else Path(root), params["against"], write, params["json"])
    colors = [(c, n) for c, n in ((top["color"], top["no_color"]), (params["color"], params["no_color"])) if c or n]
    if len(colors) > 1 or (colors and colors[0][0] is not None and colors[0][1]):
        return None  # the command's UsageError (exit 3)
    color = "auto" if not colors else "never" if colors[0][1] else str(getattr(colors[0][0], "value", colors[0][0]))
    return PhaseLine(name, None if root is None else Path(root), list(params["targets"]), params["json"], color)


LINE_WORDS = [
    "show",
    "log",
    "summary",
    "0001",
    "0001/P1",
    "--root",
    "--root=r",
    "r",
    "--json",
    "--color",
    "--color=never",
    "always",
    "--no-color",
    "--against",
    "--against=HEAD~1",
    "--write",
    "--write=m",
    "m",
    "--",
    "-",
    "",
    "--help",
    "-h",
    "--jso",
    "status",
    "é",
    "\udcff",
]


@given(st.lists(st.sampled_from(LINE_WORDS), max_size=8))
@settings(max_examples=1500, deadline=None)
def test_the_fast_path_parses_show_log_and_summary_lines_as_click_does(argv: list[str]) -> None:
    """Every show, log or summary line the fast path takes, typer takes with the same parameters."""
    fast = phase_args(argv) or summary_args(argv)
    if fast is not None:
        assert fast == typer_line(argv)


def test_plain_show_log_and_summary_lines_do_take_the_fast_path() -> None:
    for argv in (
        ["show", "0001/P1"],
        ["--root", "r", "log", "0001", "--json"],
        ["--no-color", "show", "1", "2"],
        ["summary"],
        ["summary", "--against", "HEAD~1", "--write", "m", "--root", "r"],
    ):
        fast = phase_args(argv) or summary_args(argv)
        assert fast is not None and fast == typer_line(argv), argv


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
    from tracker.cli import run_typer

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
