"""The one timing of the tracker's benchmarks: whole processes, interleaved round by round.

Every command runs in turn, ``runs`` rounds after one warm-up round (which also writes the ``.pyc`` files and warms
the tracker's caches), so that a load change on a shared machine hits every command alike. A job with ``best_of``
runs ``repeat`` times back to back in each round and counts its fastest wall time and its least CPU time (with the
own CPU of that run): on a shared 2-core machine one run of a 50 ms process varies by +-40% (ratios of single runs
spread 0.75-1.76), while the fastest of three measures the work. The jobs a ratio compares all have ``best_of``, so
both sides of every ratio are measured alike.

CPU time is the user + system time of the process and everything it waited for (``RUSAGE_CHILDREN``); a process that
prints ``@@cpu OWN CHILDREN`` last on stderr (verify_overhead.py's ``SELF_CPU`` wrapper) also reports its own.
(The kernel's :mod:`bench.timing` times CUDA launches with device events: another kind of measurement.)
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple


class Timing(NamedTuple):
    """One run: wall seconds, CPU seconds of the process tree, and the process's own CPU seconds (None unless it
    reports them)."""

    wall: float
    cpu: float
    own: float | None


class Job(NamedTuple):
    """One command timed every round: its name, command line, directory, accepted exit codes, whether it runs
    ``repeat`` times a round (the fastest counting), whether the tracker's caches are removed before every run
    (untimed), and its environment (None: this process's)."""

    name: str
    cmd: list[str]
    cwd: Path
    ok: tuple[int, ...] = (0,)
    best_of: bool = True
    cold: bool = False  # the parse and status caches (.tracker/cache) removed before every run, untimed
    env: dict[str, str] | None = None


def run_once(job: Job) -> tuple[Timing, bytes]:
    """One run of ``job``: its timing and stdout; an exit code ``job.ok`` does not accept stops the benchmark."""
    if job.cold:
        shutil.rmtree(job.cwd / ".tracker" / "cache", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(job.cmd, cwd=job.cwd, env=job.env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode not in job.ok:
        raise SystemExit(
            f"{' '.join(job.cmd[:4])}... (in {job.cwd}) exited {proc.returncode}:\n"
            f"{proc.stdout.decode(errors='replace')[-1500:]}\n{stderr[-1500:]}"
        )
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    own = float(stderr.rsplit("@@cpu ", 1)[1].split()[0]) if "@@cpu " in stderr else None
    return Timing(elapsed, cpu, own), proc.stdout


def rounds(
    jobs: list[Job], runs: int, repeat: int = 1, after: Callable[[Job], None] | None = None
) -> tuple[dict[str, list[Timing]], dict[str, bytes]]:
    """Every job in turn, ``runs`` rounds after one warm-up round; (timings per job, last stdout per job). ``after``
    is called after every run of a job (verify_overhead.py keeps the evidence store at one file)."""
    times: dict[str, list[Timing]] = {job.name: [] for job in jobs}
    outputs: dict[str, bytes] = {}
    for i in range(runs + 1):
        for job in jobs:
            measured = []
            for _ in range(repeat if i and job.best_of else 1):
                timing, outputs[job.name] = run_once(job)
                measured.append(timing)
                if after is not None:
                    after(job)
            if i:
                least = min(measured, key=lambda t: t.cpu)
                times[job.name].append(Timing(min(t.wall for t in measured), least.cpu, least.own))
    return times, outputs


def walls(times: dict[str, list[Timing]]) -> dict[str, list[float]]:
    """The wall seconds of each job's rounds."""
    return {name: [t.wall for t in timings] for name, timings in times.items()}
