"""Wall-clock timings of ``tracker status`` and ``tracker update --check`` (a script, not a test).

Three kinds of repository, each timed as whole processes, interleaved round by round with
``python -c pass`` (the same interpreter) so that a load change on a shared machine hits every
command alike; one warm-up round (it also warms the parse and validation caches) is not counted. Every
command a ratio compares (python, status, update --check, show, log, summary) runs ``--repeat`` times
(default 3) back to back in each round, and the round's sample is the fastest of them; the synthetic
repository's status and the reports run once a round (``info.repeat`` in the result file says which):

- ``own``: this repository's plans and evidence, as they are.
- ``history``: a synthetic git repository whose plans stay the same while its evidence store holds
  10, 100 or 1,000 files (``--history``). The newest files are real: ``tracker verify`` and
  ``pytest --tracker-record`` runs, ``tracker signoff`` and an ingested benchmark result (one phase is
  regressed, some are planned, bench gates are met). The older ones are generated in the same shapes,
  one in 16 a ~580 KB benchmark result copy (this repository's store holds such copies), test runs with
  some failures; they are older than every real file, so ``status`` prints the same table at every
  size (checked). Status cost must not grow with history: the ratio of the largest size to the
  smallest is a metric.
- ``gates``: one plan whose one phase has 1,250 or 5,000 test gates (``--gates``), one test each in one file, no
  evidence; its status is timed cold (the parse cache removed before each run), where the gates are parsed and
  located. Cost must grow linearly with the gates of a phase (issue 24: 1,250 / 2,500 / 5,000 gates cost 1.0 /
  3.4 / 13.7 s, each gate's line found by rescanning the block): the ratio of the largest to the smallest is a
  metric.
- ``synthetic``: 1,000 plans x 10 phases (``--plans``/``--phases``; two test gates and one glob per
  phase, 2,000 source files and 1,000 test files (a gate whose file is gone is unmet), one evidence file meeting
  all gates of odd plans and half of even ones).

Metrics (the result file's cases; unit ``ms`` or ``x``, lower is better; ``info`` holds the CPU count
and the load average at the end of the run, which say how noisy the machine was):

- ``python.pass_ms``: ``python -c pass``, every round;
- ``tracker.status_ms`` / ``tracker.update_check_ms`` with params ``{repo: own}``,
  ``{repo: history, evidence: N}`` or ``{repo: synthetic, plans, phases}``;
- ``tracker.status_vs_python`` with ``{repo: own}`` or ``{repo: history, evidence: N}``: each round's
  status time over the ``python -c pass`` run just before it (0001/P6's speed gate: at most 8x);
- ``tracker.status_history_ratio`` / ``tracker.update_check_history_ratio`` with
  ``{repo: history, evidence_from: 10, evidence_to: 1000}``: each round's time at the largest
  history over the time at the smallest (issue 12: at most 1.2x);
- ``tracker.status_cold_ms`` ``{repo: synthetic, ...}``: one status with a cold parse cache; ``{repo: gates,
  gates: N}``: status with a cold parse cache every run;
- ``tracker.status_cold_gates_ratio`` ``{repo: gates, gates_from: 1250, gates_to: 5000}``: each round's cold status
  at the most gates over the one at the fewest (linear: at most their ratio, 4x; quadratic: ~16x);
- ``tracker.report_ms`` with ``{repo: synthetic, plans, phases}`` (plan 0004 P3's gate: at most 5 s) and
  ``{repo: own, format: md|html}``: ``tracker report`` of every plan, Markdown (HTML: with its charts);
- ``tracker.show_ms``, ``tracker.log_ms``, ``tracker.summary_ms`` ``{repo: own}`` (``show`` and ``log`` of one phase
  with a long history, ``summary`` against HEAD) and ``tracker.show_vs_status`` / ``tracker.summary_vs_status``:
  each round's time over the status run of the same round (issue 14: "as fast as status"); the summary also
  ``{repo: own-uncommitted}``: in a clone of this repository's HEAD holding one result file more, not
  committed (what every device run leaves: HEAD's evidence is then not the working tree's), over the clone's status.

``--cases`` picks the groups timed (default all): ``status`` (status and update --check, every repository),
``report``, ``detail`` (show, log, summary), ``gates`` (cold status of the ``gates`` repositories).

Usage::

    python bench/plan_tracker/speed.py                 # full run (~7 min on a busy 2-core VM while status at 1,000
                                                  # evidence files takes 2.4 s; ~5 min once it does not); writes
                                                  # bench/results/
    python bench/plan_tracker/speed.py --quick     # ~1-2 min: 3 rounds, history 10 and 1,000, 100 plans; writes nothing
    python bench/plan_tracker/speed.py --quick --out DIR   # the same, result file into DIR
    python bench/plan_tracker/speed.py --runs 11 --history 10,100,1000 --plans 1000 --phases 10 --out bench/results
    python bench/plan_tracker/speed.py --cases report  # the report's cases (and the status runs they are compared with)

The result file (``<UTC time>-<host>-tracker_speed-<6 hex>.json``, schema ``tracker-bench-result``, written by
:mod:`bench.plan_tracker.record`) records the commit, whether the measured files (``tracker/**/*.py`` and this
benchmark's modules, :data:`MEASURED`) differ from it, and their fingerprint, so a bench gate on it goes stale when the
tracker's code changes. The repositories are built by :mod:`bench.plan_tracker.repos` and
:mod:`bench.plan_tracker.history`, and timed by :mod:`bench.plan_tracker.timing`. The tracker measured is the
``tracker`` console script next to this interpreter (else ``python -m tracker``), with this process's environment (a
``PYTHONPATH`` reaches it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

if not __package__:  # `python bench/plan_tracker/speed.py`: bench/plan_tracker/, not the root, is on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.plan_tracker.history import build_history, build_history_base
from bench.plan_tracker.record import REPO, command_line, ms_case, ratio_case, tracker_cmd, write_result
from bench.plan_tracker.repos import build_gates, build_synthetic
from bench.plan_tracker.timing import Job, rounds, walls

# What a result file's fingerprint covers: the tracker's code and this benchmark's.
MEASURED = (
    "tracker/**/*.py",
    "bench/plan_tracker/speed.py",
    "bench/plan_tracker/history.py",
    "bench/plan_tracker/repos.py",
    "bench/plan_tracker/timing.py",
    "bench/plan_tracker/record.py",
)


CASE_GROUPS = ("status", "report", "detail", "gates")
DETAIL_PHASE = "0002/P7"  # a phase of our plans with a long history and many bench gates


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="3 rounds, history 10 and 1,000, 100 synthetic plans; no result file unless --out",
    )
    ap.add_argument("--plans", type=int, default=None, help="synthetic plans (default 1000; --quick 100)")
    ap.add_argument("--phases", type=int, default=10)
    ap.add_argument("--runs", type=int, default=None, help="timed rounds after the warm-up (default 7; --quick 3)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs a round of every command a ratio compares, the fastest counting (default 3; --quick 1)",
    )
    ap.add_argument(
        "--history", default=None, help="comma-separated evidence counts (default 10,100,1000; --quick 10,1000)"
    )
    ap.add_argument(
        "--out", type=Path, default=None, help="directory of the result file (default bench/results/; --quick: none)"
    )
    ap.add_argument(
        "--gates", default=None, help="comma-separated test gates per phase (default 1250,5000; --quick 500,2000)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary repositories (their path is printed)")
    ap.add_argument(
        "--cases", default=",".join(CASE_GROUPS), help=f"groups to time, comma-separated: {', '.join(CASE_GROUPS)}"
    )
    args = ap.parse_args(argv)
    args.cases = [c for c in args.cases.split(",") if c]
    if not args.cases or any(c not in CASE_GROUPS for c in args.cases):
        ap.error(f"--cases: one or more of {', '.join(CASE_GROUPS)}")
    args.plans = args.plans if args.plans is not None else (100 if args.quick else 1000)
    args.runs = args.runs if args.runs is not None else (3 if args.quick else 7)
    args.repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    args.history = [int(x) for x in (args.history or ("10,1000" if args.quick else "10,100,1000")).split(",")]
    args.gates = sorted({int(x) for x in (args.gates or ("500,2000" if args.quick else "1250,5000")).split(",")})
    if args.out is None and not args.quick:
        args.out = REPO / "bench" / "results"
    if args.runs < 1 or args.repeat < 1 or not args.history or min(args.history) < 1 or min(args.gates) < 1:
        ap.error("--runs, --repeat, --history and --gates need positive numbers")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tracker = tracker_cmd()
    python = [sys.executable, "-c", "pass"]
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}, "
        f"tracker via {' '.join(tracker)}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="tracker-speed-"))
    try:
        start = time.perf_counter()
        base = tmp / "history-base"
        base.mkdir()
        history: dict[int, Path] = {}
        templates: list[tuple[str, bytes]] = []
        if "status" in args.cases:
            templates = build_history_base(base, tracker)
            history = build_history(base, templates, sorted(set(args.history)), tracker)
        synthetic = tmp / "synthetic"
        synthetic.mkdir()
        build_synthetic(synthetic, args.plans, args.phases)
        gated: dict[int, Path] = {}
        for count in args.gates if "gates" in args.cases else ():
            gated[count] = tmp / f"gates-{count}"
            gated[count].mkdir()
            build_gates(gated[count], count)
        print(
            f"built in {time.perf_counter() - start:.1f} s: history repo ({len(templates)} real evidence files) at "
            f"{', '.join(map(str, history)) or 'no'} files; synthetic {args.plans} plans x {args.phases} phases"
        )
        cold_start = time.perf_counter()
        subprocess.run([*tracker, "status"], cwd=synthetic, capture_output=True, check=True)
        cold = time.perf_counter() - cold_start
        subprocess.run([*tracker, "update"], cwd=synthetic, capture_output=True, check=True)
        jobs = [Job("python/own", python, REPO), Job("status/own", [*tracker, "status"], REPO)]
        if "status" in args.cases:
            jobs.append(Job("update/own", [*tracker, "update", "--check"], REPO, (0, 1)))
            for size, root in history.items():
                jobs += [
                    Job(f"python/{size}", python, root),
                    Job(f"status/{size}", [*tracker, "status"], root),
                    Job(f"update/{size}", [*tracker, "update", "--check"], root, (0, 1)),
                ]
            jobs.append(Job("update/synthetic", [*tracker, "update", "--check"], synthetic, best_of=False))
        jobs.append(Job("status/synthetic", [*tracker, "status"], synthetic, best_of=False))
        if "report" in args.cases:
            jobs += [
                Job("report/synthetic", [*tracker, "report"], synthetic, best_of=False),
                Job("report/own/md", [*tracker, "report"], REPO, (0, 2), best_of=False),
                Job("report/own/html", [*tracker, "report", "--format", "html"], REPO, (0, 2), best_of=False),
            ]
        if "detail" in args.cases:
            uncommitted = clone_with_new_result(REPO, tmp / "uncommitted")
            # summary compares HEAD with the working tree: on ours, result files a bench run just wrote (not committed)
            # make it re-judge their gates at HEAD (2.2x status, 2026-12-06). "own" is a clean clone of HEAD.
            clean = clone_head(REPO, tmp / "clean")
            jobs += [
                Job("show/own", [*tracker, "show", DETAIL_PHASE], REPO, (0, 2)),
                Job("log/own", [*tracker, "log", DETAIL_PHASE], REPO, (0, 2)),
                Job("status/clean", [*tracker, "status"], clean),
                Job("summary/own", [*tracker, "summary"], clean),
                Job("status/uncommitted", [*tracker, "status"], uncommitted),
                Job("summary/uncommitted", [*tracker, "summary"], uncommitted),
            ]
        for count, root in gated.items():
            jobs.append(Job(f"status-cold/gates/{count}", [*tracker, "status"], root, cold=True))
        timings, outputs = rounds(jobs, args.runs, args.repeat)
        times = walls(timings)
        if "status" in args.cases:
            shown = {outputs[f"status/{size}"] for size in history}
            if len(shown) != 1:
                raise SystemExit(
                    "the history repositories' status tables differ: the generated history changed a verdict"
                )
        cases = report(times, history, cold, args, {job.name: args.repeat if job.best_of else 1 for job in jobs})
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.out is not None:
        command = command_line("bench/plan_tracker/speed.py", argv)
        print(f"result file: {write_result(cases, args.out, command, 'tracker_speed', MEASURED)}")
    return 0


def report(
    times: dict[str, list[float]],
    history: dict[int, Path],
    cold: float,
    args: argparse.Namespace,
    repeats: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Print the table and return the result file's cases; ``repeats``: runs a round of each job (info.repeat)."""
    base = {"cpus": os.cpu_count() or 0, "load1": round(os.getloadavg()[0], 2)}

    def info_of(*names: str) -> dict[str, Any]:
        """The cases' info: the machine, and the runs a round of the jobs measured (the same for both sides)."""
        counts = {(repeats or {}).get(name, 1) for name in names}
        return {**base, "repeat": counts.pop() if len(counts) == 1 else sorted(counts)}

    info = info_of("python/own")
    med = {name: statistics.median(v) * 1000 for name, v in times.items()}
    all_python = [s for name, v in times.items() if name.startswith("python/") for s in v]
    print(f"median of {args.runs} rounds, ms; x = over the python -c pass run just before it (median of pairs)")
    print(f"{'python -c pass':<40} {statistics.median(all_python) * 1000:8.1f}")
    cases = [ms_case("python.pass_ms", {}, all_python, info)]

    def row(label: str, name: str, params: dict[str, Any], python: str | None) -> None:
        metric = "tracker.status" if name.startswith("status") else "tracker.update_check"
        cases.append(ms_case(f"{metric}_ms", params, times[name], info_of(name)))
        ratio = ""
        if python is not None and name.startswith("status"):
            cases.append(
                ratio_case("tracker.status_vs_python", params, times[name], times[python], info_of(name, python))
            )
            ratio = f"  {statistics.median(cases[-1]['samples']):5.1f}x"
        print(f"{label:<40} {med[name]:8.1f}{ratio}")

    row("status, own plans", "status/own", {"repo": "own"}, "python/own")
    if "update/own" in times:
        row("update --check, own plans", "update/own", {"repo": "own"}, "python/own")
    for size in history:
        row(f"status, history of {size}", f"status/{size}", {"repo": "history", "evidence": size}, f"python/{size}")
        row(
            f"update --check, history of {size}",
            f"update/{size}",
            {"repo": "history", "evidence": size},
            f"python/{size}",
        )
    low, high = min(history, default=0), max(history, default=0)
    if low != high:
        span = {"repo": "history", "evidence_from": low, "evidence_to": high}
        for what, metric in (
            ("status", "tracker.status_history_ratio"),
            ("update", "tracker.update_check_history_ratio"),
        ):
            top, bottom = f"{what}/{high}", f"{what}/{low}"
            cases.append(ratio_case(metric, span, times[top], times[bottom], info_of(top, bottom)))
            print(f"{what} at {high} / at {low} evidence files{'':<14} {statistics.median(cases[-1]['samples']):5.2f}x")
    synthetic = {"repo": "synthetic", "plans": args.plans, "phases": args.phases}
    row(f"status, {args.plans} plans x {args.phases} phases", "status/synthetic", synthetic, None)
    if "update/synthetic" in times:
        row(f"update --check, {args.plans} plans x {args.phases} phases", "update/synthetic", synthetic, None)
    cases.append(ms_case("tracker.status_cold_ms", synthetic, [cold], {**base, "repeat": 1}))
    print(f"{'status, synthetic, cold parse cache':<40} {cold * 1000:8.1f}")

    def timed(label: str, metric: str, name: str, params: dict[str, Any], over: str | None = None) -> None:
        cases.append(ms_case(metric, params, times[name], info_of(name)))
        ratio = ""
        if over is not None:
            vs = metric.removesuffix("_ms") + "_vs_status"
            cases.append(ratio_case(vs, params, times[name], times[over], info_of(name, over)))
            ratio = f"  {statistics.median(cases[-1]['samples']):5.2f}x status"
        print(f"{label:<40} {med[name]:8.1f}{ratio}")

    if "report/synthetic" in times:
        timed(f"report, {args.plans} plans x {args.phases} phases", "tracker.report_ms", "report/synthetic", synthetic)
        timed("report, own plans (Markdown)", "tracker.report_ms", "report/own/md", {"repo": "own", "format": "md"})
        timed(
            "report, own plans (HTML, charts)",
            "tracker.report_ms",
            "report/own/html",
            {"repo": "own", "format": "html"},
        )
    gated = sorted(int(name.rsplit("/", 1)[1]) for name in times if name.startswith("status-cold/gates/"))
    for count in gated:
        timed(
            f"status, {count} gates in a phase, cold",
            "tracker.status_cold_ms",
            f"status-cold/gates/{count}",
            {"repo": "gates", "gates": count},
        )
    if len(gated) > 1:
        top, bottom = f"status-cold/gates/{gated[-1]}", f"status-cold/gates/{gated[0]}"
        span = {"repo": "gates", "gates_from": gated[0], "gates_to": gated[-1]}
        metric = "tracker.status_cold_gates_ratio"
        cases.append(ratio_case(metric, span, times[top], times[bottom], info_of(top, bottom)))
        ratio = statistics.median(cases[-1]["samples"])
        print(f"status at {gated[-1]} / at {gated[0]} gates in a phase, cold{'':<5} {ratio:5.2f}x")
    if "show/own" in times:
        timed(f"show {DETAIL_PHASE}, own plans", "tracker.show_ms", "show/own", {"repo": "own"}, "status/own")
        timed(f"log {DETAIL_PHASE}, own plans", "tracker.log_ms", "log/own", {"repo": "own"}, "status/own")
        timed("summary, own plans (HEAD)", "tracker.summary_ms", "summary/own", {"repo": "own"}, "status/clean")
        timed(
            "summary, own plans, evidence uncommitted",
            "tracker.summary_ms",
            "summary/uncommitted",
            {"repo": "own-uncommitted"},
            "status/uncommitted",
        )
    return cases


def clone_head(repo: Path, where: Path) -> Path:
    """A clone of ``repo``'s HEAD at ``where``: its committed files only."""
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(where)], check=True)
    return where


def clone_with_new_result(repo: Path, where: Path) -> Path:
    """A clone of ``repo``'s HEAD whose bench/results/ holds one result file more, not committed: a copy of its
    newest, named and timed a second later (its provenance time too, so that it is a run of its own)."""
    clone_head(repo, where)
    results = where / "bench" / "results"
    newest = max(results.glob("2*.json"), key=lambda p: p.name)
    doc = json.loads(newest.read_text(encoding="utf-8"))
    when = datetime.strptime(doc["provenance"]["time"], "%Y-%m-%dT%H:%M:%SZ") + timedelta(seconds=1)
    doc["provenance"]["time"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    (results / f"{when.strftime('%Y%m%dT%H%M%S')}000000Z-speed-uncommitted.json").write_text(
        json.dumps(doc), encoding="utf-8"
    )
    return where


if __name__ == "__main__":
    sys.exit(main())
