"""How often noise makes a bench gate's verdict lie: false passes and false regressions per 1,000 decisions,
judged by the value alone (the rule before issue 31), by three verdicts (the tracker's rule now:
:func:`tracker.core.bench_verdict.evaluate`, a 95% percentile bootstrap, undecided between its bounds), and by three
verdicts as ``tracker verify --bench`` reaches them (``sequential``): while the gate is undecided, another run of the
same code on the same machine, all pooled, at most ``MAX_POOLED`` runs, each pool of L runs judged at 1 - 5% / L².

Synthetic noise, seeded: each decision draws ``n`` samples of a timing whose true median lies ``offset`` away
from an ``at_most`` threshold (log-normal, coefficient of variation ``--cv``, plus an occasional slow outlier as a
shared machine gives), and judges them. A **false pass** is a met verdict on a true median above the threshold; a
**false regression** is a failed verdict on a true median below it (under the value rule, every miss is "failed").
An undecided verdict is neither: how often each rule decides at all is recorded too (``decided``).

Each metric's samples are the rates of ``--batches`` batches of ``--decisions`` decisions (per 1,000), so a gate
can judge them with an interval like any other measurement.

Usage::

    python bench/plan_tracker/verdict_noise.py                      # writes bench/results/
    python bench/plan_tracker/verdict_noise.py --quick --out /tmp   # fewer decisions
"""

from __future__ import annotations

import argparse
import datetime
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

if not __package__:  # `python bench/plan_tracker/verdict_noise.py`: bench/plan_tracker/, not the root, is on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.plan_tracker.record import REPO, case, command_line, write_result
from tracker.core.bench_verdict import MAX_POOLED, evaluate
from tracker.core.model import BenchGate, ResultCase, ResultRun

# What a result file's fingerprint covers: the verdict's code and this benchmark's.
MEASURED = (
    "tracker/core/bench_verdict.py",
    "tracker/core/stats.py",
    "bench/plan_tracker/verdict_noise.py",
    "bench/plan_tracker/record.py",
)

THRESHOLD = 1.0
OFFSETS = (-0.10, -0.03, -0.01, 0.01, 0.03, 0.10)  # true median relative to the threshold
SIZES = (5, 10)
RULES = ("value", "interval", "sequential")


def draw(rng: random.Random, median: float, n: int, cv: float) -> list[float]:
    """``n`` timings around ``median``: log-normal spread ``cv``, one in twenty 30% slower (a busy neighbour)."""
    sigma = math.sqrt(math.log(1 + cv * cv))
    return [median * math.exp(rng.gauss(0.0, sigma)) * (1.3 if rng.random() < 0.05 else 1.0) for _ in range(n)]


def judge(samples: list[float], rule: str, bounds: dict[str, float]) -> str:
    """``met``, ``failed`` or ``undecided`` for an ``at_most = THRESHOLD`` gate on these samples."""
    out = evaluate(GATE, [_run(samples, 0)], bounds, by_value=rule == "value")
    return "undecided" if out.undecided else "met" if out.met else "failed"


def judge_sequence(rng: random.Random, median: float, n: int, cv: float) -> str:
    """``verify --bench`` deciding: a run of ``n`` samples, then another of the same code on the same machine while
    the gate (judged on all the runs, which pool: tracker.core.bench_verdict) stays undecided, up to ``MAX_POOLED``."""
    runs: list[ResultRun] = []
    bounds: dict[str, float] = {}
    verdict = "undecided"
    while verdict == "undecided" and len(runs) < MAX_POOLED:
        runs.append(_run(draw(rng, median, n, cv), len(runs)))
        out = evaluate(GATE, runs, bounds)
        verdict = "undecided" if out.undecided else "met" if out.met else "failed"
    return verdict


def _run(samples: list[float], i: int) -> ResultRun:
    timed = ResultCase("t", {}, "s", "lower", tuple(samples))
    files = {"bench/plan_tracker/verdict_noise.py": "0" * 40}  # the same code every run: runs of one series pool
    return ResultRun(
        f"r{i}.json", "0" * 64, "noise", _WHEN + datetime.timedelta(minutes=i), "vm", None, None, False, files, (timed,)
    )


_WHEN = datetime.datetime(2026, 12, 2, tzinfo=datetime.UTC)
GATE = BenchGate("t", {}, at_most=THRESHOLD)


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    rng = random.Random(args.seed)
    cases = []
    for rule in args.rules:
        for n in SIZES:
            for offset in OFFSETS:
                wrong, decided = [], []
                for _ in range(args.batches):
                    lies = sure = 0
                    for _ in range(args.decisions):
                        median = THRESHOLD * (1 + offset)
                        if rule == "sequential":
                            verdict = judge_sequence(rng, median, n, args.cv)
                        else:
                            verdict = judge(draw(rng, median, n, args.cv), rule, {})
                        sure += verdict != "undecided"
                        lies += verdict == ("met" if offset > 0 else "failed")
                    wrong.append(1000.0 * lies / args.decisions)
                    decided.append(1000.0 * sure / args.decisions)
                kind = "false_pass" if offset > 0 else "false_regression"
                params = {"rule": rule, "n": n, "offset": offset, "cv": args.cv}
                cases.append(case(f"verdict_noise.{kind}_per_1000", params, "per 1000", "lower", wrong))
                cases.append(case("verdict_noise.decided_per_1000", params, "per 1000", "higher", decided))
                print(f"{rule:>8} n={n:<2} offset={offset:+.2f}: {kind} {sum(wrong) / len(wrong):6.1f}/1000, "
                      f"decided {sum(decided) / len(decided):6.1f}/1000", flush=True)  # fmt: skip
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=100, help="decisions per batch")
    parser.add_argument("--batches", type=int, default=10, help="batches (each a sample of every metric)")
    parser.add_argument("--cv", type=float, default=0.05, help="the timings' coefficient of variation")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument(
        "--rules", default=",".join(RULES), help=f"rules judged, comma-separated (default all: {', '.join(RULES)})"
    )
    parser.add_argument("--quick", action="store_true", help="20 decisions x 5 batches, no result file unless --out")
    parser.add_argument("--out", type=Path, default=None, help="result folder (default bench/results)")
    args = parser.parse_args(argv)
    args.rules = [r for r in args.rules.split(",") if r]
    if not args.rules or set(args.rules) - set(RULES):
        parser.error(f"--rules: one or more of {', '.join(RULES)}")
    if args.quick:
        args.decisions, args.batches = 20, 5
    started = time.monotonic()
    cases = measure(args)
    print(f"{time.monotonic() - started:.0f} s")
    if args.quick and args.out is None:
        return 0
    command = command_line("bench/plan_tracker/verdict_noise.py", argv)
    # The whole tree's cleanliness, as the tracker's own result writer reports it (not only the measured files').
    print(write_result(cases, args.out or REPO / "bench/results", command, "verdict_noise", MEASURED, dirty_of="tree"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
