"""bench/plan_tracker/timing.py, the tracker benchmarks' one timing: a job runs ``repeat`` times a round (its fastest
counting) or once, a cold job without the tracker's caches every time, a wrong exit code stops the benchmark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.plan_tracker.timing import Job, rounds, run_once, walls


def test_a_job_runs_repeat_times_a_round_and_its_fastest_counts(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    count = f"open({str(log)!r}, 'a').write('{{}}\\n')"
    best = Job("best", [sys.executable, "-c", count.replace("{}", "b")], tmp_path)
    once = Job("once", [sys.executable, "-c", count.replace("{}", "o")], tmp_path, best_of=False)
    times, _ = rounds([best, once], 2, repeat=3)
    lines = log.read_text().split()
    assert lines.count("b") == 1 + 2 * 3 and lines.count("o") == 1 + 2  # the warm-up once; `once` once a round
    assert len(times["best"]) == len(times["once"]) == 2


def test_a_cold_job_runs_without_the_cache_every_time(tmp_path: Path) -> None:
    cache = tmp_path / ".tracker" / "cache"
    probe = f"import os; open('seen', 'a').write(str(os.path.exists({str(cache)!r})))"
    cold = Job("cold", [sys.executable, "-c", probe + f"; os.makedirs({str(cache)!r}, exist_ok=True)"], tmp_path)
    rounds([cold._replace(cold=True)], 2, repeat=2)
    assert (tmp_path / "seen").read_text() == "False" * 5  # warm-up, then 2 rounds x 2 runs


def test_a_round_keeps_the_fastest_wall_and_the_least_cpu(tmp_path: Path) -> None:
    job = Job("j", [sys.executable, "-c", "pass"], tmp_path)
    times, outputs = rounds([job], 3, repeat=2)
    assert len(times["j"]) == 3 and all(t.wall > 0 and t.cpu >= 0 and t.own is None for t in times["j"])
    assert walls(times) == {"j": [t.wall for t in times["j"]]} and outputs["j"] == b""


def test_an_exit_code_not_accepted_stops_the_benchmark(tmp_path: Path) -> None:
    fails = [sys.executable, "-c", "import sys; print('out'); sys.exit(3)"]
    with pytest.raises(SystemExit, match="exited 3"):
        run_once(Job("fails", fails, tmp_path))
    assert run_once(Job("fails", fails, tmp_path, ok=(0, 3)))[1].strip() == b"out"
