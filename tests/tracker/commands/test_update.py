"""``tracker update`` (tracker/commands/update.py): rewriting regions while an editor saves a plan file."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_regions import (
    PATH,
    plan_files,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import git, phase, plan_text

from tracker.commands import update
from tracker.plans.regions import checksum


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


def linked_plan(repo: Callable[..., Path]) -> Path:
    """A repository whose plan lives in docs/plan.md, linked from plans/0001-x.md."""
    root = repo({"docs/plan.md": plan_text("0001", phase("P1", 'manual = "reviewed"'))}, commit=False)
    (root / "plans").mkdir()
    (root / "plans/0001-x.md").symlink_to("../docs/plan.md")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    return root


def test_update_writes_a_symlinked_plan_through_its_link(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """fileio's atomic rename replaced the link itself with a regular file: the plan in docs/ never changed
    again, and the repository held two diverging copies."""
    root = linked_plan(repo)
    res = cli(root, "update")
    assert (res.code, res.out) == (0, "updated 1 plan file(s): plans/0001-x.md\n"), res.out + res.err
    link = root / "plans/0001-x.md"
    assert link.is_symlink() and str(link.readlink()) == "../docs/plan.md"
    assert (root / "docs/plan.md").read_text().count("tracker:begin") == 2
    assert sorted(p.name for p in (root / "plans").iterdir()) == ["0001-x.md"]
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["plan.md"]  # no temp file left behind
    assert (cli(root, "update", "--check").code, git(root, "status", "--porcelain", "plans")) == (0, "")


def test_update_removes_a_stale_temp_file_beside_a_linked_plan(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """The temp file of a write through a link is created beside the target: an interrupted run leaves it there."""
    import os
    import time

    root = linked_plan(repo)
    stale = root / "docs" / ".plan.md.0123456789ab.tmp"
    stale.write_text("half-way")
    os.utime(stale, (time.time() - 120, time.time() - 120))
    res = cli(root, "update")
    assert (
        res.code == 0
        and res.out.splitlines()[0] == "removed docs/.plan.md.0123456789ab.tmp (left behind by an interrupted run)"
    )
    assert not stale.exists()


PLAN = "plans/0001-x.md"


def back_to_back(*ids: str) -> str:
    """A plan whose phase blocks follow each other with no blank line between them."""
    return plan_text(phases="".join(phase(pid, f'manual = "ok {pid}"').rstrip("\n") + "\n" for pid in ids))


def phase_ids(cli, root: Path) -> list[str]:
    r = cli(root, "status", "--json")
    assert r.code == 0, r.err
    return [ph["id"] for plan in json.loads(r.out)["plans"] for ph in plan["phases"]]


def region(key: str, body: str = "body") -> str:
    return f"<!-- tracker:begin {key} -->\n{body}\n<!-- tracker:end {key} sum={checksum(body)} -->\n"


LIST_SWALLOWS = (
    plan_text(phases="")
    + "- an item\n"
    + region("phase:OLD")  # a stray region; its begin marker ends the list, so P1 below is a top-level block
    + '  ```phase\n  id = "P1"\n  title = "One"\n  [[gate]]\n  manual = "ok"\n  ```\n'
)


# An open HTML comment before a phase swallows it up to the first line holding "-->": here the begin
# marker of a stale region. Without that region the comment would run on and swallow the fence that
# hides the last line, an unterminated begin marker: a second update would fail on what this one wrote.
COMMENT_CLOSED_BY_A_REGION = (
    plan_text(phases="")
    + "<!-- an open comment\n"
    + phase("P1", 'manual = "ok"')
    + region("phase:P1", "\nold\n")
    + "```\n<!-- tracker:begin summary -->\n"
)


UNTERMINATED = (
    plan_text(phases=phase("P1", 'manual = "ok"'))
    + "<!-- tracker:begin phase:GONE -->\nprose to keep\n"
    + "```markdown\n<!-- tracker:end phase:GONE sum=0123456789ab -->\n```\n"
    + "\n"
    + phase("P2", 'manual = "ok"')
)


HOLD_A_WRITE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from tracker.base.fileio import atomic_write

    def wait():
        print("renaming", flush=True)
        sys.stdin.readline()  # killed here, between the temp file and the rename

    atomic_write(Path(sys.argv[1]), b"half-way", before_replace=wait)
    """
)


MID_SAVE = textwrap.dedent(
    """
    import sys
    # An editor saving in place, stalled half-way: the file is truncated, half written, still open.
    path, data = sys.argv[1], sys.argv[2].encode()
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(data[: len(data) // 2])
        fh.flush()
        print("stalled", flush=True)
        sys.stdin.readline()
        fh.write(data[len(data) // 2 :])
    """
)


def stalled_save(path: Path, data: str) -> subprocess.Popen[str]:
    editor = subprocess.Popen(
        [sys.executable, "-c", MID_SAVE, str(path), data], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert editor.stdout is not None and editor.stdout.readline() == "stalled\n"
    return editor


def finish(editor: subprocess.Popen[str]) -> None:
    assert editor.stdin is not None
    editor.stdin.write("\n")
    editor.stdin.close()
    assert editor.wait() == 0


EDITOR = textwrap.dedent(
    """
    # An editor that saves a plan over and over (its buffer has no regions: update always has work),
    # atomically (temp file + rename) or in place (truncate, write half, stall, write the rest).
    # Before each save it checks that the file still holds its last save: a save made from an older
    # read would have replaced it (lost), a torn read made permanent would lack its tail.
    import json, os, random, sys, time
    path, mode, seconds, base = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    rng = random.Random(0)
    lost, k, end = [], 0, time.time() + seconds
    def text(k):
        return base + f"tail of save {k}\\nsave {k}\\n"
    print("go", flush=True)
    while time.time() < end:
        with open(path, encoding="utf-8") as fh:
            now = fh.read()
        if not now.endswith(f"tail of save {k}\\nsave {k}\\n") or now.count("```phase") != 2:
            lost.append(k)
        k += 1
        data = text(k).encode()
        if mode == "atomic":
            tmp = path + ".editor-swp"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        else:
            cut = rng.choice([len(data) // 2, len(data) - len(f"save {k}\\n"), len(data) - 3])
            with open(path, "r+b") as fh:
                fh.truncate(0)
                fh.write(data[:cut])
                fh.flush()
                time.sleep(rng.uniform(0, 0.03))
                fh.write(data[cut:])
        time.sleep(rng.uniform(0.005, 0.1))
    print(json.dumps({"saves": k, "lost": lost}), flush=True)
    """
)


def hammer(repo, cli, mode: str, seconds: float) -> None:
    base = back_to_back("P1", "P2")
    root = repo({PLAN: base + "tail of save 0\nsave 0\n"})
    editor = subprocess.Popen(
        [sys.executable, "-c", EDITOR, str(root / PLAN), mode, str(seconds), base], stdout=subprocess.PIPE, text=True
    )
    assert editor.stdout is not None and editor.stdout.readline() == "go\n"
    codes: list[int] = []
    while editor.poll() is None:
        r = cli(root, "update")
        assert r.code in (0, 7), r.err
        codes.append(0 if "updated 1" in r.out else r.code)
    report = json.loads(editor.stdout.read())
    assert report["lost"] == [], report
    assert codes.count(0) >= 3, codes  # update did write, again and again, while the editor saved
    assert cli(root, "update").code == 0
    text = (root / PLAN).read_text()
    assert text.endswith(f"save {report['saves']}\n") and phase_ids(cli, root) == ["P1", "P2"]


def test_an_html_line_under_a_closing_fence_cannot_make_the_next_phase_vanish(repo, cli) -> None:
    root = repo({PLAN: back_to_back("P1", "P2")})
    path = root / PLAN
    assert cli(root, "update").code == 0
    lines = path.read_text().split("\n")
    under = lines.index("<!-- tracker:begin phase:P1 -->")
    path.write_text("\n".join([*lines[:under], '<img src="p1.png">', *lines[under:]]))
    r = cli(root, "update")
    assert (r.code, r.err) == (0, "")
    assert phase_ids(cli, root) == ["P1", "P2"]
    assert (cli(root, "lint").code, cli(root, "update").out) == (0, "updated 0 plan file(s)\n")
    text = path.read_text()
    assert '<img src="p1.png">\n\n```phase\nid = "P2"' in text  # the HTML block ends before P2's fence


def test_a_file_written_without_blank_lines_keeps_its_phases(repo, cli) -> None:
    """A file as earlier versions wrote it: no blank line between a region and the next phase."""
    old = back_to_back("P1", "P2").replace(
        'manual = "ok P1"\n```\n', 'manual = "ok P1"\n```\n' + '<img src="p1.png">\n' + region("phase:P1", "\nbody\n")
    )
    root = repo({PLAN: old})
    assert phase_ids(cli, root) == ["P1", "P2"]
    assert cli(root, "update").code == 0
    assert phase_ids(cli, root) == ["P1", "P2"]
    assert cli(root, "update").out == "updated 0 plan file(s)\n"


def test_update_refuses_to_write_a_file_whose_phases_it_would_change(repo, cli) -> None:
    root = repo({PLAN: LIST_SWALLOWS})
    assert phase_ids(cli, root) == ["P1"]
    r = cli(root, "update")
    assert r.code == 2
    assert r.err == (
        f"tracker: error: {PLAN}:12: update refused, nothing was written: with its regions rewritten, the phase block "
        "at line 12 would no longer be read as one (the Markdown next to a region, say an HTML line or a list, would "
        "take in what follows it); put a blank line between that text and the region, or move it, then run tracker "
        "update again\n"
    )
    assert (root / PLAN).read_text() == LIST_SWALLOWS
    assert cli(root, "update", "--check").code == 1  # --check does not parse what it would write: it stays fast


def test_update_refuses_to_write_what_a_second_update_would_not_read(repo, cli) -> None:
    root = repo({PLAN: COMMENT_CLOSED_BY_A_REGION})
    assert phase_ids(cli, root) == []
    r = cli(root, "update")
    assert r.code == 2
    assert r.err == (
        f"tracker: error: {PLAN}: update refused, nothing was written: a second update would not find the regions where "
        f"this one would write them (in the text it would write: {PLAN}:24: region 'summary' has no end marker: add one "
        "or remove the begin marker (--force does not change this))\n"
    )
    assert (root / PLAN).read_text() == COMMENT_CLOSED_BY_A_REGION


def test_update_force_never_removes_text_outside_a_well_formed_region(repo, cli) -> None:
    root = repo({PLAN: UNTERMINATED})
    r = cli(root, "update", "--force")
    assert r.code == 4 and "region 'phase:GONE' has no end marker (the one at line 18 is inside fenced code)" in r.err
    assert (root / PLAN).read_text() == UNTERMINATED
    assert phase_ids(cli, root) == ["P1", "P2"]


def test_a_killed_writer_s_temp_file_is_removed_by_the_next_update_once_old(repo, cli) -> None:
    root = repo({PLAN: back_to_back("P1")})
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_A_WRITE, str(root / PLAN)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline() == "renaming\n"
    child.send_signal(signal.SIGKILL)
    child.wait()
    (left,) = [p for p in (root / "plans").iterdir() if p.name.endswith(".tmp")]
    assert left.name.startswith(".0001-x.md.") and left.read_bytes() == b"half-way"
    young = root / "plans" / ".0001-x.md.0123456789ab.tmp"  # a live writer's, as far as anyone can tell
    young.write_text("live")
    others = [
        ".0001-x.md.0123456789AB.tmp",
        ".0001-x.md.0123456789a.tmp",
        "0001-x.md.0123456789ab.tmp",
        ".0001-x.md.0123456789ab.tmp.bak",
        ".x.0123456789ab.tmp.md",
    ]
    for name in others:
        (root / "plans" / name).write_text("not ours")
    (root / "plans" / ".y.0123456789ab.tmp").mkdir()
    (root / "plans" / ".z.0123456789ab.tmp").symlink_to(root / PLAN)
    old = time.time() - 120
    for p in (root / "plans").iterdir():
        if p != young:
            os.utime(p, (old, old), follow_symlinks=False)
    r = cli(root, "update")
    assert r.code == 0
    assert r.out.splitlines()[0] == f"removed plans/{left.name} (left behind by an interrupted run)"
    assert not left.exists()
    assert sorted(p.name for p in (root / "plans").iterdir()) == sorted(
        ["0001-x.md", young.name, *others, ".y.0123456789ab.tmp", ".z.0123456789ab.tmp"]
    )
    assert (root / PLAN).read_text().count("tracker:begin") == 2  # the plan itself was updated as usual


def test_update_check_removes_nothing(repo, cli) -> None:
    root = repo({PLAN: back_to_back("P1")})
    stale = root / "plans" / ".0001-x.md.0123456789ab.tmp"
    stale.write_text("x")
    os.utime(stale, (time.time() - 120,) * 2)
    assert cli(root, "update", "--check").code == 1 and stale.exists()


@pytest.mark.parametrize("cut", ["mid-phase", "valid-prefix"])
def test_update_refuses_with_7_while_an_editor_is_half_way_through_saving(repo, cli, cut: str) -> None:
    root = repo({PLAN: back_to_back("P1")})
    save = back_to_back("P1", "P2") + "the end\n"
    # Half of the save is either not a valid plan (an unclosed block) or a valid plan that lacks its
    # tail: neither may be read, rewritten and written over the editor's save.
    save = save if cut == "mid-phase" else save + "x" * len(save) + "\n"
    editor = stalled_save(root / PLAN, save)
    try:
        r = cli(root, "update")
    finally:
        finish(editor)
    assert r.code == 7, r.err
    assert r.err.startswith(
        f"tracker: error: {PLAN}: kept changing while tracker update ran (8 reads; the last one: open for writing by another process"
    )
    assert r.err.endswith("nothing was written to it: run tracker update again once it is saved\n")
    assert (root / PLAN).read_text() == save
    assert cli(root, "update").code == 0 and phase_ids(cli, root) == ["P1", "P2"]


@pytest.mark.parametrize("mode", ["atomic", "in-place"])
def test_no_save_is_lost_to_update_and_no_torn_read_is_written(repo, cli, mode: str) -> None:
    hammer(repo, cli, mode, 4)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["atomic", "in-place"])
def test_no_save_is_lost_to_update_and_no_torn_read_is_written_long(repo, cli, mode: str) -> None:
    hammer(repo, cli, mode, 60)


def status_phases(cli, root: Path) -> list[str] | None:
    r = cli(root, "status", "--json")
    if r.code == 2:
        return None
    assert r.code == 0, r.err
    return [ph["id"] for plan in json.loads(r.out)["plans"] for ph in plan["phases"]]


def cli_update_property(repo, cli, text: str, force: bool) -> None:
    root = repo({}, commit=False)  # the same repository for every example: only the plan file changes
    path = root / PATH
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    before = status_phases(cli, root)
    r = cli(root, "update", *(["--force"] if force else []))
    assert r.code in (0, 2, 4), (r.code, r.err)
    assert "Traceback" not in r.err
    if r.code != 0:
        assert path.read_bytes() == text.encode("utf-8")  # nothing written
        assert re.match(rf"^(tracker: error: )?{re.escape(PATH)}(:\d+)?: ", r.err), r.err
        return
    assert status_phases(cli, root) == before
    again = cli(root, "update", *(["--force"] if force else []))
    assert (again.code, again.out) == (0, "updated 0 plan file(s)\n")


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(text=plan_files(), force=st.booleans())
def test_update_through_the_cli(repo, cli, text: str, force: bool) -> None:
    cli_update_property(repo, cli, text, force)


@pytest.mark.slow
@settings(
    max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(text=plan_files(), force=st.booleans())
def test_update_through_the_cli_deep(repo, cli, text: str, force: bool) -> None:
    cli_update_property(repo, cli, text, force)
