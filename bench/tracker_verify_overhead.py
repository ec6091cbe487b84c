"""What ``tracker verify`` costs over plain pytest, and what a verify with nothing changed costs.

Builds a synthetic git repository (temporary directory) with N test gates, one test each, spread
over phases of 10 gates, then times, as whole processes (median of ``--repeat`` runs after one
warm-up):

- ``pytest -q NODEID...``: plain pytest over exactly the gates' node ids;
- ``tracker verify --force``: the same tests through the tracker (one pytest session, evidence
  recorded, status derived before and after); target <= 1.1x plain pytest;
- ``tracker verify`` with nothing changed since the last verify: every gate's evidence is fresh, so
  no test runs; target < 1 s.

Usage: ``python bench/tracker_verify_overhead.py [--gates 10,100,500] [--repeat 5] [--work-ms 0]``.
``--work-ms`` makes each test sleep, to see the ratio on tests that do work. Standard library only
(plus an installed ``tracker``). Prints one table; exits 0.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def tracker_cmd() -> list[str]:
    """The installed console script if there is one, else the same entry point through Python."""
    script = shutil.which("tracker", path=str(Path(sys.executable).parent)) or shutil.which("tracker")
    return [script] if script else [sys.executable, "-c", "from tracker.cli import main; main()"]


def build(root: Path, gates: int, work_ms: int) -> list[str]:
    """A git repo with ``gates`` tests (10 per file) and plans gating on each; returns the node ids."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    (root / "tests").mkdir(parents=True)
    (root / "plans").mkdir()
    (root / "src").mkdir()
    (root / "src/lib.py").write_text("VALUE = 1\n")
    (root / "conftest.py").write_text("")
    (root / ".gitignore").write_text(".tracker/cache/\n.tracker/lock\n__pycache__/\n")
    body = f"import time\nfrom src.lib import VALUE\n\n"
    nodeids: list[str] = []
    for f in range((gates + 9) // 10):
        lines = [body]
        for t in range(min(10, gates - 10 * f)):
            lines.append(f"def test_{t}():\n    time.sleep({work_ms / 1000})\n    assert VALUE == 1\n\n")
            nodeids.append(f"tests/test_gen_{f}.py::test_{t}")
        (root / f"tests/test_gen_{f}.py").write_text("".join(lines))
    phases = []
    for p in range((gates + 9) // 10):
        gate_lines = "".join(f'\n[[gate]]\ntest = "{n}"\n' for n in nodeids[10 * p : 10 * p + 10])
        phases.append(f'```phase\nid = "P{p}"\ntitle = "Phase {p}"\npaths = ["src/**"]\n{gate_lines}```\n')
    plan = '# Bench\n\n```plan\nid = "0001"\ntitle = "Verify overhead"\n```\n\n' + "\n".join(phases)
    (root / "plans/0001-bench.md").write_text(plan)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "synthetic"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return nodeids


def run_once(cmd: list[str], cwd: Path) -> float:
    """Wall seconds of one run of ``cmd`` (which must exit 0)."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}... exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def interleaved(cmds: dict[str, list[str]], cwd: Path, repeat: int) -> dict[str, list[float]]:
    """Run the commands in turn ``repeat`` times after one warm-up round; interleaving makes a load
    change on this shared machine hit every command alike."""
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for i in range(repeat + 1):
        for name, cmd in cmds.items():
            elapsed = run_once(cmd, cwd)
            if i:
                times[name].append(elapsed)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gates", default="10,100,500", help="comma-separated gate counts")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work-ms", type=int, default=0, help="sleep per test, milliseconds")
    args = parser.parse_args()
    tracker = tracker_cmd()
    pytest = [sys.executable, "-m", "pytest", "-q"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, repeat {args.repeat}, work {args.work_ms} ms/test")
    print("median (min) wall seconds over the runs")
    print(f"{'gates':>6} {'pytest':>14} {'verify --force':>15} {'ratio':>12} {'no-change verify':>17}")
    for n in (int(x) for x in args.gates.split(",")):
        with tempfile.TemporaryDirectory(prefix="tracker-overhead-") as tmp:
            root = Path(tmp)
            nodeids = build(root, n, args.work_ms)
            t = interleaved(
                {"pytest": pytest + nodeids, "verify": tracker + ["verify", "--force"], "unchanged": tracker + ["verify"]},
                root, args.repeat,
            )  # fmt: skip
            med = {k: statistics.median(v) for k, v in t.items()}
            low = {k: min(v) for k, v in t.items()}

            def cell(k: str) -> str:
                return f"{med[k]:.3f} ({low[k]:.3f})"

            ratio = f"{med['verify'] / med['pytest']:.2f} ({low['verify'] / low['pytest']:.2f})"
            print(f"{n:>6} {cell('pytest'):>14} {cell('verify'):>15} {ratio:>12} {cell('unchanged'):>17}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
