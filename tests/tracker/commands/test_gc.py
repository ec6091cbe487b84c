"""``tracker gc`` (tracker/commands/gc.py): what it deletes and why, and runs that complete while it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text

GOOD = plan_text(
    phases=phase("P1", 'test = "tests/test_a.py::test_a"', 'manual = "Reviewed"')
    + phase("P2", 'test = "tests/test_a.py"', depends='"P1"')
)


SECOND = plan_text("0002", phases=phase("P1", 'manual = "Looked"'), title="Second")


TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


@pytest.fixture
def two(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": SECOND, **TESTS})


def test_gc_json_lists_what_it_deleted_and_why_the_rest_stays(two, cli) -> None:
    assert cli(two, "verify", "0001/P1").code == 1  # its manual gate is not signed off
    assert cli(two, "verify", "0001/P1", "--force").code == 1
    assert cli(two, "verify", "0001/P1", "--force").code == 1
    store = sorted(p.relative_to(two).as_posix() for p in (two / ".tracker/evidence").glob("*.json"))
    first = json.loads((two / store[0]).read_text())["provenance"]["time"]
    dry = json.loads(cli(two, "gc", "--dry-run", "--json").out)
    assert dry == {
        "dry_run": True,
        "exit": 0,
        "refused": [],
        "deleted": [],
        "would_delete": store[1:2],  # the first run made 0001/P1 in-progress: `tracker log` names it, it stays
        "kept": [
            {"path": store[0], "why": f"status history: 0001/P1 planned -> in-progress at {first}"},
            {"path": store[2], "why": "newest run of tests/test_a.py::test_a"},
        ],
        "put_back": [],
    }
    assert (
        sorted(p.relative_to(two).as_posix() for p in (two / ".tracker/evidence").glob("*.json")) == store
    )  # nothing deleted
    done = json.loads(cli(two, "gc", "--json").out)
    assert done == {**dry, "dry_run": False, "deleted": store[1:2], "would_delete": []}
    assert not (two / store[1]).exists()
    assert json.loads(cli(two, "gc", "--json").out)["deleted"] == []
    # no bench gate, no bootstrap bound: gc writes no empty set of them (status and report never do)
    assert not (two / ".tracker/cache/bootstrap.json").exists()


# A pytest session recording evidence, as a user runs it by hand (the paths to run follow).
RECORDING = [
    sys.executable,
    "-m",
    "pytest",
    "-p",
    "tracker.pytest_plugin",
    "--tracker-record",
    "-q",
    "-p",
    "no:cacheprovider",
]


def running_pid(evidence: Path, timeout_s: float = 30) -> int:
    """The pid of the pytest process that an evidence file in ``evidence`` names as running a test."""
    import json

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for path in evidence.glob("*.json") if evidence.is_dir() else ():
            try:
                running = json.loads(path.read_text()).get("running")
            except ValueError:
                continue  # being replaced
            if running:
                return int(running["pid"])
        time.sleep(0.05)
    raise AssertionError("no test started")


WAITS_FOR_GO = (
    "import pathlib, time\n\n"
    "def test_a():\n"
    "    go = pathlib.Path(__file__).resolve().parents[2] / 'go'\n"
    "    deadline = time.monotonic() + 60\n"
    "    while not go.exists() and time.monotonic() < deadline:\n"
    "        time.sleep(0.02)\n"
)


# git runs core.fsmonitor's hook inside `git status`, which gc's tree scan calls after it has read the store:
# a real moment in the middle of gc at which this hook lets the test finish and waits for its run to complete.
HOOK = """#!/bin/sh
touch '{go}'
i=0
while ! grep -qs '"status": "complete"' '{store}'/*.json && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
exit 1
"""


def record_run(root: Path) -> Path:
    """Run the repository's tests under ``pytest --tracker-record``; the evidence file it wrote."""
    subprocess.run(
        [*RECORDING, "tests"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    (path,) = (root / ".tracker/evidence").glob("*.json")
    return path


@pytest.mark.parametrize("abandoned", [False, True], ids=["young", "looks-abandoned"])
def test_gc_keeps_a_run_that_completes_while_gc_runs(
    repo, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, abandoned: bool
) -> None:
    """A real pytest --tracker-record session completes its run in the middle of gc. Young, the incomplete
    run is left alone; made to look abandoned (mtime two hours back), gc decides to delete it, and must
    keep it all the same because its bytes are no longer those it judged."""
    import json

    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"')),
            "tests/test_a.py": WAITS_FOR_GO,
        }
    )
    store = root / ".tracker/evidence"
    session = subprocess.Popen(
        [*RECORDING, "tests/test_a.py"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        running_pid(store)  # the run is under way: its file says "incomplete", naming the test
        if abandoned:
            for path in store.glob("*.json"):
                os.utime(path, (time.time() - 7200, time.time() - 7200))
        hook = tmp_path / "fsmonitor-hook"
        hook.write_text(HOOK.format(go=tmp_path / "go", store=store))
        hook.chmod(0o755)
        with monkeypatch.context() as env:
            for name, value in {
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "core.fsmonitor",
                "GIT_CONFIG_VALUE_0": str(hook),
            }.items():
                env.setenv(name, value)
            r = cli(root, "gc")
        out, _ = session.communicate(timeout=60)
    finally:
        if session.poll() is None:
            session.kill()
            session.wait()
    assert session.returncode == 0, out
    assert r.code == 0, r.err
    runs = list(store.glob("*.json"))
    assert len(runs) == 1 and json.loads(runs[0].read_text())["status"] == "complete", (
        r.out
    )  # the completed run was kept
    assert ("changed while gc ran" in r.out) is abandoned, r.out
    assert not list(store.glob(".*.gc")), "nothing left set aside"
    doc = json.loads(cli(root, "status", "--json").out)
    assert [ph["status"] for p in doc["plans"] for ph in p["phases"]] == ["done"]


def test_gc_puts_back_what_a_stopped_gc_set_aside(repo, cli) -> None:
    import json

    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"')), **TESTS})
    run = record_run(root)
    aside = run.with_name(f".{run.name}.0123456789ab.gc")  # as a gc killed between its rename and its check leaves it
    run.rename(aside)
    assert cli(root, "gc", "--dry-run").out.startswith(
        f"would put back .tracker/evidence/{run.name} (set aside by a gc that was stopped)\n"
    )
    assert aside.exists() and not run.exists()
    r = cli(root, "gc")
    assert r.code == 0 and r.out.startswith(f"put back .tracker/evidence/{run.name}"), r.out
    assert run.exists() and not aside.exists()
    assert [ph["status"] for p in json.loads(cli(root, "status", "--json").out)["plans"] for ph in p["phases"]] == [
        "done"
    ]


def test_gc_puts_back_a_result_file_a_stopped_gc_results_set_aside(repo, cli) -> None:
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'manual = "Looked"')), **TESTS})
    results = root / "bench/results"
    results.mkdir(parents=True)
    aside = results / ".r.json.0123456789ab.gc"  # what `gc --results` killed between its rename and its check leaves
    aside.write_text("{}\n")
    assert cli(root, "gc", "--dry-run").out == "tracker gc: 0 superseded file(s) to delete, 0 kept\n"  # not its folder
    r = cli(root, "gc", "--results", "--dry-run")
    assert r.out.startswith("would put back bench/results/r.json (set aside by a gc that was stopped)\n"), r.out
    assert cli(root, "gc", "--results").code == 0
    assert (results / "r.json").read_text() == "{}\n" and not aside.exists()


def test_delete_if_unchanged_deletes_only_the_bytes_it_was_given(tmp_path: Path) -> None:
    from tracker.base.hashing import sha256_hex
    from tracker.commands.gc import delete_if_unchanged

    path = tmp_path / "run.json"
    path.write_bytes(b"judged")
    assert not delete_if_unchanged(path, sha256_hex(b"other")) and path.read_bytes() == b"judged"
    assert delete_if_unchanged(path, sha256_hex(b"judged")) and not path.exists()
    assert not delete_if_unchanged(path, sha256_hex(b"judged"))  # gone already: nothing to do
    assert list(tmp_path.iterdir()) == []
