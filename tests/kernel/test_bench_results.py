"""bench/results.py: the file it writes matches the shared contract; fingerprints are git blob ids."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


finite = st.floats(allow_nan=False, allow_infinity=False)
text = st.text(alphabet=st.sampled_from('[]{},:\n\t"\\ 0123456789.e-ab'), max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    samples=st.lists(finite | st.integers(-(2**53), 2**53), max_size=40),
    float32s=st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=10),
    label=text,
)
def test_a_written_file_keeps_every_digit_a_float32_holds_and_lays_samples_on_one_line(
    tmp_path_factory: pytest.TempPathFactory, samples: list[float], float32s: list[float], label: str
) -> None:
    # CUDA events time in float32 milliseconds: scaled to microseconds in float64, their 9 digits are the measurement.
    scaled = [f * 1000.0 for f in float32s]
    cases = [
        results.case("m", {"label": label, "nested": label}, "us", "lower", samples, {"n": len(samples), "x": 0.1}),
        results.case("m", {"label": "[1,\n2]"}, "us", "lower", scaled, {"n": len(scaled)}, {"note": label}),
    ]
    doc = results.document("verify", {"host": "h", "command": label}, cases)
    path = results.write(doc, tmp_path_factory.mktemp("out"), results.utc_now())
    text_ = path.read_text()
    data = json.loads(text_)
    assert data["provenance"]["command"] == label and data["cases"][0]["params"]["label"] == label
    assert data["cases"][1]["info"] == {"note": label} and data["cases"][1]["params"]["label"] == "[1,\n2]"
    for kept, measured in zip(data["cases"][0]["samples"], samples, strict=True):
        if float(measured).is_integer():
            assert kept == float(measured)  # whole numbers (bytes, counts) exactly
        else:
            assert abs(kept - measured) <= 5e-9 * abs(measured)
    for kept, f in zip(data["cases"][1]["samples"], float32s, strict=True):
        assert struct.unpack("f", struct.pack("f", kept / 1000.0))[0] == f  # the float32 comes back bit for bit
    for case in data["cases"]:  # each sample list on one line of its own
        assert f'"samples": {json.dumps(case["samples"])}' in text_


def test_a_verify_file_of_record_halves_and_reads_back_the_same_verdicts() -> None:
    # The record run's verify file of 2026-12-07 (H100), as this writer would lay it out now.
    path = Path(__file__).resolve().parents[2] / "bench/results/20261207T222237731600Z-vm-verify-888b25.json"
    doc = json.loads(path.read_text())
    cases = [
        results.case(c["metric"], c["params"], c["unit"], c["direction"], c["samples"], c["stats"], c.get("info"))
        for c in doc["cases"]
    ]
    again = results.layout({**doc, "cases": cases})
    assert len(again) < 0.6 * path.stat().st_size
    for old, new in zip(doc["cases"], json.loads(again)["cases"], strict=True):
        assert sorted(old["samples"]) == pytest.approx(sorted(new["samples"]), rel=5e-9, abs=0)
        assert old["stats"]["median"] == pytest.approx(new["stats"]["median"], rel=5e-9, abs=0)
