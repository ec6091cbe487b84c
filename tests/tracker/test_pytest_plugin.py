"""The pytest plugin, through real nested pytest runs: every outcome kind, interrupts, no-git runs."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import make_files, phase, plan_text

from tracker.base.contract import blob_id, running_file
from tracker.commands.common import pytest_command, pytest_env
from tracker.store.evidence import crashed_test

OUTCOMES = """
import pytest

@pytest.fixture
def broken_setup():
    raise RuntimeError("no database")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("cleanup failed")

def test_pass(): pass
def test_fail(): assert 1 == 2, "one is not two"
def test_setup_error(broken_setup): pass
def test_teardown_error(broken_teardown): pass
@pytest.mark.skip(reason="CUDA not available")
def test_skip(): pass
@pytest.mark.xfail(reason="known bug")
def test_xfail(): assert False
@pytest.mark.xfail(reason="fixed?")
def test_xpass(): pass
@pytest.mark.gpu
def test_marked(): pass
@pytest.mark.parametrize("n", [1, 2])
def test_param(n): pass
"""


def run_pytest(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", *args]
    proc = subprocess.run(cmd, cwd=root, env={**pytest_env(root), **(env or {})}, capture_output=True, text=True)
    files = sorted((root / ".tracker" / "evidence").glob("*.json"))
    assert len(files) == 1, proc.stdout + proc.stderr
    return proc.returncode, json.loads(files[0].read_text())


def clear(root: Path) -> None:
    """Delete the recorded evidence (run_pytest expects exactly one file)."""
    for file in (root / ".tracker" / "evidence").glob("*.json"):
        file.unlink()


def by_id(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {t["nodeid"].split("::")[-1]: (t["outcome"], t["reason"]) for t in data["tests"]}


def test_a_test_file_taken_as_the_record_folder_is_a_usage_error(repo) -> None:
    """`pytest --tracker-record tests/test_o.py`: the option's optional folder takes the test path. pytest said
    INTERNALERROR with a traceback (mkdir over the file); it is a usage error (exit 4) that says what to write."""
    root = repo({"tests/test_o.py": "def test_ok(): pass\n"})
    cmd = [
        *pytest_command(),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--rootdir={root}",
        "--tracker-record",
        "tests/test_o.py",
    ]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "--tracker-record: 'tests/test_o.py' is a file, not a folder for the evidence" in proc.stderr
    assert "INTERNALERROR" not in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr
    assert (root / "tests/test_o.py").read_text() == "def test_ok(): pass\n"  # untouched
    # After the paths, or as --tracker-record=DIR, it records.
    code, data = run_pytest(root, "tests/test_o.py", "--tracker-record")
    assert code == 0 and [t["outcome"] for t in data["tests"]] == ["passed"]


def test_records_every_outcome_kind(repo) -> None:
    root = repo({"tests/test_o.py": OUTCOMES, "pytest.ini": "[pytest]\nmarkers = gpu: needs cuda\n"})
    code, data = run_pytest(root, "-m", "not gpu", "tests", "--tracker-record")
    assert code == 1
    assert data["schema"] == "tracker-test-run" and data["status"] == "complete" and data["exitstatus"] == 1
    assert by_id(data) == {
        "test_pass": ("passed", ""),
        "test_fail": ("failed", "AssertionError: one is not two"),
        "test_setup_error": ("error", "setup error: RuntimeError: no database"),
        "test_teardown_error": ("error", "teardown error: RuntimeError: cleanup failed"),
        "test_skip": ("skipped", "CUDA not available"),
        "test_xfail": ("xfailed", "known bug"),
        "test_xpass": ("xpassed", ""),
        "test_marked": ("deselected", ""),
        "test_param[1]": ("passed", ""),
        "test_param[2]": ("passed", ""),
    }
    marked = next(t for t in data["tests"] if t["nodeid"].endswith("test_marked"))
    assert marked["markers"] == ["gpu"]
    prov = data["provenance"]
    assert prov["commit"] and len(prov["commit"]) == 40 and prov["dirty"] is False
    assert prov["pytest"] and prov["python"] and prov["host"] and prov["cuda"] is None
    assert data["files"]["tests/test_o.py"] == blob_id(OUTCOMES.encode())


def test_collection_error_is_recorded(repo) -> None:
    root = repo({"tests/test_bad.py": "import no_such_module\n", "tests/test_ok.py": "def test_ok(): pass\n"})
    code, data = run_pytest(root, "tests", "--tracker-record")
    assert code == 2  # pytest stops after collection when a file failed to collect...
    assert data["status"] == "complete"  # ...but the run finished: its collection error is an outcome
    bad = "collection error: ModuleNotFoundError: No module named 'no_such_module'"
    assert by_id(data) == {"tests/test_bad.py": ("error", bad), "test_ok": ("notrun", "")}
    clear(root)
    code, data = run_pytest(root, "tests", "--tracker-record", "--continue-on-collection-errors")
    assert (code, data["status"]) == (1, "complete")
    assert by_id(data) == {"tests/test_bad.py": ("error", bad), "test_ok": ("passed", "")}


def test_a_file_skipped_at_collection_is_recorded_as_a_skip_of_the_file(repo) -> None:
    # The tracker keeps the tests other runs recorded under such a file (tracker.core.testgate): it must know of the skip.
    root = repo(
        {
            "tests/test_gpu.py": "import pytest\npytest.skip('CUDA not available', allow_module_level=True)\n",
            "tests/test_imp.py": "import pytest\npytest.importorskip('no_such_cuda_module')\n",
            "tests/test_ok.py": "def test_ok(): pass\n",
        }
    )
    code, data = run_pytest(root, "tests", "--tracker-record")
    assert (code, data["status"]) == (0, "complete")
    imp = "could not import 'no_such_cuda_module': No module named 'no_such_cuda_module'"
    assert by_id(data) == {
        "tests/test_gpu.py": ("skipped", "CUDA not available"),
        "tests/test_imp.py": ("skipped", imp),
        "test_ok": ("passed", ""),
    }


def test_keyboard_interrupt_never_records_a_pass(repo) -> None:
    root = repo({"tests/test_k.py": "def test_a(): pass\ndef test_b(): raise KeyboardInterrupt\ndef test_c(): pass\n"})
    code, data = run_pytest(root, "tests", "--tracker-record")
    assert code == 2
    assert data["status"] == "interrupted"


def crash_record(root: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The test a crashed run was running, as the store reads it (:func:`tracker.names.crashed_test`)."""

    [path] = (root / ".tracker" / "evidence").glob("*.json")
    return crashed_test(path, data["running"])


def slot_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".tracker" / "evidence").glob(".*.running"))


def test_crash_leaves_an_incomplete_file_naming_the_test_that_crashed(repo) -> None:
    """The evidence file names the crashed test's file (a reader with it alone counts the crash against that file's
    tests); the running slot beside it names the test, with its markers and the process."""
    root = repo(
        {"tests/test_c.py": "import os, pytest\ndef test_a(): pass\n@pytest.mark.gpu\ndef test_b(): os._exit(3)\n"}
    )
    code, data = run_pytest(root, "tests", "--tracker-record")
    assert code == 3
    assert data["status"] == "incomplete" and data["tests"] == []
    assert data["running"]["nodeid"] == "tests/test_c.py" and data["running"]["markers"] == []
    assert isinstance(data["running"]["pid"], int)
    assert crash_record(root, data) == {
        "nodeid": "tests/test_c.py::test_b",
        "markers": ["gpu"],
        "pid": data["running"]["pid"],
    }


@pytest.mark.parametrize("kill", ["os._exit(3)", "os.kill(os.getpid(), signal.SIGKILL)", "os.abort()"])
def test_a_crash_in_a_later_file_names_that_file_and_test(repo, kill: str) -> None:
    root = repo(
        {
            "tests/test_a.py": "def test_1(): pass\ndef test_2(): pass\n",
            "tests/test_b.py": f"import os, signal\ndef test_1(): pass\ndef test_2(): {kill}\ndef test_3(): pass\n",
        }
    )
    _, data = run_pytest(root, "tests", "--tracker-record")
    assert data["status"] == "incomplete" and data["running"]["nodeid"] == "tests/test_b.py"
    assert crash_record(root, data)["nodeid"] == "tests/test_b.py::test_2"


def test_a_test_alone_in_its_file_is_named_in_the_evidence_file_itself(repo) -> None:
    root = repo(
        {
            "tests/test_a.py": "def test_1(): pass\ndef test_2(): pass\n",
            "tests/test_b.py": "import os\ndef test_only(): os._exit(7)\n",
        }
    )
    _, data = run_pytest(root, "tests", "--tracker-record")
    start = data["running"].pop("pid_start", None)  # the process's start, beside its pid where /proc says it
    assert data["running"] == {"nodeid": "tests/test_b.py::test_only", "markers": [], "pid": data["running"]["pid"]}
    assert crash_record(root, data) == data["running"] and (start is None or start.count(":") == 1)


def test_the_crash_counts_as_an_error_of_the_test_with_the_evidence_file_alone(repo) -> None:
    """Without the slot (a copy that did not carry it, an older tracker) the store reads the crash as an error of
    every test in that file: the test that crashed among them, never a pass."""
    from tracker.base.selection import selects
    from tracker.store import evidence

    root = repo({"tests/test_c.py": "import os\ndef test_a(): pass\ndef test_b(): os._exit(3)\n"})
    _, data = run_pytest(root, "tests", "--tracker-record")
    [path] = (root / ".tracker" / "evidence").glob("*.json")
    running_file(path).unlink()
    store = evidence.load(root, strict=False)
    [run] = store.runs
    [record] = run.tests
    assert record["outcome"] == "error" and selects("tests/test_c.py::test_b", record["nodeid"])
    assert crash_record(root, data) == data["running"]  # no slot: the file


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="process start times come from /proc (Linux)")
def test_a_crashed_runs_pid_taken_by_another_process_still_counts_the_crash(repo) -> None:
    """The kernel gives a dead run's pid to the next process; that process being alive must not make the crashed
    run "still running" (and let the older pass decide again). The running record names the process by its pid
    and its start (boot id and start time), so a process of that pid that started otherwise is another one."""
    from tracker.base.contract import process_identity
    from tracker.store import evidence

    root = repo({"tests/test_c.py": "import os\ndef test_a(): pass\ndef test_b(): os._exit(3)\n"})
    _, data = run_pytest(root, "tests", "--tracker-record")
    [path] = (root / ".tracker" / "evidence").glob("*.json")
    assert data["running"]["pid_start"].count(":") == 1  # <boot id>:<start time in clock ticks>
    recycled = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for where in (path, running_file(path)):  # the crashed run's pid, now that of a live process
            text = where.read_text()
            where.write_text(text.replace(f'"pid": {data["running"]["pid"]}', f'"pid": {recycled.pid}'))
        [run] = evidence.load(root, strict=False).runs
        assert [(t["nodeid"], t["outcome"]) for t in run.tests] == [("tests/test_c.py::test_b", "error")]
        # That very process (the same pid and start): still running, no crash.
        doc = json.loads(path.read_text())
        doc["running"]["pid_start"] = process_identity(recycled.pid)
        path.write_text(json.dumps(doc))
        assert evidence.load(root, strict=False).runs == []
    finally:
        recycled.kill()
        recycled.wait()


def test_no_running_slot_is_left_by_a_run_that_ends(repo) -> None:
    root = repo(
        {
            "tests/test_k.py": "def test_a(): pass\ndef test_b(): raise KeyboardInterrupt\n",
            "tests/test_ok.py": "def test_a(): pass\n",
        }
    )
    _, data = run_pytest(root, "tests/test_ok.py", "--tracker-record")
    assert data["status"] == "complete" and slot_files(root) == []
    clear(root)
    _, data = run_pytest(root, "tests/test_k.py", "--tracker-record")
    assert data["status"] == "interrupted" and "running" not in data and slot_files(root) == []


def test_a_slot_that_cannot_be_written_is_removed_and_the_file_still_counts(repo) -> None:
    """A write of the slot that fails (here: the record of a test with a 200 kB id, past a 64 kB file size limit)
    empties and removes it, so no earlier test is named; the evidence file's file-level record counts the crash."""
    import resource

    long_id = "x" * 200_000
    root = repo(
        {
            "tests/test_c.py": f"import os, pytest\ndef test_a(): pass\n@pytest.mark.parametrize('n', [1], ids=['{long_id}'])\n"
            "def test_b(n): os._exit(3)\n"
        }
    )
    limit = 64 * 1024
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", "tests", "--tracker-record"]
    proc = subprocess.run(
        cmd,
        cwd=root,
        env=pytest_env(root),
        capture_output=True,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    [path] = (root / ".tracker" / "evidence").glob("*.json")
    data = json.loads(path.read_text())
    assert data["running"]["nodeid"] == "tests/test_c.py" and slot_files(root) == []
    assert crash_record(root, data)["nodeid"] == "tests/test_c.py"


def test_a_planted_slot_is_replaced_not_followed(repo, tmp_path: Path) -> None:
    """A file or link already at the slot's name (a run of the same --tracker-file name) is replaced: the slot is
    created new, never written through a link."""
    root = repo({"tests/test_c.py": "import os\ndef test_a(): pass\ndef test_b(): os._exit(3)\n"})
    store = root / ".tracker" / "evidence"
    store.mkdir(parents=True)
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    (store / ".run.json.running").symlink_to(target)
    code, data = run_pytest(root, "tests", "--tracker-record", "--tracker-file=run.json")
    assert code == 3 and target.read_text() == "keep me" and not (store / ".run.json.running").is_symlink()
    assert crash_record(root, data)["nodeid"] == "tests/test_c.py::test_b"


def test_a_finished_run_names_no_running_test(repo) -> None:
    root = repo({"tests/test_c.py": "def test_a(): pass\n"})
    _, data = run_pytest(root, "tests", "--tracker-record")
    assert data["status"] == "complete" and "running" not in data


def test_records_the_arguments_whose_tests_were_all_collected(repo) -> None:
    root = repo({"tests/sub/test_s.py": "def test_ok(): pass\ndef test_other(): pass\n"})
    _, data = run_pytest(root, "./tests/sub/test_s.py::test_ok", "tests/sub/", "--tracker-record")
    assert data["provenance"]["args"] == ["tests/sub/test_s.py::test_ok", "tests/sub"]
    clear(root)
    _, data = run_pytest(root, "tests", "--ignore=tests/sub/test_s.py", "--tracker-record")
    assert data["provenance"]["args"] is None  # --ignore may have kept tests under "tests" from being collected


def test_without_git_uses_env_and_hashes_the_tree(tmp_path: Path) -> None:
    make_files(
        tmp_path,
        {
            "tests/test_a.py": "def test_a(): pass\n",
            "kernel/k.cuh": "k",
            ".venv/x": "v",
            "kernel/__pycache__/k.pyc": "c",
        },
    )
    out = tmp_path / "out"
    _code, _ = 0, None
    cmd = [
        *pytest_command(),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--rootdir={tmp_path}",
        f"--tracker-record={out}",
        "tests",
    ]
    env = {**pytest_env(tmp_path), "TRACKER_COMMIT": "a" * 40, "TRACKER_DIRTY": "1"}
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    [file] = out.glob("*.json")
    data = json.loads(file.read_text())
    assert (data["provenance"]["commit"], data["provenance"]["dirty"]) == ("a" * 40, True)
    assert data["files"] == {"tests/test_a.py": blob_id(b"def test_a(): pass\n"), "kernel/k.cuh": blob_id(b"k")}
    assert f"tracker: evidence complete: {file}" in proc.stdout


def test_plugin_imports_only_stdlib_and_pytest() -> None:
    code = (
        "import sys; before = set(sys.modules); import tracker.pytest_plugin; "
        "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print(sorted(new & {'pydantic', 'git', 'markdown_it', 'typer', 'rich', 'torch'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ}
    ).stdout
    assert out.strip() == "[]"


def test_stopped_early_records_collected_but_not_run(repo) -> None:
    root = repo({"tests/test_x.py": "def test_a():\n    assert False\n\ndef test_b():\n    pass\n"})
    code, data = run_pytest(root, "-x", "tests", "--tracker-record")
    assert code == 1 and data["status"] == "complete"
    assert by_id(data) == {"test_a": ("failed", "assert False"), "test_b": ("notrun", "")}


def test_environment_commit_wins_over_a_stale_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the tree on another machine may carry an old .git: TRACKER_COMMIT/TRACKER_DIRTY, when set, win."""
    from tracker.plugin.machine import provenance

    root = tmp_path / "copy"
    root.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    (root / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "old"], cwd=root, check=True)
    (root / "a.py").write_text("x = 2\n")  # the files moved on; this .git did not
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    monkeypatch.delenv("TRACKER_DIRTY", raising=False)
    from_git = provenance(root)
    assert from_git["dirty"] is True and len(from_git["commit"]) == 40
    monkeypatch.setenv("TRACKER_COMMIT", "c" * 40)
    monkeypatch.setenv("TRACKER_DIRTY", "0")
    assert (provenance(root)["commit"], provenance(root)["dirty"]) == ("c" * 40, False)


def test_explicit_p_on_top_of_the_installed_entry_point_is_fine(tmp_path: Path) -> None:
    """Where tracker is installed, pytest autoloads the plugin; the device recipe's `-p tracker.pytest_plugin`
    must then be a no-op, not "Plugin already registered under a different name" (exit 3)."""
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tracker.pytest_plugin",
            f"--tracker-record={tmp_path / 'ev'}",
            "test_x.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [evidence] = list((tmp_path / "ev").glob("*.json"))
    assert json.loads(evidence.read_text())["status"] == "complete"


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_evidence_files_get_the_modes_of_the_rest_of_the_tree(repo, umask: int) -> None:
    """0o666 less the umask, like every file a shell or git creates (mkstemp made them 0o600), through every
    rewrite of the run's file: at its start, before each test, at its end; and no temp file left."""
    root = repo(
        {
            "tests/test_m.py": "import os, pathlib, stat\n\ndef test_mode():\n"
            "    (run,) = pathlib.Path(os.environ['STORE']).glob('*.json')\n"
            "    assert stat.S_IMODE(run.stat().st_mode) == int(os.environ['MODE'], 8)\n"
        }
    )
    store = root / ".tracker" / "evidence"
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", "tests", "--tracker-record"]
    env = {**pytest_env(root), "STORE": str(store), "MODE": oct(0o666 & ~umask)}
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, preexec_fn=lambda: os.umask(umask))
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the mode while the test ran (the "running" rewrite)
    (run,) = store.glob("*.json")
    assert stat.S_IMODE(run.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in store.iterdir()) == [run.name]


def test_a_file_name_that_is_not_utf8_does_not_crash_the_recorder(repo) -> None:
    """git hands such a name over as bytes, which Python holds as lone surrogates. The recorder once died on it in
    INTERNALERROR, then wrote it as a JSON escape, which made the whole evidence file invalid (not valid Unicode):
    no run in such a repository counted. Now the name is left out of the record, with a warning (a phase whose
    paths cover it finds it added since: stale, tests/tracker/e2e/test_staleness.py), and the file is valid."""
    from tracker.base.contract import Clock
    from tracker.store.evidence_schema import parse_document

    root = repo({"tests/test_a.py": "def test_a(): pass\n"})
    (root / os.fsdecode(b"data-\xff.bin")).write_text("x")
    code, data = run_pytest(root, "tests", "--tracker-record")
    assert code == 0 and data["status"] == "complete"
    assert "tests/test_a.py" in data["files"] and data["files"]["data-\\xff.bin"] == "0" * 40  # escaped, no file's id
    (file,) = (root / ".tracker" / "evidence").glob("*.json")
    parse_document(file.read_bytes(), Clock())  # valid: raises ValueError otherwise


def test_pytest_command_loads_the_plugin_by_name_without_scanning_entry_points() -> None:
    """verify names the plugin with -p always (a no-op on top of the installed entry point, test above): no
    importlib.metadata import in the tracker process to look for the entry point (~10 ms of every verify)."""
    code = (
        "import sys\nfrom tracker.commands.common import pytest_command\ncmd = pytest_command()\n"
        "print(cmd[-2:], 'importlib.metadata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['-p', 'tracker.pytest_plugin'] False"


def fake_installation(site: Path, dist: str, entry_points: str, modules: dict[str, str] | None = None) -> None:
    """A real installed distribution as importlib.metadata finds it: a dist-info folder on the path."""
    info = site / f"{dist.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    for name, text in (modules or {}).items():
        (site / name).write_text(text)


def test_an_installation_whose_entry_point_has_the_old_name_does_not_break_verify(tmp_path: Path) -> None:
    """An install made before the entry point was named as the module (`tracker = tracker.pytest_plugin`, kept by
    an editable install until reinstalled) would load the plugin a second time under 'tracker': pluggy refuses
    that (exit 3). The plugin blocks that name; another package's plugin called `tracker` still loads."""
    site = tmp_path / "site"
    fake_installation(site, "plan-tracker", "[pytest11]\ntracker = tracker.pytest_plugin\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    cmd = [
        *pytest_command(),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--rootdir={tmp_path}",
        f"--tracker-record={tmp_path / 'ev'}",
        "test_x.py",
    ]
    env = {k: v for k, v in pytest_env(tmp_path).items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [evidence] = list((tmp_path / "ev").glob("*.json"))
    assert json.loads(evidence.read_text())["status"] == "complete"

    other = tmp_path / "other"
    fake_installation(
        other,
        "other-pkg",
        "[pytest11]\ntracker = other_tracker_plugin\n",
        {"other_tracker_plugin.py": "import pytest\n\n@pytest.fixture\ndef other_fixture():\n    return 42\n"},
    )
    (tmp_path / "test_y.py").write_text("def test_y(other_fixture):\n    assert other_fixture == 42\n")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(other), pytest_env(tmp_path).get("PYTHONPATH", "")]
    )  # without the old install
    proc = subprocess.run([*cmd[:-1], "test_y.py"], cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the other package's 'tracker' plugin was loaded


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_only_the_last_write_of_the_evidence_file_is_fsynced(repo, tmp_path: Path) -> None:
    """The file at session start counts for nothing until it names a running test, and the rewrites that name one
    are not fsynced (only the process dies): only the last write, the run's outcome, waits for the disk."""
    root = repo(
        {"tests/test_a.py": "def test_a(): pass\ndef test_b(): pass\n", "tests/test_b.py": "def test_c(): pass\n"}
    )
    log = tmp_path / "strace.log"
    cmd = [
        "strace",
        "-f",
        "-y",
        "-e",
        "trace=fsync,fdatasync",
        "-o",
        str(log),
        *pytest_command(),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--rootdir={root}",
        "tests",
        "--tracker-record",
    ]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True)
    if "Operation not permitted" in proc.stderr and not log.exists():
        pytest.skip("ptrace is not allowed here")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [evidence] = (root / ".tracker" / "evidence").glob("*.json")
    synced = [line for line in log.read_text().splitlines() if f".{evidence.name}." in line and "sync(" in line]
    assert len(synced) == 1, synced


@pytest.mark.parametrize(
    ("args", "narrowed"),
    [
        (["--ignore=tests/sub/test_s.py"], "--ignore"),
        (["--ignore-glob=*_s.py"], "--ignore-glob"),
        (["-o", "python_files=x_*.py"], "-o python_files"),
        (["-o", "python_functions=check_*", "-o", "python_classes=Nope"], "-o python_functions, -o python_classes"),
        (["--override-ini=norecursedirs=sub"], "-o norecursedirs"),
        (["-o", "some_plugin_setting=1"], "-o some_plugin_setting"),  # unknown to us: it may change collection
        (["-o", "addopts=--ignore=tests/sub/test_s.py"], "-o addopts"),  # options the command line does not show
        (["@args.txt"], "--ignore"),  # pytest reads arguments from a file: they are the command line's
        (["-c", "other.ini"], "-c"),
        (["--confcutdir=tests"], "--confcutdir"),
        (["--noconftest"], "--noconftest"),
        (["-p", "no:doctest"], "-p no:doctest"),
        # Options that deselect (the tests stay in the record, as deselected) or do not touch collection.
        (["-k", "ok", "--deselect=tests/sub/test_s.py::test_other", "-m", "not slow"], None),
        (["-p", "no:randomly", "-o", "console_output_style=classic", "-x"], None),
    ],
)
def test_records_the_options_that_may_have_narrowed_collection(repo, args: list[str], narrowed: str | None) -> None:
    """A run's collected tests can name a gate's test set only when no option narrowed its collection
    (docs/reference.md, "Status rules"): ``provenance.narrowed`` names them, and ``args`` is null with it."""
    root = repo(
        {
            "tests/sub/test_s.py": "def test_ok(): pass\ndef test_other(): pass\n",
            "other.ini": "[pytest]\n",
            "args.txt": "--ignore=tests/sub/test_s.py\n",
        }
    )
    _, data = run_pytest(root, *args, "tests", "--tracker-record")
    assert data["provenance"].get("narrowed") == narrowed
    assert data["provenance"]["args"] == (None if narrowed else ["tests"])


def test_the_repository_s_own_addopts_never_count_as_narrowing(repo) -> None:
    """``--ignore`` in the repository's ini ``addopts`` defines every run alike (verify's too): what the command
    line and ``PYTEST_ADDOPTS`` add is what narrows one run."""
    root = repo(
        {
            "tests/test_s.py": "def test_ok(): pass\n",
            "tests/legacy/test_l.py": "def test_l(): pass\n",
            "pytest.ini": "[pytest]\naddopts = --ignore=tests/legacy -p no:doctest\n",
        }
    )
    _, data = run_pytest(root, "tests", "--tracker-record")
    assert "narrowed" not in data["provenance"] and data["provenance"]["args"] == ["tests"]
    clear(root)
    _, data = run_pytest(root, "tests", "--tracker-record", env={"PYTEST_ADDOPTS": "--ignore=tests/test_s.py"})
    assert data["provenance"]["narrowed"] == "--ignore" and data["provenance"]["args"] is None


EVIL = "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'other' not in i.nodeid]\n"


@pytest.mark.parametrize(
    ("args", "env", "narrowed"),
    [
        (["-p", "evilplug"], {}, "-p evilplug"),
        ([], {"PYTEST_ADDOPTS": "-p evilplug"}, "-p evilplug"),
        ([], {"PYTEST_PLUGINS": "evilplug"}, "PYTEST_PLUGINS=evilplug"),
        (["--rootdir=tests"], {}, "--rootdir"),
        (["-p", "tracker.pytest_plugin"], {}, None),  # what verify and the device script load
    ],
    ids=["p", "addopts", "plugins_env", "rootdir", "own"],
)
def test_a_plugin_loaded_by_name_or_another_rootdir_narrows_a_run(
    repo, args: list[str], env: dict[str, str], narrowed: str | None
) -> None:
    """adv F1/F4b: `-p NAME`, `PYTEST_ADDOPTS='-p NAME'` and `PYTEST_PLUGINS` load code that may drop tests silently,
    and `--rootdir` elsewhere makes node ids relative to another folder: each narrows the run (args null)."""
    root = repo({"tests/sub/test_s.py": "def test_ok(): pass\ndef test_other(): pass\n", "evilplug.py": "X = 1\n"})
    record = f"--tracker-record={root / '.tracker' / 'evidence'}"  # --rootdir=tests would record under tests/
    _, data = run_pytest(root, *args, "tests", record, env={"PYTHONPATH": str(root), **env})
    assert data["provenance"].get("narrowed") == narrowed, data["provenance"]
    if narrowed is not None:
        assert data["provenance"]["args"] is None


@pytest.mark.parametrize("where", ["conftest.py", "evilplug.py"])
def test_a_collection_hook_that_drops_tests_silently_narrows_the_run(repo, where: str) -> None:
    """adv F1: a `pytest_collection_modifyitems` that removes items without `pytest_deselected` (in a conftest.py or
    a plugin) left a run of `tests` naming only the tests it kept. The plugin compares the items before and after
    every other implementation: tests dropped without a deselection narrow the run, and -k's deselection does not."""
    root = repo({"tests/sub/test_s.py": "def test_ok(): pass\ndef test_other(): pass\n", where: EVIL})
    extra = ["-p", "evilplug"] if where == "evilplug.py" else []
    _, data = run_pytest(root, *extra, "tests", "--tracker-record", env={"PYTHONPATH": str(root)})
    assert "a collection hook dropped 1 test(s)" in data["provenance"]["narrowed"], data["provenance"]
    assert data["provenance"]["args"] is None
    if where == "conftest.py":
        (root / where).unlink()
        clear(root)
        _, data = run_pytest(root, "-k", "ok", "tests", "--tracker-record")
        assert "narrowed" not in data["provenance"] and data["provenance"]["args"] == ["tests"]


def test_a_collection_hook_that_drops_tests_silently_narrows_an_xdist_run(repo) -> None:
    """The same under pytest-xdist: each worker collects, so each compares its items before and after the hooks and
    sends the count to the controller with its notes; the record is narrowed as a serial run's is."""
    root = repo({"tests/sub/test_s.py": "def test_ok(): pass\ndef test_other(): pass\n", "conftest.py": EVIL})
    _, data = run_pytest(root, "-n", "2", "tests", "--tracker-record")
    assert "a collection hook dropped 1 test(s)" in data["provenance"]["narrowed"], data["provenance"]
    assert data["provenance"]["args"] is None


@pytest.mark.parametrize(
    ("args", "altered"),
    [
        (["-p", "no:warnings"], "-p no:warnings"),
        (["-W", "ignore::DeprecationWarning"], "-W"),
        (["-o", "filterwarnings=ignore"], "-o filterwarnings"),
        (["-o", "xfail_strict=false"], "-o xfail_strict"),
        (["--runxfail"], "--runxfail"),
        (["-p", "no:skipping"], "-p no:skipping, ini settings no loaded plugin reads (xfail_strict)"),
        (["--rootdir=tests"], "--rootdir"),
        # adversarial review G1: another ini file or conftest.py files left unloaded drop the repository's own
        # filterwarnings and autouse fixtures too, not only tests
        (["-c", "other.ini"], "-c"),
        (["--noconftest"], "--noconftest"),
        (["--confcutdir=tests"], "--confcutdir"),
        (["-p", "no:cacheprovider", "-o", "console_output_style=classic"], None),
    ],
)
def test_records_the_options_that_may_turn_a_failure_into_a_pass(repo, args: list[str], altered: str | None) -> None:
    """adv F6: with `filterwarnings = error` in the repository's ini, `-p no:warnings`, `-W`, `-o filterwarnings` turn
    its failing test into a pass; `-o xfail_strict`, `--runxfail`, `-p no:skipping` do the same to a strict xpass.
    The run records them in `provenance.altered` (its passes count for no gate, its failures do)."""
    root = repo(
        {
            "pytest.ini": "[pytest]\nfilterwarnings = error\nxfail_strict = true\n",
            "tests/test_w.py": "import warnings\ndef test_w():\n    warnings.warn('old', DeprecationWarning)\n",
            "other.ini": "[pytest]\n",
        }
    )
    _, data = run_pytest(root, *args, "tests", f"--tracker-record={root / '.tracker' / 'evidence'}")
    if altered == "--rootdir":  # the rootdir is tests/: the repository's pytest.ini lies above it (round 16, F1)
        altered += f", configuration outside the repository ({root / 'pytest.ini'})"
    assert data["provenance"].get("altered") == altered, data["provenance"]


def test_a_run_under_python_optimize_records_that_its_asserts_were_stripped(repo) -> None:
    """adversarial review G2: under PYTHONOPTIMIZE (python -O) an assert in a helper module is stripped, so a failing
    check passes; the run records it in `provenance.altered` and its passes count for no gate."""
    root = repo({"tests/test_s.py": "def test_ok(): pass\n"})
    _, data = run_pytest(root, "tests", "--tracker-record", env={"PYTHONOPTIMIZE": "1"})
    assert data["provenance"].get("altered") == "python -O (asserts stripped)", data["provenance"]


def test_records_the_ini_file_pytest_used(repo) -> None:
    """adv F1: the ini file is an input of every gate (its addopts, python_files, ...): the run records which one
    pytest read (`provenance.inifile`, rootdir-relative; null when none), so that editing it makes the phase stale."""
    root = repo({"tests/test_s.py": "def test_ok(): pass\n"})
    _, data = run_pytest(root, "tests", "--tracker-record")
    assert data["provenance"]["inifile"] is None
    clear(root)
    (root / "tox.ini").write_text("[pytest]\n")
    _, data = run_pytest(root, "tests", "--tracker-record")
    assert data["provenance"]["inifile"] == "tox.ini"


def test_an_evidence_store_linked_out_of_the_repository_is_a_usage_error(repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`.tracker` linked out of the repository: its evidence would be refused by every reader, so the plugin writes
    none there; pytest said INTERNALERROR with a traceback at the end of the run, it is a usage error (exit 4) first."""
    root = repo({"tests/test_o.py": "def test_ok(): pass\n"})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / ".tracker").symlink_to(outside)
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", "tests", "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "outside the repository" in proc.stderr and "INTERNALERROR" not in proc.stdout + proc.stderr
    assert list(outside.iterdir()) == []


def test_a_run_records_the_test_files_that_resolve_outside_the_repository(repo, tmp_path: Path) -> None:
    """``provenance.outside`` names each collected test file that is not the repository's: linked out itself, under
    a directory linked out, or below a conftest.py linked out (issue 24 FP3); a link inside is fine, and a run with
    none has no such key. ``--tracker-collect`` (lint's) says the same."""
    outside = tmp_path / "outside"
    (outside / "conf").mkdir(parents=True)
    (outside / "test_x.py").write_text("def test_x():\n    pass\n")
    (outside / "conf" / "conftest.py").write_text("")
    root = repo({"tests/test_real.py": "def test_real():\n    pass\n", "tests/c/test_c.py": "def test_c(): pass\n"})
    code, data = run_pytest(root, "tests", "--tracker-record")
    assert code == 0 and "outside" not in data["provenance"]
    clear(root)
    (root / "tests/test_link.py").symlink_to(outside / "test_x.py")
    (root / "tests/ext").symlink_to(outside)
    (root / "tests/c/conftest.py").symlink_to(outside / "conf" / "conftest.py")
    (root / "tests/test_alias.py").symlink_to("test_real.py")
    code, data = run_pytest(root, "tests", "--tracker-record")
    real = {f: (root / f).resolve() for f in ("tests/test_link.py", "tests/ext/test_x.py", "tests/c/conftest.py")}
    want = {
        "tests/test_link.py": f"tests/test_link.py resolves to {real['tests/test_link.py']}, outside the repository",
        "tests/ext/test_x.py": f"tests/ext/test_x.py resolves to {real['tests/ext/test_x.py']}, outside the repository",
        "tests/c/test_c.py": f"tests/c/conftest.py resolves to {real['tests/c/conftest.py']}, outside the repository",
    }
    assert code == 0 and data["provenance"]["outside"] == want
    assert by_id(data)["test_x"] == ("passed", "")  # it ran: the tracker, not pytest, refuses its pass
    target = tmp_path / "collected.json"
    cmd = [*pytest_command(), "--collect-only", "-q", f"--rootdir={root}", f"--tracker-collect={target}", "tests"]
    subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, check=False)
    assert json.loads(target.read_text())["outside"] == want


# A suite in the style of the projects of issue 30, for the xdist tests: marker gates (one with a skip among its
# tests), a failing test, a skipped test, tests that no gate selects (deselected), a parametrized test, a class.
XDIST_SUITE = {
    "pytest.ini": "[pytest]\nmarkers =\n    gpu: needs cuda\n    slow: slow\n",
    "tests/test_a.py": (
        "import sys\nimport pytest\n\n"
        "@pytest.mark.gpu\ndef test_gpu(): pass\n\n"
        '@pytest.mark.slow\ndef test_slow_fail(): assert 1 == 2, "one is not two"\n\n'
        '@pytest.mark.gpu\n@pytest.mark.skipif(sys.platform != "nonesuch", reason="not on this platform")\n'
        "def test_gpu_skip(): pass\n\n"
        "def test_plain(): pass\n\n"
        "def test_unselected(): pass\n"
    ),
    "tests/test_b.py": (
        "import pytest\n\n"
        '@pytest.mark.gpu\n@pytest.mark.parametrize("n", [1, 2])\ndef test_b_gpu(n): pass\n\n'
        "def test_b_other(): pass\n\n"
        "class TestC:\n    @pytest.mark.slow\n    def test_c(self): pass\n"
    ),
    "tests/test_c.py": "import pytest\n\n@pytest.mark.slow\ndef test_c_slow(): pass\n",
    ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n",
}
XDIST_PLAN = plan_text(
    phases=phase("P1", 'test = "tests"\nmarker = "gpu"')  # a skip among its tests: unmet
    + phase("P2", 'test = "tests/test_a.py"\nmarker = "slow"')  # a failure: unmet
    + phase("P3", 'test = "tests/test_a.py::test_plain"')
    + phase("P4", 'test = "tests/test_b.py"\nmarker = "gpu"')
    + phase("P5", 'test = "tests"\nmarker = "slow and not gpu"')  # the failure again
)


def _same_run(data: dict[str, Any]) -> dict[str, Any]:
    """An evidence file less what differs from run to run (times, durations, the command line, the order tests ran
    in and their xdist workers)."""
    prov = {k: v for k, v in data["provenance"].items() if k not in ("time", "command")}
    tests = [{k: v for k, v in t.items() if k not in ("duration", "order", "worker")} for t in data["tests"]]
    rest = {k: v for k, v in data.items() if k not in ("provenance", "tests", "duration")}
    return {**rest, "provenance": prov, "tests": tests}


def _verdicts(doc: dict[str, Any]) -> list[Any]:
    """verify --json's phases and gate verdicts, less the evidence file each names."""
    return [
        (p["id"], p["status"], p["summary"], [(g["key"], g["verdict"], g["failed"], g["reason"]) for g in p["gates"]])
        for p in doc["phases"]
    ]


@pytest.mark.parametrize("dist", [[], ["--dist", "load"], ["--dist", "loadfile"]], ids=["by-gate", "load", "loadfile"])
def test_verify_under_xdist_judges_and_records_as_a_serial_run(repo, cli, dist: list[str]) -> None:
    """Issue 30: under pytest-xdist (``--pytest-arg=-n --pytest-arg=2``) the controller recorded every marker empty
    and the workers never applied the tracker's deselection: every marker gate 'selected 0 tests' (exit 5) and a
    done phase dropped to planned. The same suite verified serially and with ``-n 2`` now gives the same verdicts
    and the same evidence, timing and the command line aside: markers, deselected tests, a failure, a skip. Without
    a ``--dist`` the tracker schedules by gate; an explicit ``--dist load`` is xdist's, and may split a gate."""
    root = repo({**XDIST_SUITE, "plans/0001-demo.md": XDIST_PLAN})
    serial = cli(root, "verify", "--json")
    assert serial.code == 1, serial.out + serial.err
    xdist_args = [f"--pytest-arg={a}" for a in ["-n", "2", *dist]]
    parallel = cli(root, "verify", "--force", "--json", *xdist_args)
    assert "2 workers" in parallel.err, parallel.err  # xdist ran it
    one, two = json.loads(serial.out), json.loads(parallel.out)
    if dist != ["--dist", "load"]:
        assert (two["exit"], _verdicts(two)) == (one["exit"], _verdicts(one))
    else:  # --dist load splits a file's tests over the workers: they did not pass together (round 14, F1)
        for serial_phase, parallel_phase in zip(_verdicts(one), _verdicts(two), strict=True):
            for was, now in zip(serial_phase[3], parallel_phase[3], strict=True):
                assert now == was or (was[1] == "met" and "split over 2 xdist workers" in now[3]), (was, now)
    assert [p["status"] for p in one["phases"]] == ["planned", "planned", "done", "done", "planned"]
    first, second = (json.loads((root / d[k]).read_text()) for d in (one, two) for k in ["evidence"])
    # xdist's load split is its own: said where it happened, on the gate met serially whose tests it split (P4's two
    # gpu tests; P3's one test cannot split, and a split among tests of unmet gates is said nowhere: they stay unmet)
    p4 = {t.get("worker") for t in second["tests"] if t["nodeid"].startswith("tests/test_b.py::test_b_gpu")}
    if dist == ["--dist", "load"] and len(p4) > 1:
        assert any("split over 2 xdist workers" in g[3] for p in _verdicts(two) for g in p[3]), parallel.err
    assert _same_run(second) == _same_run(first)
    ran = [t for t in second["tests"] if t["outcome"] != "deselected"]
    assert {t.get("worker") for t in ran} <= {"gw0", "gw1"} and sorted(t["order"] for t in ran) == list(range(len(ran)))
    assert all("worker" not in t for t in first["tests"])
    outcomes = {t["nodeid"].split("::", 1)[1]: (t["outcome"], t["markers"]) for t in second["tests"]}
    assert outcomes["test_unselected"] == ("deselected", [])
    assert outcomes["test_b_gpu[1]"] == ("passed", ["gpu", "parametrize"])
    assert outcomes["test_gpu_skip"] == ("skipped", ["gpu", "skipif"])


# For scheduling by gate: a directory gate over two files, two gates on one file sharing its slow test, and a file
# gate sharing no test with them. Each test sleeps a little, so that both workers get some of the work.
SLEEPY = "import time\nimport pytest\n\n"
BY_GATE_SUITE = {
    "pytest.ini": "[pytest]\nmarkers =\n    slow: slow\n",
    "tests/dir/test_d1.py": SLEEPY + "".join(f"def test_d1_{i}(): time.sleep(0.2)\n" for i in range(3)),
    "tests/dir/test_d2.py": SLEEPY + "".join(f"def test_d2_{i}(): time.sleep(0.2)\n" for i in range(3)),
    "tests/test_f.py": SLEEPY
    + "@pytest.mark.slow\ndef test_f_slow(): time.sleep(0.2)\n"
    + "".join(f"def test_f_{i}(): time.sleep(0.2)\n" for i in range(3)),
    "tests/test_solo.py": SLEEPY + "".join(f"def test_solo_{i}(): time.sleep(0.2)\n" for i in range(4)),
    "tests/test_other.py": "def test_no_gate(): pass\n",
    ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n",
}
BY_GATE_GATES = {
    "P1": ('test = "tests/dir"', None),
    "P2": ('test = "tests/test_f.py"', None),
    "P3": ('test = "tests/test_f.py"\nmarker = "slow"', "slow"),
    "P4": ('test = "tests/test_solo.py"', None),
}
BY_GATE_PLAN = plan_text(phases="".join(phase(pid, body) for pid, (body, _) in BY_GATE_GATES.items()))


def test_plain_n_keeps_each_gate_in_one_worker(repo, cli) -> None:
    """Under plain ``-n 2`` (no ``--dist``) the tracker schedules by gate: each gate's tests run in one worker (a
    folder's too, which ``--dist loadfile`` would split), gates that share a test run together, independent gates in
    parallel. Every gate is met, as serially, with the serial run's outcomes."""
    from tracker.base.selection import marker_matches, selects

    root = repo({**BY_GATE_SUITE, "plans/0001-demo.md": BY_GATE_PLAN})
    serial = cli(root, "verify", "--json")
    assert serial.code == 0, serial.out + serial.err
    parallel = cli(root, "verify", "--force", "--json", "--pytest-arg=-n", "--pytest-arg=2")
    assert parallel.code == 0, parallel.out + parallel.err
    assert "2 workers" in parallel.err, parallel.err
    one, two = json.loads(serial.out), json.loads(parallel.out)
    assert _verdicts(two) == _verdicts(one)
    assert [p["status"] for p in two["phases"]] == ["done"] * 4
    first, second = (json.loads((root / d["evidence"]).read_text()) for d in (one, two))
    assert _same_run(second) == _same_run(first)
    ran = [t for t in second["tests"] if t["outcome"] != "deselected"]
    for body, marker in BY_GATE_GATES.values():
        arg = body.split('"')[1]
        mine = [t for t in ran if selects(arg, t["nodeid"]) and marker_matches(marker, t["markers"])]
        assert mine and len({t.get("worker") for t in mine}) == 1, (arg, marker, mine)
    assert {t.get("worker") for t in ran} == {"gw0", "gw1"}, ran  # both workers did some of the work


def test_gate_scopes_join_the_gates_that_share_a_test() -> None:
    """The scope of a test is the group of the gates selecting it (by argument: the controller knows no markers);
    a test no gate selects has none (its file, in the scheduler)."""
    from tracker.plugin.collection import GatePairs
    from tracker.plugin.xdist_schedule import gate_scopes

    args = ["tests/a", "tests/b.py::test_1", "tests/a/test_x.py", "tests/b.py", "tests/c.py"]
    args += ["tests/d.py::test_1", "tests/d.py::test_2"]
    pairs = GatePairs([(a, "slow" if a == "tests/a/test_x.py" else None) for a in args])
    ids = ["tests/a/test_x.py::t", "tests/a/test_y.py::t", "tests/b.py::test_1", "tests/b.py::test_2"]
    ids += ["tests/c.py::t", "tests/d.py::test_1", "tests/d.py::test_2", "tests/e.py::t"]
    scopes = gate_scopes(pairs, ids)
    assert "tests/e.py::t" not in scopes
    groups = {}
    for nodeid, scope in scopes.items():
        groups.setdefault(scope, []).append(nodeid)
    assert sorted(groups.values()) == [
        ["tests/a/test_x.py::t", "tests/a/test_y.py::t"],
        ["tests/b.py::test_1", "tests/b.py::test_2"],
        ["tests/c.py::t"],
        ["tests/d.py::test_1"],
        ["tests/d.py::test_2"],
    ]


def test_the_plugin_loads_without_xdist(repo) -> None:
    """pytest-xdist stays optional: with it hidden, the plugin loads and a recorded run records."""
    root = repo({"tests/test_a.py": "def test_a(): pass\n"})
    out = root / ".tracker" / "evidence"
    hide = "import sys; sys.modules['xdist'] = None; import pytest; sys.exit(pytest.main(sys.argv[1:]))"
    args = ["-q", "-p", "no:cacheprovider", "-p", "tracker.pytest_plugin", f"--tracker-record={out}", "tests"]
    env = {**pytest_env(root), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    r = subprocess.run([sys.executable, "-c", hide, *args], cwd=root, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(list(out.glob("*.json"))) == 1


def test_a_failing_subtest_fails_its_test(repo, cli) -> None:
    """Issue 30 (critical): the test's own 'passed' report, which pytest sends after its subtests', overwrote their
    failures, so a gate on a unittest class whose subTest failed was met (verify exit 0). Any failing report of a test
    (setup, call, teardown or a subtest) now fails it, named as pytest names the subtest, with its assertion; a
    skipped subtest makes the test skipped (what JUnit XML says of it too); pytest's native ``subtests`` fixture the
    same (pytest 9 fails that test itself, 'contains 2 failed subtests': the subtests' own words are kept)."""
    from tracker_testutil import SUBTEST_OUTCOMES, SUBTESTS, phase, plan_text

    gates = [
        'test = "tests/test_sub.py::TestLoop"',
        'test = "tests/test_sub.py::TestSkip"',
        'test = "tests/test_sub.py::TestOk"',
        'test = "tests/test_sub.py::test_native"',
    ]
    root = repo({"tests/test_sub.py": SUBTESTS, "plans/0001-demo.md": plan_text(phases=phase("P1", *gates))})
    r = cli(root, "verify", "--json")
    assert r.code == 1, r.out + r.err
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    data = json.loads(evidence.read_text())
    assert {t["nodeid"]: (t["outcome"], t["reason"]) for t in data["tests"]} == SUBTEST_OUTCOMES
    [p] = json.loads(r.out)["phases"]
    loop, skip = "tests/test_sub.py::TestLoop::test_loop", "tests/test_sub.py::TestSkip::test_skip"
    assert [(g["verdict"], g["reason"]) for g in p["gates"]] == [
        ("unmet", f"tests/test_sub.py::TestLoop::test_loop: failed: {SUBTEST_OUTCOMES[loop][1]}"),
        ("unmet", f"tests/test_sub.py::TestSkip::test_skip: skipped: {SUBTEST_OUTCOMES[skip][1]}"),
        ("met", "1 passed"),
        ("unmet", f"failed: {SUBTEST_OUTCOMES['tests/test_sub.py::test_native'][1]}"),
    ]


def test_a_failing_subtest_fails_its_test_under_xdist(repo, cli) -> None:
    """Under pytest-xdist the subtests' reports reach the controller as the workers made them: the same outcomes as
    a serial run (the test's own 'passed' overwrote them there too). pytest names a parameter there by the repr of
    its repr, ``SUBFAILED(i='1')``, and the reason names it as pytest does."""
    from tracker_testutil import SUBTEST_OUTCOMES, SUBTESTS

    root = repo({"tests/test_sub.py": SUBTESTS, "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/"'))})
    r = cli(root, "verify", "--pytest-arg=-n", "--pytest-arg=2")
    assert r.code == 1 and "2 workers" in r.out + r.err, r.out + r.err
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    tests = json.loads(evidence.read_text())["tests"]
    assert {t["nodeid"]: (t["outcome"], t["reason"].replace("'1'", "1")) for t in tests} == SUBTEST_OUTCOMES


def test_a_plain_xdist_run_records_and_ingests_as_a_serial_run(repo, cli, tmp_path: Path) -> None:
    """``python -m pytest -n 2 --tracker-record=DIR`` (a run made elsewhere), then ``tracker ingest``: the same
    record as the serial run's (markers, ``-m`` and ``-k`` deselection) and the same statuses once ingested; before, every
    marker was empty and a marker gate selected no test."""
    root = repo({**XDIST_SUITE, "plans/0001-demo.md": XDIST_PLAN})
    runs = []
    for n, args in enumerate([[], ["-n", "2", "--dist", "loadfile"]]):  # a file's tests in one process (F1)
        out = tmp_path / f"run{n}"
        cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", *args, "-m", "not slow", "-k", "not test_plain"]
        cmd.append(f"--tracker-record={out}")
        proc = subprocess.run([*cmd, "tests"], cwd=root, env=pytest_env(root), capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        [file] = out.glob("*.json")
        runs.append(file)
    assert "bringing up nodes" in proc.stdout  # xdist ran the second
    serial, parallel = (json.loads(f.read_text()) for f in runs)
    assert _same_run(parallel) == _same_run(serial)
    assert {t["nodeid"].split("::", 1)[1]: t["outcome"] for t in parallel["tests"] if t["markers"] == ["slow"]} == {
        "test_slow_fail": "deselected",
        "TestC::test_c": "deselected",
        "test_c_slow": "deselected",
    }
    statuses = []
    for file in runs:
        assert cli(root, "ingest", str(file)).code == 0
        phases = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"]
        statuses.append([(p["id"], p["status"], [(g["met"], g["reason"]) for g in p["gates"]]) for p in phases])
        for old in (root / ".tracker" / "evidence").glob("*.json"):
            old.unlink()
    assert statuses[1] == statuses[0]
    assert [p[1] for p in statuses[0]] == ["planned", "planned", "planned", "done", "planned"]  # -k took P3's test


def test_verify_refuses_xdist_s_dist_each(repo, cli) -> None:
    """``--dist each`` runs every test on every worker: one record per test cannot say that, so verify refuses it
    (exit 3, saying which modes it takes) and records nothing, rather than keep whichever worker reported last."""
    root = repo({**XDIST_SUITE, "plans/0001-demo.md": XDIST_PLAN})
    r = cli(root, "verify", "--pytest-arg=-n", "--pytest-arg=2", "--pytest-arg=--dist=each")
    assert r.code == 3, r.out + r.err
    assert "--dist each runs every test once on each worker" in r.out + r.err and "Traceback" not in r.out + r.err
    assert not list((root / ".tracker" / "evidence").glob("*.json"))


def test_a_test_that_kills_its_xdist_worker_is_an_error_with_its_markers(repo, cli) -> None:
    """Under xdist a test that kills its worker is reported by the controller (xdist starts another worker): the
    record names it as an error, 'crashed: ...', with its markers, so its marker gate is unmet, as after a serial
    run that it crashed (exit 6 there, the test an error too); the rest of the run counts."""
    crash = "import os\nimport pytest\n\n@pytest.mark.gpu\ndef test_dies(): os._exit(3)\n"
    root = repo({**XDIST_SUITE, "tests/test_crash.py": crash, "plans/0001-demo.md": XDIST_PLAN})
    serial = cli(root, "verify", "0001/P1", "--json")
    parallel = cli(root, "verify", "0001/P1", "--force", "--json", "--pytest-arg=-n", "--pytest-arg=2")
    assert (serial.code, parallel.code) == (6, 1), serial.err + parallel.err
    doc = json.loads(parallel.out)
    [gate] = doc["phases"][0]["gates"]
    assert gate["verdict"] == "unmet" and gate["reason"].startswith("tests/test_crash.py::test_dies: error: crashed: ")
    data = json.loads((root / doc["evidence"]).read_text())
    [dies] = [t for t in data["tests"] if t["nodeid"] == "tests/test_crash.py::test_dies"]
    assert (data["status"], dies["outcome"], dies["markers"]) == ("complete", "error", ["gpu"])
    said = "crashed: worker '{}' crashed while running 'tests/test_crash.py::test_dies'"
    assert dies["reason"] in (said.format("gw0"), said.format("gw1"))


def test_records_the_gate_options_the_run_had_wherever_they_were_given(repo) -> None:
    """Issue 30: ``provenance.options`` lists the options in effect that a test gate may carry (its command line, the
    ini ``addopts``, ``PYTEST_ADDOPTS``), so that a run without a gate's ``--doctest-modules`` never names its tests;
    pytest's default import mode and the tracker's own plugin are left out, and a plain run records none."""
    doc = 'def f():\n    """\n    >>> f()\n    1\n    """\n    return 1\n'
    root = repo({"src/mod.py": doc, "pytest.ini": "[pytest]\naddopts = --doctest-glob=*.rst\n"})
    env = {"PYTEST_ADDOPTS": "--import-mode=importlib"}
    code, data = run_pytest(
        root, "--doctest-modules", "-p", "tracker.pytest_plugin", "src", "--tracker-record", env=env
    )
    assert code == 0 and by_id(data) == {"src.mod.f": ("passed", "")}, data  # importlib names it by its path
    assert data["provenance"]["options"] == ["--doctest-modules", "--doctest-glob=*.rst", "--import-mode=importlib"]
    clear(root)
    (root / "pytest.ini").unlink()
    code, data = run_pytest(root, "--import-mode=prepend", "src", "--tracker-record")
    assert "options" not in data["provenance"], data["provenance"]


@pytest.mark.parametrize(
    "spec", ["ssh=nohost.invalid//python=python3", "popen//python=python3.99", "socket=1.2.3.4:8888"]
)
def test_a_recorded_xdist_run_refuses_workers_other_than_this_interpreter_here(repo, spec: str) -> None:
    """xdist's ``--tx`` can start workers on another machine, in another interpreter or another copy of the tree,
    while the record names this machine, this Python and this tree's file ids: a recording run refuses any gateway
    but ``popen`` of this interpreter (what ``-n N`` starts), as a usage error (exit 4; verify: exit 3), before
    any worker starts, and writes nothing."""
    root = repo({"tests/test_a.py": "def test_a(): pass\n"})
    cmd = [
        *pytest_command(),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--tx={spec}",
        "--dist=load",
        "--tracker-record",
        "tests",
    ]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"--tx {spec}" in proc.stderr and "Traceback" not in proc.stdout + proc.stderr
    assert not (root / ".tracker" / "evidence").exists() or not list((root / ".tracker" / "evidence").iterdir())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["popen", "id=gw0", "ssh=h", "socket=h:1", "python=py", "chdir=d", "", "x"]), max_size=4),
       st.sampled_from(["", "2*", "*", "x*"]) , st.text(max_size=12))  # fmt: skip
def test_only_popen_gateways_of_this_interpreter_count_as_here(parts: list[str], count: str, noise: str) -> None:
    """Any ``--tx`` text is read without an exception, and counts as this interpreter here only as ``[N*]popen``
    with nothing but ``//id=...`` after it: never a spec naming a host, socket, interpreter or directory."""
    from tracker.plugin.options import _here

    for spec in (count + "//".join(parts), noise, count + noise):
        here = _here(spec)
        assert isinstance(here, bool)
        if here:
            assert "popen" in spec and not any(w in spec for w in ("ssh=", "socket=", "python=", "chdir=", "x"))
    assert _here("popen") and _here("2*popen") and _here("popen//id=gw1")


def test_installed_libraries_inside_the_repository_are_not_ignored_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F2's rule withdrawn in 047808a voided runs for libraries inside the repository: a virtual environment or
    conda prefix (Python's prefixes), ``pip install --target lib`` (a RECORD lists it). None of them is recorded;
    the repository's own ignored module is."""
    from tracker.plugin.modules import ignored_modules

    root = tmp_path / "repo"
    (root / "lib/dep").mkdir(parents=True)
    (root / "lib/dep/__init__.py").write_text("X = 1\n")
    (root / "lib/dep-1.0.dist-info").mkdir()
    (root / "lib/dep-1.0.dist-info/RECORD").write_text("dep/__init__.py,sha256=x,6\ndep-1.0.dist-info/RECORD,,\n")
    (root / "env/lib/python3/site-packages/other").mkdir(parents=True)
    (root / "env/lib/python3/site-packages/other/__init__.py").write_text("")
    (root / "conda/lib").mkdir(parents=True)
    (root / "conda/lib/os.py").write_text("")
    (root / "calc").mkdir()
    (root / "calc/_version.py").write_text("version = '1.0'\n")
    (root / "calc/__init__.py").write_text("")
    monkeypatch.setattr("sys.path", [str(root / "lib"), *__import__("sys").path])
    monkeypatch.setattr("sys.prefix", str(root / "conda"))
    modules = {
        "dep": str(root / "lib/dep/__init__.py"),
        "other": str(root / "env/lib/python3/site-packages/other/__init__.py"),
        "os": str(root / "conda/lib/os.py"),
        "calc": str(root / "calc/__init__.py"),
        "calc._version": str(root / "calc/_version.py"),
        "json": __import__("json").__file__,
    }
    found = ignored_modules(root, {"calc/__init__.py": "0" * 40}, modules)
    # env/ is no prefix of the running Python and no RECORD lists `other`: a folder named site-packages is no library
    # by its name alone (round 19, W3)
    assert list(found) == ["calc/_version.py", "env/lib/python3/site-packages/other/__init__.py"]


def test_a_virtual_environment_at_the_root_exempts_no_module_of_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 18, F2b: `python -m venv .` makes the repository Python's prefix, and every module git ignores was taken
    for a library. Its libraries are in site-packages; the tree's own ignored module is recorded."""
    from tracker.plugin.modules import ignored_modules

    root = tmp_path / "repo"
    site_dir = Path(__import__("site").getsitepackages([str(root)])[0])
    (site_dir / "dep").mkdir(parents=True)
    (site_dir / "dep/__init__.py").write_text("")
    (root / "calc").mkdir()
    (root / "calc/settings.py").write_text("LIMIT = 10\n")
    monkeypatch.setattr("sys.prefix", str(root))
    modules = {"dep": str(site_dir / "dep/__init__.py"), "calc.settings": str(root / "calc/settings.py")}
    assert list(ignored_modules(root, {}, modules)) == ["calc/settings.py"]


def test_a_folder_named_site_packages_is_no_library_by_its_name(tmp_path: Path) -> None:
    """Round 19, W3: any folder named `site-packages` (or `dist-packages`) was exempt, so a settings module git
    ignores put in `calc/site-packages/` was never hashed and its edits never staled the gate. Only the running
    Python's site folders are libraries."""
    from tracker.plugin.modules import ignored_modules, library_dirs, linked_out_modules

    root = tmp_path / "repo"
    for folder in ("calc/site-packages", "calc/dist-packages"):
        (root / folder).mkdir(parents=True)
        (root / folder / "settings.py").write_text("LIMIT = 10\n")
    modules = {
        "settings": str(root / "calc/site-packages/settings.py"),
        "other": str(root / "calc/dist-packages/settings.py"),
    }
    assert list(ignored_modules(root, {}, modules)) == [
        "calc/dist-packages/settings.py",
        "calc/site-packages/settings.py",
    ]
    assert not any(d.startswith(str(root)) for d in library_dirs())
    (tmp_path / "elsewhere.py").write_text("LIMIT = 10\n")
    (root / "calc/site-packages/linked.py").symlink_to(tmp_path / "elsewhere.py")
    said = linked_out_modules(root, {"linked": str(root / "calc/site-packages/linked.py")})
    assert said == f"modules imported through links out of the repository (linked -> {tmp_path / 'elsewhere.py'})"


def test_the_user_site_is_no_library_where_python_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 21, 10: inside a virtual environment Python leaves the user site off, yet it was exempt, so a
    PYTHONUSERBASE pointing into the repository hid a module git ignores from being hashed."""
    import os
    import site

    from tracker.plugin.modules import library_dirs

    user = os.path.realpath(site.getusersitepackages()) + os.sep
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    assert user not in library_dirs()
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    assert user in library_dirs()


def _record(root: Path, **env: str) -> tuple[int, str, list[dict[str, object]]]:
    """A real ``pytest --tracker-record`` run in ``root``: exit code, output, the provenance of every evidence file."""
    import os
    import subprocess

    from tracker.commands.common import pytest_command, pytest_env

    environ = {k: v for k, v in pytest_env(root).items() if k not in ("TRACKER_COMMIT", "TRACKER_DIRTY")} | env
    proc = subprocess.run([*pytest_command(), "-q", "-p", "no:cacheprovider", "tests", "--tracker-record"], cwd=root,
                          env=environ, capture_output=True, text=True, timeout=120)  # fmt: skip
    files = sorted((root / ".tracker/evidence").glob("*.json"), key=os.path.getmtime)
    return proc.returncode, proc.stdout + proc.stderr, [json.loads(f.read_text())["provenance"] for f in files]


@pytest.mark.parametrize(("env", "message"), [
    ({"TRACKER_COMMIT": "HEAD"}, "TRACKER_COMMIT: expected 40 lowercase hex digits, got 'HEAD'"),
    ({"TRACKER_COMMIT": "a" * 40, "TRACKER_DIRTY": "yes"}, "TRACKER_DIRTY: expected '0' or '1' (or unset: unknown), got 'yes'"),
])  # fmt: skip
def test_a_tracker_commit_readers_would_refuse_stops_the_recording_before_any_test(
    repo, env: dict[str, str], message: str
) -> None:
    root = repo({"tests/test_a.py": "from pathlib import Path\n\ndef test_a():\n    Path('ran').touch()\n"})
    code, out, runs = _record(root, **env)
    assert (code, runs) == (4, []) and f"--tracker-record: {message}" in out, out
    assert not (root / "ran").exists()


PATHS = [
    "tests",
    "tests/",
    "./tests",
    "tests/sub",
    "tests/sub/",
    "tests/a.py",
    "./tests/a.py",
    "tests/sub/b.py",
    "tests/../tests/a.py",
    "x.py",
    "",
    ".",
    "./",
    "tests/a.pyx",
    "test",
    "../up/t.py",
    "../up",
    "/abs/tests",
    "tests//a.py",
]


SUFFIXES = ["", "::t", "::t[1]", "::C", "::C::t", "::t[a/b]", "::"]


EXPRS = [None, "gpu", "not gpu", "slow or gpu", "", "gpu and not slow"]


NODES = [
    "tests/a.py::t",
    "tests/a.py::t[1]",
    "tests/a.py::C::t",
    "tests/sub/b.py::t",
    "tests/sub/b.py::t[a/b]",
    "x.py::t",
    "tests/a.pyx::t",
    "test/a.py::t",
    "../up/t.py::t",
    "tests/a.py",
    "tests",
    "y.py::t",
]


@given(
    st.lists(
        st.tuples(st.builds(str.__add__, st.sampled_from(PATHS), st.sampled_from(SUFFIXES)), st.sampled_from(EXPRS)),
        max_size=12,
    ),
    st.sampled_from(NODES),
    st.lists(st.sampled_from(["gpu", "slow", "x"]), max_size=2, unique=True),
)
@settings(max_examples=1500, deadline=None)
def test_filed_pairs_select_what_every_pair_tried_in_order_selects(
    pairs: list[tuple[str, str | None]], nodeid: str, markers: list[str]
) -> None:
    from tracker.base.selection import marker_matches, selects
    from tracker.plugin.collection import GatePairs

    every = any(selects(arg, nodeid) and marker_matches(expr, markers) for arg, expr in pairs)
    assert GatePairs(pairs).select(nodeid, markers) == every
    candidates = GatePairs(pairs).candidates(nodeid)
    assert [p for p in pairs if selects(p[0], nodeid)] == [
        p for p in candidates if selects(p[0], nodeid)
    ]  # in their order


def test_a_test_is_matched_against_the_pairs_of_its_places_only() -> None:
    from tracker.plugin.collection import GatePairs

    pairs = [(f"tests/test_gen_{i // 10}.py::test_{i % 10}", None) for i in range(500)] + [("tests/sub", "gpu")]
    assert GatePairs(pairs).candidates("tests/test_gen_7.py::test_3") == [pairs[73]]
    assert GatePairs(pairs).candidates("tests/sub/test_x.py::t") == [("tests/sub", "gpu")]
    # issue 24: 5,000 gates on the tests of one file matched each test against all 5,000 (verify: 25M matches)
    one_file = [(f"tests/test_many.py::test_{i}", None) for i in range(5000)] + [("tests/test_many.py", "gpu")]
    assert GatePairs(one_file).candidates("tests/test_many.py::test_12[x]") == [one_file[12], one_file[-1]]


@settings(max_examples=300, deadline=None)
@given(
    file=st.lists(st.sampled_from(["r", "s", "..", ".", "x.py", "rs"]), min_size=1, max_size=5),
    root=st.lists(st.sampled_from(["r", "s", "rs"]), min_size=1, max_size=3),
)
def test_under_compares_folders_not_prefixes(file: list[str], root: list[str]) -> None:
    """``_under`` compares strings now (pathlib's ``is_relative_to`` cost ~10 ms a session): the same answer as
    pathlib's on the normalized paths, so ``/r/rs`` is not under ``/r/r``."""
    from tracker.plugin.modules import _under

    path, top = "/" + "/".join(file), Path("/" + "/".join(root))
    assert _under(path, top) == Path(os.path.abspath(path)).is_relative_to(Path(os.path.abspath(top)))
