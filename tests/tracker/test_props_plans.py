"""Hypothesis over plan text and regions (issue 11, "Done means").

Plan files are generated from pieces: prose, HTML lines of every CommonMark type (an ``<img>`` line,
``<div>``, an unclosed ``<!--`` or ``<pre>``), lists with lazy and indented continuations, quotes,
headings, setext underlines, indented code, fenced code (backticks and tildes, three to five, some
never closed), marker lines (begin or end, right or wrong checksum, in code and out), whole regions
at their place and away from it, phase blocks back to back, with CRLF/CR/LF, a BOM or not, a final
newline or not. Their regions are rewritten through the real render of synthetic statuses (titles,
reasons and notes with newlines, pipes, fences and HTML in them).

What must hold, with and without ``--force``:

(a) no byte outside a region is lost: the text outside every region (see ``test_regions.outside``)
    after the rewrite is the text outside every region before it, with blank lines added only, at
    most one for each region written or removed;
(b) a second rewrite (anchors and statuses as a re-parse of the output gives them) changes nothing;
(c) the plan and phase blocks the parser reads are the same before and after, or update's guard
    refuses to write the file (UnsafeRewriteError, exit 2);
(d) nothing raises but RegionEditedError or UnsafeRewriteError, each naming ``path:line``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_regions import added_blank_lines, count_regions

from tracker.commands.update import UnsafeRewriteError, refuse_unsafe
from tracker.core.model import EvidenceSource, GateVerdict, PhaseStatus, Plan, Status
from tracker.errors import RegionEditedError
from tracker.plans.load import PlanFile
from tracker.plans.parse import fenced_blocks, parse_plan
from tracker.plans.regions import checksum, rewrite
from tracker.report.render import plan_regions

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


reasons = st.one_of(st.sampled_from(["3 passed", "no sign-off recorded (tracker signoff)", "—"]), hostile)


@st.composite
def statuses_for(draw: st.DrawFn, plan: Plan) -> dict[str, PhaseStatus]:
    out = {}
    for ph in plan.phases:
        source = draw(
            st.one_of(
                st.none(),
                st.builds(
                    EvidenceSource,
                    st.just(".tracker/evidence/x.json"),
                    hostile,
                    st.one_of(st.none(), st.just("0" * 40)),
                    st.just("2026-01-01T00:00:00Z"),
                ),
            )
        )
        verdicts = tuple(GateVerdict(draw(st.booleans()), draw(reasons), source) for _ in ph.gates)
        out[f"{plan.id}/{ph.id}"] = PhaseStatus(
            plan.id, ph.id, draw(st.sampled_from(list(Status))), verdicts, note=draw(st.one_of(st.just(""), hostile))
        )
    return out


def blocks(text: str) -> list[tuple[str, str, bool]]:
    return [(b.kind, b.content, b.closed) for b in fenced_blocks(text.removeprefix("\ufeff"))]


LOCATED = re.compile(rf"^{re.escape(PATH)}:\d+: ")


def rewritten(text: str, statuses_of, force: bool) -> tuple[str, Plan, dict[str, PhaseStatus]] | None:
    """The text after an update-like rewrite (None when it refuses, with a located message), its
    plan and statuses."""
    plan, problems = parse_plan(PATH, text)
    assume(plan is not None and not problems)  # update refuses such files before it rewrites anything (exit 2)
    assert plan is not None
    statuses = statuses_of(plan)
    try:
        new = rewrite(text, plan_regions(plan, statuses), PATH, force=force)
    except RegionEditedError as err:
        assert LOCATED.match(str(err)), err
        return None
    return new, plan, statuses


def check_properties(text: str, statuses_of, force: bool) -> str:
    """(a) to (d) for one text; which outcome it had."""
    got = rewritten(text, statuses_of, force)
    if got is None:
        return "refused: region"
    new, plan, statuses = got
    # (c) the blocks are the same, or the guard refuses to write (and says where)
    try:
        refuse_unsafe(PlanFile(PATH, text, plan, []), new, statuses)
    except UnsafeRewriteError as err:
        assert re.match(rf"^{re.escape(PATH)}(:\d+)?: update refused, nothing was written", str(err)), err
        return "refused: guard"
    assert blocks(new) == blocks(text)
    # (a) nothing outside a region is lost; blank lines only are added, next to regions
    assert added_blank_lines(text, new) <= count_regions(text) + len(plan.phases) + 1
    # (b) a second update, from a re-parse of what the first wrote, changes nothing (with force too)
    again, problems = parse_plan(PATH, new)
    assert again is not None and not problems
    assert rewrite(new, plan_regions(again, statuses), PATH, force=force) == new
    assert new.startswith("\ufeff") == text.startswith("\ufeff")
    if text and not text.endswith(("\n", "\r")):
        assert not new.endswith(("\n", "\r"))
    return "written" if new != text else "unchanged"


OUTCOMES: dict[str, int] = {}


def run_properties(text: str, data: st.DataObject, force: bool) -> None:
    outcome = check_properties(text, lambda plan: data.draw(statuses_for(plan)), force)
    OUTCOMES[outcome] = OUTCOMES.get(outcome, 0) + 1


@settings(max_examples=450, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(plan_files(), st.data())
def test_rewriting_plan_text_loses_nothing_and_is_stable(text: str, data: st.DataObject) -> None:
    run_properties(text, data, force=False)


@settings(max_examples=450, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(plan_files(), st.data())
def test_rewriting_with_force_loses_nothing_and_twice_is_once(text: str, data: st.DataObject) -> None:
    run_properties(text, data, force=True)


@pytest.mark.slow
@settings(max_examples=20000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(plan_files(), st.data(), st.booleans())
def test_rewriting_plan_text_deep(text: str, data: st.DataObject, force: bool) -> None:
    run_properties(text, data, force=force)


# The CLI over small random plan repositories: update exits 0 or a documented code, a second update
# changes nothing, status lists the same phases.


def status_phases(cli, root: Path) -> list[str] | None:
    r = cli(root, "status", "--json")
    if r.code == 2:
        return None
    assert r.code == 0, r.err
    return [ph["id"] for plan in json.loads(r.out)["plans"] for ph in plan["phases"]]


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(text=plan_files(), force=st.booleans())
def test_update_through_the_cli(repo, cli, text: str, force: bool) -> None:
    cli_update_property(repo, cli, text, force)


@pytest.mark.slow
@settings(
    max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(text=plan_files(), force=st.booleans())
def test_update_through_the_cli_deep(repo, cli, text: str, force: bool) -> None:
    cli_update_property(repo, cli, text, force)


def cli_update_property(repo, cli, text: str, force: bool) -> None:
    root = repo({}, commit=False)  # the same repository for every example: only the plan file changes
    path = root / PATH
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    before = status_phases(cli, root)
    r = cli(root, "update", *(["--force"] if force else []))
    assert r.code in (0, 2, 4), (r.code, r.err)
    assert "Traceback" not in r.err
    if r.code != 0:
        assert path.read_bytes() == text.encode("utf-8")  # nothing written
        assert re.match(rf"^(tracker: error: )?{re.escape(PATH)}(:\d+)?: ", r.err), r.err
        return
    assert status_phases(cli, root) == before
    again = cli(root, "update", *(["--force"] if force else []))
    assert (again.code, again.out) == (0, "updated 0 plan file(s)\n")
