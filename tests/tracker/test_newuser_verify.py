"""Issue 12, the evidence and verify items as a new user meets them, through real git repositories, real pytest
runs and the real command functions: one definition of dirty (item 6), verify's exit code and one line per gate
(item 2), pytest arguments checked up front (item 8), result files written by the public helper (item 9), and
``--json`` on verify and check."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import git, phase, plan_text

from tracker.commands.common import pytest_command, pytest_env

TEST_A = "def test_x():\n    assert True\n"
IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.log\n"


def evidence(root: Path, kind: str) -> list[dict[str, Any]]:
    """The store's files of one kind (by name: ``-signoff-``, ``-pytest-``, ``-verify-``), oldest first."""
    return [json.loads(p.read_text()) for p in sorted((root / ".tracker/evidence").glob(f"*-{kind}-*.json"))]


def record_run(root: Path) -> dict[str, Any]:
    """A real ``pytest --tracker-record`` run of tests/; its provenance."""
    cmd = pytest_command() + ["-q", "-p", "no:cacheprovider", f"--rootdir={root}", "tests", "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    newest = max((root / ".tracker/evidence").glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(newest.read_text())["provenance"]


# --- item 6: one definition of dirty -------------------------------------------------------------------------------


@pytest.fixture
def signed(repo: Callable[..., Path]) -> Path:
    plan = plan_text("0001", phase("P1", 'test = "tests/test_a.py"', 'manual = "Reviewed"'))
    return repo({"plans/0001-a.md": plan, "tests/test_a.py": TEST_A, ".gitignore": IGNORE})


def signoff_dirty(root: Path, cli: Callable[..., Any]) -> bool | None:
    res = cli(root, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "read it")
    assert res.code == 0, res.err
    return evidence(root, "signoff")[-1]["dirty"]


def test_evidence_the_tracker_wrote_never_makes_a_signoff_dirty_as_it_never_makes_a_recorded_run_dirty(
    signed: Path, cli: Callable[..., Any]
) -> None:
    # The same commit with the same untracked evidence file: the plugin and signoff agree (they used to differ).
    assert record_run(signed)["dirty"] is False  # the run wrote an untracked file into .tracker/evidence
    assert signoff_dirty(signed, cli) is False
    assert record_run(signed)["dirty"] is False  # and the sign-off's own file does not make the next run dirty
    # An ignored file is not a change; a result file in bench/results/ is evidence, not code.
    (signed / "run.log").write_text("noise\n")
    (signed / "bench/results").mkdir(parents=True)
    (signed / "bench/results/r.json").write_text("{}\n")
    assert signoff_dirty(signed, cli) is False


@pytest.mark.parametrize("change", ["untracked", "modified", "staged", "deleted"])
def test_a_changed_tree_is_dirty_for_every_writer(signed: Path, cli: Callable[..., Any], change: str) -> None:
    if change == "untracked":
        (signed / "notes.txt").write_text("draft\n")
    elif change == "modified":
        (signed / "tests/test_a.py").write_text(TEST_A + "\n# edited\n")
    elif change == "staged":
        (signed / "tests/test_b.py").write_text(TEST_A)
        git(signed, "add", "tests/test_b.py")
    else:
        git(signed, "rm", "-q", "--cached", ".gitignore")
    assert signoff_dirty(signed, cli) is True
    assert record_run(signed)["dirty"] is True


def test_tracker_commit_wins_over_git_for_signoff_as_for_the_plugin(
    signed: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    other = "ab" * 20
    monkeypatch.setenv("TRACKER_COMMIT", other)
    monkeypatch.setenv("TRACKER_DIRTY", "1")
    assert signoff_dirty(signed, cli) is True and evidence(signed, "signoff")[-1]["commit"] == other
    monkeypatch.setenv("TRACKER_COMMIT", "HEAD")  # not a commit id: the file would be refused by every reader
    res = cli(signed, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "x")
    assert res.code == 3 and "TRACKER_COMMIT: expected 40 lowercase hex digits, got 'HEAD'" in res.err
    assert len(evidence(signed, "signoff")) == 1


def test_commit_state_rules(signed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.dirty import commit_state

    head = git(signed, "rev-parse", "HEAD").strip()
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    monkeypatch.setenv("TRACKER_DIRTY", "garbage")  # not used inside git: git decides
    assert commit_state(signed) == (head, False)
    (signed / ".tracker/evidence").mkdir(parents=True)
    (signed / ".tracker/evidence/x.json").write_text("{}")
    assert commit_state(signed) == (head, False)
    plain = tmp_path / "copy"  # a copy of the tree without .git: only the environment can say
    plain.mkdir()
    monkeypatch.setenv("TRACKER_DIRTY", "")
    assert commit_state(plain) == (None, None)
    monkeypatch.setenv("TRACKER_DIRTY", "yes")
    with pytest.raises(ValueError, match="TRACKER_DIRTY: expected '0' or '1'"):
        commit_state(plain)
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    git(unborn, "init", "-q")
    monkeypatch.setenv("TRACKER_DIRTY", "0")
    assert commit_state(unborn) == (None, False)


# --- item 2: verify's exit code and one true line per gate ------------------------------------------------------------

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

    write(root / "bench/results" / name, result([case("m.time_us", {"impl": "cuda"}, samples)], time=time, files={"kernel/k.cu": b"// k\n"}))


def test_verify_exits_1_on_a_bench_gate_its_stored_results_do_not_meet(mixed: Path, cli: Callable[..., Any]) -> None:
    put_result(mixed, [400.0] * 5)
    res = cli(mixed, "verify", "0001/P2")
    assert res.code == 1, res.out + res.err
    assert "UNMET 0001/P2#1 m.time_us: 400 us > 200 us" in res.out
    assert "tracker: 0001/P2 is planned, not done: gate 1 (bench) is unmet\n" in res.out
    put_result(mixed, [100.0] * 5, name="s.json", time="2026-11-29T12:00:00Z")
    res = cli(mixed, "verify", "0001/P2")
    assert res.code == 0 and "met   0001/P2#1 m.time_us: 100 us ≤ 200 us" in res.out and "tracker: 0001/P2 is done\n" in res.out


def test_verify_says_a_manual_gate_is_unsigned_and_exits_1_though_the_tests_passed(mixed: Path, cli: Callable[..., Any]) -> None:
    res = cli(mixed, "verify", "0001/P1")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P1#1 tests/test_a.py: 1 passed\n" in res.out
    signoff = "tracker signoff 0001/P1 --gate 2 --by WHO --why TEXT"
    assert f'UNMET 0001/P1#2 manual "Reviewed by the owner": unsigned: run `{signoff}`\n' in res.out
    assert "tracker: 0001/P1 is in-progress, not done: its test gate passed, but gate 2 (manual) is not signed off\n" in res.out
    assert cli(mixed, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "read it").code == 0
    res = cli(mixed, "verify", "0001/P1")  # nothing re-runs, and now the phase is done
    assert res.code == 0, res.out + res.err
    assert "met   0001/P1#2 manual \"Reviewed by the owner\": signed off by Ada: read it\n" in res.out
    assert "tracker: 0001/P1 is done\n" in res.out and "not re-run" in res.out


def test_verify_calls_the_bench_gate_of_a_stale_phase_stale_not_met(mixed: Path, cli: Callable[..., Any]) -> None:
    put_result(mixed, [100.0] * 5)
    assert cli(mixed, "verify", "0001/P2").code == 0
    (mixed / "kernel/k.cu").write_text("// k, faster now?\n")
    res = cli(mixed, "verify", "0001/P2")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P2#1" not in res.out
    assert ("STALE 0001/P2#1 m.time_us: 100 us ≤ 200 us (median of 5, impl=cuda, NVIDIA H200, kernel@3f2a91c); but stale: "
            "changed since evidence: kernel/k.cu (a new result file meets it again)\n") in res.out
    assert "tracker: 0001/P2 is stale, not done: gate 1 (bench) is stale\n" in res.out


def test_verify_of_everything_reports_every_gate_of_every_selected_phase(mixed: Path, cli: Callable[..., Any]) -> None:
    res = cli(mixed, "verify")
    assert res.code == 1
    keys = [line.split()[1] for line in res.out.splitlines() if line[:5] in ("met  ", "UNMET", "STALE")]
    assert keys == ["0001/P1#1", "0001/P1#2", "0001/P2#1"]
    assert "UNMET 0001/P2#1 m.time_us: no benchmark evidence\n" in res.out


def test_a_bench_gate_whose_command_failed_stays_unmet_in_the_verdicts_though_older_results_meet_it(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    import sys

    failing = BENCH + f'\nrun = "{sys.executable} -c \\"import sys; sys.exit(3)\\""'
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", failing, paths='"kernel/**"')), "kernel/k.cu": "// k\n",
                 ".gitignore": IGNORE})  # fmt: skip
    put_result(root, [100.0] * 5)
    res = cli(root, "verify", "--bench", "--force")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P1#1" not in res.out
    assert res.out.count("UNMET 0001/P1#1 m.time_us: ") == 2 and "exited with 3: its results are not used" in res.out


def test_a_result_file_whose_name_is_not_utf8_is_read_by_status_and_verify(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    import os

    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", BENCH)), ".gitignore": IGNORE})
    put_result(root, [100.0] * 5)
    (root / "bench/results/r.json").rename(root / os.fsdecode(b"bench/results/r-\xff.json"))
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["plans"][0]["phases"][0]["status"] == "done"
    assert cli(root, "verify").code == 0


# --- item 8: pytest arguments are checked up front, whether or not anything runs -------------------------------------

CONFTEST = "def pytest_addoption(parser):\n    parser.addoption('--runslow', action='store_true')\n"


@pytest.fixture
def verified(repo: Callable[..., Path], cli: Callable[..., Any]) -> Path:
    """A repository whose one test gate is met and up to date (a verify runs nothing)."""
    plan = plan_text("0001", phase("P1", 'test = "tests/test_a.py"'))
    root = repo({"plans/0001-a.md": plan, "tests/test_a.py": TEST_A, "tests/conftest.py": CONFTEST, ".gitignore": IGNORE})
    assert cli(root, "verify").code == 0
    return root


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--bogus"], "pytest refused its command line (a --pytest-arg) (exit 4; its message is above): nothing ran"),
        (["--maxfail=many"], "pytest refused its command line (a --pytest-arg)"),
        (["-p", "no_such_plugin_xyz"], "pytest refused its command line (a --pytest-arg)"),
        (["-k", "test_x and"], "--pytest-arg: Wrong expression passed to '-k': test_x and: "),
        (["-m", "(slow"], "--pytest-arg: Wrong expression passed to '-m': (slow: "),
        (["tests/test_gone.py"], "--pytest-arg: file or directory not found: tests/test_gone.py: nothing ran"),
        (["--co"], "--pytest-arg: --collect-only: pytest would not run the tests: nothing ran"),
        (["--help"], "--pytest-arg: --help: pytest would not run the tests"),
        (["--version"], "--pytest-arg: pytest answered without running tests (--version?): nothing ran"),
        (["--fixtures"], "--fixtures: pytest would not run the tests"),
        (["--tracker-file=x.json"], "--pytest-arg --tracker-file=x.json: verify sets the tracker's own pytest options itself"),
    ],
)
@pytest.mark.parametrize("force", [False, True], ids=["nothing-to-run", "a-run"])
def test_a_bad_pytest_argument_is_a_usage_error_whether_or_not_anything_runs(
    verified: Path, cli: Callable[..., Any], args: list[str], said: str, force: bool
) -> None:
    before = sorted((verified / ".tracker/evidence").iterdir())
    res = cli(verified, "verify", "0001/P1", *(["--force"] if force else []), *(f"--pytest-arg={a}" for a in args))
    assert res.code == 3, res.out + res.err
    assert said in res.err and "Traceback" not in res.err
    assert sorted((verified / ".tracker/evidence").iterdir()) == before  # nothing recorded
    assert "1 passed" not in res.out  # no test ran


def test_a_run_checks_its_pytest_arguments_in_its_own_pytest_process(verified: Path, cli: Callable[..., Any]) -> None:
    log = verified / "imports.log"
    (verified / "tests/conftest.py").write_text(CONFTEST + f"open({str(log)!r}, 'a').write('x')\n")  # one x per pytest process
    res = cli(verified, "verify", "0001/P1", "--force", "--pytest-arg=-x")
    assert res.code == 0, res.out + res.err
    assert log.read_text() == "x"  # one pytest process: the check costs the run no second start
    log.unlink()
    res = cli(verified, "verify", "0001/P1", "--pytest-arg=-x")  # nothing to run: one short start to check
    assert res.code == 0 and log.read_text() == "x"


def test_good_pytest_arguments_pass_the_check_conftest_options_included(verified: Path, cli: Callable[..., Any]) -> None:
    for args in (["-x"], ["--runslow"], ["-k", "test_x or nothing"], ["-m", "not slow"], ["-q", "-p", "no:randomly"],
                 ["tests/test_a.py::test_x"]):  # fmt: skip
        res = cli(verified, "verify", "0001/P1", *(f"--pytest-arg={a}" for a in args))
        assert res.code == 0, (args, res.out, res.err)
        assert res.err == "" and "met   0001/P1#1" in res.out
    res = cli(verified, "verify", "0001/P1", "--force", "--pytest-arg=--runslow")  # and the real run takes it
    assert res.code == 0 and "1 passed" in res.out


def test_a_bad_pytest_argument_stops_verify_before_a_bench_command_runs(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    import sys

    marker = "ran.txt"
    gate = BENCH + f'\nrun = "{sys.executable} -c \\"open(\'{marker}\', \'w\')\\""'
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", gate)), ".gitignore": IGNORE})
    res = cli(root, "verify", "--bench", "--pytest-arg=--bogus")
    assert res.code == 3 and not (root / marker).exists(), res.out + res.err


def test_the_argument_check_costs_one_short_pytest_start(verified: Path) -> None:
    import time

    from tracker.commands.verify import check_pytest_args

    start = time.perf_counter()
    check_pytest_args(verified, ["-x", "--runslow"], ["tests/test_a.py"])
    assert time.perf_counter() - start < 5.0  # ~0.3 s here; generous for a loaded CI machine
