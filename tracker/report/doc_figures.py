"""Generated figures inside prose: an inline declaration the tracker renders in place, cog style (pure).

A sentence of a doc quotes a measured figure by declaring it, and writing nothing by hand between the markers::

    v30 takes <!-- figure metric=verify_attn.time_us impl=cuda ctx=91000 batch=1 heads=8 nodes=64 digits=1 -->
    343.5 us<!-- /figure 3c1f0a2b --> at (1,8,64) 91k.

On GitHub both markers are HTML comments, so the sentence reads "v30 takes 343.5 us at (1,8,64) 91k". The opening
comment names the figure: ``key=value`` words, a value bare (``91000`` is an integer, ``true`` a boolean, ``cuda`` a
string), double-quoted (a string, JSON escapes) or a list ``[5700,23000]``. The keys:

- ``metric`` (required): the result cases' metric. ``benchmark``, ``file`` (a result file's path from the
  repository root), ``commit`` (a prefix of the run's commit), ``machine`` (its host, or a word of its GPU's name):
  which runs may speak; of those, the newest that holds the figure's cases speaks (the rule the tables use).
- any other key: a case parameter the case must have (a list: one of those values, each of which must be measured).
- ``stat`` (median, min, mean, p90; median by default) and ``digits`` (decimals; three significant digits by
  default), as in a ``results`` block (:mod:`tracker.report.doc_tables`' :func:`number_text`, ``compute_stat``).
- ``over.PARAM=value``: a ratio, the figure's case over the same case with ``PARAM`` changed, written ``1.13x``
  (``triton`` over ``cuda``: how many times slower Triton is). A case already at that value is not one of the
  figure's (it would be 1x), a declaration that names that value is refused, and a case in other units divides none.
- ``percent``: the value times 100, written ``45.9%``; ``change`` (with ``over.``): how much larger than the case it
  is divided by, in percent (``1.032x`` is ``3.2%``); ``unit="..."``: the unit written after the number (the
  result file's by default; ``unit=""``: none).
- ``range``: the figure may cover several cases: written ``lowest-highest`` (``25.3-104.6x``), or one number when
  both read alike. Without it, a declaration that matches two cases of the run is refused, naming what differs.

The closing comment holds the first 8 hex digits of the sha256 of the figure, whitespace collapsed (an editor that
re-wraps the line is not an edit): a figure edited by hand is refused (exit 4) unless ``--force``; a new declaration
is written with a bare ``<!-- /figure -->`` and gets its sum from ``tracker update``. Markers inside code (fenced,
indented, or a backtick span) are text, never figures. Only the figure between the markers is ever rewritten. So
that GitHub reads both markers as inline comments, neither may start a line (that would start an HTML block) and the
opening one may not hold ``--``.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Sequence
from typing import NamedTuple

from tracker.base.hashing import sha256_hex
from tracker.core.bench_verdict import fmt_params, matches, on_hardware, same_value
from tracker.core.model import ResultCase, ResultRun
from tracker.core.stats import STATS, compute_stat
from tracker.errors import RegionEditedError
from tracker.report.doc_tables import DocTableError, cell_text, doc_path_problem, number_text

Scalar = str | int | float | bool
MAX_DECLARATION = 8000  # characters of one opening comment
MAX_DIGITS = 9
FLAGS = ("percent", "change", "range")
OPTIONS = ("metric", "benchmark", "file", "commit", "machine", "stat", "digits", "unit")
NO_RESULT = "(no result file holds this figure yet)"

_TOKEN = re.compile(r"`+|<!--[ \t\r\n]*/?figure(?![\w-])")
# What Markdown reads before a backtick could open a code span: a backslash escape, an inline HTML comment, an
# autolink, an HTML tag (a backtick in them opens nothing). A figure marker is tried first.
_SKIP = re.compile(
    r"""\\[!-/:-@\[-`{-~]"""
    r"|<!--(?![ \t\r\n]*/?figure(?![\w-]))"
    r"|<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>"
    r"""|</?[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*/?>"""
)
_SCAN = re.compile(rf"{_TOKEN.pattern}|{_SKIP.pattern}")
_MARKER = re.compile(r"<!--[ \t\r\n]*/?figure(?![\w-])")
_CLOSER = re.compile(r"<!--[ \t]*/figure(?:[ \t]+([0-9a-f]{8}))?[ \t]*-->")
_WORD = re.compile(r"""([A-Za-z_][\w.-]*)(?:=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|[^\s"\[\]]+))?""")
_ITEM = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|[^,"\s\[\]]+)\s*(,|$)""")
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n|\r[ \t]*\r")
_BLANK_STARTS = re.compile(rf"(?={_BLANK_LINE.pattern})")  # every place one starts, overlapping ones too
_SPACES = re.compile(r"[ \t]*")
_NEWLINE = re.compile(r"\r\n|\r|\n")


class Figure(NamedTuple):
    """One validated declaration, as :func:`find_figures` reads it (offsets into the doc's text, line 1-based)."""

    line: int
    start: int  # the opening comment's first character
    body: tuple[int, int]  # the figure between the markers
    end: int  # after the closing comment
    sum: str | None  # the closing comment's checksum (None: never rendered)
    metric: str
    where: dict[str, Scalar]
    among: dict[str, tuple[Scalar, ...]]
    over: dict[str, Scalar]
    sources: dict[str, str]  # benchmark, file, commit, machine
    stat: str
    digits: int | None
    unit: str | None
    percent: bool
    range: bool
    change: bool = False


def checksum(body: str) -> str:
    """The closing marker's sum: 8 hex digits of the sha256 of the figure with its whitespace collapsed."""
    return sha256_hex(" ".join(body.split()).encode("utf-8", "surrogatepass"))[:8]


def may_hold_figures(text: str) -> bool:
    """Could ``text`` hold a figure marker? (Cheap and generous: the scan decides when it says yes.)"""
    return "figure" in text and "<!--" in text


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced and indented code blocks (asked of the Markdown parser)."""
    from tracker.plans.parse import code_ranges  # the only module that imports markdown-it-py

    starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
    end = len(text)
    return [(starts[min(a, len(starts) - 1)], starts[b] if b < len(starts) else end) for a, b in code_ranges(text)]


class _Lines:
    """Where lines, paragraphs (blank lines) and code blocks are, found once: the scan asks for each marker and
    backtick, and a search per question would take quadratic time on a long paragraph."""

    def __init__(self, text: str, code: list[tuple[int, int]] | None = None) -> None:
        self.size = len(text)
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        self.blanks = [m.start() for m in _BLANK_STARTS.finditer(text)]
        merged: list[tuple[int, int]] = []
        for a, b in sorted(code or ()):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        self.code = merged
        self.code_starts = [a for a, _ in merged]

    def of(self, pos: int) -> int:
        """The line (1-based) of ``pos``."""
        return bisect.bisect_right(self.starts, pos)

    def start_of(self, pos: int) -> int:
        """Where the line of ``pos`` starts."""
        return self.starts[self.of(pos) - 1]

    def blank_after(self, pos: int) -> int:
        """Where the first blank line at or after ``pos`` starts (the end of the paragraph), or the text's end."""
        i = bisect.bisect_left(self.blanks, pos)
        return self.blanks[i] if i < len(self.blanks) else self.size

    def code_end(self, pos: int) -> int | None:
        """The end of the code block ``pos`` is in, or None."""
        i = bisect.bisect_right(self.code_starts, pos) - 1
        return self.code[i][1] if i >= 0 and pos < self.code[i][1] else None


def _value(text: str) -> Scalar:
    if text.startswith('"'):
        value = json.loads(text)  # the word's pattern makes it a JSON string; ValueError for a bad escape
        if not isinstance(value, str):
            raise ValueError("not a string")
        return value
    if text in ("true", "false"):
        return text == "true"
    if _INT.fullmatch(text):
        return int(text)  # ValueError past Python's 4,300 digits
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _values(text: str) -> tuple[Scalar, ...]:
    inner = text[1:-1]
    if not inner.strip():
        raise ValueError("an empty list")
    out: list[Scalar] = []
    pos = 0
    while pos < len(inner):
        m = _ITEM.match(inner, pos)
        if m is None or m.end() == pos:
            raise ValueError("a list is [value, value, ...] of bare or double-quoted values")
        out.append(_value(m.group(1)))
        pos = m.end()
    return tuple(out)


def _declaration(text: str, fields: dict[str, object]) -> str | None:
    """Read the words of an opening comment into ``fields``; the first problem, or None."""
    pos = 0
    seen: set[str] = set()
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _WORD.match(text, pos)
        if m is None or (m.end() < len(text) and not text[m.end()].isspace()):
            word = text[pos:].split(None, 1)[0]
            return f"cannot read {word[:40]!r}: write key=value words (quote a value with spaces)"
        pos = m.end()
        key, raw = m.group(1), m.group(2)
        if key in seen:
            return f"{key!r} is given twice"
        seen.add(key)
        if raw is None:
            if key not in FLAGS:
                return f"{key!r} has no value (flags: {', '.join(FLAGS)})"
            fields[key] = True
            continue
        if key in FLAGS:
            return f"{key!r} is a flag: write it without a value"
        try:
            value: Scalar | tuple[Scalar, ...] = _values(raw) if raw.startswith("[") else _value(raw)
        except ValueError as err:
            return f"{key}: cannot read the value {raw[:40]!r} ({err})"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{key}: {raw!r} is not a finite number"
        if key in OPTIONS or key.startswith("over."):
            if isinstance(value, tuple):
                return f"{key!r} takes one value, not a list"
            if key in OPTIONS and key != "digits" and not isinstance(value, str):
                value = raw  # a commit or machine that reads as a number (1d9b99, 200) is still text
        fields[key] = value
    return None


def _figure(found: tuple[int, int, int, int, int, str | None], text: str, line: int) -> Figure | str:
    start, decl_end, body_end, end, body_start, sum_ = found
    fields: dict[str, object] = {}
    problem = _declaration(text[text.index("figure", start) + 6 : decl_end - 3], fields)
    if problem:
        return problem
    metric = fields.pop("metric", None)
    if not isinstance(metric, str) or not metric:
        return "metric=... is required (the result cases' metric)"
    stat = fields.pop("stat", "median")
    if stat not in STATS:
        return f"stat must be one of {', '.join(STATS)}, not {str(stat)[:40]!r}"
    digits = fields.pop("digits", None)
    whole = isinstance(digits, int) and not isinstance(digits, bool)
    if digits is not None and not (whole and 0 <= digits <= MAX_DIGITS):  # type: ignore[operator]
        return f"digits must be a whole number from 0 to {MAX_DIGITS}"
    unit = fields.pop("unit", None)
    sources: dict[str, str] = {k: str(fields.pop(k)) for k in ("benchmark", "file", "commit", "machine") if k in fields}
    if "commit" in sources and not re.fullmatch(r"[0-9a-f]{4,40}", sources["commit"]):
        return "commit must be 4 to 40 hex digits (a prefix of the run's commit)"
    if "file" in sources and (why := doc_path_problem(sources["file"])) is not None:
        return f"file {sources['file'][:80]!r} {why}"
    percent, ranged = bool(fields.pop("percent", False)), bool(fields.pop("range", False))
    change = bool(fields.pop("change", False))
    if change and (percent or not any(k.startswith("over.") for k in fields)):
        return "change needs over.PARAM=value (the case it is compared with), and is a percentage already"
    over = {k.removeprefix("over."): v for k, v in fields.items() if k.startswith("over.")}
    if "" in over:
        return "over. needs a parameter name (over.impl=cuda)"
    params = {k: v for k, v in fields.items() if not k.startswith("over.")}
    where = {k: v for k, v in params.items() if not isinstance(v, tuple)}
    among = {k: v for k, v in params.items() if isinstance(v, tuple)}
    own = {k: (where[k],) if k in where else among.get(k, ()) for k in over}
    itself = next((k for k, v in over.items() if any(same_value(x, v) for x in own[k])), None)
    if itself is not None:
        return f"over.{itself} names the figure's own {itself}: a case over itself is 1x"
    return Figure(
        line,
        start,
        (body_start, body_end),
        end,
        sum_,
        metric,
        {k: v for k, v in where.items() if isinstance(v, Scalar)},
        {k: v for k, v in among.items() if isinstance(v, tuple)},
        {k: v for k, v in over.items() if isinstance(v, Scalar)},
        sources,
        str(stat),
        digits if isinstance(digits, int) else None,
        None if unit is None else str(unit),
        percent,
        ranged,
        change,
    )


def _starts_line(text: str, pos: int, lines: _Lines | None = None) -> bool:
    start = (lines or _Lines(text)).start_of(pos)
    found = _SPACES.match(text, start, pos)
    return found is not None and found.end() == pos


def _markup_problem(text: str, start: int, decl_end: int, closer: int, lines: _Lines | None = None) -> str | None:
    """Why the markers would not read as inline HTML comments on GitHub (cmark-gfm), or None. A comment that starts
    a line starts an HTML block, which ends the paragraph and shows the rest of the line as HTML; a comment whose
    text holds ``--`` or ends with ``-`` is no comment and shows as text."""
    inner = text[start + 4 : decl_end - 3]
    if "--" in inner or inner.endswith("-") or inner.startswith((">", "->")):
        return "the opening comment may not hold '--' or end with '-' (GitHub would show it as text)"
    if _starts_line(text, start, lines) or _starts_line(text, closer, lines):
        which = "opening comment" if _starts_line(text, start, lines) else "end marker"
        return (
            f"the {which} starts a line, where Markdown reads an HTML block that ends the paragraph: put a word "
            "before it on its line"
        )
    return None


def find_figures(path: str, text: str) -> tuple[list[Figure], list[str]]:
    """Every figure declared in ``text`` outside code, and every problem (``path:line: figure: ...``): a marker
    that is not closed, a figure without its end marker, a nested or stray marker, a declaration that cannot be
    read."""
    if not may_hold_figures(text) or _MARKER.search(text) is None:
        return [], []
    lines = _Lines(text, _code_spans(text))
    figures: list[Figure] = []
    problems: list[str] = []
    pos = 0
    while (m := _SCAN.search(text, pos)) is not None:
        inside = lines.code_end(m.start())
        if inside is not None:
            pos = inside
            continue
        token = m.group(0)
        if token.startswith("<!--") and not _MARKER.match(token):  # an inline comment: to its end, in its paragraph
            ends = text.find("-->", m.end(), lines.blank_after(m.end()))
            pos = ends + 3 if ends >= 0 else m.end()
            continue
        if token.startswith(("\\", "<")) and not token.startswith("<!--"):  # an escape, an autolink, a tag
            pos = m.end()
            continue
        if token.startswith("`"):  # a code span runs to the next run of as many backticks, within its paragraph
            close = re.compile(rf"(?<!`){token}(?!`)").search(text, m.end(), lines.blank_after(m.end()))
            pos = close.end() if close else m.end()
            continue
        line = lines.of(m.start())
        where = f"{path}:{line}: figure"
        if "/" in token:
            problems.append(f"{where}: an end marker without its figure (<!-- figure ... --> before it)")
            pos = m.end()
            continue
        decl_end = text.find("-->", m.end(), min(m.end() + MAX_DECLARATION, lines.blank_after(m.end())))
        if decl_end < 0:
            problems.append(
                f"{where}: the opening comment is not closed by --> in its paragraph (within {MAX_DECLARATION} "
                "characters)"
            )
            pos = m.end()
            continue
        decl_end += 3
        nxt = text.find("<!--", decl_end, lines.blank_after(decl_end))
        closer = _CLOSER.match(text, nxt) if nxt >= 0 else None
        if closer is None:
            nested = nxt >= 0 and _TOKEN.match(text, nxt) is not None
            problems.append(
                f"{where}: "
                + ("a figure marker inside a figure" if nested else "no end marker <!-- /figure --> in its paragraph")
            )
            pos = decl_end
            continue
        found = (m.start(), decl_end, nxt, closer.end(), decl_end, closer.group(1))
        fig = _markup_problem(text, m.start(), decl_end, nxt, lines) or _figure(found, text, line)
        if isinstance(fig, str):
            problems.append(f"{where}: {fig}")
        else:
            figures.append(fig)
        pos = closer.end()
    return figures, problems


# --- rendering ------------------------------------------------------------------------------------------------------


def _selected(fig: Figure, run: ResultRun) -> list[ResultCase]:
    """The run's cases of the figure; for a ratio, not those the ratio would divide by themselves."""
    return [
        c
        for c in run.cases
        if c.metric == fig.metric
        and matches(c.params, fig.where)
        and all(k in c.params and any(same_value(c.params[k], v) for v in vs) for k, vs in fig.among.items())
        and not (fig.over and matches(c.params, fig.over))
    ]


def _denominator(fig: Figure, run: ResultRun, case: ResultCase) -> ResultCase | None:
    want = {**case.params, **fig.over}
    found = [
        c
        for c in run.cases
        if c.metric == fig.metric and c.unit == case.unit and c.params.keys() == want.keys() and matches(c.params, want)
    ]  # a case in other units is no denominator: ms over us is not 1x
    return found[0] if len(found) == 1 else None


def _may_speak(fig: Figure, run: ResultRun) -> bool:
    s = fig.sources
    return (
        ("benchmark" not in s or run.benchmark == s["benchmark"])
        and ("file" not in s or run.path == s["file"])
        and ("commit" not in s or (run.commit or "").startswith(s["commit"]))
        and ("machine" not in s or run.host == s["machine"] or on_hardware(s["machine"], run.gpu))
    )


def holds(fig: Figure, run: ResultRun) -> bool:
    """Does ``run`` hold the figure: a run that may speak, with a case for every listed value (and, for a ratio,
    the case each is divided by)?"""
    if not _may_speak(fig, run):
        return False
    cases = _selected(fig, run)
    return (
        bool(cases)
        and all(any(same_value(c.params[k], v) for c in cases) for k, vs in fig.among.items() for v in vs)
        and (not fig.over or all(_denominator(fig, run, c) is not None for c in cases))
    )


def render(fig: Figure, runs: Sequence[ResultRun], invalid: Sequence[str] = ()) -> tuple[str, str | None]:
    """The figure's text, from the newest run that holds it, and a problem about the declaration (None: none)."""
    if invalid:
        return "(not rendered: an invalid result file, see tracker check)", None
    if "file" in fig.sources and not any(r.path == fig.sources["file"] for r in runs):
        return NO_RESULT, f"file {fig.sources['file'][:80]!r} is not a result file of this repository"
    if "commit" in fig.sources:  # a prefix as short as 4 digits: two commits' runs may share it, as git refuses
        named = sorted({r.commit for r in runs if r.commit and r.commit.startswith(fig.sources["commit"])})
        if len(named) > 1:
            shown = ", ".join(c[:12] for c in named[:3])
            return (
                NO_RESULT,
                f"commit {fig.sources['commit']} is a prefix of {len(named)} runs' commits ({shown}): give more digits",
            )
    run = max((r for r in runs if holds(fig, r)), key=lambda r: (r.time, r.path), default=None)
    if run is None:
        return NO_RESULT, None
    cases = _selected(fig, run)
    if len(cases) > 1 and not fig.range:
        a, b = cases[0].params, cases[1].params
        differ = sorted(k for k in {*a, *b} if not same_value(a.get(k), b.get(k)))
        return NO_RESULT, (
            f"{len(cases)} cases of {run.path} match ({fmt_params(a)}; {fmt_params(b)}): name "
            f"{', '.join(differ[:3]) or 'a parameter'}, or add the flag range"
        )
    units = {c.unit for c in cases}
    if len(units) > 1 and fig.unit is None and not fig.over and not fig.percent:
        return NO_RESULT, f"the cases of {run.path} are in different units ({', '.join(sorted(units))})"
    values = []
    for case in cases:
        value = compute_stat(fig.stat, case.samples)
        if fig.over:
            under = _denominator(fig, run, case)
            assert under is not None  # holds() saw it
            base = compute_stat(fig.stat, under.samples)
            if base == 0 or not math.isfinite(value / base):
                return NO_RESULT, f"the {fig.stat} of the case it is divided by in {run.path} is 0 or too small"
            value = 100 * (value / base - 1) if fig.change else value / base
        value = 100 * value if fig.percent else value
        if not math.isfinite(value):
            return NO_RESULT, f"the figure of {run.path} is too large to write ({fmt_params(case.params)})"
        values.append(value)
    low, high = number_text(min(values), fig.digits), number_text(max(values), fig.digits)
    text = low if low == high else (f"{low} to {high}" if min(values) < 0 else f"{low}-{high}")
    if fig.percent or fig.change:
        return text + "%", None
    if fig.over:
        return text + "x", None
    unit = cell_text(fig.unit if fig.unit is not None else cases[0].unit, 40)
    return (f"{text} {unit}" if unit else text), None


def rewrite_figures(
    path: str, text: str, runs: Sequence[ResultRun], invalid: Sequence[str] = (), *, force: bool = False
) -> str:
    """``text`` with every figure rendered in place (the text itself when all are up to date).

    DocTableError (exit 2) for declarations that cannot be read or rendered; RegionEditedError (exit 4) for a figure
    edited by hand unless ``force``. Every byte outside the figures' bodies and closing markers is kept; a figure
    whose text only differs by whitespace (an editor re-wrapped it) is kept as it is."""
    figures, problems = find_figures(path, text)
    edited: list[str] = []
    out: list[str] = []
    pos = 0
    for fig in figures:
        body = text[fig.body[0] : fig.body[1]]
        if fig.sum is not None and checksum(body) != fig.sum and not force:
            edited.append(
                f"{path}:{fig.line}: figure edited by hand (checksum mismatch): write nothing between its markers "
                "but what tracker update writes, or rerun with --force to overwrite it"
            )
            continue
        new, problem = render(fig, runs, invalid)
        if problem is not None:
            problems.append(f"{path}:{fig.line}: figure: {problem}")
            continue
        if " ".join(body.split()) == new and fig.sum == checksum(new):
            continue
        out += [text[pos : fig.body[0]], new, f"<!-- /figure {checksum(new)} -->"]
        pos = fig.end
    if problems:
        raise DocTableError(problems)
    if edited:
        raise RegionEditedError("\n".join(edited))
    return "".join(out) + text[pos:] if out else text


def figure_spans(path: str, text: str) -> list[tuple[int, int]]:
    """Character ranges of every well-formed figure, markers included (what the tracker owns inside prose)."""
    return [(f.start, f.end) for f in find_figures(path, text)[0]]
