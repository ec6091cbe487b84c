"""A fixed fixture repository for the golden tests of ``show``, ``log``, ``report`` and ``summary``.

Everything in it is deterministic: file contents, commit dates and identities (so commit ids are the same on every
machine and every run), evidence files with fixed times and names. Its history walks the statuses a report must
explain, one evidence file at a time, each committed:

=====  ==========================  ============================================================================
when   evidence                    what it does (statuses as ``tracker log`` replays them)
=====  ==========================  ============================================================================
11-01  (tag c1: the code)          every phase planned or blocked
11-02  run r1                      0001/P1 done (kernel tests pass); 0002/P1 planned (its engine test fails)
11-03  result b1 (tag c2)          0001/P2 done (speedup 1.22x >= 1.1x); 0001/P3 in-progress (floor 0.30 < 0.5)
11-04  sign-off s1                 0002/P1 in-progress (its manual gate signed)
11-05  run r2 (tag c3)             0002/P1 done (engine test passes); 0002/P2 planned
11-06  run r3                      0001/P1 regressed (a kernel test fails after "a faster path")
11-07  run r4                      0001/P1 done again
11-08  result b2 (tag c4)          0001/P2 regressed (speedup 1.04x < 1.1x); 0001/P3 blocked by it
11-09  (tag c5: engine edited)     0002/P1 stale now (files under its paths changed since its evidence)
=====  ==========================  ============================================================================

0002/P2 has a test gate no run covers and depends on 0002/P1: planned, blocked while 0002/P1 is not done.
Each tagged commit holds the evidence above it (:data:`REFS`), so tests pass ``--since c2`` or ``--against c4``.
The plan files hold no generated regions (``tracker update`` writes them where a test wants them).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Lovelace",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Lovelace",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}

PLAN_KERNEL = """# Verify kernel

```plan
id = "0001"
title = "Verify kernel"
milestone = "v1"
```

The kernel, measured against the baseline.

## Phases

```phase
id = "P1"
title = "Correct kernel"
paths = ["src/kernel.py"]

[[gate]]
test = "tests/test_kernel.py"
```

```phase
id = "P2"
title = "Beats the baseline at 91k"
depends = ["P1"]
paths = ["src/kernel.py"]

[[gate]]
bench = "attn.time_us"
where = { impl = "cuda", ctx = 91000 }
baseline = { impl = "ref" }
at_least = 1.1
min_samples = 5
```

```phase
id = "P3"
title = "Half of the floor"
depends = ["P2"]
paths = ["src/kernel.py"]

[[gate]]
test = "tests/test_kernel.py::test_correct"
[[gate]]
bench = "attn.floor_fraction"
where = { impl = "cuda", ctx = 91000 }
at_least = 0.5
```
"""

PLAN_ENGINE = """# Engine

```plan
id = "0002"
title = "Engine"
milestone = "v1"
```

## Phases

```phase
id = "P1"
title = "Engine runs the kernel"
depends = ["0001/P1"]
paths = ["src/engine.py"]

[[gate]]
test = "tests/test_engine.py"
[[gate]]
manual = "lead reviewed the engine's API"
```

```phase
id = "P2"
title = "CUDA graphs"
depends = ["P1"]
paths = ["src/engine.py"]

[[gate]]
test = "tests/test_graphs.py"
```
"""

FILES = {
    "src/kernel.py": "def attention(q, k, v):\n    return q\n",
    "src/engine.py": "from src.kernel import attention\n\n\ndef step(q):\n    return attention(q, q, q)\n",
    "tests/test_kernel.py": "def test_correct():\n    assert True\n\n\ndef test_shapes():\n    assert True\n",
    "tests/test_engine.py": "def test_step():\n    assert True\n",
    "tests/test_graphs.py": "def test_replay():\n    assert True\n",
    "plans/0001-verify-kernel.md": PLAN_KERNEL,
    "plans/0002-engine.md": PLAN_ENGINE,
}

REFS = ("c1", "c2", "c3", "c4", "c5")


def git(root: Path, *args: str, when: str = "2026-11-01T09:00:00Z") -> str:
    """git in ``root`` with the fixture's identity and a fixed date (so commit ids are fixed)."""
    env = {**os.environ, **IDENTITY, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "TZ": "UTC"}
    env.pop("GIT_DIR", None)
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def blob_id(data: bytes) -> str:
    """git's blob id of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def tree_ids(root: Path) -> dict[str, str]:
    """{path: blob id} of the files committed at HEAD, the evidence store left out (as the plugin records)."""
    out = git(root, "ls-tree", "-r", "HEAD")
    ids = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        if not path.startswith(".tracker/"):
            ids[path] = meta.split()[2]
    return ids


def _test_run(root: Path, when: str, outcomes: dict[str, str]) -> dict[str, Any]:
    head = git(root, "rev-parse", "HEAD").strip()
    tests = [
        {"nodeid": nodeid, "outcome": outcome, "duration": 0.01, "markers": [], "reason": ""}
        for nodeid, outcome in sorted(outcomes.items())
    ]
    return {
        "schema": "tracker-test-run",
        "version": 1,
        "status": "complete",
        "provenance": {
            "time": when,
            "host": "ci-box",
            "commit": head,
            "dirty": False,
            "command": "pytest tests",
            "args": sorted({nodeid.split("::")[0] for nodeid in outcomes}),  # the files it ran (adv F3)
        },
        "gates": {},
        "files": tree_ids(root),
        "tests": tests,
        "rootdir": root.name,
        "exitstatus": 0 if all(o == "passed" for o in outcomes.values()) else 1,
        "duration": 1.0,
    }


def _result(root: Path, when: str, cuda: list[float], ref: list[float], fraction: list[float]) -> dict[str, Any]:
    head = git(root, "rev-parse", "HEAD").strip()
    ids = {p: b for p, b in tree_ids(root).items() if p.startswith("src/")}
    digest = hashlib.sha256("".join(f"{p}\0{b}\n" for p, b in sorted(ids.items())).encode()).hexdigest()

    def case(metric: str, impl: str, samples: list[float], unit: str, direction: str) -> dict[str, Any]:
        ordered = sorted(samples)
        stats = {
            "n": len(samples),
            "median": ordered[len(ordered) // 2],
            "min": ordered[0],
            "mean": sum(samples) / len(samples),
            "p90": ordered[-1],
        }
        return {
            "metric": metric,
            "params": {"impl": impl, "ctx": 91000},
            "unit": unit,
            "direction": direction,
            "samples": samples,
            "stats": stats,
        }

    return {
        "schema": "tracker-bench-result",
        "version": 1,
        "benchmark": "attn",
        "provenance": {
            "commit": head,
            "dirty": False,
            "time": when,
            "host": "gpu-box",
            "gpu": "NVIDIA H200",
            "driver": "580.159.04",
            "cuda": "13.0",
            "torch": "2.11.0",
            "triton": "3.6.0",
            "python": "3.12.3",
            "command": "python -m bench attn",
            "fingerprint": {"algorithm": "git-blob-sha1", "digest": digest, "files": ids},
        },
        "cases": [
            case("attn.time_us", "cuda", cuda, "us", "lower"),
            case("attn.time_us", "ref", ref, "us", "lower"),
            case("attn.floor_fraction", "cuda", fraction, "fraction", "higher"),
        ],
    }


def _signoff(root: Path, when: str) -> dict[str, Any]:
    from tracker.core.model import ManualGate, gate_hash

    gate = ManualGate("lead reviewed the engine's API")
    return {
        "schema": "tracker-signoff",
        "version": 1,
        "gate_key": "0002/P1#2",
        "gate_hash": gate_hash(gate),
        "manual": gate.manual,
        "by": "Grace Hopper",
        "why": "read the API and its docstrings",
        "time": when,
        "host": "laptop",
        "commit": git(root, "rev-parse", "HEAD").strip(),
        "dirty": False,
        "files": tree_ids(root),
    }


def _write(root: Path, rel: str, doc: dict[str, Any]) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _commit(root: Path, message: str, when: str, tag: str | None = None) -> None:
    git(root, "add", "-A", when=when)
    git(root, "commit", "-q", "--allow-empty", "-m", message, when=when)
    if tag:
        git(root, "tag", tag, when=when)


PASS = {"tests/test_kernel.py::test_correct": "passed", "tests/test_kernel.py::test_shapes": "passed"}
FAIL = {"tests/test_kernel.py::test_correct": "passed", "tests/test_kernel.py::test_shapes": "failed"}
EVIDENCE = ".tracker/evidence"


def build(root: Path) -> Path:
    """Write and commit the fixture repository under ``root`` (an empty directory); returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / ".gitignore").write_text(".tracker/cache/\n.tracker/lock\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    _commit(root, "kernel and engine, first version", "2026-11-01T09:00:00Z", "c1")

    _write(root, f"{EVIDENCE}/20261102T100000Z-ci-box-r1.json", _test_run(
        root, "2026-11-02T10:00:00Z", {**PASS, "tests/test_engine.py::test_step": "failed"}))  # fmt: skip
    _write(root, "bench/results/20261103T100000Z-gpu-box-attn-b1.json", _result(
        root, "2026-11-03T10:00:00Z", [100, 101, 99, 100, 102], [122, 123, 121, 122, 124], [0.30, 0.31, 0.30, 0.29, 0.30]))  # fmt: skip
    _commit(root, "evidence: first run and the first benchmark", "2026-11-03T12:00:00Z", "c2")

    _write(root, f"{EVIDENCE}/20261104T100000Z-laptop-signoff-s1.json", _signoff(root, "2026-11-04T10:00:00Z"))
    _write(root, f"{EVIDENCE}/20261105T100000Z-ci-box-r2.json", _test_run(
        root, "2026-11-05T10:00:00Z", {**PASS, "tests/test_engine.py::test_step": "passed"}))  # fmt: skip
    _commit(root, "engine: the step passes; API signed off", "2026-11-05T12:00:00Z", "c3")

    (root / "src/kernel.py").write_text("def attention(q, k, v):\n    return k\n", encoding="utf-8")
    _commit(root, "kernel: a faster path", "2026-11-06T09:00:00Z")
    _write(root, f"{EVIDENCE}/20261106T100000Z-ci-box-r3.json", _test_run(root, "2026-11-06T10:00:00Z", FAIL))
    _commit(root, "evidence: the faster path breaks a shape test", "2026-11-06T12:00:00Z")

    (root / "src/kernel.py").write_text("def attention(q, k, v):\n    return q\n", encoding="utf-8")
    _commit(root, "kernel: back to the correct path", "2026-11-07T09:00:00Z")
    _write(root, f"{EVIDENCE}/20261107T100000Z-ci-box-r4.json", _test_run(root, "2026-11-07T10:00:00Z", PASS))
    _write(root, "bench/results/20261108T100000Z-gpu-box-attn-b2.json", _result(
        root, "2026-11-08T10:00:00Z", [100, 101, 99, 100, 102], [104, 105, 103, 104, 106], [0.40, 0.41, 0.40, 0.39, 0.40]))  # fmt: skip
    _commit(root, "evidence: kernel fixed; the baseline got faster", "2026-11-08T12:00:00Z", "c4")

    (root / "src/engine.py").write_text(FILES["src/engine.py"] + "\n\ndef warmup():\n    pass\n", encoding="utf-8")
    _commit(root, "engine: warm-up before capture", "2026-11-09T09:00:00Z", "c5")
    return root
