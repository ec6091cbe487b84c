"""A strict reader of GitHub Actions workflow commands, as the runner reads them (actions/runner,
``ActionCommand.TryParseV2``): for the tests of ``--format github`` (standard library only)."""

from __future__ import annotations

import re
from typing import NamedTuple

PROPERTY = r"(?:file|line|endLine|col|endColumn|title)=[^,:\r\n]*"
ANNOTATION = re.compile(rf"::(error|warning|notice)(?: ({PROPERTY}(?:,{PROPERTY})*))?::([^\r\n]*)")


class Parsed(NamedTuple):
    level: str
    props: dict[str, str]
    message: str


def unescape_data(text: str) -> str:
    """As the runner unescapes a command's data: its escapes, then ``%25`` last."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse_annotation(line: str) -> Parsed:
    """A line of ``::level props::message``, strictly: nothing else, each property once, every ``%`` an escape."""
    m = ANNOTATION.fullmatch(line)
    assert m is not None, f"not a GitHub annotation: {line!r}"
    level, props, message = m.groups()
    assert re.fullmatch(r"(?:[^%]|%25|%0D|%0A)*", message), f"bad escape in message: {line!r}"
    pairs = [p.split("=", 1) for p in props.split(",")] if props else []
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"a property twice: {line!r}"
    for _, v in pairs:
        assert re.fullmatch(r"(?:[^%]|%25|%0D|%0A|%3A|%2C)*", v), f"bad escape in property: {line!r}"
    parsed = {k: unescape_property(v) for k, v in pairs}
    if "line" in parsed:
        assert parsed["line"].isdigit() and int(parsed["line"]) >= 1, line
    return Parsed(level, parsed, unescape_data(message))


def commands_in(out: str) -> tuple[list[Parsed], list[str]]:
    """(the annotations of ``out``, its other lines); any other line the runner would read as a command (a ``::``
    after leading whitespace, an old ``##[``) fails, except a ``::stop-commands::TOKEN`` ... ``::TOKEN::`` stretch,
    which the runner reads nothing in."""
    annotations: list[Parsed] = []
    others: list[str] = []
    stopped: str | None = None
    for line in out.split("\n"):
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            else:
                others.append(line)
            continue
        if line.startswith("::stop-commands::"):
            stopped = line.removeprefix("::stop-commands::")
            assert re.fullmatch(r"[A-Za-z0-9-]{16,}", stopped), line
            continue
        if line.lstrip().startswith("::"):
            annotations.append(parse_annotation(line))
            continue
        assert "##[" not in line, f"a line the runner reads as a command: {line!r}"
        others.append(line)
    assert stopped is None, "commands stopped and never resumed"
    return annotations, others
