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
from tracker_testutil import git, phase, plan_text

from tracker import evidence
from tracker.evidence import Clock, Store, TestRun
from tracker.model import BenchGate, ManualGate, Phase, Plan, TestGate, gate_hash
from tracker.testgate import TestIndex

STORE = ".tracker/evidence"
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


def signoff_doc(when: str, key: str, gate: ManualGate, phase_manual: list[str], files: dict[str, str] | None = None) -> dict[str, Any]:
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
    from tracker.status import gate_key
    from tracker.testgate import manual_hashes, manual_verdict

    events = []
    latest = ""
    for i, r in enumerate(store.runs):
        latest = max(latest, r.time)
        events.append((latest, 0, i))
    events += [(str(d.get("time", "")), 1, i) for i, (_, d) in enumerate(store.signoffs)]
    events.sort(key=lambda e: e[0])
    for k in range(len(events), 0, -1):
        seen = events[:k]
        prefix = Store(runs=[store.runs[i] for _, kind, i in seen if kind == 0], signoffs=[store.signoffs[i] for _, kind, i in seen if kind == 1])
        tests = TestIndex(prefix)
        met = True
        for i, gate in enumerate(phase_.gates):
            key = gate_key(plan.id, phase_.id, i)
            met = tests.verdict(key, gate)[0].met if isinstance(gate, TestGate) else manual_verdict(key, gate, prefix, manual_hashes(phase_))[0].met
            if not met:
                break
        if met and phase_.gates:
            return True
    return False


NODES = ["t.py::a", "t.py::b", "t.py::c", "u.py::d", "t.py"]
OUTCOMES = ["passed", "failed", "skipped", "error", "deselected", "xfailed", "notrun"]
GATES = [TestGate("t.py::a"), TestGate("t.py::b"), TestGate("t.py"), TestGate("u.py::d"), TestGate("t.py", marker="slow")]
MANUAL = ManualGate("looked at it")


def _store(draw: Any) -> Store:
    runs, signoffs = [], []
    for i in range(draw(st.integers(0, 14))):
        when = f"2026-01-01T00:00:{draw(st.integers(0, 20)):02d}Z"
        if draw(st.integers(0, 5)) == 0:
            signoffs.append((f"{STORE}/s{i}.json", signoff_doc(when, "0001/P1#" + str(draw(st.integers(1, 3))), MANUAL, [gate_hash(MANUAL)])))
            continue
        tests = draw(st.dictionaries(st.sampled_from(NODES), st.sampled_from(OUTCOMES), max_size=4))
        recs = [{"nodeid": n, "outcome": o, "reason": "", "markers": ["slow"] if n.endswith("a") else []} for n, o in tests.items()]
        args = draw(st.sampled_from([None, ["t.py"], ["."], ["u.py::d"]]))
        prov = {"time": when, "host": "h", "commit": COMMIT, "args": args}
        runs.append(TestRun(f"{STORE}/r{i}.json", prov, {}, {}, recs))
    runs.sort(key=lambda r: r.time)  # the store's order (the name breaks ties: the numbering keeps them)
    signoffs.sort(key=lambda s: s[1]["time"])
    return Store(runs=runs, signoffs=signoffs)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_replay_with_one_index_answers_as_an_index_per_prefix(data: st.DataObject) -> None:
    from tracker.history import was_done

    store = _store(data.draw)
    gates = tuple(data.draw(st.lists(st.sampled_from([*GATES, MANUAL]), min_size=1, max_size=3)))
    plan = Plan("0001", "p", "plans/0001-p.md", None, (Phase("P1", "t", (), (), gates),))
    assert was_done(plan, plan.phases[0], store) == _old_was_done(plan, plan.phases[0], store)
    assert was_done(plan, plan.phases[0], store, tests=TestIndex(store)) == _old_was_done(plan, plan.phases[0], store)


def test_the_replay_builds_one_test_index_however_long_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker import history, testgate

    built = []

    class Counted(testgate.TestIndex):
        def __init__(self, store: Store) -> None:
            built.append(len(store.runs))
            super().__init__(store)

    monkeypatch.setattr(testgate, "TestIndex", Counted)
    passed = TestRun(f"{STORE}/0.json", {"time": "2026-01-01T00:00:00Z", "host": "h"}, {}, {}, [{"nodeid": "t.py::a", "outcome": "passed"}])
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


def test_a_regression_without_bench_gates_never_parses_the_results(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker import results
    from tracker.fingerprint import FileIndex, tree_file_ids
    from tracker.model import Status
    from tracker.plans import load_plans
    from tracker.status import bench_evaluator, compute

    root = _regressed_repo(repo)
    plans = load_plans(root)[1]

    def statuses() -> Any:
        store = evidence.load(root, strict=False)
        return compute(plans, store, lambda: FileIndex(tree_file_ids(root)), lambda: bench_evaluator(root, store))

    first = statuses()  # bench verdicts now cached by the results' content
    assert first["0001/P1"].status is Status.REGRESSED and first["0001/P2"].status is Status.DONE
    parsed = []
    real = results.load_results
    monkeypatch.setattr(results, "load_results", lambda *a, **k: parsed.append(a) or real(*a, **k))
    assert statuses() == first
    assert parsed == []  # was: the replay of P1, which has no bench gate, parsed every result file


def test_status_reads_each_store_file_once(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker import benchstatus, results
    from tracker.plans import load_plans
    from tracker.status import bench_evaluator, compute

    root = _regressed_repo(repo)
    write(root / STORE / "copy.json", result([case("m", {"k": 1}, [1.0, 2.0, 3.0])], time=utc(-50)))
    plans = load_plans(root)[1]
    reads = Reads(monkeypatch, evidence, results, benchstatus)
    store = evidence.load(root, strict=False)
    compute(plans, store, lambda: None, lambda: bench_evaluator(root, store))  # type: ignore[arg-type,return-value]
    for name in ("1.json", "2.json"):
        assert len(reads.of(f"{STORE}/{name}")) == 1  # was 3: the store, then twice more to find the result copies


def test_result_copies_found_valid_are_not_parsed_again(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo({"t.py": ""})
    copy = write(root / STORE / "copy.json", result([case("m", {"k": 1}, [1.0])], time=utc(-10)))
    put(root, "run.json", run_doc(utc(-20), {"t.py::a": "passed"}))
    monkeypatch.setattr(evidence, "SETTLED_NS", 0)  # settled at once (the real rule is tested with the index)
    first = evidence.load(root, strict=False, results=False)
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


def test_the_tree_fingerprint_hashes_nothing_under_the_tracker_folder(repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker import fingerprint

    root = repo({"src/a.py": "x = 1\n"})
    for i in range(5):
        put(root, f"{i}.json", run_doc(utc(), {"t.py::a": "passed"}))  # uncommitted evidence: untracked files
    (root / "src/b.py").write_text("y = 2\n")
    hashed = []
    real = fingerprint._hash_file
    monkeypatch.setattr(fingerprint, "_hash_file", lambda path: hashed.append(path.relative_to(root).as_posix()) or real(path))
    ids = fingerprint.tree_file_ids(root)
    assert set(ids) == {"src/a.py", "src/b.py"} and hashed == ["src/b.py"]  # was: each evidence file read and hashed too
    (root / ".tracker-notes").write_text("kept\n")  # a name that only starts like the folder is the tree's
    assert ".tracker-notes" in fingerprint.tree_file_ids(root)


@pytest.mark.parametrize(
    ("ids", "ok"),
    [({}, True), ({"a": "0" * 40}, True), ({"a": "f" * 64, "b": "0123456789abcdef" * 2 + "0" * 8}, True), ({"a": "0" * 41}, False),
     ({"a": "g" * 40}, False), ({"a": "A" * 40}, False), ({"a": "é" * 40}, False), ({"a": "\udc80" * 40}, False), ({"a": 1}, False),
     ({"a": None}, False), ([], False)],
)  # fmt: skip
def test_file_id_maps(ids: object, ok: bool) -> None:
    assert evidence._file_ids(ids) is ok


# --- Bench verdicts cached across runs ------------------------------------------------------------------------


def test_cached_bench_verdicts_are_not_used_once_the_clock_is_behind(repo: Callable[..., Path]) -> None:
    from tracker.benchstatus import Evaluator, load_results

    root = repo({"t.py": ""})
    write(root / "bench/results/r.json", result([case("m", {"k": 1}, [1.0, 2.0, 3.0])], time=utc(-5)))
    gate = BenchGate("m", {"k": 1}, at_most=5.0)
    assert Evaluator(load_results(root, clock=Clock())).__call__(gate).met  # cached now
    behind = Evaluator(load_results(root, clock=Clock(time.time() - 3600)))(gate)
    assert not behind.met and "in the future" in behind.reason  # was: met, from the cache


def test_a_folder_named_like_a_verdict_file_does_not_stop_status(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
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
    store = evidence.load(root, strict=False)  # was: OverflowError for a huge pid; 0 and -1 read as alive (kill asks a group)
    assert [r.tests[0]["outcome"] for r in store.runs] == ["passed", "error"] and store.processes == [(pid, socket.gethostname(), False)]
