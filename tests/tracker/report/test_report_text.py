"""tracker.report.report_text's filters for a phase's commits: a subject cut at a word, the files a commit changed
counted past the first few (the verify-kernel report went past its 400 kB budget on long subjects repeated under
every phase their commit touched). The subject is measured as it is shown: nothing the reader cannot see pushes what
they should see past the cut, and the cut never splits a character from its marks."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracker.report.report_text import MAX_SUBJECT, NO_SUBJECT, subject_line

# Each shows nothing, or (whitespace) as much as one space: the runs an attacker pads a subject with.
INVISIBLE = ["\u200e", "\u202e", "\u2066", "\u200b", "\u2060", "\ufeff", "\u00ad", "\x07", " ", "\t", "\u00a0", "\n"]


def test_a_short_subject_stays_whole_and_a_long_one_is_cut_at_a_word() -> None:
    assert subject_line("Fix the combine's wait") == "Fix the combine's wait"
    long = "Programmatic dependent launch of the split kernel (issue 27, 'overlap the launch'): verify_attention(pdl=)"
    cut = subject_line(long)
    assert cut == "Programmatic dependent launch of the split kernel (issue 27, 'overlap…"
    assert len(cut) <= MAX_SUBJECT and long.startswith(cut[:-1])


def test_a_subject_without_spaces_is_cut_at_the_limit() -> None:
    assert subject_line("x" * 200, limit=10) == "x" * 9 + "…"


@pytest.mark.parametrize("pad", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_padding_the_reader_cannot_see_never_cuts_off_what_follows(pad: str) -> None:
    """A helper's attack on the report (2026-12-06): "All gates pass" + 60 LRM + " NOT" was cut to "All gates
    pass…", while git shows "All gates pass NOT"."""
    out = subject_line("All gates pass" + pad * 60 + " NOT")
    assert out.endswith(" NOT") and out.startswith("All gates pass"), repr(out)
    assert len(out) <= len("All gates pass") + 1 + len(" NOT") + (1 if unicodedata.category(pad) == "Cf" else 0)


def test_a_blank_or_invisible_subject_reads_as_none() -> None:
    for subject in ("", "   ", "\u200b\u200e\u202e", "\n\t"):
        assert subject_line(subject) == NO_SUBJECT


@pytest.mark.parametrize(
    "unit",
    [
        "e\u0301",  # e + a combining acute
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # a family: three emoji joined
        "\U0001f44d\U0001f3fd",  # a thumb with a skin tone
        "\U0001f1eb\U0001f1f7",  # a flag: two regional indicators
        "\u2764\ufe0f",  # a heart with its emoji variation selector
    ],
    ids=["accent", "family", "skin-tone", "flag", "variation"],
)
def test_the_cut_never_splits_a_character_from_its_marks(unit: str) -> None:
    for lead in range(0, 6):
        out = subject_line("a" * lead + unit * 40, limit=12)
        assert out.endswith("…")
        body = out[:-1][lead:]
        assert body == unit * (len(body) // len(unit)), repr(out)


def _shown_length(text: str) -> int:
    """Characters as a reader counts them: every character but the marks, modifiers and joined parts of one."""
    return sum(
        1
        for i, ch in enumerate(text)
        if unicodedata.category(ch) not in ("Mn", "Mc", "Me", "Cf")
        and not 0x1F3FB <= ord(ch) <= 0x1F3FF
        and not (i and text[i - 1] == "\u200d")
    )


def _as_shown(subject: str) -> str:
    """The oracle: the subject without control characters (whitespace aside) and format characters (the emoji
    joiner aside), its whitespace runs as single spaces."""
    kept = (ch for ch in subject if ch.isspace() or ch == "\u200d" or unicodedata.category(ch) not in ("Cc", "Cf"))
    return " ".join("".join(kept).split())


@given(st.text(max_size=400), st.integers(min_value=4, max_value=120))
def test_any_subject_fits_its_limit_as_shown_and_keeps_its_visible_start(subject: str, limit: int) -> None:
    out, shown = subject_line(subject, limit), _as_shown(subject)
    if not shown:
        assert out == NO_SUBJECT
    elif out == shown:
        assert _shown_length(out) <= limit or _shown_length(shown) <= limit
    else:
        assert out.endswith("…") and _shown_length(out) <= limit
        assert shown.startswith(out[:-1]), (out, shown)
