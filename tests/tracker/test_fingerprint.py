"""Fingerprints follow the shared contract; the tree listing matches git; globs match as documented."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from tracker_testutil import git, glob_steps

from tracker.base.contract import blob_id, file_id, set_fingerprint
from tracker.base.file_index import FileIndex, changed_files
from tracker.base.fingerprint import tree_file_ids, walk_file_ids
from tracker.base.globs import compile_glob, glob_problem


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

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


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
