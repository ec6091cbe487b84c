"""``tracker update`` (tracker/commands/update.py): rewriting regions while an editor saves a plan file."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_reliability_regions import finish, stalled_save
from tracker_testutil import phase, plan_text

from tracker.commands import update


def _torn_in_a_region(repo: Callable[..., Path], cli: Callable[..., object]) -> tuple[Path, str]:
    """A repository whose plan has its regions written and committed, and the plan's next save: a prose edit whose
    first half ends inside a region (a begin marker without its end marker: a broken region, exit 4, if read)."""
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'manual = "reviewed"')), "a.py": "A = 1\n"})
    assert cli(root, "update").code == 0  # type: ignore[attr-defined]
    path = root / "plans/0001-demo.md"
    text = path.read_text().replace("# Demo", "# Demo, edited", 1) + "More prose.\n"
    begin, end = text.index("<!-- tracker:begin phase:P1"), text.index("<!-- tracker:end phase:P1")
    pad = len(text) - begin - end  # prose before (or after) that puts the save's middle inside the region
    save = "x" * (pad - 1) + "\n" + text if pad > 0 else text + "x" * (-pad - 1) + "\n"
    half = save[: len(save.encode()) // 2]
    assert "tracker:begin phase:P1" in half and "tracker:end phase:P1" not in half
    os.utime(path, (time.time() - 10,) * 2)
    return path, save


def test_a_plan_half_saved_throughout_is_never_written_and_says_so(repo, cli) -> None:
    # issue 24: a half-saved plan file (an editor writing it in place) made update exit 4, "region broken"
    path, save = _torn_in_a_region(repo, cli)
    editor = stalled_save(path, save)
    try:
        torn = path.read_bytes()
        result = cli(path.parent.parent, "update")
        assert result.code == 7, result
        assert "kept changing while tracker update ran" in result.err and "open for writing" in result.err
        assert "Traceback" not in result.err and path.read_bytes() == torn
    finally:
        finish(editor)
    assert path.read_text() == save  # the editor's save is whole


def test_a_plan_half_saved_when_update_reads_it_is_read_again_once_saved(
    repo, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, save = _torn_in_a_region(repo, cli)
    editor = stalled_save(path, save)
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:  # update waits to read again: the editor finishes its save meanwhile
        if editor.returncode is None:
            finish(editor)
        real_sleep(seconds)

    monkeypatch.setattr(update.time, "sleep", sleep)
    result = cli(path.parent.parent, "update")
    assert result.code == 0, result
    assert editor.returncode == 0
    text = path.read_text()
    assert "# Demo, edited" in text and "More prose.\n" in text and "xxx" in text
    assert cli(path.parent.parent, "update", "--check").code == 0
