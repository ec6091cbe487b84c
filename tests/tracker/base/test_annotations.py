"""GitHub Actions annotations as the runner reads them back: any message, plan path and title round-trips through
the escaping and a strict parse of GitHub's syntax, and no line that is not an annotation is read as a command."""

from __future__ import annotations

import io

import pytest
from gh_annotations import commands_in, parse_annotation
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.base.annotations import Annotation, escape_data, escape_property, plain, stop_commands

# Text rich in what the syntax gives a meaning to: the separators, escapes, line breaks, the old ``##[`` form.
TRICKY = st.sampled_from(["::", ":", ",", "%", "%25", "%0A", "%3A", "\n", "\r", "\r\n", "=", "##[", "error", " "])
TEXT = st.lists(TRICKY | st.text(max_size=5), max_size=12).map("".join)


def test_the_runner_s_escapes() -> None:
    assert escape_data("100% a\r\nb:c,d") == "100%25 a%0D%0Ab:c,d"
    assert escape_property("plans/0001-a,b:c%.md") == "plans/0001-a%2Cb%3Ac%25.md"
    line = Annotation("error", "x::y\n::warning::z", "p,1.md", 3, "t:1").command()
    assert line == "::error file=p%2C1.md,line=3,title=t%3A1::x::y%0A::warning::z"
    assert parse_annotation(line).message == "x::y\n::warning::z"
    with pytest.raises(ValueError):
        Annotation("debug", "x").command()


@settings(max_examples=300, deadline=None)
@given(
    level=st.sampled_from(["error", "warning", "notice"]),
    message=TEXT,
    file=st.none() | TEXT.filter(bool),
    line=st.none() | st.integers(1, 10**6),
    title=st.none() | TEXT.filter(bool),
    others=st.lists(TEXT, max_size=4),
)
def test_any_annotation_round_trips_and_no_other_line_is_a_command(
    level: str, message: str, file: str | None, line: int | None, title: str | None, others: list[str]
) -> None:
    out = io.StringIO()
    made = Annotation(level, message, file, line, title)
    out.write(made.command() + "\n")
    for text in others:
        out.write(plain(text) + "\n")
    annotations, rest = commands_in(out.getvalue())
    [got] = annotations
    assert got.level == level and got.message == message
    expected = {"file": file, "line": None if line is None else str(line), "title": title}
    assert got.props == {k: v for k, v in expected.items() if v is not None}
    assert len(rest) == len(others) + 1  # each plain line stays one line (and the empty last one)


@given(text=TEXT)
def test_a_plain_line_is_one_line_the_runner_reads_as_no_command(text: str) -> None:
    line = plain(text)
    assert "\n" not in line and "\r" not in line
    assert not line.lstrip().startswith("::") and "##[" not in line


def test_commands_stopped_by_a_fresh_token_are_resumed() -> None:
    stop, resume = stop_commands()
    token = stop.removeprefix("::stop-commands::")
    assert resume == f"::{token}::" and stop_commands()[0] != stop
    annotations, rest = commands_in(f"{stop}\n::error::from a test\n{resume}\n::notice::ours\n")
    assert [a.message for a in annotations] == ["ours"] and rest == ["::error::from a test", ""]
