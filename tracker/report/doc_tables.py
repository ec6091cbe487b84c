"""Generated results tables: ``results`` blocks in Markdown docs and the tables rendered from them (pure).

A doc declares a table with a fenced ``results`` block (TOML, validated by :mod:`tracker.plans.table_schema`); the
tracker owns the region right after it (:mod:`tracker.plans.regions`: markers, checksum, hand edits refused) and
writes there the table rendered from the newest result run that holds the table's cases, with one caption line
naming that run's file, commit, machine and time, the statistic and the sample counts. So a figure quoted in a
doc is never copied by hand: it is the result file's, recomputed from its raw samples, and ``tracker check``
fails when the doc no longer says what the newest run says.

Everything here is a function of its arguments: text in, blocks and problems out; blocks and result runs in,
region bodies out. Reading the docs, the configuration and the result files is :mod:`tracker.report.doc_files`'.
Text that comes from data (parameter values, labels, host names, file names) is written inert: it can neither
split a table cell, nor start a new line, nor become HTML, a link or emphasis (:func:`cell_text`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, Sequence
from datetime import timedelta
from typing import Any, NamedTuple

from tracker.core.bench_verdict import fmt_num, fmt_params, matches, on_hardware, same_value
from tracker.core.model import ResultCase, ResultRun
from tracker.core.stats import compute_stat
from tracker.errors import ExitCode, TrackerError
from tracker.plans.regions import Region

INFO = "results"  # the fence's info string
MAX_CELL = 120  # characters of one value shown in a cell or caption (a longer one is cut, with an ellipsis)
Scalar = str | int | float | bool


class DocTableError(TrackerError):
    """A ``results`` block that cannot be read or rendered, each problem ``path:line: message``. Like an invalid
    plan file (exit 2): the declaration is wrong, nothing is written."""

    exit_code = ExitCode.INVALID_PLANS

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class TableSpec(NamedTuple):
    """One validated ``results`` block (docs/reference.md, "Generated results tables"); lines are 1-based."""

    path: str  # the doc, as messages name it
    number: int  # 1-based among the doc's results blocks: the region's key is ``results:<number>``
    line: int  # the opening fence
    end_line: int  # the closing fence: the region follows it
    benchmark: str
    metric: str
    where: dict[str, Scalar]
    hardware: str | None
    rows: tuple[str, ...]
    columns: str | None
    values: dict[str, tuple[Scalar, ...]]
    labels: dict[str, str]
    stat: str
    digits: int | None
    second: str | None
    percent: bool

    @property
    def key(self) -> str:
        """The key of the region this block owns."""
        return f"{INFO}:{self.number}"


class Block(NamedTuple):
    """A top-level ``results`` fence: its TOML text, opening and closing lines (1-based), whether it is closed."""

    content: str
    line: int
    end_line: int
    closed: bool


def doc_path_problem(doc: str) -> str | None:
    """Why ``doc`` cannot name a doc of the repository, or None: it must be a relative POSIX path that stays inside
    it, without empty, ``.`` or ``..`` segments or control characters."""
    if not doc or any(ord(c) < 32 or ord(c) == 127 for c in doc):
        return "is empty or holds a control character"
    if doc.startswith(("/", "~")) or "\\" in doc or re.match(r"^[A-Za-z]:", doc):
        return "is not a relative POSIX path"
    if any(part in ("", ".", "..") for part in doc.split("/")):
        return "has an empty, '.' or '..' segment (write the path from the repository root)"
    return None


# --- finding and validating blocks ---------------------------------------------------------------------------------


def may_hold_blocks(text: str) -> bool:
    """Could ``text`` hold a ``results`` block? (Cheap and generous: the Markdown parser decides when it says yes.)"""
    return f"```{INFO}" in text or f"~~~{INFO}" in text


def find_blocks(text: str) -> list[Block]:
    """Every top-level ``results`` fence of ``text``; fences inside lists, quotes or other code are prose."""
    from tracker.plans.parse import fenced_blocks  # the only module that imports markdown-it-py

    return [Block(b.content, b.line, b.end_line, b.closed) for b in fenced_blocks(text.removeprefix("\ufeff"), (INFO,))]


_KEY_LINE = r"^\s*(?:\[\s*)?[\"']?{key}[\"']?\s*(?:=|\.|\])"


def _key_line(block: Block, loc: tuple[str | int, ...]) -> int:
    """The file line of the key a problem is about (its ``key =`` line or ``[key]`` header), else the fence's."""
    if not loc or not isinstance(loc[0], str):
        return block.line
    pattern = re.compile(_KEY_LINE.format(key=re.escape(loc[0])))
    for i, line in enumerate(block.content.split("\n")):
        if pattern.match(line):
            return block.line + 1 + i
    return block.line


def _spec(path: str, index: int, block: Block, fields: Mapping[str, Any]) -> TableSpec:
    second = fields.get("second") or {}
    return TableSpec(
        path,
        index,
        block.line,
        block.end_line,
        fields["benchmark"],
        fields["metric"],
        dict(fields.get("where") or {}),
        fields.get("hardware"),
        tuple(fields["rows"]),
        fields.get("columns"),
        {k: tuple(v) for k, v in (fields.get("values") or {}).items()},
        dict(fields.get("labels") or {}),
        fields.get("stat", "median"),
        fields.get("digits"),
        second.get("metric"),
        bool(second.get("percent", False)),
    )


def parse_tables(
    path: str, text: str, known: MutableMapping[str, Any] | None = None
) -> tuple[list[TableSpec], list[str]]:
    """The ``results`` blocks of one doc's ``text`` as table specs, and every problem (``path:line: message``).

    ``known``: validated blocks by the sha256 of their TOML text (plain fields, as a cache holds them); blocks
    validated now are added to it, so that a warm run neither validates again nor imports pydantic.
    """
    from tracker.base.hashing import sha256_hex
    from tracker.plans.parse import Block as ParseBlock
    from tracker.plans.parse import load_toml

    specs: list[TableSpec] = []
    problems: list[str] = []
    for index, block in enumerate(find_blocks(text) if may_hold_blocks(text) else [], 1):
        if not block.closed:
            problems.append(f"{path}:{block.line}: {INFO} block is not closed")
            continue
        sha = sha256_hex(block.content.encode("utf-8", "surrogatepass"))
        fields = known.get(sha) if known is not None else None
        if not isinstance(fields, dict):
            data = load_toml(path, ParseBlock(INFO, block.content, block.line, block.end_line, True), problems)
            if data is None:
                continue
            from tracker.plans.table_schema import validate_table

            fields, errs = validate_table(data)
            problems += [f"{path}:{_key_line(block, loc)}: {INFO} block: {msg}" for loc, msg in errs]
            if fields is None:
                continue
            if known is not None:
                known[sha] = fields
        try:
            specs.append(_spec(path, index, block, fields))
        except (KeyError, TypeError, AttributeError):  # a cached entry this code did not write: validate again
            if known is not None:
                known.pop(sha, None)
                return parse_tables(path, text, known)
            raise
    return specs, problems


# --- choosing the run ---------------------------------------------------------------------------------------------


def _selected(spec: TableSpec, metric: str, run: ResultRun) -> list[ResultCase]:
    """The run's cases of ``metric`` that the table shows: ``where`` holds, and each listed parameter is one of its
    ``values``."""
    return [
        c
        for c in run.cases
        if c.metric == metric
        and matches(c.params, spec.where)
        and all(name in c.params and any(same_value(c.params[name], v) for v in vs) for name, vs in spec.values.items())
    ]


def holds(spec: TableSpec, run: ResultRun) -> bool:
    """Does ``run`` hold the table's cases: its benchmark, on the hardware asked for, with a case of the metric for
    every listed value of every parameter (a run of part of the cases never replaces a whole one)?"""
    if run.benchmark != spec.benchmark or (spec.hardware and not on_hardware(spec.hardware, run.gpu)):
        return False
    cases = _selected(spec, spec.metric, run)
    return bool(cases) and all(
        any(same_value(c.params[name], v) for c in cases) for name, vs in spec.values.items() for v in vs
    )


def newest_holding(spec: TableSpec, runs: Sequence[ResultRun]) -> ResultRun | None:
    """The run the table shows: the newest that holds its cases, by recorded time, then file path (the rule the
    bench gates use, docs/evidence.md)."""
    return max((r for r in runs if holds(spec, r)), key=lambda r: (r.time, r.path), default=None)


# --- the table as data --------------------------------------------------------------------------------------------


class Table(NamedTuple):
    """A rendered table before Markdown: the run it shows (None: none holds the cases, or ``problem`` says why
    not), the header and rows as plain text, and the caption's facts."""

    spec: TableSpec
    run: ResultRun | None
    header: list[str]
    rows: list[list[str]]
    units: list[str]
    samples: tuple[int, int]  # fewest and most samples of a shown case
    problem: str | None = None


_MISSING = ("", None)  # the typed value of a parameter a case does not have


def _typed(params: Mapping[str, Any], name: str) -> tuple[str, Any]:
    return (type(params[name]).__name__, params[name]) if name in params else _MISSING


def value_text(value: Any) -> str:
    """A parameter value as a cell shows it (``fmt_params``'s form: a string that reads as a number is quoted)."""
    return fmt_params({"v": value}).removeprefix("v=")


def number_text(x: float, digits: int | None) -> str:
    """A figure as the tables and inline figures write it: ``digits`` decimals, else three significant digits
    (:func:`fmt_num`); a magnitude from 1e15 up in exponent form, so that no value gives a 300-digit cell."""
    if digits is not None:
        return f"{x:.{digits}f}" if abs(x) < 1e15 or x != x else f"{x:.{digits}e}"
    return fmt_num(x) if not abs(x) >= 1e15 else f"{x:.3g}"  # `not >=`: NaN goes to fmt_num


def _ranks(spec: TableSpec, name: str, keys: list[tuple[str, Any]]) -> dict[tuple[str, Any], int]:
    """Order of one parameter's values: as its ``values`` list gives them, then as ``keys`` (what the run measured, in
    its order) first holds the others."""
    listed = [(type(v).__name__, v) for v in spec.values.get(name, ())]
    order = {k: i for i, k in enumerate(listed)}
    for k in keys:
        order.setdefault(k, len(order))
    return order


def _grid(
    spec: TableSpec, metric: str, run: ResultRun
) -> tuple[dict[tuple[tuple[str, Any], ...], dict[tuple[str, Any], ResultCase]], str | None]:
    """{row key: {column key: case}} of ``metric``; a problem when two cases fall in one cell."""
    grid: dict[tuple[tuple[str, Any], ...], dict[tuple[str, Any], ResultCase]] = {}
    for case in _selected(spec, metric, run):
        row = tuple(_typed(case.params, p) for p in spec.rows)
        col = _typed(case.params, spec.columns) if spec.columns else _MISSING
        other = grid.setdefault(row, {}).get(col)
        if other is not None:
            differ = sorted(
                k for k in {*case.params, *other.params} if not same_value(case.params.get(k), other.params.get(k))
            )
            return grid, (
                f"two {metric} cases of {run.path} fall in one cell ({fmt_params(case.params)}; "
                f"{fmt_params(other.params)}): add {', '.join(repr(k) for k in differ[:3]) or 'a parameter'} "
                "to rows, columns or where"
            )
        grid[row][col] = case
    return grid, None


def build(spec: TableSpec, runs: Sequence[ResultRun], invalid: Sequence[str] = ()) -> Table:
    """The table ``spec`` declares, from the newest of ``runs`` that holds its cases.

    ``invalid``: result files that were rejected (``path: reason``). Any makes the table unrendered, as it makes
    every bench gate unmet: the rejected file could be the newest run, and an older one must not speak for it.
    Raises :class:`DocTableError` (at the block's line) when two cases of the chosen run fall in one cell.
    """
    if invalid:
        more = f" (+{len(invalid) - 1} more)" if len(invalid) > 1 else ""
        return Table(spec, None, [], [], [], (0, 0), f"invalid result file, fix or remove it: {invalid[0]}{more}")
    run = newest_holding(spec, runs)
    if run is None:
        return Table(spec, None, [], [], [], (0, 0))
    grid, problem = _grid(spec, spec.metric, run)
    seconds, problem2 = _grid(spec, spec.second, run) if spec.second else ({}, None)
    if problem or problem2:
        raise DocTableError([f"{spec.path}:{spec.line}: {INFO} block: {problem or problem2}"])
    # Rows in the order the run measured them, grouped by the parameters whose values the block lists.
    listed = [(i, _ranks(spec, p, [])) for i, p in enumerate(spec.rows) if p in spec.values]
    first = {row: n for n, row in enumerate(grid)}
    rows = sorted(grid, key=lambda row: (*(ranks.get(row[i], len(ranks)) for i, ranks in listed), first[row]))
    col_ranks = _ranks(spec, spec.columns, [c for cells in grid.values() for c in cells]) if spec.columns else {}
    cols = sorted(col_ranks, key=col_ranks.__getitem__) if spec.columns else [_MISSING]
    cols = [c for c in cols if any(c in cells for cells in grid.values())]
    header = [spec.labels.get(p, p) for p in spec.rows]
    if spec.columns:
        header += [spec.labels.get(value_text(c[1]), value_text(c[1])) for c in cols]
    else:
        header.append(spec.labels.get(spec.metric, spec.metric))
    body: list[list[str]] = []
    shown: list[ResultCase] = []
    for row in rows:
        line = ["" if k == _MISSING else value_text(k[1]) for k in row]
        for col in cols:
            case = grid[row].get(col)
            if case is None:
                line.append("-")
                continue
            shown.append(case)
            text = number_text(compute_stat(spec.stat, case.samples), spec.digits)
            extra = seconds.get(row, {}).get(col)
            if extra is not None:
                value = compute_stat(spec.stat, extra.samples)
                figure = number_text(100 * value if spec.percent else value, spec.digits)
                text += f" ({figure}%)" if spec.percent else f" ({figure})"
            line.append(text)
        body.append(line)
    counts = [len(c.samples) for c in shown]
    units = list(dict.fromkeys(c.unit for c in shown))
    return Table(spec, run, header, body, units, (min(counts), max(counts)))


# --- Markdown -----------------------------------------------------------------------------------------------------

# Characters with a meaning inline (emphasis, code, links, HTML, entities, strikethrough, math) get a backslash;
# a backslash of the data becomes an entity, so that none can un-escape what follows it (a pipe above all).
_MARKUP = re.compile(r"[\\|`*_\[\]<>&~$!]")


def _visible(text: str, limit: int) -> str:
    """``text`` on one line: characters that are not printable (line breaks, controls, bidi overrides) as escapes
    (``\\n``, ``\\u202e``); cut to ``limit`` characters with an ellipsis."""
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def escape_markup(text: str) -> str:
    """``text`` with every character that has a meaning inline in Markdown escaped: it can neither end a table cell,
    nor become HTML, an entity, a link, an image, code or emphasis. The one definition: the doc tables' cells and
    the Markdown report's ``|md`` (:func:`tracker.report.md_filters.md`) both escape by it."""
    return _MARKUP.sub(lambda m: "&#92;" if m.group(0) == "\\" else "\\" + m.group(0), text)


def cell_text(text: str, limit: int = MAX_CELL) -> str:
    """``text`` as inert Markdown on one line, fit for a table cell: it can neither end the cell, nor start a line,
    nor become HTML, an entity, a link, code or emphasis."""
    return escape_markup(_visible(text, limit))


def code_text(text: str) -> str:
    """``text`` as an inline code span (a file name, a metric) on one line, fenced by more backticks than it holds.
    Used outside tables only: a pipe in a code span would still end a table cell."""
    return code_span(_visible(text, MAX_CELL))


def code_span(text: str) -> str:
    """``text`` (one line, already cut) as a Markdown code span outside a table: fenced by more backticks than any
    run it holds, padded where it starts or ends with one (or is blank); its characters literal."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _when(run: ResultRun) -> str:
    utc = run.time.utcoffset() == timedelta(0)
    return run.time.strftime("%Y-%m-%dT%H:%M:%SZ") if utc else run.time.isoformat()


def caption(table: Table) -> str:
    """The line above a table: which run, which code, which machine, when; which statistic of how many samples."""
    spec, run = table.spec, table.run
    assert run is not None
    commit = f"commit {cell_text(run.commit[:7])}" if run.commit else "an unknown commit"
    state = {True: " (dirty)", False: " (clean)", None: ""}[run.dirty]
    machine = cell_text(run.host) + (f" ({cell_text(run.gpu)})" if run.gpu else "")
    low, high = table.samples
    count = f"{low}" if low == high else f"{low}-{high}"
    units = ", ".join(cell_text(u) for u in table.units)
    text = (
        f"From {code_text(run.path)}: {cell_text(run.benchmark)} at {commit}{state} on {machine}, {_when(run)}. "
        f"The {spec.stat} of {code_text(spec.metric)} in {units} ({count} samples a case)"
    )
    if spec.second:
        text += f"; in parentheses, the {spec.stat} of {code_text(spec.second)}"
        text += " in percent" if spec.percent else ""
    return text + "."


def _not_shown(table: Table) -> str:
    spec = table.spec
    if table.problem is not None:
        return f"*Not rendered*: {cell_text(table.problem, 400)}"
    what = [f"benchmark {code_text(spec.benchmark)}", f"metric {code_text(spec.metric)}"]
    if spec.where:
        what.append(f"where {code_text(fmt_params(spec.where))}")
    if spec.hardware:
        what.append(f"hardware {code_text(spec.hardware)}")
    for name, vs in spec.values.items():
        what.append(f"{cell_text(name)} in {code_text(', '.join(value_text(v) for v in vs))}")
    return "*No result file holds this table's cases yet* (" + ", ".join(what) + ")."


def markdown(table: Table) -> str:
    """The region body: a blank line, the caption, a blank line, the table, a blank line (LF-joined)."""
    if table.run is None:
        return f"\n{_not_shown(table)}\n"
    head = "| " + " | ".join(cell_text(h) for h in table.header) + " |"
    rule = "|" + " --- |" * len(table.header)
    rows = ["| " + " | ".join(cell_text(c) for c in row) + " |" for row in table.rows]
    return "\n".join(["", caption(table), "", head, rule, *rows, ""])


def doc_regions(specs: Sequence[TableSpec], runs: Sequence[ResultRun], invalid: Sequence[str] = ()) -> list[Region]:
    """The regions of one doc: each block's table right after its closing fence. DocTableError (``path:line``) for
    a block whose cases are ambiguous in the run it shows."""
    out: list[Region] = []
    problems: list[str] = []
    for spec in specs:
        try:
            out.append(Region(spec.key, markdown(build(spec, runs, invalid)), spec.end_line))
        except DocTableError as err:
            problems += err.problems
    if problems:
        raise DocTableError(problems)
    return out
