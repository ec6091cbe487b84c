"""``tracker summary`` reads, for a bench gate's figures, only the result files that can hold the gate's metric
(:mod:`tracker.store.result_metrics`), and says exactly what it said when it read them all.

The repositories are the report fixture (tests/tracker/report_fixture.py: two bench gates on ``attn.*`` metrics)
with result files of another benchmark committed beside its own (``mem.peak_bytes``, no gate), then changed in the
working tree the ways evidence changes: a result added (of the gate's metric or not), edited in place, deleted,
malformed, copied under a new name, linked. Each summary is compared with the one a cold cache gives (every file
read), and the figures with those computed on every run. Reads are counted in a real run by Python's audit hook
on ``open``: nothing of the tracker is replaced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import report_fixture
import resultfiles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base.cache import Cache
from tracker.core.model import BenchGate
from tracker.report.detail import bench_figures
from tracker.store.bench_evaluator import Evaluator, RepoResults
from tracker.store.result_metrics import METRICS, MetricIndex

RESULTS = "bench/results"
B1 = f"{RESULTS}/20261103T100000Z-gpu-box-attn-b1.json"
B2 = f"{RESULTS}/20261108T100000Z-gpu-box-attn-b2.json"
MEM = [f"{RESULTS}/2026110{d}T100000Z-gpu-box-mem-m{d}.json" for d in (4, 5, 6)]
GATE_METRICS = ("attn.time_us", "attn.floor_fraction")
STORE_COPY = ".tracker/evidence/20261107T100000Z-gpu-box-mem-c1.json"


def mem_result(when: str, scale: float = 1.0) -> dict[str, Any]:
    """A valid result file of another benchmark: one metric no gate asks for."""
    samples = [x * scale for x in (1000.0, 1010.0, 990.0, 1005.0, 995.0)]
    doc = resultfiles.result([resultfiles.case("mem.peak_bytes", {"impl": "cuda"}, samples, "B")], time=when)
    doc["benchmark"] = "mem"
    return doc


def attn_result(root: Path, when: str, cuda: list[float]) -> dict[str, Any]:
    """A new result of the gates' benchmark: b2's, run again at ``when`` with ``cuda``'s samples."""
    doc = json.loads((root / B2).read_text())
    doc["provenance"]["time"] = when
    for case in doc["cases"]:
        if case["params"]["impl"] == "cuda" and case["metric"] == "attn.time_us":
            case["samples"] = cuda
            case["stats"] = resultfiles.stats_of(cuda)
    return doc


def write(root: Path, rel: str, doc: dict[str, Any] | str) -> None:
    path = root / rel
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture at c5 with three results of another benchmark committed."""
    root = report_fixture.build(tmp_path_factory.mktemp("fixture") / "repo")
    for i, rel in enumerate(MEM):
        write(root, rel, mem_result(f"2026-11-0{4 + i}T10:00:00Z", 1 + i / 10))
    write(root, STORE_COPY, mem_result("2026-11-07T10:00:00Z", 1.5))  # an ingested copy in the store
    report_fixture._commit(root, "evidence: memory of four runs", "2026-11-09T12:00:00Z")
    return root


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files just written count as settled: the memos by stat signature are kept, as they are for files a device run
    left a while ago (else every result file is read again to hash it, whatever its metrics)."""
    from tracker.base import fileio
    from tracker.store import statusindex

    monkeypatch.setattr(fileio, "SETTLED_NS", -(10**12))
    monkeypatch.setattr(statusindex, "SETTLED_NS", -(10**12))


@pytest.fixture
def repo(built: Path, tmp_path: Path, settled: None) -> Path:
    """A copy of its own."""
    return Path(shutil.copytree(built, tmp_path / "repo", symlinks=True))


# --- the changes a working tree sees ---------------------------------------------------------------------------


def new_of_the_gates_metric(root: Path) -> None:
    write(root, f"{RESULTS}/20261110T100000Z-gpu-box-attn-b3.json", attn_result(root, "2026-11-10T10:00:00Z",
                                                                                 [80.0, 81.0, 79.0, 80.0, 82.0]))  # fmt: skip


def new_of_another_metric(root: Path) -> None:
    write(root, f"{RESULTS}/20261110T100000Z-gpu-box-mem-m9.json", mem_result("2026-11-10T10:00:00Z", 2.0))


def edited_of_the_gates_metric(root: Path) -> None:
    write(root, B2, attn_result(root, "2026-11-08T10:00:00Z", [90.0, 91.0, 89.0, 90.0, 92.0]))


def edited_of_another_metric(root: Path) -> None:
    write(root, MEM[1], mem_result("2026-11-05T10:00:00Z", 3.0))


def another_metric_now_the_gates(root: Path) -> None:
    """A file that held another metric only is rewritten in place with the gate's (its name says nothing)."""
    write(root, MEM[2], attn_result(root, "2026-11-10T11:00:00Z", [70.0, 71.0, 69.0, 70.0, 72.0]))


def deleted_of_the_gates_metric(root: Path) -> None:
    (root / B2).unlink()


def deleted_of_another_metric(root: Path) -> None:
    (root / MEM[0]).unlink()


def malformed(root: Path) -> None:
    write(root, f"{RESULTS}/20261110T100000Z-gpu-box-attn-bad.json", '{"schema": "tracker-bench-result", "cases": [')


def invalid_holding_the_metric(root: Path) -> None:
    doc = attn_result(root, "2026-11-10T10:00:00Z", [80.0, 81.0, 79.0, 80.0, 82.0])
    doc["cases"][0]["direction"] = "sideways"
    write(root, f"{RESULTS}/20261110T100000Z-gpu-box-attn-b4.json", doc)


def copied_with_a_fresh_mtime(root: Path) -> None:
    shutil.copy(root / B1, root / f"{RESULTS}/20261110T100000Z-gpu-box-attn-copy.json")
    shutil.copy(root / MEM[0], root / f"{RESULTS}/20261110T100000Z-gpu-box-mem-copy.json")


def linked(root: Path) -> None:
    new_of_the_gates_metric(root)
    os.symlink(root / MEM[1], root / f"{RESULTS}/20261110T120000Z-gpu-box-mem-link.json")
    outside = root.parent / "outside.json"
    outside.write_text(json.dumps(attn_result(root, "2026-11-10T13:00:00Z", [60.0, 61.0, 59.0, 60.0, 62.0])))
    os.symlink(outside, root / f"{RESULTS}/20261110T130000Z-gpu-box-attn-out.json")


def in_the_future(root: Path) -> None:
    write(root, f"{RESULTS}/20991110T100000Z-gpu-box-attn-b5.json", attn_result(root, "2099-11-10T10:00:00Z",
                                                                                [80.0, 81.0, 79.0, 80.0, 82.0]))  # fmt: skip


def copied_into_the_store(root: Path) -> None:
    write(root, ".tracker/evidence/20261110T100000Z-gpu-box-attn-c2.json", attn_result(root, "2026-11-10T10:00:00Z",
                                                                                       [80.0, 81.0, 79.0, 80.0, 82.0]))  # fmt: skip


def store_copy_deleted(root: Path) -> None:
    (root / STORE_COPY).unlink()


CHANGES: list[Callable[[Path], None]] = [
    copied_into_the_store,
    store_copy_deleted,
    new_of_the_gates_metric,
    new_of_another_metric,
    edited_of_the_gates_metric,
    edited_of_another_metric,
    another_metric_now_the_gates,
    deleted_of_the_gates_metric,
    deleted_of_another_metric,
    malformed,
    invalid_holding_the_metric,
    copied_with_a_fresh_mtime,
    linked,
    in_the_future,
]


def summary(cli: Callable[..., Any], root: Path) -> str:
    """``summary --json``, with the machine's clock that a reason about a future time names (the seconds of the call,
    which a loaded machine may cross between two calls) as one placeholder."""
    got = cli(root, "summary", "--json")
    assert got.code == 0, got.err
    return re.sub(r"machine's clock \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)", "machine's clock (NOW)", str(got.out))


@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__)
def test_the_fast_summary_is_the_summary_of_every_file(repo: Path, cli: Callable[..., Any], change: Any) -> None:
    """Warm caches (the index knows every committed file), then the change, then ``status`` and ``summary`` as a
    device run leaves them: the summary (twice: the second with every cache warm) is the one a cold cache gives,
    where every result file is read."""
    for command in ("status", "summary"):
        assert cli(repo, command).code in (0, 1)
    assert (repo / f".tracker/cache/{METRICS}.json").is_file()
    change(repo)
    cli(repo, "status")
    fast = [summary(cli, repo), summary(cli, repo)]
    shutil.rmtree(repo / ".tracker/cache")
    slow = summary(cli, repo)
    assert fast == [slow, slow]


@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__)
def test_each_gates_figures_on_the_runs_of_its_metric_are_its_figures_on_every_run(repo: Path, change: Any) -> None:
    """In process, both sides: REF's result files (HEAD's) and the working tree's, each gate's figures computed on
    :meth:`results_for` (only the files that may hold its metric read) equal those computed on every run."""
    from tracker.commands.summary import build
    from tracker.git.at_revision import Now, at_revision
    from tracker.report.repo_view import RepoView

    warm = Cache(repo)
    build(repo, "HEAD", warm)
    warm.write()
    change(repo)
    gates = [g for p in RepoView(repo, Cache(None)).plans for ph in p.phases for g in ph.gates]
    bench_gates = [g for g in gates if isinstance(g, BenchGate)]
    assert {g.bench for g in bench_gates} == set(GATE_METRICS)
    cache = Cache(repo)
    view = RepoView(repo, cache)
    at = at_revision(repo, "HEAD", Now(view.plan_set.files, lambda: view.store, lambda: view.tree), cache)
    # REF's result files as the status index names the store's copies (no store read) are those of REF's store.
    listed = RepoView(repo, Cache(repo))
    assert (listed.store_files() is None) == (change is in_the_future)  # no index kept while a time is refused
    known = Now(listed.plan_set.files, lambda: listed.store, lambda: listed.tree, listed.store_files)
    quick = at_revision(repo, "HEAD", known, Cache(repo))
    assert [(r.path, r.sha256) for r in quick.bench().results] == [(r.path, r.sha256) for r in at.bench().results]
    assert [str(e) for e in quick.bench().errors] == [str(e) for e in at.bench().errors]
    assert quick.statuses == at.statuses
    assert [(r.path, r.sha256) for r in listed.bench.results] == [(r.path, r.sha256) for r in view.bench.results]
    for side in (at.bench(), view.bench):
        for gate in bench_gates:
            fast = bench_figures(gate, side.results_for(gate.bench), side.bounds)
            assert fast == bench_figures(gate, side.results, side.bounds)
            assert [r for r in side.results if any(c.metric == gate.bench for c in r.cases)] == list(
                side.results_for(gate.bench)
            )


# --- what a warm summary reads ---------------------------------------------------------------------------------

_OPENED: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # inert but while a test records (an audit hook cannot be removed)


@contextmanager
def opened() -> Iterator[list[str]]:
    """The paths opened in the block (Python's ``open`` audit event: ``open()``, ``os.open()``)."""
    global _OPENED
    seen: list[str] = []
    _OPENED = seen
    try:
        yield seen
    finally:
        _OPENED = None


def results_read(seen: list[str], root: Path) -> set[str]:
    folder = os.path.realpath(root / RESULTS)
    return {os.path.basename(p) for p in seen if os.path.dirname(os.path.realpath(p)) == folder}


def test_a_warm_summary_reads_no_result_file_without_the_gates_metric(repo: Path, cli: Callable[..., Any]) -> None:
    """A device run left one new result of the gates' benchmark (``speed.py``'s ``own-uncommitted`` case): the
    summary that re-verifies the gates reads the result files of their metric and none of the others; with the
    index gone, it reads them all again (the same message)."""
    for command in ("status", "summary"):
        cli(repo, command)
    new_of_the_gates_metric(repo)
    cli(repo, "status")
    want = summary(cli, repo)  # REF's own index is built here (REF's evidence is no longer the working tree's)
    with opened() as seen:
        assert summary(cli, repo) == want
    read = results_read(seen, repo)
    mem = {Path(rel).name for rel in MEM}
    attn = {p.name for p in (repo / RESULTS).glob("*attn*")}
    assert read and read <= attn, read
    assert not read & mem
    assert json.loads(want)["bench"], "the new result moved the gates' figures: figures were computed"
    (repo / f".tracker/cache/{METRICS}.json").unlink()
    with opened() as seen:
        assert summary(cli, repo) == want
    assert results_read(seen, repo) >= mem  # without the index every file is read: the index is what spares them


def test_a_result_file_not_holding_the_metric_is_not_read(tmp_path: Path, settled: None) -> None:
    """Counted on the evaluator alone: ``results_for`` opens the files of its metric, and of a file whose content
    the index does not know (new), only that one."""
    root = tmp_path
    for i, rel in enumerate(MEM):
        resultfiles.write(root / rel, mem_result(f"2026-11-0{4 + i}T10:00:00Z", 1 + i / 10))
    attn = resultfiles.result([resultfiles.case("attn.time_us", {"impl": "cuda"}, [1.0, 2.0, 3.0])])
    resultfiles.write(root / B1, attn)
    files = sorted((root / RESULTS).glob("*.json"))
    cache = Cache(root)
    RepoResults(root, files, cache=cache).runs()
    cache.write()
    with opened() as seen:
        runs = RepoResults(root, files, cache=Cache(root)).runs_for("attn.time_us")
    assert [Path(r.path).name for r in runs] == [Path(B1).name]
    assert results_read(seen, root) == {Path(B1).name}
    new = root / f"{RESULTS}/20261110T100000Z-gpu-box-mem-m9.json"
    resultfiles.write(new, mem_result("2026-11-10T10:00:00Z", 2.0))
    files = sorted((root / RESULTS).glob("*.json"))
    with opened() as seen:
        assert RepoResults(root, files, cache=Cache(root)).runs_for("attn.time_us") == runs
    assert results_read(seen, root) == {Path(B1).name, new.name}


# --- hostile files and caches ----------------------------------------------------------------------------------

NAMES = ("a.x", "b.y", "ü.z", "a.x ", "")
_valid = st.tuples(st.just("valid"), st.lists(st.sampled_from(NAMES[:4]), min_size=1, max_size=3))
_bad = st.tuples(
    st.just("bad"),
    st.sampled_from([b"", b"{", b"[]", b'{"schema": "tracker-bench-result"}', b"\xff\xfe", b"null"]),
)
_same = st.tuples(st.just("same"), st.integers(0, 7))
FILE = st.one_of(_valid, _bad, _same)
BROKEN = st.sampled_from([None, "x", 3, [1], {"m": 1}, ["a.x", None]])


def _doc(metrics: list[str], i: int) -> bytes:
    cases = [resultfiles.case(m, {"impl": "cuda", "n": j}, [1.0 + i, 2.0, 3.0 + j]) for j, m in enumerate(metrics)]
    doc = resultfiles.result(cases, time=f"2026-11-{10 + i % 9:02d}T10:00:00Z")
    return json.dumps(doc).encode()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=st.lists(FILE, min_size=1, max_size=6),
    after=st.lists(FILE, min_size=0, max_size=6),
    broken=st.dictionaries(st.integers(0, 11), BROKEN, max_size=3),
)
def test_runs_for_is_every_run_of_the_metric_whatever_the_files_and_the_cache_hold(
    before: list[tuple[str, Any]], after: list[tuple[str, Any]], broken: dict[int, Any]
) -> None:
    """Result files valid, malformed or copies of another, indexed, then rewritten (edited, added, removed) and
    entries of the index broken: for every metric, :meth:`runs_for` is :meth:`runs` less the runs without it, and a
    gate's figures are the same on both."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def put(files: list[tuple[str, Any]]) -> list[Path]:
            shutil.rmtree(root / RESULTS, ignore_errors=True)
            written: list[Path] = []
            for i, (kind, what) in enumerate(files):
                path = root / f"{RESULTS}/r{i}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                if kind == "same" and written:
                    data = written[what % len(written)].read_bytes()
                else:
                    data = what if kind == "bad" else _doc(what if kind == "valid" else ["a.x"], i)
                path.write_bytes(data)
                written.append(path)
            return written

        cache = Cache(root)
        RepoResults(root, put(before), cache=cache).runs()
        cache.write()
        files = put(after or before[:1])
        index = Cache(root)
        known = index.read(METRICS, MetricIndex(index).key) or {}
        for n, value in broken.items():
            if known:
                known[sorted(known)[n % len(known)]] = value
        index.put(METRICS, MetricIndex(index).key, known)
        index.write()
        every = RepoResults(root, files, cache=Cache(None)).runs()
        for metric in NAMES:
            fast = Evaluator(RepoResults(root, files, cache=Cache(root))).results_for(metric)
            assert list(fast) == [r for r in every if any(c.metric == metric for c in r.cases)]
            gate = BenchGate(bench=metric, where={"impl": "cuda"}, at_least=2.0)
            assert bench_figures(gate, fast) == bench_figures(gate, every)


@settings(max_examples=200, deadline=None)
@given(
    row=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=8,
    )
)
def test_a_status_index_whose_store_row_is_broken_names_no_store_files(row: Any) -> None:
    """The status index's row of store files is read back only in the shape this code writes (two lists of paths);
    anything else is no answer, and the store is read instead."""
    from tracker.store import statusindex

    try:
        got = statusindex.Tables({"store": row}).store_files()
    except statusindex.Miss:
        return
    assert all(isinstance(path, str) for path in [*got.copies, *got.listed])


def test_a_broken_store_row_in_the_status_index_reads_the_store(repo: Path, cli: Callable[..., Any]) -> None:
    """A status index whose store row is not this code's (hand-edited): the summary reads the store for its result
    copies and says what it says without the index."""
    copied_into_the_store(repo)
    cli(repo, "status")
    index = repo / ".tracker/cache/status-index.json"
    doc = json.loads(index.read_text())
    doc["data"]["store"] = [["not", 1], "x"]
    index.write_text(json.dumps(doc))
    fast = summary(cli, repo)
    shutil.rmtree(repo / ".tracker/cache")
    assert fast == summary(cli, repo)
