"""Plan files -> :class:`tracker.model.Plan`, with ``path:line: message`` problems.

The only module that imports markdown-it-py: fenced blocks and their line numbers come from
``Token.map``, never from regexes over the Markdown. Inside a block (TOML), a problem's line is
found by locating its key: ``[[gate]]`` headers in order, then ``key =`` lines.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt

from tracker import schema
from tracker.model import Phase, Plan

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


def fenced_blocks(text: str) -> list[Block]:
    """Every top-level ``plan``/``phase`` fence in ``text``; other fences and nested ones are prose."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[Block] = []
    for tok in _MD.parse(text):
        if tok.type != "fence" or tok.level != 0 or tok.map is None:
            continue
        info = tok.info.split()
        if not info or info[0] not in KINDS:
            continue
        start, stop = tok.map
        last = lines[stop - 1].strip() if stop - 1 < len(lines) else ""
        closed = stop - start >= 2 and last.startswith(tok.markup) and set(last) <= {tok.markup[0]}
        out.append(Block(info[0], tok.content, start + 1, stop, closed))
    return out


def code_ranges(text: str) -> list[tuple[int, int]]:
    """0-based ``[start, stop)`` line ranges of every fenced or indented code block, nested ones too."""
    toks = _MD.parse(text.removeprefix("\ufeff"))
    return [(t.map[0], t.map[1]) for t in toks if t.type in ("fence", "code_block") and t.map is not None]


def _key_line(block: Block, loc: schema.Loc) -> int:
    """Best file line for a validation problem at ``loc`` inside ``block``."""
    lines = block.content.split("\n")
    lo, hi = 0, len(lines)
    keys = list(loc)
    if len(keys) >= 2 and keys[0] == "gate" and isinstance(keys[1], int):
        headers = [i for i, s in enumerate(lines) if _GATE_HEADER.match(s)]
        if keys[1] >= len(headers):
            return block.line
        lo = headers[keys[1]]
        hi = next((i for i in range(lo + 1, len(lines)) if _TABLE.match(lines[i])), len(lines))
        keys = keys[2:]
        if not keys:
            return block.line + 1 + lo
    elif keys:
        hi = next((i for i, s in enumerate(lines) if _TABLE.match(s)), len(lines))
    if keys and isinstance(keys[0], str):
        pat = re.compile(rf"^\s*\"?{re.escape(keys[0])}\"?\s*=")
        for i in range(lo, hi):
            if pat.match(lines[i]):
                return block.line + 1 + i
    return block.line + 1 + lo if lo else block.line


def _loads(path: str, block: Block, problems: list[str]) -> dict[str, Any] | None:
    try:
        return tomllib.loads(block.content)
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = _TOML_POS.search(msg)
        line = block.line + int(m.group(1)) if m and m.group(1) else block.end_line
        problems.append(f"{path}:{line}: invalid TOML in {block.kind} block: {_TOML_POS.sub('', msg)}")
        return None


def _fmt(path: str, block: Block, who: str, loc: schema.Loc, msg: str) -> str:
    """``path:line: phase P1 gate 3: msg`` (gates numbered from 1, as ``signoff --gate`` does)."""
    if len(loc) >= 2 and loc[0] == "gate" and isinstance(loc[1], int):
        who = f"{who} gate {loc[1] + 1}"
    return f"{path}:{_key_line(block, loc)}: {who}: {msg}"


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
        problems.extend(_fmt(path, head, "plan", loc, msg) for loc, msg in errs)
    stem = path.rsplit("/", 1)[-1]
    if head and plan_fields and not stem.startswith(plan_fields["id"] + "-"):
        problems.append(f"{path}:{_key_line(head, ('id',))}: plan id '{plan_fields['id']}' does not match the file name (expected {plan_fields['id']}-slug.md)")
    phases: list[Phase] = []
    seen: dict[str, int] = {}
    for b in blocks:
        if b.kind != "phase":
            continue
        data = _loads(path, b, problems)
        if data is None:
            continue
        fields, gates, errs = schema.validate_phase(data)
        problems.extend(_fmt(path, b, f"phase {fields['id']}" if fields else "phase", loc, msg) for loc, msg in errs)
        if fields is None:
            continue
        if fields["id"] in seen:
            problems.append(f"{path}:{_key_line(b, ('id',))}: duplicate phase id '{fields['id']}' (first at line {seen[fields['id']]})")
            continue
        seen[fields["id"]] = b.line
        located = tuple(g._replace(line=_key_line(b, ("gate", i))) for i, g in gates)
        phases.append(
            Phase(
                fields["id"], fields["title"], tuple(fields["depends"]), tuple(fields["paths"]), located, b.line, b.end_line,
                _key_line(b, ("depends",)),
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
