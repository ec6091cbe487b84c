"""Issue 29: pytest-benchmark's and asv's own files, made by the real tools in a real repository, ingested as result
files that a bench gate reads: met on the fast code, regressed when the code got clearly slower (time.sleep)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evidence_repo import commit_all, git, make_repo, phase_block, plan_text, statuses

from tracker.core.model import Status

pytest.importorskip("pytest_benchmark", reason="the test extra installs pytest-benchmark")

FAST = "def parse(size):\n    return sum(range(size))\n"
SLOW = "import time\n\n\ndef parse(size):\n    time.sleep(0.02)\n    return sum(range(size))\n"
BENCH_TEST = """import pytest

from src.parse import parse


@pytest.mark.parametrize("size", [8])
def test_parse(benchmark, size):
    benchmark(parse, size)
"""
PB_GATE = """bench = "tests/test_parse.py::test_parse"
where = { size = 8 }
at_most = 0.005
min_samples = 5"""


def pytest_benchmark_json(repo: Path, out: Path) -> dict[str, Any]:
    """Run pytest-benchmark itself on the repository's benchmark; its ``--benchmark-json`` document."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_parse.py",
            f"--benchmark-json={out}",
            "--benchmark-min-rounds=8",
            "--benchmark-max-time=0.2",
        ],
        cwd=repo,
        # not an xdist worker's child: pytest-benchmark writes no --benchmark-json from a worker
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")},
        check=True,
        capture_output=True,
    )
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


@pytest.fixture
def pb_repo(tmp_path: Path) -> Path:
    plan = plan_text("0001", [phase_block("P1", ["src/**"], [PB_GATE])])
    files = {
        "plans/0001-parse.md": plan,
        "src/__init__.py": "",
        "src/parse.py": FAST,
        "tests/test_parse.py": BENCH_TEST,
        "pytest.ini": "[pytest]\npythonpath = .\n",
        ".gitignore": ".tracker/cache/\n__pycache__/\n",
    }
    return make_repo(tmp_path / "repo", files)


def test_pytest_benchmark_json_meets_then_regresses_a_gate(
    pb_repo: Path, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    fast = pytest_benchmark_json(pb_repo, tmp_path / "fast.json")
    assert "data" in fast["benchmarks"][0]["stats"]  # --benchmark-json holds the raw samples
    got = cli(pb_repo, "ingest", str(tmp_path / "fast.json"))
    assert got.code == 0, got.err
    assert "case(s) of pytest-benchmark" in got.out
    (written,) = (pb_repo / "bench/results").glob("*.json")
    result = json.loads(written.read_text())
    (case,) = result["cases"]
    assert case["metric"] == "tests/test_parse.py::test_parse"
    assert case["params"] == {"size": 8}  # an int, as the test's parameter is
    assert case["samples"] == fast["benchmarks"][0]["stats"]["data"]
    assert result["provenance"]["commit"] == git(pb_repo, "rev-parse", "HEAD").strip()
    assert result["provenance"]["dirty"] is False
    assert sorted(result["provenance"]["fingerprint"]["files"]) == [
        "src/__init__.py",
        "src/parse.py",
        "tests/test_parse.py",
    ]
    assert statuses(pb_repo)["0001/P1"].status is Status.DONE

    again = cli(pb_repo, "ingest", str(tmp_path / "fast.json"))  # the same file twice: one result file
    assert again.code == 0 and "already in the store, skipped" in again.out
    assert len(list((pb_repo / "bench/results").glob("*.json"))) == 1

    (pb_repo / "src/parse.py").write_text(SLOW)
    assert statuses(pb_repo)["0001/P1"].status is Status.STALE  # the measured code changed
    commit_all(pb_repo, "slower")
    pytest_benchmark_json(pb_repo, tmp_path / "slow.json")
    got = cli(pb_repo, "ingest", str(tmp_path / "slow.json"))
    assert got.code == 0, got.err
    st = statuses(pb_repo)["0001/P1"]
    assert st.status is Status.REGRESSED, st


def test_a_dirty_or_foreign_commit_is_refused_and_nothing_is_written(
    pb_repo: Path, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    (pb_repo / "src/parse.py").write_text(FAST + "# edited, not committed\n")
    doc = pytest_benchmark_json(pb_repo, tmp_path / "dirty.json")
    assert doc["commit_info"]["dirty"] is True
    got = cli(pb_repo, "ingest", str(tmp_path / "dirty.json"))
    assert got.code == 8 and "uncommitted changes" in got.err and "Traceback" not in got.err
    assert not (pb_repo / "bench/results").exists()

    doc["commit_info"].update(dirty=False, id="f" * 40)
    (tmp_path / "other.json").write_text(json.dumps(doc))
    got = cli(pb_repo, "ingest", str(tmp_path / "other.json"))
    assert got.code == 8 and "not a commit of this repository" in got.err

    doc["commit_info"].update(id="unversioned")
    (tmp_path / "none.json").write_text(json.dumps(doc))
    got = cli(pb_repo, "ingest", str(tmp_path / "none.json"))
    assert got.code == 8 and "names no commit" in got.err

    for bench in doc["benchmarks"]:
        del bench["stats"]["data"]
    doc["commit_info"].update(id=git(pb_repo, "rev-parse", "HEAD").strip())
    (tmp_path / "summary.json").write_text(json.dumps(doc))
    got = cli(pb_repo, "ingest", str(tmp_path / "summary.json"))
    assert got.code == 8 and "no raw samples" in got.err
    assert not (pb_repo / "bench/results").exists()


# --- asv ---------------------------------------------------------------------------------------------------------

ASV_BENCH = """import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from src.parse import parse  # noqa: E402


class TimeParse:
    params = ([1, 2], ["a", "b"])
    param_names = ["size", "mode"]
    repeat = 10
    number = 1
    rounds = 1
    warmup_time = 0

    def time_parse(self, size, mode):
        parse(size)


def track_answer():
    return 42


def time_broken():
    raise ValueError("broken")
"""
ASV_CONF = {
    "version": 1,
    "project": "demo",
    "repo": ".",
    "environment_type": "existing",
    "benchmark_dir": "benchmarks",
    "results_dir": "results",
    "html_dir": "html",
    "branches": ["HEAD"],
}
ASV_GATE = """bench = "bench_parse.TimeParse.time_parse"
where = { size = 1, mode = "a" }
at_most = 0.005
min_samples = 5"""


def run_asv(repo: Path, home: Path) -> Path:
    """Run asv itself (its ``existing`` environment: this Python, no build) with ``--record-samples``; the result
    file it wrote for HEAD."""
    pytest.importorskip("asv", reason="the test extra installs asv")
    asv = [sys.executable, "-m", "asv"]
    env = {**os.environ, "HOME": str(home)}  # asv keeps ~/.asv-machine.json
    head = git(repo, "rev-parse", "HEAD").strip()
    subprocess.run(
        [*asv, "machine", "--yes", "--machine", "testbox"], cwd=repo, env=env, check=True, capture_output=True
    )
    ran = subprocess.run(
        [*asv, "run", "--python=same", "--record-samples", "--machine", "testbox", "--set-commit-hash", head],
        cwd=repo,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    assert ran.returncode in (0, 2), ran.stdout + ran.stderr  # 2: a benchmark failed (time_broken, on purpose)
    (found,) = (repo / "results/testbox").glob(f"{head[:8]}-*.json")
    return found


def test_asv_results_meet_then_regress_a_gate(tmp_path: Path, cli: Callable[..., Any]) -> None:
    plan = plan_text("0001", [phase_block("P1", ["src/**"], [ASV_GATE])])
    files = {
        "plans/0001-parse.md": plan,
        "src/__init__.py": "",
        "src/parse.py": FAST,
        "benchmarks/__init__.py": "",
        "benchmarks/bench_parse.py": ASV_BENCH,
        "asv.conf.json": json.dumps(ASV_CONF),
        ".gitignore": ".tracker/cache/\n__pycache__/\nresults/\nhtml/\n.asv/\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    home = tmp_path / "home"
    home.mkdir()
    fast = run_asv(repo, home)
    got = cli(repo, "ingest", str(fast))
    assert got.code == 0, got.err
    assert "time_broken: skipped (failed: no result)" in got.out
    assert "track_answer: skipped (track benchmark" in got.out
    (written,) = (repo / "bench/results").glob("*.json")
    result = json.loads(written.read_text())
    params = [c["params"] for c in result["cases"]]
    assert params == [
        {"size": 1, "mode": "a"},
        {"size": 1, "mode": "b"},
        {"size": 2, "mode": "a"},
        {"size": 2, "mode": "b"},
    ]
    assert all(len(c["samples"]) == 10 and c["unit"] == "s" for c in result["cases"])
    assert result["provenance"]["host"] == "testbox" and result["provenance"]["dirty"] is None
    assert sorted(result["provenance"]["fingerprint"]["files"]) == ["src/__init__.py", "src/parse.py"]
    assert statuses(repo)["0001/P1"].status is Status.DONE

    (repo / "src/parse.py").write_text(SLOW)
    commit_all(repo, "slower")
    got = cli(repo, "ingest", str(run_asv(repo, home)))
    assert got.code == 0, got.err
    assert statuses(repo)["0001/P1"].status is Status.REGRESSED

    # Without benchmarks.json the parameters are named by position, as asv itself names them.
    (repo / "results/benchmarks.json").unlink()
    for old in (repo / "bench/results").glob("*.json"):
        old.unlink()
    got = cli(
        repo, "ingest", str(next((repo / "results/testbox").glob(f"{git(repo, 'rev-parse', 'HEAD')[:8]}-*.json")))
    )
    assert got.code == 0, got.err
    (written,) = (repo / "bench/results").glob("*.json")
    assert json.loads(written.read_text())["cases"][0]["params"] == {"param1": 1, "param2": "a"}


def test_all_or_nothing_and_where_it_writes(pb_repo: Path, tmp_path: Path, cli: Callable[..., Any]) -> None:
    good = tmp_path / "good.json"
    pytest_benchmark_json(pb_repo, good)
    bad = tmp_path / "bad.json"
    bad.write_text(good.read_text()[:-40])  # truncated
    got = cli(pb_repo, "ingest", str(good), str(bad))
    assert got.code == 8 and got.err.startswith(f"tracker: error: {bad}:") and "JSON" in got.err, got.err
    assert not (pb_repo / "bench/results").exists()

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # never waited on
    got = cli(pb_repo, "ingest", str(good), str(fifo))
    assert got.code == 8 and "not a regular file" in got.err and "Traceback" not in got.err
    assert not (pb_repo / "bench/results").exists()

    outside = tmp_path / "outside"
    outside.mkdir()
    (pb_repo / "bench").mkdir()
    (pb_repo / "bench/results").symlink_to(outside)  # results that link out of the repository: nothing written there
    got = cli(pb_repo, "ingest", str(good))
    assert got.code == 8 and "outside the repository" in got.err
    assert list(outside.iterdir()) == []
    (pb_repo / "bench/results").unlink()

    got = cli(pb_repo, "ingest", "--measure", "nothing/**", str(good))
    assert got.code == 3 and "name the files the benchmark measured with --measure" in got.err
    got = cli(pb_repo, "ingest", "--measure", "tests/test_parse.py", str(good))
    assert got.code == 0, got.err  # written, but the phase's own code is not what it names as measured: said so
    assert "phase 0001/P1 gates tests/test_parse.py::test_parse, but no measured file is under its paths" in got.err
    for written in (pb_repo / "bench/results").glob("*.json"):
        written.unlink()
    got = cli(pb_repo, "ingest", "--measure", "src/parse.py", str(good))
    assert got.code == 0 and got.err == "", got.err
    (written,) = (pb_repo / "bench/results").glob("*.json")
    fingerprint = json.loads(written.read_text())["provenance"]["fingerprint"]
    assert list(fingerprint["files"]) == ["src/parse.py"] and fingerprint["patterns"] == ["src/parse.py"]


def test_a_threshold_inside_the_noise_is_undecided_never_done(
    pb_repo: Path, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    pytest_benchmark_json(pb_repo, tmp_path / "fast.json")
    assert cli(pb_repo, "ingest", str(tmp_path / "fast.json")).code == 0
    (written,) = (pb_repo / "bench/results").glob("*.json")
    median = json.loads(written.read_text())["cases"][0]["stats"]["median"]
    plan = pb_repo / "plans/0001-parse.md"
    plan.write_text(plan.read_text().replace("at_most = 0.005", f"at_most = {median!r}"))  # right on its median
    shown = cli(pb_repo, "show", "0001/P1")
    assert statuses(pb_repo)["0001/P1"].status is not Status.DONE, shown.out
    assert "undecided" in shown.out, shown.out


def test_an_untracked_file_under_the_measured_paths_is_no_clean_commit(
    pb_repo: Path, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """pytest-benchmark's dirty flag is ``git describe --dirty``: it ignores untracked files. A benchmark that ran
    code from a file not yet added (here the fast implementation HEAD's parse.py imports when present) says
    ``dirty: false`` for HEAD, and the result must not claim a clean commit it did not measure: in a clean checkout
    of HEAD (CI) parse sleeps 20 ms, yet the gate at_most 5 ms would read met on a "clean" HEAD result. The
    tracker's own runs count untracked files as dirty (tracker/base/dirty.py)."""
    (pb_repo / "src/parse.py").write_text(
        "try:\n    from src.fast_impl import parse\nexcept ImportError:\n"
        "    import time\n\n    def parse(size):\n        time.sleep(0.02)\n        return sum(range(size))\n"
    )
    commit_all(pb_repo, "parse: the fast path when src/fast_impl.py is there")
    (pb_repo / "src/fast_impl.py").write_text(FAST)  # never added
    doc = pytest_benchmark_json(pb_repo, tmp_path / "untracked.json")
    assert doc["commit_info"]["dirty"] is False  # pytest-benchmark's word: clean
    got = cli(pb_repo, "ingest", str(tmp_path / "untracked.json"))
    if got.code == 0:
        (written,) = (pb_repo / "bench/results").glob("*.json")
        prov = json.loads(written.read_text())["provenance"]
        assert prov["commit"] == git(pb_repo, "rev-parse", "HEAD").strip()
        assert prov["dirty"] is not False, "an untracked file was measured, yet the result claims a clean HEAD"


def test_a_run_ingested_before_its_gate_was_written_still_goes_stale(
    pb_repo: Path, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """Without --measure the fingerprint is the benchmark's test file plus the paths of the phases that gate its
    metric *at ingest time*. Benchmark first, gate after (the usual order) and no phase gates it yet: only
    tests/test_parse.py is fingerprinted, no never-stale warning is said, and once the gate names the metric the
    phase reads done on that result for ever, through any change of src/parse.py, the code it measured (here 20 ms a
    call against at_most 5 ms)."""
    plan = pb_repo / "plans/0001-parse.md"
    gated = plan.read_text()
    plan.write_text(gated.replace("tests/test_parse.py::test_parse", "tests/test_parse.py::test_later"))
    commit_all(pb_repo, "the phase gates another benchmark for now")
    pytest_benchmark_json(pb_repo, tmp_path / "fast.json")
    got = cli(pb_repo, "ingest", str(tmp_path / "fast.json"))
    assert got.code == 0, got.err
    plan.write_text(gated)
    commit_all(pb_repo, "the gate names the benchmark")
    assert statuses(pb_repo)["0001/P1"].status is Status.DONE
    (pb_repo / "src/parse.py").write_text(SLOW)
    commit_all(pb_repo, "slower")
    assert statuses(pb_repo)["0001/P1"].status is not Status.DONE, "done on a result of code that changed since"


def _asv_file(folder: Path, env: str, commit: str, rows: dict[str, tuple[list[float] | None, int]]) -> Path:
    """An asv 0.6 result file of ``rows`` ({name: (samples or None for a failed benchmark, started_at ms)})."""
    columns = ["result", "params", "version", "started_at", "duration", "samples"]
    results = {
        name: [None if s is None else [sorted(s)[len(s) // 2]], [], "v1", start, 1.0, None if s is None else [s]]
        for name, (s, start) in rows.items()
    }
    doc = {
        "commit_hash": commit,
        "env_name": env,
        "date": 1000,
        "params": {"machine": "box"},
        "python": "3.11",
        "requirements": {},
        "env_vars": {},
        "result_columns": columns,
        "results": results,
        "durations": {},
        "version": 2,
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "machine.json").write_text(json.dumps({"machine": "box", "version": 1}))
    path = folder / f"{commit[:8]}-{env}.json"
    path.write_text(json.dumps(doc))
    return path


def test_an_asv_file_dated_by_an_older_benchmark_does_not_hide_its_newer_regression(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """asv keeps, in one result file per commit and environment, benchmarks run at different times (a failed one, or
    one of an earlier ``asv run --bench``): ingest dates the whole result by the earliest ``started_at``. Here the
    newest measurement of the gated benchmark (started last, 20 ms a call against at_most 5 ms, same code) is
    ordered before the older fast run because a failed benchmark in its file started first: the phase reads done."""
    import time

    gate = 'bench = "bench_parse.time_parse"\nat_most = 0.005\nmin_samples = 5'
    plan = plan_text("0001", [phase_block("P1", ["src/**"], [gate])])
    files = {"plans/0001-parse.md": plan, "src/parse.py": FAST, ".gitignore": "__pycache__/\n"}
    repo = make_repo(tmp_path / "repo", files)
    head = git(repo, "rev-parse", "HEAD").strip()
    now = int(time.time() * 1000)
    folder = tmp_path / "results" / "box"
    fast = [0.0001 + i * 1e-6 for i in range(10)]
    slow = [0.02 + i * 1e-4 for i in range(10)]
    first = _asv_file(folder, "env1", head, {"bench_parse.time_parse": (fast, now - 120_000)})
    got = cli(repo, "ingest", str(first))
    assert got.code == 0, got.err
    assert statuses(repo)["0001/P1"].status is Status.DONE
    second = _asv_file(
        folder, "env2", head, {"bench_parse.time_broken": (None, now - 240_000), "bench_parse.time_parse": (slow, now)}
    )
    got = cli(repo, "ingest", str(second))
    assert got.code == 0, got.err
    st = statuses(repo)["0001/P1"]
    assert st.status is not Status.DONE, f"the newest measurement misses at_most 5 ms by 4x, yet: {st}"
