"""Issue 12, speed that does not decay: what a status pays for history, in real repositories and stores.

The fixes that make a status computed from the store cheaper (the history replay shares one test index, bench
results only for phases with bench gates, the store read once, result copies not parsed again, nothing under
``.tracker/`` hashed as part of the tree) and the status index that makes a warm status independent of history.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resultfiles import case, result, write
from tracker_testutil import phase, plan_text

from tracker.base import fileio
from tracker.base.cache import MAX_CACHE_BYTES, Cache
from tracker.base.contract import Clock
from tracker.core.model import BenchGate, ManualGate, Phase, Plan, Store, TestGate, TestRun, gate_hash
from tracker.core.testgate import TestIndex
from tracker.store import evidence, evidence_schema

STORE = ".tracker/evidence"
INDEX = ".tracker/cache/status-index.json"
COMMIT = "c" * 40


def utc(offset_s: float = 0.0) -> str:
    """This machine's time plus ``offset_s``, in the store's shape."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


def run_doc(when: str, tests: dict[str, str], *, gates: dict[str, str] | None = None, files: dict[str, str] | None = None,
            args: list[str] | None = None, status: str = "complete", running: dict[str, Any] | None = None,
            host: str = "elsewhere") -> dict[str, Any]:  # fmt: skip
    """A tracker-test-run: ``tests`` maps node ids to ``outcome`` or ``outcome:reason``."""
    recs = [{"nodeid": n, "outcome": o.partition(":")[0], "reason": o.partition(":")[2], "duration": 0.01, "markers": []}
            for n, o in sorted(tests.items())]  # fmt: skip
    doc: dict[str, Any] = {
        "schema": "tracker-test-run", "version": 1, "status": status,
        "provenance": {"time": when, "host": host, "commit": COMMIT, "dirty": False, "args": args},
        "gates": gates or {}, "files": files or {}, "tests": recs,
    }  # fmt: skip
    if running is not None:
        doc["running"] = running
    return doc


def signoff_doc(
    when: str, key: str, gate: ManualGate, phase_manual: list[str], files: dict[str, str] | None = None
) -> dict[str, Any]:
    return {"schema": "tracker-signoff", "version": 1, "gate_key": key, "gate_hash": gate_hash(gate), "phase_manual": phase_manual,
            "manual": gate.manual, "by": "me", "why": "looked", "time": when, "host": "h", "commit": COMMIT, "dirty": False,
            "files": files or {}}  # fmt: skip


def put(root: Path, name: str, doc: object) -> Path:
    """Write ``doc`` (JSON) into the evidence store."""
    path = root / STORE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(doc).encode())
    return path


class Reads:
    """Every path a module's ``read_regular`` is asked for (the real function still reads it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *modules: Any) -> None:
        self.paths: list[str] = []
        for module in modules:
            real = module.read_regular

            def spy(path: Path, *args: Any, _real: Any = real, **kw: Any) -> bytes:
                self.paths.append(Path(path).as_posix())
                return _real(path, *args, **kw)

            monkeypatch.setattr(module, "read_regular", spy)

    def of(self, part: str) -> list[str]:
        return [p for p in self.paths if part in p]


# --- The history replay behind "regressed" -------------------------------------------------------------------


def _old_was_done(plan: Plan, phase_: Phase, store: Store) -> bool:
    """The replay as it was before one index served every prefix: a test index built for each (the oracle)."""
    from tracker.core.manual_gate import manual_hashes, manual_verdict
    from tracker.core.model import gate_key

    events = []
    latest = ""
    for i, r in enumerate(store.runs):
        latest = max(latest, r.time)
        events.append((latest, 0, i))
    events += [(str(d.get("time", "")), 1, i) for i, (_, d) in enumerate(store.signoffs)]
    events.sort(key=lambda e: e[0])
    for k in range(len(events), 0, -1):
        seen = events[:k]
        prefix = Store(
            runs=[store.runs[i] for _, kind, i in seen if kind == 0],
            signoffs=[store.signoffs[i] for _, kind, i in seen if kind == 1],
        )
        tests = TestIndex(prefix)
        met = True
        for i, gate in enumerate(phase_.gates):
            key = gate_key(plan.id, phase_.id, i)
            met = (
                tests.verdict(key, gate)[0].met
                if isinstance(gate, TestGate)
                else manual_verdict(key, gate, prefix, manual_hashes(phase_))[0].met
            )
            if not met:
                break
        if met and phase_.gates:
            return True
    return False


NODES = ["t.py::a", "t.py::b", "t.py::c", "u.py::d", "t.py"]
OUTCOMES = ["passed", "failed", "skipped", "error", "deselected", "xfailed", "notrun"]
GATES = [
    TestGate("t.py::a"),
    TestGate("t.py::b"),
    TestGate("t.py"),
    TestGate("u.py::d"),
    TestGate("t.py", marker="slow"),
]
MANUAL = ManualGate("looked at it")


def _store(draw: Any) -> Store:
    runs, signoffs = [], []
    for i in range(draw(st.integers(0, 14))):
        when = f"2026-01-01T00:00:{draw(st.integers(0, 20)):02d}Z"
        if draw(st.integers(0, 5)) == 0:
            signoffs.append(
                (
                    f"{STORE}/s{i}.json",
                    signoff_doc(when, "0001/P1#" + str(draw(st.integers(1, 3))), MANUAL, [gate_hash(MANUAL)]),
                )
            )
            continue
        tests = draw(st.dictionaries(st.sampled_from(NODES), st.sampled_from(OUTCOMES), max_size=4))
        recs = [
            {"nodeid": n, "outcome": o, "reason": "", "markers": ["slow"] if n.endswith("a") else []}
            for n, o in tests.items()
        ]
        args = draw(st.sampled_from([None, ["t.py"], ["."], ["u.py::d"]]))
        prov = {"time": when, "host": "h", "commit": COMMIT, "args": args}
        runs.append(TestRun(f"{STORE}/r{i}.json", prov, {}, {}, recs))
    runs.sort(key=lambda r: r.time)  # the store's order (the name breaks ties: the numbering keeps them)
    signoffs.sort(key=lambda s: s[1]["time"])
    return Store(runs=runs, signoffs=signoffs)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_replay_with_one_index_answers_as_an_index_per_prefix(data: st.DataObject) -> None:
    from tracker.core.history import was_done

    store = _store(data.draw)
    gates = tuple(data.draw(st.lists(st.sampled_from([*GATES, MANUAL]), min_size=1, max_size=3)))
    plan = Plan("0001", "p", "plans/0001-p.md", None, (Phase("P1", "t", (), (), gates),))
    assert was_done(plan, plan.phases[0], store) == _old_was_done(plan, plan.phases[0], store)
    assert was_done(plan, plan.phases[0], store, tests=TestIndex(store)) == _old_was_done(plan, plan.phases[0], store)


def test_the_replay_builds_one_test_index_however_long_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.core import history, testgate

    built = []

    class Counted(testgate.TestIndex):
        def __init__(self, store: Store) -> None:
            built.append(len(store.runs))
            super().__init__(store)

    monkeypatch.setattr(history, "TestIndex", Counted)  # the index the replay builds
    passed = TestRun(
        f"{STORE}/0.json",
        {"time": "2026-01-01T00:00:00Z", "host": "h"},
        {},
        {},
        [{"nodeid": "t.py::a", "outcome": "passed"}],
    )
    failing = [TestRun(f"{STORE}/{i}.json", {"time": f"2026-01-01T00:{i:02d}:00Z", "host": "h"}, {}, {}, [{"nodeid": "t.py::a", "outcome": "failed"}])
               for i in range(1, 31)]  # fmt: skip
    plan = Plan("0001", "p", "plans/0001-p.md", None, (Phase("P1", "t", (), (), (TestGate("t.py::a"),)),))
    assert history.was_done(plan, plan.phases[0], Store(runs=[passed, *failing]))
    assert built == [31]  # was: one index per prefix, 31 of them


# --- What a status computed from the store reads --------------------------------------------------------------

BENCH = 'bench = "m"\nwhere = { k = 1 }\nat_most = 5.0'
TWO_PHASES = plan_text("0001", phase("P1", 'test = "t.py::a"') + phase("P2", BENCH))


def _regressed_repo(repo: Callable[..., Path]) -> Path:
    """P1 done once, failing now (regressed); P2 a bench gate met by a result in bench/results/."""
    root = repo({"plans/0001-a.md": TWO_PHASES, "t.py": "", ".gitignore": ".tracker/cache/\n"})
    put(root, "1.json", run_doc(utc(-60), {"t.py::a": "passed"}))
    put(root, "2.json", run_doc(utc(-30), {"t.py::a": "failed:boom"}))
    write(root / "bench/results/r.json", result([case("m", {"k": 1}, [1.0, 2.0, 3.0])], time=utc(-45)))
    return root


def test_a_regression_without_bench_gates_never_parses_the_results(
    repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.base.cache import Cache
    from tracker.base.file_index import FileIndex
    from tracker.base.fingerprint import tree_file_ids
    from tracker.core.model import Status
    from tracker.core.status import compute
    from tracker.plans.load import load_plans
    from tracker.store import result_files
    from tracker.store.derive import repo_bench_evaluator

    root = _regressed_repo(repo)
    plans = load_plans(root)[1]

    def statuses() -> Any:
        cache = Cache(root)
        store = evidence.load(root, strict=False)
        got = compute(
            plans, store, lambda: FileIndex(tree_file_ids(root)), lambda: repo_bench_evaluator(root, store, cache=cache)
        )
        cache.write()
        return got

    first = statuses()  # bench verdicts now cached by the results' content
    assert first["0001/P1"].status is Status.REGRESSED and first["0001/P2"].status is Status.DONE
    parsed = []
    real = result_files.load_results
    monkeypatch.setattr(result_files, "load_results", lambda *a, **k: parsed.append(a) or real(*a, **k))
    assert statuses() == first
    assert parsed == []  # was: the replay of P1, which has no bench gate, parsed every result file


def test_status_reads_each_store_file_once(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.core.status import compute
    from tracker.plans.load import load_plans
    from tracker.store import bench_evaluator, result_files
    from tracker.store.derive import repo_bench_evaluator

    root = _regressed_repo(repo)
    write(root / STORE / "copy.json", result([case("m", {"k": 1}, [1.0, 2.0, 3.0])], time=utc(-50)))
    plans = load_plans(root)[1]
    reads = Reads(monkeypatch, evidence, result_files, bench_evaluator)
    store = evidence.load(root, strict=False)
    compute(plans, store, lambda: None, lambda: repo_bench_evaluator(root, store))  # type: ignore[arg-type,return-value]
    for name in ("1.json", "2.json"):
        assert len(reads.of(f"{STORE}/{name}")) == 1  # was 3: the store, then twice more to find the result copies


def test_result_copies_found_valid_are_not_parsed_again(
    repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo({"t.py": ""})
    copy = write(root / STORE / "copy.json", result([case("m", {"k": 1}, [1.0])], time=utc(-10)))
    put(root, "run.json", run_doc(utc(-20), {"t.py::a": "passed"}))
    monkeypatch.setattr(fileio, "SETTLED_NS", 0)  # settled at once (the real rule is tested with the index)
    cache = Cache(root)
    first = evidence.load(root, strict=False, results=False, cache=cache)
    cache.write()  # what the command does at its end
    assert [rel for rel, _ in first.bench] == [f"{STORE}/copy.json"] and not first.invalid
    reads = Reads(monkeypatch, evidence)
    again = evidence.load(root, strict=False, results=False)
    assert reads.of("copy.json") == [] and reads.of("run.json")  # the ~0.6 MB copies are the store's largest files
    assert again.bench == [(f"{STORE}/copy.json", None)] and again.runs == first.runs
    # Its time is checked against the clock all the same: with the clock an hour back it is in the future.
    behind = evidence.load(root, strict=False, results=False, clock=Clock(time.time() - 3600))
    assert behind.invalid == evidence.load(root, strict=False, clock=Clock(time.time() - 3600)).invalid
    assert [line.split(":")[0] for line in behind.invalid] == [f"{STORE}/copy.json", f"{STORE}/run.json"]
    assert all("in the future" in line for line in behind.invalid)
    # Edited (valid JSON, not a result any more): read again, and its new verdict is the store's.
    copy.write_text(json.dumps({"schema": "tracker-bench-result", "version": 1, "provenance": {}, "cases": []}))
    assert evidence.load(root, strict=False, results=False).invalid == evidence.load(root, strict=False).invalid != []


def test_the_tree_fingerprint_hashes_nothing_under_the_tracker_folder(
    repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.base import fingerprint

    root = repo({"src/a.py": "x = 1\n"})
    for i in range(5):
        put(root, f"{i}.json", run_doc(utc(), {"t.py::a": "passed"}))  # uncommitted evidence: untracked files
    (root / "src/b.py").write_text("y = 2\n")
    hashed = []
    real = fingerprint._hash_file
    monkeypatch.setattr(
        fingerprint, "_hash_file", lambda path: hashed.append(path.relative_to(root).as_posix()) or real(path)
    )
    ids = fingerprint.tree_file_ids(root)
    assert set(ids) == {"src/a.py", "src/b.py"} and hashed == [
        "src/b.py"
    ]  # was: each evidence file read and hashed too
    (root / ".tracker-notes").write_text("kept\n")  # a name that only starts like the folder is the tree's
    assert ".tracker-notes" in fingerprint.tree_file_ids(root)


@pytest.mark.parametrize(
    ("ids", "ok"),
    [({}, True), ({"a": "0" * 40}, True), ({"a": "f" * 64, "b": "0123456789abcdef" * 2 + "0" * 8}, True), ({"a": "0" * 41}, False),
     ({"a": "g" * 40}, False), ({"a": "A" * 40}, False), ({"a": "é" * 40}, False), ({"a": "\udc80" * 40}, False), ({"a": 1}, False),
     ({"a": None}, False), ([], False)],
)  # fmt: skip
def test_file_id_maps(ids: object, ok: bool) -> None:
    assert evidence_schema._file_ids(ids) is ok


# --- Bench verdicts cached across runs ------------------------------------------------------------------------


def test_cached_bench_verdicts_are_not_used_once_the_clock_is_behind(repo: Callable[..., Path]) -> None:
    from tracker.store.bench_evaluator import Evaluator, RepoResults

    root = repo({"t.py": ""})
    write(root / "bench/results/r.json", result([case("m", {"k": 1}, [1.0, 2.0, 3.0])], time=utc(-5)))
    gate = BenchGate("m", {"k": 1}, at_most=5.0)
    assert Evaluator(RepoResults(root, clock=Clock())).__call__(gate).met  # cached now
    behind = Evaluator(RepoResults(root, clock=Clock(time.time() - 3600)))(gate)
    assert not behind.met and "in the future" in behind.reason  # was: met, from the cache


def test_a_folder_named_like_a_verdict_file_does_not_stop_status(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = repo({"plans/0001-a.md": TWO_PHASES, "t.py": "", ".gitignore": ".tracker/cache/\n"})
    write(root / "bench/results/r.json", result([case("m", {"k": 1}, [1.0, 2.0, 3.0])], time=utc(-45)))
    (root / ".tracker/cache/results/verdicts-old.json").mkdir(parents=True)
    res = cli(root, "status")
    assert res.code == 0 and "P2  done" in res.out, res.err  # was: IsADirectoryError, a traceback


# --- Runs that name a running test -------------------------------------------------------------------------


@pytest.mark.parametrize("pid", [0, -1, 2**70, -(2**70)])
def test_a_pid_no_process_can_have_is_a_crashed_run(repo: Callable[..., Path], pid: object) -> None:
    import socket

    root = repo({"t.py": ""})
    put(root, "1.json", run_doc(utc(-60), {"t.py::a": "passed"}))
    running = {"nodeid": "t.py::a", "markers": [], "pid": pid}
    put(root, "2.json", run_doc(utc(-30), {}, status="incomplete", running=running, host=socket.gethostname()))
    store = evidence.load(
        root, strict=False
    )  # was: OverflowError for a huge pid; 0 and -1 read as alive (kill asks a group)
    assert [r.tests[0]["outcome"] for r in store.runs] == ["passed", "error"]
    assert [p[:4] for p in store.processes] == [(pid, socket.gethostname(), False, None)]  # (..., pid_start, time)


# --- The status index --------------------------------------------------------------------------------------
#
# Status read from the index must be status computed from the store, always. ``scratch`` computes it from the
# store alone (every file parsed, no index); ``derive`` is what every command calls.


def scratch(root: Path, clock: Clock) -> dict[str, Any]:
    """Every phase's status computed from the store, parsing every file: no index, no memo of result copies."""
    from tracker.base.file_index import FileIndex
    from tracker.base.fingerprint import tree_file_ids
    from tracker.core.status import compute
    from tracker.plans.load import load_plans
    from tracker.store.derive import repo_bench_evaluator

    store = evidence.load(root, strict=False, clock=clock)
    return compute(
        load_plans(root)[1],
        store,
        lambda: FileIndex(tree_file_ids(root)),
        lambda: repo_bench_evaluator(root, store, clock),
    )


def derived(root: Path, clock: Clock) -> dict[str, Any]:
    """Status as a command derives it: through one cache, written at its end."""
    from tracker.base.cache import Cache
    from tracker.plans.load import load_plans
    from tracker.store.derive import derive

    cache = Cache(root)
    got = derive(root, load_plans(root, cache=cache)[1], clock, cache)
    cache.write()
    return got


class Loads:
    """How many times the store was read (a status answered from the index reads it 0 times)."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = evidence.load

        def counting(*args: Any, **kw: Any) -> Store:
            self.count += 1
            return real(*args, **kw)

        mp.setattr(evidence, "load", counting)


def settle_at_once(mp: pytest.MonkeyPatch) -> None:
    """Trust a stat signature as soon as it is taken. The rule that makes an equal signature mean equal bytes
    (ctime older than SETTLED_NS) is tested on its own below; the properties here keep it true by giving every
    write a later mtime (:class:`Repo`), as the passing of time gives every real write a later ctime."""
    from tracker.store import statusindex

    mp.setattr(statusindex, "SETTLED_NS", 0)
    mp.setattr(fileio, "SETTLED_NS", 0)


def plan_doc(phases: list[dict[str, Any]]) -> str:
    """A plan file from phase descriptions (id, paths, gates as TOML bodies, depends)."""
    body = ""
    for ph in phases:
        paths = ", ".join(f'"{p}"' for p in ph["paths"])
        depends = ", ".join(f'"{d}"' for d in ph.get("depends", ()))
        body += phase(ph["id"], *ph["gates"], paths=paths, depends=depends)
    return plan_text("0001", body)


class Repo:
    """A throwaway repository (no git: the tree is walked) that a property test changes step by step.

    Every write gets an mtime later than any before it, so no two versions of a file share a stat signature."""

    def __init__(self, root: Path) -> None:
        import socket

        self.root = root
        self.host = socket.gethostname()
        self.tick = time.time_ns()
        self.offset = 0.0  # the clock, relative to this machine's
        self.sleeper: Any = None
        self.plan = {"t2": '"t.py::b"', "manual": "looked at it", "manual2": "second look", "limit": "5.0", "p1paths": ["src/a.py"],
                     "p4": False}  # fmt: skip
        for rel, text in {"t.py": "", "src/a.py": "a = 1\n", "src/b.py": "b = 1\n"}.items():
            self.write(rel, text.encode())
        self.write_plan()

    def write(self, rel: str, data: bytes) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.tick += 1_000_000
        import os

        os.utime(path, ns=(self.tick, self.tick))

    def phases(self) -> list[dict[str, Any]]:
        p = self.plan
        out = [
            {"id": "P1", "paths": p["p1paths"], "gates": ['test = "t.py::a"', f"test = {p['t2']}"]},
            {
                "id": "P2",
                "paths": ["src/**"],
                "gates": ['test = "t.py"', f'manual = "{p["manual"]}"', f'manual = "{p["manual2"]}"'],
            },
            {
                "id": "P3",
                "paths": ["src/b.py"],
                "depends": ["P1"],
                "gates": [f'bench = "m"\nwhere = {{ k = 1 }}\nat_most = {p["limit"]}'],
            },
        ]
        if p["p4"]:
            out.append({"id": "P4", "paths": [], "gates": ['test = "t.py::c"', 'manual = "second look"']})
        return out

    def write_plan(self) -> None:
        self.write("plans/0001-a.md", plan_doc(self.phases()).encode())

    def alive_pid(self) -> int:
        import subprocess

        if self.sleeper is None:
            self.sleeper = subprocess.Popen(["sleep", "600"])
        return int(self.sleeper.pid)

    def close(self) -> None:
        if self.sleeper is not None:
            self.sleeper.kill()
            self.sleeper.wait()


def _tree_ids(root: Path) -> dict[str, str]:
    from tracker.base.fingerprint import walk_file_ids

    return walk_file_ids(root)


def _gate_hashes(repo: Repo, draw: Any) -> dict[str, str]:
    """Gate hashes a run records: of some current gates, some as they were (another definition)."""
    from tracker.core.model import TestGate as T

    keys = {"0001/P1#1": T("t.py::a"), "0001/P1#2": T(repo.plan["t2"].strip('"')), "0001/P2#1": T("t.py")}
    chosen = draw(st.lists(st.sampled_from(sorted(keys)), unique=True, max_size=3))
    return {k: gate_hash(keys[k]) if draw(st.booleans()) else gate_hash(T("t.py::z")) for k in chosen}


def _files(repo: Repo, draw: Any) -> dict[str, str]:
    """File ids a piece of evidence records: the tree now, or with a file changed or missing."""
    ids = {k: v for k, v in _tree_ids(repo.root).items() if not k.startswith(("plans/", ".tracker/"))}
    how = draw(st.sampled_from(["now", "changed", "missing"]))
    if how != "now" and ids:
        victim = draw(st.sampled_from(sorted(ids)))
        ids = {k: ("1" * 40 if how == "changed" else v) for k, v in ids.items() if how == "changed" or k != victim}
    return ids


def _step(repo: Repo, draw: Any, names: list[str]) -> str:
    """One change to the repository: evidence added, edited or removed, the plan or the tree edited, the
    clock moved, a recorded process ended. Returns what it did (shown when a property fails)."""
    kind = draw(st.sampled_from(["run", "running", "kill", "clock", "edit", "run", "running", "kill", "signoff", "result",
                                 "copy", "delete", "plan", "tree", "clock", "garbage"]))  # fmt: skip
    when = utc(repo.offset + draw(st.sampled_from([-5, 0, 200, -61, 400, -600, -7200, 4000])))
    name = f"{len(names):03d}-{kind}.json"
    if kind == "run":
        tests = draw(st.dictionaries(st.sampled_from(["t.py::a", "t.py::b", "t.py::c", "t.py"]),
                                     st.sampled_from(["passed", "passed", "failed:boom", "skipped:later", "error:setup"]), max_size=3))  # fmt: skip
        args = draw(st.sampled_from([None, ["t.py"], ["."], ["t.py::a"]]))
        doc = run_doc(when, tests, gates=_gate_hashes(repo, draw), files=_files(repo, draw), args=args)
        repo.write(f"{STORE}/{name}", json.dumps(doc).encode())
    elif kind == "signoff":
        text = draw(st.sampled_from([repo.plan["manual"], "looked at it", "looked twice", "second look", "third look"]))
        key = draw(st.sampled_from(["0001/P2#2", "0001/P2#3", "0001/P4#2"]))
        other = ManualGate(draw(st.sampled_from(["second look", "third look", "looked at it"])))
        gate = ManualGate(text)
        manual = [gate_hash(gate), gate_hash(other)] if key.endswith("#2") else [gate_hash(other), gate_hash(gate)]
        doc = signoff_doc(
            when, key, gate, manual if key.startswith("0001/P2") else [gate_hash(gate)], _files(repo, draw)
        )
        repo.write(f"{STORE}/{name}", json.dumps(doc).encode())
    elif kind in ("result", "copy"):
        samples = draw(st.lists(st.sampled_from([1.0, 2.0, 4.0, 6.0, 9.0]), min_size=1, max_size=4))
        measured = {"src/b.py": (repo.root / "src/b.py").read_bytes() if draw(st.booleans()) else b"old\n"}
        doc = result([case("m", {"k": 1}, samples)], time=when, files=measured)
        where = f"{STORE}/{name}" if kind == "copy" else f"bench/results/{name}"
        repo.write(where, json.dumps(doc).encode())
    elif kind == "running":
        pid, host = draw(
            st.sampled_from([(repo.alive_pid(), repo.host), (2**30, repo.host), (repo.alive_pid(), "elsewhere")])
        )
        doc = run_doc(when, {}, status="incomplete", running={"nodeid": draw(st.sampled_from(["t.py::a", "t.py::b"])), "pid": pid},
                      host=host)  # fmt: skip
        repo.write(f"{STORE}/{name}", json.dumps(doc).encode())
    elif kind == "garbage":
        repo.write(f"{STORE}/{name}", draw(st.sampled_from([b"{", b"[]", b'{"schema": "tracker-test-run"}'])))
    elif kind in ("delete", "edit"):
        present = sorted(
            p.relative_to(repo.root).as_posix()
            for folder in (STORE, "bench/results")
            for p in (repo.root / folder).glob("*.json")
        )
        if not present:
            return "nothing to delete or edit"
        victim = draw(st.sampled_from(present))
        if kind == "delete":
            (repo.root / victim).unlink()
        else:  # another valid document in its place, or a byte changed where it stays the same size
            data = (repo.root / victim).read_bytes()
            flipped = (
                data.replace(b'"passed"', b'"failed"', 1) if b'"passed"' in data else data.replace(b"1.0", b"9.0", 1)
            )
            repo.write(victim, flipped)
        name = victim
    elif kind == "plan":
        field = draw(st.sampled_from(["t2", "manual", "manual2", "limit", "p1paths", "p4"]))
        choices = {"t2": ['"t.py::b"', '"t.py::c"'], "manual": ["looked at it", "looked twice"], "manual2": ["second look", "third look"],
                   "limit": ["5.0", "1.5", "5"],
                   "p1paths": [["src/a.py"], ["src/**"], []], "p4": [False, True]}  # fmt: skip
        repo.plan[field] = draw(st.sampled_from(choices[field]))
        repo.write_plan()
        name = f"plan {field}={repo.plan[field]}"
    elif kind == "tree":
        rel = draw(st.sampled_from(["src/a.py", "src/b.py"]))
        repo.write(rel, draw(st.sampled_from([b"a = 1\n", b"b = 1\n", b"a = 2\n"])))
        name = rel
    elif kind == "clock":
        repo.offset += draw(st.sampled_from([-400, 400, -30, 30, -7200, 7200]))
        name = f"clock {repo.offset:+.0f} s"
    elif repo.sleeper is not None:  # kill
        repo.sleeper.kill()
        repo.sleeper.wait()
        repo.sleeper = None
        name = "killed the running process"
    names.append(name)
    return f"{kind} {name}"


def _index_equals_scratch(data: st.DataObject, steps: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        settle_at_once(mp)
        repo = Repo(Path(tmp))
        loads = Loads(mp)
        names: list[str] = []
        try:
            for _ in range(data.draw(st.integers(1, steps))):
                did = _step(repo, data.draw, names)
                at = time.time() + repo.offset  # one time for all three: a reason may name the clock's second
                clock = Clock(at)
                expected = scratch(repo.root, clock)
                refused = (
                    clock.soonest is not None
                )  # a file in the future: no index is kept (its reason names the clock)
                first = derived(repo.root, Clock(at))
                before = loads.count
                second = derived(repo.root, Clock(at))
                assert first == expected, did
                assert second == expected, did
                assert refused or loads.count == before, f"after {did}: the second status did not come from the index"
        finally:
            repo.close()


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_status_from_the_index_is_status_from_the_store(data: st.DataObject) -> None:
    _index_equals_scratch(data, 12)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_status_from_the_index_is_status_from_the_store_deeper(data: st.DataObject) -> None:
    _index_equals_scratch(data, 30)


def _toggle(scene: Scenario, field: str, values: list[Any]) -> list[dict[str, Any]]:
    """Set the plan's ``field`` to each value in turn, then each again: the second round is answered from the index
    (it keeps what it learned about every version while the evidence stays the same), and equals the store's."""
    seen = []
    for value in values:
        scene.repo.plan[field] = value
        scene.repo.write_plan()
        seen.append(scene.check())
    for value, first in zip(values, seen, strict=False):
        scene.repo.plan[field] = value
        scene.repo.write_plan()
        assert scene.cached() == first
    return seen


class Scenario:
    """A :class:`Repo` driven by hand: each check compares status from the index with status from the store."""

    def __init__(self, tmp: Path, mp: pytest.MonkeyPatch) -> None:
        settle_at_once(mp)
        self.repo = Repo(tmp)
        self.loads = Loads(mp)
        self.n = 0

    def put(self, doc: dict[str, Any], folder: str = STORE) -> str:
        self.n += 1
        rel = f"{folder}/{self.n:03d}.json"
        self.repo.write(rel, json.dumps(doc).encode())
        return rel

    def check(self, offset: float = 0.0) -> dict[str, Any]:
        """Status now: from the index when it is there; asserted equal to status from the store."""
        at = time.time() + offset
        got = derived(self.repo.root, Clock(at))
        assert got == scratch(self.repo.root, Clock(at))
        return got

    def cached(self, offset: float = 0.0) -> dict[str, Any]:
        """:meth:`check`, asserting that it came from the index."""
        before = self.loads.count
        got = derived(self.repo.root, Clock(time.time() + offset))
        assert self.loads.count == before, "not from the index"
        assert got == scratch(self.repo.root, Clock(time.time() + offset))
        return got


@pytest.fixture
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    s = Scenario(tmp_path, monkeypatch)
    yield s
    s.repo.close()


def _passing(when: str, *nodes: str, files: dict[str, str] | None = None) -> dict[str, Any]:
    return run_doc(when, dict.fromkeys(nodes, "passed"), files=files)


def test_a_warm_status_reads_no_store_file(scene: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.store import bench_evaluator, result_files

    scene.put(_passing(utc(-60), "t.py::a", "t.py::b", "t.py"))
    scene.put(result([case("m", {"k": 1}, [1.0, 2.0])], time=utc(-50), files={"src/b.py": b"b = 1\n"}), "bench/results")
    first = scene.check()
    reads = Reads(monkeypatch, evidence, result_files, bench_evaluator)
    assert derived(scene.repo.root, Clock()) == first
    assert reads.of(STORE) == [] and reads.of("bench/results") == [] and reads.paths == []


def test_a_file_changed_in_place_to_the_same_size_is_seen(scene: Scenario) -> None:
    rel = scene.put(_passing(utc(-60), "t.py::a"))
    assert scene.check()["0001/P1"].verdicts[0].met
    scene.cached()
    path = scene.repo.root / rel
    scene.repo.write(rel, path.read_bytes().replace(b'"passed"', b'"failed"'))  # same size, same inode
    assert scene.check()["0001/P1"].verdicts[0].failed


def test_removed_files_are_seen_as_tracker_gc_removes_them(scene: Scenario) -> None:
    scene.put(_passing(utc(-60), "t.py::a"))
    failing = scene.put(run_doc(utc(-30), {"t.py::a": "failed:boom"}))
    assert scene.check()["0001/P1"].verdicts[0].failed
    (scene.repo.root / failing).unlink()
    assert scene.check()["0001/P1"].verdicts[0].met


def test_a_clock_set_back_does_not_keep_a_file_it_puts_in_the_future(scene: Scenario) -> None:
    scene.put(_passing(utc(-5), "t.py::a"))
    assert scene.check()["0001/P1"].verdicts[0].met
    scene.cached(offset=30)  # forward: every time accepted stays accepted
    behind = scene.check(offset=-400)["0001/P1"].verdicts[0]
    assert not behind.met and "in the future" in behind.reason


def test_no_index_is_kept_while_a_file_is_in_the_future(scene: Scenario) -> None:
    scene.put(_passing(utc(-60), "t.py::a"))
    ahead = scene.put(_passing(utc(400), "t.py::b"))
    assert "in the future" in scene.check()["0001/P1"].verdicts[0].reason
    assert not (
        scene.repo.root / ".tracker/cache/status-index.json"
    ).exists()  # its reason names the clock, which moves on
    assert scene.check(offset=200)["0001/P1"].verdicts[1].met  # once the clock is close enough, the file counts
    (scene.repo.root / ahead).unlink()
    scene.check()
    scene.cached()


def test_a_process_that_ends_makes_its_run_a_crash(scene: Scenario) -> None:
    scene.put(_passing(utc(-60), "t.py::a"))
    running = {"nodeid": "t.py::a", "markers": [], "pid": scene.repo.alive_pid()}
    scene.put(run_doc(utc(-30), {}, status="incomplete", running=running, host=scene.repo.host))
    assert scene.check()["0001/P1"].verdicts[0].met  # still running: the run does not count yet
    scene.cached()
    scene.repo.sleeper.kill()
    scene.repo.sleeper.wait()
    assert "crashed" in scene.check()["0001/P1"].verdicts[0].reason


def test_another_manual_gate_of_the_phase_edited_decides_the_sign_off_anew(scene: Scenario) -> None:
    signed, other = ManualGate("looked twice"), ManualGate("second look")
    # Signed when gate 2 read "looked twice": it was edited in place since, the other manual gate as it was.
    scene.put(signoff_doc(utc(-60), "0001/P2#2", signed, [gate_hash(signed), gate_hash(other)]))
    # With "third look", two of its manual gates changed: not the same phase any more.
    before, after = _toggle(scene, "manual2", ["second look", "third look"])
    assert before["0001/P2"].verdicts[1].met and not after["0001/P2"].verdicts[1].met


def test_paths_edited_are_judged_on_the_files_under_the_new_paths(scene: Scenario) -> None:
    ids = _tree_ids(scene.repo.root)
    scene.put(_passing(utc(-60), "t.py::a", "t.py::b", files={**ids, "src/b.py": "1" * 40}))
    wide, narrow = _toggle(scene, "p1paths", [["src/**"], ["src/a.py"]])
    assert narrow["0001/P1"].status.value == "done"  # src/a.py is unchanged
    assert wide["0001/P1"].status.value == "stale" and wide["0001/P1"].changed == ("src/b.py",)


def test_gates_edited_in_a_regressed_phase_replay_the_history_anew(scene: Scenario) -> None:
    scene.put(_passing(utc(-90), "t.py::a", "t.py::b"))
    scene.put(run_doc(utc(-75), {"t.py::a": "failed:boom"}))
    scene.put(run_doc(utc(-60), {"t.py::c": "passed"}))
    scene.put(run_doc(utc(-30), {"t.py::a": "failed:boom", "t.py::b": "failed:boom", "t.py::c": "failed:boom"}))
    # a and b passed together once; a and c each passed once, never together
    ab, ac = _toggle(scene, "t2", ['"t.py::b"', '"t.py::c"'])
    assert ab["0001/P1"].status.value == "regressed" and ac["0001/P1"].status.value == "planned"


def test_a_bench_threshold_edited_is_judged_anew(scene: Scenario) -> None:
    scene.put(result([case("m", {"k": 1}, [3.0, 3.0])], time=utc(-50), files={"src/b.py": b"b = 1\n"}), "bench/results")
    five, tight, whole = _toggle(scene, "limit", ["5.0", "1.5", "5"])
    assert five["0001/P3"].verdicts[0].met and tight["0001/P3"].verdicts[0].failed and whole == five


# --- Files that change while status reads them ---------------------------------------------------------------


def test_an_index_is_kept_only_once_every_file_has_settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.store import statusindex

    repo = Repo(tmp_path)
    monkeypatch.setattr(statusindex, "SETTLED_NS", 300_000_000)  # 0.3 s instead of 2 s, the same rule
    put(repo.root, "1.json", _passing(utc(-60), "t.py::a"))  # written just now: its ctime is recent
    index = repo.root / INDEX
    first = derived(repo.root, Clock())
    # A second write within the same clock tick could leave size and times as they are: the listing could not
    # tell it from this one, so nothing computed now is kept.
    assert not index.exists()
    time.sleep(0.4)
    assert derived(repo.root, Clock()) == first and index.exists()


def test_a_file_added_while_status_reads_the_store_is_seen_next_time(
    scene: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene.put(_passing(utc(-60), "t.py::a"))
    scene.check()
    real = evidence.load

    def load_after_a_new_run(*args: Any, **kw: Any) -> Store:  # lands after the listing, before the reads
        scene.put(run_doc(utc(-30), {"t.py::a": "failed:boom"}))
        monkeypatch.setattr(evidence, "load", real)
        return real(*args, **kw)

    scene.put(_passing(utc(-50), "t.py::b"))
    monkeypatch.setattr(evidence, "load", load_after_a_new_run)
    derived(scene.repo.root, Clock())
    assert scene.check()["0001/P1"].verdicts[0].failed


def test_a_file_added_once_status_has_read_the_store_is_seen_next_time(
    scene: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene.put(_passing(utc(-60), "t.py::a"))
    scene.check()
    real = evidence.load

    def new_run_after_load(*args: Any, **kw: Any) -> Store:  # the statuses are computed without it
        store = real(*args, **kw)
        scene.put(run_doc(utc(-30), {"t.py::a": "failed:boom"}))
        monkeypatch.setattr(evidence, "load", real)
        return store

    scene.put(_passing(utc(-50), "t.py::b"))
    monkeypatch.setattr(evidence, "load", new_run_after_load)
    assert derived(scene.repo.root, Clock())["0001/P1"].verdicts[0].met
    assert scene.check()["0001/P1"].verdicts[0].failed


WRITER = """
import json, os, sys, time
store, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 100 + i))
    outcome = "failed" if i % 3 == 2 else "passed"
    doc = {"schema": "tracker-test-run", "version": 1, "status": "complete",
           "provenance": {"time": when, "host": "w", "commit": None, "dirty": None}, "gates": {}, "files": {},
           "tests": [{"nodeid": "t.py::a", "outcome": outcome, "reason": "", "duration": 0.0, "markers": []}]}
    tmp = os.path.join(store, f".w{i}.tmp")
    with open(tmp, "w") as fh:
        json.dump(doc, fh)
    os.replace(tmp, os.path.join(store, f"w{i:04d}.json"))
    time.sleep(0.003)
"""


def test_status_while_another_process_records_evidence(scene: Scenario) -> None:
    import subprocess
    import sys

    store = scene.repo.root / STORE
    store.mkdir(parents=True, exist_ok=True)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store), "150"])
    try:
        while writer.poll() is None:
            derived(scene.repo.root, Clock())  # the index written and read while files keep landing
    finally:
        writer.wait()
    final = scene.check()
    assert final["0001/P1"].verdicts[0].reason.startswith("failed") == (149 % 3 == 2)
    scene.cached()


# --- An index that is not what this code wrote ---------------------------------------------------------------


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON document, as the keys and indexes that lead to it."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _nodes(v, (*path, i))
    return out


def _replaced(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: _replaced(doc[head], rest, new)}
    return [_replaced(v, rest, new) if i == head else v for i, v in enumerate(doc)]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_an_index_of_another_shape_is_rebuilt_never_believed(data: st.DataObject) -> None:
    """A value where the index holds a container, or a container where it holds a value, anywhere: status is
    the store's, with no traceback."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        scene = Scenario(Path(tmp), mp)
        try:
            ids = _tree_ids(scene.repo.root)
            scene.put(_passing(utc(-90), "t.py::a", "t.py::b", "t.py", files=ids))
            scene.put(run_doc(utc(-60), {"t.py::a": "failed:boom"}, files=ids))
            scene.put(
                signoff_doc(utc(-50), "0001/P2#2", ManualGate("looked at it"), [gate_hash(ManualGate("looked at it"))])
            )
            running = {"nodeid": "t.py::b", "pid": scene.repo.alive_pid()}
            scene.put(run_doc(utc(-40), {}, status="incomplete", running=running, host=scene.repo.host))
            scene.put(
                result([case("m", {"k": 1}, [1.0, 2.0])], time=utc(-50), files={"src/b.py": b"b = 1\n"}),
                "bench/results",
            )
            expected = scene.check()
            index = scene.repo.root / INDEX
            doc = json.loads(index.read_bytes())
            path = data.draw(st.sampled_from(_nodes(doc)))
            old = doc
            for step in path:
                old = old[step]
            scalars = st.sampled_from([None, True, 0, -1, 1.5, "", "x", 2**70])
            containers = st.sampled_from([{}, [], {"x": 1}, [None], [[1]]])
            new = data.draw(scalars if isinstance(old, (dict, list)) else containers)
            index.write_text(json.dumps(_replaced(doc, path, new)))
            assert derived(scene.repo.root, Clock()) == expected
        finally:
            scene.repo.close()


@pytest.mark.parametrize("kind", ["garbage", "truncated", "deep", "directory", "fifo", "device", "huge", "list"])
def test_an_index_that_cannot_be_read_is_rebuilt(scene: Scenario, kind: str) -> None:
    import os

    scene.put(_passing(utc(-60), "t.py::a"))
    expected = scene.check()
    index = scene.repo.root / INDEX
    text = index.read_bytes()
    index.unlink()
    if kind == "garbage":
        index.write_bytes(b"\xff\xfe not json")
    elif kind == "truncated":
        index.write_bytes(text[: len(text) // 2])
    elif kind == "deep":
        index.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    elif kind == "directory":
        index.mkdir()
    elif kind == "fifo":
        os.mkfifo(index)
    elif kind == "device":
        index.symlink_to("/dev/zero")
    elif kind == "huge":
        with open(index, "wb") as fh:
            fh.truncate(MAX_CACHE_BYTES + 1)  # sparse: refused by its size, never read
    else:
        index.write_text("[]")
    assert derived(scene.repo.root, Clock()) == expected
    if kind in ("garbage", "truncated", "deep", "huge", "list"):  # replaced by a good one
        assert derived(scene.repo.root, Clock()) == expected and json.loads(index.read_bytes()).keys() == {
            "key",
            "data",
        }


def test_a_file_name_that_is_not_utf8_is_indexed_and_read_back(scene: Scenario) -> None:
    import os

    name = os.fsdecode(b"\xff-run.json")
    path = scene.repo.root / STORE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run_doc(utc(-60), {"t.py::a": "passed"})))
    got = scene.check()
    assert got["0001/P1"].verdicts[0].source.file == f"{STORE}/{name}"
    assert scene.cached() == got  # was: written as raw bytes, not UTF-8, so never read back: every status a miss
