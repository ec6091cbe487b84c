"""The Markdown templates' text filters: :func:`md` (``|md``) makes any text inert in a Markdown table cell or line,
:func:`md_code` (``|md_code``) makes it a code span. :data:`CODE_SPAN` is the one rule of a code span (the HTML report
draws one as ``<code>``). Text only: no jinja2 here.
"""

from __future__ import annotations

import functools
import re

# Characters that end a Markdown table row or a line: each becomes a space in a cell.
_LINE_BREAKS = re.compile("\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
# Control characters (C0, DEL, C1) and the bidirectional controls that reorder the text around them where it is shown
# (a title that makes "regressed" read as "done"): dropped from every text a template writes.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A code span: a backtick run, then text (not empty), then a run of exactly as many backticks (CommonMark's rule);
# :func:`md` keeps one, the HTML report draws one as ``<code>``.
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def drop_controls(text: str) -> str:
    """``text`` without the characters every report drops (:data:`_CONTROL`)."""
    return _CONTROL.sub("", text)


def md(value: object) -> str:
    """``value`` as inert text for a Markdown table cell or line: one line (line breaks become spaces, control
    characters dropped), every character with an inline meaning escaped as the doc tables escape theirs
    (:func:`tracker.report.doc_tables.escape_markup`): no raw HTML, entity, link, image (a tracking pixel in any
    viewer), code span, emphasis or early end of a table cell; a leading ``>`` is no quote. A viewer shows the text as
    given."""
    return _md(value) if type(value) is str else _md(str(value))


def md_line(value: object) -> str:
    """``value`` as :func:`md` makes it, for a line outside any table (a list item): its code spans kept exactly
    as written, since a ``\\|`` a table needs would show as a backslash there."""
    return _md(value if type(value) is str else str(value), table=False)


@functools.lru_cache(maxsize=1 << 14)  # a report repeats its machines, times, files and reasons thousands of times
def _md(value: str, table: bool = True) -> str:
    from tracker.report.doc_tables import escape_markup

    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ", value))
    out: list[str] = []
    done = 0
    for m in CODE_SPAN.finditer(text):  # a code span stays one (its text is literal): ``bench `attn.time_us` ...``
        span = m.group(0)
        if table:
            span = escape_markup(span) if "\\|" in span else span.replace("|", "\\|")
        out += [escape_markup(text[done : m.start()]), span]
        done = m.end()
    return "".join([*out, escape_markup(text[done:])])


def md_code(value: object) -> str:
    """``value`` as a Markdown code span for a table cell or line: one line, ``|`` escaped (a code span is literal
    text, so ``<`` and ``&`` stay as they are), a fence longer than any run of backticks the text holds. A
    backslash before a ``|`` cannot be kept literal in a table's code span: such text is :func:`md` text instead."""
    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ", str(value)))
    if "\\|" in text:
        return md(text)
    text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
