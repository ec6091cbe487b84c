"""File edges: exact decoding, atomic writes only on change, the lock."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tracker.base import fileio
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


def test_a_write_through_a_link_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    """A link retargeted out of the repository after the plan was read is not written through."""
    from tracker.base.fileio import write_text_if_changed
    from tracker.errors import FileError

    outside = tmp_path / "outside.md"
    outside.write_text("old")
    root = tmp_path / "repo"
    (root / "plans").mkdir(parents=True)
    (root / "plans/0001-x.md").symlink_to(outside)
    with pytest.raises(
        FileError, match=r"plans/0001-x\.md: refused: it resolves to .*outside\.md, outside the repository"
    ):
        write_text_if_changed(root / "plans/0001-x.md", "old", "new", root=root)
    assert outside.read_text() == "old" and (root / "plans/0001-x.md").is_symlink()


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
