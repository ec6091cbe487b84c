"""The real console entry under attack: Ctrl-C at any moment, odd arguments, random plan repositories.

Every command line either does its job or ends with a message and a documented exit code (README "Exit
codes"), never a traceback; a Ctrl-C ends the process by SIGINT (a shell's 130) and leaves every file
as it was or fully written.
"""

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
GOOD = plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"') + phase("P2", 'manual = "Reviewed"', depends='"P1"'))
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}
FRAME = re.compile(r'^\s*File "([^"]+)", line \d+', re.MULTILINE)


def tracker_frames(stderr: str) -> list[str]:
    """The traceback frames on ``stderr`` that lie in the tracker package."""
    return [f for f in FRAME.findall(stderr) if Path(f).resolve().is_relative_to(TRACKER_DIR)]


def interrupt_after(cmd: list[str], root: Path, delay_s: float) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in its own process group and send SIGINT to the whole group after ``delay_s``, as a
    terminal's Ctrl-C does (verify's pytest gets it too)."""
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(delay_s)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass  # finished already
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def before_tracker_code(stderr: str) -> bool:
    """Is ``stderr`` Python's own report of a KeyboardInterrupt raised while Python was starting, before
    tracker's first statement ran (its site import, the generated script's ``from tracker.entry import
    main``)? No package can reach that moment; the report names no tracker frame and not ``main()``, and
    the tracker said nothing."""
    return ("KeyboardInterrupt" in stderr and not tracker_frames(stderr) and "sys.exit(main())" not in stderr
            and "tracker: " not in stderr)


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
    if r.returncode == -signal.SIGINT and r.stderr:  # empty: SIGINT came before Python set up its handler
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


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_ctrl_c_at_any_moment_of_a_command_ends_by_sigint_without_a_traceback(small: Path) -> None:
    _ctrl_c_sweep(small, [["status"], ["update"], ["lint", "--no-collect"]], range(0, 201, 20))


@pytest.mark.slow
@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_ctrl_c_at_any_moment_deep(small: Path) -> None:
    _ctrl_c_sweep(small, [["status"], ["status", "--json"], ["update"], ["lint", "--no-collect"], ["check"], ["next"],
                          ["update", "--check"], ["gc", "--dry-run"]], range(0, 301, 3))


def recorded_pass(root: Path, nodeid: str) -> bool:
    """Does a complete evidence file in the store record ``nodeid`` as passed?"""
    import json

    for path in (root / ".tracker/evidence").glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("status") == "complete" and any(t["nodeid"] == nodeid and t["outcome"] == "passed" for t in data["tests"]):
            return True
    return False


def phase_status(root: Path, key: str) -> str:
    import json

    r = subprocess.run([str(SCRIPT), "status", "--json"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return next(ph["status"] for p in json.loads(r.stdout)["plans"] for ph in p["phases"] if f"{p['id']}/{ph['id']}" == key)


@pytest.mark.skipif(not SCRIPT.exists(), reason="the tracker console script is not installed in this Python")
def test_ctrl_c_during_verify_ends_by_sigint_and_never_records_a_pass(small: Path) -> None:
    (small / "tests/test_a.py").write_text("import time\n\ndef test_a():\n    time.sleep(0.3)\n")
    git(small, "commit", "-qam", "slow test")
    for ms in (0, 30, 100, 250, 400, 600, 800, 1200):
        for old in (small / ".tracker/evidence").glob("*.json"):
            old.unlink()
        r = interrupt_after([str(SCRIPT), "verify", "--force"], small, ms / 1000)
        assert_interrupted_cleanly(r, child=True)
        if phase_status(small, "0001/P1") == "done":
            assert recorded_pass(small, "tests/test_a.py::test_a"), (ms, r.stderr)


def test_python_m_tracker_ends_by_sigint_too(small: Path) -> None:
    for ms in (0, 15, 30, 60, 90):
        assert_interrupted_cleanly(interrupt_after([sys.executable, "-m", "tracker", "update"], small, ms / 1000))


def test_ctrl_c_handling_is_only_installed_by_a_program_importing_the_entry() -> None:
    import tracker.entry  # noqa: F401 - imported by this test module, not by a program's top level

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # pytest's Ctrl-C is still pytest's
    code = "import signal, tracker.entry as e; print(signal.getsignal(signal.SIGINT) is e._die_interrupted)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "True\n"


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


def test_a_ctrl_c_lost_in_a_destructor_still_ends_the_process_by_sigint_without_a_word_of_python() -> None:
    r = subprocess.run([sys.executable, "-c", LOST], capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (-signal.SIGINT, "the command went on\ncleanup ran\n", "tracker: interrupted\n")


# --- gc deletes only what it judged -------------------------------------------------------------------------

WAITS_FOR_GO = ("import pathlib, time\n\n"
                "def test_a():\n"
                "    go = pathlib.Path(__file__).resolve().parents[2] / 'go'\n"
                "    deadline = time.monotonic() + 60\n"
                "    while not go.exists() and time.monotonic() < deadline:\n"
                "        time.sleep(0.02)\n")

# git runs core.fsmonitor's hook inside `git status`, which gc's tree scan calls after it has read the store:
# a real moment in the middle of gc at which this hook lets the test finish and waits for its run to complete.
HOOK = """#!/bin/sh
touch '{go}'
i=0
while ! grep -qs '"status": "complete"' '{store}'/*.json && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
exit 1
"""


@pytest.mark.parametrize("abandoned", [False, True], ids=["young", "looks-abandoned"])
def test_gc_keeps_a_run_that_completes_while_gc_runs(repo, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, abandoned: bool) -> None:
    """A real pytest --tracker-record session completes its run in the middle of gc. Young, the incomplete
    run is left alone; made to look abandoned (mtime two hours back), gc decides to delete it, and must
    keep it all the same because its bytes are no longer those it judged."""
    import json

    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"')), "tests/test_a.py": WAITS_FOR_GO})
    store = root / ".tracker/evidence"
    session = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "tracker.pytest_plugin", "--tracker-record", "-q",
                                "-p", "no:cacheprovider", "tests/test_a.py"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        running_pid(store)  # the run is under way: its file says "incomplete", naming the test
        if abandoned:
            for path in store.glob("*.json"):
                os.utime(path, (time.time() - 7200, time.time() - 7200))
        hook = tmp_path / "fsmonitor-hook"
        hook.write_text(HOOK.format(go=tmp_path / "go", store=store))
        hook.chmod(0o755)
        with monkeypatch.context() as env:
            for name, value in {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": str(hook)}.items():
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
    assert len(runs) == 1 and json.loads(runs[0].read_text())["status"] == "complete", r.out  # the completed run was kept
    assert ("changed while gc ran" in r.out) is abandoned, r.out
    assert not list(store.glob(".*.gc")), "nothing left set aside"
    doc = json.loads(cli(root, "status", "--json").out)
    assert [ph["status"] for p in doc["plans"] for ph in p["phases"]] == ["done"]


def record_run(root: Path) -> Path:
    """Run the repository's tests under ``pytest --tracker-record``; the evidence file it wrote."""
    subprocess.run([sys.executable, "-m", "pytest", "-p", "tracker.pytest_plugin", "--tracker-record", "-q", "-p", "no:cacheprovider", "tests"],
                   cwd=root, check=True, capture_output=True)
    (path,) = (root / ".tracker/evidence").glob("*.json")
    return path


def test_gc_puts_back_what_a_stopped_gc_set_aside(repo, cli) -> None:
    import json

    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py::test_a"')), **TESTS})
    run = record_run(root)
    aside = run.with_name(f".{run.name}.0123456789ab.gc")  # as a gc killed between its rename and its check leaves it
    run.rename(aside)
    assert cli(root, "gc", "--dry-run").out.startswith(f"would put back .tracker/evidence/{run.name} (set aside by a gc that was stopped)\n")
    assert aside.exists() and not run.exists()
    r = cli(root, "gc")
    assert r.code == 0 and r.out.startswith(f"put back .tracker/evidence/{run.name}"), r.out
    assert run.exists() and not aside.exists()
    assert [ph["status"] for p in json.loads(cli(root, "status", "--json").out)["plans"] for ph in p["phases"]] == ["done"]


def test_delete_if_unchanged_deletes_only_the_bytes_it_was_given(tmp_path: Path) -> None:
    from tracker.commands.gc import delete_if_unchanged
    from tracker.hashing import sha256_hex

    path = tmp_path / "run.json"
    path.write_bytes(b"judged")
    assert not delete_if_unchanged(path, sha256_hex(b"other")) and path.read_bytes() == b"judged"
    assert delete_if_unchanged(path, sha256_hex(b"judged")) and not path.exists()
    assert not delete_if_unchanged(path, sha256_hex(b"judged"))  # gone already: nothing to do
    assert list(tmp_path.iterdir()) == []


# --- verify --bench runs a plan's `run` without a shell where the string allows ------------------------------

@pytest.mark.parametrize("command", ["python bench.py", "  python\tbench.py --n 3 ", "./run-bench", "/usr/bin/env python -V",
                                     "python bench.py --out results/a.json", "bench ü,+@:^.-/"])
def test_plain_words_run_without_a_shell(command: str) -> None:
    from tracker.benchrun import command_words

    assert command_words(command) == command.replace("\t", " ").split()


@pytest.mark.parametrize("command", ["python b.py > out", "a | b", "a && b", "a; b", "a & b", "(a)", "echo $HOME", "echo `date`",
                                     "echo ~", "ls *.json", "ls ?", "ls [ab]", "echo {a,b}", "a # note", "FOO=1 python b.py",
                                     "python b.py --size=3", "echo 'a b'", 'echo "a b"', "echo a\\ b", "a\nb", "! false", "%1",
                                     "cd bench", "exit 3", "export A", ". ./env", "source env", "ulimit -n 64", "exec python b.py",
                                     "if", "time python b.py", "", "   "])
def test_shell_syntax_and_the_shell_s_own_words_go_to_the_shell(command: str) -> None:
    from tracker.benchrun import command_words

    assert command_words(command) is None


def bench_repo(repo, run: str, extra: dict[str, str] | None = None) -> Path:
    """A repository with one bench gate whose `run` is ``run`` and a script writing a result that meets it."""
    import json

    from resultfiles import case, result

    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0] * 5)], files={"kernel/k.cu": b"// k\n"})
    writer = ("import json, pathlib, sys\n"
              "out = pathlib.Path('bench/results'); out.mkdir(parents=True, exist_ok=True)\n"
              f"(out / f'r{{len(list(out.iterdir()))}}.json').write_text({json.dumps(json.dumps(doc))})\n"
              "print('writer args', sys.argv[1:], flush=True)\n")
    gate = f'bench = "m.time_us"\nwhere = {{ impl = "cuda" }}\nat_most = 200.0\nmin_samples = 3\nrun = "{run}"'
    return repo({"plans/0001-demo.md": plan_text(phases=phase("P1", gate)), "make_result.py": writer, "kernel/k.cu": "// k\n", **(extra or {})})


def test_verify_bench_runs_a_plain_command_directly(repo, cli) -> None:
    root = bench_repo(repo, f"{sys.executable} make_result.py a  b")
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert f"tracker: [1/1] {sys.executable} make_result.py a  b  (for 0001/P1#1)\n" in r.out
    assert "writer args ['a', 'b']" in r.out and "met   0001/P1#1 m.time_us" in r.out


def test_verify_bench_runs_shell_syntax_through_the_shell_and_says_so(repo, cli) -> None:
    root = bench_repo(repo, f"{sys.executable} make_result.py 'a  b' && echo the shell ran it")
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert "(for 0001/P1#1; by /bin/sh: it uses shell syntax)\n" in r.out
    assert "writer args ['a  b']" in r.out and "the shell ran it\n" in r.out and "met   0001/P1#1 m.time_us" in r.out


def test_verify_bench_a_program_that_does_not_exist_is_unmet_with_the_reason(repo, cli) -> None:
    root = bench_repo(repo, "no-such-program-xyz --flag")
    r = cli(root, "verify", "--bench")
    assert r.code == 1
    assert "tracker: `no-such-program-xyz --flag`: cannot run no-such-program-xyz: No such file or directory\n" in r.out
    assert "UNMET 0001/P1#1 m.time_us: `no-such-program-xyz --flag` exited with 127: its results are not used\n" in r.out
    assert "sh:" not in r.err  # no shell was involved


def test_verify_bench_an_executable_script_without_a_shebang_runs_as_sh_would(repo, cli) -> None:
    root = bench_repo(repo, "./bench-script", {"bench-script": f"{sys.executable} make_result.py from-the-script\n"})
    (root / "bench-script").chmod(0o755)
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert "writer args ['from-the-script']" in r.out and "(for 0001/P1#1)\n" in r.out


# --- output: any locale, any file name, a reader that goes away ---------------------------------------------

UNICODE_PLAN = plan_text(title="Demo ≥ ünï", phases=phase("P1", 'test = "tests/test_a.py::test_a"') + phase("P2", 'manual = "Reviewed — twice"'))


def console(root: Path, *args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess[bytes]:
    """The real console script in ``root``; stdout and stderr as bytes."""
    return subprocess.run([str(SCRIPT), *args], cwd=root, capture_output=True, env={**os.environ, **(env or {})}, **kw)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_output_never_fails_on_what_the_locale_cannot_encode(repo, encoding: str) -> None:
    import json

    root = repo({"plans/0001-demo.md": UNICODE_PLAN, **TESTS})
    env = {"PYTHONIOENCODING": encoding}
    table = console(root, "status", env=env)
    assert table.returncode == 0 and b"Traceback" not in table.stderr, table.stderr
    assert table.stdout.decode(encoding).startswith("0001  Demo ")
    as_json = console(root, "status", "--json", env=env)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["plans"][0]["title"] == "Demo ≥ ünï"  # valid JSON in any encoding
    diff = console(root, "update", "--diff", env=env)
    assert diff.returncode == 0 and b"Traceback" not in diff.stderr, diff.stderr


def test_a_file_name_that_is_not_utf8_is_printed_as_its_bytes(repo) -> None:
    writer = ("import os, pathlib, sys\n"
              "pathlib.Path(os.fsdecode(b'bench/results/r-\\xff.json')).write_bytes(pathlib.Path('result.json').read_bytes())\n")
    root = bench_repo(repo, f"{sys.executable} write_odd_name.py", {"write_odd_name.py": writer})
    subprocess.run([sys.executable, "make_result.py"], cwd=root, check=True, capture_output=True)
    (root / "bench/results/r0.json").rename(root / "result.json")
    r = console(root, "verify", "--bench", env={"LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8:strict", "PYTHONUTF8": "0"})
    assert b"Traceback" not in r.stderr, r.stderr
    assert b"took in bench/results/r-\xff.json: 1 case(s)" in r.stdout, r.stdout
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["lint", "--no-collect"], ["--help"], ["next"]])
def test_a_reader_that_goes_away_ends_the_process_by_sigpipe_silently(small: Path, args: list[str]) -> None:
    """``tracker status | head -1`` with more output than a pipe holds: like any tool in a pipeline."""
    for n in range(2, 60):  # enough phases that the output outgrows the pipe once the reader is gone
        (small / f"plans/{n:04d}-p.md").write_text(plan_text(f"{n:04d}", phases="".join(phase(f"P{i}", 'manual = "m"') for i in range(40))))
    proc = subprocess.Popen([str(SCRIPT), *args], cwd=small, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert (proc.returncode, err) == (-signal.SIGPIPE, b"")


@pytest.mark.parametrize(("root", "message"), [
    ("", "--root: empty; name the repository's directory"),
    ("no-such-dir", "--root no-such-dir: no such directory"),
    ("plans/0001-demo.md", "--root plans/0001-demo.md: not a directory"),
])
@pytest.mark.parametrize("command", [["status"], ["lint", "--no-collect"], ["update"]])
def test_a_root_that_is_not_a_directory_is_a_usage_error(small: Path, cli, root: str, message: str, command: list[str]) -> None:
    """A mistyped relative --root used to find the repository around the current directory instead."""
    for args in (["--root", root, *command], [f"--root={root}", *command]):
        r = subprocess.run([str(SCRIPT), *args], cwd=small, capture_output=True, text=True)
        assert (r.returncode, r.stdout, r.stderr) == (3, "", f"tracker: error: {message}\n"), args


def test_a_root_inside_the_repository_finds_it(small: Path) -> None:
    r = subprocess.run([str(SCRIPT), "--root", "plans", "status"], cwd=small, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("0001  Demo"), r.stderr
