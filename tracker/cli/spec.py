"""How a command of the command line is declared, once: a plain function whose parameters' defaults say what
each is on the command line (:func:`arg`, :func:`opt`), registered with :func:`command`. Both readers of a command
line take everything from here: typer (:mod:`tracker.cli.app`, which builds its app from these declarations) and
the plain-line reader (:mod:`tracker.cli.plain`, which runs the commonest lines without importing typer).

No typer and no ``inspect`` here (their imports alone cost more than a plain ``tracker status`` reads), and no
``from __future__ import annotations``: a declaration's annotations are the types both readers convert values to.
"""

import enum
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

_NO_DEFAULT: Any = object()  # a required parameter's default


class Param(NamedTuple):
    """One parameter of a command, as the command line gives it: an option (``flag``) or an argument (no flag)."""

    flag: str | None
    help: str
    default: Any = None
    metavar: str | None = None
    show_default: bool = True
    complete: bool = False  # shell completion of PLAN and PLAN/PHASE (tracker.cli.app)

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT


def arg(help: str, default: Any = _NO_DEFAULT, *, show_default: bool = True, complete: bool = False) -> Any:
    """An argument (required unless it has a default)."""
    return Param(None, help, default, show_default=show_default, complete=complete)


def opt(flag: str, help: str, default: Any = None, *, metavar: str | None = None, show_default: bool = True) -> Any:
    """An option (``--flag``; required when ``default`` is :data:`REQUIRED`); a ``bool`` one is a flag."""
    return Param(flag, help, default, metavar, show_default)


REQUIRED: Any = _NO_DEFAULT


class Shape(NamedTuple):
    """What a parameter's annotation says about its values on the command line."""

    kind: type  # str, bool, int, Path or an enum
    many: bool  # repeatable option, or an argument taking any number


def shape(annotation: Any) -> Shape:
    """``str | None`` -> (str, False); ``list[Path]`` -> (Path, True); ``ColorWhen | None`` -> (ColorWhen, False)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        [annotation] = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is list:
        return Shape(typing.get_args(annotation)[0], True)
    return Shape(annotation, False)


class Command(NamedTuple):
    """A declared command: its name on the command line, the group it is under (``hook install``), its function,
    and its parameters in order (name, declaration, annotation)."""

    name: str
    group: str | None
    fn: Callable[..., int]
    params: tuple[tuple[str, Param, Any], ...]

    @property
    def help(self) -> str:
        return self.fn.__doc__ or ""

    def call(self, values: dict[str, Any]) -> int:
        """Run the command with the values read from a command line (either reader's): a repeatable parameter given
        nowhere is ``[]`` whichever reader read it (typer says None or ``()``)."""
        given = {name: ([*values[name]] if values.get(name) else []) if shape(ann).many else values[name]
                 for name, _, ann in self.params}  # fmt: skip
        return self.fn(**given)


# Every command, in the order help lists them; and the help of each group of commands (``tracker hook ...``).
COMMANDS: list[Command] = []
GROUPS: dict[str, str] = {}


def command(name: str | None = None, group: str | None = None) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Declare ``fn`` as a command (named after it unless ``name``): each of its parameters' defaults is an
    :func:`arg` or :func:`opt`."""

    def register(fn: Callable[..., int]) -> Callable[..., int]:
        code = fn.__code__
        names = code.co_varnames[: code.co_argcount]
        declared = fn.__defaults__ or ()
        if len(declared) != len(names) or not all(isinstance(d, Param) for d in declared):
            raise TypeError(f"{fn.__name__}: every parameter needs an arg() or opt() default")
        params = tuple((n, d, fn.__annotations__[n]) for n, d in zip(names, declared, strict=True))
        COMMANDS.append(Command(name or fn.__name__.rstrip("_"), group, fn, params))
        return fn

    return register


class ColorWhen(enum.StrEnum):
    """``--color`` values."""

    auto = "auto"
    always = "always"
    never = "never"


# The app's own options, which may also come before the command (``tracker --root DIR status``); a command that
# takes them declares them too (the same declarations), and the two places are merged by root_of and color_of.
ROOT: Any = opt(
    "--root", "Repository root, or a directory inside it (default: found from the current directory).",
    show_default=False,
)  # fmt: skip
COLOR: Any = opt(
    "--color",
    "Colour status's table: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always or never.",
    show_default=False,
)
NO_COLOR: Any = opt("--no-color", "Same as --color=never.", False)
APP_OPTIONS: dict[str, tuple[str, Param, Any]] = {
    "--root": ("root", ROOT, str | None),
    "--color": ("color", COLOR, ColorWhen | None),
    "--no-color": ("no_color", NO_COLOR, bool),
}
APP_HELP = (
    "Declarative plans in Markdown whose phase status is derived from test and benchmark evidence.\n\n"
    "--root, --color and --no-color may also follow the command (tracker status --root DIR). "
    "Shell completion: tracker --install-completion (bash, zsh, fish, PowerShell)."
)


def json_opt(help: str = "Print one JSON object instead of text (shape in docs/reference.md).") -> Any:
    return opt("--json", help, False)


# The app's options as given before the command, by either reader (reset for every command line).
before: dict[str, Any] = {"root": None, "color": None, "no_color": False}


def root_option(root: str | None) -> str | None:
    """``--root``'s value, given before the command or after it; UsageError when both."""
    from tracker.errors import UsageError

    if root is not None and before["root"] is not None:
        raise UsageError("--root given both before and after the command")
    return root if root is not None else before["root"]


def root_of(root: str | None) -> Path:
    """The repository root from ``--root`` given before the command or after it (UsageError when both), or found
    from the current directory."""
    from tracker.base.repo_root import root_from_option

    return root_from_option(root_option(root))


def color_of(color: ColorWhen | None, no_color: bool) -> str:
    """``auto``, ``always`` or ``never`` from ``--color``/``--no-color`` given before the command or after it:
    UsageError when both places, or both options, give one."""
    from tracker.errors import UsageError

    given = [(c, n) for c, n in ((before["color"], before["no_color"]), (color, no_color)) if c is not None or n]
    if len(given) > 1:
        raise UsageError("--color/--no-color given both before and after the command")
    if not given:
        return "auto"
    [(when, never)] = given
    if when is not None and never:
        raise UsageError("give one of --color and --no-color")
    if never:
        return "never"
    return "auto" if when is None else str(when)
