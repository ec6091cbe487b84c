"""Regions: placement, checksums, hand edits refused, and every byte outside regions preserved."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.errors import RegionEditedError
from tracker.parse import code_ranges
from tracker.regions import Region, checksum, find_regions, rewrite, split_lines

TEXT = "# T\n```plan\nx\n```\nprose\n```phase\ny\n```\ntail\n"
REGIONS = [Region("summary", "S1\n\n| a |", 4), Region("phase:P1", "body", 8)]

# After the first rewrite, the phase block's closing fence is line 13 (the summary took 5 lines).
PLACED = [REGIONS[0], REGIONS[1]._replace(after_line=13)]


def test_inserts_after_the_anchor_lines_and_is_idempotent() -> None:
    out = rewrite(TEXT, REGIONS, "p.md")
    assert out == (
        "# T\n```plan\nx\n```\n"
        f"<!-- tracker:begin summary -->\nS1\n\n| a |\n<!-- tracker:end summary sum={checksum('S1' + chr(10) * 2 + '| a |')} -->\n"
        "prose\n```phase\ny\n```\n"
        f"<!-- tracker:begin phase:P1 -->\nbody\n<!-- tracker:end phase:P1 sum={checksum('body')} -->\n"
        "tail\n"
    )
    assert rewrite(out, PLACED, "p.md") == out


def test_existing_region_is_rewritten_in_place_and_unlisted_ones_removed() -> None:
    out = rewrite(TEXT, REGIONS, "p.md")
    moved = rewrite(out, [Region("summary", "S2", 4)], "p.md")
    assert moved == "# T\n```plan\nx\n```\n" + "".join(
        f"{s}\n" for s in ["<!-- tracker:begin summary -->", "S2", f"<!-- tracker:end summary sum={checksum('S2')} -->"]
    ) + "prose\n```phase\ny\n```\ntail\n"


def test_hand_edited_region_is_refused_unless_forced() -> None:
    out = rewrite(TEXT, REGIONS, "p.md").replace("body", "my edit")
    with pytest.raises(RegionEditedError) as err:
        rewrite(out, PLACED, "p.md")
    assert str(err.value) == (
        "p.md:14: generated region 'phase:P1' was edited by hand (checksum mismatch); "
        "move your text outside the markers, or rerun with --force to overwrite it"
    )
    assert rewrite(out, PLACED, "p.md", force=True) == rewrite(TEXT, REGIONS, "p.md")


EXAMPLE = (
    "```markdown\n<!-- tracker:begin phase:P1 -->\n...\n<!-- tracker:end phase:P1 sum=0123456789ab -->\n```\n"
)


def test_markers_inside_fenced_code_are_prose() -> None:
    text = "# T\n```plan\nx\n```\n" + EXAMPLE + "```phase\ny\n```\ntail\n"
    regions = [Region("summary", "S", 4), Region("phase:P1", "body", 12)]
    out = rewrite(text, regions, "p.md")  # the example's bad checksum is not a hand edit
    summary = f"<!-- tracker:begin summary -->\nS\n<!-- tracker:end summary sum={checksum('S')} -->\n"
    phase = f"<!-- tracker:begin phase:P1 -->\nbody\n<!-- tracker:end phase:P1 sum={checksum('body')} -->\n"
    assert out == "# T\n```plan\nx\n```\n" + summary + EXAMPLE + "```phase\ny\n```\n" + phase + "tail\n"
    placed = [regions[0], regions[1]._replace(after_line=15)]
    assert rewrite(out, placed, "p.md") == out
    assert rewrite(out, placed, "p.md", force=True) == out  # --force does not touch the example either
    assert set(find_regions(out, "p.md", {"summary": 4, "phase:P1": 15})) == {"summary", "phase:P1"}


def test_region_moved_away_from_its_block_goes_back_after_it() -> None:
    out = rewrite(TEXT, REGIONS, "p.md")
    lines = out.splitlines(True)
    phase_region, rest = lines[13:16], lines[:13] + lines[16:]
    moved = "".join(phase_region + rest)  # e.g. after reordering blocks: the region now opens the file
    assert rewrite(moved, [REGIONS[0]._replace(after_line=7), REGIONS[1]._replace(after_line=16)], "p.md") == out
    edited = moved.replace("body", "my edit")
    with pytest.raises(RegionEditedError, match="p.md:1: generated region 'phase:P1' was edited by hand"):
        rewrite(edited, [REGIONS[0]._replace(after_line=7), REGIONS[1]._replace(after_line=16)], "p.md")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- tracker:begin a -->\nx\n", "p.md:1: region 'a' has no end marker"),
        ("<!-- tracker:begin a -->\n<!-- tracker:begin b -->\n", "p.md:1: region 'a' has no end marker before the next region"),
        (f"<!-- tracker:begin a -->\n<!-- tracker:end b sum={checksum('')} -->\n", "p.md:2: region end marker says 'b', begin (line 1) says 'a'"),
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


lines = st.lists(st.text(alphabet=st.sampled_from(list("ab \té€🙂<!->`")), max_size=12), max_size=8)
newline = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=200, deadline=None)
@given(lines, newline, st.booleans(), st.lists(st.tuples(st.integers(0, 10), st.text(alphabet="xy |\n", max_size=10)), max_size=3))
def test_update_twice_is_a_noop_and_bytes_outside_regions_survive(
    body: list[str], nl: str, trailing: bool, specs: list[tuple[int, str]]
) -> None:
    text = nl.join(body) + (nl if trailing and body else "")
    n = len(split_lines(text))
    regions = [Region(f"r{i}", b, min(after, n)) for i, (after, b) in enumerate(specs)]
    once = rewrite(text, regions, "p.md")
    # The anchors as a re-parse of ``once`` sees them: shifted by the regions inserted above them.
    again = [r._replace(after_line=r.after_line + sum(q.body.count("\n") + 3 for q in regions if q.after_line < r.after_line)) for r in regions]
    assert rewrite(once, again, "p.md") == once
    assert set(find_regions(once, "p.md", {r.key: r.after_line for r in again})) == {r.key for r in regions}
    if not any(a <= r.after_line < b for r in again for a, b in code_ranges(once)):
        assert rewrite(once, [], "p.md") == text  # removing the regions gives back the original bytes
    assert "".join(split_lines(once)) == once
