"""File edges: exact decoding, atomic writes only on change, the lock."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tracker.base.fileio import atomic_write, read_text, repo_lock, write_text_if_changed
from tracker.errors import FileError, LockedError, UsageError


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


# --- writers apply the readers' rule: nothing of the tracker's is written outside the repository ------------------

_MANUAL_PLAN = (
    '# Demo\n\n```plan\nid = "0001"\ntitle = "Demo"\n```\n\n'
    '```phase\nid = "P1"\ntitle = "Phase P1"\n[[gate]]\nmanual = "Looked at it"\n```\n'
)


def _linked_out(tmp_path: Path, root: Path, link: str) -> Path:
    """Make ``root/link`` a symlink to a fresh folder outside ``root``; that folder."""
    outside = tmp_path / f"outside-{link.replace('/', '-')}"
    outside.mkdir()
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    (root / link).symlink_to(outside, target_is_directory=True)
    return outside


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize("link", [".tracker", ".tracker/evidence"])
def test_signoff_refuses_a_store_linked_out_of_the_repository(cli, repo, tmp_path: Path, link: str) -> None:  # type: ignore[no-untyped-def]
    root = repo({"plans/0001-demo.md": _MANUAL_PLAN})
    outside = _linked_out(tmp_path, root, link)
    result = cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "looked")
    assert result.code == 8, (result.out, result.err)
    assert f"{link}: refused: it resolves to {outside}, outside the repository" in result.err, result.err
    assert "Traceback" not in result.err and _files(outside) == []


def test_update_refuses_a_lock_linked_out_of_the_repository(cli, repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = repo({"plans/0001-demo.md": _MANUAL_PLAN})
    outside = _linked_out(tmp_path, root, ".tracker")
    result = cli(root, "update")
    assert result.code == 8 and "outside the repository" in result.err and "Traceback" not in result.err, result.err
    assert _files(outside) == []


def test_a_cache_linked_out_of_the_repository_is_not_written(cli, repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = repo({"plans/0001-demo.md": _MANUAL_PLAN})
    outside = _linked_out(tmp_path, root, ".tracker/cache")
    assert cli(root, "status").code == 0  # a cache only saves time: the command works without one
    assert _files(outside) == []


def test_atomic_write_under_a_tracker_dir_linked_out_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    outside = _linked_out(tmp_path, root, ".tracker")
    with pytest.raises(OSError, match="outside the repository"):
        atomic_write(root / ".tracker/evidence/x.json", b"{}")
    assert _files(outside) == []
    (root / ".tracker").unlink()
    (root / "store").mkdir()
    (root / ".tracker").symlink_to(root / "store")  # a link that stays inside is followed
    atomic_write(root / ".tracker/evidence/x.json", b"{}")
    assert (root / "store/evidence/x.json").read_bytes() == b"{}"


def test_verify_refuses_a_cache_linked_out_of_the_repository(cli, repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    plan = (
        '# Demo\n\n```plan\nid = "0001"\ntitle = "Demo"\n```\n\n'
        '```phase\nid = "P1"\ntitle = "Phase P1"\n[[gate]]\ntest = "tests/test_a.py"\n```\n'
    )
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": "def test_a():\n    assert True\n"})
    outside = _linked_out(tmp_path, root, ".tracker/cache")
    result = cli(root, "verify", "0001/P1")
    assert result.code == 8, (result.out, result.err)
    assert ".tracker/cache/pycache: cannot write: refused: it resolves to" in result.err, result.err
    assert _files(outside) == [] and not (root / ".tracker/evidence").exists()
