"""Wall-clock timings of ``tracker status`` and ``tracker update --check`` (a script, not a test).

Builds a synthetic git repository of 1,000 plans x 10 phases in a temporary directory (two test
gates and one glob per phase, 2,000 source files, one evidence file meeting all gates of odd plans and half of even ones),
then prints the median of several runs of each command (warm parse cache), the same for
``tracker status`` on this repository's own plans, and ``python -c pass`` for the ratio.

    python bench/tracker_speed.py [--plans 1000] [--phases 10] [--runs 7]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def tracker_cmd() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m tracker``."""
    script = Path(sys.executable).with_name("tracker")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tracker"]


def blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def build(root: Path, n_plans: int, n_phases: int) -> None:
    """Write the synthetic repository, commit it, and add one evidence file."""
    files: dict[str, bytes] = {}
    tests = []
    for p in range(1, n_plans + 1):
        phases = []
        for k in range(1, n_phases + 1):
            dep = f'depends = ["P{k - 1}"]\n' if k > 1 else ""
            phases.append(
                f'```phase\nid = "P{k}"\ntitle = "Phase {k} of plan {p}"\n{dep}paths = ["src/m{p:04d}/**"]\n\n'
                f'[[gate]]\ntest = "tests/test_m{p:04d}.py::test_{k}_a"\n[[gate]]\ntest = "tests/test_m{p:04d}.py::test_{k}_b"\n```\n'
            )
            tests += [f"tests/test_m{p:04d}.py::test_{k}_a", f"tests/test_m{p:04d}.py::test_{k}_b"]
        text = f'# Plan {p}\n\n```plan\nid = "{p:04d}"\ntitle = "Synthetic plan {p}"\n```\n\nProse.\n\n' + "\n".join(phases)
        files[f"plans/{p:04d}-synthetic.md"] = text.encode()
        files[f"src/m{p:04d}/a.py"] = f"A = {p}\n".encode()
        files[f"src/m{p:04d}/b.py"] = f"B = {p}\n".encode()
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "synthetic"], cwd=root, check=True)
    # Odd plans: every gate passed (phases done, so staleness is computed); even plans: every
    # second gate failed.
    recs = [
        {"nodeid": t, "outcome": "passed" if int(t[12:16]) % 2 or t.endswith("_a") else "failed", "reason": "", "duration": 0.0, "markers": []}
        for t in tests
    ]
    evidence = {
        "schema": "tracker-test-run", "version": 1, "status": "complete",
        "provenance": {"commit": None, "dirty": False, "time": "2026-11-29T00:00:00Z", "host": "bench"},
        "gates": {}, "files": {rel: blob(data) for rel, data in files.items()}, "tests": recs,
    }  # fmt: skip
    (root / ".tracker/evidence").mkdir(parents=True)
    (root / ".tracker/evidence/20261129T000000Z-bench-verify-000000.json").write_text(json.dumps(evidence))


def median_wall(cmd: list[str], cwd: Path, runs: int, ok: tuple[int, ...] = (0,)) -> float:
    """Median wall seconds over ``runs`` runs after one warm-up (which also warms the parse cache)."""
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
        elapsed = time.perf_counter() - start
        if proc.returncode not in ok:
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
        if i:
            times.append(elapsed)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plans", type=int, default=1000)
    ap.add_argument("--phases", type=int, default=10)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    tracker = tracker_cmd()
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, tracker via {' '.join(tracker)}")
    bare = median_wall([sys.executable, "-c", "pass"], REPO, args.runs)
    own = median_wall([*tracker, "status"], REPO, args.runs)
    own_check = median_wall([*tracker, "update", "--check"], REPO, args.runs, ok=(0, 1))
    print(f"python -c pass                      median {bare * 1000:7.1f} ms")
    print(f"tracker status (our plans)          median {own * 1000:7.1f} ms  = {own / bare:4.1f}x python -c pass")
    print(f"tracker update --check (our plans)  median {own_check * 1000:7.1f} ms  = {own_check / bare:4.1f}x")
    tmp = Path(tempfile.mkdtemp(prefix="tracker-speed-"))
    try:
        start = time.perf_counter()
        build(tmp, args.plans, args.phases)
        print(f"synthetic repo: {args.plans} plans x {args.phases} phases built in {time.perf_counter() - start:.1f} s")
        cold_start = time.perf_counter()
        subprocess.run([*tracker, "status"], cwd=tmp, capture_output=True, check=True)
        print(f"tracker status (synthetic, cold parse cache)        {time.perf_counter() - cold_start:7.2f} s")
        status = median_wall([*tracker, "status"], tmp, args.runs)
        print(f"tracker status (synthetic, warm)             median {status:7.2f} s")
        subprocess.run([*tracker, "update"], cwd=tmp, capture_output=True, check=True)
        check = median_wall([*tracker, "update", "--check"], tmp, args.runs)
        print(f"tracker update --check (synthetic, up to date) median {check:7.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
