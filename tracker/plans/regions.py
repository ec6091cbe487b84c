"""Tool-owned regions inside text files: a pure ``str -> str`` rewrite, cog style.

A region is::

    <!-- tracker:begin KEY -->
    ...generated body...
    <!-- tracker:end KEY sum=0123456789ab -->

``sum`` is the first 12 hex digits of the sha256 of the body (lines joined with ``\\n``, so a
checkout that converts line endings is not an edit). A body whose sum no longer matches was edited
by hand and is refused unless ``force``.

Where regions go, and why the Markdown around them keeps its block structure:

- A region belongs right after its anchor line, the closing fence of its plan or phase block. A
  closing fence ends every open block, so the begin marker (an HTML comment block, which ends on its
  own line) starts on a clean slate; the text that followed the fence follows the region instead.
- A written region is followed by a blank line (one is added unless the next line is blank or the
  file ends), so an HTML block, a paragraph or a list written after it is never joined to it.
  Two regions anchored at the same line are separated by one blank line.
- A region that is not at its place (moved, or of a removed block) is removed. Every region tracker
  writes holds a blank line (its body starts with one), which ends the paragraph or HTML block open
  before it; so when the lines on both sides of a removed region are not blank and it held a blank
  line, a blank line takes its place. Without it, removing a region between ``<img src="x.png">`` and
  a fence would let the HTML block (which ends only at a blank line) swallow the fence, or turn
  ``---`` under a paragraph into a setext heading. A region without a blank line, inside an HTML
  block, leaves nothing: the block ran through it and still runs on.

Marker lines inside fenced or indented code are prose, never regions: an end marker inside code
never closes a region, so a begin marker with no end marker outside code is an error, also with
``force`` (``force`` replaces a well-formed region's body; it never removes text outside one).
Every other byte outside the regions is kept as it is; new regions use the file's own newline, and
a file without a trailing newline keeps having none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from tracker.base.hashing import sha256_hex
from tracker.errors import RegionEditedError

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_BEGIN = re.compile(r"^<!-- tracker:begin (\S+) -->$")
_END = re.compile(r"^<!-- tracker:end (\S+) sum=([0-9a-f]{12}) -->$")


def split_lines(text: str) -> list[str]:
    """Lines with their endings; only CR, LF and CRLF end a line (as in markdown-it)."""
    return _LINE.findall(text)


def newline_of(text: str) -> str:
    """The newline the file already uses (its first one), LF when it has none."""
    m = re.search(r"\r\n|\r|\n", text)
    return m.group(0) if m else "\n"


def is_blank(line: str) -> bool:
    """A blank line as CommonMark sees it: nothing but spaces and tabs before its newline."""
    return not line.strip(" \t\r\n")


def checksum(body: str) -> str:
    """Region checksum: first 12 hex digits of sha256 of the body with LF newlines."""
    norm = body.replace("\r\n", "\n").replace("\r", "\n")
    return sha256_hex(norm.encode("utf-8"))[:12]


class Region(NamedTuple):
    """A region to write: ``key`` (no spaces), its ``body`` (LF-joined), and where to put it when
    it does not exist yet: right after 1-based line ``after_line``, the closing fence of its block
    (a line after which no Markdown block is open)."""

    key: str
    body: str
    after_line: int


class _Found(NamedTuple):
    begin: int  # 0-based index of the begin marker line
    end: int  # 0-based index of the end marker line
    body: str


class _CodeLines:
    """Which lines lie inside fenced or indented code, and where the plan and phase blocks are: asked
    of the Markdown parser on first use only (``tracker status`` reads regions and must not import
    markdown-it-py for ordinary plan files)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._ranges: list[tuple[int, int]] | None = None

    def __contains__(self, index: int) -> bool:
        if self._ranges is None:
            from tracker.plans.parse import code_ranges  # the only module that imports markdown-it-py

            self._ranges = code_ranges(self._text)
        return any(a <= index < b for a, b in self._ranges)

    def blocks_within(self, start: int, stop: int) -> list[tuple[str, int]]:
        """(kind, 1-based line) of the plan and phase blocks that open on lines ``start..stop-1``."""
        from tracker.plans.parse import fenced_blocks

        return [(b.kind, b.line) for b in fenced_blocks(self._text.removeprefix("\ufeff")) if start < b.line <= stop]


def _marker(line: str) -> tuple[str, re.Match[str]] | None:
    # Only lines that start like a marker are matched (a plan has thousands of lines, a few markers).
    if not line.startswith("<!-- tracker:"):
        return None
    bare = line.rstrip("\r\n")
    m = _BEGIN.match(bare)
    if m:
        return "begin", m
    m = _END.match(bare)
    return ("end", m) if m else None


def _may_open_code(line: str) -> bool:
    """Could this line open a fence? (Cheap and generous: the parser decides when it says yes.)"""
    return "```" in line or "~~~" in line


def _region_at(lines: list[str], i: int, key: str, path: str, force: bool, code: _CodeLines) -> _Found:
    """The region whose begin marker (for ``key``, outside code) is line ``i``: its body runs to the
    next marker line outside code. A marker inside fenced code (an example) is body text."""
    j, mark, fenced, in_code_end = i + 1, None, False, None
    while j < len(lines):
        mark = _marker(lines[j])
        if mark is not None:
            if not (fenced and j in code):
                break
            if in_code_end is None and mark[0] == "end" and mark[1].group(1) == key:
                in_code_end = j
            mark = None
        fenced = fenced or _may_open_code(lines[j])
        j += 1
    if mark is None:
        hint = f" (the one at line {in_code_end + 1} is inside fenced code)" if in_code_end is not None else ""
        raise RegionEditedError(
            f"{path}:{i + 1}: region '{key}' has no end marker{hint}: add one or remove the begin marker "
            "(--force does not change this)"
        )
    kind, end = mark
    if kind == "begin":
        raise RegionEditedError(
            f"{path}:{i + 1}: region '{key}' has no end marker before the next region (line {j + 1})"
        )
    if end.group(1) != key:
        raise RegionEditedError(
            f"{path}:{j + 1}: region end marker says '{end.group(1)}', begin (line {i + 1}) says '{key}'"
        )
    if fenced and (held := code.blocks_within(i + 1, j)):
        kind, line = held[0]
        raise RegionEditedError(
            f"{path}:{i + 1}: region '{key}' holds the {kind} block at line {line}: move the block out of the region "
            "(--force does not change this)"
        )
    body = "\n".join(s.rstrip("\r\n") for s in lines[i + 1 : j])
    if not force and checksum(body) != end.group(2):
        raise RegionEditedError(
            f"{path}:{i + 1}: generated region '{key}' was edited by hand (checksum mismatch); "
            "move your text outside the markers, or rerun with --force to overwrite it"
        )
    return _Found(i, j, body)


def find_regions(text: str, path: str, places: Mapping[str, int], *, force: bool = False) -> dict[str, _Found]:
    """The regions that sit at their place, by key; refuses unterminated or hand-edited ones.

    ``places`` maps each key to its 1-based anchor line (the closing fence of its block): a region is
    found only when its begin marker follows that line, or follows another region anchored there
    (with at most one blank line between the two).
    """
    return _placed(split_lines(text), places, path, force, _CodeLines(text))


def _begin_of(lines: list[str], i: int, keys: set[str]) -> str | None:
    """The key of the begin marker on line ``i`` when it is one of ``keys``."""
    mark = _marker(lines[i]) if i < len(lines) else None
    return mark[1].group(1) if mark and mark[0] == "begin" and mark[1].group(1) in keys else None


def _placed(lines: list[str], places: Mapping[str, int], path: str, force: bool, code: _CodeLines) -> dict[str, _Found]:
    anchors: dict[int, set[str]] = {}
    for name, after in places.items():
        anchors.setdefault(after, set()).add(name)
    found: dict[str, _Found] = {}
    for after, keys in anchors.items():
        i = max(after, 0)  # 0-based index of the line right after the anchor
        while keys and (key := _begin_of(lines, i, keys)) is not None:
            keys.discard(key)
            found[key] = _region_at(lines, i, key, path, force, code)
            i = found[key].end + 1
            if i < len(lines) and is_blank(lines[i]) and _begin_of(lines, i + 1, keys) is not None:
                i += 1  # the blank line written between two regions of one anchor
    return found


def _strays(lines: list[str], placed: dict[str, _Found], path: str, force: bool, code: _CodeLines) -> list[_Found]:
    """Regions outside code that are not at their place (moved, or of a removed block).

    Marker lines inside fenced or indented code are prose (an example in the docs): the code line
    ranges come from the Markdown parser, which is only asked when such lines exist.
    """
    taken = {i for f in placed.values() for i in range(f.begin, f.end + 1)}
    marks = [(i, mark) for i, line in enumerate(lines) if i not in taken and (mark := _marker(line)) is not None]
    marks = [(i, mark) for i, mark in marks if i not in code]
    out: list[_Found] = []
    k = 0
    while k < len(marks):
        i, (kind, found) = marks[k]
        if kind == "begin":  # a stray end marker is prose
            out.append(_region_at(lines, i, found.group(1), path, force, code))
            while k < len(marks) and marks[k][0] <= out[-1].end:
                k += 1
            continue
        k += 1
    return out


def region_spans(text: str, path: str) -> list[tuple[int, int]]:
    """0-based ``(begin, end)`` marker lines of every region outside code, wherever it sits (checksums
    are not checked); RegionEditedError for a begin marker without its end marker."""
    return [(f.begin, f.end) for f in _strays(split_lines(text), {}, path, True, _CodeLines(text))]


def render_region(key: str, body: str, nl: str) -> list[str]:
    """The lines of one region, each ending with ``nl``."""
    lines = [f"<!-- tracker:begin {key} -->", *body.split("\n"), f"<!-- tracker:end {key} sum={checksum(body)} -->"]
    return [s + nl for s in lines]


class _Writer:
    """Output lines, with the blank lines that keep a region apart from the text around it."""

    def __init__(self, nl: str) -> None:
        self.nl = nl
        self.lines: list[str] = []
        self._separate = False  # a region was written, or removed, right before what comes next

    def _after_text(self) -> bool:
        return bool(self.lines) and not is_blank(self.lines[-1])

    def line(self, line: str) -> None:
        """An original line, kept as it is (a blank line first when it would touch a region)."""
        if self._separate and not is_blank(line) and self._after_text():
            self.lines.append(self.nl)
        self._separate = False
        self.lines.append(line)

    def region(self, rendered: list[str]) -> None:
        """A region's lines; the line before it gets the newline it may lack (the file's last line)."""
        if self._separate and self._after_text():
            self.lines.append(self.nl)
        if self.lines and not self.lines[-1].endswith(("\n", "\r")):
            self.lines[-1] += self.nl
        self.lines.extend(rendered)
        self._separate = True

    def gap(self, had_blank_line: bool) -> None:
        """A removed region. When it held a blank line, that line ended whatever block was open before
        it (a paragraph, an HTML block): one blank line keeps the lines on its two sides apart. When it
        held none, an HTML block open before it ran through it, and still runs on without it."""
        self._separate = self._separate or had_blank_line


def rewrite(text: str, regions: list[Region], path: str, *, force: bool = False) -> str:
    """Return ``text`` with every region in ``regions`` written right after its ``after_line``.

    A region already there is rewritten in place. Any other region outside code (moved away from
    its block, or of a block that no longer exists) is removed; markers inside code are prose and
    left alone, like every byte outside the regions (blank lines are added only next to a region,
    see the module docstring).
    """
    nl = newline_of(text)
    lines = split_lines(text)
    code = _CodeLines(text)
    found = _placed(lines, {r.key: r.after_line for r in regions}, path, force, code)
    wanted = {r.key: r for r in regions}
    spans: dict[int, tuple[int, str | None]] = {
        f.begin: (f.end, key) for key, f in found.items()
    }  # begin -> (end, key or None: removed)
    for f in _strays(lines, found, path, force, code):
        spans[f.begin] = (f.end, None)
    inserts: dict[int, list[str]] = {}  # after 0-based line index -> keys of new regions
    for r in regions:
        if r.key not in found:
            inserts.setdefault(min(max(r.after_line, 0), len(lines)) - 1, []).append(r.key)
    out = _Writer(nl)

    def put(keys: list[str]) -> None:
        for key in keys:
            out.region(render_region(key, wanted[key].body, nl))

    put(inserts.get(-1, []))
    i = 0
    while i < len(lines):
        if i in spans:
            end, key = spans[i]
            if key is None:
                out.gap(any(is_blank(line) for line in lines[i + 1 : end]))
            else:
                put([key])
            i = end + 1
            continue
        out.line(lines[i])
        put(inserts.get(i, []))
        i += 1
    new = "".join(out.lines)
    if text and not text.endswith(("\n", "\r")):
        new = new.rstrip("\r\n")  # the file had no trailing newline: whatever ends it now has none either
    return new
