"""Tool-owned regions inside text files: a pure ``str -> str`` rewrite, cog style.

A region is::

    <!-- tracker:begin KEY -->
    ...generated body...
    <!-- tracker:end KEY sum=0123456789ab -->

``sum`` is the first 12 hex digits of the sha256 of the body (lines joined with ``\\n``, so a
checkout that converts line endings is not an edit). A body whose sum no longer matches was edited
by hand and is refused unless ``force``. Every byte outside the regions is kept as it is; new
regions use the file's own newline, and a file without a trailing newline keeps having none.
"""

from __future__ import annotations

import re
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


def find_regions(text: str, path: str, *, force: bool = False) -> dict[str, _Found]:
    """Existing regions by key; refuses unterminated, duplicated or hand-edited ones."""
    return _find(split_lines(text), path, force)


def _find(lines: list[str], path: str, force: bool) -> dict[str, _Found]:
    # Only lines that start like a marker are looked at (a plan has thousands of lines, a few markers).
    marks: list[tuple[int, str, re.Match[str]]] = []
    for i, line in enumerate(lines):
        if line.startswith("<!-- tracker:"):
            bare = line.rstrip("\r\n")
            m = _BEGIN.match(bare)
            if m:
                marks.append((i, "begin", m))
            elif m := _END.match(bare):
                marks.append((i, "end", m))
    found: dict[str, _Found] = {}
    k = 0
    while k < len(marks):
        i, kind, m = marks[k]
        if kind != "begin":
            k += 1  # a stray end marker is prose
            continue
        key = m.group(1)
        if k + 1 == len(marks):
            raise RegionEditedError(f"{path}:{i + 1}: region '{key}' has no end marker")
        j, next_kind, end = marks[k + 1]
        if next_kind == "begin":
            raise RegionEditedError(f"{path}:{i + 1}: region '{key}' has no end marker before the next region")
        body = "\n".join(s.rstrip("\r\n") for s in lines[i + 1 : j])
        if end.group(1) != key:
            raise RegionEditedError(f"{path}:{j + 1}: region end marker says '{end.group(1)}', begin (line {i + 1}) says '{key}'")
        if key in found:
            raise RegionEditedError(f"{path}:{i + 1}: region '{key}' appears twice (first at line {found[key].begin + 1})")
        if not force and checksum(body) != end.group(2):
            raise RegionEditedError(
                f"{path}:{i + 1}: generated region '{key}' was edited by hand (checksum mismatch); "
                "move your text outside the markers, or rerun with --force to overwrite it"
            )
        found[key] = _Found(i, j, body)
        k += 2
    return found


def render_region(key: str, body: str, nl: str) -> list[str]:
    """The lines of one region, each ending with ``nl``."""
    lines = [f"<!-- tracker:begin {key} -->"] + body.split("\n") + [f"<!-- tracker:end {key} sum={checksum(body)} -->"]
    return [s + nl for s in lines]


def rewrite(text: str, regions: list[Region], path: str, *, force: bool = False) -> str:
    """Return ``text`` with every region in ``regions`` written, and regions not listed removed.

    Existing regions are rewritten in place; new ones go right after their ``after_line``.
    """
    nl = newline_of(text)
    lines = split_lines(text)
    found = _find(lines, path, force)
    wanted = {r.key: r for r in regions}
    replace_at: dict[int, tuple[int, list[str]]] = {}  # begin index -> (end index, new lines)
    for key, f in found.items():
        new = render_region(key, wanted[key].body, nl) if key in wanted else []
        replace_at[f.begin] = (f.end, new)
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
