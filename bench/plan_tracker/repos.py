"""The synthetic git repositories the tracker's benchmarks time the tracker on, and the git they are built with.

- :func:`build_synthetic`: speed.py's ``synthetic`` repository, many plans (1,000 x 10 phases by default);
- :func:`build_gates`: speed.py's ``gates`` repositories, one phase of thousands of test gates;
- :func:`build_verify`: verify_overhead.py's repository, N test gates, one test each, in phases of 10.

(speed.py's ``history`` repository, real evidence and a generated history, is :mod:`bench.plan_tracker.history`.)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.com",
}
GITIGNORE = b".tracker/cache/\n.tracker/lock\n__pycache__/\n"


def blob(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; its stdout."""
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {root}: {proc.stderr.strip()}")
    return proc.stdout


def write_files(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def commit_files(root: Path, files: dict[str, bytes], message: str) -> None:
    """Write ``files`` into a new git repository at ``root`` (branch ``main``) and commit them all."""
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def build_synthetic(root: Path, n_plans: int, n_phases: int) -> None:
    """speed.py's ``synthetic`` repository: ``n_plans`` plans of ``n_phases`` phases (two test gates and one glob a
    phase), committed, and one evidence file meeting all gates of odd plans and half of even ones."""
    files: dict[str, bytes] = {}
    tests = []
    for p in range(1, n_plans + 1):
        phases = []
        for k in range(1, n_phases + 1):
            dep = f'depends = ["P{k - 1}"]\n' if k > 1 else ""
            phases.append(
                f'```phase\nid = "P{k}"\ntitle = "Phase {k} of plan {p}"\n{dep}paths = ["src/m{p:04d}/**"]\n\n'
                f'[[gate]]\ntest = "tests/test_m{p:04d}.py::test_{k}_a"\n'
                f'[[gate]]\ntest = "tests/test_m{p:04d}.py::test_{k}_b"\n```\n'
            )
            tests += [f"tests/test_m{p:04d}.py::test_{k}_a", f"tests/test_m{p:04d}.py::test_{k}_b"]
        text = f'# Plan {p}\n\n```plan\nid = "{p:04d}"\ntitle = "Synthetic plan {p}"\n```\n\nProse.\n\n' + "\n".join(
            phases
        )
        files[f"plans/{p:04d}-synthetic.md"] = text.encode()
        files[f"src/m{p:04d}/a.py"] = f"A = {p}\n".encode()
        files[f"src/m{p:04d}/b.py"] = f"B = {p}\n".encode()
        files[f"tests/test_m{p:04d}.py"] = "".join(
            f"def test_{k}_{x}():\n    pass\n\n\n" for k in range(1, n_phases + 1) for x in "ab"
        ).encode()
    commit_files(root, files, "synthetic")
    # Odd plans: every gate passed (phases done, so staleness is computed); even plans: every
    # second gate failed.
    recs: list[dict[str, object]] = [
        {
            "nodeid": t,
            "outcome": "passed" if int(t[12:16]) % 2 or t.endswith("_a") else "failed",
            "reason": "",
            "duration": 0.0,
            "markers": [],
        }
        for t in tests
    ]
    evidence = {
        "schema": "tracker-test-run",
        "version": 1,
        "status": "complete",
        "provenance": {"commit": None, "dirty": False, "time": "2026-11-29T00:00:00Z", "host": "bench"},
        "gates": {},
        "files": {rel: blob(data) for rel, data in files.items()},
        "tests": recs,
    }
    (root / ".tracker/evidence").mkdir(parents=True)
    (root / ".tracker/evidence/20261129T000000Z-bench-verify-000000.json").write_text(json.dumps(evidence))


def build_gates(root: Path, gates: int) -> None:
    """One plan, one phase of ``gates`` test gates (one test each, all in one file), committed; no evidence."""
    body = "".join(f'[[gate]]\ntest = "tests/test_many.py::test_{i}"\n' for i in range(gates))
    commit_files(
        root,
        {
            "plans/0001-gates.md": (
                f'# Gates\n\n```plan\nid = "0001"\ntitle = "Many gates"\n```\n\n'
                f'```phase\nid = "P1"\ntitle = "{gates} gates"\npaths = ["tests/**"]\n\n{body}```\n'
            ).encode(),
            "tests/test_many.py": "".join(f"def test_{i}():\n    pass\n" for i in range(gates)).encode(),
            ".gitignore": b".tracker/cache/\n.tracker/lock\n",
        },
        f"{gates} gates",
    )


def build_verify(root: Path, gates: int, work_ms: int, files: int = 0) -> list[str]:
    """A git repo with ``gates`` tests (10 per file), plans gating on each and ``files`` more source
    files; returns the node ids."""
    tree = {"src/lib.py": b"VALUE = 1\n", "conftest.py": b"", ".gitignore": GITIGNORE}
    tree |= {f"src/mod_{i:04d}.py": f"VALUE_{i} = {i}\n".encode() for i in range(files)}
    body = "import time\nfrom src.lib import VALUE\n\n"
    nodeids: list[str] = []
    for f in range((gates + 9) // 10):
        lines = [body]
        for t in range(min(10, gates - 10 * f)):
            lines.append(f"def test_{t}():\n    time.sleep({work_ms / 1000})\n    assert VALUE == 1\n\n")
            nodeids.append(f"tests/test_gen_{f}.py::test_{t}")
        tree[f"tests/test_gen_{f}.py"] = "".join(lines).encode()
    phases = []
    for p in range((gates + 9) // 10):
        gate_lines = "".join(f'\n[[gate]]\ntest = "{n}"\n' for n in nodeids[10 * p : 10 * p + 10])
        phases.append(f'```phase\nid = "P{p}"\ntitle = "Phase {p}"\npaths = ["src/**"]\n{gate_lines}```\n')
    plan = '# Bench\n\n```plan\nid = "0001"\ntitle = "Verify overhead"\n```\n\n' + "\n".join(phases)
    tree["plans/0001-bench.md"] = plan.encode()
    commit_files(root, tree, "synthetic")
    return nodeids
