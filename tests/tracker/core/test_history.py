"""A phase walked through planned -> in-progress -> done -> stale -> done -> regressed in a real git repo,
with real nested pytest runs, then ``tracker check`` and ``tracker gc`` over the resulting history."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from evidence_repo import CHECKOUT, call, commit_all, make_repo, phase_block, plan_text, statuses
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.base.file_index import FileIndex
from tracker.core.model import GateVerdict, Phase, Plan, Status, Store, TestGate, TestRun
from tracker.core.pruning import needed, settle, superseded
from tracker.core.status import compute

LIB_OK = "def add(a, b):\n    return a + b\n"
TESTS = "from src.lib import add\n\ndef test_add():\n    assert add(2, 2) == 4\n\ndef test_zero():\n    assert add(0, 0) == 0\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The nested pytest must import tracker.pytest_plugin from this checkout.
    monkeypatch.setenv("PYTHONPATH", str(CHECKOUT))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plan = plan_text("0001", [
        phase_block("P1", ["src/**"], ['test = "tests/test_lib.py::test_add"', 'test = "tests/test_lib.py::test_zero"']),
        phase_block("P2", ["other/**"], ['test = "tests/test_other.py"'], depends=["P1"]),
    ])  # fmt: skip
    return make_repo(tmp_path, {
        "plans/0001-lib.md": plan,
        "src/__init__.py": "",
        "src/lib.py": "def add(a, b):\n    return a - b if a else 0\n",  # test_zero passes, test_add fails
        "tests/test_lib.py": TESTS,
        "tests/test_other.py": "def test_other():\n    pass\n",
        "conftest.py": "",
        ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n",
    })  # fmt: skip


def state(root: Path, key: str = "0001/P1") -> Status:
    return statuses(root)[key].status


def test_phase_walk_through_every_state(repo: Path) -> None:
    assert state(repo) is Status.PLANNED
    assert state(repo, "0001/P2") is Status.BLOCKED and statuses(repo)["0001/P2"].blocked_by == ("0001/P1",)

    code, out = call("verify", repo, ["0001/P1"])
    assert code == 1, out
    st = statuses(repo)["0001/P1"]
    assert st.status is Status.IN_PROGRESS
    assert not st.verdicts[0].met and st.verdicts[0].failed and st.verdicts[0].reason.endswith("failed: assert 0 == 4")
    assert st.verdicts[1].met

    (repo / "src/lib.py").write_text(LIB_OK)
    commit_all(repo, "fix add")
    assert call("verify", repo, ["0001/P1"])[0] == 0
    assert state(repo) is Status.DONE
    assert call("check", repo)[0] == 1  # plan regions not yet written
    assert call("update", repo)[0] == 0
    commit_all(repo, "evidence")  # check names evidence a status rests on that git does not track
    assert call("check", repo) == (0, "tracker check: no regressions, plan files up to date\n")

    (repo / "src/lib.py").write_text(LIB_OK + "\nEXTRA = 1  # code changes the blob (a comment alone would not)\n")
    st = statuses(repo)["0001/P1"]
    assert st.status is Status.STALE and st.changed == ("src/lib.py",) and "src/lib.py" in st.note
    assert state(repo, "0001/P2") is Status.BLOCKED  # a stale dependency is not done

    assert call("verify", repo, ["0001/P1"])[0] == 0
    assert state(repo) is Status.DONE

    (repo / "src/lib.py").write_text("def add(a, b):\n    return 5\n")  # breaks both tests
    assert call("verify", repo, ["0001/P1"])[0] == 1
    assert state(repo) is Status.REGRESSED
    call("update", repo)
    commit_all(repo, "the failing run")
    code, out = call("check", repo)
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("0001/P1: regressed: gate 1: ") and "failed: assert 5 == 4 (.tracker/evidence/" in first
    assert "tracker check: 2 problem(s)" in out


def test_gates_met_at_different_times_but_never_together_are_not_a_regression(repo: Path) -> None:
    (repo / "src/lib.py").write_text("def add(a, b):\n    return a + b if a else 1\n")  # add passes, zero fails
    call("verify", repo, ["0001/P1"])
    (repo / "src/lib.py").write_text("def add(a, b):\n    return 0\n")  # zero passes, add fails
    call("verify", repo, ["0001/P1"])
    st = statuses(repo)["0001/P1"]
    assert [v.met for v in st.verdicts] == [False, True] and st.verdicts[0].failed
    assert st.status is Status.IN_PROGRESS  # each gate was met once, the phase never was done
    (repo / "src/lib.py").write_text(LIB_OK)
    call("verify", repo, ["0001/P1"])
    (repo / "src/lib.py").write_text("def add(a, b):\n    return 0\n")
    call("verify", repo, ["0001/P1"])
    assert state(repo) is Status.REGRESSED  # now it was done once


def test_a_gate_never_met_is_not_regressed(repo: Path) -> None:
    call("verify", repo, ["0001/P1"])
    assert state(repo) is Status.IN_PROGRESS
    assert call("check", repo)[1].count("regressed") == 0


def test_gc_prunes_superseded_runs_and_keeps_status(repo: Path) -> None:
    (repo / "src/lib.py").write_text(LIB_OK)
    for _ in range(3):
        call("verify", repo, ["0001/P1"], force=True)
    call("verify", repo, ["0001/P2"])
    (repo / "src/lib.py").write_text("def add(a, b):\n    return 5\n")
    call("verify", repo, ["0001/P1"])
    store = repo / ".tracker/evidence"
    before_files = sorted(p.name for p in store.glob("*.json"))
    before = {k: (v.status, [x.reason for x in v.verdicts]) for k, v in statuses(repo).items()}
    assert before["0001/P1"][0] is Status.REGRESSED and len(before_files) == 5

    code, out = call("gc", repo, dry_run=True)
    assert code == 0 and sorted(p.name for p in store.glob("*.json")) == before_files
    assert "would delete" in out

    code, out = call("gc", repo)
    assert code == 0, out
    after_files = sorted(p.name for p in store.glob("*.json"))
    # Kept: the newest P1 run (failures), the newest passing P1 run (history), the P2 run, and the first P1 run
    # (it made P1 done: `tracker log` names it); the second of the three passing P1 runs goes.
    assert len(after_files) == 4 and before_files[1] not in after_files, out
    assert {k: (v.status, [x.reason for x in v.verdicts]) for k, v in statuses(repo).items()} == before
    assert call("gc", repo)[1].endswith("0 superseded file(s) deleted, 4 kept\n")


def test_incremental_verify_skips_fresh_gates(repo: Path) -> None:
    (repo / "src/lib.py").write_text(LIB_OK)
    assert call("verify", repo, ["0001/P1"])[0] == 0
    store = repo / ".tracker/evidence"
    assert len(list(store.glob("*.json"))) == 1
    code, out = call("verify", repo, ["0001/P1"])
    assert code == 0 and "2 test gate(s) up to date with their evidence, not re-run" in out
    assert "met   0001/P1#1" in out and len(list(store.glob("*.json"))) == 1
    # A changed test file makes its gate run again; the other gate's test file is the same file here.
    (repo / "tests/test_lib.py").write_text(TESTS + "\n")
    code, out = call("verify", repo, ["0001/P1"])
    assert code == 0 and "not re-run" not in out and len(list(store.glob("*.json"))) == 2
    # --force re-runs even fresh gates.
    code, out = call("verify", repo, ["0001/P1"], force=True)
    assert code == 0 and "not re-run" not in out and len(list(store.glob("*.json"))) == 3


def test_gc_drops_interrupted_runs(repo: Path) -> None:
    (repo / "src/lib.py").write_text(LIB_OK)
    call("verify", repo, ["0001/P1"])
    broken = repo / ".tracker/evidence/20000101T000000000000Z-x-verify-abcdef.json"
    broken.write_text(
        json.dumps(
            {
                "schema": "tracker-test-run",
                "version": 1,
                "status": "interrupted",
                "provenance": {"time": "2000-01-01T00:00:00Z"},
            }
        )
    )
    code, out = call("gc", repo)
    assert code == 0 and f"deleted .tracker/evidence/{broken.name}" in out and not broken.exists()
    assert state(repo) is Status.DONE


SEG = "import os\n\ndef test_kernel():\n    if os.environ.get('CRASH'):\n        os._exit(139)\n"


def test_a_test_that_crashes_the_interpreter_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.errors import InterruptedRunError

    monkeypatch.setenv("PYTHONPATH", str(CHECKOUT))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plan = plan_text("0001", [phase_block("P1", ["tests/**"], ['test = "tests/test_seg.py"'])])
    root = make_repo(
        tmp_path,
        {"plans/0001-seg.md": plan, "tests/test_seg.py": SEG, ".gitignore": ".tracker/cache/\n.tracker/lock\n"},
    )
    assert call("verify", root, [])[0] == 0 and state(root) is Status.DONE
    monkeypatch.setenv("CRASH", "1")
    with pytest.raises(InterruptedRunError, match=re.escape("crashed while running tests/test_seg.py::test_kernel")):
        call("verify", root, [], force=True)
    st = statuses(root)["0001/P1"]
    assert st.status is Status.REGRESSED
    assert (
        st.verdicts[0].reason
        == "tests/test_seg.py::test_kernel: error: crashed: the pytest process died while this test ran"
    )
    code, out = call("check", root)
    assert code == 1 and "0001/P1: regressed: gate 1: tests/test_seg.py::test_kernel: error: crashed" in out
    monkeypatch.delenv("CRASH")
    code, out = call("verify", root, [])
    assert code == 0 and "not re-run" not in out and "met   0001/P1#1 tests/test_seg.py: 1 passed" in out
    assert state(root) is Status.DONE


def test_a_run_still_in_progress_names_no_crash(tmp_path: Path) -> None:
    import os
    import socket

    plan = plan_text("0001", [phase_block("P1", [], ['test = "tests/test_seg.py"'])])
    root = make_repo(tmp_path, {"plans/0001-seg.md": plan, "tests/test_seg.py": SEG})
    evidence = root / ".tracker/evidence"
    evidence.mkdir(parents=True)
    running = {"nodeid": "tests/test_seg.py::test_kernel", "markers": [], "pid": os.getpid()}  # this process: alive
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # it started before its run: it is that run's process
    doc = {"schema": "tracker-test-run", "version": 1, "status": "incomplete", "running": running, "gates": {}, "files": {}, "tests": [],
           "provenance": {"time": now, "host": socket.gethostname(), "commit": None, "args": ["tests"]}}  # fmt: skip
    (evidence / "live.json").write_text(json.dumps(doc))
    assert statuses(root)["0001/P1"].verdicts[0].reason == "no evidence: never run"
    doc["provenance"]["host"] = "gpu-box"  # copied from another machine: its process is over
    (evidence / "live.json").write_text(json.dumps(doc))
    assert (
        statuses(root)["0001/P1"]
        .verdicts[0]
        .reason.endswith("error: crashed: the pytest process died while this test ran")
    )


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="process start times come from /proc (Linux)")
def test_a_run_whose_pid_a_later_process_took_is_a_crash(tmp_path: Path) -> None:
    """A record without the process's start (an older plugin) names only a pid: a live process of that pid that
    started well after the run began is not the run's (the kernel recycled the pid), so the run crashed."""
    import socket
    import subprocess
    import sys

    plan = plan_text("0001", [phase_block("P1", [], ['test = "tests/test_seg.py"'])])
    root = make_repo(tmp_path, {"plans/0001-seg.md": plan, "tests/test_seg.py": SEG})
    evidence = root / ".tracker/evidence"
    evidence.mkdir(parents=True)
    later = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # started now
    try:
        hour_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
        running = {"nodeid": "tests/test_seg.py::test_kernel", "markers": [], "pid": later.pid}
        doc = {"schema": "tracker-test-run", "version": 1, "status": "incomplete", "running": running, "gates": {},
               "files": {}, "tests": [],
               "provenance": {"time": hour_ago, "host": socket.gethostname(), "commit": None, "args": ["tests"]}}  # fmt: skip
        (evidence / "old.json").write_text(json.dumps(doc))
        reason = statuses(root)["0001/P1"].verdicts[0].reason
        assert reason.endswith("error: crashed: the pytest process died while this test ran"), reason
    finally:
        later.kill()
        later.wait()


TESTS_IN_FUZZ = ["t/a.py::x", "t/a.py::y", "t/b.py::z"]
outcome = st.sampled_from(["passed", "failed", "skipped", "error", None])


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(outcome, outcome, outcome), min_size=1, max_size=8))
def test_gc_keep_set_never_changes_any_status(history: list[tuple[str | None, str | None, str | None]]) -> None:
    """Whatever the run history, the files ``needed`` keeps give every phase the same status and verdicts."""
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(
        Phase("P1", "a", gates=(TestGate(test="t/a.py::x"), TestGate(test="t/b.py"))),
        Phase("P2", "b", depends=("P1",), gates=(TestGate(test="t/a.py"),)),
        Phase("P3", "c", gates=(TestGate(test="t/a.py::y"),)),
    ))]  # fmt: skip
    runs = [
        TestRun(f".tracker/evidence/{i:02d}.json", {"time": f"2026-11-29T10:{i:02d}:00Z", "host": "h"}, {}, {},
                [{"nodeid": n, "outcome": o, "reason": ""} for n, o in zip(TESTS_IN_FUZZ, outcomes, strict=False) if o is not None])
        for i, outcomes in enumerate(history)
    ]  # fmt: skip
    store = Store(runs=runs)

    def view(s: Store, _results: object = ()) -> dict[str, object]:
        out = compute(plans, s, lambda: FileIndex({}), lambda: lambda g: GateVerdict(False, "none"))
        return {k: (v.status, [(x.met, x.failed, x.reason, x.source) for x in v.verdicts]) for k, v in out.items()}

    keep = settle(store, needed(plans, store), [], view)
    pruned = Store(runs=[r for r in runs if r.file in keep.why])
    assert view(pruned) == view(store)
    assert superseded(store, keep) == sorted(r.file for r in runs if r.file not in keep.why)


@pytest.mark.parametrize("signed_at", ["2026-11-29T10:00:00Z", "2026-11-29T15:00:00+05:00", "2026-11-29T10:00:00.250Z"])
def test_a_signoff_is_replayed_at_its_utc_time_whatever_its_offset(signed_at: str) -> None:
    """Test passed at 09:00Z, signed off at 10:00Z (however the sign-off writes that time), failed at 12:00Z: all
    gates were met together at 10:00Z, so the phase regressed. Ordered as text, "15:00:00+05:00" would come after
    12:00Z and the phase would wrongly read as never done (in-progress), while `tracker log` (timeline) says
    regressed."""
    from tracker.core.model import ManualGate, gate_hash

    gates = (TestGate(test="t/a.py::x"), ManualGate(manual="Reviewed"))
    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(Phase("P1", "a", gates=gates),))]
    runs = [
        TestRun(f".tracker/evidence/{t}.json", {"time": f"2026-11-29T{t}:00:00Z", "host": "h"}, {}, {},
                [{"nodeid": "t/a.py::x", "outcome": outcome, "reason": ""}])
        for t, outcome in (("09", "passed"), ("12", "failed"))
    ]  # fmt: skip
    signoff = {"schema": "tracker-signoff", "version": 1, "time": signed_at, "gate_key": "0001/P1#2",
               "gate_hash": gate_hash(gates[1]), "manual": "Reviewed", "by": "me", "why": "read it", "host": "h"}  # fmt: skip
    store = Store(runs=runs, signoffs=[(".tracker/evidence/s.json", signoff)])
    out = compute(plans, store, lambda: FileIndex({}), lambda: lambda g: GateVerdict(False, "none"))
    assert out["0001/P1"].status is Status.REGRESSED


def test_gc_keeps_every_status_transition_log_and_report_read_the_same(tmp_path: Path, cli) -> None:
    """The report fixture's history: 0001/P1 done, regressed, done again; 0002/P1 planned -> in-progress -> done by
    a sign-off and two runs. gc used to delete r1 (the first pass) and r3 (the failure): ``tracker log`` lost the
    regression episode and gave 11-05 as P1's "done" date, and the committed milestone report was out of date."""
    import report_fixture

    root = report_fixture.build(tmp_path / "repo")
    store = root / ".tracker/evidence"
    again = json.loads((store / "20261106T100000Z-ci-box-r3.json").read_text())  # the same failure an hour later
    again["provenance"]["time"] = "2026-11-06T11:00:00Z"
    (store / "20261106T110000Z-ci-box-r3b.json").write_text(json.dumps(again))  # superseded: no status moves
    out = str(root / "plans/reports/v1.md")
    assert cli(root, "report", "--milestone", "v1", "--format", "md", "--out", out).code == 0
    report_fixture.git(root, "add", "plans/reports", ".tracker/evidence")
    report_fixture.git(root, "commit", "-q", "-m", "the milestone report")
    commands = [["log", "0001", "0002"], ["log", "--json", "0001", "0002"], ["report", "--format", "md"],
                ["report", "--milestone", "v1", "--format", "md"], ["show", "0001/P1"]]  # fmt: skip
    before = [cli(root, *c) for c in commands]
    assert "done -> regressed" in before[0].out and "2026-11-02T10:00:00Z  planned -> done" in before[0].out
    files = sorted(p.name for p in store.glob("*.json"))

    dry = cli(root, "gc", "--dry-run")
    assert dry.code == 0 and "would delete .tracker/evidence/20261106T110000Z-ci-box-r3b.json\nkeep" in dry.out
    assert (
        "keep .tracker/evidence/20261106T100000Z-ci-box-r3.json: status history: 0001/P1 done -> regressed" in dry.out
    )
    r = cli(root, "gc")
    assert r.code == 0 and r.out.endswith("tracker gc: 1 superseded file(s) deleted, 5 kept\n"), r.out
    assert sorted(p.name for p in store.glob("*.json")) == [f for f in files if "r3b" not in f]
    for command, was in zip(commands, before, strict=True):
        assert cli(root, *command) == was, command
    problems = json.loads(cli(root, "check", "--json").out)["problems"]
    assert not [p for p in problems if p["path"] == "plans/reports/v1.md"], problems


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(outcome, outcome, outcome), min_size=1, max_size=10))
def test_gc_keep_set_never_changes_any_timeline(history: list[tuple[str | None, str | None, str | None]]) -> None:
    """Whatever the run history, what gc keeps (``needed``, then ``settle`` on statuses and timelines, as
    ``tracker gc`` does) replays to the same transitions: ``tracker log`` and reports read the same after gc."""
    from tracker.core.pruning import first_difference
    from tracker.core.timeline import replay

    plans = [Plan("0001", "p", "plans/0001-p.md", phases=(
        Phase("P1", "a", gates=(TestGate(test="t/a.py::x"), TestGate(test="t/b.py"))),
        Phase("P2", "b", depends=("P1",), gates=(TestGate(test="t/a.py"),)),
        Phase("P3", "c", gates=(TestGate(test="t/a.py::y"), TestGate(test="t/b.py::z"))),
    ))]  # fmt: skip
    runs = [
        TestRun(f".tracker/evidence/{i:02d}.json", {"time": f"2026-11-29T10:{i:02d}:00Z", "host": "h"}, {}, {},
                [{"nodeid": n, "outcome": o, "reason": ""} for n, o in zip(TESTS_IN_FUZZ, outcomes, strict=False) if o is not None])
        for i, outcomes in enumerate(history)
    ]  # fmt: skip
    store = Store(runs=runs)

    def view(s: Store, _results: object = ()) -> object:
        out = compute(plans, s, lambda: FileIndex({}), lambda: lambda g: GateVerdict(False, "none"))
        return {
            k: (v.status, [(x.met, x.failed, x.reason, x.source) for x in v.verdicts]) for k, v in out.items()
        }, replay(plans, s)

    keep = needed(plans, store)
    every_transition = {t.file for ts in replay(plans, store).values() for t in ts}
    assert every_transition <= keep.why.keys()
    keep = settle(store, keep, [], view, since=lambda a, b: first_difference(a[1], b[1]))
    pruned = Store(runs=[r for r in runs if r.file in keep.why])
    assert replay(plans, pruned) == replay(plans, store)
    assert view(pruned) == view(store)
