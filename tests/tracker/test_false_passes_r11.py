"""Adversarial round 11 (issue 24): each finding a test that failed before its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import git, phase, plan_text, record, status_of


def test_a_module_the_repository_provides_below_its_root_is_its_own(repo: Any, cli: Any) -> None:
    """F2: only the root was checked for modules the tracker had loaded; tests/secrets.py (the test folder is put
    first on sys.path) and src/markdown_it/ (pythonpath = src) ran the tracker's copies in the forked child."""
    import secrets  # noqa: F401

    import markdown_it  # noqa: F401 - loaded in this process, which verify forks

    plan = plan_text(phases=phase("P1", 'test = "tests/test_mod.py"', paths='"src/**", "tests/**"'))
    test = (
        "def test_secrets():\n    import secrets\n    assert secrets.compare_digest('a', 'b')\n\n\n"
        "def test_markdown():\n    from markdown_it import MarkdownIt\n    assert MarkdownIt().render('x') == 'own'\n"
    )
    files = {
        "plans/0001-demo.md": plan,
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "tests/secrets.py": "def compare_digest(a, b):\n    return True\n",
        "src/markdown_it/__init__.py": "class MarkdownIt:\n    def render(self, text):\n        return 'own'\n",
        "tests/test_mod.py": test,
    }
    root: Path = repo(files)
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    assert subprocess.run(plain, cwd=root, capture_output=True).returncode == 0
    r = cli(root, "verify")
    assert r.code == 0, r.out + r.err


def test_a_folder_behind_a_link_renamed_into_place_never_runs_the_old_bytecode(
    repo: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F6: pkg -> impl; the bytecode cache was judged by the link's own times, so an impl/ renamed into place with
    files of the same size and second ran the old .pyc."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    plan = plan_text(phases=phase("P1", 'test = "tests/test_pkg.py"', paths='"pkg", "impl/**"'))
    test = "import os\nimport sys\n\nsys.path.insert(0, os.getcwd())\nfrom pkg.mod import answer\n\n\n"
    files = {
        "impl/__init__.py": "",
        "impl/mod.py": "def answer():\n    return 42\n",
        "alt/__init__.py": "",
        "alt/mod.py": "def answer():\n    return 41\n",
        "tests/test_pkg.py": test + "def test_answer():\n    assert answer() == 42\n",
        ".gitignore": "alt/\n",
    }
    root: Path = repo({"plans/0001-demo.md": plan, **files}, commit=False)
    for name in ("impl/mod.py", "alt/mod.py"):
        os.utime(root / name, (1767225600, 1767225600))
    (root / "pkg").symlink_to("impl")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "42")
    assert cli(root, "verify").code == 0
    (root / "impl").rename(root / "old")
    (root / "alt").rename(root / "impl")
    git(root, "commit", "-qam", "41")
    assert cli(root, "verify").code == 1


STATE = (
    "import os\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\n"
    "def test_b():\n    assert STATE == [], 'test_a left state'\n    assert not os.environ.get('BREAK')\n"
)
A, B = "tests/test_state.py::test_a", "tests/test_state.py::test_b"


def state_repo(repo: Any, cli: Any) -> Path:
    """test_b fails after test_a (state left behind): verify on the gate fails."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_state.py"', paths='"tests/**"'))
    plan2 = plan_text(plan_id="0002", title="Other", phases=phase("P1", f'test = "{B}"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "plans/0002-other.md": plan2, "tests/test_state.py": STATE})
    assert cli(root, "verify", "0001").code == 1
    return root


@pytest.mark.parametrize("how", ["node id", "other phase", "junit"])
def test_a_run_of_part_of_the_gate_never_retires_an_order_dependent_failure(
    repo: Any, cli: Any, how: str, tmp_path: Path
) -> None:
    """F1: a test of the failing run that a passing run did not record was taken for gone, so test_b passed alone
    (its node id run on its own, another phase's verify of it, an ingested JUnit run of it) retired its failure
    after test_a, and the gate was met while pytest on it failed."""
    root = state_repo(repo, cli)
    if how == "node id":
        assert record(root, B) == 0
    elif how == "other phase":
        assert cli(root, "verify", "0002").code == 0
    else:
        xml = tmp_path / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", B, f"--junitxml={xml}"]
        assert subprocess.run(cmd, cwd=root, capture_output=True).returncode == 0
        assert cli(root, "ingest", str(xml)).code == 0
    assert status_of(cli, root, "P1", "0001") == "planned"
    assert cli(root, "verify", "0001").code == 1


def test_a_pass_in_another_order_never_retires_an_order_dependent_failure(repo: Any, cli: Any) -> None:
    """F4: the rule asked only that the passing run ran the same tests: test_b run before test_a passed."""
    root = state_repo(repo, cli)
    assert record(root, B, A) == 0
    assert status_of(cli, root, "P1", "0001") == "planned"


def test_an_older_failure_stands_when_only_a_newer_narrower_one_was_retired(repo: Any, cli: Any) -> None:
    """F3: only the newest failure was judged: test_b failed after test_a, then alone (another cause), then passed
    alone; the pass retired the failure alone, and the one after test_a was never looked at."""
    root = state_repo(repo, cli)
    assert record(root, B, env={"BREAK": "1"}) == 1
    assert record(root, B) == 0
    assert status_of(cli, root, "P1", "0001") == "planned"


def test_a_pass_on_another_xdist_worker_never_retires_an_order_dependent_failure(repo: Any, cli: Any) -> None:
    """F4 under xdist: test_b passes when test_a ran on another worker (or after it on the same one)."""
    pytest.importorskip("xdist")
    root = state_repo(repo, cli)
    assert record(root, "-n", "2", "tests/test_state.py") in (0, 1)
    assert status_of(cli, root, "P1", "0001") == "planned"


def test_a_failure_is_retired_by_a_pass_after_the_same_tests_or_their_removal(repo: Any, cli: Any) -> None:
    """The rule's other side: a run that passes test_b after test_a (the fix), or after test_a was deleted from the
    file it covers, retires the failure."""
    root = state_repo(repo, cli)
    (root / "tests/test_state.py").write_text(STATE.replace("STATE.append(1)", "pass"))
    git(root, "commit", "-qam", "the fix")
    assert record(root, "tests/test_state.py") == 0
    assert status_of(cli, root, "P1", "0001") == "done"
    (root / "tests/test_state.py").write_text(STATE)
    git(root, "commit", "-qam", "the bug again")
    assert cli(root, "verify", "0001").code == 1
    (root / "tests/test_state.py").write_text(STATE.replace("def test_a():\n    STATE.append(1)\n\n\n", ""))
    git(root, "commit", "-qam", "test_a deleted")
    assert record(root, "tests/test_state.py") == 0
    assert status_of(cli, root, "P1", "0001") == "done"


# The rule as a property, on hand-built histories: test b failed after a and c in a run of the whole gate; later runs
# pass b in any subset and order of the tests, with or without xdist workers, skips, narrowing and other arguments.
# The gate is met exactly when one of them was a run of the gate alone (its one argument the gate, nothing narrowed,
# no xdist worker) that skipped neither a nor c and ran them before b.
FILE = "t.py"
NODES = {"a": f"{FILE}::a", "b": f"{FILE}::b", "c": f"{FILE}::c"}
Later = tuple[list[str], dict[str, Any], list[str] | None, bool, dict[str, str]]


def _hand_run(i: int, spec: Later) -> Any:
    from tracker.core.model import TestRun

    order, workers, args, cut, outcomes = spec
    recs = []
    for place, name in enumerate(order):
        outcome = "failed" if i == 0 and name == "b" else outcomes.get(name, "passed") if name != "b" else "passed"
        rec: dict[str, Any] = {"nodeid": NODES[name], "outcome": outcome, "reason": "", "markers": [], "order": place}
        if workers.get(name):
            rec["worker"] = workers[name]
        recs.append(rec)
    prov: dict[str, Any] = {"time": f"2026-12-01T00:00:{i:02d}Z", "host": "h", "commit": "c" * 40, "args": args}
    if cut:
        prov["narrowed"] = "-o python_functions=x"
    return TestRun(f".tracker/evidence/r{i}.json", prov, {}, {FILE: "1" * 40}, recs)


def _alone(spec: Later) -> bool:
    order, workers, args, cut, outcomes = spec
    skipped = any(outcomes.get(x) == "skipped" for x in order if x != "b")
    after = any(order.index(x) > order.index("b") for x in order if x != "b")  # a and c ran before b in the failure
    missing = any(x not in order for x in "ac")  # the same code, yet not collected: hidden, not gone (round 14, F5)
    return (
        args == [FILE] and not cut and not any(workers.get(x) for x in order) and not skipped and not after
    ) and not missing


def _together(later: list[Later]) -> bool:
    """The newest run of all of the gate (its arguments cover it, nothing narrowed) that collected a, b and c passed
    them all in one process (round 13, A1; round 14, F1): a skip on the one machine these runs share counts not."""
    for order, workers, args, cut, outcomes in reversed(later):
        if cut or args not in ([FILE], ["."]) or len(order) < 3:
            continue
        passed = all(outcomes.get(x, "passed") == "passed" for x in "ac")
        return passed and len({str(workers.get(x)) for x in order}) == 1
    return False


LATER = st.lists(
    st.tuples(
        st.permutations(["a", "b", "c"]).flatmap(lambda p: st.integers(1, 3).map(lambda n: list(p[:n]))),
        st.fixed_dictionaries({k: st.sampled_from([None, None, "gw0", "gw1"]) for k in "abc"}),
        st.sampled_from([[FILE], [FILE], [NODES["b"]], [NODES["b"], NODES["a"]], [], None, ["."]]),
        st.booleans(),
        st.fixed_dictionaries({k: st.sampled_from(["passed", "passed", "skipped"]) for k in "ac"}),
    ).filter(lambda t: "b" in t[0]),
    min_size=1,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(later=LATER)
def test_a_failure_is_retired_exactly_by_a_run_of_the_gate_alone(later: list[Later]) -> None:
    from tracker.base.file_index import FileIndex
    from tracker.core.model import GateVerdict, Phase, Plan, Store, TestGate
    from tracker.core.status import compute

    first: Later = (["a", "c", "b"], {}, [FILE], False, {})
    runs = [_hand_run(0, first)] + [_hand_run(i + 1, spec) for i, spec in enumerate(later)]
    plans = [Plan("0001", "P", "plans/0001-p.md", None, [Phase("P1", "t", (), (FILE,), (TestGate(FILE),))])]
    never = GateVerdict(False, "")
    out = compute(plans, Store(runs=runs), lambda: FileIndex({FILE: "1" * 40}), lambda: lambda g: never)
    verdict = out["0001/P1"].verdicts[0]
    assert verdict.met == (any(_alone(spec) for spec in later) and _together(later)), (verdict.reason, later)
