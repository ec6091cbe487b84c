"""Issue 12, the evidence and verify items as a new user meets them, through real git repositories, real pytest
runs and the real command functions: one definition of dirty (item 6), verify's exit code and one line per gate
(item 2), pytest arguments checked up front (item 8), result files written by the public helper (item 9), and
``--json`` on verify and check."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import git, make_files, phase, plan_text

from tracker.commands.common import pytest_command, pytest_env

TEST_A = "def test_x():\n    assert True\n"
IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.log\n"


def evidence(root: Path, kind: str) -> list[dict[str, Any]]:
    """The store's files of one kind (by name: ``-signoff-``, ``-pytest-``, ``-verify-``), oldest first."""
    return [json.loads(p.read_text()) for p in sorted((root / ".tracker/evidence").glob(f"*-{kind}-*.json"))]


def record_run(root: Path) -> dict[str, Any]:
    """A real ``pytest --tracker-record`` run of tests/; its provenance."""
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", "tests", "--tracker-record"]
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
    from tracker.base.dirty import commit_state

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

    write(
        root / "bench/results" / name,
        result([case("m.time_us", {"impl": "cuda"}, samples)], time=time, files={"kernel/k.cu": b"// k\n"}),
    )


def test_verify_exits_1_on_a_bench_gate_its_stored_results_do_not_meet(mixed: Path, cli: Callable[..., Any]) -> None:
    put_result(mixed, [400.0] * 5)
    res = cli(mixed, "verify", "0001/P2")
    assert res.code == 1, res.out + res.err
    assert "UNMET 0001/P2#1 m.time_us: 400 us > 200 us" in res.out
    assert "tracker: 0001/P2 is planned, not done: gate 1 (bench) is unmet\n" in res.out
    put_result(mixed, [100.0] * 5, name="s.json", time="2026-11-29T12:00:00Z")
    res = cli(mixed, "verify", "0001/P2")
    assert (
        res.code == 0
        and "met   0001/P2#1 m.time_us: 100 us ≤ 200 us" in res.out
        and "tracker: 0001/P2 is done\n" in res.out
    )


def test_verify_says_a_manual_gate_is_unsigned_and_exits_1_though_the_tests_passed(
    mixed: Path, cli: Callable[..., Any]
) -> None:
    res = cli(mixed, "verify", "0001/P1")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P1#1 tests/test_a.py: 1 passed\n" in res.out
    signoff = "tracker signoff 0001/P1 --gate 2 --by WHO --why TEXT"
    assert f'UNMET 0001/P1#2 manual "Reviewed by the owner": unsigned: run `{signoff}`\n' in res.out
    assert (
        "tracker: 0001/P1 is in-progress, not done: its test gate passed, but gate 2 (manual) is not signed off\n"
        in res.out
    )
    assert cli(mixed, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "read it").code == 0
    res = cli(mixed, "verify", "0001/P1")  # nothing re-runs, and now the phase is done
    assert res.code == 0, res.out + res.err
    assert 'met   0001/P1#2 manual "Reviewed by the owner": signed off by Ada: read it\n' in res.out
    assert "tracker: 0001/P1 is done\n" in res.out and "not re-run" in res.out


def test_verify_calls_the_bench_gate_of_a_stale_phase_stale_not_met(mixed: Path, cli: Callable[..., Any]) -> None:
    put_result(mixed, [100.0] * 5)
    assert cli(mixed, "verify", "0001/P2").code == 0
    (mixed / "kernel/k.cu").write_text("// k, faster now?\n")
    res = cli(mixed, "verify", "0001/P2")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P2#1" not in res.out
    assert (
        "STALE 0001/P2#1 m.time_us: 100 us ≤ 200 us (median of 5, impl=cuda, NVIDIA H200, kernel@3f2a91c); but stale: "
        "changed since evidence: kernel/k.cu (a new result file meets it again)\n"
    ) in res.out
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
    failing = BENCH + f'\nrun = "{sys.executable} -c \\"import sys; sys.exit(3)\\""'
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", failing, paths='"kernel/**"')), "kernel/k.cu": "// k\n",
                 ".gitignore": IGNORE})  # fmt: skip
    put_result(root, [100.0] * 5)
    res = cli(root, "verify", "--bench", "--force")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P1#1" not in res.out
    assert res.out.count("UNMET 0001/P1#1 m.time_us: ") == 1 and "exited with 3: its results are not used" in res.out


def test_a_result_file_whose_name_is_not_utf8_is_read_by_status_and_verify(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", BENCH)), ".gitignore": IGNORE})
    put_result(root, [100.0] * 5)
    (root / "bench/results/r.json").rename(root / os.fsdecode(b"bench/results/r-\xff.json"))
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["plans"][0]["phases"][0]["status"] == "done"
    assert cli(root, "verify").code == 0


# --- item 8: pytest arguments are checked up front, whether or not anything runs -------------------------------------

CONFTEST = "def pytest_addoption(parser):\n    parser.addoption('--runslow', action='store_true')\n"


def make_verified(root: Path) -> Path:
    """A repository whose one test gate is met and up to date (a verify runs nothing)."""
    from tracker.commands import verify

    plan = plan_text("0001", phase("P1", 'test = "tests/test_a.py"'))
    make_files(
        root, {"plans/0001-a.md": plan, "tests/test_a.py": TEST_A, "tests/conftest.py": CONFTEST, ".gitignore": IGNORE}
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "files")
    assert verify.run(root, [], out=io.StringIO()) == 0
    return root


@pytest.fixture
def verified(tmp_path: Path) -> Path:
    return make_verified(tmp_path)


@pytest.fixture(scope="module")
def shared_verified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`make_verified` once for the tests that must leave it as it was (they assert they record nothing)."""
    return make_verified(tmp_path_factory.mktemp("verified"))


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--bogus"], "pytest refused its command line (a --pytest-arg) (exit 4; its message is above): nothing ran"),
        (["--maxfail=many"], "pytest refused its command line (a --pytest-arg)"),
        (["-p", "no_such_plugin_xyz"], "--pytest-arg: -p no_such_plugin_xyz: a plugin may drop or change tests"),
        (["-k", "test_x and"], "--pytest-arg: Wrong expression passed to '-k': test_x and: "),
        (["-m", "(slow"], "--pytest-arg: Wrong expression passed to '-m': (slow: "),
        (["tests/test_gone.py"], "--pytest-arg: file or directory not found: tests/test_gone.py: nothing ran"),
        (["--co"], "--pytest-arg: --collect-only: pytest would not run the tests: nothing ran"),
        (["--help"], "--pytest-arg: --help: pytest would not run the tests"),
        (["--version"], "--pytest-arg: pytest answered without running tests (--version?): nothing ran"),
        (["--fixtures"], "--fixtures: pytest would not run the tests"),
        (
            ["--tracker-file=x.json"],
            "--pytest-arg --tracker-file=x.json: verify sets the tracker's own pytest options itself",
        ),
    ],
)
@pytest.mark.parametrize("force", [False, True], ids=["nothing-to-run", "a-run"])
def test_a_bad_pytest_argument_is_a_usage_error_whether_or_not_anything_runs(
    shared_verified: Path, cli: Callable[..., Any], args: list[str], said: str, force: bool
) -> None:
    before = sorted((shared_verified / ".tracker/evidence").iterdir())
    res = cli(
        shared_verified, "verify", "0001/P1", *(["--force"] if force else []), *(f"--pytest-arg={a}" for a in args)
    )
    assert res.code == 3, res.out + res.err
    assert said in res.err and "Traceback" not in res.err
    assert sorted((shared_verified / ".tracker/evidence").iterdir()) == before  # nothing recorded
    assert "1 passed" not in res.out  # no test ran


def test_a_run_checks_its_pytest_arguments_in_its_own_pytest_process(verified: Path, cli: Callable[..., Any]) -> None:
    log = verified / "imports.log"
    (verified / "tests/conftest.py").write_text(
        CONFTEST + f"open({str(log)!r}, 'a').write('x')\n"
    )  # one x per pytest process
    res = cli(verified, "verify", "0001/P1", "--force", "--pytest-arg=-x")
    assert res.code == 0, res.out + res.err
    assert log.read_text() == "x"  # one pytest process: the check costs the run no second start
    log.unlink()
    res = cli(verified, "verify", "0001/P1", "--pytest-arg=-x")  # nothing to run: one short start to check
    assert res.code == 0 and log.read_text() == "x"


def test_good_pytest_arguments_pass_the_check_conftest_options_included(
    verified: Path, cli: Callable[..., Any]
) -> None:
    for args in (["-x"], ["--runslow"], ["-k", "test_x or nothing"], ["-m", "not slow"], ["-q", "-p", "no:cacheprovider"],
                 ["tests/test_a.py::test_x"]):  # fmt: skip
        res = cli(verified, "verify", "0001/P1", *(f"--pytest-arg={a}" for a in args))
        assert res.code == 0, (args, res.out, res.err)
        assert res.err == "" and "met   0001/P1#1" in res.out
    res = cli(verified, "verify", "0001/P1", "--force", "--pytest-arg=--runslow")  # and the real run takes it
    assert res.code == 0 and "1 passed" in res.out


def test_a_bad_pytest_argument_stops_verify_before_a_bench_command_runs(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    marker = "ran.txt"
    gate = BENCH + f"\nrun = \"{sys.executable} -c \\\"open('{marker}', 'w')\\\"\""
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", gate)), ".gitignore": IGNORE})
    res = cli(root, "verify", "--bench", "--pytest-arg=--bogus")
    assert res.code == 3 and not (root / marker).exists(), res.out + res.err


def test_the_argument_check_costs_one_short_pytest_start(verified: Path) -> None:
    # Counted, not timed: the pytest processes started (each imports the initial conftest once: x), and how far
    # each got: configured (its pytest_configure: c), collecting (the test module imported: m). One x and
    # nothing else: one start, ended before configuration and collection (~0.3 s; a --collect-only check is xcm).
    from tracker.commands.verify_args import check_pytest_args

    log = verified / "starts.log"
    mark = f"open({str(log)!r}, 'a').write"
    (verified / "tests/conftest.py").write_text(
        CONFTEST + f"{mark}('x')\n\n\ndef pytest_configure(config):\n    {mark}('c')\n"
    )
    (verified / "tests/test_a.py").write_text(f"{mark}('m')\n\n\n" + TEST_A)
    check_pytest_args(verified, ["-x", "--runslow"], ["tests/test_a.py"])
    assert log.read_text() == "x"


# --- item 9: result files written by the public helper -----------------------------------------------------------------

SPEED = 'bench = "app.latency_ms"\nwhere = { size = 1000 }\nat_most = 50.0\nmin_samples = 3'


@pytest.fixture
def app(repo: Callable[..., Path]) -> Path:
    plan = plan_text("0001", phase("P1", SPEED, paths='"src/**"'))
    return repo(
        {"plans/0001-a.md": plan, "src/app.py": "def f():\n    return 1\n", "README.md": "app\n", ".gitignore": IGNORE}
    )


def statuses(cli: Callable[..., Any], root: Path) -> list[tuple[str, bool, str]]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return [
        (ph["status"], g["met"], g["reason"])
        for p in json.loads(res.out)["plans"]
        for ph in p["phases"]
        for g in ph["gates"]
    ]


def latency(samples: list[float], size: int = 1000) -> dict[str, Any]:
    return {
        "metric": "app.latency_ms",
        "params": {"size": size},
        "unit": "ms",
        "direction": "lower",
        "samples": samples,
    }


def test_a_result_written_by_the_helper_validates_and_drives_a_bench_gate(app: Path, cli: Callable[..., Any]) -> None:
    from resultfiles import blob

    from tracker.store.result_files import load_result, new_result, write_result

    doc = new_result(app, "latency", [latency([41.0, 40.0, 42.0])], ["src/**"], command="python measure.py", gpu=None)
    path = write_result(doc, app / "bench/results")
    run = load_result(path)  # the tracker's own validator accepts it
    assert run.files == {"src/app.py": blob(b"def f():\n    return 1\n")} and run.dirty is False
    assert run.commit == git(app, "rev-parse", "HEAD").strip()
    # The digest rule, computed independently of the tracker: sha256 over sorted "path NUL blob LF" lines.
    lines = "".join(f"{p}\0{b}\n" for p, b in sorted(run.files.items()))
    assert doc["provenance"]["fingerprint"]["digest"] == hashlib.sha256(lines.encode()).hexdigest()
    assert doc["cases"][0]["stats"] == {"n": 3, "median": 41.0, "min": 40.0, "mean": 41.0, "p90": 41.8}
    assert statuses(cli, app) == [
        (
            "done",
            True,
            f"41.0 ms (95% upper bound 42.0 ms) ≤ 50.0 ms (median of 3, size=1000, no GPU, src@{run.commit[:7]})",
        )
    ]
    # A slower run later: the newest run decides, and the phase that was done has regressed.
    write_result(new_result(app, "latency", [latency([70.0, 71.0, 69.0])], ["src/**"]), app / "bench/results")
    status, met, reason = statuses(cli, app)[0]
    assert (status, met) == ("regressed", False) and reason.startswith("70.0 ms (95% lower bound 69.0 ms) > 50.0 ms"), (
        reason
    )
    # The measured code changes: a met gate's phase goes stale.
    write_result(new_result(app, "latency", [latency([30.0, 31.0, 29.0])], ["src/**"]), app / "bench/results")
    assert statuses(cli, app)[0][:2] == ("done", True)
    (app / "src/app.py").write_text("def f():\n    return 2\n")
    assert statuses(cli, app)[0][0] == "stale"


def test_the_helper_refuses_what_the_validator_would_refuse(app: Path) -> None:
    from tracker.store.result_files import new_result

    bad = [
        ([latency([])], "cases[0].samples: expected a non-empty list of numbers"),
        ([latency([1.0, float("nan")])], "cases[0].samples[1]: nan is not a finite number"),
        ([latency([1.0, True])], "cases[0].samples[1]: True is not a finite number"),
        ([latency([0.0])], "cases[0]: samples[0] is 0.0 ms: a time must be > 0"),
        ([{**latency([1.0]), "direction": "down"}], "cases[0].direction: "),
        ([{**latency([1.0]), "stats": {}}], "cases[0]: unknown key 'stats'"),
        ([latency([1.0]), latency([2.0])], "cases[1] repeats cases[0]"),
        ([{**latency([1.0]), "params": {"size": [1]}}], "cases[0].params.size"),
    ]
    for cases, said in bad:
        with pytest.raises(ValueError, match=re.escape(said)):
            new_result(app, "latency", cases, ["src/**"])
    with pytest.raises(ValueError, match="measured: no file of the working tree matches nothing/\\*\\*"):
        new_result(app, "latency", [latency([1.0])], ["nothing/**"])


def run_new(root: Path, *args: Any, **kw: Any) -> tuple[int, str]:
    from tracker.commands.result import run_new as command

    out = io.StringIO()
    return command(root, *args, out=out, **kw), out.getvalue()


def test_result_new_from_csv_json_and_flags_meets_the_gate_with_typed_params(
    app: Path, cli: Callable[..., Any]
) -> None:
    csv_file = app.parent / "m.csv"
    csv_file.write_text(
        "metric,unit,direction,size,info.seed,sample\n"
        + "".join(f"app.latency_ms,ms,lower,{size},7,{value}\n" for size in (10, 1000) for value in (40.0, 41.0, 42.0))
    )
    code, out = run_new(app, "latency", str(csv_file))  # measured files: the paths of the phase gating app.latency_ms
    assert code == 0 and out.startswith("wrote bench/results/2") and ": 2 case(s), 1 measured file(s), " in out, out
    written = json.loads(next((app / "bench/results").glob("*.json")).read_text())
    assert [c["params"] for c in written["cases"]] == [
        {"size": 10},
        {"size": 1000},
    ]  # integers: `where = { size = 1000 }` matches
    assert written["cases"][0]["info"] == {"seed": 7} and written["cases"][0]["samples"] == [40.0, 41.0, 42.0]
    assert statuses(cli, app)[0][:2] == ("done", True)

    json_file = app.parent / "m.json"
    json_file.write_text(json.dumps({"cases": [latency([80.0, 81.0, 82.0])]}))
    assert run_new(app, "latency", str(json_file), measure=["src/app.py"])[0] == 0
    assert statuses(cli, app)[0][:2] == ("regressed", False)

    code, out = run_new(app, "latency", metric="app.latency_ms", unit="ms", direction="lower", params=["size=1000"],
                        samples=["30", "31,32"], gpu="NVIDIA H200", as_json=True)  # fmt: skip
    summary = json.loads(out)
    assert code == 0 and summary["cases"] == 1 and summary["measured"] == ["src/app.py"] and summary["dirty"] is False
    assert statuses(cli, app)[0][:2] == ("done", True)


@pytest.mark.parametrize(
    ("content", "kw", "error", "said"),
    [
        (None, {}, "UsageError", "no cases: give --cases FILE"),
        ("[]", {"metric": "m"}, "UsageError", "--cases or --metric/--unit/--direction/--param/--sample, not both"),
        (
            None,
            {"metric": "app.latency_ms", "unit": "ms", "direction": "lower", "params": ["size"], "samples": ["1"]},
            "UsageError",
            "--param 'size': expected KEY=VALUE",
        ),
        (
            None,
            {"metric": "app.latency_ms", "unit": "ms", "direction": "lower", "samples": ["fast"]},
            "UsageError",
            "--sample 'fast': not a number",
        ),
        (None, {"metric": "app.latency_ms", "unit": "ms", "direction": "lower"}, "UsageError", "--sample is needed"),
        (
            None,
            {"metric": "app.latency_ms", "unit": "ms", "direction": "down", "samples": ["1"]},
            "UsageError",
            "cases[0].direction: ",
        ),
        (
            "metric,unit,sample\napp.latency_ms,ms,1\n",
            {},
            "FileError",
            "cases.txt:1: the header names no direction column",
        ),
        (
            "metric,unit,direction,sample\napp.latency_ms,ms,lower,fast\n",
            {},
            "FileError",
            "cases.txt:2: sample 'fast' is not a number",
        ),
        (
            "metric,unit,direction,sample\napp.latency_ms,ms,lower\n",
            {},
            "FileError",
            "cases.txt:2: 3 values for 4 columns",
        ),
        (
            '[{"metric": "app.latency_ms", "params": {}, "unit": "ms", "direction": "lower", "samples": [NaN]}]',
            {},
            "FileError",
            "cases.txt: ",
        ),
        (
            '[{"metric": "app.latency_ms", "params": {}, "unit": "ms", "direction": "lower", "samples": [-1]}]',
            {},
            "FileError",
            "cases.txt: cases[0]: samples[0] is -1.0 ms: a time must be > 0",
        ),
        ('{"cases": 3}', {}, "FileError", "cases.txt: expected a JSON list of cases"),
        ("[" * 100000, {}, "FileError", "cases.txt: "),
        (
            '[{"metric": "other.metric", "params": {}, "unit": "ms", "direction": "lower", "samples": [1]}]',
            {},
            "UsageError",
            "--measure: name the files the benchmark measured",
        ),
    ],
)
def test_result_new_refuses_bad_input_with_a_clear_message_and_writes_nothing(
    app: Path, content: str | None, kw: dict[str, Any], error: str, said: str
) -> None:
    from tracker import errors

    cases = None
    if content is not None:
        cases = app.parent / "cases.txt"
        cases.write_text(content)
    with pytest.raises(getattr(errors, error)) as info:
        run_new(app, "latency", None if cases is None else str(cases), **kw)
    assert said in str(info.value)
    assert not (app / "bench/results").exists()


def test_result_new_reads_no_fifo(app: Path) -> None:
    from tracker.errors import FileError

    fifo = app.parent / "cases.fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match=re.escape("cases.fifo: ")):
        run_new(app, "latency", str(fifo))


# Hostile input to the writer: whatever the cases hold, a document comes back that the tracker's validator accepts, or
# a ValueError says what is wrong; and a cases file of any text is cases or a FileError, never a traceback.

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**400), max_value=10**400), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.just("\ud800"), st.just(1e308),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
CASES = st.lists(
    st.fixed_dictionaries(
        {"metric": st.one_of(st.text(max_size=10), VALUES), "params": st.one_of(st.dictionaries(st.text(max_size=5), SCALARS, max_size=3), VALUES),
         "unit": st.sampled_from(["ms", "us", "x", "", 3]), "direction": st.sampled_from(["lower", "higher", "down", None]),
         "samples": st.one_of(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), SCALARS), max_size=6), VALUES)},
        optional={"info": VALUES, "stats": VALUES},
    ),
    max_size=3,
)  # fmt: skip
NEARLY_VALID = st.lists(
    st.fixed_dictionaries(
        {"metric": st.text(min_size=1, max_size=8), "params": st.dictionaries(st.text(max_size=5), SCALARS, max_size=3),
         "unit": st.sampled_from(["ms", "x", "items/s"]), "direction": st.sampled_from(["lower", "higher"]),
         "samples": st.lists(st.floats(min_value=-1e308, max_value=1e308) | st.integers(-(10**20), 10**20), min_size=1, max_size=8)},
        optional={"info": st.dictionaries(st.text(max_size=5), SCALARS, max_size=2)},
    ),
    max_size=3,
)  # fmt: skip


def hostile_cases_hold(root: Path, cases: list[dict[str, Any]]) -> None:
    from tracker.store.result_files import load_result, new_result, write_result

    try:
        doc = new_result(root, "b", cases, ["src/**"], command="c")
    except ValueError:
        return
    path = write_result(doc, root.parent / "out")
    try:
        assert load_result(path).benchmark == "b"
    finally:
        path.unlink()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=CASES | NEARLY_VALID)
def test_property_the_writer_returns_valid_documents_or_says_why(app: Path, cases: list[dict[str, Any]]) -> None:
    hostile_cases_hold(app, cases)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=CASES | NEARLY_VALID)
def test_property_the_writer_returns_valid_documents_or_says_why_deep(app: Path, cases: list[dict[str, Any]]) -> None:
    hostile_cases_hold(app, cases)


CSV_TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.lists(st.sampled_from(["metric", "unit", "direction", "sample", "size", "info.x", "app.latency_ms", "ms", "lower",
                                       "1", "1e999", "-0", "nan", '"a,b"', "", "true", "9" * 5000, "\r", '"']), max_size=6), max_size=6)
    .map(lambda rows: "\n".join(",".join(r) for r in rows)),
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=CSV_TEXT)
def test_property_a_cases_file_is_cases_or_a_file_error(tmp_path: Path, text: str) -> None:
    from tracker.commands.result import read_cases
    from tracker.errors import FileError

    path = tmp_path / "cases.csv"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        cases = read_cases(str(path))
    except FileError as err:
        assert str(err).startswith(str(path))
        return
    assert isinstance(cases, list)


# --- --json on verify and check ------------------------------------------------------------------------------------------


def test_verify_json_is_the_only_thing_on_stdout_and_says_every_verdict(
    mixed: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.commands import verify

    put_result(mixed, [400.0] * 5)
    capfd.readouterr()
    code = verify.run(mixed, [], out=sys.stdout, as_json=True)
    out, err = capfd.readouterr()
    doc = json.loads(out)  # pytest's output and the progress lines went to stderr
    assert code == 1 and doc["exit"] == 1 and "1 passed" in err and "running 1 test gate(s)" in err
    assert doc["evidence"].startswith(".tracker/evidence/") and doc["ran"] == ["0001/P1#1"] and doc["not_rerun"] == []
    p1, p2 = doc["phases"]
    assert (p1["plan"], p1["id"], p1["status"]) == ("0001", "P1", "in-progress")
    assert (
        p1["summary"] == "0001/P1 is in-progress, not done: its test gate passed, but gate 2 (manual) is not signed off"
    )
    assert [(g["key"], g["kind"], g["verdict"]) for g in p1["gates"]] == [
        ("0001/P1#1", "test", "met"),
        ("0001/P1#2", "manual", "unmet"),
    ]
    gate = p2["gates"][0]
    assert (
        gate["verdict"] == "unmet" and gate["failed"] is True and gate["reason"].startswith("400 us > 200 us")
    )  # missed: failed
    assert gate["definition"] == {"bench": "m.time_us", "where": {"impl": "cuda"}, "at_most": 200.0, "stat": "median"}
    assert gate["source"]["file"] == "bench/results/r.json" and gate["stale"] is None
    assert set(doc) == {"exit", "evidence", "evidence_files", "ran", "not_rerun", "phases", "warnings"}

    # Nothing re-runs the second time; a stale bench gate says so.
    put_result(mixed, [100.0] * 5, name="s.json", time="2026-11-29T12:00:00Z")
    assert verify.run(mixed, ["0001/P2"], out=sys.stdout, as_json=True) == 0
    (mixed / "kernel/k.cu").write_text("// changed\n")
    capfd.readouterr()
    assert verify.run(mixed, [], out=sys.stdout, as_json=True) == 1
    doc = json.loads(capfd.readouterr().out)
    assert doc["evidence"] is None and doc["ran"] == [] and doc["not_rerun"] == ["0001/P1#1"]
    gate = doc["phases"][1]["gates"][0]
    assert (
        gate["verdict"] == "stale"
        and gate["stale"] == "changed since evidence: kernel/k.cu"
        and doc["phases"][1]["status"] == "stale"
    )


def test_verify_json_keeps_bench_commands_output_off_stdout(
    repo: Callable[..., Path], capfd: pytest.CaptureFixture[str]
) -> None:
    from tracker.commands import verify

    gate = BENCH + f'\nrun = "{sys.executable} -c \\"print(123)\\""'
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", gate)), ".gitignore": IGNORE})
    capfd.readouterr()
    assert verify.run(root, [], out=sys.stdout, bench=True, as_json=True) == 1
    out, err = capfd.readouterr()
    doc = json.loads(out)
    assert "123" in err and doc["phases"][0]["gates"][0]["reason"].endswith(
        "wrote no result file in .tracker/evidence/ or bench/results/"
    )


def test_verify_json_of_an_empty_gate_prints_the_object_then_exits_5(
    repo: Callable[..., Path], capfd: pytest.CaptureFixture[str]
) -> None:
    from tracker.commands import verify
    from tracker.errors import NoTestsError

    plan = plan_text("0001", phase("P1", 'test = "tests/test_a.py"\nmarker = "nothing_has_this"'))
    root = repo({"plans/0001-a.md": plan, "tests/test_a.py": TEST_A, ".gitignore": IGNORE})
    capfd.readouterr()
    with pytest.raises(NoTestsError):
        verify.run(root, [], out=sys.stdout, as_json=True)
    doc = json.loads(capfd.readouterr().out)
    assert doc["exit"] == 5 and doc["phases"][0]["gates"][0]["verdict"] == "unmet"


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
