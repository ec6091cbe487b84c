"""tracker.git.log: the commits of a stretch of history and the files they touched, on real git repositories."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import GIT_ENV, git

from tracker.base.globs import compile_glob
from tracker.errors import ExitCode, FileError, UsageError
from tracker.git.log import AmbiguousRef, Commit, UnknownRef, changed_paths, commits, resolve, revision, revision_tree

REPO = Path(__file__).resolve().parents[3]
T0 = 1_750_000_000  # 2025-06-15T15:06:40Z


def init(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    return root


def commit(root: Path, subject: str, files: dict[str, str | bytes | None], at: int, *, author: str = "t") -> str:
    """Write (str/bytes) or delete (None) files, commit them all at time ``at``; the new commit's sha."""
    for name, content in files.items():
        path = root / name
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": author,
           "GIT_AUTHOR_DATE": f"@{at} +0200", "GIT_COMMITTER_DATE": f"@{at} +0200"}  # fmt: skip
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", subject], cwd=root, env=env, check=True)
    return git(root, "rev-parse", "HEAD").strip()


def touching(*patterns: str) -> Callable[[str], bool]:
    """The tracker's own glob matcher, as the report passes it."""
    globs = [compile_glob(p) for p in patterns]
    return lambda path: any(g.match(path) for g in globs)


def subjects(found: list[Commit]) -> list[str]:
    return [c.subject for c in found]


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    """Five commits a minute apart on main: src/ and docs/ files, one commit touching both."""
    root = init(tmp_path / "repo")
    shas = [
        commit(root, "one: src a", {"src/a.py": "1"}, T0),
        commit(root, "two: docs", {"docs/x.md": "1"}, T0 + 60),
        commit(root, "three: src b", {"src/b.py": "1"}, T0 + 120),
        commit(root, "four: both", {"src/a.py": "2", "docs/x.md": "2"}, T0 + 180),
        commit(root, "five: docs", {"docs/y.md": "1"}, T0 + 240),
    ]
    return root, shas


# --- resolve ------------------------------------------------------------------------------------------------


def test_resolve_names_the_full_sha_of_refs_of_every_kind(history: tuple[Path, list[str]]) -> None:
    root, shas = history
    git(root, "tag", "-a", "-m", "v1", "v1", shas[1])  # an annotated tag: the commit it points to
    git(root, "branch", "old", shas[2])
    assert resolve(root, "HEAD") == shas[4]
    assert resolve(root, "HEAD~4") == shas[0]
    assert resolve(root, "v1") == shas[1]
    assert resolve(root, "old") == shas[2]
    assert resolve(root, shas[3][:10]) == shas[3]
    assert resolve(root, shas[3]) == shas[3]


@pytest.mark.parametrize(
    "ref",
    ["nope", "HEAD~99", "HEAD^{tree}", "BLOB", "-h", "--output=OUT", "--all", "", "a\nb", "a\0b", "0" * 40, "HEAD:src"],
)
def test_an_unknown_ref_is_a_clear_value_error(history: tuple[Path, list[str]], ref: str) -> None:
    root, _ = history
    if ref == "BLOB":
        ref = git(root, "rev-parse", "HEAD:src/a.py").strip()
    out = root.parent / "OUT"
    ref = ref.replace("OUT", str(out))
    with pytest.raises(UnknownRef) as err:
        resolve(root, ref)
    assert isinstance(err.value, ValueError) and isinstance(err.value, UsageError)
    assert err.value.exit_code == ExitCode.USAGE
    assert str(err.value).endswith(": not a commit in this repository")
    if ref and ref.isprintable():
        assert str(err.value) == f"{ref}: not a commit in this repository"
    assert not out.exists()  # "--output=..." was never an option to git


@pytest.mark.parametrize("ref", ["rel", "rel~1", "rel^"])
def test_a_name_git_reads_two_ways_is_refused_naming_both(history: tuple[Path, list[str]], ref: str) -> None:
    """A tag and a branch of one name on different commits: git takes the tag with a warning on stderr, which a
    report's --since or a summary's --against would hide; every resolver refuses it, exit 3, and the full names pass."""
    root, shas = history
    git(root, "tag", "rel", shas[1])
    git(root, "branch", "rel", shas[3])
    for call in (lambda: resolve(root, ref), lambda: revision(root, ref), lambda: revision_tree(root, ref),
                 lambda: commits(root, ref)):  # fmt: skip
        with pytest.raises(
            AmbiguousRef, match=r"^rel.*: ambiguous: .* name the ref in full: refs/tags/rel.*, refs/heads/rel"
        ) as err:
            call()
        assert err.value.exit_code == ExitCode.USAGE and isinstance(err.value, UnknownRef)
    git(root, "config", "core.warnAmbiguousRefs", "false")  # git then takes the tag silently; refused all the same
    with pytest.raises(AmbiguousRef):
        resolve(root, ref)
    assert resolve(root, "tags/rel") == shas[1] and resolve(root, "heads/rel") == shas[3]
    git(root, "branch", "-f", "solo", shas[2])
    assert resolve(root, "solo") == shas[2]  # one reading: no warning, no refusal


def test_unknown_since_or_until_in_commits_and_changed_paths(history: tuple[Path, list[str]]) -> None:
    root, _ = history
    for call in (lambda: commits(root, "nope"), lambda: commits(root, None, "nope"),
                 lambda: changed_paths(root, "nope"), lambda: changed_paths(root, "HEAD", "nope")):  # fmt: skip
        with pytest.raises(UnknownRef, match=r"^nope: not a commit in this repository$"):
            call()


def test_not_a_repository_is_a_file_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(FileError, match=r"plain: not a git repository$"):
        resolve(tmp_path / "plain", "HEAD")
    with pytest.raises(FileError, match=r"missing: no such directory$"):
        commits(tmp_path / "missing", None)


# --- commits: order, range, fields --------------------------------------------------------------------------


def test_commits_are_newest_first_with_their_fields(history: tuple[Path, list[str]]) -> None:
    root, shas = history
    found = commits(root, None)
    assert [c.sha for c in found] == shas[::-1]
    four = found[1]
    assert four.subject == "four: both" and four.author == "t"
    assert four.time == "2025-06-15T15:09:40Z"  # UTC, although the commit says +0200
    assert four.short == shas[3][:7] and len(four.short) == 7
    assert four.paths == ("docs/x.md", "src/a.py")
    assert four.parents == (shas[2],) and not four.truncated
    assert found[-1].parents == () and found[-1].paths == ("src/a.py",)  # the root commit lists what it added


def test_since_is_exclusive_like_git_log_since_dot_dot_until(history: tuple[Path, list[str]]) -> None:
    root, shas = history
    assert subjects(commits(root, shas[1])) == ["five: docs", "four: both", "three: src b"]
    assert subjects(commits(root, "HEAD~1")) == ["five: docs"]
    assert commits(root, "HEAD") == []
    assert subjects(commits(root, shas[0], shas[2])) == ["three: src b", "two: docs"]
    assert commits(root, "HEAD", shas[0]) == []  # until behind since: nothing in the range


def test_newest_first_never_lists_a_parent_before_its_children_when_clocks_disagree(tmp_path: Path) -> None:
    """A commit made on a machine whose clock was behind ("skewed", older than its own parent) is still listed
    before its parent (--date-order); git's default order would list the parent first, after the other branch."""
    root = init(tmp_path / "r")
    commit(root, "base", {"a": "1"}, T0)
    git(root, "checkout", "-q", "-b", "side")
    commit(root, "side", {"s": "1"}, T0 + 10)
    git(root, "checkout", "-q", "main")
    commit(root, "skewed", {"a": "2"}, T0 - 1000)
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": f"@{T0 + 20} +0000"}
    subprocess.run(["git", "merge", "-q", "--no-edit", "side"], cwd=root, env=env, check=True)
    order = subjects(commits(root, None))
    assert order.index("skewed") < order.index("base") and order.index("side") < order.index("base")


def test_touching_keeps_the_commits_that_changed_a_matching_path(history: tuple[Path, list[str]]) -> None:
    root, shas = history
    assert subjects(commits(root, None, touching=touching("src/**"))) == ["four: both", "three: src b", "one: src a"]
    assert subjects(commits(root, shas[0], touching=touching("docs/*.md"))) == ["five: docs", "four: both", "two: docs"]
    assert commits(root, None, touching=touching("nothing/**")) == []
    seen: list[str] = []
    commits(root, None, touching=lambda p: seen.append(p) or False)  # type: ignore[func-returns-value]
    assert sorted(set(seen)) == ["docs/x.md", "docs/y.md", "src/a.py", "src/b.py"]  # plain paths, no globbing here


def test_limit_keeps_the_newest_matching_commits(history: tuple[Path, list[str]]) -> None:
    root, _ = history
    assert subjects(commits(root, None, limit=2)) == ["five: docs", "four: both"]
    assert subjects(commits(root, None, touching=touching("src/**"), limit=2)) == ["four: both", "three: src b"]
    assert commits(root, None, limit=0) == []
    with pytest.raises(ValueError, match="limit: expected a count"):
        commits(root, None, limit=-1)


def test_an_empty_commit_touches_nothing(tmp_path: Path) -> None:
    root = init(tmp_path / "r")
    commit(root, "files", {"a": "1"}, T0)
    commit(root, "empty", {}, T0 + 1)
    empty = commits(root, None)[0]
    assert empty.subject == "empty" and empty.paths == ()
    assert subjects(commits(root, None, touching=lambda p: True)) == ["files"]


# --- renames and merges -------------------------------------------------------------------------------------


@pytest.mark.parametrize("renames", ["true", "false", "copies"])
def test_a_rename_touches_both_the_old_and_the_new_path_whatever_diff_renames_says(
    tmp_path: Path, renames: str
) -> None:
    root = init(tmp_path / "r")
    git(root, "config", "diff.renames", renames)
    commit(root, "add", {"old/name.py": "x\n" * 50}, T0)
    commit(root, "rename", {"old/name.py": None, "new/name.py": "x\n" * 50}, T0 + 1)
    rename = commits(root, None)[0]
    assert rename.paths == ("new/name.py", "old/name.py")
    assert subjects(commits(root, None, touching=touching("old/**"))) == ["rename", "add"]
    assert subjects(commits(root, None, touching=touching("new/**"))) == ["rename"]
    assert changed_paths(root, "HEAD~1") == ["new/name.py", "old/name.py"]


def test_a_merge_lists_what_it_brought_into_its_branch_and_the_branch_commits_too(tmp_path: Path) -> None:
    root = init(tmp_path / "r")
    base = commit(root, "base", {"src/a.py": "1", "docs/d.md": "1"}, T0)
    git(root, "checkout", "-q", "-b", "side")
    commit(root, "side: src", {"src/side.py": "1"}, T0 + 60)
    git(root, "checkout", "-q", "main")
    commit(root, "main: docs", {"docs/d.md": "2"}, T0 + 120)
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": f"@{T0 + 180} +0000", "GIT_AUTHOR_DATE": f"@{T0 + 180} +0000"}
    subprocess.run(["git", "merge", "-q", "--no-edit", "side"], cwd=root, env=env, check=True)
    found = commits(root, base)
    assert subjects(found) == ["Merge branch 'side'", "main: docs", "side: src"]
    merge = found[0]
    assert len(merge.parents) == 2
    assert merge.paths == ("src/side.py",)  # against its first parent (main): what the merge brought in
    assert subjects(commits(root, base, touching=touching("src/**"))) == ["Merge branch 'side'", "side: src"]
    assert subjects(commits(root, base, touching=touching("docs/**"))) == ["main: docs"]


# --- odd file names and text --------------------------------------------------------------------------------

ODD_NAMES = [b"caf\xc3\xa9.md", b"latin1-\xe9.txt", b"tab\there", b"\nleading newline", b"trailing newline\n",
             b"-dash", b"space name", b'quote"s', b"back\\slash", b"commit", b"*glob?[x]", b"\xff\xfe"]  # fmt: skip


def test_odd_and_non_utf8_file_names_come_back_as_the_names_on_disk(tmp_path: Path) -> None:
    root = init(tmp_path / "r")
    for name in ODD_NAMES:
        (root / os.fsdecode(name)).write_bytes(b"x")
    commit(root, "odd", {}, T0)
    (only,) = commits(root, None)
    assert sorted(p.encode("utf-8", "surrogateescape") for p in only.paths) == sorted(ODD_NAMES)
    assert all((root / p).exists() for p in only.paths)  # the str is the file system's own name for it
    assert sorted(changed_paths(root, None)) == sorted(only.paths)


def raw_commit(root: Path, author: bytes, committed: bytes, message: bytes) -> None:
    """Make main a root commit of the files committed so far, written byte for byte (``git commit`` would clean
    up what these tests need kept: bytes that are not UTF-8, times git would not write)."""
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    raw = f"tree {tree}\n".encode() + b"author " + author + b" <t@example.com> 1750000000 +0000\n"
    raw += b"committer t <t@example.com> " + committed + b" +0000\n\n" + message
    made = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=root, input=raw,
                          capture_output=True, check=True)  # fmt: skip
    git(root, "update-ref", "refs/heads/main", made.stdout.decode().strip())


def test_author_and_subject_that_are_not_utf8_are_text_with_replacement_characters(tmp_path: Path) -> None:
    """A commit object holding bytes that are not UTF-8 and no encoding header (git commit itself would fix them
    up as Latin-1)."""
    root = init(tmp_path / "r")
    commit(root, "first", {"f": "x"}, T0)
    raw_commit(root, b"Jos\xe9", b"1750000000", b"caf\xe9 \xff subject\n\nbody\n")
    (found,) = commits(root, None)
    assert found.subject == "caf\ufffd \ufffd subject"
    assert found.author == "Jos\ufffd"
    found.subject.encode("utf-8")  # printable as is: no surrogates in text fields


@pytest.mark.parametrize(
    ("committed", "expected"),
    [(b"0", "1970-01-01T00:00:00Z"), (b"99999999999", "5138-11-16T09:46:39Z"), (b"253402300800", ""),
     (b"18446744073709551615", "")],
)  # fmt: skip
def test_commit_times_are_utc_with_four_digit_years_or_empty(tmp_path: Path, committed: bytes, expected: str) -> None:
    root = init(tmp_path / "r")
    commit(root, "first", {"f": "x"}, T0)
    raw_commit(root, b"t", committed, b"odd time\n")
    assert commits(root, None)[0].time == expected


def test_a_latin1_commit_is_reencoded_to_utf8(tmp_path: Path) -> None:
    root = init(tmp_path / "r")
    (root / "f").write_text("x")
    git(root, "add", "f")
    (tmp_path / "msg").write_bytes("café latin-1\n".encode("latin-1"))
    subprocess.run(["git", "-c", "i18n.commitEncoding=latin-1", "commit", "-q", "-F", str(tmp_path / "msg")],
                   cwd=root, env={**os.environ, **GIT_ENV}, check=True)  # fmt: skip
    assert commits(root, None)[0].subject == "café latin-1"


file_names = st.binary(min_size=1, max_size=40).filter(
    lambda b: b"\0" not in b and b"/" not in b and b not in (b".", b"..") and b.lower() != b".git"
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(file_names, min_size=1, max_size=5, unique_by=lambda b: b.lower()))
def test_any_file_name_round_trips(tmp_path: Path, names: list[bytes]) -> None:
    root = tmp_path / f"r{time.monotonic_ns()}"
    init(root)
    for name in names:
        (root / os.fsdecode(name)).write_bytes(b"x")
    commit(root, "names", {}, T0)
    (only,) = commits(root, None)
    assert sorted(p.encode("utf-8", "surrogateescape") for p in only.paths) == sorted(names)


# --- empty, shallow, large --------------------------------------------------------------------------------


def test_a_repository_without_commits_has_no_history(tmp_path: Path) -> None:
    root = init(tmp_path / "empty")
    assert commits(root, None) == []
    assert commits(root, None, touching=lambda p: True, limit=5) == []
    assert changed_paths(root, None) == []
    with pytest.raises(UnknownRef, match=r"^HEAD: not a commit in this repository$"):
        resolve(root, "HEAD")
    with pytest.raises(UnknownRef, match=r"^main: not a commit"):
        commits(root, None, "main")
    with pytest.raises(UnknownRef, match=r"^v1: not a commit"):
        commits(root, "v1")


def test_a_shallow_clone_flags_its_oldest_commit_and_does_not_claim_its_files(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    origin, shas = history
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{origin}", str(clone)], check=True)
    found = commits(clone, None)
    assert [c.sha for c in found] == [shas[4], shas[3]]
    newest, boundary = found
    assert not newest.truncated and newest.paths == ("docs/y.md",)
    assert boundary.truncated and boundary.paths == () and boundary.parents == ()
    assert commits(clone, None, touching=touching("src/**")) == []  # unknown is not "touched src/"
    with pytest.raises(UnknownRef):
        commits(clone, shas[1])  # beyond the clone's history


def test_thousands_of_commits_in_one_git_process(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """Measured, not asserted: the time lands in the report's properties and on stdout (-s)."""
    root = init(tmp_path / "big")
    n = 5000
    stream = []
    for i in range(n):
        stream.append(f"commit refs/heads/main\nmark :{i + 1}\ncommitter t <t@example.com> {T0 + i} +0000\n"
                      f"data {len(f'c{i}')}\nc{i}\n")  # fmt: skip
        stream.append(f"M 644 inline dir{i % 50}/f{i % 7}.txt\ndata {len(str(i))}\n{i}\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input="".join(stream).encode(), check=True)
    start = time.perf_counter()
    everything = commits(root, None)
    all_s = time.perf_counter() - start
    start = time.perf_counter()
    some = commits(root, None, touching=touching("dir7/**"), limit=20)
    filtered_s = time.perf_counter() - start
    assert len(everything) == n and everything[0].subject == f"c{n - 1}" and everything[-1].subject == "c0"
    assert len(some) == 20 and all(c.paths[0].startswith("dir7/") for c in some)
    record_property("gitlog_5000_commits_s", round(all_s, 3))
    record_property("gitlog_5000_commits_filtered_s", round(filtered_s, 3))
    print(f"\ngitlog: {n} commits in {all_s:.3f} s; touching dir7/** limit 20 in {filtered_s:.3f} s")


def test_importing_gitlog_does_not_import_gitpython() -> None:
    code = "import sys, tracker.git.log; print('git' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


# --- changed_paths ------------------------------------------------------------------------------------------


def test_changed_paths_is_the_net_difference_of_two_trees(tmp_path: Path) -> None:
    root = init(tmp_path / "r")
    base = commit(root, "base", {"a": "1", "b": "1", "gone": "1"}, T0)
    commit(root, "change a", {"a": "2"}, T0 + 1)
    commit(root, "change a back", {"a": "1"}, T0 + 2)
    commit(root, "b and gone", {"b": "2", "gone": None, "new": "1"}, T0 + 3)
    assert changed_paths(root, base) == ["b", "gone", "new"]  # a changed and changed back: not in it
    assert changed_paths(root, None) == ["a", "b", "new"]
    assert changed_paths(root, "HEAD", base) == ["b", "gone", "new"]  # the same files either way round
    assert changed_paths(root, "HEAD") == []
