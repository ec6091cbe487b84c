"""bench/results.py: the file it writes matches the shared contract; fingerprints are git blob ids."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import results


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def make_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in {
        "kernel/verify.py": "x = 1\n",
        "kernel/csrc/k.cuh": "// k\n",
        "kernel/tools/t.py": "t\n",
        "kernel/NOTES.md": "notes\n",
        "bench/verify.py": "b\n",
        "bench/README.md": "r\n",
        "bench/results/old.json": "{}\n",
        "tracker/cli.py": "c\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root.parent, "init", "-q", str(root))
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    return root


def test_blob_ids_equal_git_hash_object(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    files = results.measured_files(root)
    assert sorted(files) == ["bench/verify.py", "kernel/csrc/k.cuh", "kernel/tools/t.py", "kernel/verify.py"]
    for path, blob in files.items():
        assert blob == git(root, "hash-object", path)
    data = b"\x00binary\r\n"
    (root / "kernel" / "csrc" / "bin.cu").write_bytes(data)
    assert results.measured_files(root)["kernel/csrc/bin.cu"] == git(root, "hash-object", "kernel/csrc/bin.cu")


def test_fingerprint_digest_follows_contract() -> None:
    files = {"kernel/b.py": "2" * 40, "bench/a.py": "1" * 40}
    fp = results.fingerprint(files)
    text = f"bench/a.py\0{'1' * 40}\nkernel/b.py\0{'2' * 40}\n"
    assert fp == {
        "algorithm": "git-blob-sha1",
        "digest": hashlib.sha256(text.encode()).hexdigest(),
        "files": {"bench/a.py": "1" * 40, "kernel/b.py": "2" * 40},
        "patterns": list(results.MEASURED),  # the globs that named the files: a new match is new code
    }
    assert "patterns" not in results.fingerprint(files, ())


def test_commit_and_dirty_from_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    root = make_repo(tmp_path)
    head = git(root, "rev-parse", "HEAD")
    assert results.commit_state(root, results.measured_files(root)) == (head, False)
    (root / "kernel" / "NOTES.md").write_text("edited, but not measured\n")
    assert results.commit_state(root, results.measured_files(root)) == (head, False)
    (root / "kernel" / "verify.py").write_text("x = 2\n")
    assert results.commit_state(root, results.measured_files(root)) == (head, True)
    (root / "kernel" / "verify.py").write_text("x = 1\n")
    (root / "bench" / "new.py").write_text("untracked\n")
    assert results.commit_state(root, results.measured_files(root)) == (head, True)


def test_environment_wins_over_a_stale_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path)  # a copy whose .git is older than its files
    (root / "kernel" / "verify.py").write_text("x = 2\n")
    monkeypatch.setenv("TRACKER_COMMIT", "b" * 40)
    monkeypatch.setenv("TRACKER_DIRTY", "0")
    assert results.commit_state(root, results.measured_files(root)) == ("b" * 40, False)


def test_commit_and_dirty_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "copy"  # the GPU machine's copy of the tree: no .git
    root.mkdir()
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    monkeypatch.delenv("TRACKER_DIRTY", raising=False)
    assert results.commit_state(root, {}) == (None, None)
    monkeypatch.setenv("TRACKER_COMMIT", "a" * 40)
    monkeypatch.setenv("TRACKER_DIRTY", "1")
    assert results.commit_state(root, {}) == ("a" * 40, True)
    monkeypatch.setenv("TRACKER_DIRTY", "0")
    assert results.commit_state(root, {}) == ("a" * 40, False)
    monkeypatch.setenv("TRACKER_DIRTY", "yes")
    with pytest.raises(ValueError, match="TRACKER_DIRTY: expected '0' or '1', got 'yes'"):
        results.commit_state(root, {})
    monkeypatch.setenv("TRACKER_COMMIT", "HEAD")
    with pytest.raises(ValueError, match="TRACKER_COMMIT: expected 40 lowercase hex digits, got 'HEAD'"):
        results.commit_state(root, {})


def test_written_file_matches_contract(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    now = datetime(2026, 11, 29, 11, 2, 3, tzinfo=UTC)
    env = {"gpu": "NVIDIA H200", "driver": "580.159.04", "cuda": "13.0", "torch": "2.11.0+cu130", "triton": "3.6.0"}
    prov = results.provenance(root, "python -m bench verify --cases long", env, now)
    samples = [41.2, 40.9, 41.0]
    stats = {"n": 3, "median": 41.0, "min": 40.9, "mean": 41.03, "p90": 41.2}
    params = {"impl": "cuda", "ctx": 91000, "heads": 8, "nodes": 16, "batch": 1}
    doc = results.document("verify", prov, [results.case("verify_attn.time_us", params, "us", "lower", samples, stats)])
    out = tmp_path / "out"
    path = results.write(doc, out, now)
    # The tracker's file contract names it (tracker.base.contract.evidence_name): time of writing, host, benchmark.
    assert re.fullmatch(r"\d{8}T\d{12}Z-[A-Za-z0-9_-]+-verify-[0-9a-f]{6}\.json", path.name), path.name
    assert [p.name for p in out.iterdir()] == [path.name]  # no temp file left behind
    data = json.loads(path.read_text())
    assert set(data) == {"schema", "version", "benchmark", "provenance", "cases"}
    assert (data["schema"], data["version"], data["benchmark"]) == ("tracker-bench-result", 1, "verify")
    p = data["provenance"]
    assert set(p) == {
        "commit",
        "dirty",
        "time",
        "host",
        "gpu",
        "driver",
        "cuda",
        "torch",
        "triton",
        "python",
        "command",
        "fingerprint",
    }
    assert p["commit"] == git(root, "rev-parse", "HEAD") and p["dirty"] is False
    assert p["time"] == "2026-11-29T11:02:03Z" and p["command"] == "python -m bench verify --cases long"
    ls = dict(line.split("\t")[::-1] for line in git(root, "ls-files", "-s").splitlines())
    assert p["fingerprint"]["files"] == {path_: ls[path_].split()[1] for path_ in p["fingerprint"]["files"]}
    assert data["cases"] == [
        {
            "metric": "verify_attn.time_us",
            "params": params,
            "unit": "us",
            "direction": "lower",
            "samples": samples,
            "stats": stats,
        }
    ]


def test_bad_direction_and_non_finite_samples(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="direction: expected 'lower' or 'higher', got 'up'"):
        results.case("m", {}, "us", "up", [1.0], {"n": 1})
    doc = results.document("verify", {"host": "h"}, [results.case("m", {}, "us", "lower", [float("nan")], {})])
    with pytest.raises(ValueError):
        results.write(doc, tmp_path, results.utc_now())
    assert list(tmp_path.iterdir()) == []  # nothing half-written
