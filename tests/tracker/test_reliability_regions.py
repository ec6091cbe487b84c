"""Issue 11, regions and update: a phase that vanished, text lost under --force, saves lost to a
concurrent editor, temp files left by a killed update, a final newline added. Real files, real
processes, the real CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text

from tracker.base import fileio
from tracker.errors import RegionEditedError
from tracker.plans.parse import parse_plan
from tracker.plans.regions import Region, checksum, rewrite

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


# Item 2: a region moved above an HTML line let the HTML block swallow the next phase.


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


@pytest.mark.parametrize(
    ("before", "after", "kept_apart"),
    [
        ('<img src="x.png">', "```phase", "an HTML block (type 7) ends only at a blank line"),
        ("<div>", "text", "an HTML block (type 6) ends only at a blank line"),
        ("Some prose", "---", "a setext underline would turn the prose into a heading"),
        ("Some prose", "===", "a setext underline would turn the prose into a heading"),
        ("> a quote", "lazy text", "lazy continuation would pull the text into the quote"),
        ("- item", "more", "lazy continuation would pull the text into the list item"),
    ],
)
def test_a_removed_region_leaves_a_blank_line_between_the_text_on_its_sides(
    before: str, after: str, kept_apart: str
) -> None:
    written = region("gone", "\nstatus\n")  # a region as update writes it: its body starts with a blank line
    text = f"{before}\n{written}{after}\n"
    assert rewrite(text, [], "p.md") == f"{before}\n\n{after}\n", kept_apart
    assert rewrite(f"{before}\n\n{written}{after}\n", [], "p.md") == f"{before}\n\n{after}\n"  # one is enough


def test_a_removed_region_without_a_blank_line_leaves_none() -> None:
    """Inside an HTML block a region with no blank line is just more lines of the block: the block
    ran through it into what follows, and still does once it is gone."""
    text = plan_text(phases="") + "</div>\n" + region("gone") + phase("P2", 'manual = "ok"')
    assert parse_plan(PLAN, text)[0].phases == ()  # the HTML block swallows P2 ...
    out = rewrite(text, [], PLAN)
    assert out == plan_text(phases="") + "</div>\n" + phase("P2", 'manual = "ok"')
    assert parse_plan(PLAN, out)[0].phases == ()  # ... and still does: no phase appears from nowhere


def test_a_written_region_is_followed_by_a_blank_line_and_stays_put() -> None:
    text = '```phase\nx\n```\n<img src="x.png">\n'
    once = rewrite(text, [Region("k", "b", 3)], "p.md")
    assert once == f'```phase\nx\n```\n{region("k", "b")}\n<img src="x.png">\n'
    assert rewrite(once, [Region("k", "b", 3)], "p.md") == once
    stacked = rewrite(text, [Region("k", "b", 3), Region("l", "c", 3)], "p.md")  # two regions of one anchor
    assert stacked == f'```phase\nx\n```\n{region("k", "b")}\n{region("l", "c")}\n<img src="x.png">\n'
    assert rewrite(stacked, [Region("k", "b", 3), Region("l", "c", 3)], "p.md") == stacked


LIST_SWALLOWS = (
    plan_text(phases="")
    + "- an item\n"
    + region("phase:OLD")  # a stray region; its begin marker ends the list, so P1 below is a top-level block
    + '  ```phase\n  id = "P1"\n  title = "One"\n  [[gate]]\n  manual = "ok"\n  ```\n'
)


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


# Item 3: --force deleted prose and code up to an end marker inside fenced code.

UNTERMINATED = (
    plan_text(phases=phase("P1", 'manual = "ok"'))
    + "<!-- tracker:begin phase:GONE -->\nprose to keep\n"
    + "```markdown\n<!-- tracker:end phase:GONE sum=0123456789ab -->\n```\n"
    + "\n"
    + phase("P2", 'manual = "ok"')
)


@pytest.mark.parametrize("force", [False, True])
def test_an_end_marker_inside_fenced_code_never_closes_a_region(force: bool) -> None:
    with pytest.raises(RegionEditedError) as err:
        rewrite(UNTERMINATED, [], "p.md", force=force)
    assert str(err.value) == (
        "p.md:15: region 'phase:GONE' has no end marker (the one at line 18 is inside fenced code): "
        "add one or remove the begin marker (--force does not change this)"
    )


def test_update_force_never_removes_text_outside_a_well_formed_region(repo, cli) -> None:
    root = repo({PLAN: UNTERMINATED})
    r = cli(root, "update", "--force")
    assert r.code == 4 and "region 'phase:GONE' has no end marker (the one at line 18 is inside fenced code)" in r.err
    assert (root / PLAN).read_text() == UNTERMINATED
    assert phase_ids(cli, root) == ["P1", "P2"]


def test_force_replaces_the_body_of_a_region_holding_a_fenced_example() -> None:
    body = "edited\n```\n<!-- tracker:end k sum=0123456789ab -->\n```"
    text = f"```phase\nx\n```\n<!-- tracker:begin k -->\n{body}\n<!-- tracker:end k sum=000000000000 -->\n\ntail\n"
    with pytest.raises(RegionEditedError, match="edited by hand"):
        rewrite(text, [Region("k", "new", 3)], "p.md")
    once = rewrite(text, [Region("k", "new", 3)], "p.md", force=True)
    assert once == f"```phase\nx\n```\n{region('k', 'new')}\ntail\n"
    assert rewrite(once, [Region("k", "new", 3)], "p.md", force=True) == once


# Smaller: removing a stray region at the end of a file without a final newline added one.


@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("before", ["x", "x\n", "x\n\n", "", "```phase\ny\n```"])
def test_a_file_without_a_final_newline_keeps_having_none(before: str, nl: str) -> None:
    text = (
        (before + ("\n" if before and not before.endswith("\n") else "") + region("gone"))
        .rstrip("\n")
        .replace("\n", nl)
    )
    out = rewrite(text, [], "p.md")
    assert out == before.rstrip("\n").replace("\n", nl)
    assert rewrite(out, [], "p.md") == out


# Item 14: a killed update left its temp file behind.

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


# Item 12: an editor's save was overwritten by update's output made from an older read.


def test_a_file_changed_after_it_was_read_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("old")
    stamp = fileio.file_stamp(path)
    os.utime(path, (time.time() - 10,) * 2)
    stamp = fileio.file_stamp(path)
    assert stamp is not None
    other = tmp_path / "other"
    other.write_text("saved by an editor")
    os.replace(other, path)  # an atomic save: new inode
    with pytest.raises(fileio.FileChangedError, match="changed after it was read"):
        fileio.write_text_if_changed(path, "old", "new", stamp=stamp)
    assert path.read_text() == "saved by an editor" and sorted(p.name for p in tmp_path.iterdir()) == ["p.md"]


def test_a_file_saved_in_place_with_the_same_size_and_time_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("old")
    then = time.time() - 10
    os.utime(path, (then, then))
    stamp = fileio.file_stamp(path)
    with open(path, "r+") as fh:  # same inode, same size
        fh.write("new")
    os.utime(path, (then, then))  # and the same mtime: only the bytes tell
    with pytest.raises(fileio.FileChangedError):
        fileio.write_text_if_changed(path, "old", "mine", stamp=stamp)
    assert path.read_text() == "new"


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


def test_a_file_open_for_writing_elsewhere_is_in_flux(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("old")
    os.utime(path, (time.time() - 10,) * 2)
    editor = stalled_save(path, "the new save")
    torn = path.read_text()
    stamp = fileio.file_stamp(path)
    assert stamp is not None and torn == "the ne"
    with pytest.raises(fileio.FileChangedError, match="open for writing by another process") as err:
        fileio.write_text_if_changed(path, torn, "mine", stamp=stamp)  # a torn read is never made permanent
    assert err.value.exit_code == 7
    finish(editor)
    assert path.read_text() == "the new save"
    with pytest.raises(fileio.FileChangedError, match="changed after it was read"):
        fileio.write_text_if_changed(path, torn, "mine", stamp=stamp)


def test_where_nothing_tells_whether_a_file_is_open_a_just_modified_one_is_in_flux(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leases answer on Linux for one's own files; elsewhere (another OS, NFS, another owner) only the
    file's age can: that fallback, simulated here since this machine has leases."""
    monkeypatch.setattr(fileio, "_take_read_lease", lambda fd: None)
    path = tmp_path / "p.md"
    path.write_text("half of a sa")
    stamp = fileio.file_stamp(path)
    with pytest.raises(fileio.FileChangedError, match="still being saved") as err:
        fileio.write_text_if_changed(path, "half of a sa", "mine", stamp=stamp)
    assert 0 < err.value.wait <= fileio.SETTLE
    time.sleep(fileio.SETTLE)
    assert fileio.write_text_if_changed(path, "half of a sa", "mine", stamp=stamp) and path.read_text() == "mine"
    path.write_text("old")
    os.utime(path, (time.time() + 3600,) * 2)  # a time in the future says nothing about a save in progress
    assert fileio.write_text_if_changed(path, "old", "new", stamp=fileio.file_stamp(path))


def test_leases_tell_a_file_being_written_from_one_that_is_not(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("x")
    assert fileio.being_written(path) is False
    editor = stalled_save(path, "yz")
    assert fileio.being_written(path) is True
    finish(editor)
    assert fileio.being_written(path) is False
    assert fileio.being_written(tmp_path / "missing") is None


def save_in_the_window(monkeypatch: pytest.MonkeyPatch, save) -> None:
    """Make an editor's save land in the instant between update's last check and its rename, the one
    moment no check can cover: the rename (an exchange) runs ``save`` first."""
    real = fileio._exchange_function()
    assert real is not None  # Linux: renameat2 is there
    calls = []

    def exchange(a: Path, b: Path) -> None:
        if not calls:
            save()
        calls.append((a, b))
        real(a, b)

    monkeypatch.setattr(fileio, "_EXCHANGE", [exchange])


def test_an_atomic_save_in_the_last_instant_is_put_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.md"
    path.write_text("old")
    os.utime(path, (time.time() - 10,) * 2)
    stamp = fileio.file_stamp(path)

    def editor_saves() -> None:
        (tmp_path / "swap").write_text("the editor's save")
        os.replace(tmp_path / "swap", path)

    save_in_the_window(monkeypatch, editor_saves)
    with pytest.raises(fileio.FileChangedError, match="saved by an editor while it was being replaced"):
        fileio.write_text_if_changed(path, "old", "mine", stamp=stamp)
    assert path.read_text() == "the editor's save" and sorted(p.name for p in tmp_path.iterdir()) == ["p.md"]


def test_an_in_place_save_begun_in_the_last_instant_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.md"
    path.write_text("old")
    os.utime(path, (time.time() - 10,) * 2)
    stamp = fileio.file_stamp(path)
    editors: list[subprocess.Popen[str]] = []

    def editor_opens() -> None:  # it waits in open() while update holds its lease, then saves in place
        code = (
            "import sys\nwith open(sys.argv[1], 'r+b') as fh:\n    fh.truncate(0)\n    fh.write(b'the editor s save')\n"
        )
        editors.append(subprocess.Popen([sys.executable, "-c", code, str(path)]))
        time.sleep(0.5)  # long enough for it to reach open() and break the lease

    save_in_the_window(monkeypatch, editor_opens)
    with pytest.raises(fileio.FileChangedError, match="saved by an editor while it was being replaced"):
        fileio.write_text_if_changed(path, "old", "mine", stamp=stamp)
    assert editors[0].wait(timeout=30) == 0
    assert path.read_text() == "the editor s save" and sorted(p.name for p in tmp_path.iterdir()) == ["p.md"]


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


@pytest.mark.parametrize("mode", ["atomic", "in-place"])
def test_no_save_is_lost_to_update_and_no_torn_read_is_written(repo, cli, mode: str) -> None:
    hammer(repo, cli, mode, 4)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["atomic", "in-place"])
def test_no_save_is_lost_to_update_and_no_torn_read_is_written_long(repo, cli, mode: str) -> None:
    hammer(repo, cli, mode, 60)
