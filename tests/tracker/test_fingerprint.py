"""Fingerprints follow the shared contract; the tree listing matches git; globs match as documented."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from tracker_testutil import git

from tracker.fingerprint import FileIndex, blob_id, changed_files, glob_regex, set_fingerprint, tree_file_ids, walk_file_ids


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
    assert bool(glob_regex(pattern).match(path)) is hit


def test_file_index_matches_and_fingerprints() -> None:
    idx = FileIndex({"k/a.py": "1", "k/b/c.py": "2", "kz.py": "3", "z.py": "4"})
    assert idx.match(["k/**"]) == {"k/a.py": "1", "k/b/c.py": "2"}
    assert idx.match(["*.py"]) == {"kz.py": "3", "z.py": "4"}
    assert idx.fingerprint(["k/**"]) == set_fingerprint({"k/a.py": "1", "k/b/c.py": "2"})
    assert changed_files({"a": "1", "b": "2"}, {"b": "3", "c": "4"}) == ["a", "b", "c"]
