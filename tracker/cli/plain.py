"""The plain-line reader: a command line read without typer, from the commands' one declaration
(:mod:`tracker.cli.declared`).

``tracker status`` is the command run most (at the end of every work session), and importing typer is more than
half of its time; verify's cost on top of plain pytest is mostly the tracker's own start-up (plan 0003 P5), and the
commit hook runs ``summary`` on every commit. So a plain line of any top-level command (its options and arguments
in any order after it, the app's options also before it) is read here, as click reads it, and run without typer.
Every other line (help, an unknown, repeated or misplaced option, a missing or refused value, ``--``, an argument
that is empty or starts with ``-``, too many or too few arguments, a group's command) is typer's, which says what is
wrong. A test reads random lines both ways and holds the two to the same values.
"""

import enum
from pathlib import Path
from typing import Any, NamedTuple

from tracker.cli.declared import COMMANDS
from tracker.cli.spec import APP_OPTIONS, Command, Param, shape

_REFUSED: Any = object()


class PlainCall(NamedTuple):
    """A plain command line: its command, the app's options given before it and the command's parameters (every
    one, defaults filled in), as typer would pass them."""

    command: Command
    before: dict[str, Any]
    values: dict[str, Any]


def _convert(kind: type, text: str) -> Any:
    """``text`` as click converts it for a parameter of ``kind``; :data:`_REFUSED` where click might refuse it or
    say something of its own."""
    if kind is str:
        return text
    if not text:
        return _REFUSED
    if kind is Path:
        return Path(text)
    if kind is int:
        try:
            return int(text)
        except ValueError:
            return _REFUSED
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        values = {str(m.value): m for m in kind}
        return values.get(text, _REFUSED)
    return _REFUSED


def _options(params: tuple[tuple[str, Param, Any], ...]) -> dict[str, tuple[str, Param, Any]]:
    return {p.flag: (name, p, ann) for name, p, ann in params if p.flag is not None}


def read(args: list[str]) -> PlainCall | None:
    """``args`` as click reads them when they are a plain line (module docstring), else None."""
    command: Command | None = None
    options = APP_OPTIONS
    given: dict[str, list[Any]] = {}
    before: dict[str, Any] = {}
    words: list[str] = []
    rest = iter(args)
    for word in rest:
        if command is None and not word.startswith("-"):
            command = next((c for c in COMMANDS if c.name == word and c.group is None), None)
            if command is None:
                return None
            options = _options(command.params)
            continue
        flag, eq, text = word.partition("=")
        known = options.get(flag) if word.startswith("--") else None
        if known is None:
            if command is None or not word or word.startswith("-"):
                return None
            words.append(word)
            continue
        name, _, ann = known
        kind, many = shape(ann)
        if kind is bool:
            if eq:
                return None
            value: Any = True
        else:
            if not eq:
                following = next(rest, None)
                if following is None:
                    return None
                text = following
            value = _convert(kind, text)
            if value is _REFUSED:
                return None
        if command is None:
            if name in before:
                return None
            before[name] = value
            continue
        if name in given and not many:
            return None
        given.setdefault(name, []).append(value)
    if command is None:
        return None
    return _call(command, before, given, words)


def _call(command: Command, before: dict[str, Any], given: dict[str, list[Any]], words: list[str]) -> PlainCall | None:
    """The command's values from its options given and its argument words, or None where click would refuse them
    (a required parameter missing, too many arguments) or convert them otherwise."""
    values: dict[str, Any] = {}
    for name, param, ann in command.params:
        kind, many = shape(ann)
        if param.flag is None:  # one argument at most: no command declares two
            taken = [_convert(kind, w) for w in words] if many else words[:1] and [_convert(kind, words[0])]
            words = [] if many else words[1:]
            if _REFUSED in taken or (param.required and not taken):
                return None
            values[name] = taken if many else (taken[0] if taken else param.default)
        elif name in given:
            values[name] = given[name] if many else given[name][0]
        elif param.required:
            return None
        else:
            values[name] = param.default
    if words:  # more arguments than the command takes
        return None
    return PlainCall(command, before, values)
