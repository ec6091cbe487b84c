"""Regions: placement, checksums, hand edits refused, and every byte outside regions preserved."""

from __future__ import annotations

import re

import pytest
from hostile_regions import (
    PATH,
    hostile,
    plan_files,
    region_lines,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tracker_testutil import phase, plan_text

from tracker.commands.update import UnsafeRewriteError, refuse_unsafe
from tracker.core.model import EvidenceSource, GateVerdict, PhaseStatus, Plan, Status
from tracker.errors import RegionEditedError
from tracker.plans.load import PlanFile
from tracker.plans.parse import fenced_blocks, parse_plan
from tracker.plans.regions import Region, checksum, find_regions, is_blank, region_spans, rewrite, split_lines
from tracker.report.render import plan_regions

TEXT = "# T\n```plan\nx\n```\nprose\n```phase\ny\n```\ntail\n"
REGIONS = [Region("summary", "S1\n\n| a |", 4), Region("phase:P1", "body", 8)]

# After the first rewrite, the phase block's closing fence is line 14 (the summary took 5 lines and
# the blank line that keeps it apart from the prose after it).
PLACED = [REGIONS[0], REGIONS[1]._replace(after_line=14)]


def test_inserts_after_the_anchor_lines_and_is_idempotent() -> None:
    out = rewrite(TEXT, REGIONS, "p.md")
    assert out == (
        "# T\n```plan\nx\n```\n"
        f"<!-- tracker:begin summary -->\nS1\n\n| a |\n<!-- tracker:end summary sum={checksum('S1' + chr(10) * 2 + '| a |')} -->\n"
        "\nprose\n```phase\ny\n```\n"
        f"<!-- tracker:begin phase:P1 -->\nbody\n<!-- tracker:end phase:P1 sum={checksum('body')} -->\n"
        "\ntail\n"
    )
    assert rewrite(out, PLACED, "p.md") == out


def test_existing_region_is_rewritten_in_place_and_unlisted_ones_removed() -> None:
    out = rewrite(TEXT, REGIONS, "p.md")
    moved = rewrite(out, [Region("summary", "S2", 4)], "p.md")
    assert (
        moved
        == "# T\n```plan\nx\n```\n"
        + "".join(
            f"{s}\n"
            for s in ["<!-- tracker:begin summary -->", "S2", f"<!-- tracker:end summary sum={checksum('S2')} -->"]
        )
        + "\nprose\n```phase\ny\n```\n\ntail\n"
    )


def test_hand_edited_region_is_refused_unless_forced() -> None:
    out = rewrite(TEXT, REGIONS, "p.md").replace("body", "my edit")
    with pytest.raises(RegionEditedError) as err:
        rewrite(out, PLACED, "p.md")
    assert str(err.value) == (
        "p.md:15: generated region 'phase:P1' was edited by hand (checksum mismatch); "
        "move your text outside the markers, or rerun with --force to overwrite it"
    )
    assert rewrite(out, PLACED, "p.md", force=True) == rewrite(TEXT, REGIONS, "p.md")


EXAMPLE = "```markdown\n<!-- tracker:begin phase:P1 -->\n...\n<!-- tracker:end phase:P1 sum=0123456789ab -->\n```\n"


def test_markers_inside_fenced_code_are_prose() -> None:
    text = "# T\n```plan\nx\n```\n" + EXAMPLE + "```phase\ny\n```\ntail\n"
    regions = [Region("summary", "S", 4), Region("phase:P1", "body", 12)]
    out = rewrite(text, regions, "p.md")  # the example's bad checksum is not a hand edit
    summary = f"<!-- tracker:begin summary -->\nS\n<!-- tracker:end summary sum={checksum('S')} -->\n"
    phase = f"<!-- tracker:begin phase:P1 -->\nbody\n<!-- tracker:end phase:P1 sum={checksum('body')} -->\n"
    assert out == "# T\n```plan\nx\n```\n" + summary + "\n" + EXAMPLE + "```phase\ny\n```\n" + phase + "\ntail\n"
    placed = [regions[0], regions[1]._replace(after_line=16)]
    assert rewrite(out, placed, "p.md") == out
    assert rewrite(out, placed, "p.md", force=True) == out  # --force does not touch the example either
    assert set(find_regions(out, "p.md", {"summary": 4, "phase:P1": 16})) == {"summary", "phase:P1"}


def test_region_moved_away_from_its_block_goes_back_after_it() -> None:
    out = rewrite(TEXT, REGIONS, "p.md")
    lines = out.splitlines(True)
    phase_region, rest = lines[14:17], lines[:14] + lines[17:]
    moved = "".join(phase_region + rest)  # e.g. after reordering blocks: the region now opens the file
    assert rewrite(moved, [REGIONS[0]._replace(after_line=7), REGIONS[1]._replace(after_line=17)], "p.md") == out
    edited = moved.replace("body", "my edit")
    with pytest.raises(RegionEditedError, match=re.escape("p.md:1: generated region 'phase:P1' was edited by hand")):
        rewrite(edited, [REGIONS[0]._replace(after_line=7), REGIONS[1]._replace(after_line=17)], "p.md")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "<!-- tracker:begin a -->\nx\n",
            "p.md:1: region 'a' has no end marker: add one or remove the begin marker (--force does not change this)",
        ),
        (
            "<!-- tracker:begin a -->\n<!-- tracker:begin b -->\n",
            "p.md:1: region 'a' has no end marker before the next region (line 2)",
        ),
        (
            f"<!-- tracker:begin a -->\n<!-- tracker:end b sum={checksum('')} -->\n",
            "p.md:2: region end marker says 'b', begin (line 1) says 'a'",
        ),
    ],
)
def test_broken_markers(text: str, message: str) -> None:
    for regions in ([Region("a", "", 0)], []):  # at its place, or a stray region
        with pytest.raises(RegionEditedError) as err:
            rewrite(text, regions, "p.md")
        assert str(err.value) == message
    with pytest.raises(RegionEditedError) as err:
        find_regions(text, "p.md", {"a": 0})
    assert str(err.value) == message


def test_a_second_copy_of_a_region_is_removed() -> None:
    region = f"<!-- tracker:begin a -->\n\n<!-- tracker:end a sum={checksum('')} -->\n"
    assert rewrite("x\n" + region * 2, [Region("a", "", 1)], "p.md") == "x\n" + region


def test_crlf_file_gets_crlf_regions_and_no_trailing_newline_is_kept() -> None:
    text = "a\r\n---\r\nb"
    out = rewrite(text, [Region("k", "x", 3)], "p.md")
    assert out == f"a\r\n---\r\nb\r\n<!-- tracker:begin k -->\r\nx\r\n<!-- tracker:end k sum={checksum('x')} -->"
    assert rewrite(out, [], "p.md") == text


def test_checksum_ignores_newline_style() -> None:
    crlf = rewrite("a\r\n", [Region("k", "x\ny", 1)], "p.md")
    assert find_regions(crlf.replace("\r\n", "\n"), "p.md", {"k": 1})["k"].body == "x\ny"


def outside(text: str) -> str:
    """The text outside every region (marker lines and bodies removed); without a final newline in
    ``text``, without trailing newlines either (nothing can end such a file with an empty line)."""
    spans = region_spans(text, "p.md")
    kept = [s for i, s in enumerate(split_lines(text)) if not any(a <= i <= b for a, b in spans)]
    out = "".join(kept)
    return out if not text or text.endswith(("\n", "\r")) else out.rstrip("\r\n")


def added_blank_lines(before: str, after: str) -> int:
    """How many blank lines ``after``'s outside text has more than ``before``'s; AssertionError when
    they differ in anything else. This is what "no byte outside a region is lost" means exactly:
    rewrite only adds blank lines (one next to each region it writes or removes)."""
    old, new = split_lines(outside(before)), split_lines(outside(after))
    j = added = 0
    for line in new:
        if j < len(old) and line == old[j]:
            j += 1
        else:
            assert is_blank(line) and not line.strip("\r\n"), (line, outside(before), outside(after))
            added += 1
    assert j == len(old), (outside(before), outside(after))
    return added


def count_regions(text: str) -> int:
    return len(region_spans(text, "p.md"))


def reanchored(once: str, regions: list[Region]) -> list[Region]:
    """The regions with their anchors as a re-parse of ``once`` sees them: the line right before the
    first region written for each original anchor."""
    begins = {line.split()[2]: i for i, line in enumerate(split_lines(once)) if line.startswith("<!-- tracker:begin ")}
    first = {}
    for r in regions:
        first[r.after_line] = min(first.get(r.after_line, begins[r.key]), begins[r.key])
    return [r._replace(after_line=first[r.after_line]) for r in regions]


lines = st.lists(st.text(alphabet=st.sampled_from(list("ab \té€🙂<!->`")), max_size=12), max_size=8)
newline = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=200, deadline=None)
@given(
    lines,
    newline,
    st.booleans(),
    st.lists(st.tuples(st.integers(0, 10), st.text(alphabet="xy |\n", max_size=10)), max_size=3),
)
def test_update_twice_is_a_noop_and_bytes_outside_regions_survive(
    body: list[str], nl: str, trailing: bool, specs: list[tuple[int, str]]
) -> None:
    text = nl.join(body) + (nl if trailing and body else "")
    n = len(split_lines(text))
    regions = [Region(f"r{i}", b, min(after, n)) for i, (after, b) in enumerate(specs)]
    once = rewrite(text, regions, "p.md")
    # An anchor is a line after which no block is open (a closing fence): not one inside code.
    assume(count_regions(once) == len(regions))
    again = reanchored(once, regions)
    assert rewrite(once, again, "p.md") == once
    assert set(find_regions(once, "p.md", {r.key: r.after_line for r in again})) == {r.key for r in regions}
    assert added_blank_lines(text, once) <= len(regions)
    removed = rewrite(once, [], "p.md")
    assert added_blank_lines(once, removed) == 0  # removing the regions again gives back the bytes outside them
    assert outside(removed) == removed and added_blank_lines(text, removed) <= len(regions)
    assert "".join(split_lines(once)) == once


pieces = st.lists(
    st.one_of(
        st.sampled_from(["x", "", "  ", "```", "~~~~", "    code", "<img src=x>", "- item", "---"]).map(lambda s: [s]),
        st.builds(
            region_lines, st.sampled_from(["a", "b"]), st.sampled_from(["", "b", "\nb\n", "```\nc\n```"]), st.booleans()
        ),
        st.sampled_from(["a", "b"]).map(lambda k: [f"<!-- tracker:begin {k} -->"]),
        st.sampled_from(["a", "b"]).map(lambda k: [f"<!-- tracker:end {k} sum={checksum('')} -->"]),
    ),
    max_size=7,
)


def check_removal(parts: list[list[str]], nl: str, final: bool, force: bool) -> None:
    text = nl.join(line for part in parts for line in part) + (nl if final and parts else "")
    try:
        out = rewrite(text, [], "p.md", force=force)
    except RegionEditedError as err:
        assert re.match(r"^p\.md:\d+: ", str(err)), err
        return
    assert out.endswith(("\n", "\r")) == text.endswith(("\n", "\r")) or not out  # the final newline, or its lack, stays
    assert rewrite(out, [], "p.md", force=force) == out  # twice is once, with --force too
    assert count_regions(out) == 0 and added_blank_lines(text, out) <= count_regions(text)


@settings(max_examples=1000, deadline=None)
@given(pieces, newline, st.booleans(), st.booleans())
def test_removing_regions_keeps_the_final_newline_and_twice_is_once(
    parts: list[list[str]], nl: str, final: bool, force: bool
) -> None:
    check_removal(parts, nl, final, force)


@pytest.mark.slow
@settings(max_examples=30000, deadline=None)
@given(pieces, newline, st.booleans(), st.booleans())
def test_removing_regions_deep(parts: list[list[str]], nl: str, final: bool, force: bool) -> None:
    check_removal(parts, nl, final, force)


PLAN = "plans/0001-x.md"


def region(key: str, body: str = "body") -> str:
    return f"<!-- tracker:begin {key} -->\n{body}\n<!-- tracker:end {key} sum={checksum(body)} -->\n"


UNTERMINATED = (
    plan_text(phases=phase("P1", 'manual = "ok"'))
    + "<!-- tracker:begin phase:GONE -->\nprose to keep\n"
    + "```markdown\n<!-- tracker:end phase:GONE sum=0123456789ab -->\n```\n"
    + "\n"
    + phase("P2", 'manual = "ok"')
)


@pytest.mark.parametrize(
    ("before", "after", "kept_apart"),
    [
        ('<img src="x.png">', "```phase", "an HTML block (type 7) ends only at a blank line"),
        ("<div>", "text", "an HTML block (type 6) ends only at a blank line"),
        ("Some prose", "---", "a setext underline would turn the prose into a heading"),
        ("Some prose", "===", "a setext underline would turn the prose into a heading"),
        ("> a quote", "lazy text", "lazy continuation would pull the text into the quote"),
        ("- item", "more", "lazy continuation would pull the text into the list item"),
    ],
)
def test_a_removed_region_leaves_a_blank_line_between_the_text_on_its_sides(
    before: str, after: str, kept_apart: str
) -> None:
    written = region("gone", "\nstatus\n")  # a region as update writes it: its body starts with a blank line
    text = f"{before}\n{written}{after}\n"
    assert rewrite(text, [], "p.md") == f"{before}\n\n{after}\n", kept_apart
    assert rewrite(f"{before}\n\n{written}{after}\n", [], "p.md") == f"{before}\n\n{after}\n"  # one is enough


def test_a_removed_region_without_a_blank_line_leaves_none() -> None:
    """Inside an HTML block a region with no blank line is just more lines of the block: the block
    ran through it into what follows, and still does once it is gone."""
    text = plan_text(phases="") + "</div>\n" + region("gone") + phase("P2", 'manual = "ok"')
    assert parse_plan(PLAN, text)[0].phases == ()  # the HTML block swallows P2 ...
    out = rewrite(text, [], PLAN)
    assert out == plan_text(phases="") + "</div>\n" + phase("P2", 'manual = "ok"')
    assert parse_plan(PLAN, out)[0].phases == ()  # ... and still does: no phase appears from nowhere


def test_a_written_region_is_followed_by_a_blank_line_and_stays_put() -> None:
    text = '```phase\nx\n```\n<img src="x.png">\n'
    once = rewrite(text, [Region("k", "b", 3)], "p.md")
    assert once == f'```phase\nx\n```\n{region("k", "b")}\n<img src="x.png">\n'
    assert rewrite(once, [Region("k", "b", 3)], "p.md") == once
    stacked = rewrite(text, [Region("k", "b", 3), Region("l", "c", 3)], "p.md")  # two regions of one anchor
    assert stacked == f'```phase\nx\n```\n{region("k", "b")}\n{region("l", "c")}\n<img src="x.png">\n'
    assert rewrite(stacked, [Region("k", "b", 3), Region("l", "c", 3)], "p.md") == stacked


@pytest.mark.parametrize("force", [False, True])
def test_an_end_marker_inside_fenced_code_never_closes_a_region(force: bool) -> None:
    with pytest.raises(RegionEditedError) as err:
        rewrite(UNTERMINATED, [], "p.md", force=force)
    assert str(err.value) == (
        "p.md:15: region 'phase:GONE' has no end marker (the one at line 18 is inside fenced code): "
        "add one or remove the begin marker (--force does not change this)"
    )


def test_force_replaces_the_body_of_a_region_holding_a_fenced_example() -> None:
    body = "edited\n```\n<!-- tracker:end k sum=0123456789ab -->\n```"
    text = f"```phase\nx\n```\n<!-- tracker:begin k -->\n{body}\n<!-- tracker:end k sum=000000000000 -->\n\ntail\n"
    with pytest.raises(RegionEditedError, match="edited by hand"):
        rewrite(text, [Region("k", "new", 3)], "p.md")
    once = rewrite(text, [Region("k", "new", 3)], "p.md", force=True)
    assert once == f"```phase\nx\n```\n{region('k', 'new')}\ntail\n"
    assert rewrite(once, [Region("k", "new", 3)], "p.md", force=True) == once


@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("before", ["x", "x\n", "x\n\n", "", "```phase\ny\n```"])
def test_a_file_without_a_final_newline_keeps_having_none(before: str, nl: str) -> None:
    text = (
        (before + ("\n" if before and not before.endswith("\n") else "") + region("gone"))
        .rstrip("\n")
        .replace("\n", nl)
    )
    out = rewrite(text, [], "p.md")
    assert out == before.rstrip("\n").replace("\n", nl)
    assert rewrite(out, [], "p.md") == out


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
