"""Plan files -> :class:`tracker.core.model.Plan`, with ``path:line: message`` problems.

The only module that imports markdown-it-py: fenced blocks and their line numbers come from
``Token.map``, never from regexes over the Markdown. Inside a block (TOML), a problem's line is
found by locating its key: ``[[gate]]`` headers in order, then ``key =`` lines.
"""

from __future__ import annotations

import bisect
import re
import tomllib
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt

from tracker.core.model import Phase, Plan
from tracker.plans import schema

KINDS = ("plan", "phase")
_TOML_POS = re.compile(r"\s*\(at line (\d+), column \d+\)$|\s*\(at end of document\)$")
_TABLE = re.compile(r"^\s*\[")
_GATE_HEADER = re.compile(r"^\s*\[\[\s*gate\s*\]\]")
# Block structure is all we read: skipping inline parsing (emphasis, links...) makes a cold
# parse several times faster.
_MD = MarkdownIt("commonmark").disable(["inline", "text_join"])


@dataclass(frozen=True)
class Block:
    """A top-level fenced block whose info string is ``plan`` or ``phase``. Lines are 1-based."""

    kind: str
    content: str
    line: int  # opening fence
    end_line: int  # closing fence (or last line, when unclosed)
    closed: bool


def fenced_blocks(text: str, kinds: tuple[str, ...] = KINDS) -> list[Block]:
    """Every top-level fence in ``text`` whose info string starts with one of ``kinds`` (``plan``/``phase`` by
    default; ``results`` for the docs' tables); other fences and nested ones are prose."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[Block] = []
    for tok in _MD.parse(text):
        if tok.type != "fence" or tok.level != 0 or tok.map is None:
            continue
        info = tok.info.split()
        if not info or info[0] not in kinds:
            continue
        start, stop = tok.map
        last = lines[stop - 1].strip() if stop - 1 < len(lines) else ""
        closed = stop - start >= 2 and last.startswith(tok.markup) and set(last) <= {tok.markup[0]}
        out.append(Block(info[0], tok.content, start + 1, stop, closed))
    return out


def nested_blocks(text: str) -> list[tuple[str, int]]:
    """(kind, 1-based line of the opening fence) of every ``plan``/``phase`` fence inside a list item or a block
    quote: prose, never read (only top-level fences are), which ``tracker lint`` warns about."""
    out: list[tuple[str, int]] = []
    for tok in _MD.parse(text):
        if tok.type != "fence" or tok.level == 0 or tok.map is None:
            continue
        info = tok.info.split()
        if info and info[0] in KINDS:
            out.append((info[0], tok.map[0] + 1))
    return out


def code_ranges(text: str) -> list[tuple[int, int]]:
    """0-based ``[start, stop)`` line ranges of every fenced or indented code block, nested ones too."""
    toks = _MD.parse(text.removeprefix("\ufeff"))
    return [(t.map[0], t.map[1]) for t in toks if t.type in ("fence", "code_block") and t.map is not None]


class _Lines:
    """A block's lines with its ``[[gate]]`` headers and table headers found once: each problem's line is then
    found within its own gate's lines, so locating every gate of a phase costs time linear in the block
    (rescanning the block per gate made 5,000 gates cost 13 s)."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.lines = block.content.split("\n")
        self.tables = [i for i, s in enumerate(self.lines) if _TABLE.match(s)]
        self.gates = [i for i in self.tables if _GATE_HEADER.match(self.lines[i])]

    def key_line(self, loc: schema.Loc) -> int:
        """Best file line for a validation problem at ``loc`` inside the block."""
        block, lines = self.block, self.lines
        lo, hi = 0, len(lines)
        keys = list(loc)
        if len(keys) >= 2 and keys[0] == "gate" and isinstance(keys[1], int):
            if keys[1] >= len(self.gates):
                return block.line
            lo = self.gates[keys[1]]
            after = bisect.bisect_right(self.tables, lo)
            hi = self.tables[after] if after < len(self.tables) else len(lines)
            keys = keys[2:]
            if not keys:
                return block.line + 1 + lo
        elif keys:
            hi = self.tables[0] if self.tables else len(lines)
        if keys and isinstance(keys[0], str):
            pat = re.compile(rf"^\s*\"?{re.escape(keys[0])}\"?\s*=")
            for i in range(lo, hi):
                if pat.match(lines[i]):
                    return block.line + 1 + i
        return block.line + 1 + lo if lo else block.line


def _key_line(block: Block, loc: schema.Loc) -> int:
    """Best file line for a validation problem at ``loc`` inside ``block`` (one lookup; many: :class:`_Lines`)."""
    return _Lines(block).key_line(loc)


# Arrays and tables nested deeper than this are refused before tomllib sees them: its parser recurses once
# per level (500 levels raised RecursionError), and no plan key nests more than three.
MAX_TOML_DEPTH = 32
_TOML_SIGNIFICANT = re.compile(r"\"\"\"|'''|[\"'#\[\]{}\n]")


def _string_end(text: str, pos: int, quote: str) -> int:
    """Index just after the TOML string whose opening ``quote`` ends at ``pos``. A single-line string that
    is not closed on its line ends there (the TOML is invalid and tomllib says so); one never closed ends
    the text."""
    while True:
        end = text.find(quote, pos)
        if len(quote) == 1:
            newline = text.find("\n", pos)
            if newline != -1 and (end == -1 or newline < end):
                return newline
        if end == -1:
            return len(text)
        before = end
        while before > pos and text[before - 1] == "\\":
            before -= 1
        if quote[0] == '"' and (end - before) % 2:  # an escaped quote in a basic string
            pos = end + 1
            continue
        if len(quote) == 1:
            return end + 1
        run = end
        while run < len(text) and text[run] == quote[0]:
            run += 1
        return end + min(run - end, 5)  # """a""""" is 'a""': up to two quotes before the closing three


def _too_deep_line(content: str, limit: int = MAX_TOML_DEPTH) -> int | None:
    """0-based line of ``content`` where ``[``/``{`` nesting (outside strings and comments) first exceeds
    ``limit``, or None. Linear, and never recursive: it runs before tomllib."""
    depth = line = pos = 0
    while (m := _TOML_SIGNIFICANT.search(content, pos)) is not None:
        token, pos = m.group(), m.end()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > limit:
                return line
        elif token in "]}":
            depth = max(0, depth - 1)
        elif token == "#":
            newline = content.find("\n", pos)
            pos = len(content) if newline == -1 else newline
        else:
            end = _string_end(content, pos, token)
            line += content.count("\n", pos, end)
            pos = end
    return None


def _deeper_than(data: Any, limit: int) -> bool:
    """Does parsed TOML nest deeper than ``limit``? (Dotted keys and table headers nest without brackets.)"""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return False


def load_toml(path: str, block: Block, problems: list[str]) -> dict[str, Any] | None:
    """A block's TOML as a table, with the house's depth and number guards; None after adding its problems."""
    return _loads(path, block, problems)


def _loads(path: str, block: Block, problems: list[str]) -> dict[str, Any] | None:
    """The block's TOML table, or None with a ``path:line:`` problem: invalid TOML, or nested too deeply."""
    too_deep = f"{block.kind} block nests arrays or tables more than {MAX_TOML_DEPTH} levels deep"
    deep_line = _too_deep_line(block.content)
    if deep_line is not None:
        problems.append(f"{path}:{block.line + 1 + deep_line}: {too_deep}")
        return None
    try:
        data = tomllib.loads(block.content)
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = _TOML_POS.search(msg)
        line = block.line + int(m.group(1)) if m and m.group(1) else block.end_line
        problems.append(f"{path}:{line}: invalid TOML in {block.kind} block: {_TOML_POS.sub('', msg)}")
        return None
    except RecursionError:  # a backstop: the scan above keeps tomllib's recursion shallow
        problems.append(f"{path}:{block.line}: {too_deep}")
        return None
    except ValueError as err:  # an integer longer than Python converts (4300 digits)
        line = _first_line(block, lambda s: _LONG_NUMBER.search(s) is not None)
        problems.append(f"{path}:{line}: invalid TOML in {block.kind} block: {err}")
        return None
    if _deeper_than(data, MAX_TOML_DEPTH):  # dotted keys: a.a.a....b = 1
        line = _first_line(block, lambda s: s.split("=", 1)[0].count(".") >= MAX_TOML_DEPTH)
        problems.append(f"{path}:{line}: {too_deep}")
        return None
    return data


_LONG_NUMBER = re.compile(r"[0-9_]{4300}")


def _first_line(block: Block, test: Any) -> int:
    """File line of the first line of ``block`` that passes ``test`` (the opening fence if none does)."""
    for i, text in enumerate(block.content.split("\n")):
        if test(text):
            return block.line + 1 + i
    return block.line


def _fmt(path: str, lines: _Lines, who: str, loc: schema.Loc, msg: str) -> str:
    """``path:line: phase P1 gate 3: msg`` (gates numbered from 1, as ``signoff --gate`` does)."""
    if len(loc) >= 2 and loc[0] == "gate" and isinstance(loc[1], int):
        who = f"{who} gate {loc[1] + 1}"
    return f"{path}:{lines.key_line(loc)}: {who}: {msg}"


def gate_numbers(text: str, phase: Phase) -> dict[int, int]:
    """``{file line of a [[gate]] header in phase: its 1-based number}``, invalid gates counted too
    (a plan with problems keeps only its valid gates)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[phase.line : phase.end_line]
    heads = [phase.line + 1 + i for i, s in enumerate(lines) if _GATE_HEADER.match(s)]
    return {line: n for n, line in enumerate(heads, 1)}


def parse_plan(path: str, text: str) -> tuple[Plan | None, list[str]]:
    """Parse and validate one plan file's text; ``path`` is only used in messages and ``Plan.path``.

    Returns the plan and every problem found. With problems the plan is best effort, so that lint
    still checks dependencies and gates: what validated, under the file name's number when the
    ``plan`` block gives no valid id (None when neither does).
    """
    problems: list[str] = []
    blocks = fenced_blocks(text.removeprefix("\ufeff"))  # a UTF-8 BOM is not part of line 1's Markdown
    plan_blocks = [b for b in blocks if b.kind == "plan"]
    if not plan_blocks:
        problems.append(f"{path}:1: no ```plan block (a plan file needs exactly one)")
    for extra in plan_blocks[1:]:
        problems.append(f"{path}:{extra.line}: second ```plan block (first at line {plan_blocks[0].line})")
    for b in blocks:
        if not b.closed:
            problems.append(f"{path}:{b.line}: {b.kind} block is not closed")
    head = plan_blocks[0] if plan_blocks else None
    plan_fields = None
    data = _loads(path, head, problems) if head else None
    if head and data is not None:
        plan_fields, errs = schema.validate_plan(data)
        head_lines = _Lines(head)
        problems.extend(_fmt(path, head_lines, "plan", loc, msg) for loc, msg in errs)
    stem = path.rsplit("/", 1)[-1]
    if head and plan_fields and not stem.startswith(plan_fields["id"] + "-"):
        problems.append(
            f"{path}:{_key_line(head, ('id',))}: plan id '{plan_fields['id']}' does not match the file name "
            f"(expected {plan_fields['id']}-slug.md)"
        )
    phases: list[Phase] = []
    seen: dict[str, int] = {}
    for b in blocks:
        if b.kind != "phase":
            continue
        data = _loads(path, b, problems)
        if data is None:
            continue
        fields, gates, errs = schema.validate_phase(data)
        at = _Lines(b)
        problems.extend(_fmt(path, at, f"phase {fields['id']}" if fields else "phase", loc, msg) for loc, msg in errs)
        if fields is None:
            continue
        if fields["id"] in seen:
            problems.append(
                f"{path}:{at.key_line(('id',))}: duplicate phase id '{fields['id']}' "
                f"(first at line {seen[fields['id']]})"
            )
            continue
        seen[fields["id"]] = b.line
        located = tuple(g._replace(line=at.key_line(("gate", i))) for i, g in gates)
        phases.append(
            Phase(
                fields["id"],
                fields["title"],
                tuple(fields["depends"]),
                tuple(fields["paths"]),
                located,
                b.line,
                b.end_line,
                at.key_line(("depends",)),
                bool(fields.get("exact", False)),
            )
        )
    if plan_fields is None:
        number = re.match(r"([0-9]{4})-", stem)
        if number is None:
            return None, problems
        plan_fields = {"id": number.group(1), "title": "", "milestone": None}
    line, end_line = (head.line, head.end_line) if head else (1, 1)
    plan = Plan(plan_fields["id"], plan_fields["title"], path, plan_fields["milestone"], tuple(phases), line, end_line)
    return plan, problems
