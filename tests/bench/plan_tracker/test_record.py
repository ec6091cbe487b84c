"""bench/plan_tracker/record.py: the cases and the one writer of the tracker's benchmarks. Ratios are taken round by round;
the stats are the tracker's own (tracker.core.stats: p90 interpolated as numpy does); the dirty flag is the measured
files' (speed, verify overhead) or the whole tree's (verdict noise), and the environment's word wins over git's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evidence_repo import commit_all, make_repo

from bench.plan_tracker.record import command_line, ms_case, ratio_case, write_result
from tracker.store.result_files import load_result

INFO = {"cpus": 2, "load1": 1.5}


def test_ratios_are_taken_round_by_round() -> None:
    entry = ratio_case("tracker.status_vs_python", {"repo": "own"}, [0.2, 0.3, 0.9], [0.1, 0.1, 0.3], INFO)
    assert entry["samples"] == pytest.approx([2.0, 3.0, 3.0])
    assert entry["unit"] == "x" and entry["direction"] == "lower" and entry["info"] == INFO
    with pytest.raises(ValueError):
        ratio_case("tracker.status_vs_python", {}, [0.2, 0.3], [0.1], INFO)  # a lost round is an error, not a shift
    assert ms_case("python.pass_ms", {}, [0.02, 0.5], {})["samples"] == [20.0, 500.0]


def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo", {"src/a.py": "A = 1\n", "docs/x.md": "# X\n", ".gitignore": ".tracker/cache/\n"}
    )


def test_the_stats_are_the_trackers_p90_numpys_linear_interpolation(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cases = [ms_case("python.pass_ms", {}, [0.001, 0.002, 0.003, 0.004, 0.010], INFO)]
    path = write_result(cases, tmp_path / "out", "test", "tracker_speed", ["src/**"], root=root)
    stats = json.loads(path.read_text())["cases"][0]["stats"]
    assert stats == {"n": 5, "median": 3.0, "min": 1.0, "mean": 4.0, "p90": pytest.approx(7.6)}
    assert load_result(path).cases  # the validator agrees


def test_dirty_is_the_measured_files_or_the_whole_trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    monkeypatch.delenv("TRACKER_DIRTY", raising=False)
    root = repo(tmp_path)
    cases = [ms_case("python.pass_ms", {}, [0.02], INFO)]

    def dirty(scope: str) -> object:
        path = write_result(cases, tmp_path / "out", "test", "tracker_speed", ["src/**"], scope, root)  # type: ignore[arg-type]
        return json.loads(path.read_text())["provenance"]["dirty"]

    assert (dirty("measured"), dirty("tree")) == (False, False)
    (root / "docs/x.md").write_text("# X, edited\n")  # not measured
    assert (dirty("measured"), dirty("tree")) == (False, True)
    (root / "src/b.py").write_text("B = 1\n")  # measured, untracked
    assert dirty("measured") is True
    commit_all(root, "b")
    (root / "src/a.py").write_text("A = 2\n")  # measured, modified
    assert dirty("measured") is True
    monkeypatch.setenv("TRACKER_COMMIT", "a" * 40)
    monkeypatch.setenv("TRACKER_DIRTY", "0")  # a copy of the tree on another machine: the environment's word wins
    assert dirty("measured") is False


def test_the_command_recorded_is_the_scripts_and_its_arguments() -> None:
    assert (
        command_line("bench/plan_tracker/speed.py", ["--quick", "--out", "x"])
        == "python bench/plan_tracker/speed.py --quick --out x"
    )
    assert command_line("bench/plan_tracker/verdict_noise.py", []) == "python bench/plan_tracker/verdict_noise.py"
