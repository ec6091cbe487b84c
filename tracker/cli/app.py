"""The typer app, built from the commands' one declaration (:mod:`tracker.cli.declared`): help, completion, usage
errors and every line the plain-line reader leaves to it. typer is imported here only.

typer reads a command's parameters from its callback's signature; each callback here is given the signature of its
declaration with the typer metadata of each parameter (``Annotated[type, typer.Option(...)]``) built from the
declaration's :class:`tracker.cli.spec.Param`.
"""

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any

import click
import typer
import typer.main
from typer.models import ArgumentInfo
from typer.utils import get_params_from_function

from tracker.cli.declared import COMMANDS, GROUPS
from tracker.cli.spec import APP_HELP, APP_OPTIONS, Command, Param, before


def _run_command(fn: Callable[[], int]) -> None:
    """Run a command function; expected errors become a message on stderr and their exit code. A closed
    output pipe becomes :class:`tracker.errors.OutputClosed`, which typer lets through."""
    from tracker.errors import OutputClosed, TrackerError, report

    try:
        try:
            code = fn()
        except TrackerError as err:
            code = report(err)
    except BrokenPipeError as err:
        raise OutputClosed from err
    raise typer.Exit(code)


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


def _parameter(name: str, param: Param, annotation: Any) -> inspect.Parameter:
    """One declared parameter as typer reads it from a signature."""
    extra: dict[str, Any] = {"help": param.help}
    if not param.show_default:
        extra["show_default"] = False
    if param.metavar is not None:
        extra["metavar"] = param.metavar
    if param.complete:
        extra["autocompletion"] = _targets
    info = typer.Argument(**extra) if param.flag is None else typer.Option(param.flag, **extra)
    default = inspect.Parameter.empty if param.required else param.default
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[annotation, info]
    )


def _callback(command: Command) -> Callable[..., None]:
    """A typer callback running ``command`` with what typer read, its signature the declaration's."""

    def callback(**values: Any) -> None:
        _run_command(lambda: command.call(values))

    callback.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [_parameter(name, param, annotation) for name, param, annotation in command.params]
    )
    callback.__name__ = command.fn.__name__
    callback.__doc__ = command.fn.__doc__
    return callback


def _version(value: bool) -> None:
    if value:
        from tracker import __version__

        typer.echo(f"tracker {__version__} (plan-tracker)")
        raise typer.Exit()


@functools.cache
def typer_app() -> typer.Typer:
    """The typer app of every declared command (built once, on first use)."""
    # typer's "Did you mean" for a mistyped command, only where click does not add its own (8.4+): with both,
    # ``tracker statu`` said it twice.
    suggest: dict[str, Any] = (
        {"suggest_commands": not hasattr(click.exceptions, "NoSuchCommand")}
        if "suggest_commands" in inspect.signature(typer.Typer).parameters
        else {}
    )
    app = typer.Typer(
        name="tracker", help=APP_HELP, no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False,
        **suggest,
    )  # fmt: skip

    def main(**values: Any) -> None:
        before.update(root=values["root"], color=values["color"], no_color=values["no_color"])

    version = inspect.Parameter(
        "version", inspect.Parameter.KEYWORD_ONLY, default=False,
        annotation=Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and exit.")],
    )  # fmt: skip
    main.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*(_parameter(name, param, ann) for name, param, ann in APP_OPTIONS.values()), version]
    )
    app.callback(context_settings={"help_option_names": ["-h", "--help"]})(main)
    groups: dict[str, typer.Typer] = {}
    for group, help_ in GROUPS.items():
        groups[group] = typer.Typer(name=group, help=help_, no_args_is_help=True)
        app.add_typer(groups[group])
    for command in COMMANDS:
        (app if command.group is None else groups[command.group]).command(command.name)(_callback(command))
    return app


def restore_argument_help(group: click.Command, app: typer.Typer) -> None:
    """Put back the help of every argument: click 8.5's Argument takes a ``help`` of its own and resets the one
    typer (< 0.25) set before calling it, so ``tracker new -h`` showed no help for TITLE. Done only when help is
    shown: it reads every command's signature."""
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


def run_typer(argv: list[str] | None = None) -> int:
    """Run one command line through typer; its exit code. Command-line usage errors are 3 (not click's 2, which
    is ours for invalid plans)."""
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
