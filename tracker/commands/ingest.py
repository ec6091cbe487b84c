"""``tracker ingest FILE... [--host H] [--commit C]``: validate evidence made elsewhere, copy it into the store.

Every file is read and validated before anything is written (all or nothing). Benchmark result
files are copied byte for byte; pytest reportlog / JUnit XML files become ``tracker-test-run``
evidence files, with the file ids of the commit they ran on so staleness works as for local runs;
evidence files written by ``pytest --tracker-record`` on another machine are checked and copied as is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

from tracker.errors import ExitCode, UsageError
from tracker.evidence import EVIDENCE_DIR
from tracker.fileio import atomic_write, repo_lock
from tracker.ingest import IngestError, TestRun, check_test_run, parse_junit, parse_reportlog, sniff


def evidence_name(kind: str, host: str) -> str:
    """A store file name two branches never both create (time, host, kind, random suffix)."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in host)[:40] or "host"
    return f"{stamp}-{safe}-{kind}-{secrets.token_hex(3)}.json"


def commit_files(root: Path, commit: str) -> tuple[str, dict[str, str]]:
    """(full commit id, {path: blob id}) of a commit, from one ``git ls-tree`` call."""
    def git(*args: str) -> bytes:
        proc = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, capture_output=True, check=False)
        if proc.returncode != 0:
            raise UsageError(f"--commit {commit}: not a commit of this repository ({proc.stderr.decode().strip()})")
        return proc.stdout

    full = git("rev-parse", "--verify", "--end-of-options", f"{commit}^{{commit}}").decode().strip()
    files: dict[str, str] = {}
    for entry in git("ls-tree", "-r", "-z", full).split(b"\0"):
        if entry:
            meta, _, path = entry.partition(b"\t")
            mode, kind, blob = meta.decode().split(" ")
            if kind == "blob" and not path.startswith(b".tracker/"):
                files[path.decode("utf-8", "surrogateescape")] = blob
    return full, files


def _run_time(run: TestRun, path: Path) -> str:
    """The run's own time where the file records it (JUnit timestamp), else the file's mtime."""
    stamp = None
    if run.kind == "junit":
        import xml.etree.ElementTree as ET

        top = ET.parse(path).getroot()
        suite = top if top.tag == "testsuite" else top.find("testsuite")
        stamp = suite.get("timestamp") if suite is not None else None
    try:
        when = dt.datetime.fromisoformat(stamp) if stamp else dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
    except ValueError:
        when = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_run_document(
    run: TestRun, path: Path, host: str, commit: str | None, assumed: bool, files: dict[str, str], source_sha256: str = ""
) -> dict[str, Any]:
    """The ``tracker-test-run`` evidence document for a parsed reportlog / JUnit run."""
    doc = {
        "schema": "tracker-test-run",
        "version": 1,
        "status": "complete" if run.complete else "interrupted",
        "provenance": {
            "commit": commit, "dirty": None, "time": _run_time(run, path), "host": host,
            "python": None, "pytest": run.pytest_version, "platform": None, "cuda": None,
            "command": f"tracker ingest {path.name}", "ingested_from": run.kind, "commit_assumed": assumed,
            "source_sha256": source_sha256,
        },
        "rootdir": None,
        "gates": {},
        "files": files,
        "tests": sorted(
            ({"nodeid": o.nodeid, "outcome": o.outcome, "reason": o.reason, "duration": round(o.duration, 6),
              "markers": sorted(o.markers)} for o in run.outcomes),
            key=lambda r: r["nodeid"],
        ),
        "exitstatus": run.exitstatus,
        "losses": run.losses + ([run.why_incomplete] if run.why_incomplete else []),
    }
    if run.crashed_in is not None:
        # The plugin's form of a crash: that one test is an error of this run, nothing else of it counts.
        doc["status"] = "incomplete"
        doc["running"] = {"nodeid": run.crashed_in.nodeid, "markers": sorted(run.crashed_in.markers)}
    return doc


def _schema_of(path: Path) -> object:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None  # the result-file loader reports why
    return doc.get("schema") if isinstance(doc, dict) else None


def run(root: Path, paths: list[Path], host: str | None = None, commit: str | None = None, out: TextIO | None = None) -> int:
    """Validate every file, then write them all into ``.tracker/evidence/``; exit 8 on a bad file."""
    out = out or sys.stdout
    store = root / EVIDENCE_DIR
    existing: set[str] = set()
    for stored in sorted(store.glob("*.json")) if store.is_dir() else []:
        data = stored.read_bytes()
        existing.add(hashlib.sha256(data).hexdigest())
        if b"source_sha256" in data:  # an ingested test run remembers the file it came from
            try:
                existing.add(str(json.loads(data)["provenance"]["source_sha256"]))
            except (ValueError, KeyError, TypeError):
                pass
    planned: list[tuple[Path, bytes, str, str, str]] = []  # (source, bytes to write, kind, host, note)
    tree: tuple[str, dict[str, str]] | None = None
    for path in paths:
        kind = sniff(path)
        if kind == "json" and _schema_of(path) == "tracker-test-run":
            data = path.read_bytes()
            doc = check_test_run(path, data)
            digest = hashlib.sha256(data).hexdigest()
            if digest in existing:
                out.write(f"{path}: already in the store, skipped\n")
                continue
            existing.add(digest)
            # Recorded by the plugin with its own provenance and file ids: stored byte for byte.
            note = f"{len(doc['tests'])} test(s) from {doc['provenance']['host']}, {doc['status']}"
            planned.append((path, data, "pytest", str(doc["provenance"]["host"]), note))
            continue
        if kind == "json":
            from tracker.results import load_result

            loaded = load_result(path)
            data = path.read_bytes()
            if loaded.sha256 in existing:
                out.write(f"{path}: already in the store, skipped\n")
                continue
            existing.add(loaded.sha256)
            planned.append((path, data, "bench", loaded.host, f"{len(loaded.cases)} case(s) from {loaded.host} ({loaded.gpu or 'no GPU'})"))
            continue
        source_sha = hashlib.sha256(path.read_bytes()).hexdigest()
        if source_sha in existing:
            out.write(f"{path}: already in the store, skipped\n")
            continue
        existing.add(source_sha)
        parsed = parse_reportlog(path) if kind == "reportlog" else parse_junit(path, root)
        if tree is None:
            tree = commit_files(root, commit or "HEAD")
        doc = test_run_document(parsed, path, host or "unknown", tree[0], commit is None, tree[1], source_sha)
        if parsed.crashed_in is not None:
            why = f" ({parsed.why_incomplete}: only {parsed.crashed_in.nodeid} counts, as an error)"
        else:
            why = f" ({parsed.why_incomplete}: counts for nothing)" if not parsed.complete else ""
        note = f"{len(parsed.outcomes)} test(s), {doc['status']}{why}"
        planned.append((path, (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode(), "pytest", host or "unknown", note))
    with repo_lock(root):
        for source, data, kind, name_host, note in planned:
            target = store / evidence_name(kind, name_host)
            atomic_write(target, data)
            out.write(f"{source} -> {target.relative_to(root).as_posix()}: {note}\n")
    return int(ExitCode.OK)


__all__ = ["run", "IngestError", "commit_files", "test_run_document"]
