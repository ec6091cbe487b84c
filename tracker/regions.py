"""Tool-owned regions inside text files: a pure ``str -> str`` rewrite, cog style.

A region is::

    <!-- tracker:begin KEY -->
    ...generated body...
    <!-- tracker:end KEY sum=0123456789ab -->

``sum`` is the first 12 hex digits of the sha256 of the body (lines joined with ``\\n``, so a
checkout that converts line endings is not an edit). A body whose sum no longer matches was edited
by hand and is refused unless ``force``. A region belongs right after its anchor line (the closing
fence of its plan or phase block); marker lines inside fenced code are prose, never regions. Every
byte outside the regions is kept as it is; new regions use the file's own newline, and a file
without a trailing newline keeps having none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from tracker.errors import RegionEditedError
from tracker.hashing import sha256_hex

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


def checksum(body: str) -> str:
    """Region checksum: first 12 hex digits of sha256 of the body with LF newlines."""
    norm = body.replace("\r\n", "\n").replace("\r", "\n")
    return sha256_hex(norm.encode("utf-8"))[:12]


class Region(NamedTuple):
    """A region to write: ``key`` (no spaces), its ``body`` (LF-joined), and where to put it when
    it does not exist yet: right after 1-based line ``after_line``."""

    key: str
    body: str
    after_line: int


class _Found(NamedTuple):
    begin: int  # 0-based index of the begin marker line
    end: int  # 0-based index of the end marker line
    body: str


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


def _region_at(lines: list[str], i: int, key: str, path: str, force: bool) -> _Found:
    """The region whose begin marker (for ``key``) is line ``i``: its body runs to the next marker line."""
    j, mark = i + 1, None
    while j < len(lines) and (mark := _marker(lines[j])) is None:
        j += 1
    if mark is None:
        raise RegionEditedError(f"{path}:{i + 1}: region '{key}' has no end marker")
    kind, end = mark
    if kind == "begin":
        raise RegionEditedError(f"{path}:{i + 1}: region '{key}' has no end marker before the next region")
    if end.group(1) != key:
        raise RegionEditedError(f"{path}:{j + 1}: region end marker says '{end.group(1)}', begin (line {i + 1}) says '{key}'")
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
    found only when its begin marker follows that line, or follows another region anchored there.
    """
    return _placed(split_lines(text), places, path, force)


def _placed(lines: list[str], places: Mapping[str, int], path: str, force: bool) -> dict[str, _Found]:
    anchors: dict[int, set[str]] = {}
    for key, after in places.items():
        anchors.setdefault(after, set()).add(key)
    found: dict[str, _Found] = {}
    for after, keys in anchors.items():
        i = after  # 0-based index of the line right after the anchor
        while i < len(lines) and keys and (mark := _marker(lines[i])) and mark[0] == "begin" and mark[1].group(1) in keys:
            key = mark[1].group(1)
            keys.discard(key)
            found[key] = _region_at(lines, i, key, path, force)
            i = found[key].end + 1
    return found


def _strays(text: str, lines: list[str], placed: dict[str, _Found], path: str, force: bool) -> list[_Found]:
    """Regions outside fenced code that are not at their place (moved, or of a removed block).

    Marker lines inside fenced or indented code are prose (an example in the docs): the code line
    ranges come from the Markdown parser, which is only asked when such lines exist.
    """
    taken = {i for f in placed.values() for i in range(f.begin, f.end + 1)}
    marks = [(i, mark) for i, line in enumerate(lines) if i not in taken and (mark := _marker(line)) is not None]
    if not marks:
        return []
    from tracker.parse import code_ranges  # the only module that imports markdown-it-py

    code = code_ranges(text)
    marks = [(i, mark) for i, mark in marks if not any(a <= i < b for a, b in code)]
    out: list[_Found] = []
    k = 0
    while k < len(marks):
        i, (kind, found) = marks[k]
        if kind == "begin":  # a stray end marker is prose
            out.append(_region_at(lines, i, found.group(1), path, force))
            while k < len(marks) and marks[k][0] <= out[-1].end:
                k += 1
            continue
        k += 1
    return out


def render_region(key: str, body: str, nl: str) -> list[str]:
    """The lines of one region, each ending with ``nl``."""
    lines = [f"<!-- tracker:begin {key} -->"] + body.split("\n") + [f"<!-- tracker:end {key} sum={checksum(body)} -->"]
    return [s + nl for s in lines]


def rewrite(text: str, regions: list[Region], path: str, *, force: bool = False) -> str:
    """Return ``text`` with every region in ``regions`` written right after its ``after_line``.

    A region already there is rewritten in place. Any other region outside fenced code (moved away
    from its block, or of a block that no longer exists) is removed; markers inside fenced code are
    prose and left alone, like every byte outside the regions.
    """
    nl = newline_of(text)
    lines = split_lines(text)
    found = _placed(lines, {r.key: r.after_line for r in regions}, path, force)
    wanted = {r.key: r for r in regions}
    replace_at: dict[int, tuple[int, list[str]]] = {}  # begin index -> (end index, new lines)
    for key, f in found.items():
        replace_at[f.begin] = (f.end, render_region(key, wanted[key].body, nl))
    for f in _strays(text, lines, found, path, force):
        replace_at[f.begin] = (f.end, [])
    inserts: dict[int, list[str]] = {}  # insert after 0-based line index
    for r in regions:
        if r.key not in found:
            inserts.setdefault(min(r.after_line, len(lines)) - 1, []).extend(render_region(r.key, r.body, nl))
    out: list[str] = inserts.get(-1, [])
    i = 0
    while i < len(lines):
        if i in replace_at:
            end, new = replace_at[i]
            if end == len(lines) - 1 and not lines[end].endswith(("\n", "\r")):
                # The region was the file's last line, without a newline: so is whatever ends it now.
                if new:
                    new[-1] = new[-1].rstrip("\r\n")
                elif out:
                    out[-1] = out[-1].rstrip("\r\n")
            out.extend(new)
            i = end + 1
            continue
        line = lines[i]
        if i in inserts:
            if not line.endswith(("\n", "\r")):
                # Last line without a newline: the region goes after it and takes over the lack of one.
                out.append(line + nl)
                added = inserts[i]
                out.extend(added[:-1] + [added[-1].rstrip("\r\n")])
                i += 1
                continue
            out.append(line)
            out.extend(inserts[i])
        else:
            out.append(line)
        i += 1
    return "".join(out)
