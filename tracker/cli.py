"""The ``tracker`` command line, its one parser: every command declared once, with typer (:func:`typer_app`).

Each command calls one ``commands.*.run``; command modules are imported inside each command so a command loads
only what it uses. Errors are mapped to exit codes in :func:`tracker.errors.exit_code_for` (README "Exit codes").

``tracker status`` is the command run most (at the end of every work session), and importing typer is more than
half of its time (~110 ms of ~200 ms on a busy machine). So this module imports typer only when a command line
needs it: the plain lines of ``status``, ``verify``, ``show``, ``log`` and ``summary`` (:data:`PLAIN_COMMANDS`,
their options as typer declares them; a test checks that the two agree) are read by :func:`plain_line` and run
without it (what verify costs on top of plain pytest is mostly the tracker's own start-up: plan 0003 P5; show and
summary are meant to cost what status does, and the commit hook runs summary on every commit). Every other line
(help, an unknown or repeated option, a missing or bad value, another command) goes to typer, which says what is
wrong. Both report
errors through :func:`tracker.errors.report`, so the output and the exit code are the same either way (tests
compare them). The process around a command line (Ctrl-C, output streams, the exit) is :mod:`tracker.entry`'s.

No ``from __future__ import annotations`` here on purpose: typer would then evaluate every command's string
annotations when the app is built (~10 ms).
"""

import enum
import functools
import gc as _gc  # aliased: `gc` is a command below
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

if TYPE_CHECKING:
    import click
    import typer


class Option(NamedTuple):
    """One option of a plain command line, as the typer declaration of its command takes it."""

    takes_value: bool = False  # ``--name VALUE`` or ``--name=VALUE`` (the value may start with ``-``); else a flag
    repeatable: bool = False
    before: bool = False  # also before the command: one of the app's own options (``tracker --root DIR status``)
    choices: tuple[str, ...] = ()  # the values typer accepts, when it checks them
    empty: bool = True  # an empty value is one (else: typer's to reject)


class PlainCommand(NamedTuple):
    """A command whose plain lines run without typer: its options and how many arguments it takes."""

    options: dict[str, Option]
    most_args: int | None  # PLAN arguments; None: any number
    least_args: int = 0  # fewer is typer's to refuse (a missing argument)


COLORS = ("auto", "always", "never")
_ROOT = Option(takes_value=True, before=True, empty=False)
_COLOR = Option(takes_value=True, before=True, choices=COLORS)
_NO_COLOR = Option(before=True)
_PHASE_OPTIONS = {"--root": _ROOT, "--color": _COLOR, "--no-color": _NO_COLOR, "--json": Option()}
PLAIN_COMMANDS = {
    "status": PlainCommand(_PHASE_OPTIONS, most_args=1),
    "show": PlainCommand(_PHASE_OPTIONS, most_args=None, least_args=1),
    "log": PlainCommand(_PHASE_OPTIONS, most_args=None, least_args=1),
    "summary": PlainCommand(
        {
            "--root": _ROOT,
            "--against": Option(takes_value=True),
            "--write": Option(takes_value=True),
            "--json": Option(),
        },
        most_args=0,
    ),
    "verify": PlainCommand(
        {
            "--root": _ROOT,
            "--pytest-arg": Option(takes_value=True, repeatable=True),
            "--bench": Option(),
            "--force": Option(),
            "--alone": Option(),
            "--json": Option(),
        },
        most_args=None,
    ),
}
# The app's own options a plain line may give before its command.
_BEFORE = {name: option for spec in PLAIN_COMMANDS.values() for name, option in spec.options.items() if option.before}


class PlainLine(NamedTuple):
    """A plain command line: its command, the options given ({name: values}, ``""`` for a flag) and arguments."""

    command: str
    options: dict[str, list[str]]
    args: list[str]


def plain_line(args: list[str]) -> PlainLine | None:
    """``args`` read as typer reads them when they are a plain line of one of :data:`PLAIN_COMMANDS` (options
    and arguments in any order after the command, the app's options also before it), else None: typer's to
    handle (help, an unknown, repeated or misplaced option, a missing or refused value, ``--``, an argument that
    is empty or starts with ``-``, too many arguments)."""
    command: str | None = None
    given: dict[str, list[str]] = {}
    before: list[str] = []
    words: list[str] = []
    rest = iter(args)
    for arg in rest:
        if command is None and arg in PLAIN_COMMANDS:
            command = arg
            continue
        name, eq, value = arg.partition("=")
        option = _BEFORE.get(name) if command is None else PLAIN_COMMANDS[command].options.get(name)
        if option is None:
            if command is None or not arg or arg.startswith("-"):
                return None
            words.append(arg)
            continue
        if not option.takes_value:
            if eq:
                return None
            value = ""
        elif not eq:
            following = next(rest, None)
            if following is None:
                return None
            value = following
        if (name in given and not option.repeatable) or (option.choices and value not in option.choices):
            return None
        if not value and option.takes_value and not option.empty:
            return None
        given.setdefault(name, []).append(value)
        if command is None:
            before.append(name)
    if command is None:
        return None
    spec = PLAIN_COMMANDS[command]
    if any(name not in spec.options for name in before):
        return None
    if (spec.most_args is not None and len(words) > spec.most_args) or len(words) < spec.least_args:
        return None
    return PlainLine(command, given, words)


class StatusLine(NamedTuple):
    """A plain ``tracker status`` line, as the ``status`` command takes it."""

    root: Path | None
    plan: str | None
    as_json: bool
    color: str


def status_args(args: list[str]) -> StatusLine | None:
    """The parameters of a plain status line (``[--root DIR] [--color WHEN | --no-color] status [PLAN] [--json]``,
    the app's options before or after ``status``), else None."""
    line = plain_line(args)
    if line is None or line.command != "status" or {"--color", "--no-color"} <= line.options.keys():
        return None  # both colour options: typer's UsageError
    given = line.options
    color = "never" if "--no-color" in given else given.get("--color", ["auto"])[0]
    root, plan = given.get("--root"), line.args[0] if line.args else None
    return StatusLine(None if root is None else Path(root[0]), plan, "--json" in given, color)


class PhaseLine(NamedTuple):
    """A plain ``tracker show`` or ``tracker log`` line, as those commands take it."""

    command: str
    root: Path | None
    targets: list[str]
    as_json: bool
    color: str


def phase_args(args: list[str]) -> PhaseLine | None:
    """The parameters of a plain show or log line (``[--root DIR] [--color WHEN | --no-color] show|log
    PLAN[/PHASE]... [--json]``, the app's options before or after the command), else None."""
    line = plain_line(args)
    if line is None or line.command not in ("show", "log") or {"--color", "--no-color"} <= line.options.keys():
        return None  # both colour options: typer's UsageError
    given = line.options
    color = "never" if "--no-color" in given else given.get("--color", ["auto"])[0]
    root = given.get("--root")
    return PhaseLine(line.command, None if root is None else Path(root[0]), line.args, "--json" in given, color)


class SummaryLine(NamedTuple):
    """A plain ``tracker summary`` line, as the ``summary`` command takes it."""

    root: Path | None
    against: str
    write: Path | None
    as_json: bool


def summary_args(args: list[str]) -> SummaryLine | None:
    """The parameters of a plain summary line (``[--root DIR] summary [--against REF] [--write FILE] [--json]``),
    else None. The prepare-commit-msg hook runs one on every commit."""
    line = plain_line(args)
    if line is None or line.command != "summary":
        return None
    given = line.options
    root, write = given.get("--root"), given.get("--write")
    return SummaryLine(
        None if root is None else Path(root[0]),
        given.get("--against", ["HEAD"])[0],
        None if write is None else Path(write[0]),
        "--json" in given,
    )


class VerifyLine(NamedTuple):
    """A plain ``tracker verify`` line, as the ``verify`` command takes it."""

    root: Path | None
    targets: list[str]
    pytest_args: list[str]
    bench: bool
    force: bool
    as_json: bool
    alone: bool = False


def verify_args(args: list[str]) -> VerifyLine | None:
    """The parameters of a plain verify line (``[--root DIR] verify [PLAN[/PHASE]]... [--pytest-arg ARG]...
    [--bench] [--force] [--alone] [--json] [--root DIR]``), else None. ``--pytest-arg`` takes the next argument whatever
    it is, as click does."""
    line = plain_line(args)
    if line is None or line.command != "verify":
        return None
    given = line.options
    root = given.get("--root")
    return VerifyLine(
        None if root is None else Path(root[0]),
        line.args,
        given.get("--pytest-arg", []),
        "--bench" in given,
        "--force" in given,
        "--json" in given,
        "--alone" in given,
    )


class ColorWhen(enum.StrEnum):
    """``--color`` values."""

    auto = "auto"
    always = "always"
    never = "never"


_state: dict[str, Any] = {"root": None, "color": None, "no_color": False}


def _root(root: str | None = None) -> Path:
    """The repository root from ``--root`` given before the command or after it (UsageError when both), or
    found from the current directory."""
    from tracker.base.repo_root import root_from_option

    return root_from_option(_root_option(root))


def _root_option(root: str | None) -> str | None:
    """``--root``'s value, given before the command or after it; UsageError when both."""
    from tracker.errors import UsageError

    if root is not None and _state["root"] is not None:
        raise UsageError("--root given both before and after the command")
    return root if root is not None else _state["root"]


def _color(color: ColorWhen | None, no_color: bool) -> str:
    """``auto``, ``always`` or ``never`` from ``--color``/``--no-color`` given before the command or after it
    (status): UsageError when both places, or both options, give one."""
    from tracker.errors import UsageError

    given = [(c, n) for c, n in ((_state["color"], _state["no_color"]), (color, no_color)) if c is not None or n]
    if len(given) > 1:
        raise UsageError("--color/--no-color given both before and after the command")
    if not given:
        return "auto"
    [(when, never)] = given
    if when is not None and never:
        raise UsageError("give one of --color and --no-color")
    if never:
        return "never"
    return "auto" if when is None else when.value


def _run_command(fn: Callable[[], int]) -> None:
    """Run a command function; expected errors become a message on stderr and their exit code. A closed
    output pipe becomes :class:`tracker.errors.OutputClosed`, which typer lets through."""
    import typer

    from tracker.errors import OutputClosed, TrackerError, report

    try:
        try:
            code = fn()
        except TrackerError as err:
            code = report(err)
    except BrokenPipeError as err:
        raise OutputClosed from err
    raise typer.Exit(code)


@functools.cache
def typer_app() -> "typer.Typer":
    """The typer app that declares every command (built once, on first use: typer is imported here)."""
    import inspect

    import click
    import typer

    def _suggestions() -> dict[str, Any]:
        """typer's "Did you mean" for a mistyped command, only where click does not add its own (8.4+):
        with both, ``tracker statu`` said it twice."""
        if "suggest_commands" not in inspect.signature(typer.Typer).parameters:
            return {}
        return {"suggest_commands": not hasattr(click.exceptions, "NoSuchCommand")}

    app = typer.Typer(
        name="tracker",
        help="Declarative plans in Markdown whose phase status is derived from test and benchmark evidence.\n\n"
        "--root, --color and --no-color may also follow the command (tracker status --root DIR). "
        "Shell completion: tracker --install-completion (bash, zsh, fish, PowerShell).",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        **_suggestions(),
    )

    RootOption = Annotated[
        str | None,
        typer.Option(
            "--root",
            help="Repository root, or a directory inside it (default: found from the current directory).",
            show_default=False,
        ),
    ]
    ColorOption = Annotated[
        ColorWhen | None,
        typer.Option(
            "--color",
            help="Colour status's table: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always or never.",
            show_default=False,
        ),
    ]
    NoColorOption = Annotated[bool, typer.Option("--no-color", help="Same as --color=never.")]

    JsonOption = Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of text (shape in README).")
    ]

    def _targets(ctx: typer.Context, incomplete: str) -> list[str]:
        """Shell completion of PLAN and PLAN/PHASE arguments: the plan ids and phases of the repository the command
        line names (``--root``) or the current directory is in; nothing when that cannot be read."""
        from tracker.base.repo_root import root_from_option
        from tracker.errors import TrackerError
        from tracker.plans.load import load_plan_set

        try:
            root = root_from_option(ctx.params.get("root") or (ctx.parent.params.get("root") if ctx.parent else None))
            plans = load_plan_set(root).plans
        except (TrackerError, OSError, ValueError):
            return []
        names = [p.id for p in plans] + [f"{p.id}/{ph.id}" for p in plans for ph in p.phases]
        return [name for name in names if name.startswith(incomplete)]

    def _version(value: bool) -> None:
        if value:
            from tracker import __version__

            typer.echo(f"tracker {__version__} (plan-tracker)")
            raise typer.Exit()

    @app.callback(context_settings={"help_option_names": ["-h", "--help"]})
    def _main(
        root: RootOption = None,
        color: ColorOption = None,
        no_color: NoColorOption = False,
        version: Annotated[
            bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
        ] = False,
    ) -> None:
        _state.update(root=root, color=color, no_color=no_color)

    @app.command()
    def status(
        plan: Annotated[
            str | None,
            typer.Argument(
                help="Only this plan (0002, 2 or plans/0002-x.md) or this phase (0002/P1).",
                show_default=False,
                autocompletion=_targets,
            ),
        ] = None,
        json: Annotated[
            bool, typer.Option("--json", help="Print the status document as JSON (shape in README).")
        ] = False,
        root: RootOption = None,
        color: ColorOption = None,
        no_color: NoColorOption = False,
    ) -> None:
        """Show every plan and phase with its status derived from evidence; never runs tests."""
        from tracker.commands import status as cmd

        _run_command(lambda: cmd.run(_root(root), plan, json, color=_color(color, no_color)))

    @app.command()
    def verify(
        targets: Annotated[
            list[str] | None,
            typer.Argument(help="PLAN or PLAN/PHASE (default: all).", show_default=False, autocompletion=_targets),
        ] = None,
        pytest_arg: Annotated[
            list[str] | None, typer.Option("--pytest-arg", help="Extra argument for pytest (repeatable).")
        ] = None,
        bench: Annotated[
            bool,
            typer.Option(
                "--bench", help="Also run the selected bench gates' `run` commands, then take in their results."
            ),
        ] = False,
        force: Annotated[
            bool, typer.Option("--force", help="Re-run gates whose passing evidence still matches the code.")
        ] = False,
        alone: Annotated[
            bool,
            typer.Option(
                "--alone",
                help="Run each test gate in a pytest session of its own (as `pytest GATE`), not all in one, up to "
                "date or not: finds a gate whose tests pass only beside another gate's.",
            ),
        ] = False,
        json: JsonOption = False,
        root: RootOption = None,
    ) -> None:
        """Run the selected test gates in one pytest session and record the evidence."""
        from tracker.commands import verify as cmd

        _run_command(
            lambda: cmd.run(
                _root(root), targets or [], pytest_arg or [], bench=bench, force=force, as_json=json, alone=alone
            )
        )

    @app.command()
    def update(
        plans: Annotated[
            list[str] | None,
            typer.Argument(help="Only these plans' files (default: all).", show_default=False, autocompletion=_targets),
        ] = None,
        check: Annotated[
            bool, typer.Option("--check", help="Write nothing; exit 1 with a diff when files are out of date.")
        ] = False,
        diff: Annotated[bool, typer.Option("--diff", help="Print the diff of what is written.")] = False,
        force: Annotated[
            bool, typer.Option("--force", help="Overwrite generated regions that were edited by hand.")
        ] = False,
        root: RootOption = None,
    ) -> None:
        """Rewrite the generated status regions inside plan files."""
        from tracker.commands import update as cmd

        _run_command(lambda: cmd.run(_root(root), check, diff, force, plans=plans or []))

    @app.command()
    def lint(
        no_collect: Annotated[
            bool, typer.Option("--no-collect", help="Skip asking pytest whether test gates collect.")
        ] = False,
        json: JsonOption = False,
        root: RootOption = None,
    ) -> None:
        """Report every problem in every plan file as path:line: message."""
        from tracker.commands import lint as cmd

        _run_command(lambda: cmd.run(_root(root), not no_collect, as_json=json))

    @app.command("next")
    def next_(
        json: JsonOption = False,
        root: RootOption = None,
    ) -> None:
        """List phases that are not done and whose dependencies are done."""
        from tracker.commands import next as cmd

        _run_command(lambda: cmd.run(_root(root), as_json=json))

    @app.command()
    def new(
        title: Annotated[str, typer.Argument(help="Title of the new plan.")],
        root: RootOption = None,
    ) -> None:
        """Create plans/NNNN-slug.md from the bundled template."""
        from tracker.commands import new as cmd

        _run_command(lambda: cmd.run(_root(root), title))

    @app.command()
    def schema(
        results: Annotated[bool, typer.Option("--results", help="Schema of benchmark result files instead.")] = False,
        root: RootOption = None,
    ) -> None:
        """Print the JSON Schema of plan blocks (for editors)."""
        from tracker.commands import schema as cmd

        def print_schema() -> int:
            _root_option(root)  # the schema is the same in every repository: --root is only checked
            return cmd.run(results)

        _run_command(print_schema)

    @app.command()
    def signoff(
        target: Annotated[str, typer.Argument(help="The phase (PLAN/PHASE, e.g. 0002/P1).", autocompletion=_targets)],
        gate: Annotated[int, typer.Option("--gate", help="Gate number (1-based, as status shows it).")],
        by: Annotated[str, typer.Option("--by", help="Who signs off.")],
        why: Annotated[str, typer.Option("--why", help="What was checked.")],
        root: RootOption = None,
    ) -> None:
        """Record a sign-off for a manual gate (who, when, why)."""
        from tracker.commands import signoff as cmd

        _run_command(lambda: cmd.run(_root(root), target, gate, by, why))

    @app.command()
    def ingest(
        files: Annotated[
            list[Path], typer.Argument(help="pytest reportlog (.jsonl), JUnit XML or benchmark result files.")
        ],
        host: Annotated[
            str | None, typer.Option("--host", help="Machine the tests ran on (reportlog/JUnit carry none).")
        ] = None,
        commit: Annotated[
            str | None, typer.Option("--commit", help="Commit the tests ran on (default: HEAD, marked assumed).")
        ] = None,
        when: Annotated[
            str | None,
            typer.Option(
                "--time", help="When the tests ran (ISO 8601 with a time zone), for files that record no time."
            ),
        ] = None,
        root: RootOption = None,
    ) -> None:
        """Validate evidence produced elsewhere and copy it into the evidence store (docs/evidence.md)."""
        from tracker.commands import ingest as cmd

        _run_command(lambda: cmd.run(_root(root), files, host, commit, when=when))

    @app.command()
    def check(
        json: JsonOption = False,
        root: RootOption = None,
    ) -> None:
        """For CI: exit 1 when a phase regressed or plan files are out of date, saying which."""
        from tracker.commands import check as cmd

        _run_command(lambda: cmd.run(_root(root), as_json=json))

    @app.command()
    def gc(
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="List what would be deleted and why the rest stays.")
        ] = False,
        json: JsonOption = False,
        root: RootOption = None,
    ) -> None:
        """Delete superseded evidence files, keeping the newest evidence for every gate and its history."""
        from tracker.commands import gc as cmd

        _run_command(lambda: cmd.run(_root(root), dry_run, as_json=json))

    @app.command()
    def summary(
        against: Annotated[
            str, typer.Option("--against", help="The revision the change is compared with.", metavar="REF")
        ] = "HEAD",
        write: Annotated[
            Path | None,
            typer.Option(
                "--write",
                help="Write the message into this commit message file (atomically; a message already in it is kept "
                "and gets the trailers): the prepare-commit-msg hook's use.",
                metavar="FILE",
                show_default=False,
            ),
        ] = None,
        json: Annotated[bool, typer.Option("--json", help="Print the summary's data as one JSON object.")] = False,
        root: RootOption = None,
    ) -> None:
        """Draft a commit message for the change in the working tree: phase transitions since REF, benchmark
        deltas, trailers. Never commits."""
        from tracker.commands import summary as cmd

        _run_command(lambda: cmd.run(_root(root), against, write, as_json=json))

    hook_app = typer.Typer(
        name="hook", help="The git hook that drafts commit messages with `tracker summary`.", no_args_is_help=True
    )
    app.add_typer(hook_app)

    @hook_app.command("install")
    def hook_install(
        uninstall: Annotated[
            bool, typer.Option("--uninstall", help="Remove it, putting back the hook it chained.")
        ] = False,
        shared: Annotated[
            bool,
            typer.Option(
                "--shared",
                help="Install it even where core.hooksPath is a folder outside this repository (a global one): "
                "every repository using that folder runs it then.",
            ),
        ] = False,
        root: RootOption = None,
    ) -> None:
        """Install the prepare-commit-msg hook (core.hooksPath honoured); an existing hook is chained, never
        overwritten."""
        from tracker.commands import hook as cmd

        _run_command(lambda: cmd.run(_root(root), uninstall, shared=shared))

    @app.command()
    def show(
        targets: Annotated[
            list[str],
            typer.Argument(
                help="A phase (0002/P1) or a plan (0002, 2 or plans/0002-x.md: each of its phases).",
                show_default=False,
                autocompletion=_targets,
            ),
        ],
        json: Annotated[
            bool, typer.Option("--json", help="Print the phases' detail as JSON (shape in tracker/commands/show.py).")
        ] = False,
        root: RootOption = None,
        color: ColorOption = None,
        no_color: NoColorOption = False,
    ) -> None:
        """Explain a phase: every gate's verdict and evidence, bench figures, the status history; never runs tests."""
        from tracker.commands import show as cmd

        _run_command(lambda: cmd.run(_root(root), targets, json, color=_color(color, no_color)))

    @app.command()
    def log(
        targets: Annotated[
            list[str],
            typer.Argument(
                help="A phase (0002/P1) or a plan (0002, 2 or plans/0002-x.md: each of its phases).",
                show_default=False,
                autocompletion=_targets,
            ),
        ],
        json: Annotated[
            bool, typer.Option("--json", help="Print the timelines as JSON (shape in tracker/commands/log.py).")
        ] = False,
        root: RootOption = None,
        color: ColorOption = None,
        no_color: NoColorOption = False,
    ) -> None:
        """A phase's status timeline from the evidence history, oldest first, then the status now."""
        from tracker.commands import log as cmd

        _run_command(lambda: cmd.run(_root(root), targets, json, color=_color(color, no_color)))

    class ReportFormat(str, enum.Enum):
        md = "md"
        html = "html"

    @app.command()
    def report(
        plan: Annotated[
            str | None,
            typer.Argument(
                help="Only this plan (0002, 2 or plans/0002-x.md).", show_default=False, autocompletion=_targets
            ),
        ] = None,
        milestone: Annotated[
            str | None,
            typer.Option("--milestone", help="Only the plans of this milestone.", show_default=False),
        ] = None,
        since: Annotated[
            str | None,
            typer.Option(
                "--since",
                help="Changes brought by evidence added after this commit (default: since the previous report"
                " of the milestone in plans/reports/, else the beginning).",
                show_default=False,
            ),
        ] = None,
        fmt: Annotated[ReportFormat, typer.Option("--format", help="Markdown, or one self-contained HTML file.")] = (
            ReportFormat.md
        ),
        out: Annotated[
            Path | None,
            typer.Option(
                "--out", help="Write the report to this file (atomically) instead of stdout.", show_default=False
            ),
        ] = None,
        json: Annotated[bool, typer.Option("--json", help="Print the report's data as one JSON object.")] = False,
        root: RootOption = None,
    ) -> None:
        """Where the plans stand and what changed, from the evidence: Markdown or one HTML file."""
        from tracker.commands import report as cmd

        _run_command(lambda: cmd.run(_root(root), plan, milestone, since, fmt.value, out_path=out, as_json=json))

    result_app = typer.Typer(
        name="result",
        help="Benchmark result files for projects without a harness that writes them.",
        no_args_is_help=True,
    )
    app.add_typer(result_app)

    @result_app.command("new")
    def result_new(
        benchmark: Annotated[str, typer.Argument(help="Name of the benchmark (recorded in the file and its name).")],
        cases: Annotated[
            str | None,
            typer.Option(
                "--cases",
                help="JSON or CSV file of the cases and their samples (- for standard input).",
                show_default=False,
            ),
        ] = None,
        metric: Annotated[
            str | None,
            typer.Option(
                "--metric", help="One case given by flags: its metric (what a bench gate names).", show_default=False
            ),
        ] = None,
        unit: Annotated[
            str | None, typer.Option("--unit", help="The case's unit (e.g. ms).", show_default=False)
        ] = None,
        direction: Annotated[
            str | None, typer.Option("--direction", help="Which way is better: lower or higher.", show_default=False)
        ] = None,
        param: Annotated[
            list[str] | None,
            typer.Option("--param", help="A parameter of the case, KEY=VALUE (repeatable).", show_default=False),
        ] = None,
        sample: Annotated[
            list[str] | None,
            typer.Option("--sample", help="A measured value (repeatable, or comma-separated).", show_default=False),
        ] = None,
        measure: Annotated[
            list[str] | None,
            typer.Option(
                "--measure",
                help="Files the benchmark measured, as globs like a phase's paths (repeatable; default: the paths of "
                "the phases whose bench gates name its metrics).",
                show_default=False,
            ),
        ] = None,
        gpu: Annotated[
            str | None,
            typer.Option("--gpu", help="The GPU it ran on (what a gate's hardware matches).", show_default=False),
        ] = None,
        command: Annotated[
            str | None,
            typer.Option(
                "--command", help="The command that measured it (default: this command line).", show_default=False
            ),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option("--out", help="Directory to write into (default: bench/results/).", show_default=False),
        ] = None,
        json: JsonOption = False,
        root: RootOption = None,
    ) -> None:
        """Write a valid benchmark result file from measured samples (provenance filled in, checked before writing)."""
        from tracker.commands import result as cmd

        _run_command(
            lambda: cmd.run_new(
                _root(root),
                benchmark,
                cases,
                metric=metric,
                unit=unit,
                direction=direction,
                params=param,
                samples=sample,
                measure=measure,
                gpu=gpu,
                command=command,
                out_dir=out,
                as_json=json,
            )
        )

    return app


def restore_argument_help(group: "click.Command", app: "typer.Typer") -> None:
    """Put back the help of every argument: click 8.5's Argument takes a ``help`` of its own and resets the one
    typer (< 0.25) set before calling it, so ``tracker new -h`` showed no help for TITLE. Done only when help is
    shown: it reads every command's signature."""
    import click
    from typer.models import ArgumentInfo
    from typer.utils import get_params_from_function

    if not isinstance(group, click.Group):  # a one-command app: nothing registered under it
        return
    for info in app.registered_commands:
        if info.callback is None:
            continue
        command = group.commands.get(info.name or info.callback.__name__.lower().replace("_", "-"))
        metas = get_params_from_function(info.callback)
        for param in command.params if command is not None else []:
            meta = metas.get(param.name or "")
            if getattr(param, "help", "") is None and meta is not None and isinstance(meta.default, ArgumentInfo):
                param.help = meta.default.help
    for group_info in app.registered_groups:
        sub = (
            group.commands.get(group_info.name or group_info.typer_instance.info.name or "")
            if group_info.typer_instance
            else None
        )
        if isinstance(sub, click.Group) and group_info.typer_instance is not None:
            restore_argument_help(sub, group_info.typer_instance)


def run(argv: list[str] | None = None) -> int:
    """Run one command line (``sys.argv`` when ``argv`` is None); its exit code. A plain status or verify
    line runs without typer (module docstring), every other one through :func:`run_typer`."""
    from tracker.errors import TrackerError, report

    args = sys.argv[1:] if argv is None else argv
    try:
        status = status_args(args)
        if status is not None:
            return _status(status)
        verify = verify_args(args)
        if verify is not None:
            return _verify(verify)
        phase = phase_args(args)
        if phase is not None:
            return _phase(phase)
        summary = summary_args(args)
        if summary is not None:
            return _summary(summary)
        return run_typer(argv)
    except TrackerError as err:  # a plain line's errors, and output that failed while click wrote it (help)
        return report(err)


def _status(line: StatusLine) -> int:
    """Run a plain status line as the typer ``status`` command does."""
    from tracker.base.repo_root import root_from_option
    from tracker.commands import status

    return status.run(root_from_option(line.root), line.plan, line.as_json, color=line.color)


def _phase(line: PhaseLine) -> int:
    """Run a plain show or log line as the typer command of that name does."""
    from tracker.base.repo_root import root_from_option

    if line.command == "show":
        from tracker.commands import show as cmd
    else:
        from tracker.commands import log as cmd  # type: ignore[no-redef]
    return cmd.run(root_from_option(line.root), line.targets, line.as_json, color=line.color)


def _summary(line: SummaryLine) -> int:
    """Run a plain summary line as the typer ``summary`` command does."""
    from tracker.base.repo_root import root_from_option
    from tracker.commands import summary

    return summary.run(root_from_option(line.root), line.against, line.write, as_json=line.as_json)


def _verify(line: VerifyLine) -> int:
    """Run a plain verify line as the typer ``verify`` command does."""
    from tracker.base.repo_root import root_from_option
    from tracker.commands import verify

    return verify.run(
        root_from_option(line.root),
        line.targets,
        line.pytest_args,
        bench=line.bench,
        force=line.force,
        as_json=line.as_json,
        alone=line.alone,
    )


def run_typer(argv: list[str] | None = None) -> int:
    """Run one command line through typer; its exit code. Command-line usage errors are 3 (not click's 2, which
    is ours for invalid plans)."""
    import typer.main

    from tracker.errors import ExitCode, OutputClosed

    app = typer_app()
    command = typer.main.get_command(app)
    if {"-h", "--help"} & set(sys.argv[1:] if argv is None else argv):
        restore_argument_help(command, app)
    try:
        code = command.main(args=argv, prog_name="tracker", standalone_mode=False)
    except SystemExit as exit_:  # typer's answer to a closed pipe while click writes (help): sys.exit(1)
        if isinstance(exit_.__context__, BrokenPipeError):
            raise OutputClosed from exit_.__context__
        raise
    except Exception as err:  # click's exceptions are typer-private; recognise them by their API
        if not (hasattr(err, "show") and hasattr(err, "exit_code")):
            raise
        err.show()
        usage = any(cls.__name__ == "UsageError" for cls in type(err).__mro__)
        code = int(ExitCode.USAGE) if usage else err.exit_code
    return code if isinstance(code, int) else 0


def main(argv: list[str] | None = None) -> None:
    """Entry point for in-process callers (the console script is :func:`tracker.entry.main`); ends with
    ``sys.exit``.

    Without ``argv`` the process is ours and ends here: what exists by then lives until exit, so it is
    frozen out of the cyclic GC, whose scans of it during the command and in the interpreter's final
    collection cost ~20 ms of a ~200 ms ``tracker status``. With ``argv`` (in-process callers such as
    tests) the GC is left alone.
    """
    owns_process = argv is None
    if owns_process:
        _gc.freeze()
    try:
        code = run(argv)
    finally:
        if owns_process:
            _gc.freeze()  # what the command imported and built, too: the exit's collection scans nothing
    sys.exit(code)
