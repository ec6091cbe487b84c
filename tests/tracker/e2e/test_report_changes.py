"""Milestone reports one after the other, through the real CLI on a real git repository with real pytest runs: the
changes of a report start where the previous report ended (the statuses it records), so a test file moved to another
folder (the same tests under other node ids, the gate rewritten to follow them) is no change, a re-run with the same
outcome is none, and a real regression is listed in the report after it; a report regenerated without new evidence
is the same bytes (``tracker check`` keeps it current)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from evidence_repo import commit_all, git, make_repo, phase_block

from tracker.report.period import parse_recorded

MD = "plans/reports/m.md"
TEST = "def test_one():\n    assert 1 == 1\n\n\ndef test_two():\n    assert True\n"


def plan(test: str) -> str:
    phases = [
        phase_block("P1", ["src/**"], [f'test = "{test}"']),
        phase_block("P2", ["src/**"], ['test = "tests/test_b.py"'], depends=["P1"]),
    ]
    head = '# Plan 0001\n\n```plan\nid = "0001"\ntitle = "Plan 0001"\nmilestone = "m"\n```\n\n'
    return head + "\n".join(phases)


def verify(root: Path, cli: Any) -> int:
    """``tracker verify``, a second after the evidence before it: a report's period starts after the second its
    previous one ended (evidence times are whole seconds)."""
    time.sleep(1.05)
    return int(cli(root, "verify").code)


def changes(root: Path, cli: Any) -> list[tuple[str, str, str]]:
    """The changes the next report of milestone ``m`` lists (written to plans/reports/m.md and committed)."""
    data = json.loads(cli(root, "report", "--milestone", "m", "--json").out)
    assert cli(root, "report", "--milestone", "m", "--out", str(root / MD)).code == 0
    commit_all(root, "report")
    return [(c["phase"], c["from"], c["to"]) for c in data["changes"]]


def test_a_moved_test_file_is_no_change_and_a_regression_after_it_is_one(tmp_path: Path, cli: Any) -> None:
    files = {
        "plans/0001-p.md": plan("tests/test_a.py"),
        "src/a.py": "X = 1\n",
        "tests/test_a.py": TEST,
        "tests/test_b.py": "def test_b():\n    assert True\n",
    }
    root = make_repo(tmp_path / "repo", files)
    assert verify(root, cli) == 0
    assert changes(root, cli) == [("0001/P1", "planned", "done"), ("0001/P2", "blocked", "done")]
    first = (root / MD).read_text(encoding="utf-8")
    assert parse_recorded(first).ends == {"0001/P1": "done", "0001/P2": "done"}

    # the same tests in another folder: today's gate selects none of the ids the old runs recorded, so the timeline
    # reads 0001/P1 as planned until the next run, and 0001/P2 as blocked
    (root / "tests/unit").mkdir()
    git(root, "mv", "tests/test_a.py", "tests/unit/test_a.py")
    (root / "plans/0001-p.md").write_text(plan("tests/unit/test_a.py"), encoding="utf-8")
    commit_all(root, "tests mirror the modules")
    assert verify(root, cli) == 0
    log = cli(root, "log", "0001/P1").out
    assert "planned -> done" in log and log.count(" -> ") == 1, log  # the timeline on today's gate
    assert changes(root, cli) == []  # done in the previous report, done now
    moved = (root / MD).read_text(encoding="utf-8")
    assert "No phase changed status in the period." in moved
    assert "0001/P1 re-read as planned on today's gates, ends done" in moved

    assert verify(root, cli) == 0  # a re-run with the same outcome
    assert changes(root, cli) == []

    (root / "tests/unit/test_a.py").write_text(TEST.replace("1 == 1", "1 == 2"), encoding="utf-8")
    commit_all(root, "a real regression")
    assert verify(root, cli) == 1
    assert changes(root, cli) == [("0001/P1", "done", "regressed")]  # never hidden
    regressed = (root / MD).read_text(encoding="utf-8")
    assert "done → **regressed** at a test run" in regressed
    assert r"tests/unit/test\_a.py::test\_one: failed: assert 1 == 2 (1 of 2 not passing)" in regressed

    # regenerated without new evidence: the same stretch, the same bytes, and check says it is current
    assert cli(root, "report", "--milestone", "m", "--out", str(root / MD)).code == 0
    assert (root / MD).read_text(encoding="utf-8") == regressed
    assert cli(root, "check").out.count("plans/reports/m.md") == 0
    status = subprocess.run(["git", "status", "--porcelain", MD], cwd=root, capture_output=True, text=True, check=True)
    assert status.stdout == ""


def _forge(root: Path, edit: Any) -> None:
    """Rewrite the record line of plans/reports/m.md as a hand or a merge might (its JSON, through ``edit``)."""
    from tracker.report.period import POINT

    text = (root / MD).read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith(POINT))
    data = json.loads(line[len(POINT) : -4])
    edit(data)
    forged = POINT + json.dumps(data, sort_keys=True) + " -->"
    (root / MD).write_text(text.replace(line, forged), encoding="utf-8")
    commit_all(root, "merge")


def test_a_forged_record_line_never_hides_a_regression(tmp_path: Path, cli: Any) -> None:
    files = {
        "plans/0001-p.md": plan("tests/test_a.py"),
        "src/a.py": "X = 1\n",
        "tests/test_a.py": TEST,
        "tests/test_b.py": "def test_b():\n    assert True\n",
    }
    root = make_repo(tmp_path / "repo", files)
    assert verify(root, cli) == 0
    assert changes(root, cli) == [("0001/P1", "planned", "done"), ("0001/P2", "blocked", "done")]
    (root / "tests/test_a.py").write_text(TEST.replace("1 == 1", "1 == 2"), encoding="utf-8")
    commit_all(root, "a real regression")
    assert verify(root, cli) == 1
    # a hand (or a merge) says the phase was regressed already at the previous report: the timeline says done
    _forge(root, lambda d: d["statuses"]["end"].update({"0001/P1": "regressed"}))
    assert ("0001/P1", "done", "regressed") in changes(root, cli)
    # and the same stretch again, with its start forged: still listed, and check does not call it current
    _forge(root, lambda d: d["statuses"]["start"].update({"0001/P1": "regressed"}))
    assert ("0001/P1", "done", "regressed") in changes(root, cli)


def test_a_record_line_naming_a_lost_commit_is_not_a_milestone_no_plan_declares(tmp_path: Path, cli: Any) -> None:
    files = {"plans/0001-p.md": plan("tests/test_a.py"), "src/a.py": "X = 1\n", "tests/test_a.py": TEST}
    files["tests/test_b.py"] = "def test_b():\n    assert True\n"
    root = make_repo(tmp_path / "repo", files)
    assert verify(root, cli) == 0
    changes(root, cli)
    # a report made --since a commit that a rebase or a squash has since dropped (or a record line edited)
    period = {"kind": "since-ref", "ref": "c1", "ref_commit": "d" * 40}
    _forge(root, lambda d: d["period"].update(period))
    out = cli(root, "check").out
    assert "plans/reports/m.md: cannot be rendered: its record line's period starts at dddd" in out, out
    assert "declared by no plan" not in out, out
    res = cli(root, "report", "--milestone", "m", "--json")
    assert res.code == 3 and "not a commit in this repository" in res.err and "Traceback" not in res.err, res.err


def test_a_record_line_whose_period_ends_after_the_evidence_hides_no_regression(tmp_path: Path, cli: Any) -> None:
    files = {"plans/0001-p.md": plan("tests/test_a.py"), "src/a.py": "X = 1\n", "tests/test_a.py": TEST}
    files["tests/test_b.py"] = "def test_b():\n    assert True\n"
    root = make_repo(tmp_path / "repo", files)
    assert verify(root, cli) == 0
    changes(root, cli)
    (root / "tests/test_a.py").write_text(TEST.replace("1 == 1", "1 == 2"), encoding="utf-8")
    commit_all(root, "a real regression")
    assert verify(root, cli) == 1
    # a record line (edited, or merged from a clock gone wrong) whose period starts and ends after every evidence
    far = "9999-12-31T23:59:59Z"
    _forge(root, lambda d: d["period"].update({"kind": "since-report", "start": far, "through": far}))
    assert ("0001/P1", "planned", "regressed") in changes(root, cli)  # a report of everything: nothing falls between


def test_a_regression_that_arrives_late_from_another_machine_is_listed(tmp_path: Path, cli: Any) -> None:
    files = {"plans/0001-p.md": plan("tests/test_a.py"), "src/a.py": "X = 1\n", "tests/test_a.py": TEST}
    files["tests/test_b.py"] = "def test_b():\n    assert True\n"
    root = make_repo(tmp_path / "repo", files)
    store = root / ".tracker/evidence"
    assert verify(root, cli) == 0  # 0001/P1 done
    # another machine runs the tests of 0001/P1 and they fail; its evidence reaches this clone only later (a pull)
    (root / "tests/test_a.py").write_text(TEST.replace("1 == 1", "1 == 2"), encoding="utf-8")
    before = set(store.iterdir())
    time.sleep(1.05)
    assert cli(root, "verify", "0001/P1").code == 1
    (late,) = set(store.iterdir()) - before
    late.rename(tmp_path / late.name)
    (root / "tests/test_a.py").write_text(TEST, encoding="utf-8")
    time.sleep(1.05)
    assert cli(root, "verify", "0001/P2", "--force").code == 0
    assert ("0001/P1", "planned", "done") in changes(root, cli)  # the first report: 0001/P1 done
    time.sleep(1.05)
    assert cli(root, "verify", "0001/P2", "--force").code == 0
    assert changes(root, cli) == []  # the second: nothing moved
    (tmp_path / late.name).rename(late)  # the pull: older than both reports' evidence, 0001/P1 regressed by it
    commit_all(root, "merge the other machine's evidence")
    assert "0001/P1" in cli(root, "status").out and "regressed" in cli(root, "status").out
    assert ("0001/P1", "done", "regressed") in changes(root, cli)  # done at the first report, regressed now
    listed = (root / MD).read_text(encoding="utf-8")
    assert ("0001/P1", "done", "regressed") in changes(root, cli)  # regenerated: still listed, the same bytes
    assert (root / MD).read_text(encoding="utf-8") == listed
    assert cli(root, "check").out.count("plans/reports/m.md") == 0
    time.sleep(1.05)
    assert cli(root, "verify", "0001/P2", "--force").code == 0
    assert changes(root, cli) == []  # the report after it starts from regressed
