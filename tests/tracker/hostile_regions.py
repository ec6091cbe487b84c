"""Hostile plan texts for the generated regions' property tests: region markers with right, wrong and missing
checksums, in code fences, with CRLF line ends and a BOM, as an earlier update or a hand edit left them. Shared by the
region rewriter's and ``tracker update``'s tests."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from tracker.plans.regions import checksum

PATH = "plans/0001-x.md"


# Text that lands in region bodies and phase titles: what could break a region out of its lines.
hostile = st.lists(
    st.sampled_from([*list("ab |`~<>!-=#*\\\r\n\t€"), "```", "~~~", "-->", "<pre>", "<!--", "\r\n"]), max_size=8
).map("".join)


words = st.text(alphabet=st.sampled_from(list("ab cé€🙂*_`<>|")), min_size=1, max_size=10).map(
    lambda s: s.strip() or "w"
)


HTML_LINES = [
    '<img src="p1.png">',
    "<div>",
    "</div>",
    "<!-- a note -->",
    "<!-- an open comment",
    "-->",
    "<pre>",
    "</pre>",
    "<?php",
    "<!DOCTYPE x>",
    "<![CDATA[",
    "]]>",
    "<table><tr><td>x</td></tr></table>",
]


def fence_piece(draw: st.DrawFn) -> list[str]:
    """A fenced code block, closed or not, maybe with marker lines inside."""
    char = draw(st.sampled_from("`~"))
    n = draw(st.integers(3, 5))
    body = draw(st.lists(st.one_of(words, marker_line(), st.just(char * 3)), max_size=3))
    closing = [char * draw(st.integers(n, 6))] if draw(st.booleans()) else []  # an unterminated fence runs to the end
    return [char * n + draw(st.sampled_from(["", "markdown", "py"])), *body, *closing]


@st.composite
def marker_line(draw: st.DrawFn) -> str:
    key = draw(st.sampled_from(["summary", "phase:P1", "phase:P2", "phase:Q", "other"]))
    if draw(st.booleans()):
        return f"<!-- tracker:begin {key} -->"
    return f"<!-- tracker:end {key} sum={draw(st.sampled_from([checksum(''), checksum('body'), '0123456789ab']))} -->"


def region_lines(key: str, body: str, right_sum: bool) -> list[str]:
    return [
        f"<!-- tracker:begin {key} -->",
        *body.split("\n"),
        f"<!-- tracker:end {key} sum={checksum(body) if right_sum else '0123456789ab'} -->",
    ]


@st.composite
def region_piece(draw: st.DrawFn, key: str | None = None) -> list[str]:
    """A whole region (right checksum, or edited by hand), as some earlier update left it (bodies
    as update writes them start with a blank line), or a begin marker whose end marker is in code."""
    key = key or draw(st.sampled_from(["summary", "phase:P1", "phase:P2", "phase:Q"]))
    if draw(st.integers(0, 9)) == 0:  # unterminated: the only matching end marker is an example in a fence
        return [
            f"<!-- tracker:begin {key} -->",
            "prose to keep",
            "```markdown",
            f"<!-- tracker:end {key} sum={checksum('')} -->",
            "```",
        ]
    body = draw(st.sampled_from(["\nold status\n", "\n| a | b |\n", "", "body"]))
    return region_lines(key, body, draw(st.integers(0, 3)) > 0)


@st.composite
def phase_piece(draw: st.DrawFn, pid: str) -> list[str]:
    char = draw(st.sampled_from("`~"))
    n = draw(st.integers(3, 5))
    indent = draw(st.sampled_from(["", "", " ", "   "]))
    title = json.dumps(
        "T" + draw(hostile), ensure_ascii=False
    )  # a TOML basic string (JSON escapes are TOML escapes here)
    gates = draw(st.integers(0, 2))
    lines = [f"{indent}{char * n}phase", f'{indent}id = "{pid}"', f"{indent}title = {title}"]
    for g in range(gates):
        lines += [f"{indent}[[gate]]", f'{indent}manual = "gate {g}"']
    return [*lines, indent + char * draw(st.integers(n, 6))]


@st.composite
def prose_piece(draw: st.DrawFn) -> list[str]:
    kind = draw(
        st.sampled_from(["text", "html", "list", "quote", "heading", "setext", "indented", "blank", "blank", "marker"])
    )
    if kind == "html":
        return [draw(st.sampled_from(HTML_LINES))]
    if kind == "list":
        return [
            draw(st.sampled_from(["- ", "* ", "1. "])) + draw(words),
            *draw(st.lists(st.sampled_from(["  more", "lazy", "   - nested"]), max_size=2)),
        ]
    if kind == "quote":
        return ["> " + draw(words), *draw(st.lists(st.sampled_from(["> more", "lazy"]), max_size=1))]
    if kind == "heading":
        return ["#" * draw(st.integers(1, 3)) + " " + draw(words)]
    if kind == "setext":
        return [draw(st.sampled_from(["---", "===", "- - -"]))]
    if kind == "indented":
        return [draw(st.sampled_from(["    code", "\tcode"]))]
    if kind == "blank":
        return [draw(st.sampled_from(["", "  ", "\t"]))]
    if kind == "marker":
        return [draw(marker_line())]
    return [draw(words)]


@st.composite
def plan_files(draw: st.DrawFn) -> str:
    """A whole plan file's text."""
    head = draw(st.lists(prose_piece(), max_size=2))
    plan = ["```plan", 'id = "0001"', f"title = {json.dumps('T' + draw(hostile), ensure_ascii=False)}", "```"]
    pieces: list[list[str]] = [*head, plan]
    ids = iter(["P1", "P2", "P3", "P4"])
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["phase", "phase", "phase", "prose", "prose", "fence", "region"]))
        if kind == "phase":
            pid = next(ids, None)
            if pid is not None:
                pieces.append(draw(phase_piece(pid)))
                # What follows a phase block: its region as an earlier update left it, maybe with a
                # line the user put between the two (an HTML line, prose, a list item, a blank).
                between = draw(
                    st.sampled_from([[], ['<img src="p1.png">'], ["<div>"], ["prose"], ["- item"], [""], ["---"]])
                )
                if draw(st.integers(0, 2)) > 0:
                    pieces.append(between + draw(region_piece(f"phase:{pid}")))
        elif kind == "fence":
            pieces.append(fence_piece(draw))
        elif kind == "region":
            pieces.append(draw(region_piece()))
        else:
            pieces.append(draw(prose_piece()))
    nl = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = nl.join(line for piece in pieces for line in piece)
    if draw(st.booleans()):
        text += nl
    return ("\ufeff" if draw(st.booleans()) else "") + text
