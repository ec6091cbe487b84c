"""Ctrl-C and a reader that goes away, on the real process: the tracker ends by the signal, without a traceback, and never records a pass."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tracker_testutil import git, phase, plan_text

import tracker

TRACKER_DIR = Path(tracker.__file__).resolve().parent


SCRIPT = Path(sys.executable).with_name("tracker")  # the console script pip generated for this virtualenv


GOOD = plan_text(
    phases=phase("P1", 'test = "tests/test_a.py::test_a"') + phase("P2", 'manual = "Reviewed"', depends='"P1"')
)


TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


FRAME = re.compile(r'^\s*File "([^"]+)", line \d+', re.MULTILINE)


def tracker_frames(stderr: str) -> list[str]:
    """The traceback frames on ``stderr`` that lie in the tracker package."""
    return [f for f in FRAME.findall(stderr) if Path(f).resolve().is_relative_to(TRACKER_DIR)]


def interrupt_after(cmd: list[str], root: Path, delay_s: float) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in its own process group and send SIGINT to the whole group after ``delay_s``, as a
    terminal's Ctrl-C does (verify's pytest gets it too)."""
    proc = subprocess.Popen(
        cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    time.sleep(delay_s)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass  # finished already
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def before_tracker_code(stderr: str) -> bool:
    """Is ``stderr`` Python's own report of a KeyboardInterrupt raised while Python was starting, before
    tracker's first statement ran (its streams, its site import, the generated script's ``from tracker.entry
    import main``)? No package can reach that moment; the report names no tracker frame and not ``main()``,
    and the tracker said nothing."""
    python_s = (
        "KeyboardInterrupt" in stderr or "Fatal Python error" in stderr
    )  # a Ctrl-C as Python initialises its streams
    return python_s and not tracker_frames(stderr) and "sys.exit(main())" not in stderr and "tracker: " not in stderr


def assert_interrupted_cleanly(r: subprocess.CompletedProcess[str], finished: int = 0, child: bool = False) -> None:
    """Finished (exit code ``finished``), or ended by SIGINT (a shell's 130) saying ``tracker: interrupted``
    once tracker code ran; never a traceback of tracker code. With ``child`` (verify) stderr also holds the
    nested pytest's, whose own report of a Ctrl-C during its start-up is a traceback of pytest's."""
    assert not tracker_frames(r.stderr), r.stderr
    if before_tracker_code(r.stderr):
        return
    if not child:
        assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr, r.stderr
    assert r.returncode in (finished, -signal.SIGINT), (r.returncode, r.stderr)
    if r.returncode == -signal.SIGINT and r.stderr:  # empty: before any handler (Python's or tracker's) was set up
        assert r.stderr.endswith("tracker: interrupted\n"), r.stderr


@pytest.fixture
def small(repo) -> Path:
    """A committed repository whose plan `update` would change (no status regions yet)."""
    return repo({"plans/0001-demo.md": GOOD, **TESTS})


def plan_states(root: Path, *args: str) -> tuple[bytes, bytes]:
    """The plan's bytes before and after a complete ``tracker update``; the file is left as before."""
    plan = root / "plans/0001-demo.md"
    before = plan.read_bytes()
    subprocess.run([str(SCRIPT), "update", *args], cwd=root, check=True, capture_output=True)
    after = plan.read_bytes()
    plan.write_bytes(before)
    assert after != before
    return before, after


def _ctrl_c_sweep(root: Path, commands: list[list[str]], delays_ms: range) -> None:
    before, after = plan_states(root)
    plan = root / "plans/0001-demo.md"
    for command in commands:
        finished = subprocess.run([str(SCRIPT), *command], cwd=root, capture_output=True).returncode
        plan.write_bytes(before)
        for ms in delays_ms:
            r = interrupt_after([str(SCRIPT), *command], root, ms / 1000)
            assert_interrupted_cleanly(r, finished)
            assert plan.read_bytes() in (before, after), (command, ms)  # never a partial plan
            assert not list(plan.parent.glob(".*.tmp")), (command, ms)  # an unwound write removes its temp file
            plan.write_bytes(before)


def recorded_pass(root: Path, nodeid: str) -> bool:
    """Does a complete evidence file in the store record ``nodeid`` as passed?"""
    import json

    for path in (root / ".tracker/evidence").glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("status") == "complete" and any(
            t["nodeid"] == nodeid and t["outcome"] == "passed" for t in data["tests"]
        ):
            return True
    return False


def phase_status(root: Path, key: str) -> str:
    import json

    r = subprocess.run([str(SCRIPT), "status", "--json"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return next(
        ph["status"] for p in json.loads(r.stdout)["plans"] for ph in p["phases"] if f"{p['id']}/{ph['id']}" == key
    )


def _ctrl_c_during_verify(root: Path, delays_ms: list[int]) -> None:
    (root / "tests/test_a.py").write_text("import time\n\ndef test_a():\n    time.sleep(0.3)\n")
    git(root, "commit", "-qam", "slow test")
    for ms in delays_ms:
        for old in (root / ".tracker/evidence").glob("*.json"):
            old.unlink()
        r = interrupt_after([str(SCRIPT), "verify", "--force"], root, ms / 1000)
        # A verify that finishes first exits 1: the demo plan's manual gate is unsigned (verify judges every gate).
        assert_interrupted_cleanly(r, finished=1, child=True)
        if phase_status(root, "0001/P1") == "done":
            assert recorded_pass(root, "tests/test_a.py::test_a"), (ms, r.stderr)


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


LOST = """
import os, signal, sys
from tracker import entry

class Doomed:
    def __del__(self):  # a Ctrl-C that lands in a destructor cannot unwind the command
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(10))

def command(argv):
    Doomed()
    print("the command went on", flush=True)
    try:
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C unwinds it as a first one would
        sum(range(10))
        print("not reached", flush=True)
    finally:
        print("cleanup ran", flush=True)

entry._run = command
entry.main()
"""


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_ctrl_c_at_any_moment_of_a_command_ends_by_sigint_without_a_traceback(small: Path) -> None:
    _ctrl_c_sweep(small, [["status"], ["update"], ["lint", "--no-collect"]], range(0, 201, 40))


@pytest.mark.slow
@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_ctrl_c_at_any_moment_deep(small: Path) -> None:
    _ctrl_c_sweep(
        small,
        [
            ["status"],
            ["status", "--json"],
            ["update"],
            ["lint", "--no-collect"],
            ["check"],
            ["next"],
            ["update", "--check"],
            ["gc", "--dry-run"],
        ],
        range(0, 301, 3),
    )


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_ctrl_c_during_verify_ends_by_sigint_and_never_records_a_pass(small: Path) -> None:
    _ctrl_c_during_verify(small, [0, 150, 400, 900])


@pytest.mark.slow
@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_ctrl_c_during_verify_deep(small: Path) -> None:
    _ctrl_c_during_verify(small, list(range(0, 1500, 25)))


def test_python_m_tracker_ends_by_sigint_too(small: Path) -> None:
    for ms in range(0, 100, 8):
        assert_interrupted_cleanly(interrupt_after([sys.executable, "-m", "tracker", "update"], small, ms / 1000))


def test_ctrl_c_handling_is_only_installed_by_a_program_importing_the_entry() -> None:
    import tracker.entry  # noqa: F401 - imported by this test module, not by a program's top level

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # pytest's Ctrl-C is still pytest's
    code = "import signal, tracker.entry as e; print(signal.getsignal(signal.SIGINT) is e._die_interrupted)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "True\n"


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_a_second_ctrl_c_during_the_cleanup_ends_the_process_at_once(small: Path) -> None:
    """After a Ctrl-C verify waits for pytest to record its run; a second Ctrl-C does not wait."""
    (small / "tests/test_a.py").write_text("import time\n\ndef test_a():\n    time.sleep(60)\n")
    git(small, "commit", "-qam", "a test that takes a minute")
    stderr = small.parent / "stderr"
    with stderr.open("w") as err_file:  # a file, not a pipe: the orphaned pytest would hold a pipe open
        proc = subprocess.Popen([str(SCRIPT), "verify"], cwd=small, stdout=subprocess.DEVNULL, stderr=err_file)
    pytest_pid = running_pid(small / ".tracker/evidence")
    try:
        proc.send_signal(signal.SIGINT)  # to the tracker alone: its pytest goes on
        time.sleep(0.5)
        assert proc.poll() is None  # waiting for pytest
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
        err = stderr.read_text()
        assert proc.returncode == -signal.SIGINT, (proc.returncode, err)
        assert err.endswith("tracker: interrupted\n") and "Traceback" not in err
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.kill(pytest_pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_ctrl_c_lost_in_a_destructor_still_ends_the_process_by_sigint_without_a_word_of_python() -> None:
    r = subprocess.run([sys.executable, "-c", LOST], capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (
        -signal.SIGINT,
        "the command went on\ncleanup ran\n",
        "tracker: interrupted\n",
    )


@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["lint", "--no-collect"], ["--help"], ["next"]])
def test_a_reader_that_goes_away_ends_the_process_by_sigpipe_silently(small: Path, args: list[str]) -> None:
    """``tracker status | head -1`` with more output than a pipe holds: like any tool in a pipeline."""
    for n in range(2, 60):  # enough phases that the output outgrows the pipe once the reader is gone
        (small / f"plans/{n:04d}-p.md").write_text(
            plan_text(f"{n:04d}", phases="".join(phase(f"P{i}", 'manual = "m"') for i in range(40)))
        )
    proc = subprocess.Popen([str(SCRIPT), *args], cwd=small, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert (proc.returncode, err) == (-signal.SIGPIPE, b"")
