"""Deriving statuses over the plan set (tracker/store/derive.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tracker_testutil import phase, plan_text

from tracker.plans.load import load_plan_set

GOOD = plan_text("0001", phase("P1", 'manual = "a"') + phase("P2", 'manual = "b"', depends='"0002/Q1"'))


BROKEN = plan_text("0002", phase("Q1", 'manual = "q"') + '```phase\nid = "Q2"\ntitle = 3\n```\n')


def test_a_dependency_into_an_invalid_plan_blocks_unless_the_phase_is_done(repo: Callable[..., Path]) -> None:
    from tracker.store.derive import derive

    broken = BROKEN.replace('id = "Q1"', 'id = "Q1"\n= not toml')  # Q1 is not even TOML: 0002/Q1 is unknown
    root = repo({"plans/0001-good.md": GOOD, "plans/0002-broken.md": broken})
    plan_set = load_plan_set(root)
    assert [p.id for p in plan_set.plans] == ["0001"]  # the unknown 0002/Q1 is the broken plan's problem
    assert any("unknown dependency '0002/Q1'" in p for p in plan_set.problems)  # lint still says it
    st = derive(root, plan_set.plans)["0001/P2"]
    assert (st.status.value, st.blocked_by) == ("blocked", ("0002/Q1",))
