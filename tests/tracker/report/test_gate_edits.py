"""The gates a change edits (tracker.report.gate_edits): matched by what they check, judged looser, tighter or changed;
and end to end, a gate loosened in the working tree is said in ``tracker summary``'s subject, body and trailers and in
the pull request summary, even where the status it moved reads as done."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from resultfiles import case, result, write
from tracker_testutil import git, make_files

from tracker.core.model import BenchGate, ManualGate, Phase, Plan, TestGate
from tracker.report.gate_edits import WEAKER, gate_edits


def plan(*phases: Phase) -> Plan:
    return Plan("0001", "t", "plans/0001-t.md", phases=tuple(phases))


def kinds(old: Phase, new: Phase) -> list[tuple[str, str]]:
    return [(e.key, e.kind) for e in gate_edits([plan(old)], [plan(new)])]


BENCH = BenchGate("m.time_us", {"impl": "cuda"}, at_most=50.0)
TEST = TestGate("tests/test_a.py")
SIGN = ManualGate("a person looked")

gates = st.one_of(
    st.builds(TestGate, st.sampled_from(["tests/a.py", "tests/b.py", "tests/c.py::t"]), st.sampled_from([None, "gpu"])),
    st.builds(ManualGate, st.sampled_from(["looked", "read it"])),
    st.builds(
        BenchGate,
        st.sampled_from(["m", "n"]),
        st.sampled_from([{}, {"impl": "cuda"}]),
        st.none(),
        st.none(),
        st.floats(0.001, 1e6),
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(gates, max_size=8), st.randoms(use_true_random=False))
def test_the_same_gates_in_any_order_are_no_edit(gs: list[Any], rnd: Any) -> None:
    shuffled = list(gs)
    rnd.shuffle(shuffled)
    assert kinds(Phase("P1", "t", gates=tuple(gs)), Phase("P1", "t", gates=tuple(shuffled))) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(gates, max_size=6), gates, st.integers(0, 6))
def test_a_gate_inserted_anywhere_is_one_edit_added_at_its_number(gs: list[Any], extra: Any, at: int) -> None:
    at = min(at, len(gs))
    new = [*gs[:at], extra, *gs[at:]]
    got = kinds(Phase("P1", "t", gates=tuple(gs)), Phase("P1", "t", gates=tuple(new)))
    # the inserted gate, or an equal one further down that the file-order match left over, is the one added
    assert len(got) == 1 and got[0][1] == "added"
    assert new[int(got[0][0].rpartition("#")[2]) - 1].definition == extra.definition


@settings(max_examples=200, deadline=None)
@given(st.lists(gates, min_size=1, max_size=6), st.integers(0, 5))
def test_a_gate_dropped_is_removed_under_its_old_number(gs: list[Any], at: int) -> None:
    at = min(at, len(gs) - 1)
    got = kinds(Phase("P1", "t", gates=tuple(gs)), Phase("P1", "t", gates=(*gs[:at], *gs[at + 1 :])))
    assert len(got) == 1 and got[0][1] == "removed"
    assert gs[int(got[0][0].rpartition("#")[2]) - 1].definition == gs[at].definition


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["at_most", "at_least"]),
    st.floats(1e-6, 1e9, allow_nan=False),
    st.floats(1e-6, 1e9, allow_nan=False),
)
def test_a_threshold_moved_is_looser_exactly_when_it_asks_less(bound: str, a: float, b: float) -> None:
    old = BenchGate("m", {}, **{bound: a})
    new = BenchGate("m", {}, **{bound: b})
    got = kinds(Phase("P1", "t", gates=(old,)), Phase("P1", "t", gates=(new,)))
    if a == b:
        assert got == []
        return
    asks_less = b > a if bound == "at_most" else b < a
    assert got == [("0001/P1#1", "looser" if asks_less else "tighter")]


def test_each_kind_of_edit_is_named() -> None:
    def one(old: Any, new: Any) -> str:
        got = kinds(Phase("P1", "t", gates=(old,)), Phase("P1", "t", gates=(new,)))
        assert len(got) == 1, got
        return got[0][1]

    assert one(BENCH, BENCH._replace(hardware="H200")) == "tighter"
    assert one(BENCH._replace(hardware="H200"), BENCH) == "looser"
    assert one(BENCH._replace(hardware="H200"), BENCH._replace(hardware="H100")) == "changed"
    assert one(BENCH, BENCH._replace(confidence=0.8)) == "looser"  # the default is 0.95
    assert one(BENCH, BENCH._replace(confidence=0.99)) == "tighter"
    assert one(BENCH, BENCH._replace(min_samples=10)) == "tighter"
    assert one(BENCH._replace(min_samples=10), BENCH) == "looser"
    assert one(BENCH, BENCH._replace(stat="min")) == "looser"  # min is never above the median: easier for at_most
    assert one(BENCH, BENCH._replace(at_most=None, at_least=50.0)) == "changed"  # turned around
    assert one(BENCH, BENCH._replace(at_most=100.0, min_samples=20)) == "looser"  # looser and tighter at once
    assert one(TEST, TEST._replace(skips_allowed=("no CUDA",))) == "looser"
    assert one(TEST._replace(xfails_allowed=("bug 1",)), TEST) == "tighter"
    assert one(TEST, TEST._replace(options=("--doctest-modules",))) == "changed"
    # what a gate checks changed: not the same gate, so the old one is removed and a new one added
    where = kinds(Phase("P1", "t", gates=(BENCH,)), Phase("P1", "t", gates=(BENCH._replace(where={"impl": "x"}),)))
    assert sorted(k for _, k in where) == ["added", "removed"]
    assert kinds(Phase("P1", "t", gates=(SIGN,)), Phase("P1", "t", gates=())) == [("0001/P1#1", "removed")]


def test_a_threshold_relaxed_beside_a_term_tightened_is_still_looser() -> None:
    """A relaxed threshold hidden behind a raised (or no-op) ``min_samples`` reads "looser", each term marked."""
    for extra in ({"min_samples": 1}, {"min_samples": 20}, {"confidence": 0.99}, {"hardware": "NVIDIA"}):
        new = BENCH._replace(at_most=200.0, **extra)
        edits = gate_edits([plan(Phase("P1", "t", gates=(BENCH,)))], [plan(Phase("P1", "t", gates=(new,)))])
        assert [(e.key, e.kind) for e in edits] == [("0001/P1#1", "looser")], (extra, edits)
        assert "at most 50 -> 200 (looser); " in edits[0].what, edits[0].what
    loose = TEST._replace(skips_allowed=("no CUDA",), options=("--doctest-modules",))
    assert kinds(Phase("P1", "t", gates=(TEST,)), Phase("P1", "t", gates=(loose,))) == [("0001/P1#1", "looser")]


def test_statistic_unit_hardware_and_allowed_skips_are_judged_by_what_they_let_pass() -> None:
    def one(old: Any, new: Any) -> str:
        got = kinds(Phase("P1", "t", gates=(old,)), Phase("P1", "t", gates=(new,)))
        assert len(got) == 1, got
        return got[0][1]

    most, least = BENCH, BENCH._replace(at_most=None, at_least=50.0)
    assert one(most._replace(stat="p90"), most) == "looser"  # the median is never above p90
    assert one(most._replace(stat="min"), most) == "tighter"
    assert one(least, least._replace(stat="min")) == "tighter"
    assert one(least, least._replace(stat="p90")) == "looser"
    assert one(most, most._replace(stat="mean")) == "changed"  # either may be the larger
    ratio = most._replace(baseline={"impl": "ref"}, at_most=None, at_least=1.1)
    assert one(ratio, ratio._replace(stat="min")) == "changed"  # taken of both sides of the ratio
    # at_most 50 in us, then ms: a thousand times the time
    assert one(most._replace(unit="us"), most._replace(unit="ms")) == "looser"
    assert one(most._replace(unit="us"), most._replace(unit="ns")) == "tighter"
    assert one(most._replace(unit="us"), most._replace(unit="ms", at_most=0.01)) == "tighter"
    assert one(most._replace(unit="us"), most._replace(unit="GB/s")) == "changed"
    assert one(most, most._replace(unit="ms")) == "changed"  # unset: its results' unit, whichever it is
    assert one(most._replace(hardware="NVIDIA H200 NVL"), most._replace(hardware="H200")) == "looser"
    assert one(most._replace(hardware="H200"), most._replace(hardware="NVIDIA H200 NVL")) == "tighter"
    assert one(most._replace(hardware="H100"), most._replace(hardware="NVIDIA")) == "changed"
    assert one(TEST._replace(skips_allowed=("needs CUDA 13",)), TEST._replace(skips_allowed=("CUDA",))) == "looser"
    assert one(TEST._replace(xfails_allowed=("bug",)), TEST._replace(xfails_allowed=("bug 12",))) == "tighter"
    # the changed ones are among those a reviewer must see
    assert "changed" in WEAKER


def test_a_threshold_edit_too_small_for_six_digits_still_shows() -> None:
    old, new = BENCH._replace(at_most=100.0000001), BENCH._replace(at_most=100.0000002)
    (edit,) = gate_edits([plan(Phase("P1", "t", gates=(old,)))], [plan(Phase("P1", "t", gates=(new,)))])
    assert edit.kind == "looser" and edit.what == "bench m.time_us: at most 100.0000001 -> 100.0000002", edit


def test_dependencies_and_paths_dropped_are_looser() -> None:
    old = Phase("P2", "t", depends=("0001/P1",), paths=("src/**",), gates=(TEST,))
    assert kinds(old, old._replace(depends=())) == [("0001/P2", "looser")]
    assert kinds(old, old._replace(paths=())) == [("0001/P2", "looser")]
    assert kinds(old, old._replace(paths=("src/**", "lib/**"))) == [("0001/P2", "tighter")]
    # exact: comments count; dropping it lets a comment-only edit keep the evidence fresh
    assert kinds(old._replace(exact=True), old) == [("0001/P2", "looser")]
    assert kinds(old, old._replace(exact=True)) == [("0001/P2", "tighter")]


def test_a_phase_new_or_gone_is_no_gate_edit() -> None:
    p1, p2 = Phase("P1", "t", gates=(TEST,)), Phase("P2", "t", gates=(BENCH,))
    assert gate_edits([plan(p1)], [plan(p1, p2)]) == []
    assert gate_edits([plan(p1, p2)], [plan(p1)]) == []


# --- end to end -----------------------------------------------------------------------------------------------------

PLAN = """# Loose

```plan
id = "0001"
title = "Loose"
```

```phase
id = "P1"
title = "Fast enough"

[[gate]]
bench = "m.time_us"
where = { impl = "cuda" }
at_most = THRESHOLD
```
"""


def repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_files(root, {"plans/0001-loose.md": PLAN.replace("THRESHOLD", "50.0"), ".gitignore": ".tracker/cache/\n"})
    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0] * 5)], time="2026-11-29T10:00:00Z")
    write(root / "bench/results/r1.json", {**doc, "provenance": {**doc["provenance"], "commit": None}})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a plan and a result that misses it")
    return root


def summaries(root: Path, cli: Callable[..., Any], plan: str) -> tuple[list[str], str]:
    """The plan edited to ``plan`` in the working tree: ``tracker summary``'s lines and the PR summary since HEAD."""
    (root / "plans/0001-loose.md").write_text(plan, encoding="utf-8")
    got = cli(root, "summary")
    assert got.code == 0, got.err
    pr = cli(root, "report", "--format", "github", "--since", "HEAD")
    assert pr.code == 0, pr.err
    return got.out.splitlines(), pr.out


def test_a_gate_loosened_to_done_says_so_in_the_summary(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = repo(tmp_path / "repo")
    assert "done" not in cli(root, "status").out.split("P1", 1)[1].split("\n", 1)[0]
    lines, pr = summaries(root, cli, PLAN.replace("THRESHOLD", "200.0"))
    assert lines[0] == "0001/P1 done (gate loosened)"
    assert "- 0001/P1#1 looser: bench m.time_us: at most 50 -> 200" in lines
    assert "Gate-Loosened: 0001/P1#1" in lines
    assert pr.startswith("### ⚠️ tracker: 1 phase(s) changed status since `HEAD`")
    assert "- ⚠️ 0001/P1#1 **looser**: bench m.time\\_us: at most 50 → 200" in pr, pr


def test_a_gate_tightened_with_no_status_change_is_listed_not_flagged(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = repo(tmp_path / "repo")
    (root / "plans/0001-loose.md").write_text(PLAN.replace("THRESHOLD", "20.0"), encoding="utf-8")
    got = cli(root, "summary", "--json")
    assert got.code == 0, got.err

    doc = json.loads(got.out)
    assert doc["gates"] == [{"key": "0001/P1#1", "kind": "tighter", "what": "bench m.time_us: at most 50 -> 20"}]
    assert not any(k.startswith("Gate-") for k, _ in doc["trailers"])
    assert not set(WEAKER) & {g["kind"] for g in doc["gates"]}


def test_a_threshold_turned_around_to_done_is_flagged_as_changed(tmp_path: Path, cli: Callable[..., Any]) -> None:
    """at_most 50 -> at_least 1 passes a 100 us result: neither looser nor tighter by rule, and still said."""
    root = repo(tmp_path / "repo")
    lines, pr = summaries(root, cli, PLAN.replace("at_most = THRESHOLD", "at_least = 1.0"))
    assert lines[0] == "0001/P1 done (gate changed)"
    assert "- 0001/P1#1 changed: bench m.time_us: at most 50 -> at least 1" in lines
    assert "Gate-Changed: 0001/P1#1" in lines
    assert pr.startswith("### ⚠️ tracker: 1 phase(s) changed status since `HEAD`"), pr
    assert "- ⚠️ 0001/P1#1 **changed**: bench m.time\\_us: at most 50 → at least 1" in pr, pr


def test_the_pull_request_list_shows_a_loosened_gate_behind_many_tightened_ones() -> None:
    from tracker.report.gate_edits import GateEdit
    from tracker.report.pr_summary import MAX_CHANGES, PrSummary, markdown

    tight = [GateEdit(f"0001/P{i}#1", "tighter", "bench m: at most 5000 -> 4000") for i in range(1, MAX_CHANGES + 2)]
    loose = GateEdit("0002/P1#1", "looser", "bench m: at most 50 -> 60")
    text = markdown(PrSummary("HEAD", None, (), (), (), (*tight, loose)))
    assert "- ⚠️ 0002/P1#1 **looser**" in text, text
    assert "… and 2 more" in text


def test_the_subject_says_gate_loosened_however_many_phases_it_lists() -> None:
    from tracker.core.model import Status
    from tracker.report.commit_summary import SUBJECT_MAX, PhaseChange, change_subject

    def done(i: int, eased: bool) -> PhaseChange:
        return PhaseChange(f"0001/P{i}", "t", Status.PLANNED, Status.DONE, "", "gate loosened" if eased else "")

    assert change_subject([done(1, True), done(2, True)]) == "0001/P1, 0001/P2 done (gates loosened)"
    assert change_subject([done(1, True), done(2, False)]) == "0001/P1, 0001/P2 done (1 on a gate loosened)"
    many = change_subject([done(i, i == 7) for i in range(1, 30)])
    assert many.endswith("(1 on a gate loosened)") and len(many) <= SUBJECT_MAX, many
    assert change_subject([done(1, False), done(2, False)]) == "0001/P1, 0001/P2 done"


def test_a_phase_or_plan_renamed_is_compared_with_the_one_it_was() -> None:
    old = Phase("P1", "Fast", gates=(BENCH,))
    new = Phase("P1b", "Fast", gates=(BENCH._replace(at_most=200.0),))
    moved = Plan("0002", "t", "plans/0002-t.md", phases=(old._replace(gates=new.gates),))
    assert [(e.key, e.kind, e.what) for e in gate_edits([plan(old)], [plan(new)])] == [
        ("0001/P1b#1", "looser", "was 0001/P1: bench m.time_us: at most 50 -> 200")
    ]
    assert [(e.key, e.kind) for e in gate_edits([plan(old)], [moved])] == [("0002/P1#1", "looser")]
    # another phase, not a rename: no title, no gate in common
    other = Phase("P2", "Other", gates=(TEST,))
    assert gate_edits([plan(old)], [plan(other)]) == []


def test_a_phase_renamed_to_done_on_a_loosened_gate_says_so(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = repo(tmp_path / "repo")
    text = PLAN.replace("THRESHOLD", "200.0").replace('id = "P1"', 'id = "P1b"')
    (root / "plans/0001-loose.md").write_text(text, encoding="utf-8")
    got = cli(root, "summary")
    assert got.code == 0, got.err
    lines = got.out.splitlines()
    assert lines[0] == "0001/P1b new (done, gate loosened); 0001/P1 removed"
    assert "Gate-Loosened: 0001/P1b#1" in lines
