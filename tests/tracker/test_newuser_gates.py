"""Gates as a new user meets them (issue 12): ingested JUnit XML and marker gates, empty gates are not
failures, `next` without plans, partly invalid plan sets, lint warnings. Real git repositories, real
nested pytest runs, the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tracker_testutil import git, make_files, phase, plan_text

from tracker.evidence import Store, TestRun
from tracker.model import TestGate
from tracker.testgate import TestIndex

CHECKOUT = Path(__file__).resolve().parents[2]

SLOW_TESTS = "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    assert {value} == 1\n\ndef test_fast():\n    pass\n"
MARKER_PLAN = plan_text("0001", phase("P1", 'test = "tests/slow"\nmarker = "slow"'))


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain pytest in ``root`` (no tracker plugin): what a CI machine runs."""
    env_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(env_cmd, cwd=root, capture_output=True, text=True, check=False)


def gate_json(cli: Callable[..., Any], root: Path, plan: int = 0, ph: int = 0) -> dict[str, Any]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)["plans"][plan]["phases"][ph]


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose marker phase ``0001/P1`` (``tests/slow -m slow``) a real ``tracker verify`` made done."""
    from tracker.cli import main

    root = tmp_path_factory.mktemp("verified") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_files(root, {
        "plans/0001-x.md": MARKER_PLAN,
        "tests/slow/test_s.py": SLOW_TESTS.format(value=1),
        "pytest.ini": "[pytest]\nmarkers =\n    slow: slow tests\n",
        ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.xml\n",
    })  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    with pytest.raises(SystemExit) as exc:
        main(["--root", str(root), "verify", "0001/P1"])
    assert exc.value.code in (0, None)
    return root


@pytest.fixture
def done_repo(verified: Path, tmp_path: Path) -> Path:
    """A private copy of ``verified`` (each test may add evidence to it)."""
    return Path(shutil.copytree(verified, tmp_path / "repo", symlinks=True))


def ingest_junit(cli: Callable[..., Any], root: Path, *args: str) -> None:
    run_pytest(root, "--junitxml=ci.xml", *args)
    res = cli(root, "ingest", "--host", "ci2", str(root / "ci.xml"))
    assert res.code == 0, res.out + res.err


# --- item 1: an ingested JUnit run cannot evaluate a marker ---------------------------------------------------


def test_a_passing_junit_run_keeps_a_marker_gate_met(cli: Callable[..., Any], done_repo: Path) -> None:
    assert gate_json(cli, done_repo)["status"] == "done"
    ingest_junit(cli, done_repo, "tests/slow")
    phase_json = gate_json(cli, done_repo)
    gate = phase_json["gates"][0]
    assert phase_json["status"] == "done", gate
    assert (gate["met"], gate["failed"], gate["reason"]) == (True, False, "1 passed")
    assert gate["source"]["machine"] == "ci2"  # the JUnit run's outcome of a test known to be slow counts


def test_a_junit_failure_of_a_test_known_to_be_marked_regresses(cli: Callable[..., Any], done_repo: Path) -> None:
    (done_repo / "tests/slow/test_s.py").write_text(SLOW_TESTS.format(value=2))
    ingest_junit(cli, done_repo, "tests/slow")
    phase_json = gate_json(cli, done_repo)
    gate = phase_json["gates"][0]
    assert phase_json["status"] == "regressed" and gate["failed"] is True and "assert 2 == 1" in gate["reason"]


def test_a_junit_run_never_adds_a_test_to_a_marker_gate(cli: Callable[..., Any], done_repo: Path) -> None:
    # JUnit cannot say whether test_new is slow: it neither joins the gate nor fails it.
    (done_repo / "tests/slow/test_new.py").write_text("import pytest\n\n@pytest.mark.slow\ndef test_new():\n    assert False\n")
    ingest_junit(cli, done_repo, "tests/slow")
    phase_json = gate_json(cli, done_repo)
    assert phase_json["status"] == "done" and phase_json["gates"][0]["reason"] == "1 passed"


def test_only_junit_evidence_leaves_a_marker_gate_unmet_with_the_reason(cli: Callable[..., Any], repo: Callable[..., Path]) -> None:
    root = repo({
        "plans/0001-x.md": MARKER_PLAN, "tests/slow/test_s.py": SLOW_TESTS.format(value=1),
        "pytest.ini": "[pytest]\nmarkers =\n    slow: slow tests\n", ".gitignore": "*.xml\n",
    })  # fmt: skip
    ingest_junit(cli, root, "tests/slow")
    phase_json = gate_json(cli, root)
    gate = phase_json["gates"][0]
    assert phase_json["status"] == "planned" and (gate["met"], gate["failed"]) == (False, False)
    assert gate["reason"] == "-m 'slow' cannot be evaluated: the only runs of it record no markers (JUnit XML)"
    assert gate["source"]["machine"] == "ci2"


def test_a_gate_that_selects_no_tests_is_unmet_not_failed(cli: Callable[..., Any], repo: Callable[..., Path]) -> None:
    """README: ``failed`` marks a real failure; a gate that selects nothing is missing evidence."""
    root = repo({
        "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/slow"\nmarker = "nosuch"')),
        "tests/slow/test_s.py": SLOW_TESTS.format(value=1), ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n",
    })  # fmt: skip
    assert cli(root, "verify", "0001/P1").code == 5
    gate = gate_json(cli, root)["gates"][0]
    assert (gate["met"], gate["failed"]) == (False, False) and "selects 0 tests" in gate["reason"]


# Hand-built stores: the rules behind the real runs above, over every shape of record.

def _run(name: str, time: str, tests: dict[str, tuple[str, list[str] | None]], *, junit: bool = False,
         args: list[str] | None = None) -> TestRun:
    recs = []
    for nodeid, (outcome, markers) in tests.items():
        rec: dict[str, Any] = {"nodeid": nodeid, "outcome": outcome, "reason": ""}
        if markers is not None:
            rec["markers"] = markers
        recs.append(rec)
    prov: dict[str, Any] = {"time": time, "host": name, "commit": "c" * 40}
    prov |= {"ingested_from": "junit"} if junit else {}
    prov |= {"args": args} if args is not None else {}
    return TestRun(f".tracker/evidence/{name}.json", prov, {}, {}, recs)


GATE = TestGate("tests", "slow")


def test_a_record_without_a_markers_key_counts_like_a_junit_record() -> None:
    known = _run("known", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("passed", ["slow"])}, args=["tests"])
    blind = _run("blind", "2026-01-01T00:00:02Z", {"tests/t.py::a": ("failed", None), "tests/t.py::b": ("failed", None)}, args=["tests"])
    verdict, _ = TestIndex(Store(runs=[known, blind])).verdict("0001/P1#1", GATE)
    # b is not known to be slow; a is, and its newest outcome (from the blind run) is a failure.
    assert (verdict.met, verdict.failed, verdict.reason) == (False, True, "tests/t.py::a: failed")


def test_a_blind_run_of_the_whole_argument_drops_nothing() -> None:
    known = _run("known", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("passed", ["slow"]), "tests/t.py::b": ("failed", ["slow"])}, args=["tests"])
    blind = _run("blind", "2026-01-01T00:00:02Z", {"tests/t.py::a": ("passed", [])}, junit=True, args=["tests"])
    verdict, _ = TestIndex(Store(runs=[known, blind])).verdict("0001/P1#1", GATE)
    assert verdict.reason == "tests/t.py::b: failed (1 of 2 not passing)"


def test_a_collection_error_counts_for_a_marker_gate_as_pytest_reports_it() -> None:
    # pytest -m slow reports a file it could not collect whatever -m says: the gate cannot be met on older passes.
    ok = _run("ok", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("passed", ["slow"]), "tests/u.py::c": ("passed", ["slow"])}, args=["tests"])
    broken = _run("broken", "2026-01-01T00:00:02Z", {"tests/t.py": ("error", [])}, args=["tests/t.py"])
    verdict, _ = TestIndex(Store(runs=[ok, broken])).verdict("0001/P1#1", GATE)
    assert (verdict.met, verdict.failed) == (False, True) and verdict.reason.startswith("tests/t.py: error")
    # A newer JUnit run collected the file again: the collection error stops counting, as for other gates.
    fixed = _run("fixed", "2026-01-01T00:00:03Z", {"tests/t.py::a": ("passed", [])}, junit=True)
    verdict, _ = TestIndex(Store(runs=[ok, broken, fixed])).verdict("0001/P1#1", GATE)
    assert (verdict.met, verdict.reason) == (True, "2 passed")


NODES = ["tests/t.py::a", "tests/t.py::b", "tests/u.py::c", "tests/u.py::d"]
SLOW = {"tests/t.py::a", "tests/u.py::c"}
OUTCOMES = ["passed", "failed", "error", "skipped", "xfailed", "deselected"]


@st.composite
def histories(draw: st.DrawFn) -> list[TestRun]:
    """Runs with marker information (the plugin, a reportlog) in time order, each of some of the tests."""
    runs = []
    for i in range(draw(st.integers(0, 5))):
        picked = draw(st.lists(st.sampled_from(NODES), unique=True))
        tests = {n: (draw(st.sampled_from(OUTCOMES)), ["slow"] if n in SLOW else []) for n in picked}
        args = draw(st.sampled_from([None, ["tests"], ["tests/t.py"]]))
        runs.append(_run(f"r{i}", f"2026-01-01T00:00:{i:02d}Z", tests, args=args))
    return runs


@settings(max_examples=300, deadline=None)
@given(history=histories(), blind_tests=st.lists(st.sampled_from(NODES), unique=True),
       missing_key=st.booleans(), args=st.sampled_from([None, ["tests"]]))
def test_a_blind_passing_run_never_unmeets_shrinks_or_grows_a_marker_gate(
    history: list[TestRun], blind_tests: list[str], missing_key: bool, args: list[str] | None,
) -> None:
    assume(not (missing_key and args and not blind_tests))  # no records at all: an ordinary empty run of all of it
    blind = _run("zblind", "2026-01-01T00:01:00Z", {n: ("passed", None if missing_key else []) for n in blind_tests},
                 junit=not missing_key, args=args)
    before, after = TestIndex(Store(runs=history)), TestIndex(Store(runs=[*history, blind]))
    old, new = before.verdict("0001/P1#1", GATE)[0], after.verdict("0001/P1#1", GATE)[0]
    covered = {r["nodeid"] for r in before.selection("0001/P1#1", GATE)[1]}
    assert {r["nodeid"] for r in after.selection("0001/P1#1", GATE)[1]} == covered
    assert not (old.met and not new.met)
    assert new.met == (old.met or (bool(covered) and all(
        n in blind_tests or before.verdict("x", TestGate(n))[0].met for n in covered)))
    assert not new.failed or old.failed  # passes never make a failure
    if not new.met and "selects 0 tests" in new.reason:
        assert not new.failed


def test_a_failure_is_failed_whichever_test_is_listed_first() -> None:
    # a never ran here (a GPU test skipped on CPU), c failed: the gate's verdict is the failure, not the skip.
    run = _run("r", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("skipped", ["slow"]), "tests/u.py::c": ("failed", ["slow"])})
    verdict, _ = TestIndex(Store(runs=[run])).verdict("0001/P1#1", GATE)
    assert (verdict.failed, verdict.reason) == (True, "tests/u.py::c: failed (2 of 2 not passing)")


# --- item 2: `tracker next` says when there are no plans, and --json ------------------------------------------


def next_of(root: Path, as_json: bool = False) -> tuple[int, str]:
    import io

    from tracker.commands import next as cmd

    out = io.StringIO()
    return cmd.run(root, out=out, as_json=as_json), out.getvalue()


def test_next_without_plans_says_so_and_where_it_looked(repo: Callable[..., Path]) -> None:
    root = repo({"README.md": "x\n"})
    assert next_of(root) == (0, f"no plans: {root / 'plans'} does not exist; `tracker new TITLE` creates one\n")
    make_files(root, {"plans/notes.md": "not a plan\n"})
    assert next_of(root) == (0, f"no plans: {root / 'plans'} holds no plan file (NNNN-slug.md); `tracker new TITLE` creates one\n")
    code, out = next_of(root, as_json=True)
    assert code == 0 and json.loads(out) == {"plans_dir": str(root / "plans"), "plans": 0, "phases": 0, "done": 0, "blocked": 0, "next": []}


def test_next_with_plans_without_phases_says_so(repo: Callable[..., Path]) -> None:
    root = repo({"plans/0001-x.md": plan_text("0001")})
    assert next_of(root) == (0, "nothing to do: the 1 plan(s) have no phases\n")


def test_next_json_lists_workable_phases_with_counts(repo: Callable[..., Path]) -> None:
    plan = plan_text("0001", phase("P1", 'manual = "a"') + phase("P2", 'manual = "b"', depends='"P1"') + phase("P3"))
    root = repo({"plans/0001-x.md": plan})
    code, out = next_of(root, as_json=True)
    doc = json.loads(out)
    assert code == 0 and (doc["plans"], doc["phases"], doc["done"], doc["blocked"]) == (1, 3, 0, 1)
    assert [(r["id"], r["status"], r["title"], r["path"]) for r in doc["next"]] == [
        ("0001/P1", "planned", "Phase P1", "plans/0001-x.md"), ("0001/P3", "planned", "Phase P3", "plans/0001-x.md")]
    assert all(plan.splitlines()[r["line"] - 1] == "```phase" for r in doc["next"])


def test_next_with_every_phase_done_says_so(repo: Callable[..., Path]) -> None:
    root = repo({"plans/0001-x.md": plan_text("0001", phase("P1", 'manual = "a"'))})
    from tracker.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--root", str(root), "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "checked"])
    assert exc.value.code in (0, None)
    assert next_of(root) == (0, "nothing to do: all 1 phase(s) are done\n")
