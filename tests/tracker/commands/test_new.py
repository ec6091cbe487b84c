"""``tracker new`` (tracker/commands/new.py): titles are one line of text and parse back exactly."""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.commands.new import title_problem, toml_string


def _new_round_trip(title: str) -> None:
    from tracker.commands.new import run
    from tracker.plans.parse import fenced_blocks, parse_plan

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "plans").mkdir()
        if title_problem(title) is not None:
            with pytest.raises(Exception, match="TITLE"), open(os.devnull, "w") as devnull:
                run(root, title, out=devnull)
            assert list((root / "plans").iterdir()) == []
            return
        with open(os.devnull, "w") as devnull:
            run(root, title, out=devnull)
        [path] = (root / "plans").iterdir()
        text = path.read_text(encoding="utf-8")
        plan, problems = parse_plan(f"plans/{path.name}", text)
        assert problems == [] and plan is not None
        assert plan.title == title
        assert [b.kind for b in fenced_blocks(text)] == ["plan", "phase"]


TITLE_CHARS = st.sampled_from(["a", "é", " ", "{{title}}", "{{id}}", "{{title_toml}}", "`", "```", "~~~", '"', "'", "\\", "#", "<!--", "-->",
                               "\n", "\r", "\t", "\x00", "\x7f", "\x85", "\u2028", "\udcff", "[", "]", "=", "plan", "phase", "\ufeff", "*", ">"])  # fmt: skip


@pytest.mark.parametrize(
    ("title", "message"),
    [
        (
            'x\n```\n\n```plan\nid = "0002"\ntitle = "injected"\n```\n',
            "TITLE must be one line of text without control characters (U+000A at character 2)",
        ),
        ("bad\x7fdel", "TITLE must be one line of text without control characters (U+007F at character 4)"),
        ("tab\there", "TITLE must be one line of text without control characters (U+0009 at character 4)"),
        ("a\u2028b", "TITLE must be one line of text without control characters (U+2028 at character 2)"),
        ("caf\udcc3\udca9", "TITLE is not valid UTF-8 text (byte 0xc3 at character 4)"),  # argv that is not UTF-8
        ("   ", "TITLE must not be empty"),
    ],
)
def test_new_refuses_titles_that_are_not_one_line_of_text(repo, cli, title: str, message: str) -> None:
    root = repo({"README.md": "x\n"})
    r = cli(root, "new", title)
    assert (r.code, r.err) == (3, f"tracker: error: {message}\n")
    assert not (root / "plans").exists() or list((root / "plans").iterdir()) == []


def test_new_substitutes_once(repo, cli) -> None:
    root = repo({"README.md": "x\n"})
    r = cli(root, "new", 'a{{title}}b {{id}} "q" \\ ')
    assert r.code == 0, r.err
    [path] = (root / "plans").iterdir()
    text = path.read_text()
    assert text.startswith('# a{{title}}b {{id}} "q" \\ \n')
    assert 'title = "a{{title}}b {{id}} \\"q\\" \\\\ "\n' in text
    r = cli(root, "lint", "--no-collect")  # valid, its one problem the template's placeholder gate, to be edited
    assert r.code == 2 and r.out.splitlines()[1:] == ["1 problem(s) in 1 file(s)"] and "placeholder gate" in r.out


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_toml_string_round_trips_every_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate is not text TOML (or the file) can hold; new refuses it first
    assert tomllib.loads(f"x = {toml_string(text)}\n") == {"x": text}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=40), st.lists(TITLE_CHARS, max_size=12).map("".join)))
def test_any_title_new_accepts_parses_back_exactly(title: str) -> None:
    _new_round_trip(title)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(TITLE_CHARS, max_size=30).map("".join)))
def test_any_title_new_accepts_parses_back_exactly_slow(title: str) -> None:
    _new_round_trip(title)
