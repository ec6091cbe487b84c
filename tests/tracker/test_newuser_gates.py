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

from tracker.core import gate_tests
from tracker.core.model import RAN, Store, TestGate, TestRun
from tracker.core.run_facts import xfail_known
from tracker.core.testgate import TestIndex

CHECKOUT = Path(__file__).resolve().parents[2]

SLOW_TESTS = (
    "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    assert {value} == 1\n\ndef test_fast():\n    pass\n"
)
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
    # JUnit cannot say whether test_new is slow: it never joins the gate, but its failure under the gate's
    # path keeps the gate unmet until a run with markers says whether -m selects it (never a false pass).
    (done_repo / "tests/slow/test_new.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_new():\n    assert False\n"
    )
    ingest_junit(cli, done_repo, "tests/slow")
    phase_json = gate_json(cli, done_repo)
    reason = phase_json["gates"][0]["reason"]
    assert phase_json["status"] == "regressed", phase_json
    assert "tests/slow/test_new.py::test_new: failed in a run that records no markers" in reason
    assert "cannot tell whether -m 'slow' selects it" in reason


def test_only_junit_evidence_leaves_a_marker_gate_unmet_with_the_reason(
    cli: Callable[..., Any], repo: Callable[..., Path]
) -> None:
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


def _run(
    name: str,
    time: str,
    tests: dict[str, tuple[str, list[str] | None]],
    *,
    junit: bool = False,
    args: list[str] | None = None,
) -> TestRun:
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
    blind = _run(
        "blind",
        "2026-01-01T00:00:02Z",
        {"tests/t.py::a": ("failed", None), "tests/t.py::b": ("failed", None)},
        args=["tests"],
    )
    verdict, _ = TestIndex(Store(runs=[known, blind])).verdict("0001/P1#1", GATE)
    # b is not known to be slow; a is, and its newest outcome (from the blind run) is a failure.
    assert (verdict.met, verdict.failed, verdict.reason) == (False, True, "tests/t.py::a: failed")


def test_a_blind_run_of_the_whole_argument_drops_nothing() -> None:
    known = _run(
        "known",
        "2026-01-01T00:00:01Z",
        {"tests/t.py::a": ("passed", ["slow"]), "tests/t.py::b": ("failed", ["slow"])},
        args=["tests"],
    )
    blind = _run("blind", "2026-01-01T00:00:02Z", {"tests/t.py::a": ("passed", [])}, junit=True, args=["tests"])
    verdict, _ = TestIndex(Store(runs=[known, blind])).verdict("0001/P1#1", GATE)
    assert verdict.reason == "tests/t.py::b: failed (1 of 2 not passing)"


def test_a_collection_error_counts_for_a_marker_gate_as_pytest_reports_it() -> None:
    # pytest -m slow reports a file it could not collect whatever -m says: the gate cannot be met on older passes.
    ok = _run(
        "ok",
        "2026-01-01T00:00:01Z",
        {"tests/t.py::a": ("passed", ["slow"]), "tests/u.py::c": ("passed", ["slow"])},
        args=["tests"],
    )
    broken = _run("broken", "2026-01-01T00:00:02Z", {"tests/t.py": ("error", [])}, args=["tests/t.py"])
    verdict, _ = TestIndex(Store(runs=[ok, broken])).verdict("0001/P1#1", GATE)
    assert (verdict.met, verdict.failed) == (False, True) and verdict.reason.startswith("tests/t.py: error")
    # A newer JUnit run collected the file again, but it records no markers: only a run with markers retires
    # a marker gate's collection error (what -m selects in that file is unknown until one does).
    fixed = _run("fixed", "2026-01-01T00:00:03Z", {"tests/t.py::a": ("passed", [])}, junit=True)
    verdict, _ = TestIndex(Store(runs=[ok, broken, fixed])).verdict("0001/P1#1", GATE)
    assert (verdict.met, verdict.failed) == (False, True) and verdict.reason.startswith("tests/t.py: error")
    # A run with markers of the file alone, on the same code (a hand-built run records no tree), is no run of the
    # gate alone: the file may fail to collect only beside the gate's other files (round 13, A5).
    marked = _run("marked", "2026-01-01T00:00:04Z", {"tests/t.py::a": ("passed", ["slow"])}, args=["tests/t.py"])
    verdict, _ = TestIndex(Store(runs=[ok, broken, fixed, marked])).verdict("0001/P1#1", GATE)
    assert (verdict.met, verdict.failed) == (False, True) and verdict.reason.startswith("tests/t.py: error")
    tests = {"tests/t.py::a": ("passed", ["slow"]), "tests/u.py::c": ("passed", ["slow"])}
    alone = _run("alone", "2026-01-01T00:00:05Z", tests, args=["tests"])
    verdict, _ = TestIndex(Store(runs=[ok, broken, fixed, marked, alone])).verdict("0001/P1#1", GATE)
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
@given(
    history=histories(),
    blind_tests=st.lists(st.sampled_from(NODES), unique=True),
    missing_key=st.booleans(),
    args=st.sampled_from([None, ["tests"]]),
)
def test_a_blind_passing_run_never_unmeets_shrinks_or_grows_a_marker_gate(
    history: list[TestRun],
    blind_tests: list[str],
    missing_key: bool,
    args: list[str] | None,
) -> None:
    assume(not (missing_key and args and not blind_tests))  # no records at all: an ordinary empty run of all of it
    blind = _run(
        "zblind",
        "2026-01-01T00:01:00Z",
        {n: ("passed", None if missing_key else []) for n in blind_tests},
        junit=not missing_key,
        args=args,
    )
    before, after = TestIndex(Store(runs=history)), TestIndex(Store(runs=[*history, blind]))
    old, new = before.verdict("0001/P1#1", GATE)[0], after.verdict("0001/P1#1", GATE)[0]
    covered = {r["nodeid"] for r in before.selection("0001/P1#1", GATE)[1]}
    assert {r["nodeid"] for r in after.selection("0001/P1#1", GATE)[1]} == covered
    assert not (old.met and not new.met)

    def passes(nodeid: str) -> bool:  # the newest outcome where it ran is a pass
        ran = [x["outcome"] for _, x in before.history.get(nodeid, []) if x["outcome"] in RAN]
        return bool(ran) and ran[0] == "passed"

    # A JUnit pass never counts for a test known to be xfail (JUnit writes an xpass as a pass).
    def blind_pass(n: str) -> bool:
        return n in blind_tests and (missing_key or not xfail_known(before.history.get(n, [])))

    # Met only once some run collected all of the gate (adv F3: gate_tests.named); histories() record no arguments.
    named = gate_tests.named(after, "0001/P1#1", GATE)

    def standing(n: str) -> bool:  # a failure only a run of the gate alone retires (RunIndex.alone)
        return after._standing_failure(GATE, n, after.tests_of(n)) is not None

    def together() -> bool:  # the newest run of all of the gate (rounds 13-15: its arguments cover it, not JUnit)
        # that collected every test of the gate passed each: no skip counts, one machine (no CPU model) ran them all
        tests = sorted(n for n in covered if "::" in n)
        if len(tests) < 2:
            return True
        for run in reversed([*history, blind]):
            if run.provenance.get("args") != ["tests"] or run.provenance.get("ingested_from") == "junit":
                continue
            worst: dict[str, str] = {}
            for x in run.tests:
                rank = 0 if x["outcome"] in ("failed", "error", "xpassed") else 1 if x["outcome"] in RAN else 2
                have = worst.get(x["nodeid"])
                if have is None or rank < (0 if have in ("failed", "error", "xpassed") else 1 if have in RAN else 2):
                    worst[x["nodeid"]] = x["outcome"]
            got = [worst.get(n) for n in tests]
            if all(g is not None and (g in RAN or g == "skipped") for g in got):
                return all(g == "passed" for g in got)
        return False

    clear = all((blind_pass(n) or passes(n)) and not standing(n) for n in covered)
    assert new.met == (old.met or (named and bool(covered) and clear and together()))
    assert not new.failed or old.failed  # passes never make a failure
    if not new.met and "selects 0 tests" in new.reason:
        assert not new.failed


def test_a_failure_is_failed_whichever_test_is_listed_first() -> None:
    # a never ran here (a GPU test skipped on CPU), c failed: the gate's verdict is the failure, not the skip.
    run = _run(
        "r", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("skipped", ["slow"]), "tests/u.py::c": ("failed", ["slow"])}
    )
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
    assert next_of(root) == (
        0,
        f"no plans: {root / 'plans'} holds no plan file (NNNN-slug.md); `tracker new TITLE` creates one\n",
    )
    code, out = next_of(root, as_json=True)
    assert code == 0 and json.loads(out) == {
        "plans_dir": str(root / "plans"),
        "plans": 0,
        "phases": 0,
        "done": 0,
        "blocked": 0,
        "next": [],
        "invalid": [],
    }


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
        ("0001/P1", "planned", "Phase P1", "plans/0001-x.md"),
        ("0001/P3", "planned", "Phase P3", "plans/0001-x.md"),
    ]
    assert all(plan.splitlines()[r["line"] - 1] == "```phase" for r in doc["next"])


def test_next_with_every_phase_done_says_so(repo: Callable[..., Path]) -> None:
    root = repo({"plans/0001-x.md": plan_text("0001", phase("P1", 'manual = "a"'))})
    from tracker.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--root", str(root), "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "checked"])
    assert exc.value.code in (0, None)
    assert next_of(root) == (0, "nothing to do: all 1 phase(s) are done\n")


# --- item 3: one invalid plan does not hide the valid ones ----------------------------------------------------

from tracker.errors import FileError, PlanError  # noqa: E402
from tracker.plans.load import load_plan_set, load_plans  # noqa: E402

GOOD = plan_text("0001", phase("P1", 'manual = "a"') + phase("P2", 'manual = "b"', depends='"0002/Q1"'))
BROKEN = plan_text("0002", phase("Q1", 'manual = "q"') + '```phase\nid = "Q2"\ntitle = 3\n```\n')


def test_the_plan_set_keeps_valid_plans_and_lists_the_invalid_ones(repo: Callable[..., Path]) -> None:
    root = repo({"plans/0001-good.md": GOOD, "plans/0002-broken.md": BROKEN})
    plan_set = load_plan_set(root)
    assert [p.id for p in plan_set.plans] == ["0001"]
    assert [(i.path, i.id) for i in plan_set.invalid] == [("plans/0002-broken.md", "0002")]
    assert plan_set.invalid[0].problems == plan_set.problems and plan_set.problems[0].startswith(
        "plans/0002-broken.md:"
    )
    err = plan_set.error()
    assert isinstance(err, PlanError) and err.problems == plan_set.problems
    with pytest.raises(PlanError) as strict:  # update, verify, check, gc, signoff: unchanged, refuse
        load_plans(root)
    assert strict.value.problems == plan_set.problems


def test_a_dependency_into_an_invalid_plan_blocks_unless_the_phase_is_done(repo: Callable[..., Path]) -> None:
    from tracker.store.derive import derive

    broken = BROKEN.replace('id = "Q1"', 'id = "Q1"\n= not toml')  # Q1 is not even TOML: 0002/Q1 is unknown
    root = repo({"plans/0001-good.md": GOOD, "plans/0002-broken.md": broken})
    plan_set = load_plan_set(root)
    assert [p.id for p in plan_set.plans] == ["0001"]  # the unknown 0002/Q1 is the broken plan's problem
    assert any("unknown dependency '0002/Q1'" in p for p in plan_set.problems)  # lint still says it
    st = derive(root, plan_set.plans)["0001/P2"]
    assert (st.status.value, st.blocked_by) == ("blocked", ("0002/Q1",))


@pytest.mark.parametrize(("files", "invalid"), [
    ({"plans/0001-good.md": GOOD.replace('"0002/Q1"', '"0003/Q1"'), "plans/0002-b.md": plan_text("0002", phase("Q1", 'manual = "q"'))},
     ["plans/0001-good.md"]),  # an unknown dependency into no plan at all: the depending plan's problem
    ({"plans/0001-a.md": plan_text("0001"), "plans/0001-b.md": plan_text("0001"), "plans/0002-c.md": plan_text("0002")},
     ["plans/0001-a.md", "plans/0001-b.md"]),  # a duplicate id: either file could be the one meant
])  # fmt: skip
def test_cross_plan_problems_make_the_plan_they_concern_invalid(
    repo: Callable[..., Path], files: dict[str, str], invalid: list[str]
) -> None:
    plan_set = load_plan_set(repo(files))
    assert [i.path for i in plan_set.invalid] == invalid
    assert {p.path for p in plan_set.plans} == set(files) - set(invalid)


def test_an_unreadable_plan_file_is_listed_and_is_exit_8(repo: Callable[..., Path]) -> None:
    import os

    root = repo({"plans/0001-good.md": GOOD.replace('depends = ["0002/Q1"]\n', "")})
    os.mkfifo(root / "plans/0002-fifo.md")
    plan_set = load_plan_set(root)
    assert [p.id for p in plan_set.plans] == ["0001"]
    assert [i.path for i in plan_set.invalid] == ["plans/0002-fifo.md"] and "not a regular file" in plan_set.invalid[
        0
    ].problems[0]
    err = plan_set.error()
    assert isinstance(err, FileError) and str(err).startswith("plans/0002-fifo.md: ")


def test_next_lists_the_valid_plans_then_exits_2_with_every_problem(
    cli: Callable[..., Any], repo: Callable[..., Path]
) -> None:
    root = repo({"plans/0001-good.md": GOOD, "plans/0002-broken.md": BROKEN})
    res = cli(root, "next")
    assert res.code == 2 and res.out == "0001/P1  planned      Phase P1\n"
    assert "plans/0002-broken.md:" in res.err and "1 problem(s) in plan files" in res.err
    import io

    from tracker.commands import next as cmd

    buf = io.StringIO()
    with pytest.raises(PlanError):
        cmd.run(root, out=buf, as_json=True)
    doc = json.loads(buf.getvalue())
    assert [r["id"] for r in doc["next"]] == ["0001/P1"] and doc["blocked"] == 1
    assert doc["invalid"] == [{"path": "plans/0002-broken.md", "id": "0002", "problems": load_plan_set(root).problems}]


BREAKAGES = ["", "toml", "type", "no-plan", "unknown-key"]


@st.composite
def plan_sets(draw: st.DrawFn) -> dict[str, str]:
    """Up to four plan files (ids may repeat), phases depending on phases of any plan (some that do not
    exist), each file intact or broken in one of several ways."""
    files: dict[str, str] = {}
    for n in range(draw(st.integers(1, 4))):
        pid = f"000{draw(st.integers(1, 4))}"
        blocks = ""
        for k in range(draw(st.integers(0, 3))):
            deps = draw(
                st.lists(
                    st.sampled_from([f'"000{i}/P{j}"' for i in range(1, 5) for j in range(3)] + ['"P0"', '"P2"']),
                    max_size=2,
                    unique=True,
                )
            )
            blocks += phase(f"P{k}", 'manual = "m"', depends=", ".join(deps))
        text = plan_text(pid, blocks)
        breakage = draw(st.sampled_from(BREAKAGES))
        if breakage == "toml" and "P0" in text:
            text = text.replace('id = "P0"', 'id = "P0"\n= x', 1)
        elif breakage == "type":
            text = text.replace('title = "Demo"', "title = 3", 1)
        elif breakage == "no-plan":
            text = text.replace("```plan", "```text", 1)
        elif breakage == "unknown-key":
            text = text.replace('title = "Demo"', 'title = "Demo"\nowner = "x"', 1)
        files[f"plans/{pid}-f{n}.md"] = text
    return files


@settings(max_examples=150, deadline=None)
@given(files=plan_sets())
def test_the_plan_set_splits_every_file_and_its_valid_plans_derive(
    files: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    import io

    from tracker.commands import next as cmd
    from tracker.core.checks import qualify
    from tracker.store.derive import derive

    root = tmp_path_factory.mktemp("set")
    make_files(root, files)
    plan_set = load_plan_set(root)
    valid = {p.path for p in plan_set.plans}
    invalid = {i.path for i in plan_set.invalid}
    assert valid | invalid == set(files) and not valid & invalid
    assert all(i.problems for i in plan_set.invalid)
    assert (plan_set.error() is None) == (not plan_set.invalid) == (not plan_set.problems)
    phases = {f"{p.id}/{ph.id}" for p in plan_set.plans for ph in p.phases}
    claimed = {i.id for i in plan_set.invalid} | {i.path.rsplit("/", 1)[-1][:4] for i in plan_set.invalid}
    assert len({p.id for p in plan_set.plans}) == len(plan_set.plans)  # no id twice among valid plans
    statuses = derive(root, plan_set.plans)
    for plan in plan_set.plans:
        for ph in plan.phases:
            for dep in (qualify(plan.id, d) for d in ph.depends):
                assert dep in phases or dep.split("/", 1)[0] in claimed, (plan.path, dep)
                if dep not in phases:
                    assert statuses[f"{plan.id}/{ph.id}"].status.value in ("blocked", "done")
    try:
        cmd.run(root, out=io.StringIO(), as_json=True)
    except PlanError as err:
        assert plan_set.invalid and err.problems == plan_set.problems


# --- item 4: lint warnings, lint --json ---------------------------------------------------------------------


def lint_of(root: Path, as_json: bool = False, collect: bool = False) -> tuple[int, str]:
    import io

    from tracker.commands import lint as cmd

    out = io.StringIO()
    return cmd.run(root, collect, out=out, as_json=as_json), out.getvalue()


def test_lint_warns_about_a_phase_without_gates_and_test_files_outside_paths(repo: Callable[..., Path]) -> None:
    plan = plan_text("0001",
        phase("P1", 'test = "tests/test_a.py::test_x"', 'test = "tests/unit"', 'test = "src/t_in.py"', paths='"src/**"')
        + phase("P2")
        + phase("P3", 'test = "tests/test_a.py"')  # no paths: nothing can make it stale, no warning
        + phase("P4", 'test = "tests/unit/"', paths='"tests/unit/**", "src/**"'))  # fmt: skip
    root = repo({
        "plans/0001-x.md": plan, "src/a.py": "", "src/t_in.py": "def test_in():\n    pass\n",
        "tests/test_a.py": "def test_x():\n    pass\n", "tests/unit/test_b.py": "def test_b():\n    pass\n",
        "tests/unit/conftest.py": "", "tests/unit/venv/lib.py": "", "tests/unit/data.txt": "",
    })  # fmt: skip
    lines = plan.splitlines()
    p2 = lines.index('id = "P2"')  # its fence is the line before, 1-based: p2
    code, out = lint_of(root)
    assert code == 0, out
    # A gate's own test files are inputs of its evidence whatever the phase's paths (adv G6): no warning for them.
    assert out.splitlines() == [
        f"plans/0001-x.md:{p2}: warning: phase P2 has no gates: it can never be done",
        "1 plan file(s) OK, 1 warning(s)",
    ]
    code, text = lint_of(root, as_json=True)
    doc = json.loads(text)
    assert code == 0 and (doc["ok"], doc["files"], doc["problems"]) == (True, 1, [])
    assert [(w["path"], w["line"], w["message"].split(":")[0]) for w in doc["warnings"]] == [
        ("plans/0001-x.md", p2, "warning"),
    ]
    assert [w["text"] for w in doc["warnings"]] == out.splitlines()[:1]


def test_lint_json_lists_problems_and_exits_2(repo: Callable[..., Path]) -> None:
    import os

    root = repo(
        {"plans/0001-x.md": plan_text("0001", phase("P1", 'manual = "a"', depends='"P9"')), "plans/notes.md": "prose\n"}
    )
    os.mkfifo(root / "plans/0002-fifo.md")
    code, text = lint_of(root, as_json=True)
    doc = json.loads(text)
    assert code == 2 and doc["ok"] is False and doc["files"] == 2
    by_path = {(p["path"], p["line"]) for p in doc["problems"]}
    assert by_path == {("plans/0001-x.md", 11), ("plans/0002-fifo.md", None)}  # the depends line; the whole file
    assert [w["path"] for w in doc["warnings"]] == ["plans/notes.md"] and doc["warnings"][0]["line"] is None


def test_lint_does_not_warn_about_gates_an_invalid_phase_lost(repo: Callable[..., Path]) -> None:
    root = repo({"plans/0001-x.md": plan_text("0001", phase("P1", "test = 3"))})
    code, out = lint_of(root)
    assert code == 2 and "warning" not in out


TREE = ["tests/a.py", "tests/sub/b.py", "tests/sub/c_test.py", "tests/x/y/z.py", "tests/[a].py"]
GLOBS = [
    "tests/**",
    "tests/*.py",
    "tests/sub/",
    "tests/s?b/*",
    "src/**",
    "tests/[ab].py",
    "**/*.py",
    "tests/**/z.py",
    "tests/[[]a].py",
    "tests/x/*",
    "*",
]


@settings(max_examples=60, deadline=None)
@given(
    tree=st.lists(st.sampled_from(TREE), min_size=1, unique=True),
    paths=st.lists(st.sampled_from(GLOBS), min_size=1, max_size=3, unique=True),
    arg=st.sampled_from(["tests", "."]),
)
def test_lint_warns_about_exactly_the_test_files_whose_edit_status_would_not_see(
    tree: list[str],
    paths: list[str],
    arg: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tracker.base.file_index import FileIndex
    from tracker.commands.lint import phase_warnings
    from tracker.core.model import ManualGate, Phase, Plan, gate_hash
    from tracker.core.status import compute
    from tracker.plans.load import PlanFile

    root = tmp_path_factory.mktemp("tree")
    make_files(root, dict.fromkeys(tree, ""))
    ph = Phase("P1", "t", (), tuple(paths), (TestGate(arg), ManualGate("m")), line=1)
    plan = Plan("0001", "T", "plans/0001-t.md", None, (ph,))
    warned = phase_warnings(root, [PlanFile(plan.path, "", plan, [])])
    then = dict.fromkeys(tree, "1" * 40)
    run = TestRun(
        ".tracker/evidence/r.json",
        {"time": "2026-01-01T00:00:00Z", "host": "h", "args": [arg]},  # a run of all of the gate (adv F3)
        {},
        then,
        [{"nodeid": "tests/a.py::t", "outcome": "passed", "markers": []}],
    )
    signed = {
        "gate_key": "0001/P1#2",
        "gate_hash": gate_hash(ph.gates[1]),
        "by": "x",
        "why": "y",
        "time": "2026-01-01T00:00:00Z",
        "files": then,
    }
    store = Store(runs=[run], signoffs=[(".tracker/evidence/s.json", signed)])
    unseen = []  # test files whose edit leaves the done phase done
    for f in tree:
        now = {**then, f: "2" * 40}
        status = compute([plan], store, lambda now=now: FileIndex(now), lambda: None)["0001/P1"].status.value
        assert status in ("done", "stale")
        unseen += [f] if status == "done" else []
    assert (warned == []) == (not unseen)
    if unseen:
        assert len(warned) == 1 and f" {len(unseen)} test file(s) under {arg} are outside" in warned[0], (
            warned,
            unseen,
        )


# Deeper runs of the properties above (TRACKER_SLOW=1).


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(
    history=histories(),
    blind_tests=st.lists(st.sampled_from(NODES), unique=True),
    missing_key=st.booleans(),
    args=st.sampled_from([None, ["tests"]]),
)
def test_a_blind_passing_run_never_unmeets_a_marker_gate_deep(
    history: list[TestRun],
    blind_tests: list[str],
    missing_key: bool,
    args: list[str] | None,
) -> None:
    test_a_blind_passing_run_never_unmeets_shrinks_or_grows_a_marker_gate.hypothesis.inner_test(
        history, blind_tests, missing_key, args
    )


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(files=plan_sets())
def test_the_plan_set_splits_every_file_deep(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    test_the_plan_set_splits_every_file_and_its_valid_plans_derive.hypothesis.inner_test(files, tmp_path_factory)


def test_a_deselecting_run_with_markers_keeps_a_junit_failure_in_a_marker_gate() -> None:
    # A reviewer's counterexample to ignoring runs that ran none of a gate's tests: the newest run deselected every
    # test of the file, but its markers say x is slow, so x, which failed in CI (JUnit, no markers), is in the gate.
    gate = TestGate("tests/t.py", "slow")
    known = _run("known", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("passed", ["slow"])}, args=["tests/t.py"])
    ci = _run(
        "ci",
        "2026-01-01T00:00:02Z",
        {"tests/t.py::a": ("passed", []), "tests/t.py::x": ("failed", [])},
        junit=True,
        args=["tests"],
    )
    fast = _run(
        "fast",
        "2026-01-01T00:00:03Z",
        {"tests/t.py::a": ("deselected", ["slow"]), "tests/t.py::x": ("deselected", ["slow"])},
        args=["tests"],
    )
    verdict, _ = TestIndex(Store(runs=[known, ci, fast])).verdict("0001/P1#1", gate)
    assert not verdict.met and verdict.reason.startswith("tests/t.py::x: failed"), verdict
