"""What tracker verify's cuts of its overhead over plain pytest keep true (plan 0003 P5, issue 12): the evidence
file names every writer makes, without the weight they used to import; the running slot, which names the test a
crashed run was running without a rewrite of the evidence file before every test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.base.contract import RUNNING_SLOT_LIMIT, evidence_name, running_file
from tracker.store.evidence import crashed_test

NAME = re.compile(r"(\d{8}T\d{6})(\d{6})Z-([\w-]{1,40})-(\w+)-([0-9a-f]{6})\.json")


def test_evidence_names_sort_by_time_and_say_host_and_kind() -> None:
    first, second = evidence_name("verify", "ci-box_1"), evidence_name("verify", "ci-box_1")
    assert first != second
    match = NAME.fullmatch(first)
    assert match is not None and match.group(3) == "ci-box_1" and match.group(4) == "verify", first
    assert first[:22] <= second[:22]  # the time, to the microsecond, leads


def test_a_host_name_is_made_safe_and_short() -> None:
    assert "-my-host-name--" in evidence_name("pytest", "my.host/name: ")
    assert f"-{'a' * 40}-signoff-" in evidence_name("signoff", "a" * 100)
    assert "-host-pytest-" in evidence_name("pytest", "")


def test_without_a_host_the_machine_names_it() -> None:
    import socket

    from tracker.base.contract import hostname

    assert hostname() == socket.gethostname()  # the name evidence records as provenance.host
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in socket.gethostname())[:40] or "host"
    assert f"-{safe}-pytest-" in evidence_name("pytest")


@given(st.text(max_size=80), st.sampled_from(["pytest", "verify", "signoff", "bench"]))
@settings(max_examples=300, deadline=None)
def test_every_host_name_gives_a_plain_file_name(host: str, kind: str) -> None:
    name = evidence_name(kind, host)
    assert "/" not in name and "\0" not in name and name.endswith(f"-{kind}-{name[-11:-5]}.json")
    part = name.split("-", 1)[1].rsplit(f"-{kind}-", 1)[0]
    assert 1 <= len(part) <= 40 and all(c.isalnum() or c in "-_" for c in part)


def test_the_old_names_stay_importable_with_the_same_rule() -> None:
    from tracker.commands.ingest import evidence_name as ingest_name
    from tracker.plugin.evidence_file import evidence_name as plugin_name

    for name in (ingest_name("verify", "h"), plugin_name("pytest"), evidence_name("signoff", "h")):
        assert NAME.fullmatch(name), name


def test_naming_imports_nothing_heavy() -> None:
    """verify names its run's file before pytest starts: the contract module imports neither the ingest command (its
    parsers, the evidence reader) nor datetime, secrets or socket, and naming a file imports nothing either."""
    code = (
        "import sys\nbefore = set(sys.modules)\nimport tracker.base.contract\n"
        "tracker.base.contract.evidence_name('verify')\n"
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('tracker', 'datetime', 'secrets', 'json', 'socket')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tracker', 'tracker.base', 'tracker.base.contract', 'tracker.base.hashing']"


# --- the running slot: which test a crashed run was running ---------------------------------------------------

RUNNING = {"nodeid": "tests/test_c.py", "markers": [], "pid": 4242}


def slot_of(tmp_path: Path, content: bytes) -> Path:
    evidence = tmp_path / "run.json"
    evidence.write_text("{}")
    running_file(evidence).write_bytes(content)
    return evidence


def test_the_slot_names_the_test_inside_the_file_the_evidence_names(tmp_path: Path) -> None:
    record = {"nodeid": "tests/test_c.py::test_b[1]", "markers": ["gpu"], "pid": 4242}
    evidence = slot_of(tmp_path, json.dumps(record).encode().ljust(300))
    assert running_file(evidence).name == ".run.json.running"
    assert crashed_test(evidence, RUNNING) == record
    exact = {**record, "markers": ["gpu"]}
    assert crashed_test(evidence, exact) == record  # the evidence file named the test itself: the same


@pytest.mark.parametrize(
    "slot",
    [
        {"nodeid": "tests/test_c.py::test_b", "markers": [], "pid": 4243},  # another process's
        {"nodeid": "tests/test_c.pyx::test_b", "markers": [], "pid": 4242},  # not inside tests/test_c.py
        {"nodeid": "tests/test_d.py::test_b", "markers": [], "pid": 4242},
        {"nodeid": "tests/test_c.py::test_b", "markers": "gpu", "pid": 4242},
        {"nodeid": "tests/test_c.py::test_b", "markers": [], "pid": True},
        {"nodeid": 7, "markers": [], "pid": 4242},
        {"nodeid": "tests/test_c.py::test_b", "markers": []},
        ["tests/test_c.py::test_b"],
    ],
)
def test_a_slot_that_does_not_agree_leaves_the_file(tmp_path: Path, slot: object) -> None:
    evidence = slot_of(tmp_path, json.dumps(slot).encode())
    assert crashed_test(evidence, RUNNING) == RUNNING


def test_a_slot_that_is_missing_cut_or_no_file_leaves_the_file(tmp_path: Path) -> None:
    evidence = slot_of(tmp_path, b'{"nodeid": "tests/test_c.py::test_b", "mar')
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).unlink()
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).mkdir()
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).rmdir()
    os.mkfifo(running_file(evidence))  # never blocks on a FIFO
    assert crashed_test(evidence, RUNNING) == RUNNING
    running_file(evidence).unlink()
    with open(running_file(evidence), "wb") as fh:
        fh.truncate(RUNNING_SLOT_LIMIT + 1)
    assert crashed_test(evidence, RUNNING) == RUNNING
    assert crashed_test(evidence, {"nodeid": "tests/test_c.py", "markers": []}) == {
        "nodeid": "tests/test_c.py",
        "markers": [],
    }  # no pid


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["nodeid", "markers", "pid", "x"]), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(
    st.one_of(
        st.binary(max_size=300),
        JSONISH.map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries(
            {
                "nodeid": st.sampled_from(["tests/test_c.py", "tests/test_c.py::a", "tests/test_c.pyz::a", "x::y", ""]),
                "markers": st.lists(st.text(max_size=5), max_size=3),
                "pid": st.sampled_from([4242, 4241, 0, -1]),
            }
        ).map(lambda v: json.dumps(v).encode()),
    )
)
@settings(max_examples=600, deadline=None)
def test_whatever_the_slot_holds_the_crash_stays_inside_the_file(content: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        got = crashed_test(slot_of(Path(tmp), content), RUNNING)
    inside = got["nodeid"] == "tests/test_c.py" or got["nodeid"].startswith("tests/test_c.py::")
    assert got == RUNNING or (got["pid"] == 4242 and inside and all(isinstance(m, str) for m in got["markers"]))


# --- selection: each test matched against the pairs filed under its file and directories ----------------------

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


# --- provenance: git's two questions at once ------------------------------------------------------------------


def test_the_commit_and_the_status_are_asked_side_by_side(
    repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """commit_state runs git's rev-parse and status together (a recording session waits for one git call, not two):
    a git on PATH that takes 0.4 s longer (then runs the real git) logs when each call began and ended."""
    import shutil

    from tracker.base.dirty import commit_state

    root = repo({"a.py": "x = 1\n"})
    (root / "b.py").write_text("untracked\n")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    slow = tmp_path / "bin"
    slow.mkdir()
    log = tmp_path / "git.log"
    (slow / "git").write_text(
        f'#!/bin/sh\necho "start $(date +%s.%N)" >> {log}\nsleep 0.4\n'
        f'echo "end $(date +%s.%N)" >> {log}\nexec {shutil.which("git")} "$@"\n'
    )
    (slow / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    assert commit_state(root) == (head, True)
    events = [line.split() for line in log.read_text().splitlines()]
    assert [kind for kind, _ in events] == ["start", "start", "end", "end"], events  # both began before either ended


# --- the overhead bench measures what a user runs ---------------------------------------------------------------


def test_the_overhead_bench_measures_with_bytecode_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox's PYTHONDONTWRITEBYTECODE made every measured verify compile the tracker from source (and pytest
    its rewritten tests): the bench removes it from the measured processes unless --no-bytecode-cache."""
    from bench.plan_tracker import verify_overhead as overhead

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "PYTHONDONTWRITEBYTECODE" not in overhead.measured_env(overhead.parse_args(["--quick"]).bytecode_cache)
    assert (
        overhead.measured_env(overhead.parse_args(["--quick", "--no-bytecode-cache"]).bytecode_cache)[
            "PYTHONDONTWRITEBYTECODE"
        ]
        == "1"
    )


# --- what the readers are to do with the slot (evidence.crashed_run, verify's messages: the lead integrates) ------

CRASH_PLAN = """# Demo

```plan
id = "0001"
title = "Demo"
```

```phase
id = "P1"
title = "Crash"

[[gate]]
test = "tests/test_c.py"
```
"""


def test_the_store_and_verify_name_the_test_that_crashed_among_others_of_its_file(repo) -> None:
    from tracker.commands.common import pytest_env
    from tracker.store import evidence

    root = repo(
        {
            "plans/0001-demo.md": CRASH_PLAN,
            "tests/test_c.py": "import os\ndef test_a(): pass\ndef test_b(): os._exit(3)\n",
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tracker", "verify"], cwd=root, env=pytest_env(root), capture_output=True, text=True
    )
    assert (
        proc.returncode == 6
        and "it crashed while running tests/test_c.py::test_b, which counts as an error" in proc.stderr
    ), proc.stderr
    [run] = evidence.load(root, strict=False).runs
    assert [r["nodeid"] for r in run.tests] == ["tests/test_c.py::test_b"]


@pytest.mark.parametrize("last", ["tests/t.py", "tests/" + "/".join(["d" * 200] * 6) + "/t.py"], ids=["short", "long"])
def test_the_evidence_file_names_the_crashed_file_after_its_running_part_was_rewritten_in_place(
    repo, tmp_path: Path, last: str
) -> None:
    """The incomplete evidence file's ``running`` part is rewritten in place for each test file (tracker.pytest_plugin
    ``_Tail``): after a longer part, a shorter one leaves spaces, never a piece of the old; one longer than the room
    rewrites the file whole. Read without the slot (as a reader with the evidence file alone), the crash is the
    last file's."""
    import json as _json

    from tracker.base.contract import running_file
    from tracker.store import evidence

    name = last.rsplit("/", 1)[-1]
    files = {f"tests/test_{'m' * 60}_{i}.py": "def test_a(): pass\ndef test_b(): pass\n" for i in range(3)}
    files[last.replace(name, "test_" + name)] = (
        "import os, signal\ndef test_a(): pass\ndef test_z(): os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    root = repo({"plans/0001-demo.md": CRASH_PLAN.replace("tests/test_c.py", "tests/"), **files})
    out = tmp_path / "ev"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files, f"--tracker-record={out}"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    assert proc.returncode < 0, proc.stdout + proc.stderr  # killed
    [path] = [p for p in out.glob("*.json")]
    running_file(path).unlink(missing_ok=True)  # the evidence file alone
    data = _json.loads(path.read_bytes())
    assert data["status"] == "incomplete"
    crashed = evidence.crashed_run(path.name, data)
    assert crashed is not None and crashed.tests[0]["nodeid"] == last.replace(name, "test_" + name)


# --- the recorder's end: every imported module's realpath, each folder resolved once ----------------------------

_PARTS = ["a", "b", "to_a", "to_b_up", "m.py", "to_m.py", "dangling.py", "loop", "missing", "..", "."]


def _link_tree(base: Path) -> None:
    """Folders, a file, and links of every kind: to a folder, through ``..``, to a file, dangling, a loop."""
    (base / "a" / "b").mkdir(parents=True, exist_ok=True)
    (base / "a" / "m.py").write_text("x = 1\n")
    (base / "a" / "b" / "m.py").write_text("x = 2\n")
    for name, target in [
        ("to_a", "a"),
        ("a/to_b_up", "b/.."),
        ("a/b/to_m.py", "../m.py"),
        ("a/dangling.py", "nowhere/m.py"),
        ("a/loop", "loop"),
        ("a/b/to_a", "../../to_a"),
    ]:
        if not os.path.lexists(base / name):
            os.symlink(target, base / name)


@settings(max_examples=300, deadline=None)
@given(paths=st.lists(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=6), min_size=1, max_size=12))
def test_real_paths_resolve_every_path_as_realpath_does(paths: list[list[str]]) -> None:
    """RealPaths caches each folder's realpath: whatever the links (to folders, through ``..``, to files, dangling,
    looping) and in whatever order one instance is asked, it answers what ``os.path.realpath`` answers."""
    import tempfile

    from tracker.base.realpaths import RealPaths

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        _link_tree(base)
        real = RealPaths()
        for parts in paths:
            path = os.path.join(tmp, *parts)
            assert real(path) == os.path.realpath(path), path
            assert real(path) == os.path.realpath(path), path  # asked again: the cached answer


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


def _git_log_shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that logs its arguments, then runs the real git."""
    import shutil

    shim, log = tmp_path / "bin", tmp_path / "git.log"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_session_takes_the_tree_its_parent_read_just_before(
    repo, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify reads the tree once before it forks, and its child's recorder takes that reading as its first (what it
    would read itself before any conftest.py): git reads the tree three times a verify (before, the recorder's end,
    status after), not four, and lists the index once (it did not change: tracker.base.fingerprint._INDEX_LISTING);
    the recorder's commit and dirty flag come from that first reading (one rev-parse beside it, no status of its
    own). The
    reading stays the child's: none is left
    behind in the process that forked, and its garbage collector is left as it was, neither frozen nor off (the
    child's collector is on, over the parent's objects frozen, so that it neither walks nor copies them: ~12 ms a
    session; the parent's was off from pytest's import to the fork: ~5 ms)."""
    import gc

    from tracker.base.fingerprint import HANDED_OVER
    from tracker.commands.forkable import SPAWN_ENV

    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": "def test_a():\n    pass\n"})
    monkeypatch.setenv(SPAWN_ENV, "0")
    os.utime(root / "tests" / "test_a.py", (1_000_000_000, 1_000_000_000))  # stat-stale: no status rewrites the index
    log = _git_log_shim(tmp_path, monkeypatch)
    frozen, collecting = gc.get_freeze_count(), gc.isenabled()
    r = cli(root, "verify", "--force")
    assert r.code == 0, r.out + r.err
    assert gc.isenabled() == collecting
    calls = log.read_text().splitlines()
    assert sum(" ls-files -s " in f" {c} " for c in calls) == 1, calls
    assert sum(" status " in f" {c} " for c in calls) == 3, calls
    assert sum(" rev-parse " in f" {c} " for c in calls) == 1, calls
    assert HANDED_OVER == {} and gc.get_freeze_count() == frozen
    data = json.loads(max((root / ".tracker" / "evidence").glob("*.json")).read_text())
    assert data["status"] == "complete" and "tests/test_a.py" in data["files"], data
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    clean = not subprocess.run(["git", "status", "--porcelain", "--", ".", ":(exclude).tracker"], cwd=root,
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
    assert data["provenance"]["commit"] == head and data["provenance"]["dirty"] is (not clean), data["provenance"]


def test_a_forked_session_whose_tree_changed_after_the_parent_read_it_is_altered(
    repo, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's first reading is its parent's, taken a moment earlier: a tracked file written in between (here by
    the conftest.py, the first code of the repository to run) still differs at the session's end, so the run is
    altered and meets no gate."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    conftest = "from pathlib import Path\nPath(__file__).with_name('data.txt').write_text('changed')\n"
    root = repo(
        {
            "plans/0001-demo.md": plan,
            "tests/conftest.py": conftest,
            "tests/data.txt": "original",
            "tests/test_a.py": "def test_a():\n    pass\n",
        }
    )
    r = cli(root, "verify", "--force")
    assert "files changed while it ran: tests/data.txt" in r.out, r.out
    assert r.code != 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("collecting", [True, False])
def test_the_tests_of_a_forked_session_have_the_collector_of_a_fresh_interpreter(
    repo, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collecting: bool
) -> None:
    """Whatever the process that forks had (here the collector on, or off as an embedding program may have it), the
    tests find it on, as ``python -m pytest`` gives it, and collecting what they make; the caller gets its own back."""
    import gc

    from tracker.commands.forkable import SPAWN_ENV

    test = (
        "import gc\n\n\ndef test_a():\n"
        "    assert gc.isenabled()\n"
        "    class Cycle:\n        pass\n"
        "    c = Cycle()\n    c.me = c\n    del c\n"
        "    assert gc.collect() >= 1\n"
    )
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": test})
    monkeypatch.setenv(SPAWN_ENV, "0")
    was = gc.isenabled()
    try:
        if not collecting:
            gc.disable()
        r = cli(root, "verify", "--force")
        assert gc.isenabled() == collecting
    finally:
        if was:
            gc.enable()
    assert r.code == 0, r.out + r.err


# --- round 23: what the fork must still give the tests --------------------------------------------------------------

_TEXTWRAP_BROKEN = (
    "import importlib.util, os, sysconfig\n"
    "_s = importlib.util.spec_from_file_location('_t', os.path.join(sysconfig.get_paths()['stdlib'], 'textwrap.py'))\n"
    "_m = importlib.util.module_from_spec(_s)\n_s.loader.exec_module(_m)\n"
    "globals().update({k: v for k, v in vars(_m).items() if not k.startswith('__')})\n"
    "def shorten(text, width, **kw):\n    return 'BROKEN'\n"
)
_TEXTWRAP_TEST = (
    "import textwrap\n\n\ndef test_shorten():\n"
    "    assert textwrap.shorten('hello world foo', width=11) == 'hello [...]'\n"
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("how", ["nested repository", "link to a folder", "ignored file"])
def test_a_module_the_repository_shadows_in_any_form_gets_a_new_interpreter(
    repo, cli, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Round 23, F1, F4, F5: the tracker has ``textwrap`` loaded; the repository's own breaks ``shorten``, and
    ``python -m pytest`` imports the repository's. Held as an untracked nested repository (``textwrap/``), a tracked
    link to a folder, or a ``textwrap.py`` git ignores, it was no name the fork looked for: the child kept the loaded
    one and the gate was met. Now each is seen, the run gets a new interpreter and the gate fails, as pytest does."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    files = {"plans/0001-demo.md": plan, "tests/test_a.py": _TEXTWRAP_TEST}
    if how == "link to a folder":
        files["vendor/tw/__init__.py"] = _TEXTWRAP_BROKEN
    if how == "ignored file":
        files[".gitignore"] = "textwrap.py\n"
    root = repo(files, commit=False)
    if how == "link to a folder":
        os.symlink("vendor/tw", root / "textwrap")
    if how == "ignored file":
        (root / "textwrap.py").write_text(_TEXTWRAP_BROKEN)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "files"], cwd=root, check=True, capture_output=True)
    if how == "nested repository":
        (root / "textwrap").mkdir()
        (root / "textwrap" / "__init__.py").write_text(_TEXTWRAP_BROKEN)
        subprocess.run(["git", "init", "-q"], cwd=root / "textwrap", check=True)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True
    )
    assert plain.returncode == 1, plain.stdout  # pytest itself imports the repository's textwrap
    r = cli(root, "verify")
    assert "BROKEN" in r.out and r.code == 1, r.out + r.err
    assert "met   0001/P1#1" not in r.out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_the_collector_answers_the_tests_as_a_fresh_interpreters_would(repo, cli, monkeypatch) -> None:
    """Round 23, F2: in the forked child the parent's objects are frozen, and ``gc.get_referrers`` found no frozen
    referrer: a test that an unloaded module is no longer referenced (``sys.modules`` still holds it) passed under
    verify and failed under pytest. The first question to the collector now unfreezes them: the test fails under
    both. A frozen-count, ``gc.get_objects`` and a collection of a cycle the tests make answer as in a new process."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    tests = {
        "tests/test_a.py": (
            "import gc, importlib\n\n\ndef test_unloaded():\n"
            "    m = importlib.import_module('plugin_x')\n"
            "    assert [r for r in gc.get_referrers(m) if isinstance(r, dict) and r.get('plugin_x') is m] == []\n"
        ),
        "tests/test_b.py": (
            "import gc, sys\n\n\ndef test_fresh():\n"
            "    assert gc.get_freeze_count() == 0\n"
            "    assert any(o is sys.modules for o in gc.get_objects())\n"
        ),
    }
    plan = CRASH_PLAN.replace(
        'test = "tests/test_c.py"', 'test = "tests/test_a.py"\n\n[[gate]]\ntest = "tests/test_b.py"'
    )
    root = repo({"plans/0001-demo.md": plan, "plugin_x.py": "X = 1\n", **tests})
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True
    )
    assert "1 failed, 1 passed" in plain.stdout, plain.stdout
    r = cli(root, "verify")
    assert "unmet 0001/P1#1" in r.out.replace("UNMET", "unmet") or "UNMET 0001/P1#1" in r.out, r.out
    assert "met   0001/P1#2" in r.out, r.out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("case", ["submodule the parent imported", "frozen garbage", "module in a pythonpath folder"])
def test_the_forked_child_has_only_what_a_new_pytest_would(repo, cli, monkeypatch, case: str) -> None:
    """Round 23 (second helper): the child kept what its parent had. F1: a submodule the parent imported
    (``xml.dom.minidom``) was an attribute of its package for a test that forgot to import it; F3: a module the parent
    loaded (``secrets``) hid the repository's, which a ``pythonpath`` folder git ignores provides; F2: objects the
    parent held were frozen, so a class a test dropped (with a failing finalizer hung on it) was never collected, and
    ``filterwarnings = error`` never saw it. ``python -m pytest`` fails each; so must verify."""
    import secrets  # noqa: F401 - loaded in the process that forks
    import shlex  # noqa: F401
    import xml.dom.minidom  # noqa: F401

    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    files = {"plans/0001-demo.md": plan}
    if case == "submodule the parent imported":
        files["tests/test_a.py"] = "import xml.dom\n\n\ndef test_a():\n    assert xml.dom.minidom.parseString\n"
    elif case == "frozen garbage":
        files["pytest.ini"] = "[pytest]\nfilterwarnings = error\n"
        files["tests/test_a.py"] = (
            "import shlex\n\n\nclass Canary:\n    def __del__(self):\n        raise RuntimeError('finalizer raised')\n\n\n"
            "def test_a():\n    shlex.shlex.canary = Canary()\n    del shlex.shlex\n"
            "    keep = [[] for _ in range(400_000)]\n    assert len(keep) == 400_000\n"
        )
    else:
        files.update({"pytest.ini": "[pytest]\npythonpath = local\n", ".gitignore": "local/\n"})
        files["tests/test_a.py"] = "import secrets\n\n\ndef test_a():\n    assert len(secrets.token_hex(8)) == 16\n"
    root = repo(files)
    if case == "module in a pythonpath folder":
        (root / "local").mkdir()
        (root / "local" / "secrets.py").write_text("API_KEY = 'dev'\n")
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True
    )
    assert plain.returncode == 1, plain.stdout
    r = cli(root, "verify")
    assert r.code == 1 and "met   0001/P1#1" not in r.out, r.out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "fork"), reason="Linux's /proc")
def test_the_standby_child_runs_the_session_or_is_ended(repo, cli, monkeypatch) -> None:
    """verify forks its session's child at its start, before it builds anything (tracker.commands.standby.Standby):
    the child runs the first session; a verify that runs none (every gate fresh) ends it. Either way no child is left
    behind, running or unreaped, and none waits for a later verify."""
    from tracker.commands import standby
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    me = os.getpid()

    def children() -> list[str]:
        return Path(f"/proc/{me}/task/{me}/children").read_text().split()

    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": "def test_a():\n    pass\n"})
    before = children()
    first = cli(root, "verify")
    assert first.code == 0 and "met   0001/P1#1" in first.out, first.out + first.err
    assert children() == before and standby._STANDBY == {}
    again = cli(root, "verify")  # fresh: no session runs, the waiting child is ended
    assert again.code == 0 and "not re-run" in again.out, again.out
    assert children() == before and standby._STANDBY == {}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("case", ["digit limit lifted", "stdout's errors", "shadow written by a bench command"])
def test_the_session_gets_a_new_interpreters_settings_and_the_repository_as_it_is(
    repo, cli, monkeypatch, case: str
) -> None:
    """Round 23, third helper. F2: a process that lifted the int-to-str digit limit (``-X int_max_str_digits=0``,
    or in-process) forked it into the tests; F3: the child's stdout kept the console entry's error handler, so a test
    printing a lone surrogate under ``-s`` passed; F1: a ``--bench`` command wrote a ``textwrap/`` package after the
    standby child had imported pytest, and textwrap with it. ``python -m pytest`` fails each; so must verify."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    files = {"plans/0001-demo.md": plan}
    args = ["verify"]
    if case == "digit limit lifted":
        files["tests/test_a.py"] = "def test_a():\n    assert len(str(10**5000)) == 5001\n"
    elif case == "stdout's errors":
        files["pytest.ini"] = "[pytest]\naddopts = -s\n"
        files["tests/test_a.py"] = "def test_a():\n    print('lone \\ud800 surrogate')\n"
    else:
        files["tests/test_a.py"] = _TEXTWRAP_TEST
        files["tools/mk.sh"] = "mkdir -p textwrap\ncp tools/broken.py textwrap/__init__.py\n"
        files["tools/broken.py"] = _TEXTWRAP_BROKEN
        files["plans/0001-demo.md"] = plan + (
            '\n```phase\nid = "P2"\ntitle = "Bench"\n\n[[gate]]\nbench = "m.time_us"\nwhere = { impl = "x" }\n'
            'at_most = 5\nrun = "sh tools/mk.sh"\n```\n'
        )
        args = ["verify", "--bench"]
    root = repo(files)
    if case == "shadow written by a bench command":
        subprocess.run(["sh", "tools/mk.sh"], cwd=root, check=True)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=root, capture_output=True
    )
    assert plain.returncode == 1, plain.stdout
    if case == "shadow written by a bench command":
        shutil.rmtree(root / "textwrap")
    before = sys.get_int_max_str_digits()
    try:
        if case == "digit limit lifted":
            sys.set_int_max_str_digits(0)
        r = cli(root, *args)
    finally:
        sys.set_int_max_str_digits(before)
    assert "met   0001/P1#1" not in r.out and "0001/P1 is done" not in r.out, r.out + r.err


@pytest.mark.parametrize("mode", ["0", "1"], ids=["forked", "spawned"])
def test_a_tracker_package_of_the_tests_own_path_meets_no_gate(
    repo, cli, monkeypatch, tmp_path: Path, mode: str
) -> None:
    """Round 23, third helper, F4: the ini's ``pythonpath`` names a folder with a ``tracker`` package of the tests'
    own; ``python -m pytest`` imports it, verify's session held the tracker's under that name, forked or not, and a
    test of the other passed. The run now says so, and meets no gate."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, mode)
    lib = tmp_path / "lib" / "tracker"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("raise ImportError('this lib tracker is broken')\n")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    root = repo(
        {
            "plans/0001-demo.md": plan,
            "pytest.ini": f"[pytest]\npythonpath = {tmp_path / 'lib'}\n",
            "tests/test_a.py": "def test_a():\n    import tracker  # noqa: F401\n",
        }
    )
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
    )
    assert plain.returncode != 0, plain.stdout
    r = cli(root, "verify")
    assert "met   0001/P1#1" not in r.out and "hidden by the tracker's" in r.out, r.out + r.err
