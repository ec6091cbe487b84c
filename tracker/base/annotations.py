"""GitHub Actions workflow commands, written the way GitHub's runner reads them (pure; ``--format github``).

An annotation is one line: ``::error file=PLAN,line=N,title=TITLE::MESSAGE`` (``warning``, ``notice``). The runner
(actions/runner, ``ActionCommand.TryParseV2``) takes a line that starts with ``::`` after its leading whitespace, splits
the command from its data at the next ``::``, the properties at ``,`` and each at its first ``=``, then unescapes
``%0D``, ``%0A`` (and in a property ``%3A``, ``%2C``) before ``%25``. So the data is escaped ``%`` first (``%25``),
then ``\\r`` (``%0D``) and ``\\n`` (``%0A``); a property also ``:`` (``%3A``) and ``,`` (``%2C``): a plan path or
title holding ``::``, ``,`` or a line break stays inside its annotation and starts no other.

A line of ours that is no annotation must not be read as a command either: the runner also takes the older
``##[error]MESSAGE`` anywhere in a line. :func:`plain` makes such a line inert. Output nobody here controls (pytest's,
during ``verify``) goes between :func:`stop_commands` and its resume line, which the runner honours: no command in
between is run.
"""

from __future__ import annotations

import secrets
from typing import NamedTuple

LEVELS = ("error", "warning", "notice")


def escape_data(text: str) -> str:
    """A command's message as the runner's ``escapeData`` writes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property's value as the runner's ``escapeProperty`` writes it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class Annotation(NamedTuple):
    """One annotation: its level (:data:`LEVELS`), the message, where (a file relative to the repository root, a
    1-based line) and a title."""

    level: str
    message: str
    file: str | None = None
    line: int | None = None
    title: str | None = None

    def command(self) -> str:
        """The workflow command line (no line break)."""
        if self.level not in LEVELS:
            raise ValueError(f"not an annotation level: {self.level!r}")
        props = [("file", self.file), ("line", None if self.line is None else str(self.line)), ("title", self.title)]
        shown = ",".join(f"{k}={escape_property(v)}" for k, v in props if v is not None and v != "")
        return f"::{self.level}{' ' + shown if shown else ''}::{escape_data(self.message)}"


def plain(text: str) -> str:
    """One line of text that the runner reads as no command: its line breaks as spaces, a leading ``::`` (after
    whitespace) and any ``##[`` with a space inside them."""
    line = " ".join(text.splitlines()) if text else ""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        line = line[: len(line) - len(stripped)] + ": :" + stripped[2:]
    return line.replace("##[", "## [")


def stop_commands() -> tuple[str, str]:
    """(the line that stops the runner reading commands, the line that resumes it): a fresh token each time, which
    output printed in between cannot guess."""
    token = "tracker-" + secrets.token_hex(16)
    return f"::stop-commands::{token}", f"::{token}::"
