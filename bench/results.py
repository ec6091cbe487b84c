"""The benchmark result file (schema "tracker-bench-result", version 1), written with the standard library only.

Provenance: commit/dirty from the environment variables TRACKER_COMMIT / TRACKER_DIRTY ("0"/"1") when
TRACKER_COMMIT is set (the GPU machine gets a copy of the tree whose `.git`, if any, may be stale), else from
git when the repo has a `.git`; the
fingerprint is the set of git blob ids of the files the benchmark measures, hashed as the tracker does.
The file is written atomically (temp file + rename): a run leaves a whole file or none.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import socket
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA = "tracker-bench-result"
VERSION = 1
MEASURED = ("kernel/**/*.py", "kernel/csrc/*", "bench/*.py")


def blob_id(data: bytes) -> str:
    """The git blob id of a file's bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def measured_files(root: Path, patterns: tuple[str, ...] = MEASURED) -> dict[str, str]:
    """POSIX path (relative to root) -> blob id for every regular file matching the patterns."""
    files: dict[str, str] = {}
    for pattern in patterns:
        for path in root.glob(pattern):
            if path.is_file() and "__pycache__" not in path.parts:
                files[path.relative_to(root).as_posix()] = blob_id(path.read_bytes())
    return files


def fingerprint(files: dict[str, str]) -> dict[str, Any]:
    """The fingerprint block: sha256 over "path\\0blob\\n" lines in path order."""
    text = "".join(f"{path}\0{blob}\n" for path, blob in sorted(files.items()))
    return {"algorithm": "git-blob-sha1", "digest": hashlib.sha256(text.encode()).hexdigest(),
            "files": dict(sorted(files.items()))}


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
                committed[path] = meta.split()[2]
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
    return datetime.now(timezone.utc).replace(microsecond=0)


def provenance(root: Path, command: str, environment: dict[str, str | None], now: datetime) -> dict[str, Any]:
    """The provenance block; `environment` carries gpu/driver/cuda/torch/triton (None when unknown)."""
    files = measured_files(root)
    commit, dirty = commit_state(root, files)
    return {"commit": commit, "dirty": dirty, "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "host": socket.gethostname(), **environment, "python": platform.python_version(),
            "command": command, "fingerprint": fingerprint(files)}


def case(metric: str, params: dict[str, str | int | float | bool], unit: str, direction: str,
         samples: list[float], stats: dict[str, float | int],
         info: dict[str, str | int | float | bool] | None = None) -> dict[str, Any]:
    """One entry of `cases`; `info` holds run conditions outside the case's identity (seeds, split counts)."""
    if direction not in ("lower", "higher"):
        raise ValueError(f"direction: expected 'lower' or 'higher', got {direction!r}")
    entry: dict[str, Any] = {"metric": metric, "params": params}
    if info:
        entry["info"] = info
    return {**entry, "unit": unit, "direction": direction, "samples": [float(s) for s in samples], "stats": stats}


def document(benchmark: str, prov: dict[str, Any], cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole result document."""
    return {"schema": SCHEMA, "version": VERSION, "benchmark": benchmark, "provenance": prov, "cases": cases}


def write(doc: dict[str, Any], out_dir: Path, now: datetime) -> Path:
    """Write `<benchmark>-<UTC time>-<host>.json` into out_dir atomically; returns its path."""
    host = re.sub(r"[^A-Za-z0-9._-]", "_", doc["provenance"]["host"]) or "host"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{doc['benchmark']}-{now.strftime('%Y%m%dT%H%M%SZ')}-{host}.json"
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
