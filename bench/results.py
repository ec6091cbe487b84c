"""The benchmark result file (schema "tracker-bench-result", version 1), written with the standard library only.

Provenance: commit/dirty from the environment variables TRACKER_COMMIT / TRACKER_DIRTY ("0"/"1") when
TRACKER_COMMIT is set (the GPU machine gets a copy of the tree whose `.git`, if any, may be stale), else from
git when the repo has a `.git`; the
fingerprint is the set of git blob ids of the files the benchmark measures, hashed as the tracker does.
Blob ids, the fingerprint, the file's name and its atomic write (a run leaves a whole file or none) are the
tracker's file contract (:mod:`tracker.base.contract`, standard library only: this module still needs no tracker
dependency installed).
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import stat
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracker.base.contract import (
    RESULT_SCHEMA,
    RESULT_VERSION,
    atomic_write,
    blob_id,
    evidence_name,
    file_id,
    mode_of,
    set_fingerprint,
)

SCHEMA = RESULT_SCHEMA
VERSION = RESULT_VERSION
MEASURED = ("kernel/**/*.py", "kernel/csrc/*", "bench/*.py")


__all__ = ["blob_id"]  # re-exported: the contract's, what `git hash-object` prints


def measured_files(root: Path, patterns: tuple[str, ...] = MEASURED) -> dict[str, str]:
    """POSIX path (relative to root) -> blob id for every regular file matching the patterns."""
    files: dict[str, str] = {}
    for pattern in patterns:
        for path in root.glob(pattern):
            if path.is_file() and "__pycache__" not in path.parts:
                # As the tracker's fingerprints have it: a link's id is its target's name, a mode other than a plain
                # file's folded in (tracker.base.contract.file_id).
                st = path.lstat()
                data = os.fsencode(os.readlink(path)) if stat.S_ISLNK(st.st_mode) else path.read_bytes()
                files[path.relative_to(root).as_posix()] = file_id(blob_id(data), mode_of(st.st_mode))
    return files


def fingerprint(files: dict[str, str], patterns: tuple[str, ...] = MEASURED) -> dict[str, Any]:
    """The fingerprint block: the contract's :func:`tracker.base.contract.set_fingerprint` of the files, the files, and
    the globs that named them (a file matching them later, not measured here, is new code: the verdict is stale)."""
    files = dict(sorted(files.items()))
    block: dict[str, Any] = {"algorithm": "git-blob-sha1", "digest": set_fingerprint(files), "files": files}
    return {**block, "patterns": list(patterns)} if patterns else block


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def commit_state(root: Path, files: dict[str, str]) -> tuple[str | None, bool | None]:
    """(commit, dirty): dirty means a measured file differs from the commit (or is not in it).

    TRACKER_COMMIT / TRACKER_DIRTY, when set, win over git: a machine that runs a copy of the tree may carry a
    stale .git (the H200 of the `run` tool did: its HEAD was the session's first commit)."""
    if (root / ".git").exists() and not os.environ.get("TRACKER_COMMIT"):
        head = _git(root, "rev-parse", "HEAD")
        tree = _git(root, "ls-tree", "-r", "HEAD", "--", "kernel", "bench")
        if head is not None and tree is not None:
            committed = {}
            for line in tree.splitlines():
                meta, path = line.split("\t", 1)
                mode, _, blob = meta.split()
                committed[path] = file_id(blob, mode)
            dirty = any(committed.get(path) != blob for path, blob in files.items())
            return head.strip(), dirty
    commit = os.environ.get("TRACKER_COMMIT") or None
    if commit is not None and not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"TRACKER_COMMIT: expected 40 lowercase hex digits, got {commit!r}")
    dirty_env = os.environ.get("TRACKER_DIRTY")
    if dirty_env not in (None, "", "0", "1"):
        raise ValueError(f"TRACKER_DIRTY: expected '0' or '1', got {dirty_env!r}")
    return commit, None if dirty_env in (None, "") else dirty_env == "1"


def utc_now() -> datetime:
    """The current time, UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0)


def provenance(root: Path, command: str, environment: dict[str, str | None], now: datetime) -> dict[str, Any]:
    """The provenance block; `environment` carries gpu/driver/cuda/torch/triton (None when unknown)."""
    files = measured_files(root)
    commit, dirty = commit_state(root, files)
    return {
        "commit": commit,
        "dirty": dirty,
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(),
        **environment,
        "python": platform.python_version(),
        "command": command,
        "fingerprint": fingerprint(files),
    }


def case(
    metric: str,
    params: dict[str, str | int | float | bool],
    unit: str,
    direction: str,
    samples: list[float],
    stats: dict[str, float | int],
    info: dict[str, str | int | float | bool] | None = None,
) -> dict[str, Any]:
    """One entry of `cases`; `info` holds run conditions outside the case's identity (seeds, split counts)."""
    if direction not in ("lower", "higher"):
        raise ValueError(f"direction: expected 'lower' or 'higher', got {direction!r}")
    entry: dict[str, Any] = {"metric": metric, "params": params}
    if info:
        entry["info"] = info
    return {
        **entry,
        "unit": unit,
        "direction": direction,
        "samples": [stored(s) for s in samples],
        "stats": {k: stored(v) if isinstance(v, float) else v for k, v in stats.items()},
    }


def stored(value: float) -> float:
    """A measured value as the file keeps it: a whole number exactly, any other to 9 significant digits. That is every
    digit of a float32 (CUDA events time in float32 milliseconds) and far finer than any timer's noise, against the 17
    that a float64 product of unit conversions prints: a verify file was 817 KB with them, 459 KB without
    (2026-12-07), and a device call carries at most 64 MiB of the tree."""
    number = float(value)
    return number if number.is_integer() else float(f"{number:.9g}")


# A JSON array of numbers alone, as json.dumps(indent=1) lays it out: one number a line.
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUMBER_ARRAY = re.compile(rf"\[\n\s*({_NUMBER}(?:,\n\s*{_NUMBER})*)\n\s*\]")


def layout(doc: dict[str, Any]) -> str:
    """The document as indented JSON with each array of numbers (samples) on one line."""
    text = json.dumps(doc, indent=1, allow_nan=False)
    return _NUMBER_ARRAY.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text) + "\n"


def document(benchmark: str, prov: dict[str, Any], cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole result document."""
    return {"schema": SCHEMA, "version": VERSION, "benchmark": benchmark, "provenance": prov, "cases": cases}


def write(doc: dict[str, Any], out_dir: Path, now: datetime | None = None) -> Path:
    """Write the document into out_dir atomically, named by the contract's rule
    (:func:`tracker.base.contract.evidence_name`: ``<UTC time of writing to the µs>-<host>-<benchmark>-<6 hex>.json``,
    so names sort by when they were written); returns its path. ``now`` (the run's time, in its provenance) is not part
    of the name."""
    text = layout(doc)
    target = out_dir / evidence_name(str(doc["benchmark"]), str(doc["provenance"]["host"]))
    atomic_write(target, text.encode("utf-8"), keep_mode=False)
    return target
