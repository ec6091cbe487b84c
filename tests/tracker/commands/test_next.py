"""``tracker next`` (tracker/commands/next.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import make_files, phase, plan_text

from tracker.errors import PlanError
from tracker.plans.load import load_plan_set


def next_of(root: Path, as_json: bool = False) -> tuple[int, str]:
    import io

    from tracker.commands import next as cmd

    out = io.StringIO()
    return cmd.run(root, out=out, as_json=as_json), out.getvalue()


GOOD = plan_text("0001", phase("P1", 'manual = "a"') + phase("P2", 'manual = "b"', depends='"0002/Q1"'))


BROKEN = plan_text("0002", phase("Q1", 'manual = "q"') + '```phase\nid = "Q2"\ntitle = 3\n```\n')


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
