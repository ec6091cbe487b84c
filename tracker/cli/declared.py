"""Every command of ``tracker``, declared once (:mod:`tracker.cli.spec`): its arguments and options, its help and
the ``commands.*.run`` it calls. The command modules are imported inside each command, so a command line loads only
what its command uses. Errors are mapped to exit codes by :func:`tracker.errors.exit_code_for` (docs/reference.md,
"Exit codes").

No ``from __future__ import annotations`` (:mod:`tracker.cli.spec` says why).
"""

import enum
from pathlib import Path

from tracker.cli.spec import (
    COLOR,
    COMMANDS,
    GROUPS,
    NO_COLOR,
    REQUIRED,
    ROOT,
    ColorWhen,
    arg,
    color_of,
    command,
    json_opt,
    opt,
    root_of,
    root_option,
)


class OutputFormat(str, enum.Enum):
    """``--format`` of ``check``, ``lint`` and ``verify``."""

    text = "text"
    github = "github"
    json = "json"


FORMAT_HELP = (
    "text (default); github: GitHub Actions annotations (::error/::warning) at each plan line; json: same as --json."
)


def output_format(fmt: OutputFormat | None, json: bool) -> tuple[str, bool]:
    """(the format, whether it is JSON) from ``--format`` and ``--json``: UsageError when they disagree."""
    from tracker.errors import UsageError

    if json and fmt not in (None, OutputFormat.json):
        raise UsageError(f"--json and --format {fmt.value}: give one of them")
    chosen = "json" if json else (fmt or OutputFormat.text).value
    return chosen, chosen == "json"


_ONE = "Only this plan (0002, 2 or plans/0002-x.md) or this phase (0002/P1)."
_PHASES = "A phase (0002/P1) or a plan (0002, 2 or plans/0002-x.md: each of its phases)."


@command()
def status(
    plan: str | None = arg(_ONE, None, show_default=False, complete=True),
    json: bool = json_opt("Print the status document as JSON (shape in docs/reference.md)."),
    root: str | None = ROOT,
    color: ColorWhen | None = COLOR,
    no_color: bool = NO_COLOR,
) -> int:
    """Show every plan and phase with its status derived from evidence; never runs tests."""
    from tracker.commands import status as cmd

    return cmd.run(root_of(root), plan, json, color=color_of(color, no_color))


@command()
def verify(
    targets: list[str] = arg("PLAN or PLAN/PHASE (default: all).", None, show_default=False, complete=True),
    pytest_arg: list[str] = opt("--pytest-arg", "Extra argument for pytest (repeatable)."),
    bench: bool = opt(
        "--bench", "Also run the selected bench gates' `run` commands, then take in their results.", False
    ),
    force: bool = opt("--force", "Re-run gates whose passing evidence still matches the code.", False),
    alone: bool = opt(
        "--alone",
        "Run each test gate in a pytest session of its own (as `pytest GATE`), not all in one, up to date or not: "
        "finds a gate whose tests pass only beside another gate's.",
        False,
    ),
    json: bool = json_opt(),
    fmt: OutputFormat | None = opt("--format", FORMAT_HELP, show_default=False),
    root: str | None = ROOT,
) -> int:
    """Run the selected test gates in one pytest session and record the evidence."""
    from tracker.commands import verify as cmd

    chosen, as_json = output_format(fmt, json)
    return cmd.run(
        root_of(root), targets, pytest_arg, bench=bench, force=force, as_json=as_json, alone=alone, fmt=chosen
    )


@command()
def update(
    plans: list[str] = arg("Only these plans' files (default: all).", None, show_default=False, complete=True),
    check: bool = opt("--check", "Write nothing; exit 1 with a diff when files are out of date.", False),
    diff: bool = opt("--diff", "Print the diff of what is written.", False),
    force: bool = opt("--force", "Overwrite generated regions that were edited by hand.", False),
    root: str | None = ROOT,
) -> int:
    """Rewrite the generated status regions inside plan files."""
    from tracker.commands import update as cmd

    return cmd.run(root_of(root), check, diff, force, plans=plans)


@command()
def lint(
    no_collect: bool = opt("--no-collect", "Skip asking pytest whether test gates collect.", False),
    json: bool = json_opt(),
    fmt: OutputFormat | None = opt("--format", FORMAT_HELP, show_default=False),
    root: str | None = ROOT,
) -> int:
    """Report every problem in every plan file as path:line: message."""
    from tracker.commands import lint as cmd

    chosen, as_json = output_format(fmt, json)
    return cmd.run(root_of(root), not no_collect, as_json=as_json, fmt=chosen)


@command("next")
def next_(json: bool = json_opt(), root: str | None = ROOT) -> int:
    """List phases that are not done and whose dependencies are done."""
    from tracker.commands import next as cmd

    return cmd.run(root_of(root), as_json=json)


@command()
def new(title: str = arg("Title of the new plan."), root: str | None = ROOT) -> int:
    """Create plans/NNNN-slug.md from the bundled template."""
    from tracker.commands import new as cmd

    return cmd.run(root_of(root), title)


@command()
def schema(
    results: bool = opt("--results", "Schema of benchmark result files instead.", False),
    root: str | None = ROOT,
) -> int:
    """Print the JSON Schema of plan blocks (for editors)."""
    from tracker.commands import schema as cmd

    root_option(root)  # the schema is the same in every repository: --root is only checked
    return cmd.run(results)


@command()
def signoff(
    target: str = arg("The phase (PLAN/PHASE, e.g. 0002/P1).", complete=True),
    gate: int = opt("--gate", "Gate number (1-based, as status shows it).", REQUIRED),
    by: str = opt("--by", "Who signs off.", REQUIRED),
    why: str = opt("--why", "What was checked.", REQUIRED),
    root: str | None = ROOT,
) -> int:
    """Record a sign-off for a manual gate (who, when, why)."""
    from tracker.commands import signoff as cmd

    return cmd.run(root_of(root), target, gate, by, why)


@command()
def ingest(
    files: list[Path] = arg("pytest reportlog (.jsonl), JUnit XML, benchmark result, pytest-benchmark or asv files."),
    host: str | None = opt("--host", "Machine the tests ran on (reportlog/JUnit carry none)."),
    commit: str | None = opt("--commit", "Commit the tests ran on (default: HEAD, marked assumed)."),
    when: str | None = opt("--time", "When the tests ran (ISO 8601 with a time zone), for files that record no time."),
    measure: list[str] = opt(
        "--measure",
        "pytest-benchmark/asv files: the files the benchmark measured, as globs like a phase's paths (repeatable; "
        "default: its test files and the paths of the phases whose bench gates name its metrics).",
        show_default=False,
    ),
    root: str | None = ROOT,
) -> int:
    """Validate evidence produced elsewhere and copy it into the evidence store (docs/evidence.md)."""
    from tracker.commands import ingest as cmd

    return cmd.run(root_of(root), files, host, commit, when=when, measure=measure)


@command()
def check(
    json: bool = json_opt(),
    fmt: OutputFormat | None = opt(
        "--format",
        FORMAT_HELP + " github also appends a Markdown summary to $GITHUB_STEP_SUMMARY when it is set.",
        show_default=False,
    ),
    root: str | None = ROOT,
) -> int:
    """For CI: exit 1 when a phase regressed or plan files are out of date, saying which."""
    from tracker.commands import check as cmd

    chosen, as_json = output_format(fmt, json)
    return cmd.run(root_of(root), as_json=as_json, fmt=chosen)


@command()
def gc(
    dry_run: bool = opt("--dry-run", "List what would be deleted and why the rest stays.", False),
    results: bool = opt(
        "--results",
        "Also delete committed files of bench/results/ that no verdict, status history or tracked file needs.",
        False,
    ),
    json: bool = json_opt(),
    root: str | None = ROOT,
) -> int:
    """Delete superseded evidence files, keeping the newest evidence for every gate and its history."""
    from tracker.commands import gc as cmd

    return cmd.run(root_of(root), dry_run, as_json=json, results=results)


@command()
def summary(
    against: str = opt("--against", "The revision the change is compared with.", "HEAD", metavar="REF"),
    write: Path | None = opt(
        "--write",
        "Write the message into this commit message file (atomically; a message already in it is kept and gets the "
        "trailers): the prepare-commit-msg hook's use.",
        metavar="FILE",
        show_default=False,
    ),
    json: bool = json_opt("Print the summary's data as one JSON object."),
    root: str | None = ROOT,
) -> int:
    """Draft a commit message for the change in the working tree: phase transitions since REF, benchmark
    deltas, trailers. Never commits."""
    from tracker.commands import summary as cmd

    return cmd.run(root_of(root), against, write, as_json=json)


GROUPS["hook"] = "The git hook that drafts commit messages with `tracker summary`."


@command("install", group="hook")
def hook_install(
    uninstall: bool = opt("--uninstall", "Remove it, putting back the hook it chained.", False),
    shared: bool = opt(
        "--shared",
        "Install it even where core.hooksPath is a folder outside this repository (a global one): every repository "
        "using that folder runs it then.",
        False,
    ),
    root: str | None = ROOT,
) -> int:
    """Install the prepare-commit-msg hook (core.hooksPath honoured); an existing hook is chained, never
    overwritten."""
    from tracker.commands import hook as cmd

    return cmd.run(root_of(root), uninstall, shared=shared)


@command()
def show(
    targets: list[str] = arg(_PHASES, show_default=False, complete=True),
    json: bool = json_opt("Print the phases' detail as JSON (shape in tracker/commands/show.py)."),
    root: str | None = ROOT,
    color: ColorWhen | None = COLOR,
    no_color: bool = NO_COLOR,
) -> int:
    """Explain a phase: every gate's verdict and evidence, bench figures, the status history; never runs tests."""
    from tracker.commands import show as cmd

    return cmd.run(root_of(root), targets, json, color=color_of(color, no_color))


@command()
def log(
    targets: list[str] = arg(_PHASES, show_default=False, complete=True),
    json: bool = json_opt("Print the timelines as JSON (shape in tracker/commands/log.py)."),
    root: str | None = ROOT,
    color: ColorWhen | None = COLOR,
    no_color: bool = NO_COLOR,
) -> int:
    """A phase's status timeline from the evidence history, oldest first, then the status now."""
    from tracker.commands import log as cmd

    return cmd.run(root_of(root), targets, json, color=color_of(color, no_color))


class ReportFormat(str, enum.Enum):
    md = "md"
    html = "html"
    github = "github"


@command()
def report(
    plan: str | None = arg("Only this plan (0002, 2 or plans/0002-x.md).", None, show_default=False, complete=True),
    milestone: str | None = opt("--milestone", "Only the plans of this milestone.", show_default=False),
    since: str | None = opt(
        "--since",
        "Changes brought by evidence added after this commit (default: since the previous report of the milestone "
        "in plans/reports/, else the beginning).",
        show_default=False,
    ),
    fmt: ReportFormat = opt(
        "--format",
        "Markdown, or one self-contained HTML file; github: a pull request's summary in Markdown for "
        "$GITHUB_STEP_SUMMARY, the phases that changed status between --since REV (required) and now.",
        ReportFormat.md,
    ),
    out: Path | None = opt(
        "--out", "Write the report to this file (atomically) instead of stdout.", show_default=False
    ),
    json: bool = json_opt("Print the report's data as one JSON object."),
    root: str | None = ROOT,
) -> int:
    """Where the plans stand and what changed, from the evidence: Markdown or one HTML file."""
    from tracker.commands import report as cmd

    return cmd.run(root_of(root), plan, milestone, since, fmt.value, out_path=out, as_json=json)


GROUPS["result"] = "Benchmark result files for projects without a harness that writes them."


@command("new", group="result")
def result_new(
    benchmark: str = arg("Name of the benchmark (recorded in the file and its name)."),
    cases: str | None = opt(
        "--cases", "JSON or CSV file of the cases and their samples (- for standard input).", show_default=False
    ),
    metric: str | None = opt(
        "--metric", "One case given by flags: its metric (what a bench gate names).", show_default=False
    ),
    unit: str | None = opt("--unit", "The case's unit (e.g. ms).", show_default=False),
    direction: str | None = opt("--direction", "Which way is better: lower or higher.", show_default=False),
    param: list[str] = opt("--param", "A parameter of the case, KEY=VALUE (repeatable).", show_default=False),
    sample: list[str] = opt("--sample", "A measured value (repeatable, or comma-separated).", show_default=False),
    measure: list[str] = opt(
        "--measure",
        "Files the benchmark measured, as globs like a phase's paths (repeatable; default: the paths of the phases "
        "whose bench gates name its metrics).",
        show_default=False,
    ),
    gpu: str | None = opt("--gpu", "The GPU it ran on (what a gate's hardware matches).", show_default=False),
    command: str | None = opt(
        "--command", "The command that measured it (default: this command line).", show_default=False
    ),
    out: Path | None = opt("--out", "Directory to write into (default: bench/results/).", show_default=False),
    json: bool = json_opt(),
    root: str | None = ROOT,
) -> int:
    """Write a valid benchmark result file from measured samples (provenance filled in, checked before writing)."""
    from tracker.commands import result as cmd

    return cmd.run_new(
        root_of(root),
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


__all__ = ["COMMANDS", "GROUPS"]  # every command above, registered by @command as it was declared
