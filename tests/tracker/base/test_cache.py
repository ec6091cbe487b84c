"""tracker.base.cache: one directory, one envelope and key scheme, one writer; evaluation writes nothing, the command
writes what its readers learned at its end; a cache file that is not exactly what this code wrote is ignored."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from evidence_repo import make_repo, phase_block, plan_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resultfiles import case, result, write

from tracker.base import cache as cache_module
from tracker.base.cache import NAMES, BoundedMemo, Cache, cache_key

# The caches a status writes and reads; the others belong to update and check (doc-tables), to summary's
# evaluation at a revision (revision-*) and to show, log and report (phase-history, report-*), each tested with
# its command.
STATUS_CACHES = [
    n
    for n in NAMES
    if n not in ("doc-tables", "phase-history", "code-same", "pytest-fresh-modules")
    and not n.startswith(("revision-", "report-"))
]

GATE = """bench = "op.time_us"
where = { impl = "new" }
at_most = 150.0
min_samples = 3
confidence = 0.9"""


def bench_repo(tmp_path: Path) -> Path:
    """A repository with a bench gate met by one result file and a plan: every cache has something to hold."""
    plan = plan_text("0001", [phase_block("P1", ["src/**"], [GATE])])
    root = make_repo(
        tmp_path / "repo", {"plans/0001-op.md": plan, "src/op.py": "x = 1\n", ".gitignore": ".tracker/cache/\n"}
    )
    doc = result(
        [case("op.time_us", {"impl": "new"}, [100.0 + i % 7 for i in range(20)])],
        time="2026-11-29T10:00:00Z",
        files={"src/op.py": b"x = 1\n"},
    )
    write(root / "bench/results/r.json", doc)
    doc["provenance"]["host"] = "other-box"  # an ingested copy of another run: the store's result copies
    write(root / ".tracker/evidence/20261129T100000000000Z-other-box-result-0a0b0c.json", doc)
    return root


@pytest.fixture
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled as soon as they are written (else the caches that trust stat signatures keep nothing
    of files written less than 2 s ago)."""
    from tracker.base import fileio
    from tracker.store import statusindex

    monkeypatch.setattr(fileio, "SETTLED_NS", -(10**12))
    monkeypatch.setattr(statusindex, "SETTLED_NS", -(10**12))


def cache_files(root: Path) -> list[str]:
    folder = root / ".tracker" / "cache"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# --- evaluation writes nothing; the command writes at its end -------------------------------------------------------


def test_deriving_writes_nothing(tmp_path: Path) -> None:
    """Was: derive wrote the status index, the result copies, validation markers, content ids and verdicts."""
    from tracker.core.model import Status
    from tracker.plans.load import load_plans
    from tracker.store.derive import derive

    root = bench_repo(tmp_path)
    _, plans = load_plans(root)
    assert derive(root, plans)["0001/P1"].status is Status.DONE
    assert cache_files(root) == []


def test_the_command_writes_every_cache_once_at_its_end(tmp_path: Path) -> None:
    from tracker.plans.load import load_plans
    from tracker.store.derive import derive

    root = bench_repo(tmp_path)
    cache = Cache(root)
    _, plans = load_plans(root, cache=cache)
    first = derive(root, plans, cache=cache)
    assert cache_files(root) == []  # nothing yet: the readers handed what they learned to the cache object
    cache.write()
    written = set(cache_files(root))
    assert {"plans.json", "result-checks.json", "bench-verdicts.json"} <= written
    assert written <= {f"{name}.json" for name in NAMES}
    for name in written:
        doc = json.loads((root / ".tracker/cache" / name).read_text())
        assert doc.keys() == {"key", "data"} and len(doc["key"]) == 64  # one envelope, one key scheme
    assert (root / ".tracker/.gitignore").is_file()  # the cache never makes the tree dirty
    # A second command answers from it: the same statuses, and without the result file's validator.
    again = Cache(root)
    _, plans = load_plans(root, cache=again)
    assert derive(root, plans, cache=again) == first


def test_tracker_status_writes_the_cache_after_its_output(tmp_path: Path, cli, settled_at_once: None) -> None:  # type: ignore[no-untyped-def]
    root = bench_repo(tmp_path)
    got = cli(root, "status")
    assert got.code == 0 and "done" in got.out
    # Every cache but the docs' tables, which only update and check read (status never looks at docs).
    assert set(cache_files(root)) == {f"{name}.json" for name in NAMES if name in STATUS_CACHES}
    assert cli(root, "status").out == got.out


def test_a_cache_that_cannot_be_written_costs_only_speed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".tracker").mkdir(parents=True)
    (root / ".tracker" / "cache").write_text("a file where the folder should be\n")
    cache = Cache(root)
    cache.put("plans", cache_key("x"), {"a": 1})
    cache.write()  # no exception
    assert cache.read("plans", cache_key("x")) is None  # nothing pending any more, nothing on disk


# --- what the cache hands back ---------------------------------------------------------------------------------------


def test_read_gives_the_data_of_its_key_only(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    cache.put("plans", cache_key("a"), {"x": [1, 2]})
    assert cache.read("plans", cache_key("a")) == {"x": [1, 2]}  # put this command: read back before the write
    cache.write()
    fresh = Cache(tmp_path)
    assert fresh.read("plans", cache_key("a")) == {"x": [1, 2]}
    assert fresh.read("plans", cache_key("b")) is None  # another key: other code, other inputs
    assert fresh.read("bootstrap", cache_key("a")) is None  # another cache


def test_no_cache_at_all(tmp_path: Path) -> None:
    cache = Cache(None)
    cache.put("plans", cache_key("a"), {"x": 1})
    cache.write()
    assert cache.read("plans", cache_key("a")) is None and cache.path("plans") is None


def test_memos_belong_to_one_command(tmp_path: Path) -> None:
    """Parsed result files were kept in a module-level dict for the process's life; now per cache object."""
    first, second = Cache(tmp_path), Cache(tmp_path)
    first.memo("result-runs")["k"] = 1
    assert first.memo("result-runs") == {"k": 1} and second.memo("result-runs") == {}
    first.write()
    assert cache_files(tmp_path) == []  # memos are never written
    from tracker.store import result_files

    assert not hasattr(result_files, "_MEMO")


def placed(root: Path, name: str, data: bytes) -> Cache:
    path = root / ".tracker" / "cache" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return Cache(root)


KEY = cache_key("k")


@pytest.mark.parametrize(
    "data",
    [
        b"", b"{", b"\xff\xfe", b"null", b"[]", b'"key"', b"{}",
        json.dumps({"key": KEY}).encode(),  # no data
        json.dumps({"key": KEY, "data": 1, "more": 2}).encode(),  # another shape
        json.dumps({"key": 5, "data": {}}).encode(),
        json.dumps({"key": cache_key("other"), "data": {}}).encode(),
        json.dumps({"version": "6/0.1.0", "files": {}}).encode(),  # the plan cache before this scheme
        json.dumps({"format": 1, "key": KEY, "built": "2026-01-01T00:00:00Z"}).encode(),  # the status index before
        b"[" * 100_000 + b"]" * 100_000,
    ],
)  # fmt: skip
def test_a_file_not_in_this_envelope_and_key_is_no_cache(tmp_path: Path, data: bytes) -> None:
    assert placed(tmp_path, "plans", data).read("plans", KEY) is None


def test_a_fifo_a_directory_or_a_huge_file_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / ".tracker" / "cache"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "plans.json")
    (folder / "bootstrap.json").mkdir()
    (folder / "result-ids.json").write_text(json.dumps({"key": KEY, "data": {"x": "y" * 100}}))
    monkeypatch.setattr(cache_module, "MAX_CACHE_BYTES", 50)
    cache = Cache(tmp_path)
    assert cache.read("plans", KEY) is None  # never blocks on a FIFO
    assert cache.read("bootstrap", KEY) is None
    assert cache.read("result-ids", KEY) is None  # over the limit: not one the tracker wrote


def test_a_symlink_out_of_the_repository_is_no_cache(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"key": KEY, "data": {"planted": True}}))
    root = tmp_path / "repo"
    (root / ".tracker" / "cache").mkdir(parents=True)
    (root / ".tracker" / "cache" / "plans.json").symlink_to(outside)
    cache = Cache(root)
    assert cache.read("plans", KEY) is None
    cache.put("plans", KEY, {"ours": True})
    cache.write()
    assert json.loads(outside.read_text())["data"] == {"planted": True}  # the link is replaced, not written through
    assert Cache(root).read("plans", KEY) == {"ours": True}


def test_concurrent_writers_leave_a_whole_file(tmp_path: Path) -> None:
    """Each write is a whole file renamed into place: the last writer wins, a reader never sees half of one."""
    first, second = Cache(tmp_path), Cache(tmp_path)
    first.put("plans", KEY, {"who": "first", "pad": "x" * 100_000})
    second.put("plans", KEY, {"who": "second"})
    first.write()
    second.write()
    assert Cache(tmp_path).read("plans", KEY) == {"who": "second"}
    assert cache_files(tmp_path) == ["plans.json"]  # no temp file left


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200) | JSON.map(lambda v: json.dumps(v).encode()))
def test_any_file_but_the_envelope_of_the_key_reads_as_no_cache(tmp_path: Path, data: bytes) -> None:
    got = placed(tmp_path, "status-index", data).read("status-index", KEY)
    assert got is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON)
def test_what_is_written_reads_back_as_it_was(tmp_path: Path, value: object) -> None:
    cache = Cache(tmp_path)
    cache.put("bootstrap", KEY, value)
    cache.write()
    assert Cache(tmp_path).read("bootstrap", KEY) == value


# --- hostile caches, through the commands ----------------------------------------------------------------------------


def test_an_old_validation_marker_does_not_make_an_invalid_result_valid(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """Was: a ``.tracker/cache/results/<sha>.v4.ok`` file (any bytes, placed by hand or left by a tool) made
    status take an invalid result file as valid. Files of the old layout are ignored now."""
    from tracker.base.hashing import sha256_hex

    root = bench_repo(tmp_path)
    bad = root / "bench/results/r.json"
    doc = json.loads(bad.read_text())
    doc["cases"][0]["direction"] = "sideways"
    bad.write_text(json.dumps(doc))
    old = root / ".tracker/cache/results"
    old.mkdir(parents=True)
    (old / f"{sha256_hex(bad.read_bytes())}.v4.ok").write_text("")
    got = cli(root, "status")
    assert "invalid result file" in got.out and "done" not in got.out


@pytest.mark.parametrize("name", [n for n in NAMES if n in STATUS_CACHES])
def test_a_hand_edited_cache_of_the_right_key_is_checked_entry_by_entry(
    tmp_path: Path, cli, settled_at_once: None, name: str
) -> None:  # type: ignore[no-untyped-def]
    """Every entry of every cache replaced by a value of the wrong shape: status says the same as without a cache."""
    root = bench_repo(tmp_path)
    expected = cli(root, "status").out
    path = root / ".tracker/cache" / f"{name}.json"
    doc = json.loads(path.read_text())
    data = doc["data"]
    if isinstance(data, dict):
        doc["data"] = {k: [[["odd"]], {"x": None}] for k in data} | {"gates": 7, "now": "9999-01-01T00:00:00Z"}
    else:
        doc["data"] = {"odd": True}
    path.write_text(json.dumps(doc))
    assert cli(root, "status").out == expected


def test_a_library_fixed_in_place_is_not_answered_from_the_cache_of_its_broken_self(tmp_path: Path) -> None:
    """Issue 30: the plan-parse cache was keyed without the libraries its answer depends on. A broken fence rule in
    an editable markdown-it-py made a plan invalid, and it stayed invalid after the library was fixed until
    ``.tracker/cache/`` was deleted. An editable library keeps its version string when its code changes: the key
    holds its files' identity. Here a copy of the installed markdown-it-py, first on PYTHONPATH as an editable
    install's source tree is, has its fence rule broken (fences need 30 backticks), then restored byte for byte
    (same size)."""
    import importlib.util
    import shutil
    import subprocess
    import sys

    spec = importlib.util.find_spec("markdown_it")
    assert spec is not None and spec.submodule_search_locations
    lib = tmp_path / "lib"
    shutil.copytree(next(iter(spec.submodule_search_locations)), lib / "markdown_it")
    fence = lib / "markdown_it/rules_block/fence.py"
    good = fence.read_bytes()
    assert good.count(b"min_markers: int = 3,") == 1
    root = make_repo(tmp_path / "repo", {"plans/0001-op.md": plan_text("0001", [phase_block("P1", [], [])])})
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(lib), *filter(None, [os.environ.get("PYTHONPATH")])])

    def status() -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "tracker", "--root", str(root), "status"]
        return subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    assert status().returncode == 0
    fence.write_bytes(good.replace(b"min_markers: int = 3,", b"min_markers: int = 30,"))
    broken = status()
    assert broken.returncode == 2 and "no ```plan block" in broken.stderr, broken.stdout + broken.stderr
    fence.write_bytes(good)
    fixed = status()
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_every_cache_of_an_answer_a_library_computed_is_keyed_by_that_library(tmp_path: Path) -> None:
    """Issue 30: of the caches status and show write, each holds answers that pydantic computed (plans and results
    validated, and everything built on them) but result-ids (sha256 of bytes): an edit of an editable pydantic-core
    (a copy first on PYTHONPATH, its ``__init__.py`` rewritten as it was) gives each of them a new key."""
    import importlib.util
    import shutil
    import subprocess
    import sys
    import time

    spec = importlib.util.find_spec("pydantic_core")
    assert spec is not None and spec.submodule_search_locations
    lib = tmp_path / "lib"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(next(iter(spec.submodule_search_locations)), lib / "pydantic_core", ignore=ignore)
    root = bench_repo(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(lib), *filter(None, [os.environ.get("PYTHONPATH")])])
    time.sleep(2.1)  # every file settled: the caches that trust stat signatures keep what they learned

    def keys() -> dict[str, str]:
        for args in (["status"], ["show", "0001/P1"]):
            cmd = [sys.executable, "-m", "tracker", "--root", str(root), *args]
            done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stdout + done.stderr
        folder = root / ".tracker/cache"
        return {p.stem: json.loads(p.read_text())["key"] for p in folder.glob("*.json")}

    before = keys()
    assert set(before) >= {"plans", "status-index", "result-checks", "bench-verdicts", "bootstrap", "phase-history"}
    init = lib / "pydantic_core/__init__.py"
    init.write_bytes(init.read_bytes())  # the same bytes, written again: a new mtime and ctime
    after = keys()
    assert [name for name in before if before[name] == after[name]] == ["result-ids"]


def test_the_code_identity_changes_with_any_module_and_only_then(tmp_path: Path) -> None:
    """Every cache is keyed by the tracker's code identity (``code_identity``): another version of any module, in any
    folder of the package, a module added or removed, makes another key; reading it again without a change does not.
    No list of sources, no version to bump."""
    import shutil
    import time

    code = tmp_path / "tracker"
    shutil.copytree(cache_module.PACKAGE, code, ignore=shutil.ignore_patterns("__pycache__"))
    assert {p.parent.name for p in code.rglob("*.py")} >= {"base", "core", "plans", "store", "git", "report"}
    seen = [cache_module.code_identity(code)]
    cache_module.forget_code_identity()
    assert cache_module.code_identity(code) == seen[0]  # read again: the same
    for change in ("edit", "add", "remove", "touch"):
        time.sleep(0.01)
        if change == "edit":
            rule = code / "core" / "bench_verdict.py"
            rule.write_bytes(rule.read_bytes() + b"\n# a rule changed\n")
        elif change == "add":
            (code / "report" / "extra.py").write_text("X = 1\n")
        elif change == "remove":
            (code / "report" / "extra.py").unlink()
        else:  # same bytes, written again: its change time moved
            models = code / "core" / "model.py"
            models.write_bytes(models.read_bytes())
        cache_module.forget_code_identity()
        now = cache_module.code_identity(code)
        if change == "remove":  # the same files as before the one added: the same identity
            assert now == seen[-2], change
        else:
            assert now not in seen, change
        seen.append(now)
    assert cache_module.code_identity() == cache_module.code_identity(cache_module.PACKAGE)


def test_a_bounded_memo_keeps_this_commands_entries_first_and_at_most_its_limit(tmp_path: Path) -> None:
    """BoundedMemo (the report's charts and run outcomes): what a command read or set goes back first, earlier
    entries after it up to the limit; a command that only read leaves the file as it was."""
    first = Cache(tmp_path)
    memo = BoundedMemo(first, "report-charts", "k", 3)
    for n in range(3):
        memo[f"e{n}"] = n
    memo.keep()
    first.write()
    assert Cache(tmp_path).read("report-charts", "k") == {"e0": 0, "e1": 1, "e2": 2}

    reader = Cache(tmp_path)
    seen = BoundedMemo(reader, "report-charts", "k", 3)
    assert seen["e2"] == 2 and seen.get("nope") is None and len(seen) == 3
    seen.keep()
    assert reader._pending == {}  # nothing new: nothing put

    later = Cache(tmp_path)
    again = BoundedMemo(later, "report-charts", "k", 3)
    assert again["e1"] == 1
    again["fresh"] = 9
    again.keep()
    later.write()
    kept = Cache(tmp_path).read("report-charts", "k")
    assert list(kept) == ["e1", "fresh", "e0"]  # used first (in the order used), then the earliest, to the limit

    other_key = BoundedMemo(Cache(tmp_path), "report-charts", "another code", 3)
    assert len(other_key) == 0 and "e1" not in other_key  # another key is no cache


@given(st.lists(st.tuples(st.text(max_size=3), st.integers()), max_size=30), st.integers(1, 8))
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_bounded_memo_never_exceeds_its_limit_and_answers_what_was_set(
    tmp_path: Path, writes: list[tuple[str, int]], limit: int
) -> None:
    cache = Cache(tmp_path)
    memo = BoundedMemo(cache, "report-run-outcomes", "k", limit)
    for entry, value in writes:
        memo[entry] = value
    assert dict(memo) == dict(writes)
    memo.keep()
    put = cache._pending.get("report-run-outcomes")
    if writes:
        assert put is not None and len(put[1]) == len(dict(writes))  # all this command set, whatever the limit
        assert all(dict(writes)[k] == v for k, v in put[1].items())


def test_a_hand_edited_run_outcomes_cache_of_the_right_key_is_checked_entry_by_entry(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """report-run-outcomes (the report's charts across runs): entries of the wrong shape are asked again, and the
    report reads as it did without a cache."""
    root = bench_repo(tmp_path)
    doc = result(
        [case("op.time_us", {"impl": "new"}, [120.0 + i % 5 for i in range(20)])],
        time="2026-11-30T10:00:00Z",
        files={"src/op.py": b"x = 1\n"},
    )
    write(root / "bench/results/s.json", doc)  # two runs: a chart across runs
    expected = cli(root, "report", "0001").out
    path = root / ".tracker/cache/report-run-outcomes.json"
    envelope = json.loads(path.read_text())
    assert envelope["data"], "the report kept each gate's outcome on each run"
    odd: list[object] = [[1, None, "yes", False], ["1", None, True, False], [1.0, 7, True, False], [], None, {"a": 1}]
    envelope["data"] = {k: odd[n % len(odd)] for n, k in enumerate(envelope["data"])}
    path.write_text(json.dumps(envelope))
    assert cli(root, "report", "0001").out == expected
