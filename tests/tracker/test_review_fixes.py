"""Fixes of an adversarial review: ways the tracker could lie or stay silent (real git, pytest and files).

F1 a reportlog's keywords are not markers; F4 a JUnit timestamp without a time zone; F7 ``paths`` and
``--measure`` globs that match no file; F9 a symlinked plan stays a symlink; F10 a phase block inside a list
or quote; F11 one definition of "dirty".
"""

from __future__ import annotations

import re
from pathlib import Path

import tracker

CHECKOUT = Path(tracker.__file__).resolve().parent


# --- F11: one rule for commit and dirty ------------------------------------------------------------------


def test_only_tracker_dirty_decides_whether_a_tree_is_dirty() -> None:
    """tracker.git.head_commit was a second, unused definition of dirty (gitpython's is_dirty, which counts
    evidence files): any writer that picked it up would disagree with tracker.dirty.commit_state."""
    users = [p.relative_to(CHECKOUT).as_posix() for p in CHECKOUT.rglob("*.py") if re.search(r"\bis_dirty\(|\bhead_commit\b", p.read_text())]
    assert users == []
