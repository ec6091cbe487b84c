"""tracker/base/dirty.py: which files git does not track (``untracked``), on real repositories with hostile file names."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import git

from tracker.base.dirty import untracked

NAME = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..") and not n.startswith(".git") and len(n.encode()) < 200
)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(NAME, st.sampled_from(["tracked", "ignored", "new"])),
        min_size=1,
        max_size=6,
        unique_by=lambda x: x[0],
    )
)
def test_untracked_names_exactly_the_files_git_does_not_track(files: list[tuple[str, str]]) -> None:
    """Names with spaces, quotes, glob characters (`*`, `[`), newlines, backslashes or non-ASCII are taken literally:
    a tracked `a*` does not hide an untracked `ab`, and an ignored file is told from one never added."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        git(root, "init", "-q", "-b", "main")
        ev = root / "ev"
        ev.mkdir()
        for name, _ in files:
            (ev / name).write_text("x", encoding="utf-8")
        # each ignored name as a literal .gitignore pattern: every character that has a meaning there escaped; one with
        # a line end in it, or ending in a carriage return (git reads "\r\n" as a line end), no pattern can name
        ignored = [n for n, kind in files if kind == "ignored" and "\n" not in n and not n.endswith("\r")]
        (ev / ".gitignore").write_text(
            "".join("/" + "".join("\\" + c if c in "*?[]\\!# " else c for c in n) + "\n" for n in ignored),
            encoding="utf-8",
        )
        tracked = [n for n, kind in files if kind == "tracked"]
        if tracked:
            git(root, "add", "--", *(f":(literal)ev/{n}" for n in tracked))
        expected = {f"ev/{n}": n in ignored for n, kind in files if kind != "tracked"}
        assert untracked(root, [f"ev/{n}" for n, _ in files]) == expected


def test_outside_a_git_repository_nothing_is_claimed(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}", encoding="utf-8")
    assert untracked(tmp_path, ["a.json"]) == {}
