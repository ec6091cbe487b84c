"""tracker.core.testgate: which tests a test gate covers when runs come from machines that see different tests.

A run proves a test gone only if it could have seen it: a file skipped at collection (``importorskip``,
``skip(allow_module_level=True)``) hides its tests from that run, and a test another machine generated
(parametrized by the devices there) is gone only once its file changed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text

from tracker.core.model import Store, TestGate, TestRun, gate_hash
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
