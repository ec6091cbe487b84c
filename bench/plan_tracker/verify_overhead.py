"""What ``tracker verify`` costs over plain pytest, where the difference goes, and what a verify with
nothing changed costs.

Builds a synthetic git repository (temporary directory) with N test gates, one test each, spread
over phases of 10 gates, and ``--files`` more committed source files (the evidence file records every
file's blob id, as in a real project: this repository has ~200), then times, as whole processes,
interleaved round by round (median of ``--repeat`` rounds after one warm-up round; in each round a command
runs ``--best-of`` times, default 3, and its fastest counts), wall seconds and
CPU seconds (user + system of the process and everything it waited for; on a shared machine CPU
time is the steadier measure of work, wall time the one a user feels):

- ``pytest -q NODEID...``: plain pytest over exactly the gates' node ids;
- ``tracker verify --force``: the same tests through the tracker (one pytest session, evidence
  recorded, status derived after); goal <= 1.1x plain pytest (plan 0003, P5);
- ``tracker verify`` with nothing changed since the last verify: every gate's evidence is fresh, so
  no test runs; goal < 1 s.

The store is kept at one evidence file (the newest) between rounds, so history does not grow with the
rounds (``bench/plan_tracker/speed.py`` measures history).

``--breakdown`` adds, per gate count, the parts of the difference (CPU): the tracker process itself (its
own CPU, apart from its children: start-up, CLI, plans, status derived after the run), the nested
pytest as verify runs it (``--tracker-select`` over whole files, the recorder writing evidence, its git
calls), the same without recording, and ``python -c pass`` / ``tracker status`` for scale.

The measured processes write and use ``.pyc`` files as a user's Python does: ``PYTHONDONTWRITEBYTECODE`` (set in
some sandboxes) is removed from their environment, else every verify compiled the tracker's modules from source
(~25 ms of its own ~75 ms CPU) and both sides pytest's rewritten test files; ``--no-bytecode-cache`` keeps it,
to compare with numbers measured that way.

``--pytest-arg ARG`` (repeatable) goes to both sides, e.g. ``--pytest-arg=-p --pytest-arg=no:hypothesispytest``
for a lean pytest (this repository's environment loads hypothesis's plugin into every pytest: ~0.4 s of
CPU that both sides pay, which makes the tracker's fixed cost look smaller).

Usage::

    python bench/plan_tracker/verify_overhead.py                      # gates 10,100,500; writes bench/results/
    python bench/plan_tracker/verify_overhead.py --quick --breakdown  # gates 10,100, 3 rounds; writes nothing
    python bench/plan_tracker/verify_overhead.py [--gates 10,100,500] [--repeat 12] [--work-ms 0] [--files 200] \
        [--out DIR]

``--work-ms`` makes each test sleep, to see the ratio on tests that do work. The result file
(``<UTC time>-<host>-tracker_verify_overhead-<6 hex>.json``, schema ``tracker-bench-result``, written by
:mod:`bench.plan_tracker.record`, fingerprint over ``tracker/**/*.py`` and this benchmark's modules, :data:`MEASURED`)
holds ``tracker.verify_vs_pytest`` and ``tracker.verify_vs_pytest_cpu`` (each round's verify over that round's
pytest, unit ``x``), ``tracker.verify_ms``, ``pytest.nodeids_ms`` and ``tracker.verify_unchanged_ms``, with params
``{gates, work_ms, files, pytest_args}``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

if not __package__:  # `python bench/plan_tracker/verify_overhead.py`: bench/plan_tracker/, not the root, is on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.plan_tracker.record import REPO, command_line, ms_case, ratio_case, tracker_cmd, write_result
from bench.plan_tracker.repos import build_verify
from bench.plan_tracker.timing import Job, Timing, rounds

# What a result file's fingerprint covers: the tracker's code and this benchmark's.
MEASURED = (
    "tracker/**/*.py",
    "bench/plan_tracker/verify_overhead.py",
    "bench/plan_tracker/repos.py",
    "bench/plan_tracker/timing.py",
    "bench/plan_tracker/record.py",
)
# Rounds by default: at 100 gates one round's ratio spreads ~1.04-1.12 on the 2-core VM (best of 3 each side), so 5
# rounds bound a median of 1.11x only within 1.07-1.13 (undecided against plan 0003 P5's 1.1); 12 rounds bound a
# median of 1.08x within 1.07-1.08, in ~3 minutes for 10, 100 and 500 gates.
REPEAT = 12
# Runs the tracker's entry point and reports, at exit, the CPU seconds of this process and of its children
# (the nested pytest and the git calls), apart: what the tracker itself costs.
SELF_CPU = (
    "import atexit, resource, runpy, sys\n"
    "def _report():\n"
    "    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "    sys.stderr.write(f'@@cpu {me.ru_utime + me.ru_stime} {kids.ru_utime + kids.ru_stime}\\n')\n"
    "atexit.register(_report)\n"
    "sys.argv = ['tracker', *sys.argv[1:]]\n"
    "runpy.run_module('tracker', run_name='__main__')\n"
)


def measured_env(bytecode_cache: bool) -> dict[str, str]:
    """The measured processes' environment: this one, less ``PYTHONDONTWRITEBYTECODE`` unless told otherwise."""
    return {k: v for k, v in os.environ.items() if not (bytecode_cache and k == "PYTHONDONTWRITEBYTECODE")}


def keep_newest_evidence(root: Path) -> None:
    """Leave the store with its newest file only (what the no-change verify needs; history does not grow with the
    rounds)."""
    files = sorted((root / ".tracker" / "evidence").glob("*.json"))
    for path in files[:-1]:
        path.unlink()


def interleaved(
    cmds: dict[str, list[str]], cwd: Path, repeat: int, env: dict[str, str] | None = None, best_of: int = 1
) -> dict[str, list[Timing]]:
    """The commands timed in turn (:func:`bench.plan_tracker.timing.rounds`), ``repeat`` rounds after a warm-up, each
    ``best_of`` times a round (its fastest wall and its least CPU counting: single runs' ratios spread 0.90-1.30
    within one run of this script on a shared 2-core VM, more than the 10% gated), the evidence store kept at its
    newest file after every run."""
    jobs = [Job(name, cmd, cwd, env=env) for name, cmd in cmds.items()]
    return rounds(jobs, repeat, best_of, after=lambda job: keep_newest_evidence(job.cwd))[0]


def nested_commands(root: Path, nodeids: list[str], pytest_args: list[str], tmp: Path) -> tuple[list[str], list[str]]:
    """The nested pytest as ``tracker verify`` runs it (recording into ``tmp``), and the same without
    recording (selection only): what the recorder costs is their difference."""
    import json

    from tracker.commands.common import pytest_command
    from tracker.core.model import TestGate, gate_hash

    sel, hashes = tmp / "select.json", tmp / "gates.json"
    sel.write_text(json.dumps(sorted({(n, None) for n in nodeids}, key=str)))
    hashes.write_text(
        json.dumps({f"0001/P{i // 10}#{i % 10 + 1}": gate_hash(TestGate(test=n)) for i, n in enumerate(nodeids)})
    )
    files = sorted({n.split("::", 1)[0] for n in nodeids})
    base = [*pytest_command(), f"--rootdir={root}", f"--tracker-select={sel}", "--continue-on-collection-errors"]
    record = [*base, f"--tracker-record={tmp / 'ev'}", f"--tracker-gates={hashes}", *pytest_args, *files]
    return record, [*base, *pytest_args, *files]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--gates", default=None, help="comma-separated gate counts (default 10,100,500; --quick 10,100)"
    )
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds (default 12; --quick 3)")
    parser.add_argument(
        "--best-of",
        type=int,
        default=None,
        help="runs of each command a round, the fastest counting (default 3; --quick 1)",
    )
    parser.add_argument("--work-ms", type=int, default=0, help="sleep per test, milliseconds")
    parser.add_argument("--files", type=int, default=200, help="more committed source files in the repository")
    parser.add_argument("--pytest-arg", action="append", default=[], help="argument for both pytest sides (repeatable)")
    parser.add_argument("--breakdown", action="store_true", help="also time the parts of verify's overhead")
    parser.add_argument(
        "--no-bytecode-cache",
        dest="bytecode_cache",
        action="store_false",
        help="keep PYTHONDONTWRITEBYTECODE in the measured processes' environment (compile from source every run)",
    )
    parser.add_argument("--quick", action="store_true", help="gates 10,100, 3 rounds, no result file unless --out")
    parser.add_argument(
        "--out", type=Path, default=None, help="directory of the result file (default bench/results/; --quick: none)"
    )
    args = parser.parse_args(argv)
    args.gates = [int(x) for x in (args.gates or ("10,100" if args.quick else "10,100,500")).split(",")]
    args.repeat = args.repeat if args.repeat is not None else (3 if args.quick else REPEAT)
    args.best_of = args.best_of if args.best_of is not None else (1 if args.quick else 3)
    if args.repeat < 1 or args.best_of < 1:
        parser.error("--repeat and --best-of need positive numbers")
    if args.out is None and not args.quick:
        args.out = REPO / "bench" / "results"
    return args


def med(timings: list[Timing], field: str) -> float:
    return float(statistics.median(getattr(t, field) for t in timings))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tracker = tracker_cmd()
    pytest = [sys.executable, "-m", "pytest", "-q", *args.pytest_arg]
    verify_args = [f"--pytest-arg={a}" for a in args.pytest_arg]
    env = measured_env(args.bytecode_cache)
    cache = "on" if "PYTHONDONTWRITEBYTECODE" not in env else "off (PYTHONDONTWRITEBYTECODE)"
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, repeat {args.repeat}, "
        f"work {args.work_ms} ms/test, {args.files} more files, pytest args {args.pytest_arg or 'none'}, bytecode "
        f"cache {cache}"
    )
    print("median over the rounds: wall ms / CPU ms (process tree); x: verify over pytest, round by round")
    print(f"{'gates':>6} {'pytest':>13} {'verify --force':>15} {'x wall':>7} {'x cpu':>6} {'no-change verify':>17}")
    cases: list[dict[str, Any]] = []
    info: dict[str, Any] = {
        "cpus": os.cpu_count() or 0,
        "bytecode_cache": "PYTHONDONTWRITEBYTECODE" not in env,
        "best_of": args.best_of,
    }
    for n in args.gates:
        with tempfile.TemporaryDirectory(prefix="tracker-overhead-") as tmp:
            root = Path(tmp) / "repo"
            nodeids = build_verify(root, n, args.work_ms, args.files)
            cmds = {
                "pytest": pytest + nodeids,
                "verify": [*tracker, "verify", "--force", *verify_args],
                "unchanged": [*tracker, "verify", *verify_args],
            }
            if args.breakdown:
                scratch = Path(tmp) / "nested"
                scratch.mkdir()
                record, select = nested_commands(root, nodeids, args.pytest_arg, scratch)
                cmds |= {
                    "verify (own cpu)": [sys.executable, "-c", SELF_CPU, "verify", "--force", *verify_args],
                    "nested pytest, recording": record,
                    "nested pytest, selection only": select,
                    "tracker status": [*tracker, "status"],
                    "python -c pass": [sys.executable, "-c", "pass"],
                }
            t = interleaved(cmds, root, args.repeat, env, args.best_of)
            wall_x = [v.wall / p.wall for v, p in zip(t["verify"], t["pytest"], strict=False)]
            cpu_x = [v.cpu / p.cpu for v, p in zip(t["verify"], t["pytest"], strict=False)]

            def cell(k: str, t: dict[str, list[Timing]] = t) -> str:
                return f"{med(t[k], 'wall') * 1000:.0f}/{med(t[k], 'cpu') * 1000:.0f}"

            print(
                f"{n:>6} {cell('pytest'):>13} {cell('verify'):>15} {statistics.median(wall_x):7.2f} "
                f"{statistics.median(cpu_x):6.2f} {cell('unchanged'):>17}"
            )
            params = {
                "gates": n,
                "work_ms": args.work_ms,
                "files": args.files,
                "pytest_args": " ".join(args.pytest_arg),
            }
            info["load1"] = round(os.getloadavg()[0], 2)
            cases += [
                ratio_case(
                    "tracker.verify_vs_pytest",
                    params,
                    [v.wall for v in t["verify"]],
                    [p.wall for p in t["pytest"]],
                    info,
                ),
                ratio_case(
                    "tracker.verify_vs_pytest_cpu",
                    params,
                    [v.cpu for v in t["verify"]],
                    [p.cpu for p in t["pytest"]],
                    info,
                ),
                ms_case("tracker.verify_ms", params, [v.wall for v in t["verify"]], info),
                ms_case("pytest.nodeids_ms", params, [p.wall for p in t["pytest"]], info),
                ms_case("tracker.verify_unchanged_ms", params, [v.wall for v in t["unchanged"]], info),
            ]
            if args.breakdown:
                print_breakdown(t)
    if args.out is not None:
        command = command_line("bench/plan_tracker/verify_overhead.py", argv)
        print(f"result file: {write_result(cases, args.out, command, 'tracker_verify_overhead', MEASURED)}")
    return 0


def print_breakdown(t: dict[str, list[Timing]]) -> None:
    """Where verify's extra CPU goes (medians; each line a difference of measured processes)."""
    cpu = {k: med(v, "cpu") * 1000 for k, v in t.items()}
    own = statistics.median(x.own for x in t["verify (own cpu)"] if x.own is not None) * 1000
    kids = cpu["verify (own cpu)"] - own
    rows = [
        ("verify --force, whole tree", cpu["verify (own cpu)"]),
        ("  tracker process itself (start-up, CLI, plans, status after)", own),
        ("  its children (nested pytest, git)", kids),
        ("plain pytest -q NODEIDS", cpu["pytest"]),
        ("nested pytest, selection only (whole files, --tracker-select)", cpu["nested pytest, selection only"]),
        ("nested pytest, recording (as verify runs it)", cpu["nested pytest, recording"]),
        (
            "  = recorder (evidence writes, git calls, per-test rewrites)",
            cpu["nested pytest, recording"] - cpu["nested pytest, selection only"],
        ),
        ("  = selection over whole files vs node ids", cpu["nested pytest, selection only"] - cpu["pytest"]),
        ("tracker status (for scale: derive alone)", cpu["tracker status"]),
        ("python -c pass (for scale: one interpreter)", cpu["python -c pass"]),
    ]
    for label, value in rows:
        print(f"        {label:<66} {value:7.1f} ms CPU")


if __name__ == "__main__":
    sys.exit(main())
