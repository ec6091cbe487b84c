"""``tracker check`` (tracker/commands/check.py) on the report fixture repository (tests/tracker/report_fixture.py):
evidence the current statuses rest on that git does not track (ignored: a problem; never added: a warning)."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import report_fixture
from resultfiles import case, result, write
from tracker_testutil import git, phase, plan_text

R4 = ".tracker/evidence/20261107T100000Z-ci-box-r4.json"
B2 = "bench/results/20261108T100000Z-gpu-box-attn-b2.json"


def _untracked(root: Path, cli) -> list[dict[str, str]]:
    """check --json's entries about evidence git does not track: problems (ignored) first, then warnings."""
    doc = json.loads(cli(root, "check", "--json").out)
    kinds = ("ignored-evidence", "untracked-evidence")
    return [p for p in doc["problems"] + doc["warnings"] if p["kind"] in kinds]


def _drop(root: Path, *files: str, ignore_results: bool = False) -> None:
    """Take ``files`` out of git's index (committed), and with ``ignore_results`` make git ignore bench/results/."""
    if ignore_results:
        (root / ".gitignore").write_text(".tracker/cache/\n.tracker/lock\nbench/results/\n", encoding="utf-8")
    report_fixture.git(root, "rm", "-q", "--cached", *files)
    report_fixture.git(root, "commit", "-q", "-am", "evidence dropped from the index")


def test_check_fails_on_evidence_git_ignores_and_warns_on_evidence_never_added(tmp_path: Path, cli) -> None:
    """README's commit line once left bench/results/ out: a clone showed the benchmark phase planned. A file git
    ignores can never reach a clone: a problem (exit 1, `git add -f`). A file never added is what every fresh verify
    leaves (CI runs verify, then check): a warning naming the `git add`, the exit as without it."""
    root = report_fixture.build(tmp_path / "repo")
    assert _untracked(root, cli) == []  # the fixture commits all of its evidence
    _drop(root, B2, R4, ignore_results=True)

    doc = json.loads(cli(root, "check", "--json").out)
    assert (doc["ok"], doc["exit"]) == (False, 1)  # (the fixture has a regression and out-of-date plans too)
    assert [(p["kind"], p["path"], p["phase"]) for p in _untracked(root, cli)] == [
        ("ignored-evidence", B2, "0001/P2"),
        ("untracked-evidence", R4, "0001/P1"),
    ]
    assert [p["kind"] for p in doc["warnings"]] == ["untracked-evidence"]
    r = cli(root, "check")
    assert r.code == 1 and r.err == ""
    lines = [line for line in r.out.splitlines() if "git " in line or line.startswith("tracker check: ")]
    ignored = (
        f"{B2}: git ignores it, yet 0001/P2 gate 1, 0001/P3 gate 2 rest(s) on it: a clone can never see it "
        f"(git add -f {B2})"
    )
    never_added = (
        f"warning: {R4}: git does not track it yet (never added), and 0001/P1 gate 1, 0001/P3 gate 1 rest(s) on it: "
        f"a clone will not see it until it is committed (git add {R4})"
    )
    fix = f"tracker check: commit the evidence the statuses rest on: git add {R4} && git add -f {B2} && git commit"
    assert lines == [ignored, never_added, fix, f"tracker check: {len(doc['problems'])} problem(s), 1 warning(s)"]
    assert r.out.splitlines()[:-2] == [p["message"] for p in doc["problems"] + doc["warnings"]]  # the text's lines

    subprocess.run(fix.split("rest on: ", 1)[1].removesuffix(" && git commit"), shell=True, cwd=root, check=True)
    assert _untracked(root, cli) == []  # staged is enough: the commit that follows holds them
    assert "commit the evidence" not in cli(root, "check").out


def test_a_fresh_verify_s_evidence_is_a_warning_and_check_passes(repo, cli) -> None:
    """CI runs verify, then check: the run verify just wrote is not added yet. check names it and the `git add`, and
    passes (exit 0); once added, no word of it."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"'))
    files = {"plans/0001-demo.md": plan, "tests/test_a.py": "def test_a():\n    pass\n"}
    root = repo({**files, ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n"})
    assert cli(root, "verify").code == 0 and cli(root, "update").code == 0
    git(root, "add", "plans")
    git(root, "commit", "-q", "-m", "verified")
    (run,) = [f".tracker/evidence/{p.name}" for p in (root / ".tracker/evidence").glob("*.json")]
    r = cli(root, "check")
    assert r.code == 0 and r.err == ""
    assert r.out.splitlines() == [
        f"warning: {run}: git does not track it yet (never added), and 0001/P1 gate 1 rest(s) on it: a clone will "
        f"not see it until it is committed (git add {run})",
        f"tracker check: commit the evidence the statuses rest on: git add {run} && git commit",
        "tracker check: no regressions, plan files up to date; 1 warning(s)",
    ]
    doc = json.loads(cli(root, "check", "--json").out)
    assert (doc["ok"], doc["exit"], doc["problems"]) == (True, 0, [])
    assert [(w["kind"], w["path"], w["phase"]) for w in doc["warnings"]] == [("untracked-evidence", run, "0001/P1")]
    git(root, "add", run)
    assert cli(root, "check").out == "tracker check: no regressions, plan files up to date\n"


def test_untracked_evidence_outside_git_is_not_claimed(tmp_path: Path, cli) -> None:
    root = report_fixture.build(tmp_path / "repo")
    subprocess.run(["rm", "-rf", str(root / ".git")], check=True)
    assert _untracked(root, cli) == []


def test_a_done_phase_whose_verdict_no_longer_stands_is_named_by_check(tmp_path: Path, cli) -> None:
    """Round 19, W1: a met run, a straddling one, a clear miss, a straddling one. The miss pools undecided, yet alone
    it contradicts the met, so no verdict stands: the phase is done no longer, not regressed (noise fails nothing).
    `check` said nothing of it; it now names the gate (a warning, the exit as it was), as it does any undecided gate."""
    from evidence_repo import make_repo, phase_block
    from evidence_repo import plan_text as bench_plan
    from resultfiles import case, result, write

    gate = 'bench = "verify_attn.time_us"\nwhere = { impl = "cuda" }\nat_most = 1.05\nmin_samples = 5'
    root = make_repo(
        tmp_path / "repo",
        {"plans/0002-k.md": bench_plan("0002", [phase_block("P1", [], [gate])]), ".gitignore": ".tracker/\n"},
    )
    straddle = [0.95, 1.02, 1.10, 0.97, 1.04, 0.99, 1.06]
    series = [[0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96], straddle, [1.00, 1.20, 1.21, 1.22, 1.23, 1.24, 1.25]]
    series.append([straddle[0] + 1e-6, *straddle[1:]])
    for i, samples in enumerate(series):
        doc = result([case("verify_attn.time_us", {"impl": "cuda"}, samples)], time=f"2026-11-29T1{i}:00:00Z")
        write(root / f"bench/results/r{i}.json", {**doc, "provenance": {**doc["provenance"], "commit": None}})
        if i == 0:
            assert json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["status"] == "done"
    git(root, "add", "-A")
    git(root, "commit", "-qm", "results")
    assert cli(root, "update").code == 0
    git(root, "commit", "-qam", "update")
    phase_doc = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]
    assert phase_doc["status"] not in ("done", "regressed")
    r = cli(root, "check")
    assert r.code == 0, r.out
    [line] = [x for x in r.out.splitlines() if x.startswith("warning: 0002/P1: gate 1: undecided: ")]
    assert "no decided verdict stands: bench/results/r2.json alone missed it" in line
    doc = json.loads(cli(root, "check", "--json").out)
    assert [(w["kind"], w["phase"]) for w in doc["warnings"]] == [("undecided", "0002/P1")]


PLAN = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))


def test_a_refused_result_file_says_so_in_check(repo: Any, cli: Any) -> None:
    """The same file in a repository: `tracker check` names it (exit 1), no verdict rests on it."""
    from resultfiles import case, result

    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0, 101.0], direction="higher")])
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": "def test_a():\n    pass\n",
                       "bench/results/r.json": json.dumps(doc)})  # fmt: skip
    r = cli(root, "check")
    assert r.code == 1 and "direction is 'higher' for a time (us)" in r.out + r.err


TEST_A = "def test_x():\n    assert True\n"


IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.log\n"


BENCH = 'bench = "m.time_us"\nwhere = { impl = "cuda" }\nat_most = 200.0'


MIXED = plan_text(
    "0001",
    phase("P1", 'test = "tests/test_a.py"', 'manual = "Reviewed by the owner"')
    + phase("P2", BENCH, paths='"kernel/**"'),
)


@pytest.fixture
def mixed(repo: Callable[..., Path]) -> Path:
    return repo({"plans/0001-a.md": MIXED, "tests/test_a.py": TEST_A, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})


def put_result(root: Path, samples: list[float], name: str = "r.json", time: str = "2026-11-29T11:02:03Z") -> None:
    from resultfiles import case, result, write

    write(
        root / "bench/results" / name,
        result([case("m.time_us", {"impl": "cuda"}, samples)], time=time, files={"kernel/k.cu": b"// k\n"}),
    )


def test_check_json_lists_each_problem_with_its_kind_and_file(mixed: Path, cli: Callable[..., Any]) -> None:
    from tracker.commands import check

    def check_json() -> tuple[int, dict[str, Any]]:
        out = io.StringIO()
        code = check.run(mixed, out=out, as_json=True)
        return code, json.loads(out.getvalue())

    (mixed / "plans/0001-a.md").write_text(plan_text("0001", phase("P2", BENCH, paths='"kernel/**"')))
    assert cli(mixed, "update").code == 0
    assert check_json() == (0, {"ok": True, "exit": 0, "problems": [], "warnings": []})
    put_result(mixed, [100.0] * 5)
    put_result(mixed, [400.0] * 5, name="s.json", time="2026-11-29T12:00:00Z")  # was met, fails now: regressed
    (mixed / "bench/results/bad.json").write_text("{")
    code, doc = check_json()
    assert code == 1 and doc["ok"] is False
    kinds = [(p["kind"], p["path"], p["phase"]) for p in doc["problems"]]
    assert ("invalid-result", "bench/results/bad.json", None) in kinds and (
        "out-of-date",
        "plans/0001-a.md",
        None,
    ) in kinds
    (mixed / "bench/results/bad.json").unlink()
    code, doc = check_json()
    assert ("regressed", "plans/0001-a.md", "0001/P2") in [(p["kind"], p["path"], p["phase"]) for p in doc["problems"]]
    text = io.StringIO()
    assert check.run(mixed, out=text) == 1
    # the same lines as the text form: the problems, then the warnings (s.json is not added yet), then the git add
    # line for them and the totals
    assert [w["kind"] for w in doc["warnings"]] == ["untracked-evidence"]
    assert text.getvalue().splitlines()[:-2] == [p["message"] for p in doc["problems"] + doc["warnings"]]
    assert text.getvalue().splitlines()[-2].endswith("git add bench/results/s.json && git commit")


PLAN_REL_EVIDENCE = plan_text(
    "0001", phase("P1", 'test = "tests/test_a.py"') + phase("P2", 'bench = "m"\nwhere = { k = 1 }\nat_most = 5')
)


FILES = {"plans/0001-a.md": PLAN_REL_EVIDENCE, "tests/test_a.py": TEST_A, "conftest.py": "",
         ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n"}  # fmt: skip


STORE = ".tracker/evidence"


def run_doc(when: str, outcome: str = "passed", **top: Any) -> dict[str, Any]:
    """A complete tracker-test-run holding one record of tests/test_a.py::test_x."""
    doc: dict[str, Any] = {
        "schema": "tracker-test-run", "version": 1, "status": "complete",
        "provenance": {"time": when, "host": "elsewhere", "commit": None, "dirty": None, "args": ["tests"]},
        "gates": {}, "files": {},
        "tests": [{"nodeid": "tests/test_a.py::test_x", "outcome": outcome, "reason": "", "duration": 0.1, "markers": []}],
    }  # fmt: skip
    doc.update(top)
    return doc


def signoff_doc(**top: Any) -> dict[str, Any]:
    doc = {"schema": "tracker-signoff", "version": 1, "gate_key": "0001/P1#1", "gate_hash": "h", "manual": "ok", "by": "me",
           "why": "looked", "time": "2026-11-29T11:02:03Z", "host": "h", "commit": None, "dirty": None, "files": {}}  # fmt: skip
    doc.update(top)
    return doc


def put(root: Path, name: str, doc: object) -> Path:
    """Write ``doc`` (JSON, or bytes as they are) into the evidence store."""
    path = root / STORE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


def test_check_names_evidence_whose_commit_is_not_in_the_history(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = repo(FILES)
    head = git(root, "rev-parse", "HEAD").strip()
    made_up = "1234567" + "0" * 33
    put(
        root,
        "real.json",
        run_doc("2026-11-29T11:02:03Z", provenance={"time": "2026-11-29T11:02:03Z", "host": "h", "commit": head}),
    )
    put(
        root,
        "fake.json",
        run_doc("2026-11-29T11:02:04Z", provenance={"time": "2026-11-29T11:02:04Z", "host": "h", "commit": made_up}),
    )
    put(root, "signoff.json", signoff_doc(commit=made_up))
    write(root / "bench/results/r.json", result([case("m", {"k": 1}, [1.0])], commit=made_up))
    assert cli(root, "update").code == 0
    res = cli(root, "check")
    assert res.code == 1
    lines = [ln for ln in res.out.splitlines() if "is not in this repository's history" in ln]
    why = f"its commit {made_up} is not in this repository's history (evidence is trusted like a committed file: fetch that history, or remove the file)"
    assert lines == [
        f".tracker/evidence/fake.json: {why}",
        f".tracker/evidence/signoff.json: {why}",
        f"bench/results/r.json: {why}",
    ]
    for name in ("fake.json", "signoff.json"):
        (root / STORE / name).unlink()
    (root / "bench/results/r.json").unlink()
    assert cli(root, "update").code == 0
    git(root, "add", STORE)  # evidence a status rests on is committed, or check names it
    assert cli(root, "check").out == "tracker check: no regressions, plan files up to date\n"
