"""tracker.core.testgate: which tests a test gate covers when runs come from machines that see different tests.

A run proves a test gone only if it could have seen it: a file skipped at collection (``importorskip``,
``skip(allow_module_level=True)``) hides its tests from that run, and a test another machine generated
(parametrized by the devices there) is gone only once its file changed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tracker_testutil import git, make_files, phase, plan_text

from tracker.commands.common import pytest_command, pytest_env
from tracker.core import gate_tests
from tracker.core.model import RAN, Store, TestGate, TestRun, gate_hash
from tracker.core.run_facts import xfail_known
from tracker.core.testgate import TestIndex

GATE = TestGate("tests/")
KEY = "0001/P1#1"
HASHES = {KEY: gate_hash(GATE)}
V1 = {"tests/test_a.py": "a" * 40, "tests/test_b.py": "b" * 40}


def run(name: str, host: str, time: str, tests: dict[str, str], files: dict[str, str] | None = None) -> TestRun:
    """A verify run of all of ``tests/`` on ``host``: its records ``{nodeid: "outcome[:reason]"}``."""
    recs = [
        {"nodeid": n, "outcome": o.partition(":")[0], "reason": o.partition(":")[2], "markers": []}
        for n, o in tests.items()
    ]
    prov = {"time": f"2026-11-0{time}T10:00:00Z", "host": host, "commit": "c" * 40, "args": ["tests"]}
    prov["accelerator"] = "NVIDIA H200" if host.startswith("gpu") else None  # told apart by their means, not names
    return TestRun(f".tracker/evidence/{name}.json", prov, dict(HASHES), V1 if files is None else files, recs)


def verdict(*runs: TestRun) -> tuple[bool, str]:
    v, _ = TestIndex(Store(runs=list(runs))).verdict(KEY, GATE)
    return v.met, v.reason


GPU = run(
    "gpu", "gpu-box", "1", {"tests/test_a.py::test_a": "passed", "tests/test_b.py::test_b": "failed:kernel wrong"}
)
CPU_SKIP = {"tests/test_a.py::test_a": "passed", "tests/test_b.py": "skipped:CUDA not available"}


def test_a_file_skipped_at_collection_keeps_the_failure_another_run_recorded() -> None:
    for host in ("gpu-box", "cpu-box"):  # the same machine without its GPU, or another one
        met, why = verdict(GPU, run("cpu", host, "2", CPU_SKIP))
        assert not met and why.startswith("tests/test_b.py::test_b: failed: kernel wrong (1 of 2 not passing)"), why
        assert "tests/test_b.py skipped at collection" in why and "CUDA not available" in why, why


def test_a_pass_another_run_recorded_stands_beside_a_collection_skip_and_says_where_it_ran() -> None:
    gpu = run("gpu", "gpu-box", "1", {"tests/test_a.py::test_a": "passed", "tests/test_b.py::test_b": "passed"})
    met, why = verdict(gpu, run("cpu", "cpu-box", "2", CPU_SKIP))
    assert met and why.startswith("2 passed"), why
    assert "1 as last run on gpu-box" in why and "tests/test_b.py skipped at collection on cpu-box" in why, why


def test_a_collection_skip_alone_never_passes() -> None:
    met, why = verdict(run("cpu", "cpu-box", "2", {"tests/test_b.py": "skipped:CUDA not available"}))
    assert (met, why) == (False, "tests/test_b.py: skipped: CUDA not available")


def test_a_test_only_another_machine_generates_stays_until_its_file_changes() -> None:
    gpu = run(
        "gpu", "gpu-box", "1", {"tests/test_b.py::test_b[cpu]": "passed", "tests/test_b.py::test_b[cuda]": "failed:x"}
    )
    cpu = run("cpu", "cpu-box", "2", {"tests/test_b.py::test_b[cpu]": "passed"})
    met, why = verdict(gpu, cpu)
    assert not met and why.startswith("tests/test_b.py::test_b[cuda]: failed: x"), why
    assert "not collected on cpu-box" in why, why
    # The same machine not generating it again while its file is unchanged: an environment variable or a plugin hid
    # it (adv G8), so it stays; an edit of a conftest.py says nothing about one parameter of a file still collected
    # (adv round 3 F2: any edit re-opened the hiding), while one that leaves the whole file out removes it.
    same = verdict(gpu, run("gpu2", "gpu-box", "2", {"tests/test_b.py::test_b[cpu]": "passed"}))
    assert not same[0] and "tests/test_b.py unchanged, its other tests collected" in same[1], same
    conftest = {**V1, "tests/conftest.py": "f" * 40}
    edited = {**V1, "tests/conftest.py": "0" * 40}
    assert not verdict(
        run(
            "gpu",
            "gpu-box",
            "1",
            {"tests/test_b.py::test_b[cpu]": "passed", "tests/test_b.py::test_b[cuda]": "failed:x"},
            conftest,
        ),
        run("gpu2", "gpu-box", "2", {"tests/test_b.py::test_b[cpu]": "passed"}, edited),
    )[0]
    assert verdict(
        run(
            "gpu",
            "gpu-box",
            "1",
            {"tests/test_a.py::test_a": "passed", "tests/test_b.py::test_b": "failed:x"},
            conftest,
        ),
        run("gpu2", "gpu-box", "2", {"tests/test_a.py::test_a": "passed"}, edited),
    ) == (True, "1 passed")
    # The file changed since the GPU run recorded it: the CPU run's collection of it is the code's.
    changed = run(
        "cpu", "cpu-box", "2", {"tests/test_b.py::test_b[cpu]": "passed"}, {**V1, "tests/test_b.py": "e" * 40}
    )
    assert verdict(gpu, changed) == (True, "1 passed")
    gone = run("cpu", "cpu-box", "2", {"tests/test_a.py::test_a": "passed"}, {"tests/test_a.py": "a" * 40})
    assert verdict(gpu, gone) == (True, "1 passed")
    # Cannot tell (a run without file ids): the record stays, unmet beats a false pass.
    blind = run("gpu", "gpu-box", "1", {"tests/test_b.py::test_b[cuda]": "failed:x"}, {})
    assert not verdict(blind, cpu)[0]


def test_a_run_of_the_same_machine_in_between_retires_what_it_did_not_collect() -> None:
    old = run("g0", "gpu-box", "1", {"tests/test_b.py::test_old": "failed:x", "tests/test_b.py::test_b": "passed"})
    gpu = run("g1", "gpu-box", "2", {"tests/test_b.py::test_b": "passed"}, {**V1, "tests/test_b.py": "e" * 40})
    cpu = run("c1", "cpu-box", "3", {"tests/test_b.py": "skipped:CUDA not available"})
    met, why = verdict(old, gpu, cpu)
    assert met and why.startswith("1 passed"), why


def test_a_collection_skip_allowed_by_the_gate_is_reported_never_passed() -> None:
    allowed = TestGate("tests/", skips_allowed=("CUDA not available",))
    store = Store(runs=[run("cpu", "cpu-box", "2", CPU_SKIP)])
    v, _ = TestIndex(store).verdict(KEY, allowed)
    assert (v.met, v.reason) == (True, "1 passed, 1 skipped as allowed")
    store = Store(runs=[run("cpu", "cpu-box", "2", {"tests/test_b.py": "skipped:CUDA not available"})])
    v, _ = TestIndex(store).verdict(KEY, allowed)
    assert (v.met, v.reason) == (False, "0 passed, 1 skipped as allowed: a gate needs at least one pass")


GPU_ONLY = (
    "import os, pytest\nif not os.environ.get('GPU'):\n    {skip}\ndef test_b():\n    assert {ok}, 'kernel wrong'\n"
)
SKIPS = {
    "skip": "pytest.skip('CUDA not available', allow_module_level=True)",
    "importorskip": "pytest.importorskip('no_such_cuda_module_xyz')",
}


def gpu_repo(repo: Any, gate: str, ok: bool, skip: str) -> Path:
    return repo(
        {
            "plans/0001-p.md": plan_text(phases=phase("P1", f'test = "{gate}"', paths='"src/**", "tests/**"')),
            "src/a.py": "x = 1\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "tests/test_b.py": GPU_ONLY.format(skip=SKIPS[skip], ok=ok),
        }
    )


@pytest.mark.parametrize("skip", sorted(SKIPS))
def test_a_cpu_verify_never_erases_the_gpu_failure_of_a_file_it_skips(repo, cli, monkeypatch, skip: str) -> None:
    root = gpu_repo(repo, "tests/", False, skip)
    monkeypatch.setenv("GPU", "1")
    r = cli(root, "verify")
    assert (
        r.code == 1 and "UNMET 0001/P1#1 tests/: tests/test_b.py::test_b: failed: AssertionError: kernel wrong" in r.out
    ), r.out
    monkeypatch.delenv("GPU")
    r = cli(root, "verify", "--force")  # the CPU box: tests/test_b.py skips at import
    assert (
        r.code == 1 and "UNMET 0001/P1#1 tests/: tests/test_b.py::test_b: failed: AssertionError: kernel wrong" in r.out
    ), r.out
    assert "0001/P1 is done" not in r.out and "done" not in cli(root, "status").out


def test_readmes_gpu_example_a_cpu_run_that_skips_the_gpu_file_keeps_its_pass(repo, cli, monkeypatch) -> None:
    root = gpu_repo(repo, "tests/test_b.py", True, "importorskip")
    monkeypatch.setenv("GPU", "1")
    assert cli(root, "verify").code == 0
    monkeypatch.delenv("GPU")
    r = cli(root, "verify", "--force")
    assert r.code == 0 and "met   0001/P1#1 tests/test_b.py: 1 passed" in r.out, r.out
    assert "skipped at collection" in r.out and "0 tests collected" not in r.out, r.out
    # Never run anywhere but skipped here: unmet, with the skip's reason.
    fresh = gpu_repo(repo, "tests/test_b.py", True, "skip")
    for f in (fresh / ".tracker" / "evidence").glob("*.json"):
        f.unlink()
    r = cli(fresh, "verify", "--force")
    assert r.code == 1 and "UNMET 0001/P1#1 tests/test_b.py: skipped: CUDA not available" in r.out, r.out


def test_a_cpu_verify_never_erases_a_device_parametrized_failure_from_the_gpu_box(repo, cli, monkeypatch) -> None:
    devices = (
        "import os, pytest\n"
        "DEV = ['cpu'] + (['cuda'] if os.environ.get('GPU') else [])\n"
        "@pytest.mark.parametrize('dev', DEV)\n"
        "def test_b(dev):\n"
        "    assert dev == 'cpu', 'kernel wrong'\n"
    )
    root = repo(
        {
            "plans/0001-p.md": plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"')),
            "tests/test_b.py": devices,
        }
    )
    monkeypatch.setenv("GPU", "1")
    assert cli(root, "verify").code == 1
    (ev,) = (root / ".tracker" / "evidence").glob("*.json")  # as if recorded on the GPU machine and ingested
    doc = json.loads(ev.read_text())
    doc["provenance"]["host"] = "gpu-box"
    ev.write_text(json.dumps(doc))
    monkeypatch.delenv("GPU")
    r = cli(root, "verify", "--force")
    assert r.code == 1 and "tests/test_b.py::test_b[cuda]: failed: AssertionError: kernel wrong" in r.out, r.out
    assert "not collected on" in r.out, r.out


FAST_IGNORE = "import os\ncollect_ignore = ['test_b.py'] if os.environ.get('FAST') else []\n"
FAST_PARAMS = (
    "import os, pytest\n"
    "@pytest.mark.parametrize('n', [1] if os.environ.get('FAST') else [1, 2])\n"
    "def test_c(n):\n"
    "    assert n == 1\n"
)


@pytest.mark.parametrize("hide", ["collect_ignore", "parametrize"])
def test_an_environment_variable_that_hides_a_failing_test_never_makes_the_gate_met(
    repo, cli, monkeypatch, hide
) -> None:
    # adv G8: FAST=1 in a conftest's collect_ignore (or a test's parameters) kept the failing test from being
    # collected, and the run of all of tests/ proved it gone: done. Its file and conftest.py are unchanged since the
    # run that recorded the failure, so nothing in the code removed it: it stays until a run collects it again.
    files = {
        "plans/0001-p.md": plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"')),
        "tests/test_a.py": "def test_a():\n    pass\n",
    }
    if hide == "collect_ignore":
        files |= {"tests/conftest.py": FAST_IGNORE, "tests/test_b.py": "def test_b():\n    assert False\n"}
        failing = "tests/test_b.py::test_b: failed"
    else:
        files |= {"tests/test_c.py": FAST_PARAMS}
        failing = "tests/test_c.py::test_c[2]: failed"
    root = repo(files)
    assert cli(root, "verify").code == 1
    monkeypatch.setenv("FAST", "1")
    r = cli(root, "verify", "--force")
    assert r.code == 1 and failing in r.out and "unchanged" in r.out and "a change to tests/" in r.out, r.out
    assert "done" not in cli(root, "status").out
    if hide == "collect_ignore":
        # The conftest.py changed to leave the file out for good: a change in the code, so it is gone.
        (root / "tests" / "conftest.py").write_text("collect_ignore = ['test_b.py']\n")
        monkeypatch.delenv("FAST")
        r = cli(root, "verify", "--force")
        assert r.code == 0 and "met   0001/P1#1 tests/: 1 passed" in r.out, r.out


HIDE_B = "def pytest_ignore_collect(collection_path, config):\n    return True if collection_path.name == 'test_b.py' else None\n"


def test_a_gate_plugin_in_the_repository_that_hides_a_failing_file_never_makes_the_gate_met(repo, cli) -> None:
    # adv G5: options = ["-p", "hideplug"], a module of the repository that keeps tests/test_b.py from being
    # collected: the run with the gate's options named the gate's tests without it, and the gate was met.
    gate = 'test = "tests/"'
    plan = plan_text(phases=phase("P1", gate, paths='"tests/**"'))
    root = repo(
        {
            "plans/0001-p.md": plan,
            "hideplug.py": HIDE_B,
            "tests/test_a.py": "def test_a():\n    pass\n",
            "tests/test_b.py": "def test_b():\n    assert False\n",
        }
    )
    assert cli(root, "verify").code == 1
    (root / "plans" / "0001-p.md").write_text(plan.replace(gate, gate + '\noptions = ["-p", "hideplug"]'))
    r = cli(root, "verify")
    assert r.code == 1 and "tests/test_b.py::test_b: failed" in r.out, r.out
    assert "done" not in cli(root, "status").out


def test_an_xfail_the_gate_allows_is_reported_and_one_it_does_not_stays_unmet() -> None:
    # Issue 30 (markdown-it-py's xfail_strict suite): an xfailed test was always unmet, so a directory holding one known
    # failure could never be done. A gate may say which known failures it expects, by reason; it still needs a pass.
    recs = {"tests/test_a.py::test_a": "passed", "tests/test_b.py::test_b": "xfailed:known: no fill value"}

    def judged(gate: TestGate, tests: dict[str, str]) -> tuple[bool, str]:
        r = run("r", "box", "1", tests)
        r.gates[KEY] = gate_hash(gate)
        v, _ = TestIndex(Store(runs=[r])).verdict(KEY, gate)
        return v.met, v.reason

    allowing = TestGate("tests/", xfails_allowed=("known: ",))
    assert judged(allowing, recs) == (True, "1 passed, 1 xfailed as allowed")
    met, why = judged(GATE, recs)
    assert not met and why.startswith("tests/test_b.py::test_b: xfailed: known: no fill value"), why
    assert not judged(TestGate("tests/", xfails_allowed=("flaky",)), recs)[0]
    alone = {"tests/test_b.py::test_b": "xfailed:known: no fill value"}
    assert judged(allowing, alone) == (False, "0 passed, 1 xfailed as allowed: a gate needs at least one pass")


def test_a_gate_naming_one_test_allows_no_xfail(repo, cli) -> None:
    body = 'test = "tests/test_a.py::test_a"\nxfails_allowed = ["known"]'
    root = repo(
        {"plans/0001-p.md": plan_text(phases=phase("P1", body)), "tests/test_a.py": "def test_a():\n    pass\n"}
    )
    r = cli(root, "lint", "--no-collect")
    assert r.code == 2 and "xfails_allowed: a gate naming one test by id allows no xfail (an xfail never" in r.out, (
        r.out
    )


def fast_repo(repo: Any, extra: dict[str, str] | None = None) -> Path:
    """A repository whose tests/test_c.py has a parameter only collected without FAST (failing)."""
    files = {
        "plans/0001-p.md": plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"')),
        "tests/test_a.py": "def test_a():\n    pass\n",
        "tests/test_c.py": FAST_PARAMS,
        **(extra or {}),
    }
    return repo(files)


@pytest.mark.parametrize(
    "extra", [("--pytest-arg=--doctest-modules",), ("--pytest-arg=--import-mode=append",)], ids=["doctest", "append"]
)
def test_another_option_never_proves_an_environment_hidden_test_gone(repo, cli, monkeypatch, extra) -> None:
    # adv round 3 F1: any difference of options between the two runs proved test_c[2] gone: done.
    root = fast_repo(repo)
    assert cli(root, "verify").code == 1
    monkeypatch.setenv("FAST", "1")
    r = cli(root, "verify", "--force", *extra)
    if "import-mode" in extra[0]:  # adv round 6: another import mode may change outcomes: verify refuses it
        assert r.code == 3 and "may turn a failing test into a pass" in r.err, r.out + r.err
        assert " done " not in cli(root, "status").out
        return
    assert r.code == 1 and "tests/test_c.py::test_c[2]: failed" in r.out, r.out


def test_an_unrelated_edit_of_the_project_file_never_proves_a_hidden_test_gone(repo, cli, monkeypatch) -> None:
    # adv round 3 F2: a version bump in pyproject.toml (no pytest section) counted as "the code removed it".
    root = fast_repo(repo, {"pyproject.toml": '[project]\nname = "x"\nversion = "1.0"\n'})
    assert cli(root, "verify").code == 1
    (root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.1"\n')
    monkeypatch.setenv("FAST", "1")
    r = cli(root, "verify", "--force")
    assert r.code == 1 and "tests/test_c.py::test_c[2]: failed" in r.out, r.out


PICK = "def pytest_pycollect_makeitem(collector, name, obj):\n    if name == 'test_bad':\n        return []\n"


def test_a_gate_plugin_that_hides_one_test_of_a_file_never_makes_the_gate_met(repo, cli) -> None:
    # adv round 3 F3: the -p plugin kept one test of a file from being collected; the options differed, so it was gone.
    gate = 'test = "tests/"'
    plan = plan_text(phases=phase("P1", gate, paths='"tests/**"'))
    root = repo(
        {
            "plans/0001-p.md": plan,
            "hideplug.py": PICK,
            "tests/test_b.py": "def test_ok():\n    pass\ndef test_bad():\n    assert False\n",
        }
    )
    assert cli(root, "verify").code == 1
    (root / "plans" / "0001-p.md").write_text(plan.replace(gate, gate + '\noptions = ["-p", "hideplug"]'))
    r = cli(root, "verify")
    assert r.code == 1 and "tests/test_b.py::test_bad: failed" in r.out, r.out


def test_a_file_restored_to_the_failing_runs_bytes_is_judged_against_the_newest_run(repo, cli, monkeypatch) -> None:
    # adv round 3 F4: an intermediate run had another version of the file, so the restored one's hidden failure
    # was gone. Only the newest run of all of the gate decides.
    root = fast_repo(repo)
    assert cli(root, "verify").code == 1
    failing = (root / "tests/test_c.py").read_text()
    (root / "tests/test_c.py").write_text("def test_c():\n    pass\n")
    assert cli(root, "verify").code == 0
    (root / "tests/test_c.py").write_text(failing)
    monkeypatch.setenv("FAST", "1")
    r = cli(root, "verify", "--force")
    assert r.code == 1 and "tests/test_c.py::test_c[2]: failed" in r.out, r.out


def test_a_test_file_git_ignores_never_proves_a_hidden_test_gone(repo, cli, monkeypatch) -> None:
    # adv round 3 F5: an ignored (generated) test file has no file id, and the same machine counted as proof.
    root = repo(
        {
            "plans/0001-p.md": plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"')),
            ".gitignore": "tests/gen_*/\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "tests/gen_x/test_c.py": FAST_PARAMS,
        }
    )
    assert cli(root, "verify").code == 1
    monkeypatch.setenv("FAST", "1")
    r = cli(root, "verify", "--force")
    assert r.code == 1 and "test_c[2]: failed" in r.out and "ignored by git" in r.out, r.out


def test_a_kept_test_says_how_to_retire_it(repo, cli, monkeypatch) -> None:
    # adv round 3 F7: a parameter dropped through a data file stays; the message names the way out.
    root = fast_repo(repo)
    assert cli(root, "verify").code == 1
    monkeypatch.setenv("FAST", "1")
    r = cli(root, "verify", "--force")
    assert "gone for good? a change to tests/test_c.py retires it" in r.out, r.out


def test_a_test_whose_ids_were_all_renamed_or_that_never_ran_is_not_kept() -> None:
    # Our own 0001/P2: pytest 9.2 names a long string parameter otherwise than 9.1 did, the file unchanged; and a test
    # only ever deselected has no outcome to keep. Neither stays as "not collected".
    old = run(
        "old", "box", "1", {"tests/test_b.py::test_b[long text]": "failed:x", "tests/test_a.py::test_a": "passed"}
    )
    old.provenance["pytest"] = "9.1.0"
    new = run("new", "box", "2", {"tests/test_b.py::test_b[s0]": "passed", "tests/test_a.py::test_a": "passed"})
    new.provenance["pytest"] = "9.2.0"
    assert verdict(old, new) == (True, "2 passed")  # every id of the function renamed by another pytest: gone
    new.provenance["pytest"] = "9.1.0"
    assert not verdict(old, new)[0]  # the same pytest and conftest: disjoint ids may be an environment's choice
    new.provenance["pytest"] = "9.2.0"
    kept = run("new", "box", "2", {"tests/test_b.py::test_b[s0]": "passed", "tests/test_b.py::test_b[long text]": "x"})
    kept.tests[:] = [t for t in kept.tests if t["nodeid"] != "tests/test_b.py::test_b[long text]"]
    old.tests.append({"nodeid": "tests/test_b.py::test_b[s0]", "outcome": "passed", "reason": "", "markers": []})
    assert not verdict(old, new)[0]  # one id of it still there: the other was hidden, not renamed
    never = run("never", "box", "1", {"tests/test_b.py::test_x": "deselected", "tests/test_a.py::test_a": "passed"})
    assert verdict(never, run("w", "box", "2", {"tests/test_a.py::test_a": "passed"})) == (True, "1 passed")


def test_an_ingested_run_between_never_proves_a_hidden_test_gone(repo, cli, monkeypatch, tmp_path) -> None:
    # adv round 4 #1: a JUnit run records no pytest version, which read as "another pytest"; #4: a reportlog records no
    # ini file, which read as "the ini file changed" for a file hidden whole.
    from tracker.commands.common import pytest_command, pytest_env

    ini = "[tool.pytest.ini_options]\naddopts = ''\n"
    hidden = {"tests/conftest.py": FAST_IGNORE.replace("test_b.py", "test_c.py"), "pyproject.toml": ini}
    for kind, extra in (("junit", {}), ("reportlog", hidden)):
        root = fast_repo(repo, extra)
        assert cli(root, "verify").code == 1
        out = tmp_path / f"{kind}.out"
        flag = f"--junitxml={out}" if kind == "junit" else f"--report-log={out}"
        subprocess.run([*pytest_command(), "-q", "tests/", flag], cwd=root, env=pytest_env(root), capture_output=True)
        assert cli(root, "ingest", "--host", "ci", str(out)).code == 0
        monkeypatch.setenv("FAST", "1")
        r = cli(root, "verify", "--force")
        monkeypatch.delenv("FAST")
        assert r.code == 1 and "test_c" in r.out and "failed" in r.out, (kind, r.out)
        shutil.rmtree(root)


def test_a_debug_edit_in_between_never_proves_a_hidden_test_gone(repo, cli, monkeypatch) -> None:
    # adv round 4 #3: a run on other bytes of the file (a debug print, a bisect checkout) was the newest record, so
    # the restored file counted as changed. A run that recorded it on the bytes the judge ran decides.
    root = fast_repo(repo)
    assert cli(root, "verify").code == 1
    clean = (root / "tests/test_c.py").read_text()
    (root / "tests/test_c.py").write_text(clean.replace("assert n == 1", "print(n)\n    assert n == 1"))
    assert cli(root, "verify").code == 1
    (root / "tests/test_c.py").write_text(clean)
    monkeypatch.setenv("FAST", "1")
    r = cli(root, "verify", "--force")
    assert r.code == 1 and "tests/test_c.py::test_c[2]: failed" in r.out, r.out


def test_a_run_started_in_a_subfolder_never_names_the_gates_tests(repo, cli) -> None:
    # adv round 4 #5: `cd tests && pytest --tracker-record=../.tracker/evidence` (no ini file: rootdir tests/) recorded
    # ids relative to tests/ and arguments [""] that read as the whole tree: the failing test was retired.
    from tracker.commands.common import pytest_command, pytest_env

    root = repo(
        {
            "plans/0001-p.md": plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"')),
            "tests/test_a.py": "def test_a():\n    pass\n",
            "tests/test_c.py": "def test_c():\n    assert False\n",
        }
    )
    assert cli(root, "verify").code == 1
    record = ["--tracker-record=../.tracker/evidence"]
    subprocess.run([*pytest_command(), "-q", *record], cwd=root / "tests", env=pytest_env(root), capture_output=True)
    cmd = [*pytest_command(), "-q", "tests/test_a.py", "--tracker-record"]
    subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True)
    assert "done" not in cli(root, "status").out.splitlines()[1]


def test_parameters_renamed_by_a_conftest_are_gone_and_the_gate_fresh(repo, cli) -> None:
    # adv round 4 #7: a conftest's pytest_make_parametrize_id renamed every id: the old ones were kept ("4 passed" for
    # 2 tests) and their run kept the phase stale whatever verify ran.
    root = repo(
        {
            "plans/0001-p.md": plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"')),
            "tests/test_c.py": "import pytest\n@pytest.mark.parametrize('s', ['alpha', 'beta'])\ndef test_c(s):\n    pass\n",
        }
    )
    assert cli(root, "verify").code == 0
    hook = "def pytest_make_parametrize_id(config, val, argname):\n    return f'{argname}-{val}'\n"
    (root / "tests/conftest.py").write_text(hook)
    r = cli(root, "verify")
    assert r.code == 0 and "met   0001/P1#1 tests/: 2 passed" in r.out, r.out
    assert "done" in cli(root, "status").out


def test_an_import_mode_other_than_importlib_never_proves_a_hidden_doctest_gone() -> None:
    # adv round 4 #6: --import-mode=append names doctests as prepend does; only importlib names them otherwise.
    gate = TestGate("src/", options=("--doctest-modules",))
    old_ids = {"src/mod.py::mod.f": "passed", "src/mod.py::mod.slow": "failed:x"}

    def judged(new_ids: dict[str, str], mode: str | None) -> bool:
        old = run("old", "box", "1", old_ids, {"src/mod.py": "a" * 40})
        new = run("new", "box", "2", new_ids, {"src/mod.py": "a" * 40})
        for r in (old, new):
            r.provenance["args"], r.gates[KEY] = ["src"], gate_hash(gate)
            r.provenance["options"] = ["--doctest-modules"]
        if mode:
            new.provenance["options"].append(mode)
        return TestIndex(Store(runs=[old, new])).verdict(KEY, gate)[0].met

    assert not judged({"src/mod.py::mod.f": "passed"}, None)
    assert not judged({"src/mod.py::mod.f": "passed"}, "--import-mode=append")
    # importlib names them after their package: the old ones are gone
    assert judged({"src/mod.py::src.mod.f": "passed"}, "--import-mode=importlib")


def test_a_long_parameter_another_pytest_renamed_is_gone() -> None:
    # Our own 0001/P2: pytest 9.2 names a str parameter over 100 characters argnameN where 9.1 wrote it out; the
    # kept 9.1 id's run kept the phase stale whatever verify ran.
    long = "x" * 120
    old = run("old", "box", "1", {f"tests/test_b.py::test_b[{long}]": "passed", "tests/test_b.py::test_b[a]": "passed"})
    new = run("new", "box", "2", {"tests/test_b.py::test_b[s0]": "passed", "tests/test_b.py::test_b[a]": "passed"})
    old.provenance["pytest"], new.provenance["pytest"] = "9.1.0", "9.2.0"
    assert verdict(old, new) == (True, "2 passed")
    new.provenance["pytest"] = "9.1.0"
    # The same pytest: it was hidden, not renamed, and kept; its pass never ran beside the newest run's (round 14, F2).
    met, reason = verdict(old, new)
    assert not met and "never passed together" in reason and "kept 1" in reason


def test_one_parameter_renamed_by_a_conftest_edit_is_gone_and_one_hidden_stays() -> None:
    # Our own 0001/P2: tests/conftest.py's pytest_make_parametrize_id renamed the one long parameter of three; the
    # old id was kept (its function's other ids were unchanged) and its run kept the phase stale.
    ids = {"tests/test_b.py::test_b[a]": "passed", "tests/test_b.py::test_b[b]": "passed"}
    old = run(
        "old",
        "box",
        "1",
        {**ids, "tests/test_b.py::test_b[message0]": "failed:x"},
        {**V1, "tests/conftest.py": "1" * 40},
    )
    edited = {**V1, "tests/conftest.py": "2" * 40}
    renamed = run("new", "box", "2", {**ids, "tests/test_b.py::test_b[long...51150583b582]": "passed"}, edited)
    assert verdict(old, renamed) == (True, "3 passed")
    hidden = run("new", "box", "2", ids, edited)
    assert not verdict(old, hidden)[0]  # fewer ids than before: one was hidden, whatever the conftest says


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


def test_a_test_a_run_skipped_is_left_to_the_runs_that_ran_it() -> None:
    """A CPU run of a gate with a GPU test skips that test; the GPU machine's run (`-m gpu`) passed it: the CPU run
    ran all the others together, and the gate is met. The same skip on the machine of the pass is no such case
    (round 14, F3): machines differ by host, CPU or the driver's GPUs (round 15, A2)."""
    from tracker.core.model import Store, TestGate, TestRun
    from tracker.core.testgate import TestIndex

    def run(name: str, accelerator: str | None, outcomes: dict[str, str], args: list[str]) -> TestRun:
        prov = {"time": f"2026-12-01T00:00:0{name[-1]}Z", "host": "vm", "cpu": "Intel Xeon", "commit": "c" * 40}
        prov |= {"accelerator": accelerator, "args": args}
        tests = [{"nodeid": f"t.py::{n}", "outcome": o, "reason": "", "markers": []} for n, o in outcomes.items()]
        return TestRun(f".tracker/evidence/{name}.json", prov, {}, {"t.py": "1" * 40}, tests)

    gpu = run("r1", "NVIDIA H200", {"test_cpu": "deselected", "test_gpu": "passed"}, ["t.py"])
    cpu = run("r2", None, {"test_cpu": "passed", "test_gpu": "skipped"}, ["t.py"])
    verdict, _ = TestIndex(Store(runs=[gpu, cpu])).verdict("0001/P1#1", TestGate("t.py"))
    assert (verdict.met, verdict.reason) == (True, "2 passed")
    here = run("r1", None, {"test_cpu": "deselected", "test_gpu": "passed"}, ["t.py"])
    verdict, _ = TestIndex(Store(runs=[here, cpu])).verdict("0001/P1#1", TestGate("t.py"))
    assert not verdict.met and "t.py::test_gpu: skipped in" in verdict.reason


SLOW_TESTS = (
    "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    assert {value} == 1\n\ndef test_fast():\n    pass\n"
)


MARKER_PLAN = plan_text("0001", phase("P1", 'test = "tests/slow"\nmarker = "slow"'))


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain pytest in ``root`` (no tracker plugin): what a CI machine runs."""
    env_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(env_cmd, cwd=root, capture_output=True, text=True, check=False)


def gate_json(cli: Callable[..., Any], root: Path, plan: int = 0, ph: int = 0) -> dict[str, Any]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)["plans"][plan]["phases"][ph]


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose marker phase ``0001/P1`` (``tests/slow -m slow``) a real ``tracker verify`` made done."""
    from tracker.cli import main

    root = tmp_path_factory.mktemp("verified") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_files(root, {
        "plans/0001-x.md": MARKER_PLAN,
        "tests/slow/test_s.py": SLOW_TESTS.format(value=1),
        "pytest.ini": "[pytest]\nmarkers =\n    slow: slow tests\n",
        ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.xml\n",
    })  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    with pytest.raises(SystemExit) as exc:
        main(["--root", str(root), "verify", "0001/P1"])
    assert exc.value.code in (0, None)
    return root


@pytest.fixture
def done_repo(verified: Path, tmp_path: Path) -> Path:
    """A private copy of ``verified`` (each test may add evidence to it)."""
    return Path(shutil.copytree(verified, tmp_path / "repo", symlinks=True))


def ingest_junit(cli: Callable[..., Any], root: Path, *args: str) -> None:
    run_pytest(root, "--junitxml=ci.xml", *args)
    res = cli(root, "ingest", "--host", "ci2", str(root / "ci.xml"))
    assert res.code == 0, res.out + res.err


def _run(
    name: str,
    time: str,
    tests: dict[str, tuple[str, list[str] | None]],
    *,
    junit: bool = False,
    args: list[str] | None = None,
) -> TestRun:
    recs = []
    for nodeid, (outcome, markers) in tests.items():
        rec: dict[str, Any] = {"nodeid": nodeid, "outcome": outcome, "reason": ""}
        if markers is not None:
            rec["markers"] = markers
        recs.append(rec)
    prov: dict[str, Any] = {"time": time, "host": name, "commit": "c" * 40}
    prov |= {"ingested_from": "junit"} if junit else {}
    prov |= {"args": args} if args is not None else {}
    return TestRun(f".tracker/evidence/{name}.json", prov, {}, {}, recs)


GATE_NEWUSER_GATES = TestGate("tests", "slow")


NODES_NEWUSER_GATES = ["tests/t.py::a", "tests/t.py::b", "tests/u.py::c", "tests/u.py::d"]


SLOW = {"tests/t.py::a", "tests/u.py::c"}


OUTCOMES = ["passed", "failed", "error", "skipped", "xfailed", "deselected"]


@st.composite
def histories(draw: st.DrawFn) -> list[TestRun]:
    """Runs with marker information (the plugin, a reportlog) in time order, each of some of the tests."""
    runs = []
    for i in range(draw(st.integers(0, 5))):
        picked = draw(st.lists(st.sampled_from(NODES_NEWUSER_GATES), unique=True))
        tests = {n: (draw(st.sampled_from(OUTCOMES)), ["slow"] if n in SLOW else []) for n in picked}
        args = draw(st.sampled_from([None, ["tests"], ["tests/t.py"]]))
        runs.append(_run(f"r{i}", f"2026-01-01T00:00:{i:02d}Z", tests, args=args))
    return runs


def test_a_passing_junit_run_keeps_a_marker_gate_met(cli: Callable[..., Any], done_repo: Path) -> None:
    assert gate_json(cli, done_repo)["status"] == "done"
    ingest_junit(cli, done_repo, "tests/slow")
    phase_json = gate_json(cli, done_repo)
    gate = phase_json["gates"][0]
    assert phase_json["status"] == "done", gate
    assert (gate["met"], gate["failed"], gate["reason"]) == (True, False, "1 passed")
    assert gate["source"]["machine"] == "ci2"  # the JUnit run's outcome of a test known to be slow counts


def test_a_junit_failure_of_a_test_known_to_be_marked_regresses(cli: Callable[..., Any], done_repo: Path) -> None:
    (done_repo / "tests/slow/test_s.py").write_text(SLOW_TESTS.format(value=2))
    ingest_junit(cli, done_repo, "tests/slow")
    phase_json = gate_json(cli, done_repo)
    gate = phase_json["gates"][0]
    assert phase_json["status"] == "regressed" and gate["failed"] is True and "assert 2 == 1" in gate["reason"]


def test_a_junit_run_never_adds_a_test_to_a_marker_gate(cli: Callable[..., Any], done_repo: Path) -> None:
    # JUnit cannot say whether test_new is slow: it never joins the gate, but its failure under the gate's
    # path keeps the gate unmet until a run with markers says whether -m selects it (never a false pass).
    (done_repo / "tests/slow/test_new.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_new():\n    assert False\n"
    )
    ingest_junit(cli, done_repo, "tests/slow")
    phase_json = gate_json(cli, done_repo)
    reason = phase_json["gates"][0]["reason"]
    assert phase_json["status"] == "regressed", phase_json
    assert "tests/slow/test_new.py::test_new: failed in a run that records no markers" in reason
    assert "cannot tell whether -m 'slow' selects it" in reason


def test_only_junit_evidence_leaves_a_marker_gate_unmet_with_the_reason(
    cli: Callable[..., Any], repo: Callable[..., Path]
) -> None:
    root = repo({
        "plans/0001-x.md": MARKER_PLAN, "tests/slow/test_s.py": SLOW_TESTS.format(value=1),
        "pytest.ini": "[pytest]\nmarkers =\n    slow: slow tests\n", ".gitignore": "*.xml\n",
    })  # fmt: skip
    ingest_junit(cli, root, "tests/slow")
    phase_json = gate_json(cli, root)
    gate = phase_json["gates"][0]
    assert phase_json["status"] == "planned" and (gate["met"], gate["failed"]) == (False, False)
    assert gate["reason"] == "-m 'slow' cannot be evaluated: the only runs of it record no markers (JUnit XML)"
    assert gate["source"]["machine"] == "ci2"


def test_a_record_without_a_markers_key_counts_like_a_junit_record() -> None:
    known = _run("known", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("passed", ["slow"])}, args=["tests"])
    blind = _run(
        "blind",
        "2026-01-01T00:00:02Z",
        {"tests/t.py::a": ("failed", None), "tests/t.py::b": ("failed", None)},
        args=["tests"],
    )
    verdict, _ = TestIndex(Store(runs=[known, blind])).verdict("0001/P1#1", GATE_NEWUSER_GATES)
    # b is not known to be slow; a is, and its newest outcome (from the blind run) is a failure.
    assert (verdict.met, verdict.failed, verdict.reason) == (False, True, "tests/t.py::a: failed")


def test_a_blind_run_of_the_whole_argument_drops_nothing() -> None:
    known = _run(
        "known",
        "2026-01-01T00:00:01Z",
        {"tests/t.py::a": ("passed", ["slow"]), "tests/t.py::b": ("failed", ["slow"])},
        args=["tests"],
    )
    blind = _run("blind", "2026-01-01T00:00:02Z", {"tests/t.py::a": ("passed", [])}, junit=True, args=["tests"])
    verdict, _ = TestIndex(Store(runs=[known, blind])).verdict("0001/P1#1", GATE_NEWUSER_GATES)
    assert verdict.reason == "tests/t.py::b: failed (1 of 2 not passing)"


def test_a_collection_error_counts_for_a_marker_gate_as_pytest_reports_it() -> None:
    # pytest -m slow reports a file it could not collect whatever -m says: the gate cannot be met on older passes.
    ok = _run(
        "ok",
        "2026-01-01T00:00:01Z",
        {"tests/t.py::a": ("passed", ["slow"]), "tests/u.py::c": ("passed", ["slow"])},
        args=["tests"],
    )
    broken = _run("broken", "2026-01-01T00:00:02Z", {"tests/t.py": ("error", [])}, args=["tests/t.py"])
    verdict, _ = TestIndex(Store(runs=[ok, broken])).verdict("0001/P1#1", GATE_NEWUSER_GATES)
    assert (verdict.met, verdict.failed) == (False, True) and verdict.reason.startswith("tests/t.py: error")
    # A newer JUnit run collected the file again, but it records no markers: only a run with markers retires
    # a marker gate's collection error (what -m selects in that file is unknown until one does).
    fixed = _run("fixed", "2026-01-01T00:00:03Z", {"tests/t.py::a": ("passed", [])}, junit=True)
    verdict, _ = TestIndex(Store(runs=[ok, broken, fixed])).verdict("0001/P1#1", GATE_NEWUSER_GATES)
    assert (verdict.met, verdict.failed) == (False, True) and verdict.reason.startswith("tests/t.py: error")
    # A run with markers of the file alone, on the same code (a hand-built run records no tree), is no run of the
    # gate alone: the file may fail to collect only beside the gate's other files (round 13, A5).
    marked = _run("marked", "2026-01-01T00:00:04Z", {"tests/t.py::a": ("passed", ["slow"])}, args=["tests/t.py"])
    verdict, _ = TestIndex(Store(runs=[ok, broken, fixed, marked])).verdict("0001/P1#1", GATE_NEWUSER_GATES)
    assert (verdict.met, verdict.failed) == (False, True) and verdict.reason.startswith("tests/t.py: error")
    tests = {"tests/t.py::a": ("passed", ["slow"]), "tests/u.py::c": ("passed", ["slow"])}
    alone = _run("alone", "2026-01-01T00:00:05Z", tests, args=["tests"])
    verdict, _ = TestIndex(Store(runs=[ok, broken, fixed, marked, alone])).verdict("0001/P1#1", GATE_NEWUSER_GATES)
    assert (verdict.met, verdict.reason) == (True, "2 passed")


@settings(max_examples=300, deadline=None)
@given(
    history=histories(),
    blind_tests=st.lists(st.sampled_from(NODES_NEWUSER_GATES), unique=True),
    missing_key=st.booleans(),
    args=st.sampled_from([None, ["tests"]]),
)
def test_a_blind_passing_run_never_unmeets_shrinks_or_grows_a_marker_gate(
    history: list[TestRun],
    blind_tests: list[str],
    missing_key: bool,
    args: list[str] | None,
) -> None:
    assume(not (missing_key and args and not blind_tests))  # no records at all: an ordinary empty run of all of it
    blind = _run(
        "zblind",
        "2026-01-01T00:01:00Z",
        {n: ("passed", None if missing_key else []) for n in blind_tests},
        junit=not missing_key,
        args=args,
    )
    before, after = TestIndex(Store(runs=history)), TestIndex(Store(runs=[*history, blind]))
    old, new = before.verdict("0001/P1#1", GATE_NEWUSER_GATES)[0], after.verdict("0001/P1#1", GATE_NEWUSER_GATES)[0]
    covered = {r["nodeid"] for r in before.selection("0001/P1#1", GATE_NEWUSER_GATES)[1]}
    assert {r["nodeid"] for r in after.selection("0001/P1#1", GATE_NEWUSER_GATES)[1]} == covered
    assert not (old.met and not new.met)

    def passes(nodeid: str) -> bool:  # the newest outcome where it ran is a pass
        ran = [x["outcome"] for _, x in before.history.get(nodeid, []) if x["outcome"] in RAN]
        return bool(ran) and ran[0] == "passed"

    # A JUnit pass never counts for a test known to be xfail (JUnit writes an xpass as a pass).
    def blind_pass(n: str) -> bool:
        return n in blind_tests and (missing_key or not xfail_known(before.history.get(n, [])))

    # Met only once some run collected all of the gate (adv F3: gate_tests.named); histories() record no arguments.
    named = gate_tests.named(after, "0001/P1#1", GATE_NEWUSER_GATES)

    def standing(n: str) -> bool:  # a failure only a run of the gate alone retires (RunIndex.alone)
        return after._standing_failure(GATE_NEWUSER_GATES, n, after.tests_of(n)) is not None

    def together() -> bool:  # the newest run of all of the gate (rounds 13-15: its arguments cover it, not JUnit)
        # that collected every test of the gate passed each: no skip counts, one machine (no CPU model) ran them all
        tests = sorted(n for n in covered if "::" in n)
        if len(tests) < 2:
            return True
        for run in reversed([*history, blind]):
            if run.provenance.get("args") != ["tests"] or run.provenance.get("ingested_from") == "junit":
                continue
            worst: dict[str, str] = {}
            for x in run.tests:
                rank = 0 if x["outcome"] in ("failed", "error", "xpassed") else 1 if x["outcome"] in RAN else 2
                have = worst.get(x["nodeid"])
                if have is None or rank < (0 if have in ("failed", "error", "xpassed") else 1 if have in RAN else 2):
                    worst[x["nodeid"]] = x["outcome"]
            got = [worst.get(n) for n in tests]
            if all(g is not None and (g in RAN or g == "skipped") for g in got):
                return all(g == "passed" for g in got)
        return False

    clear = all((blind_pass(n) or passes(n)) and not standing(n) for n in covered)
    assert new.met == (old.met or (named and bool(covered) and clear and together()))
    assert not new.failed or old.failed  # passes never make a failure
    if not new.met and "selects 0 tests" in new.reason:
        assert not new.failed


def test_a_failure_is_failed_whichever_test_is_listed_first() -> None:
    # a never ran here (a GPU test skipped on CPU), c failed: the gate's verdict is the failure, not the skip.
    run = _run(
        "r", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("skipped", ["slow"]), "tests/u.py::c": ("failed", ["slow"])}
    )
    verdict, _ = TestIndex(Store(runs=[run])).verdict("0001/P1#1", GATE_NEWUSER_GATES)
    assert (verdict.failed, verdict.reason) == (True, "tests/u.py::c: failed (2 of 2 not passing)")


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(
    history=histories(),
    blind_tests=st.lists(st.sampled_from(NODES_NEWUSER_GATES), unique=True),
    missing_key=st.booleans(),
    args=st.sampled_from([None, ["tests"]]),
)
def test_a_blind_passing_run_never_unmeets_a_marker_gate_deep(
    history: list[TestRun],
    blind_tests: list[str],
    missing_key: bool,
    args: list[str] | None,
) -> None:
    test_a_blind_passing_run_never_unmeets_shrinks_or_grows_a_marker_gate.hypothesis.inner_test(
        history, blind_tests, missing_key, args
    )


def test_a_deselecting_run_with_markers_keeps_a_junit_failure_in_a_marker_gate() -> None:
    # A reviewer's counterexample to ignoring runs that ran none of a gate's tests: the newest run deselected every
    # test of the file, but its markers say x is slow, so x, which failed in CI (JUnit, no markers), is in the gate.
    gate = TestGate("tests/t.py", "slow")
    known = _run("known", "2026-01-01T00:00:01Z", {"tests/t.py::a": ("passed", ["slow"])}, args=["tests/t.py"])
    ci = _run(
        "ci",
        "2026-01-01T00:00:02Z",
        {"tests/t.py::a": ("passed", []), "tests/t.py::x": ("failed", [])},
        junit=True,
        args=["tests"],
    )
    fast = _run(
        "fast",
        "2026-01-01T00:00:03Z",
        {"tests/t.py::a": ("deselected", ["slow"]), "tests/t.py::x": ("deselected", ["slow"])},
        args=["tests"],
    )
    verdict, _ = TestIndex(Store(runs=[known, ci, fast])).verdict("0001/P1#1", gate)
    assert not verdict.met and verdict.reason.startswith("tests/t.py::x: failed"), verdict


MARKED = {
    "tests/test_m.py": "import pytest\n\n@getattr(pytest.mark, 'a-b')\ndef test_ab(): pass\n\ndef test_plain(): pass\n"
}


def record_rel_plans(root: Path, args: str = "tests") -> None:
    """A plain `pytest --tracker-record` run of ``args`` in ``root`` (as a developer runs it)."""
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", args, "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_marker_pytest_accepts_is_evaluated_as_pytest_does(repo, cli) -> None:
    # `a-b` is one marker name for pytest; status, update and check used to die on it with ValueError.
    text = plan_text(phases=phase("P1", 'test = "tests/test_m.py"\nmarker = "a-b"'))
    root = repo({"plans/0001-demo.md": text, **MARKED})
    record_rel_plans(root)
    r = cli(root, "status", "--json")
    assert (r.code, r.err) == (0, "")
    [p1] = json.loads(r.out)["plans"][0]["phases"]
    assert (p1["status"], p1["gates"][0]["reason"]) == ("done", "1 passed")  # test_plain is not marked a-b
    assert cli(root, "update").code == 0
    assert cli(root, "check").code == 0
    assert cli(root, "lint").code == 0


def test_an_invalid_marker_reaching_evaluation_is_an_unmet_gate() -> None:
    # Plans are validated first; the API still never raises on one (a plan built in code, an old cache).
    from tracker.core.model import Phase, Plan, Store, TestGate
    from tracker.core.testgate import TestIndex

    gate = TestGate("tests/test_m.py", "a and")
    verdict, ever = TestIndex(Store([], [], [])).verdict("0001/P1#1", gate)
    assert (verdict.met, verdict.failed, ever) == (False, False, False)
    assert verdict.reason.startswith("invalid -m expression 'a and': column 6")
    assert Plan("0001", "t", "plans/0001-x.md", phases=(Phase("P1", "t", gates=(gate,)),))
