"""Fingerprints follow the shared contract; the tree listing matches git; globs match as documented."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from evidence_repo import commit_all, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import git, glob_steps, phase, plan_text

from tracker.base import fingerprint
from tracker.base.contract import blob_id, file_id, set_fingerprint
from tracker.base.dirty import commit_state
from tracker.base.file_index import FileIndex, changed_files
from tracker.base.fingerprint import _status_paths, read_tree, tree_file_ids, walk_file_ids
from tracker.base.globs import compile_glob, glob_problem
from tracker.commands.forkable import _listing, shadowed
from tracker.errors import FileError


def test_blob_id_is_gits(tmp_path: Path) -> None:
    f = tmp_path / "x"
    f.write_bytes(b"hello\r\nw\x00rld")
    expected = subprocess.run(["git", "hash-object", str(f)], capture_output=True, text=True, check=True).stdout.strip()
    assert blob_id(f.read_bytes()) == expected


def test_set_fingerprint_contract() -> None:
    files = {"b/x.py": "2" * 40, "a.py": "1" * 40}
    text = f"a.py\0{'1' * 40}\nb/x.py\0{'2' * 40}\n"
    assert set_fingerprint(files) == hashlib.sha256(text.encode()).hexdigest()


def test_tree_ids_use_index_ids_and_rehash_changes(repo) -> None:
    root = repo({"a.py": "a\n", "d/b.py": "b\n", "gone.py": "x\n", ".gitignore": "ignored.txt\n"})
    (root / "a.py").write_text("changed\n")
    (root / "new.py").write_text("new\n")
    (root / "ignored.txt").write_text("i\n")
    (root / "gone.py").unlink()
    (root / ".tracker").mkdir()
    (root / ".tracker" / "e.json").write_text("{}")
    ids = tree_file_ids(root)
    assert set(ids) == {"a.py", "d/b.py", "new.py", ".gitignore"}
    assert ids["a.py"] == blob_id(b"changed\n")
    assert ids["new.py"] == blob_id(b"new\n")
    assert ids["d/b.py"] == git(root, "rev-parse", "HEAD:d/b.py").strip()


def test_walk_without_git_skips_build_dirs(tmp_path: Path) -> None:
    for rel in ("src/a.py", ".venv/x", "src/__pycache__/a.pyc", ".tracker/e.json", "build/o", "pkg.egg-info/PKG"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert walk_file_ids(tmp_path) == {"src/a.py": blob_id(b"x")}


def test_a_walk_without_git_fingerprints_links_as_git_does(repo, tmp_path: Path) -> None:
    """A symlink is its target's name (git's blob of it), never the file it leads to: editing a test linked out of the
    repository changes no fingerprint (such a test meets no gate: tracker.base.gate_paths). The walk of a tree without git
    (the plugin on a machine without the .git directory) left out every link to a directory (os.walk lists them
    with the directories and does not enter them), so its runs' file maps lacked ``tests/ext`` where git's had it:
    a link retargeted there never made a phase stale."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "test_x.py").write_text("x\n")
    root = repo({"tests/in/test_a.py": "a\n"})
    (root / "tests/ext").symlink_to("../../outside")
    (root / "tests/test_link.py").symlink_to(tmp_path / "outside" / "test_x.py")
    (root / "tests/alias").symlink_to("in")
    (root / "tests/dangling").symlink_to("nowhere")
    ids = tree_file_ids(root)
    link = "120000"  # a link's id: git's blob of its target's name, the link's mode folded in (tracker.base.contract.file_id)
    assert ids["tests/ext"] == file_id(blob_id(b"../../outside"), link) and "tests/ext/test_x.py" not in ids
    assert ids["tests/test_link.py"] == file_id(blob_id(str(tmp_path / "outside" / "test_x.py").encode()), link)
    assert walk_file_ids(root) == ids
    (tmp_path / "outside" / "test_x.py").write_text("edited\n")  # the outside file is no file of the tree
    assert walk_file_ids(root) == tree_file_ids(root) == ids


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("kernel/csrc/**", "kernel/csrc/a/b.cuh", True),
        ("kernel/csrc/**", "kernel/csrcx/a", False),
        ("kernel/*.py", "kernel/verify.py", True),
        ("kernel/*.py", "kernel/sub/verify.py", False),
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("kernel/", "kernel/x/y", True),
        ("k?.py", "k1.py", True),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "b.py", False),
        ("a.py", "a.pyc", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, hit: bool) -> None:
    assert compile_glob(pattern).match(path) is hit


def test_file_index_matches_and_fingerprints() -> None:
    idx = FileIndex({"k/a.py": "1", "k/b/c.py": "2", "kz.py": "3", "z.py": "4"})
    assert idx.match(["k/**"]) == {"k/a.py": "1", "k/b/c.py": "2"}
    assert idx.match(["*.py"]) == {"kz.py": "3", "z.py": "4"}
    assert idx.fingerprint(["k/**"]) == set_fingerprint({"k/a.py": "1", "k/b/c.py": "2"})
    assert changed_files({"a": "1", "b": "2"}, {"b": "3", "c": "4"}) == ["a", "b", "c"]


# --- globs: linear matching, the documented semantics, validation (issue 11, item 8) --------------------

import re  # noqa: E402
import warnings  # noqa: E402


def reference_regex(pattern: str) -> re.Pattern[str]:
    """The old translation to a (backtracking) regex, with the two documented fixes: ``**`` matches any
    character (newline too: DOTALL) and a class never matches ``/``. Only for small inputs."""
    if pattern.endswith("/"):
        pattern += "**"
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and "]" in pattern[i + 2 :]:
            j = pattern.index("]", i + 2)
            body = pattern[i + 1 : j].replace("\\", "\\\\")
            out.append("[^/" + body[1:] + "]" if body[:1] in ("!", "^") else "(?![/])[" + body + "]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible nested set" for a literal [ in a class
        return re.compile("".join(out) + r"\Z", re.DOTALL)


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("a/**", "a/b\nc.py", True),  # a file name with a newline is still below a/
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("a**b", "a/x/b", True),  # ** crosses directories wherever it stands
        ("a[!x]b", "a/b", False),  # a class never matches /
        ("[]]x", "]x", True),
        ("[!]]x", "ax", True),
        ("[a-c-e]", "-", True),
        ("[^a]", "b", True),
        ("a[b", "a[b", True),  # unterminated: validation refuses it; matching takes the [ literally
        ("[z-a]", "m", False),  # bad range: refused by validation, matches nothing
        ("*/", "x/y/z", True),
        ("***/x", "a/b/x", True),
        ("**/*", "", True),
    ],
)
def test_glob_edge_semantics(pattern: str, path: str, hit: bool) -> None:
    assert compile_glob(pattern).match(path) is hit


PATTERN_PARTS = [
    "a",
    "b",
    ".",
    "-",
    "/",
    "*",
    "*",
    "**",
    "**/",
    "?",
    "[ab]",
    "[!a]",
    "[a-c]",
    "[^b]",
    "[]a]",
    "[-b]",
    "[",
    "]",
    "\\",
]
NAME_CHARS = ["a", "b", "c", "/", ".", "-", "]", "[", "\n", "\\"]


def _agrees(pattern: str, name: str) -> None:
    if glob_problem(pattern) is not None or "[!]" in pattern or "[^]" in pattern:
        return  # refused by validation; "[!]...]" was a crash of the old translation
    assert compile_glob(pattern).match(name) is bool(reference_regex(pattern).match(name)), (pattern, name)


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(st.sampled_from(PATTERN_PARTS), min_size=1, max_size=8).map("".join),
    st.lists(st.sampled_from(NAME_CHARS), max_size=10).map("".join),
)
def test_glob_agrees_with_the_reference_regex(pattern: str, name: str) -> None:
    _agrees(pattern, name)


@pytest.mark.slow
@settings(max_examples=50000, deadline=None)
@given(
    st.lists(st.sampled_from(PATTERN_PARTS), min_size=1, max_size=14).map("".join),
    st.lists(st.sampled_from(NAME_CHARS), max_size=16).map("".join),
)
def test_glob_agrees_with_the_reference_regex_slow(pattern: str, name: str) -> None:
    _agrees(pattern, name)


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        pytest.param("*a" * 16 + "*b", "a" * 40, id="issue-case"),  # over a minute with the regex
        pytest.param("*a" * 50 + "*b", "a" * 10000, id="stars-a"),
        pytest.param("**a" * 50 + "b", "a/" * 5000, id="double-stars-a"),
        pytest.param("**/" * 50 + "*a" * 50, "a" * 9999 + "b", id="dir-stars-then-stars"),
        pytest.param("[!b]*" * 50 + "b", "a" * 10000, id="classes"),
        pytest.param("?*" * 200, "x" * 10000 + "/", id="any-stars"),
        pytest.param("*?b", "".join(chr(0x100 + i) for i in range(10000)), id="10k-distinct-characters"),
    ],
)
def test_adversarial_globs_match_in_linear_steps(pattern: str, name: str) -> None:
    glob = compile_glob(pattern)
    with glob_steps() as steps:
        assert glob.match(name) is False
    assert 1 <= steps["closure"] <= len(name) + 1 and steps["masks"] <= len(name), steps  # the automaton ran
    index = FileIndex({name: "1", name[:40]: "2"})
    with glob_steps() as steps:
        assert index.match([pattern]) == {}
    assert steps["masks"] <= len(name) + 40 and steps["closure"] <= len(name) + 42, steps


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["*", "**", "**/", "a", "?", "[!a]", "/"]), min_size=20, max_size=60).map("".join),
    st.lists(st.sampled_from("ab/"), min_size=10, max_size=50).map(lambda chars: "".join(chars) * 40),
)
def test_random_many_star_globs_match_in_linear_steps(pattern: str, name: str) -> None:
    with glob_steps() as steps:
        compile_glob(pattern).match(name + "c")
    assert 1 <= steps["closure"] <= len(name) + 2 and steps["masks"] <= len(name) + 1, steps


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("", "empty glob"),
        ("/etc/**", "glob '/etc/**' is absolute: globs are relative to the repository root"),
        (
            "../x/**",
            "glob '../x/**' has a '.' or '..' segment: globs are relative to the repository root and stay inside it",
        ),
        (
            "a/../../b",
            "glob 'a/../../b' has a '.' or '..' segment: globs are relative to the repository root and stay inside it",
        ),
        (
            "./src/*.py",
            "glob './src/*.py' has a '.' or '..' segment: globs are relative to the repository root and stay inside it",
        ),
        ("a//b", "glob 'a//b' has an empty path segment ('//')"),
        ("src/[ab", "glob 'src/[ab': unterminated [ at column 5 (write [[] for a literal '[')"),
        ("src/[z-a].py", "glob 'src/[z-a].py': bad range z-a in a [...] class (it matches nothing)"),
        (
            "src[/]x",
            "glob 'src[/]x': a [...] class cannot match '/' (in '[/]'): '*', '?' and classes stay inside one directory",
        ),
        ("a\x00b", "glob 'a\\x00b' holds a control character ('\\x00')"),
    ],
)
def test_glob_problems(pattern: str, problem: str) -> None:
    assert glob_problem(pattern) == problem


@pytest.mark.parametrize(
    "pattern", ["src/**", "src/", "**/*.py", "a/**/b[!x].py", "..x/y", "[[]x", "[]]", "a\\b", "x/*.[ch]"]
)
def test_good_globs_have_no_problem(pattern: str) -> None:
    assert glob_problem(pattern) is None


def test_norecursedirs_is_read_from_the_file_pytest_reads(tmp_path: Path) -> None:
    """Round 22: pytest 9's native `[tool.pytest]` table was not read, and a `pytest.ini` without a section (which
    pytest takes as its configuration all the same) was passed over for pyproject.toml's list."""
    from tracker.base.ignored_inputs import NORECURSE, norecursedirs

    assert norecursedirs(tmp_path) == (*NORECURSE, "__pycache__")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest]\nnorecursedirs = [".git"]\n')
    assert norecursedirs(tmp_path) == (".git", "__pycache__")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nnorecursedirs = ["gen", ".*"]\n')
    (tmp_path / "pytest.ini").write_text("# a comment only\n")
    assert norecursedirs(tmp_path) == (*NORECURSE, "__pycache__")
    (tmp_path / "pytest.ini").write_text("[pytest]\nnorecursedirs = .git gen\n")
    assert norecursedirs(tmp_path) == (".git", "gen", "__pycache__")


def test_a_pathological_glob_costs_status_no_time(repo, cli) -> None:
    # `*a*a*...*b` against a 40-character name took over a minute (regex backtracking) in status/update/check.
    # Counted, not timed: status matches paths globs by the linear automaton (tracker.base.globs.Glob), at most one
    # step a character of each path, per glob and status run (test_fingerprint bounds one match). The regex had no
    # steps to count: a count of 0 fails here.
    from tracker.base.fingerprint import tree_file_ids

    glob = "*a" * 16 + "*b"
    text = plan_text(phases=phase("P1", 'test = "tests/test_a.py"', paths=f'"{glob}", "src/**"'))
    root = repo(
        {"plans/0001-demo.md": text, "tests/test_a.py": "def test_a(): pass\n", "a" * 40: "x\n", "src/x.py": "1\n"}
    )
    assert cli(root, "verify").code == 0
    git(root, "add", ".tracker/evidence")  # else status notes on stderr that the run is not added yet
    with glob_steps() as steps:
        r = cli(root, "status")
        assert (r.code, r.err) == (0, "") and " done " in r.out
        (root / "src/x.py").write_text("2\n")
        assert " stale " in cli(root, "status").out
    statuses, globs, chars = 2, 2, sum(len(name) + 1 for name in tree_file_ids(root))
    bound = statuses * globs * chars  # masks <= characters, closures <= characters + 1, per path
    assert 1 <= steps["closure"] <= bound and steps["masks"] <= bound, (steps, bound)


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
    for path in subprocess.run(["git", "ls-files", "-z"], cwd=tree, capture_output=True, text=True).stdout.split("\0"):
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
