"""``tracker verify``'s output and what it writes (tracker/commands/verify.py, verify_bench.py)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from resultfiles import case, result, write
from tracker_testutil import git, make_files, phase, plan_text

from tracker.commands.common import pytest_command, pytest_env

IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"
GATE_LINE = ("met  ", "UNMET", "STALE")


def mixed_repo(repo: Callable[..., Path], run: str) -> Path:
    """One phase with a test gate and a bench gate whose ``run`` is ``run`` (make_result.py writes a result
    meeting it)."""
    from resultfiles import writer_script

    writer = writer_script(result([case("m.time_us", {"impl": "cuda"}, [100.0] * 5)], files={"kernel/k.cu": b"// k\n"}))
    bench = f'bench = "m.time_us"\nwhere = {{ impl = "cuda" }}\nat_most = 200.0\nmin_samples = 3\nrun = "{run}"'
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"', bench))
    return repo(
        {
            "plans/0001-demo.md": plan,
            "tests/test_a.py": "def test_a():\n    pass\n",
            "make_result.py": writer,
            "kernel/k.cu": "// k\n",
            ".gitignore": IGNORE,
        }
    )


def gate_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:5] in GATE_LINE]


def test_verify_bench_says_each_gate_and_the_evidence_once(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """Issue 24: the bench commands' runner printed each bench gate's verdict, then verify printed every gate's
    again; the plugin printed the evidence file (absolute) inside pytest's output, then verify (relative)."""
    root = mixed_repo(repo, f"{sys.executable} make_result.py")
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert [line.split(":")[0] for line in gate_lines(r.out)] == [
        "met   0001/P1#1 tests/test_a.py",
        "met   0001/P1#2 m.time_us",
    ]
    [evidence] = (root / ".tracker/evidence").glob("*-verify-*.json")
    assert r.out.count(evidence.name) == 1, r.out
    assert f"tracker: evidence .tracker/evidence/{evidence.name}\n" in r.out


def test_a_failed_bench_command_is_said_once_and_its_gate_unmet_once(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = mixed_repo(repo, f'{sys.executable} -c \\"import sys; sys.exit(3)\\"')
    r = cli(root, "verify", "--bench")
    assert r.code == 1, r.out + r.err
    why = f'`{sys.executable} -c "import sys; sys.exit(3)"` exited with 3: its results are not used'
    assert gate_lines(r.out) == ["met   0001/P1#1 tests/test_a.py: 1 passed", f"UNMET 0001/P1#2 m.time_us: {why}"]
    assert r.out.count(why) == 2  # the progress line as the command ends, and the gate's verdict


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-p", "no:warnings"], "-p no:warnings"),
        (["-W", "ignore::DeprecationWarning"], "-W"),
        (["-o", "filterwarnings=ignore"], "-o filterwarnings"),
        (["-o", "xfail_strict=false"], "-o xfail_strict"),
        (["--runxfail"], "--runxfail"),
        (["--rootdir=tests"], "--rootdir"),
        (["-p", "evilplug"], "-p evilplug"),
    ],
)
def test_verify_refuses_pytest_args_that_change_outcomes_or_load_a_plugin(
    repo: Callable[..., Path], cli: Callable[..., Any], args: list[str], named: str
) -> None:
    """adv F6/F4b/F1: `verify --force --pytest-arg=-p --pytest-arg=no:warnings` turned the repository's failing test
    (filterwarnings = error) into a pass and the phase done; `--rootdir` elsewhere names tests relative to another
    folder; `-p NAME` loads code that may drop tests. Refused like --collect-only (exit 3), nothing recorded."""
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/"')),
            "pytest.ini": "[pytest]\nfilterwarnings = error\n",
            "evilplug.py": "X = 1\n",
            "tests/test_b.py": "import warnings\ndef test_b():\n    warnings.warn('old', DeprecationWarning)\n",
        }
    )
    assert cli(root, "verify").code == 1
    before = sorted((root / ".tracker" / "evidence").glob("*.json"))
    r = cli(root, "verify", "--force", *(f"--pytest-arg={a}" for a in args))
    assert r.code == 3, r.out + r.err
    assert f"--pytest-arg: {named}: " in r.err, r.err
    assert "Traceback" not in r.out + r.err
    assert sorted((root / ".tracker" / "evidence").glob("*.json")) == before


def test_verify_in_a_repository_holding_the_tracker_package_is_warning_free(repo: Callable[..., Path]) -> None:
    """Issue 24, as in the tracker's own repository: pytest 9.2 marks the package of an editable install's plugin
    for assertion rewriting when it finds it on sys.path (the repository root, in verify's forked pytest, which has
    imported the tracker): every run warned "Module already imported so cannot be rewritten: tracker", an error
    under ``filterwarnings = ["error"]`` (exit 6, nothing recorded). The non-editable install's case is
    test_packaging's. A new process: in this one pytest has rewritten the tracker, so no warning would come."""
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py"')),
            "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
            "tracker/__init__.py": '"""A package named as the tracker, as in its own repository."""\n',
            "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
            ".gitignore": IGNORE,
        }
    )
    env = {k: v for k, v in os.environ.items() if k != "TRACKER_PYTEST_SPAWN"}  # the forked pytest
    cmd = [
        sys.executable,
        "-m",
        "tracker",
        "verify",
        "--root",
        str(root),
    ]  # run from elsewhere: root/tracker/ is not it
    r = subprocess.run(cmd, cwd=root.parent, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning" not in (r.stdout + r.stderr).lower()
    assert "met   0001/P1#1 tests/test_a.py: 1 passed\n" in r.stdout


SKIPPING = (
    "import sys\n\nimport pytest\n\n\ndef test_runs():\n    pass\n\n\n"
    '@pytest.mark.skipif(sys.platform != "plan9", reason="plan9 only")\ndef test_plan9():\n    pass\n\n\n'
    'def test_extra():\n    pytest.importorskip("no_such_extra_module")\n'
)


def skipping_repo(repo: Callable[..., Path], *gates: str) -> Path:
    return repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", *gates)),
            "tests/test_s.py": SKIPPING,
            "tests/test_only.py": 'import pytest\n\n\n@pytest.mark.skip(reason="plan9 only")\ndef test_o():\n    pass\n',
            ".gitignore": IGNORE,
        }
    )


def test_a_gate_meets_with_the_skips_it_allows_and_still_needs_a_pass(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Issue 30: a test that always skips on this platform (skipif by platform, importorskip of an optional extra)
    made a file or directory gate impossible to meet. ``skips_allowed`` names the skips a gate expects (a reason
    holding one of its strings): status says them, an unexpected skip stays unmet, and a pass is still needed."""
    allowed = 'skips_allowed = ["plan9 only", "could not import \'no_such_extra_module\'"]'
    root = skipping_repo(
        repo,
        f'test = "tests/test_s.py"\n{allowed}',
        'test = "tests/test_s.py"\nskips_allowed = ["plan9 only"]',
        'test = "tests/test_only.py"\nskips_allowed = ["plan9 only"]',
        'test = "tests/test_s.py"',
    )
    r = cli(root, "verify")
    assert r.code == 1, r.out + r.err
    lines = gate_lines(r.out)
    assert lines[0] == "met   0001/P1#1 tests/test_s.py: 1 passed, 2 skipped as allowed", r.out
    assert lines[1].startswith("UNMET 0001/P1#2 tests/test_s.py: tests/test_s.py::test_extra: skipped: could not"), (
        r.out
    )
    assert lines[1].endswith("(not in skips_allowed) (1 of 3 not passing)"), r.out
    assert lines[2] == (
        "UNMET 0001/P1#3 tests/test_only.py: 0 passed, 1 skipped as allowed: a gate needs at least one pass"
    ), r.out
    assert lines[3].startswith("UNMET 0001/P1#4 tests/test_s.py: tests/test_s.py::test_extra: skipped: could"), r.out
    assert lines[3].endswith("'no_such_extra_module' (2 of 3 not passing)"), r.out  # no skips_allowed: both count
    shown = cli(root, "show", "0001/P1")
    assert "1 passed, 2 skipped as allowed" in shown.out, shown.out


DOCTESTED = (
    'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n\n\n'
    'def sub(a, b):\n    """\n    >>> sub(3, 1)\n    2\n    """\n    return a - b\n'
)
DOC_GATE = 'test = "src/mod.py"\noptions = ["--doctest-modules"]'


def doctest_repo(repo: Callable[..., Path], *gates: str) -> Path:
    files = {"src/mod.py": DOCTESTED, "tests/test_a.py": "def test_a():\n    pass\n", ".gitignore": IGNORE}
    return repo({"plans/0001-demo.md": plan_text(phases=phase("P1", *gates))} | files)


def test_a_gate_carries_the_pytest_options_its_doctests_need(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Issue 30: a gate could carry no pytest option, so doctests had nowhere to go (a verify without
    --doctest-modules took them for deleted). ``options`` runs the gate with them: verify groups the gates by their
    options into one pytest session each (its own evidence file, judged together), a run without them never
    defines the gate's tests, and changing them makes the phase stale."""
    from tracker.commands.common import pytest_command, pytest_env

    root = doctest_repo(repo, DOC_GATE, 'test = "tests/test_a.py"')
    r = cli(root, "verify")
    assert r.code == 0, r.out + r.err
    assert gate_lines(r.out) == ["met   0001/P1#1 src/mod.py: 2 passed", "met   0001/P1#2 tests/test_a.py: 1 passed"]
    runs = sorted((root / ".tracker/evidence").glob("*-verify-*.json"))
    docs = [json.loads(p.read_text()) for p in runs]
    assert [d["provenance"].get("options") for d in docs] == [["--doctest-modules"], None], r.out
    assert [sorted(d["gates"]) for d in docs] == [["0001/P1#1"], ["0001/P1#2"]]
    for p in runs:
        assert f"tracker: evidence .tracker/evidence/{p.name}\n" in r.out
    # A plain run of the module without the option collects none of its doctests: they are not taken for deleted.
    plain = [*pytest_command(), "-q", "-p", "no:cacheprovider", "src/mod.py", "--tracker-record"]
    subprocess.run(plain, cwd=root, env=pytest_env(root), capture_output=True, check=False)
    st = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]
    assert st["status"] == "done" and st["gates"][0]["reason"] == "2 passed", st
    # Alone, such a run cannot say which tests the gate has.
    for p in runs:
        p.unlink()
    st = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]
    assert st["gates"][0]["met"] is False, st
    assert "without --doctest-modules" in st["gates"][0]["reason"], st
    # A failing doctest fails the gate.
    (root / "src/mod.py").write_text(DOCTESTED.replace("    2\n", "    7\n"))
    r = cli(root, "verify")
    assert r.code == 1, r.out + r.err
    assert gate_lines(r.out)[0].startswith("UNMET 0001/P1#1 src/mod.py: src/mod.py::mod.sub: failed"), r.out


def test_changing_a_gates_options_reruns_it(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """The options are part of the gate's definition (its hash): a run without the new ones does not say which
    tests the gate has now, so the phase is no longer done and verify runs the gate again."""
    root = doctest_repo(repo, DOC_GATE)
    assert cli(root, "verify").code == 0
    plan = root / "plans/0001-demo.md"
    plan.write_text(plan.read_text().replace('"--doctest-modules"]', '"--doctest-modules", "--import-mode=importlib"]'))
    st = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]
    assert st["status"] == "planned" and "without --import-mode=importlib" in st["gates"][0]["reason"], st
    r = cli(root, "verify")
    assert r.code == 0, r.out + r.err
    [newest] = sorted((root / ".tracker/evidence").glob("*-verify-*.json"))[-1:]
    options = json.loads(newest.read_text())["provenance"]["options"]
    assert options == ["--doctest-modules", "--import-mode=importlib"]


# A failing test's message is text the code under test controls: raw, it erased verify's and status's line and drew
# "P1 done" in its place (ESC[2K ESC[G ... ESC[8m), set the window title (OSC ... BEL) or cleared the screen (C1 CSI).
TERMINAL_TRICK = "\\x1b[2K\\x1b[G  P1  done  1/1  one\\x1b[8m \\x1b]0;owned\\x07 \\x9b2J \\u202e"
TRICKED = {"tests/test_b.py": f'def test_b():\n    assert False, "{TERMINAL_TRICK}"\n', ".gitignore": IGNORE}


def test_verify_prints_a_failure_messages_control_characters_escaped(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Adversarial review F9: ``show`` and ``log`` escaped them, ``verify`` printed them raw in its verdict lines
    (pytest's own report above them is pytest's)."""
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_b.py"')), **TRICKED})
    r = cli(root, "verify")
    assert r.code == 1, r.out + r.err
    ours = [line for line in (r.out + r.err).splitlines() if line.startswith((*GATE_LINE, "tracker:"))]
    assert len(ours) == 4 and not {"\x1b", "\x07", "\x9b", "\u202e"} & set("".join(ours)), ours
    assert (
        "failed: AssertionError: \\x1b[2K\\x1b[G  P1  done  1/1  one\\x1b[8m \\x1b]0;owned\\x07 \\x9b2J \\u202e"
        in ours[1]
    )


@pytest.mark.parametrize("args", [["-n", "2", "--dist=each"], ["--tx=ssh=nohost.invalid", "--dist=load"]])
def test_verify_refuses_xdist_modes_that_cannot_record_even_when_no_test_runs(repo, cli, args: list[str]) -> None:
    """pytest-xdist's ``--dist each`` and a ``--tx`` other than popen are refused by the recording run (exit 3); with
    every gate up to date verify runs no test, and its argument check let them through (exit 0) where docs/reference.md
    says --pytest-arg values are checked whether or not a test runs."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"'))
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": "def test_a():\n    pass\n", ".gitignore": IGNORE})
    assert cli(root, "verify").code == 0
    r = cli(root, "verify", *(f"--pytest-arg={a}" for a in args))
    assert r.code == 3, r.out + r.err
    assert "pytest-xdist's --" in r.err and "Traceback" not in r.out + r.err


def straddling_repo(repo: Callable[..., Path], samples: list[float], terms: str = "") -> Path:
    """One phase, one bench gate (at_most 1.05) whose command writes a new result file each run, a minute after the
    last: ``samples`` scaled by 1 + N/10⁴ in run N (:func:`resultfiles.writer_script`)."""
    from resultfiles import writer_script

    doc = result([case("m.time_us", {"impl": "cuda"}, samples)], files={"kernel/k.cu": b"// k\n"}, time="T")
    writer = writer_script(doc, retime=True, vary=True)
    bench = f'bench = "m.time_us"\nwhere = {{ impl = "cuda" }}\nat_most = 1.05\n{terms}run = "{sys.executable} make_result.py"'
    return repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", bench)),
            "make_result.py": writer,
            "kernel/k.cu": "// k\n",
            ".gitignore": IGNORE,
        }
    )


def test_verify_bench_measures_an_undecided_gate_again_until_it_decides(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Issue 31, item 2: one run of 7 samples straddles the threshold; the same code measured again on the same
    machine pools, each pool of L runs judged at 1 - 5% / L²: 7 samples of the same spread a run decide at 7 runs (49
    samples, 99.9%)."""
    root = straddling_repo(repo, [0.95, 1.02, 1.10, 0.97, 1.04, 0.99, 1.06])
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert len(list((root / "bench/results").iterdir())) == 7
    assert r.out.count("tracker: undecided, measuring again to decide") == 6
    [line] = gate_lines(r.out)
    assert line.startswith("met   0001/P1#1 m.time_us: 1.02 us (99.9% upper bound")
    assert "pooled: 7 runs of the same code on gpu-box, 49 samples, confidence 99.9%" in line
    assert cli(root, "status").code == 0
    shown = cli(root, "show", "0001/P1").out  # the bound labelled with the pool's confidence, not the gate's 95%
    assert "median 1.02 us, 99.9% upper bound 1.04 us; needs ≤ 1.05 us" in shown, shown


def test_verify_bench_stops_measuring_after_the_most_runs_it_pools(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """A gate that 8 runs pooled cannot decide (here: one sample a run, ten needed) stops there, and verify says it
    stays undecided."""
    from tracker.core.bench_verdict import MAX_POOLED

    root = straddling_repo(repo, [1.0], "min_samples = 10\n")
    r = cli(root, "verify", "--bench")
    assert r.code == 1, r.out + r.err
    assert len(list((root / "bench/results").iterdir())) == MAX_POOLED
    assert (
        f"tracker: 0001/P1#1 stays undecided after {MAX_POOLED} run(s) ({MAX_POOLED} runs pooled): undecided:" in r.out
    )
    [line] = gate_lines(r.out)
    assert line.startswith("UNMET 0001/P1#1 m.time_us: undecided: too few samples (8 < 10)") and "pooled: 8" in line


def test_verify_collects_each_test_file_once(repo: Any, cli: Any, tmp_path: Path) -> None:
    """pytest collects a file given on the command line by collecting its folder again for each such file: verify's
    run of gates on 4 files of one folder made 16 file nodes (quadratic: ~190 ms of CPU at 1,000 gates). Each
    folder's first report now serves the files after it (tracker.plugin.collection.DirectoryReports)."""
    log = tmp_path / "collected.txt"
    conftest = (
        f"def pytest_collect_file(file_path, parent):\n    open({str(log)!r}, 'a').write(file_path.name + '\\n')\n"
    )
    gates = [f'test = "tests/test_{i}.py"' for i in range(4)]
    plan = plan_text(phases=phase("P1", *gates, paths='"tests/**"'))
    tests = {f"tests/test_{i}.py": f"def test_{i}():\n    pass\n" for i in range(4)}
    root: Path = repo({"plans/0001-demo.md": plan, "conftest.py": conftest, **tests})
    assert cli(root, "verify").code == 0
    seen = log.read_text().split()
    assert sorted(n for n in seen if n.startswith("test_")) == [f"test_{i}.py" for i in range(4)], seen


LIB = "X = 1\n"


TEST_A = "import sys\nsys.path.insert(0, 'src')\nimport lib\n\n\ndef test_a():\n    assert lib.X == 1\n"


TEST_B = "def test_b():\n    pass\n"


def record(root: Path, *args: str) -> None:
    """A real ``pytest --tracker-record`` run of ``args``, as a user runs it by hand."""
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", *args, "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def p1(root: Path, cli: Callable[..., Any]) -> dict[str, Any]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    phase_data: dict[str, Any] = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_data


def partly_rerun(repo: Callable[..., Path], cli: Callable[..., Any]) -> Path:
    """Verified at the first commit; the code changes so that test_a fails; only test_b is recorded again."""
    plan = plan_text("0001", phase("P1", 'test = "tests/"', paths='"src/**"'))
    root = repo(
        {
            "plans/0001-a.md": plan,
            "src/lib.py": LIB,
            "tests/test_a.py": TEST_A,
            "tests/test_b.py": TEST_B,
            ".gitignore": IGNORE,
        }
    )
    assert cli(root, "verify").code == 0
    assert p1(root, cli)["status"] == "done"
    (root / "src/lib.py").write_text("X = 2\n")
    git(root, "commit", "-qam", "X = 2: test_a fails now")
    assert p1(root, cli)["status"] == "stale"
    record(root, "tests/test_b.py")
    return root


def test_verify_reruns_a_gate_whose_older_passes_saw_other_code(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = partly_rerun(repo, cli)
    res = cli(root, "verify")
    assert "up to date with their evidence" not in res.err + res.out
    assert res.code == 1, res.out + res.err  # test_a runs on X = 2 and fails
    assert p1(root, cli)["status"] == "regressed"


def test_a_partial_run_on_the_same_code_keeps_the_phase_done_and_verify_incremental(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    plan = plan_text("0001", phase("P1", 'test = "tests/"', paths='"src/**"'))
    files = {"plans/0001-a.md": plan, "src/lib.py": LIB, "tests/test_a.py": TEST_A, "tests/test_b.py": TEST_B}
    root = repo({**files, ".gitignore": IGNORE})
    assert cli(root, "verify").code == 0
    record(root, "tests/test_b.py")  # both runs saw X = 1
    status = p1(root, cli)
    assert status["status"] == "done", status
    res = cli(root, "verify")
    assert res.code == 0 and "up to date with their evidence" in res.out, res.out + res.err


PYTEST_INI = "[pytest]\nmarkers =\n    slow: slow tests\n"


IGNORED = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.xml\next/\n"


def status_of_review_fixes_gates(cli: Callable[..., Any], root: Path) -> tuple[str, dict[str, Any]]:
    """(status of plan 0001's first phase, its first gate) from ``status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.out + res.err
    phase_json = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_json["status"], phase_json["gates"][0]


SIMPLE_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/test_a.py"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_a.py": "def test_a():\n    assert True\n",
}


def utc_after(seconds: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds))


CRASH_LAYOUT = {
    "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/test_c.py"')),
    "pytest.ini": PYTEST_INI,
    ".gitignore": IGNORED,
    "tests/test_c.py": "import os\n\ndef test_a():\n    pass\n\ndef test_b():\n    os._exit(3)\n\ndef test_c():\n    pass\n",
}


def test_status_agrees_with_verify_after_a_file_from_a_clock_ahead(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """The review's reproduction: a pass recorded by a machine whose clock runs 4 minutes ahead; verify's own run
    of the broken test is put behind it and judged UNMET, but status ordered by time and said done. verify now
    records its run as later than that file (keeping its own clock's reading), so status judges as verify did."""
    from tracker.store.evidence_schema import check_document

    root = repo(SIMPLE_LAYOUT)
    assert cli(root, "verify", "0001/P1").code == 0
    (ahead,) = (root / ".tracker/evidence").glob("*.json")
    doc = json.loads(ahead.read_text())
    doc["provenance"]["time"] = utc_after(240)  # as another machine's clock would say it
    ahead.write_text(json.dumps(doc))
    make_files(root, {"tests/test_a.py": "def test_a():\n    assert False\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "evidence from ahead; break a")
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 1 and "UNMET 0001/P1#1" in res.out, res.out + res.err
    assert "recorded later than this run" in res.out and "provenance.clock_time" in res.out, res.out
    (own,) = set((root / ".tracker/evidence").glob("*.json")) - {ahead}
    own_doc = json.loads(own.read_text())
    check_document(own_doc)  # still a valid evidence file (clock_time is an unknown key holding a string)
    assert own_doc["provenance"]["time"] > doc["provenance"]["time"] > own_doc["provenance"]["clock_time"]
    status, gate = status_of_review_fixes_gates(cli, root)
    assert (
        status == "regressed" and gate["met"] is False and gate["source"]["file"] == own.relative_to(root).as_posix()
    ), gate


def test_verify_says_a_verdict_comes_from_older_evidence_when_its_run_ran_none_of_the_tests(
    repo: Callable[..., Path],
    cli: Callable[..., Any],
) -> None:
    """``-k nomatch`` deselects the gate's only test: the gate stays met (deselection never un-meets), and verify
    says the verdict is the older evidence's, naming its file, instead of a bare "met ... 1 passed"."""
    root = repo(SIMPLE_LAYOUT)
    assert cli(root, "verify", "0001/P1").code == 0
    (older,) = (root / ".tracker/evidence").glob("*.json")
    for args in (
        ["--pytest-arg=-k", "--pytest-arg=nomatch"],
        ["--pytest-arg=--deselect", "--pytest-arg=tests/test_a.py::test_a"],
    ):
        res = cli(root, "verify", "--force", "0001/P1", *args)
        assert res.code == 0, res.out + res.err
        line = next(line for line in res.out.splitlines() if line.startswith("met   0001/P1#1"))
        assert "this run ran none of its tests" in line and older.relative_to(root).as_posix() in line, line
    res = cli(root, "verify", "--force", "0001/P1")
    line = next(line for line in res.out.splitlines() if line.startswith("met   0001/P1#1"))
    assert "older evidence" not in line, line


def test_verify_names_the_test_that_crashed_among_others_of_its_file(repo: Callable[..., Path]) -> None:
    """The evidence file names only the crashed test's file when other tests of it run (the plugin names the very
    test in its running slot, tracker.names.crashed_test): verify's message names the test, read from the slot."""
    from tracker.commands.common import pytest_env

    root = repo(CRASH_LAYOUT)
    proc = subprocess.run([sys.executable, "-m", "tracker", "verify"], cwd=root, env=pytest_env(root), capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert proc.returncode == 6, proc.stdout + proc.stderr
    assert "it crashed while running tests/test_c.py::test_b, which counts as an error" in proc.stderr, proc.stderr


SLOW_TESTS = (
    "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    assert {value} == 1\n\ndef test_fast():\n    pass\n"
)


def gate_json(cli: Callable[..., Any], root: Path, plan: int = 0, ph: int = 0) -> dict[str, Any]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)["plans"][plan]["phases"][ph]


def test_a_gate_that_selects_no_tests_is_unmet_not_failed(cli: Callable[..., Any], repo: Callable[..., Path]) -> None:
    """docs/reference.md: ``failed`` marks a real failure; a gate that selects nothing is missing evidence."""
    root = repo({
        "plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests/slow"\nmarker = "nosuch"')),
        "tests/slow/test_s.py": SLOW_TESTS.format(value=1), ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n",
    })  # fmt: skip
    assert cli(root, "verify", "0001/P1").code == 5
    gate = gate_json(cli, root)["gates"][0]
    assert (gate["met"], gate["failed"]) == (False, False) and "selects 0 tests" in gate["reason"]


TEST_A_NEWUSER_VERIFY = "def test_x():\n    assert True\n"


IGNORE_NEWUSER_VERIFY = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.log\n"


BENCH = 'bench = "m.time_us"\nwhere = { impl = "cuda" }\nat_most = 200.0'


MIXED = plan_text(
    "0001",
    phase("P1", 'test = "tests/test_a.py"', 'manual = "Reviewed by the owner"')
    + phase("P2", BENCH, paths='"kernel/**"'),
)


@pytest.fixture
def mixed(repo: Callable[..., Path]) -> Path:
    return repo(
        {
            "plans/0001-a.md": MIXED,
            "tests/test_a.py": TEST_A_NEWUSER_VERIFY,
            "kernel/k.cu": "// k\n",
            ".gitignore": IGNORE_NEWUSER_VERIFY,
        }
    )


def put_result(root: Path, samples: list[float], name: str = "r.json", time: str = "2026-11-29T11:02:03Z") -> None:

    write(
        root / "bench/results" / name,
        result([case("m.time_us", {"impl": "cuda"}, samples)], time=time, files={"kernel/k.cu": b"// k\n"}),
    )


CONFTEST = "def pytest_addoption(parser):\n    parser.addoption('--runslow', action='store_true')\n"


def make_verified(root: Path) -> Path:
    """A repository whose one test gate is met and up to date (a verify runs nothing)."""
    from tracker.commands import verify

    plan = plan_text("0001", phase("P1", 'test = "tests/test_a.py"'))
    make_files(
        root,
        {
            "plans/0001-a.md": plan,
            "tests/test_a.py": TEST_A_NEWUSER_VERIFY,
            "tests/conftest.py": CONFTEST,
            ".gitignore": IGNORE_NEWUSER_VERIFY,
        },
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
    (mixed / "kernel/k.cu").write_text("int k = 1;  // faster now?\n")
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
                 ".gitignore": IGNORE_NEWUSER_VERIFY})  # fmt: skip
    put_result(root, [100.0] * 5)
    res = cli(root, "verify", "--bench", "--force")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P1#1" not in res.out
    assert res.out.count("UNMET 0001/P1#1 m.time_us: ") == 1 and "exited with 3: its results are not used" in res.out


def test_a_result_file_whose_name_is_not_utf8_is_read_by_status_and_verify(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", BENCH)), ".gitignore": IGNORE_NEWUSER_VERIFY})
    put_result(root, [100.0] * 5)
    (root / "bench/results/r.json").rename(root / os.fsdecode(b"bench/results/r-\xff.json"))
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["plans"][0]["phases"][0]["status"] == "done"
    assert cli(root, "verify").code == 0


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
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", gate)), ".gitignore": IGNORE_NEWUSER_VERIFY})
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
    (verified / "tests/test_a.py").write_text(f"{mark}('m')\n\n\n" + TEST_A_NEWUSER_VERIFY)
    check_pytest_args(verified, ["-x", "--runslow"], ["tests/test_a.py"])
    assert log.read_text() == "x"


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
    (mixed / "kernel/k.cu").write_text("int k = 2;  // changed\n")
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
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", gate)), ".gitignore": IGNORE_NEWUSER_VERIFY})
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
    root = repo(
        {"plans/0001-a.md": plan, "tests/test_a.py": TEST_A_NEWUSER_VERIFY, ".gitignore": IGNORE_NEWUSER_VERIFY}
    )
    capfd.readouterr()
    with pytest.raises(NoTestsError):
        verify.run(root, [], out=sys.stdout, as_json=True)
    doc = json.loads(capfd.readouterr().out)
    assert doc["exit"] == 5 and doc["phases"][0]["gates"][0]["verdict"] == "unmet"


CHECKOUT = Path(__file__).resolve().parents[3]


TEST_A_REL_EVIDENCE = "def test_x():\n    assert True\n"


FAILING_A = "def test_x():\n    assert False, 'broken now'\n"


PLAN = plan_text(
    "0001", phase("P1", 'test = "tests/test_a.py"') + phase("P2", 'bench = "m"\nwhere = { k = 1 }\nat_most = 5')
)


FILES = {"plans/0001-a.md": PLAN, "tests/test_a.py": TEST_A_REL_EVIDENCE, "conftest.py": "",
         ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n"}  # fmt: skip


STORE = ".tracker/evidence"


def utc(offset_s: float = 0.0) -> str:
    """This machine's time plus ``offset_s``, in the store's shape."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


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


def put(root: Path, name: str, doc: object) -> Path:
    """Write ``doc`` (JSON, or bytes as they are) into the evidence store."""
    path = root / STORE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


def gates(cli: Callable[..., Any], root: Path) -> list[tuple[bool, str]]:
    """(met, reason) of every gate, from ``tracker status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return [(g["met"], g["reason"]) for p in json.loads(res.out)["plans"] for ph in p["phases"] for g in ph["gates"]]


SLOW_A = "import os, time\n\ndef test_x():\n    open(os.environ['MARK'], 'w').close()\n    time.sleep(2)\n"


def test_a_future_file_in_the_store_is_invalid_and_verify_says_so(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """The issue's reproduction: a passing run from 2099 in the store, then the test fails and ``verify --force``."""
    root = repo(FILES)
    put(root, "future.json", run_doc("2099-01-01T00:00:00Z"))
    [(met, reason), _] = gates(cli, root)
    assert not met
    assert reason.startswith("invalid evidence file, fix or remove it: .tracker/evidence/future.json: provenance.time "
                             "2099-01-01T00:00:00Z is in the future: more than 5 minutes after this machine's clock (")  # fmt: skip
    res = cli(root, "check")
    assert res.code == 1 and "future.json: provenance.time 2099-01-01T00:00:00Z is in the future" in res.out
    (root / "tests/test_a.py").write_text(FAILING_A)
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 1, res.out + res.err
    assert "met   0001/P1#1" not in res.out and "UNMET 0001/P1#1" in res.out
    assert (
        "tracker: not used, and every test and bench gate is unmet until it is fixed or removed: .tracker/evidence/future.json"
        in res.out
    )


def test_verify_judges_with_its_own_run_after_a_run_from_a_clock_ahead(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Four minutes ahead is within the tolerated drift: the file is valid, but what verify just ran decides."""
    root = repo(FILES)
    ahead = put(root, "ahead.json", run_doc(utc(240)))
    assert gates(cli, root)[0] == (True, "1 passed")
    (root / "tests/test_a.py").write_text(FAILING_A)
    res = cli(root, "verify", "--force", "0001/P1")
    assert res.code == 1, res.out + res.err
    assert "UNMET 0001/P1#1 tests/test_a.py: tests/test_a.py::test_x: failed: AssertionError: broken now" in res.out
    assert (
        f"tracker: {STORE}/{ahead.name} is recorded later than this run (a clock ahead of this one?): it is put behind it"
        in res.out
    )


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_an_interrupted_verify_says_what_its_finished_run_recorded(repo: Callable[..., Path], tmp_path: Path) -> None:
    root = repo({**FILES, "tests/test_a.py": SLOW_A})
    mark = tmp_path / "started"
    code = "from tracker.cli import main; main(['verify', '0001/P1'])"
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "MARK": str(mark)}
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert mark.exists()
    os.kill(proc.pid, signal.SIGINT)  # the tracker alone: its pytest is not signalled and finishes its run
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    [stored] = (root / STORE).glob("*.json")
    assert json.loads(stored.read_text())["status"] == "complete"
    assert "no result was recorded as passing" not in err
    assert (f"the tracker was stopped, but its pytest run finished and recorded complete evidence in {STORE}/{stored.name} "
            "(1 passed); it counts") in err  # fmt: skip


MARKED = {
    "tests/test_m.py": "import pytest\n\n@getattr(pytest.mark, 'a-b')\ndef test_ab(): pass\n\ndef test_plain(): pass\n"
}


def test_a_marker_pytest_accepts_runs_in_verify(repo, cli) -> None:
    # verify used to end in pytest INTERNALERROR (exit 6): the plugin's selection raised ValueError.
    root = repo(
        {"plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_m.py"\nmarker = "a-b"')), **MARKED}
    )
    r = cli(root, "verify")
    assert r.code == 0, r.out + r.err
    assert "0001/P1#1 tests/test_m.py: 1 passed" in r.out
