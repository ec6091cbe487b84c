"""tracker.report.report_text's filters for a phase's commits: a subject cut at a word, the files a commit changed
counted past the first few (the verify-kernel report went past its 400 kB budget on long subjects repeated under
every phase their commit touched)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracker.report.report_text import MAX_SUBJECT, subject_line


def test_a_short_subject_stays_whole_and_a_long_one_is_cut_at_a_word() -> None:
    assert subject_line("Fix the combine's wait") == "Fix the combine's wait"
    long = "Programmatic dependent launch of the split kernel (issue 27, 'overlap the launch'): verify_attention(pdl=)"
    cut = subject_line(long)
    assert cut == "Programmatic dependent launch of the split kernel (issue 27, 'overlap…"
    assert len(cut) <= MAX_SUBJECT and long.startswith(cut[:-1])


def test_a_subject_without_spaces_is_cut_at_the_limit() -> None:
    assert subject_line("x" * 200, limit=10) == "x" * 9 + "…"


@given(st.text(max_size=400), st.integers(min_value=4, max_value=120))
def test_any_subject_fits_its_limit_and_keeps_its_start(subject: str, limit: int) -> None:
    out = subject_line(subject, limit)
    assert len(out) <= limit or out == subject
    if out != subject:
        assert out.endswith("…") and subject.startswith(out[:-1].rstrip(" ,;:"))
