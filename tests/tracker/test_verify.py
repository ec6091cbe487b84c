"""``tracker verify``'s output and what it writes (tracker/commands/verify.py, verify_bench.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text

IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"
GATE_LINE = ("met  ", "UNMET", "STALE")


def mixed_repo(repo: Callable[..., Path], run: str) -> Path:
    """One phase with a test gate and a bench gate whose ``run`` is ``run`` (make_result.py writes a result
    meeting it)."""
    from resultfiles import case, result, writer_script

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
    every gate up to date verify runs no test, and its argument check let them through (exit 0) where README says
    --pytest-arg values are checked whether or not a test runs."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"'))
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": "def test_a():\n    pass\n", ".gitignore": IGNORE})
    assert cli(root, "verify").code == 0
    r = cli(root, "verify", *(f"--pytest-arg={a}" for a in args))
    assert r.code == 3, r.out + r.err
    assert "pytest-xdist's --" in r.err and "Traceback" not in r.out + r.err


def straddling_repo(repo: Callable[..., Path], samples: list[float], terms: str = "") -> Path:
    """One phase, one bench gate (at_most 1.05) whose command writes a new result file each run, a minute after the
    last: ``samples`` scaled by 1 + N/10⁴ in run N (:func:`resultfiles.writer_script`)."""
    from resultfiles import case, result, writer_script

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
