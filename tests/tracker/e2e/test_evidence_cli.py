"""The evidence commands through the real CLI: exit codes, messages, and plain ``pytest --tracker-record``."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from evidence_repo import CHECKOUT, git, make_repo, phase_block, plan_text
from resultfiles import case, result, write

PLAN = plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/test_a.py"'])])


def tracker(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = f"from tracker.cli import main; main({list(args)!r})"
    env = {
        **os.environ,
        "PYTHONPATH": str(CHECKOUT),
        "COLUMNS": os.environ.get("COLUMNS", "1000"),
    }  # status lines whole
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {
        "plans/0001-a.md": PLAN, "src/a.py": "X = 1\n", "conftest.py": "",
        "tests/test_a.py": "from src.a import X\n\ndef test_x():\n    assert X == 1\n",
        ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n",
    })  # fmt: skip


def one_test_gate(repo: Path) -> None:
    """The plan's gate names its one test by node id: an ingested run (no arguments recorded) meets such a gate,
    never a file gate no run collected whole (adv F3)."""
    (repo / "plans/0001-a.md").write_text(
        plan_text("0001", [phase_block("P1", ["src/**"], ['test = "tests/test_a.py::test_x"'])])
    )


def test_ingest_rejects_bad_files_with_exit_8_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    good = write(tmp_path / "good.json", result([case("m", {"k": 1}, [1.0, 2.0])]))
    bad = write(tmp_path / "bad.json", {**result([case("m", {"k": 1}, [1.0])]), "version": 2})
    proc = tracker(repo, "ingest", str(good), str(bad))
    assert proc.returncode == 8
    assert proc.stderr == f"tracker: error: {bad}: unsupported version 2 (this tracker reads version 1)\n"
    assert not (repo / ".tracker/evidence").exists()
    proc = tracker(repo, "ingest", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 8 and "missing.jsonl: cannot read" in proc.stderr
    (tmp_path / "notes.txt").write_text("hello")
    proc = tracker(repo, "ingest", str(tmp_path / "notes.txt"))
    assert (
        proc.returncode == 8
        and "not a pytest reportlog, JUnit XML, tracker evidence or benchmark result file" in proc.stderr
    )
    proc = tracker(repo, "ingest", str(good), "--commit", "nope")
    assert proc.returncode == 0  # --commit only matters for test runs


def test_ingest_unknown_commit_is_a_usage_error(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "r.xml").write_text(
        '<testsuites><testsuite name="pytest" timestamp="2026-11-29T11:00:00+00:00"><testcase classname="tests.test_a" '
        'name="test_x" file="tests/test_a.py" time="0.1"/></testsuite></testsuites>'
    )
    proc = tracker(repo, "ingest", str(tmp_path / "r.xml"), "--commit", "deadbeef")
    assert proc.returncode == 3 and "--commit deadbeef: not a commit of this repository" in proc.stderr
    one_test_gate(repo)
    proc = tracker(repo, "ingest", str(tmp_path / "r.xml"), "--host", "ci-runner", "--commit", "HEAD")
    assert proc.returncode == 0, proc.stderr
    proc = tracker(repo, "ingest", str(tmp_path / "r.xml"), "--host", "ci-runner", "--commit", "HEAD")
    assert proc.returncode == 0 and "already in the store, skipped" in proc.stdout
    assert len(list((repo / ".tracker/evidence").glob("*.json"))) == 1
    data = json.loads(tracker(repo, "status", "--json").stdout)
    [gate] = data["plans"][0]["phases"][0]["gates"]
    assert data["plans"][0]["phases"][0]["status"] == "done"
    assert "ci-runner" in json.dumps(gate)


def test_schema_results_prints_the_json_schema(repo: Path) -> None:
    proc = tracker(repo, "schema", "--results")
    assert proc.returncode == 0
    schema = json.loads(proc.stdout)
    assert schema["$id"] == "tracker-bench-result/v1" and "provenance" in schema["properties"]


def test_plain_pytest_tracker_record_is_honored_then_check_and_gc(repo: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tracker.pytest_plugin", "tests", "--tracker-record"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(tracker(repo, "status", "--json").stdout)
    assert data["plans"][0]["phases"][0]["status"] == "done"
    proc = tracker(repo, "check")
    assert (
        proc.returncode == 1 and "plans/0001-a.md: generated regions out of date (run `tracker update`)" in proc.stdout
    )
    assert tracker(repo, "update").returncode == 0
    proc = tracker(repo, "check")  # the run the status rests on is not added yet: a warning, not a failure
    assert proc.returncode == 0 and "warning: .tracker/evidence/" in proc.stdout and "(never added)" in proc.stdout
    git(repo, "add", ".tracker/evidence")
    proc = tracker(repo, "check")
    assert (proc.returncode, proc.stdout) == (0, "tracker check: no regressions, plan files up to date\n")
    proc = tracker(repo, "gc", "--dry-run")
    assert (
        proc.returncode == 0
        and "keep .tracker/evidence/" in proc.stdout
        and "0 superseded file(s) to delete, 1 kept" in proc.stdout
    )


def test_ingest_plugin_evidence_recorded_on_a_machine_without_git(repo: Path, tmp_path: Path) -> None:
    # The "GPU machine": a copy of the tree without .git; commit comes from TRACKER_COMMIT.
    remote = tmp_path / "remote"
    shutil.copytree(repo, remote, ignore=shutil.ignore_patterns(".git", ".tracker"))
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {
        **os.environ,
        "PYTHONPATH": str(CHECKOUT),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "TRACKER_COMMIT": head,
        "TRACKER_DIRTY": "0",
    }
    out_dir = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tracker.pytest_plugin", "tests", f"--tracker-record={out_dir}"],
        cwd=remote,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [recorded] = list(out_dir.glob("*.json"))
    proc = tracker(repo, "ingest", str(recorded))
    assert proc.returncode == 0, proc.stderr
    assert "1 test(s) from " in proc.stdout and ", complete" in proc.stdout
    [stored] = list((repo / ".tracker/evidence").glob("*.json"))
    assert stored.read_bytes() == recorded.read_bytes()
    phase = json.loads(tracker(repo, "status", "--json").stdout)["plans"][0]["phases"][0]
    assert phase["status"] == "done" and phase["gates"][0]["source"]["commit"] == head
    # A broken evidence file is refused with path: reason.
    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps(
            {"schema": "tracker-test-run", "version": 1, "status": "done", "provenance": {}, "tests": [], "files": {}}
        )
    )
    proc = tracker(repo, "ingest", str(broken))
    assert proc.returncode == 8
    assert proc.stderr == (
        f"tracker: error: {broken}: status 'done' is not complete, interrupted or incomplete; "
        "provenance.time None is not an ISO-8601 time with a time zone; provenance.host is missing (a string)\n"
    )


EXAMPLE = "```markdown\n<!-- tracker:begin phase:P1 -->\n...\n<!-- tracker:end phase:P1 sum=0123456789ab -->\n```\n\n"


def test_region_markers_inside_fenced_code_are_prose(tmp_path: Path) -> None:
    text = plan_text("0003", [EXAMPLE + phase_block("P1", [], ['manual = "ok"']) + "\nAfter.\n"])
    root = make_repo(tmp_path / "repo", {"plans/0003-doc.md": text, "tests/.keep": ""})
    proc = tracker(root, "update")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = (root / "plans/0003-doc.md").read_text()
    assert EXAMPLE in out  # the example is untouched, and the status block follows the phase block
    assert out.index("```\n<!-- tracker:begin phase:P1 -->\n\n**Status: planned**") > out.index("```phase")
    assert out.endswith("-->\n\nAfter.\n")
    for args in (["update", "--force"], ["update"]):
        proc = tracker(root, *args)
        assert (proc.returncode, proc.stdout) == (0, "updated 0 plan file(s)\n")
        assert (root / "plans/0003-doc.md").read_text() == out


def test_a_region_left_behind_by_reordered_phases_moves_back_after_its_block(tmp_path: Path) -> None:
    p1, p2 = phase_block("P1", [], ['manual = "one"']), phase_block("P2", [], ['manual = "two"'])
    root = make_repo(tmp_path / "repo", {"plans/0001-a.md": plan_text("0001", [p1, p2]), "tests/.keep": ""})
    assert tracker(root, "update").returncode == 0
    before = (root / "plans/0001-a.md").read_text()
    reordered = before.replace(p2, "").replace(p1, p2 + p1)  # P2's block moved up, its region stayed behind
    (root / "plans/0001-a.md").write_text(reordered)
    proc = tracker(root, "update")
    assert proc.returncode == 0, proc.stderr
    after = (root / "plans/0001-a.md").read_text()
    for pid in ("P1", "P2"):
        assert after.count(f"<!-- tracker:begin phase:{pid} -->") == 1
        assert f'title = "Phase {pid}"\n' + "paths = []\n\n[[gate]]\n" in after
        block_end = after.index("```\n", after.index(f'id = "{pid}"')) + 4
        assert after[block_end:].startswith(f"<!-- tracker:begin phase:{pid} -->")
    assert tracker(root, "update", "--check").returncode == 0


def test_bad_lock_timeout_exits_3_with_a_message(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_LOCK_TIMEOUT", "abc")
    proc = tracker(repo, "update")
    assert (proc.returncode, proc.stderr) == (
        3,
        "tracker: error: TRACKER_LOCK_TIMEOUT='abc': expected a number of seconds >= 0\n",
    )


def test_first_use_ignores_the_cache_and_lock_in_git_and_files_get_the_umask_mode(tmp_path: Path) -> None:
    manual = plan_text("0001", [phase_block("P1", [], ['manual = "ok"'])])
    root = make_repo(tmp_path / "repo", {"plans/0001-a.md": manual, "tests/.keep": ""})
    old = os.umask(0o022)
    try:
        assert tracker(root, "new", "Second plan").returncode == 0
        assert tracker(root, "update").returncode == 0
        assert tracker(root, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "read it").returncode == 0
    finally:
        os.umask(old)
    assert (root / ".tracker/.gitignore").read_text().splitlines()[1:] == ["cache/", "lock"]
    untracked = git(root, "status", "--porcelain", "--untracked-files=all").split("\n")
    assert not [s for s in untracked if "/cache/" in s or s.endswith("/lock")]
    created = [p for p in (root / "plans").iterdir() if p.name != "0001-a.md"]
    assert created and all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in [*created, root / "plans/0001-a.md"])
    written = [p for p in (root / ".tracker").rglob("*") if p.is_file() and p.name != "lock"]
    assert any(p.parent.name == "evidence" for p in written)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in written), [(p, oct(p.stat().st_mode)) for p in written]


def test_check_lists_a_hand_edited_region_among_the_other_problems(repo: Path, tmp_path: Path) -> None:
    (repo / "plans/0002-b.md").write_text(plan_text("0002", [phase_block("P1", [], ['manual = "ok"'])]))
    assert tracker(repo, "update").returncode == 0
    plan = repo / "plans/0001-a.md"
    plan.write_text(plan.read_text().replace("**Status: ", "**Status (edited): "))
    (repo / "plans/0002-b.md").write_text(
        (repo / "plans/0002-b.md").read_text() + "\n" + phase_block("P2", [], ['manual = "x"'])
    )
    write(repo / "bench/results/bad.json", {**result([case("m", {"k": 1}, [1.0])]), "version": 2})
    proc = tracker(repo, "check")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "tracker check: 3 problem(s)"
    assert any(
        s.startswith("plans/0001-a.md:") and "generated region 'phase:P1' was edited by hand" in s for s in lines
    )
    assert "plans/0002-b.md: generated regions out of date (run `tracker update`)" in lines
    assert any("bad.json" in s and "unsupported version 2" in s for s in lines)


def test_pre_commit_update_check_hook_runs_on_every_commit() -> None:
    hooks = {
        h.split("\n", 1)[0].strip(): h for h in (CHECKOUT / ".pre-commit-hooks.yaml").read_text().split("- id:")[1:]
    }
    update = hooks["tracker-update-check"]
    assert "\n  entry: tracker update --check\n" in update
    assert "\n  always_run: true\n" in update and "\n  files:" not in update  # covered code changes make phases stale


def test_an_unreadable_file_in_the_store_is_shown_on_gates_not_fatal(tmp_path: Path) -> None:
    bench = 'bench = "m"\nwhere = { k = 1 }\nat_most = 5'
    plan = plan_text(
        "0001", [phase_block("P1", ["src/**"], ['test = "tests/test_a.py"']), phase_block("P2", [], [bench])]
    )
    repo = make_repo(tmp_path / "repo", {
        "plans/0001-a.md": plan, "src/a.py": "X = 1\n", "conftest.py": "",
        "tests/test_a.py": "from src.a import X\n\ndef test_x():\n    assert X == 1\n",
        ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n",
    })  # fmt: skip
    assert tracker(repo, "verify", "0001/P1").returncode == 0
    assert (
        tracker(repo, "ingest", str(write(tmp_path / "r.json", result([case("m", {"k": 1}, [1.0, 2.0])])))).returncode
        == 0
    )
    store = repo / ".tracker/evidence"
    [local] = [p for p in store.glob("*.json") if "verify" in p.name]
    [stored_result] = [p for p in store.glob("*.json") if "bench" in p.name]

    def gates() -> list[tuple[str, str]]:
        proc = tracker(repo, "status", "--json")
        assert proc.returncode == 0, proc.stderr
        return [(ph["status"], ph["gates"][0]["reason"]) for ph in json.loads(proc.stdout)["plans"][0]["phases"]]

    before = gates()
    assert [r.split(" ")[0] for _, r in before] == ["1", "1.50"]  # "1 passed", "1.50 us ≤ 5.00 us"
    truncated = store / "zzz.json"
    truncated.write_bytes(local.read_bytes()[:100])
    reason = "invalid evidence file, fix or remove it: .tracker/evidence/zzz.json: not a readable evidence file: "
    assert [(s, r[: len(reason)]) for s, r in gates()] == [("planned", reason)] * 2
    proc = tracker(repo, "status")
    assert (
        proc.returncode == 0
        and "gate 1: invalid evidence file, fix or remove it: .tracker/evidence/zzz.json" in proc.stdout
    )
    proc = tracker(repo, "check")
    assert proc.returncode == 1
    assert [ln for ln in proc.stdout.splitlines() if "zzz.json" in ln] == [
        ln for ln in proc.stdout.splitlines() if ln.startswith(reason)
    ]
    assert len([ln for ln in proc.stdout.splitlines() if "zzz.json" in ln]) == 1
    assert tracker(repo, "update").returncode == 0
    proc = tracker(repo, "gc")  # pruning needs every file: it refuses, naming the file
    assert proc.returncode == 8 and "zzz.json: not a readable evidence file" in proc.stderr and truncated.exists()

    # A truncated result file is listed once by check (not also as an invalid result file).
    truncated.write_bytes(stored_result.read_bytes()[:-40])
    proc = tracker(repo, "check")
    assert proc.returncode == 1 and len([ln for ln in proc.stdout.splitlines() if "zzz.json" in ln]) == 1
    # Files that parse but are not evidence, or whose time cannot be placed, are invalid too.
    truncated.write_text("{}")
    assert (
        gates()[0][1]
        == "invalid evidence file, fix or remove it: .tracker/evidence/zzz.json: not a tracker evidence file (schema None)"
    )
    doc = json.loads(local.read_text())
    doc["provenance"]["time"] = "yesterday"
    truncated.write_text(json.dumps(doc))
    second = store / "zzz2.json"
    second.write_text("[]")
    assert gates()[0][1] == (
        "invalid evidence file, fix or remove it: .tracker/evidence/zzz.json: provenance.time 'yesterday' is not an ISO-8601 time with a time zone (+1 more)"
    )
    truncated.unlink()
    second.unlink()
    assert gates() == before


def test_ingested_reportlog_crash_counts_the_test_it_died_in(repo: Path, tmp_path: Path) -> None:
    """A reportlog that ends inside a test (no SessionFinish: the process died, e.g. killed for memory on the
    GPU machine) counts that one test as an error, as the plugin's own crashed runs do: a done phase regresses."""
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests",
            "--report-log",
            str(tmp_path / "ok.jsonl"),
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    one_test_gate(repo)
    assert tracker(repo, "ingest", str(tmp_path / "ok.jsonl"), "--host", "gpu-box").returncode == 0
    assert json.loads(tracker(repo, "status", "--json").stdout)["plans"][0]["phases"][0]["status"] == "done"
    records = [
        {"$report_type": "SessionStart", "pytest_version": "9.0.0"},
        {
            "$report_type": "TestReport",
            "nodeid": "tests/test_a.py::test_x",
            "location": ["tests/test_a.py", 2, "test_x"],
            "keywords": {"test_x": 1},
            "outcome": "passed",
            "longrepr": None,
            "when": "setup",
            "user_properties": [],
            "sections": [],
            "duration": 0.001,
            "start": time.time(),  # the run is dated by it: after the passing run above
            "stop": time.time() + 0.001,
        },
    ]
    crash = tmp_path / "crash.jsonl"
    crash.write_text("".join(json.dumps(r) + "\n" for r in records))
    proc = tracker(repo, "ingest", str(crash), "--host", "gpu-box")
    assert proc.returncode == 0, proc.stderr
    assert "only tests/test_a.py::test_x counts, as an error" in proc.stdout
    [stored] = [
        p
        for p in (repo / ".tracker/evidence").glob("*.json")
        if "crash" in json.loads(p.read_text())["provenance"]["command"]
    ]
    doc = json.loads(stored.read_text())
    assert doc["status"] == "incomplete" and doc["running"]["nodeid"] == "tests/test_a.py::test_x"
    phase = json.loads(tracker(repo, "status", "--json").stdout)["plans"][0]["phases"][0]
    assert phase["status"] == "regressed", phase
    assert "crashed" in phase["gates"][0]["reason"]
