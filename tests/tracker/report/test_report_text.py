"""tracker.report.report_text's filters for a phase's commits: a subject cut at a word, the files a commit changed
counted past the first few (the verify-kernel report went past its 400 kB budget on long subjects repeated under
every phase their commit touched). The subject is measured as it is shown: nothing the reader cannot see pushes what
they should see past the cut, the cut never splits a grapheme cluster, and no input makes the line long. The cases
marked "attack" are a helper's review of the first cut (2026-12-06): each failed on it."""

from __future__ import annotations

import pytest
import regex
from hypothesis import assume, given
from hypothesis import strategies as st

from tracker.report.graphemes import MAX_CLUSTER, shown
from tracker.report.md_filters import drop_controls
from tracker.report.report_text import MAX_PATH, MAX_SUBJECT, NO_SUBJECT, path_text, subject_line

# Padding that shows nothing, or (blanks) as much as one space: bidi marks and overrides, zero-width spaces and
# joiners, word joiners, BOMs, soft hyphens, controls, whitespace; Hangul fillers, the braille blank, unassigned
# default-ignorables (attack: counted as shown characters by the first cut).
INVISIBLE = [
    *("\u200e", "\u202e", "\u2066", "\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\x07", " ", "\t", "\u00a0"),
    *("\n", "\u3164", "\u115f", "\u1160", "\uffa0", "\u2800", "\u2065", "\U000e0080"),
]
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"  # a flag of tag characters


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
    """ "All gates pass" + 60 LRM + " NOT" was cut to "All gates pass…" while git shows "All gates pass NOT"."""
    out = subject_line("All gates pass" + pad * 60 + " NOT")
    assert out.replace("\u200d", "") == "All gates pass NOT" and len(out) <= len("All gates pass NOT") + 1, ascii(out)


def test_a_blank_or_invisible_subject_reads_as_none_or_as_asked() -> None:
    for subject in ("", "   ", "\u200b\u200e\u202e", "\n\t", "\u3164\u2800"):
        assert subject_line(subject) == NO_SUBJECT
    assert subject_line("\u200b", 40, "(no name)") == "(no name)"


@pytest.mark.parametrize(
    "unit",
    [
        "e\u0301",  # e + a combining acute
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # a family: three emoji joined
        "\U0001f44d\U0001f3fd",  # a thumb with a skin tone
        "\U0001f1eb\U0001f1f7",  # a flag: two regional indicators
        "\u2764\ufe0f",  # a heart with its emoji variation selector
        SCOTLAND,
        "\u1112\u1161\u11ab",  # attack: Hangul L V T, one syllable (cut after V it reads another)
        "\u0915\u094d\u0937",  # attack: a Devanagari conjunct (cut after the virama, a half form)
        "\u0e01\u0e33",  # attack: Thai ko kai + sara am
    ],
    ids=["accent", "family", "skin-tone", "flag", "variation", "tag-flag", "hangul", "devanagari", "thai"],
)
def test_the_cut_never_splits_a_cluster(unit: str) -> None:
    for lead in range(0, 6):
        out = subject_line("a" * lead + unit * 40, limit=12)
        assert out.endswith("…")
        body = out[:-1][lead:]
        assert body == unit * (len(body) // len(unit)), ascii(out)


def test_what_shows_is_kept_as_it_is() -> None:
    """attack: dropping every format character turned the Scotland flag into a black one, and dropped the ZWNJ that
    shapes a Persian word."""
    assert subject_line(f"Release for {SCOTLAND}") == f"Release for {SCOTLAND}"
    assert (
        subject_line("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645")
        == "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    )


def test_no_subject_makes_a_long_line() -> None:
    """attack: joiners between letters, or marks stacked on one, made one cluster of any size (40 kB, 144 kB)."""
    assert len(subject_line("Fix " + "\u200d".join("A" * 20000))) <= 2 * MAX_SUBJECT
    assert len(subject_line(("a" + "\u0301" * 1000) * 100)) <= MAX_SUBJECT * MAX_CLUSTER


def test_a_file_name_shows_what_would_not_show_as_escapes_and_stays_short() -> None:
    """attack: a newline made one name read as two, a zero-width space made src/x\\u200b.py read as src/x.py, a
    name that is not UTF-8 read as one with a "?"."""
    assert path_text("src/n1.py\nsrc/n2.py") == "src/n1.py\\nsrc/n2.py"
    assert path_text("src/x\u200b.py") == "src/x\\u200b.py"
    assert path_text("src/bad\udcff.py") == "src/bad\\udcff.py"
    assert path_text("src/\u3164.py") == "src/\\u3164.py" and path_text("src/é ü.py") == "src/é ü.py"
    assert (
        path_text("src/x\\u200b.py") == "src/x\\\\u200b.py" != path_text("src/x\u200b.py")
    )  # no name reads as another
    long = "src/" + "/".join(["d" * 200] * 250) + "/f.py"
    assert len(path_text(long)) == MAX_PATH and path_text(long).endswith("/f.py") and "…" in path_text(long)


@given(st.text(max_size=400), st.integers(min_value=4, max_value=120))
def test_any_subject_fits_its_limit_as_shown_and_keeps_its_start(subject: str, limit: int) -> None:
    out, clusters = subject_line(subject, limit), shown(drop_controls(subject))
    if not clusters:
        assert out == NO_SUBJECT
        return
    assert len(regex.findall(r"\X", out)) <= limit
    assert all(len(c) <= MAX_CLUSTER for c in regex.findall(r"\X", out))
    if out != "".join(clusters):
        assert out.endswith("…") and "".join(clusters).startswith(out[:-1]), (out, clusters)


@given(st.text(st.characters(codec="utf-8") | st.sampled_from(["\u200b", "\n", "\\", "\udcff", "\x7f"]), max_size=300))
def test_a_long_file_name_is_cut_between_escapes_never_inside_one(name: str) -> None:
    """A name cut in the middle keeps whole escapes on both sides of the "…": ``\\u20…`` would read as nothing git
    writes (read-back of the last stop's change)."""
    from tracker.report.graphemes import escaped, path_units

    assume("…" not in name)
    full, out = escaped(name), path_text(name)
    assert len(out) <= MAX_PATH
    if out == full:
        return
    head, tail = out.split("…", 1)
    tokens = path_units(full)
    starts = {len("".join(tokens[:i])) for i in range(len(tokens) + 1)}
    assert full.startswith(head) and len(head) in starts, (head, full)
    assert full.endswith(tail) and len(full) - len(tail) in starts, (tail, full)


def test_a_cut_keeps_an_escape_whole() -> None:
    name = "a" * 38 + "\u200b" + "b" * 100 + "\u200b" + "c" * 10
    out = path_text(name)
    assert out.startswith("a" * 38 + "…") and "\\u20…" not in out and out.endswith("\\u200b" + "c" * 10), out


def test_a_cut_keeps_clusters_whole_and_a_literal_ellipsis_reads_as_no_cut() -> None:
    """A helper's attacks on the cut (2026-12-06): a name holding "…" read as a cut one; a cut through regional
    indicators re-paired them as other flags (🇸🇬, 🇧🇺 out of 🇺🇸🇬🇧...); a cut between a letter and its accent dropped it."""
    assert path_text("a…b.py") == "a\\u2026b.py" and path_text("x" * 40 + "…" + "y" * 50).count("…") == 0
    for name in ("x" * 40 + "…" + "y" * 59, "x" * 40 + "zzzz" + "y" * 59):  # both longer than shown: both cut
        assert path_text(name).count("…") == 1 and len(name.replace("…", "\\u2026")) > MAX_PATH
    flags = "d/" + "a" * 20 + "\U0001f1fa\U0001f1f8\U0001f1ec\U0001f1e7" * 20 + ".txt"
    assert set(regex.findall(r"\X", path_text(flags))) - {"…"} <= set(regex.findall(r"\X", flags))
    accent = "a" * 39 + "e\u0301" + "b" * 80
    assert set(regex.findall(r"\X", path_text(accent))) - {"…"} <= set(regex.findall(r"\X", accent))
