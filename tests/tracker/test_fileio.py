"""File edges: exact decoding, atomic writes only on change, the lock."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tracker.errors import FileError, LockedError, UsageError
from tracker.fileio import atomic_write, read_text, repo_lock, write_text_if_changed


def test_read_text_is_exact_and_rejects_non_utf8(tmp_path: Path) -> None:
    f = tmp_path / "p.md"
    f.write_bytes("\ufeffa\r\nb\rc\t€".encode())
    assert read_text(f) == "\ufeffa\r\nb\rc\t€"
    f.write_bytes(b"ok\n\xc3(")
    with pytest.raises(FileError) as err:
        read_text(f)
    assert str(err.value) == f"{f}: not UTF-8 text (byte 3: invalid continuation byte)"
    with pytest.raises(FileError) as err:
        read_text(tmp_path / "missing.md")
    assert str(err.value) == f"{tmp_path / 'missing.md'}: cannot read: No such file or directory"


def test_atomic_write_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    f = tmp_path / "p.md"
    f.write_text("old")
    os.chmod(f, 0o640)
    atomic_write(f, b"new")
    assert f.read_bytes() == b"new" and stat.S_IMODE(f.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.md"]


def test_write_only_when_changed(tmp_path: Path) -> None:
    f = tmp_path / "p.md"
    f.write_text("same")
    before = f.stat().st_mtime_ns
    assert write_text_if_changed(f, "same", "same") is False
    assert f.stat().st_mtime_ns == before
    assert write_text_if_changed(f, "same", "other") is True and f.read_text() == "other"


def test_lock_is_exclusive_and_reentrant_after_release(tmp_path: Path) -> None:
    with repo_lock(tmp_path):
        with pytest.raises(LockedError) as err, repo_lock(tmp_path, timeout=0.1):
            pass
        assert "another tracker process holds the lock" in str(err.value)
    with repo_lock(tmp_path, timeout=0.1):
        pass


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_new_files_get_the_umask_mode_existing_ones_keep_theirs(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "new.json", b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o666 & ~umask
    os.chmod(tmp_path / "new.json", 0o600)
    atomic_write(tmp_path / "new.json", b"[]")
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o600


@pytest.mark.parametrize("value", ["abc", "-1", "nan", ""])
def test_a_bad_lock_timeout_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TRACKER_LOCK_TIMEOUT", value)
    with pytest.raises(UsageError) as err, repo_lock(tmp_path):
        pass
    assert str(err.value) == f"TRACKER_LOCK_TIMEOUT={value!r}: expected a number of seconds >= 0"
    monkeypatch.setenv("TRACKER_LOCK_TIMEOUT", "0.5")
    with repo_lock(tmp_path):
        pass


def test_first_use_of_tracker_dir_writes_its_gitignore(tmp_path: Path) -> None:
    atomic_write(tmp_path / ".tracker" / "cache" / "plans.json", b"{}")
    assert (tmp_path / ".tracker" / ".gitignore").read_text().splitlines()[1:] == ["cache/", "lock"]
    (tmp_path / ".tracker" / ".gitignore").write_text("mine\n")
    with repo_lock(tmp_path, timeout=0.1):
        pass
    assert (tmp_path / ".tracker" / ".gitignore").read_text() == "mine\n"  # never overwritten
    with repo_lock(tmp_path / "other", timeout=0.1):
        pass
    assert (tmp_path / "other" / ".tracker" / ".gitignore").exists()
