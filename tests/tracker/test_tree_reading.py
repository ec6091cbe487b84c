"""One reading of the working tree serving every question verify asks before and after its session
(tracker.base.fingerprint.read_tree): the file ids, the commit and dirty flag a recorded run takes from it
(tracker.base.dirty.commit_state's ``known``), the index listed once while it does not change, and the paths
verify's shadow check looks through (tracker.commands.pytest_run._listing). Each answer must be the one the
separate git calls it replaced gave, on any tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from evidence_repo import commit_all, git, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base import fingerprint
from tracker.base.dirty import commit_state
from tracker.base.fingerprint import _status_paths, read_tree, tree_file_ids
from tracker.commands.forkable import _listing, shadowed
from tracker.errors import FileError

NAMES = ["secrets", "textwrap", "json", "a b", "é", "pkg", "x-y"]
PLACES = ["", "src/", "tests/", "bench/results/", ".tracker/", "lib/__pycache__/", "deep/er/"]


def _fresh_read(root: Path) -> fingerprint.TreeReading:
    fingerprint._INDEX_LISTING.clear()
    return read_tree(root, ignored=True, commit=True)


@st.composite
def _edits(draw: st.DrawFn) -> list[tuple[str, str]]:
    ops = st.sampled_from(["write", "delete", "chmod", "add", "commit", "ignore", "nested", "link"])
    suffixes = st.sampled_from([".py", "", ".txt", "/__init__.py"])
    paths = st.builds(lambda p, n, s: f"{p}{n}{s}", st.sampled_from(PLACES), st.sampled_from(NAMES), suffixes)
    return draw(st.lists(st.tuples(ops, paths), min_size=1, max_size=8))


def _apply(root: Path, op: str, rel: str, n: int) -> None:
    path = root / rel
    if op == "write":
        if path.is_dir() and not path.is_symlink():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"edit {n}\n")
    elif op == "delete":
        if path.is_symlink() or path.is_file():
            path.unlink()
    elif op == "chmod" and path.is_file() and not path.is_symlink():
        path.chmod(path.stat().st_mode ^ 0o111)
    elif op == "add":
        git(root, "add", "-A")
    elif op == "commit":
        commit_all(root, f"commit {n}")
    elif op == "ignore":
        with (root / ".gitignore").open("a") as f:
            f.write(f"/{rel.rstrip('/').split('/')[0]}\n")
    elif op == "nested":
        inner = root / "nested" / str(n)
        inner.mkdir(parents=True, exist_ok=True)
        (inner / "secrets.py").write_text("X = 1\n")
        git(inner, "init", "-q")
        commit_all(inner, "inner")  # git add -A refuses a nested repository without a commit
    elif op == "link":
        target = root / "linked"
        target.mkdir(exist_ok=True)
        (target / "textwrap.py").write_text("X = 1\n")
        link = root / f"via{n}"
        if not link.exists() and not link.is_symlink():
            link.symlink_to(target, target_is_directory=True)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r", {"src/calc.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=_edits())
def test_one_reading_answers_as_the_separate_git_calls_did(tree: Path, edits: list[tuple[str, str]]) -> None:
    """For any tree: the commit and dirty flag from the reading are ``commit_state``'s own (rev-parse and its status;
    submodules are not drawn: for one the configuration tells git status to ignore, the reading says dirty, as
    unknown is never clean), and the ids with the index listed from memory are the ids read afresh."""
    root = tree.parent / f"t{abs(hash(tuple(edits))) % 10**8}"
    shutil.copytree(tree, root, symlinks=True)
    try:
        for n, (op, rel) in enumerate(edits):
            _apply(root, op, rel, n)
            reading = read_tree(root, ignored=True, commit=True)  # the index may be listed from memory here
            assert commit_state(root, reading.state) == commit_state(root), (op, rel)
            again = _fresh_read(root)
            assert reading.ids == again.ids and reading.ids == tree_file_ids(root)
            assert sorted(reading.named) == sorted(again.named)
            assert reading.state == again.state
    finally:
        shutil.rmtree(root, ignore_errors=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=_edits(), names=st.sets(st.sampled_from([*NAMES, "nested", "via0", "linked", "lib", "deep", "er"])))
def test_the_shadow_check_on_one_reading_finds_what_it_found_asking_git(
    tree: Path, edits: list[tuple[str, str]], names: set[str]
) -> None:
    """The shadow check over the reading's paths (what git named reading the tree, what it ignores, what lies under
    ``.tracker/``) finds the very names it found listing the repository with git itself, on any tree: ignored files
    and folders, untracked ones, nested repositories, links to folders, files deleted but tracked. (A ``__pycache__``
    folder's contents are left out of the reading: no module is imported from one.)"""
    root = tree.parent / f"s{abs(hash((tuple(edits), tuple(sorted(names))))) % 10**8}"
    shutil.copytree(tree, root, symlinks=True)
    try:
        for n, (op, rel) in enumerate(edits):
            _apply(root, op, rel.replace("lib/__pycache__/", "lib/"), n)
        listing = _listing(root, _fresh_read(root))
        assert listing is not None
        assert shadowed(root, names, listing) == shadowed(root, names)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_an_index_changed_since_is_listed_again(tree: Path) -> None:
    """The listing kept in memory serves only the index it was made from: ``git add`` of a new file, of an edit,
    ``git rm --cached`` and assume-unchanged (a flag in the index) each make git list it again."""
    fingerprint._INDEX_LISTING.clear()
    first = read_tree(tree)
    assert fingerprint._INDEX_LISTING, "a plain repository's index listing is kept"
    (tree / "src/new.py").write_text("Y = 2\n")
    git(tree, "add", "src/new.py")
    assert "src/new.py" in read_tree(tree).ids and read_tree(tree).ids == _fresh_read(tree).ids
    (tree / "src/calc.py").write_text("X = 3\n")
    git(tree, "add", "src/calc.py")
    assert read_tree(tree).ids["src/calc.py"] != first.ids["src/calc.py"]
    git(tree, "update-index", "--assume-unchanged", "src/calc.py")
    (tree / "src/calc.py").write_text("X = 4\n")  # git status no longer reports it: the tag makes the reading hash it
    assert read_tree(tree).ids == _fresh_read(tree).ids
    git(tree, "rm", "-q", "--cached", "src/new.py")
    assert read_tree(tree).ids == _fresh_read(tree).ids


def test_reading_a_stat_stale_tree_never_writes_the_index(tree: Path) -> None:
    """Every tracked file's modification time moved, its bytes kept (a fresh clone, a checkout, a build that touches
    files): a plain ``git status`` would refresh the index in place, taking ``.git/index.lock``. The tracker's readings
    and its dirty check leave the index's bytes as they were, so the listing kept of it still serves (CI, stop 40)."""
    from tracker.base.dirty import tree_dirty

    fingerprint._INDEX_LISTING.clear()
    read_tree(tree, ignored=True, commit=True)
    before = (tree / ".git" / "index").read_bytes()
    for path in git(tree, "ls-files", "-z").split("\0"):
        if path:
            os.utime(tree / path, (1_000_000_000, 1_000_000_000))
    read_tree(tree, ignored=True, commit=True)
    assert tree_dirty(tree) is False
    commit_state(tree)
    assert (tree / ".git" / "index").read_bytes() == before
    assert fingerprint._INDEX_LISTING[os.path.realpath(tree)][0] == before


def test_no_listing_is_kept_where_the_index_is_not_simply_dot_git_index(
    tree: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``GIT_INDEX_FILE`` (or ``GIT_DIR`` and the like) set, a worktree's ``.git`` file: git reads another index than
    the one the digest would be taken of, so nothing is kept and git lists it every time."""
    fingerprint._INDEX_LISTING.clear()
    monkeypatch.setenv("GIT_INDEX_FILE", str(tree / ".git" / "index"))
    read_tree(tree)
    assert not fingerprint._INDEX_LISTING
    monkeypatch.delenv("GIT_INDEX_FILE")
    other = tmp_path / "wt"
    git(tree, "worktree", "add", "-q", str(other))
    assert (other / ".git").is_file()
    assert read_tree(other).ids == tree_file_ids(other)
    assert os.path.realpath(other) not in fingerprint._INDEX_LISTING


@given(paths=st.lists(st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), min_size=1,
                              max_size=12), max_size=6))  # fmt: skip
def test_status_v2_lines_give_back_their_paths(paths: list[str]) -> None:
    """Every entry kind of ``git status --porcelain=v2 -z`` (changed, renamed with its origin, unmerged, untracked)
    gives back its path whatever it holds (spaces, newlines, non-ASCII); headers are skipped."""
    oid = "a" * 40
    fields = [f"# branch.oid {oid}", "# branch.head main"]
    want = []
    for i, path in enumerate(paths):
        kind = i % 4
        if kind == 0:
            fields.append(f"1 .M N... 100644 100644 100644 {oid} {oid} {path}")
        elif kind == 1:
            fields += [f"2 R. N... 100644 100644 100644 {oid} {oid} R100 {path}", "origin name"]
        elif kind == 2:
            fields.append(f"u UU N... 100644 100644 100644 100644 {oid} {oid} {oid} {path}")
        else:
            fields.append(f"? {path}")
        want.append(path)
    out = "\0".join(fields).encode("utf-8", "surrogateescape") + b"\0"
    assert _status_paths(Path("r"), out) == want
    assert _status_paths(Path("r"), b"# branch.oid (initial)\0? x\0") == ["x"]


@pytest.mark.parametrize("line", [b"1 .M N... 100644", b"X what", b"? ", b"1"])
def test_a_status_line_it_cannot_read_is_refused(line: bytes) -> None:
    """A line of another shape (a git that prints more fields, or fewer) is an error naming it, never a path read
    from the wrong field."""
    with pytest.raises(FileError, match="cannot read"):
        _status_paths(Path("r"), line + b"\0")


def test_without_git_the_reading_walks_and_knows_no_commit(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("X = 1\n")
    reading = read_tree(tmp_path, ignored=True)
    assert set(reading.ids) == {"a.py"} and reading.state is None
    assert reading.ignored is None and _listing(tmp_path, reading) is None
    assert subprocess.run(["git", "--version"], capture_output=True).returncode == 0


def test_an_edit_git_status_is_told_not_to_see_makes_the_recorded_run_dirty(tree: Path) -> None:
    """adversarial, F2: an assume-unchanged (or skip-worktree) file edited ran code that is not the commit's; the
    reading hashes it (its id is the edit's), and the recorded run says dirty, where git status says nothing."""
    for flag in ("--assume-unchanged", "--skip-worktree"):
        git(tree, "update-index", flag, "src/calc.py")
        (tree / "src/calc.py").write_text("X = 2\n")
        reading = _fresh_read(tree)
        assert reading.state is not None and "src/calc.py" in reading.state[1]
        assert commit_state(tree, reading.state)[1] is True
        (tree / "src/calc.py").write_text("X = 1\n")  # the committed bytes again: clean
        assert commit_state(tree, _fresh_read(tree).state)[1] is False
        git(tree, "update-index", flag.replace("--", "--no-"), "src/calc.py")


def test_a_head_naming_a_tag_object_records_the_commit_it_tags(tree: Path) -> None:
    """adversarial, F4: a hand-written ``.git/HEAD`` holding an annotated tag's id; the recorded commit is the commit
    (``HEAD^{commit}``), never the tag object that git status's branch header would name."""
    git(tree, "tag", "-a", "-m", "t", "v1")
    commit = git(tree, "rev-parse", "HEAD").strip()
    tag = git(tree, "rev-parse", "v1").strip()
    assert tag != commit
    (tree / ".git" / "HEAD").write_text(tag + "\n")
    state = _fresh_read(tree).state
    assert state is not None and state[0] == commit and commit_state(tree, state)[0] == commit


def test_a_file_system_monitor_hook_cannot_hide_an_edit(tree: Path) -> None:
    """round 25, F6: ``core.fsmonitor`` set to a hook that answers "nothing changed": git status saw no edit, and the
    recorded ids and dirty flag were the commit's, not the bytes that ran. The reading asks git without the hook."""
    hook = tree / ".git" / "hooks" / "fsm"
    hook.write_text('#!/bin/sh\nprintf "tok\\0"\n')
    hook.chmod(0o755)
    git(tree, "config", "core.fsmonitor", str(hook))
    git(tree, "config", "core.fsmonitorHookVersion", "2")
    git(tree, "status", "--porcelain")
    git(tree, "status", "--porcelain")
    (tree / "src/calc.py").write_text("X = 9\n")
    assert git(tree, "status", "--porcelain") == ""  # the hook's word: nothing changed
    reading = _fresh_read(tree)
    assert reading.ids["src/calc.py"] == fingerprint._hash_file(tree / "src/calc.py")
    assert reading.state is not None and commit_state(tree, reading.state)[1] is True


def test_a_same_size_edit_with_its_modification_time_put_back_is_seen(tree: Path) -> None:
    """round 25, F7: with ``core.trustctime=false`` a same-size edit whose modification time is set back passed git
    status; the inode change time counts for the reading whatever the configuration says."""
    import time

    git(tree, "config", "core.trustctime", "false")
    time.sleep(1.1)
    git(tree, "status", "--porcelain")  # the index entry is no longer racy
    path = tree / "src/calc.py"
    st = path.stat()
    path.write_text("X = 2\n")  # the same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    reading = _fresh_read(tree)
    assert reading.ids["src/calc.py"] == fingerprint._hash_file(path)
    assert reading.state is not None and commit_state(tree, reading.state)[1] is True
