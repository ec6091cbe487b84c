"""Property tests over hostile evidence and result files (issue 11): every kind of store file with random wrong
types at every key, deep nesting, huge and non-finite numbers, future and impossible times and non-UTF-8 bytes,
through ``evidence.load``, status, ``tracker ingest`` (the CLI) and ``tracker.store.result_files``.

Properties: never a traceback; a bad file is invalid (load) or refused (ingest, exit 8) with ``path: reason``;
and never a false pass: a test gate is met only when a valid complete run says its test passed, a bench gate
only when the samples of a valid result file meet it. CI sizes are the ``max_examples`` below (~2,000 cases in
all, a few seconds each); the ``slow`` variants (TRACKER_SLOW=1) run many more.
"""

from __future__ import annotations

import ast
import json
import math
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from resultfiles import case, result

from tracker.base.contract import EVIDENCE_DIR, utc_time
from tracker.base.file_index import FileIndex
from tracker.core.model import BenchGate, GateVerdict, ManualGate, Phase, Plan, Store, TestGate
from tracker.core.status import compute
from tracker.store.evidence import load

NODEID = "tests/test_a.py::test_x"
PLANS = [
    Plan(
        "0001",
        "P",
        "plans/0001-p.md",
        None,
        (Phase("P1", "t", (), (), (TestGate("tests/test_a.py"), ManualGate("ok"))),),
    )
]
FAST = settings(deadline=None, suppress_health_check=list(HealthCheck))


def utc(offset_s: float = 0.0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


# ---------------------------------------------------------------------------------------------------------------
# Hostile values.

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=False), st.sampled_from([1.7e308, -1.7e308, 5e-324, float("inf"), float("-inf")]),
    st.text(max_size=12), st.sampled_from(["", "passed", "failed", "complete", "0" * 40, "2099-01-01T00:00:00Z"]),
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),  # lone surrogates
)  # fmt: skip
TIMES = st.one_of(
    st.sampled_from(["2099-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "0000-01-01T00:00:00Z", "2026-11-29T11:02:03",
                     "2026-11-29T11:02:03+02:00", "9999-12-31T23:59:59-01:00", "yesterday", "2024-02-29T23:59:59Z"]),
    st.integers(-3600, 7200).map(utc),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.text(alphabet="0123456789-T:Z+.", max_size=26),
)  # fmt: skip


def nested(depth: int, leaf: object = "x") -> object:
    value: object = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


HOSTILE = st.one_of(
    SCALARS,
    TIMES,
    st.recursive(
        SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=8,
    ),
    st.integers(50, 600).map(nested),
)


def run_doc(outcome: str, when: str = "2026-11-29T11:02:03Z") -> dict[str, Any]:
    return {
        "schema": "tracker-test-run", "version": 1, "status": "complete",
        "provenance": {"time": when, "host": "h", "commit": None, "dirty": None, "args": ["tests"]},
        "gates": {"0001/P1#1": "h"}, "files": {"tests/test_a.py": "a" * 40},
        "tests": [{"nodeid": NODEID, "outcome": outcome, "reason": "", "duration": 0.1, "markers": []}],
        "rootdir": "r", "exitstatus": 0, "duration": 1.0, "losses": [],
    }  # fmt: skip


def signoff_doc() -> dict[str, Any]:
    return {"schema": "tracker-signoff", "version": 1, "gate_key": "0001/P1#2", "gate_hash": "h", "phase_manual": ["h"], "manual": "ok",
            "by": "me", "why": "looked", "time": "2026-11-29T11:02:03Z", "host": "h", "commit": None, "dirty": None, "files": {}}  # fmt: skip


def paths(doc: object, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key/index path inside ``doc`` (the root excluded)."""
    out: list[tuple[Any, ...]] = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        out.append((*prefix, key))
        out.extend(paths(value, (*prefix, key)))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``base()`` with 1-3 mutations: a value replaced by a hostile one, a key deleted, or an unknown key added."""
    doc = base()
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(doc)))
        parent: Any = doc
        for key in where[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[where[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=6))] = draw(HOSTILE)
        else:
            parent[where[-1]] = draw(HOSTILE)
        if not paths(doc):
            break
    return doc


def dumps(doc: object) -> bytes:
    """JSON as a hostile writer would emit it (Infinity, huge integers); deep values may not serialize at all."""
    try:
        return json.dumps(doc).encode()
    except (RecursionError, ValueError):
        return b"[" * 100_000


# ---------------------------------------------------------------------------------------------------------------
# The store: evidence.load and status.


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    (root / EVIDENCE_DIR).mkdir(parents=True)
    return root


def _bench_never(gate: BenchGate) -> GateVerdict:
    return GateVerdict(False, "no benchmark evidence")


def check_store(root: Path, data: bytes) -> Store:
    """Write ``data`` as the store's one file; load and derive: the properties that must hold whatever it holds."""
    (root / EVIDENCE_DIR / "x.json").write_bytes(data)
    store = load(root, strict=False)
    files = (
        [r.file for r in store.runs] + [f for f, _ in store.signoffs] + [f for f, _ in store.bench] + store.incomplete
    )
    assert len(files) + len(store.invalid) == 1
    for line in store.invalid:
        path, _, reason = line.partition(": ")
        assert path == ".tracker/evidence/x.json" and reason and "\n" not in reason and len(reason) < 2000, line
    statuses = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)
    test_gate, manual_gate = statuses["0001/P1"].verdicts
    for verdict in (test_gate, manual_gate):  # what status prints can be printed
        (verdict.reason + repr(verdict.source)).encode("utf-8")
    passing = [r for r in store.runs for rec in r.tests if rec["nodeid"] == NODEID and rec["outcome"] == "passed"]
    if test_gate.met:  # never a false pass
        assert passing and not store.invalid
    if manual_gate.met:
        assert store.signoffs
    return store


@settings(FAST, max_examples=400)
@given(doc=st.one_of(mutated(lambda: run_doc("passed")), mutated(lambda: run_doc("failed")), mutated(signoff_doc),
                     mutated(lambda: result([case("m", {"k": 1}, [1.0, 2.0])]))))  # fmt: skip
def test_a_mutated_store_file_is_used_or_invalid_never_a_crash(store_root: Path, doc: dict[str, Any]) -> None:
    check_store(store_root, dumps(doc))


@settings(FAST, max_examples=200)
@given(data=st.one_of(st.binary(max_size=200), st.binary(max_size=40).map(lambda b: b"\xff\xfe" + b + json.dumps(run_doc("passed")).encode()),
                      st.builds(lambda d: json.dumps(run_doc("passed")).encode()[:d], st.integers(0, 400))))  # fmt: skip
def test_raw_bytes_in_the_store(store_root: Path, data: bytes) -> None:
    check_store(store_root, data)


@settings(FAST, max_examples=150)
@given(when=TIMES, outcome=st.sampled_from(["passed", "failed"]))
def test_any_time_in_the_store(store_root: Path, when: str, outcome: str) -> None:
    limit_before = utc(300)
    store = check_store(store_root, json.dumps(run_doc(outcome, when)).encode())
    utc_when = utc_time(when)
    if utc_when is None or utc_when > utc(300):
        assert store.invalid and not store.runs  # impossible, naive or future: unusable
    elif utc_when <= limit_before:  # (a time within the second the clock ticked may go either way)
        assert store.runs and store.runs[0].time == utc_when


@settings(FAST, max_examples=150)
@example(value="\ud800\udc00")  # JSON writes it as an escaped surrogate pair: U+10000, valid text
@example(value="\udc80")  # half a pair: not text
@example(value="--ignore=a\nb\x1b[2J\u202e")  # a line break, a terminal escape, a bidirectional override
@given(value=HOSTILE)
def test_any_narrowed_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.narrowed`` (the options that narrowed a run's collection): a non-empty string is used, and then the
    run never names its gate's tests (the only run: unmet), the reason naming the value as read (JSON joins an escaped
    surrogate pair into its one character) on one line, each unprintable character as its escape; half a surrogate
    pair is not text: the file is invalid, the reason naming that half (escaped); anything else makes the file
    invalid, never a crash."""
    doc = run_doc("passed")
    doc["provenance"]["narrowed"] = value
    data = dumps(doc)
    store = check_store(store_root, data)
    if store.runs:
        assert isinstance(value, str) and value
        read = store.runs[0].provenance["narrowed"]
        assert read == json.loads(data)["provenance"]["narrowed"]
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in read)
        test_gate = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
        assert not test_gate.met and f"narrowed by {shown}, and no run" in test_gate.reason
        assert test_gate.reason.isprintable()
    elif isinstance(value, str) and value and json.loads(data)["provenance"]["narrowed"] == value:
        (line,) = store.invalid  # a string the file holds as it is, refused: only half a surrogate pair
        head, _, named = line.partition(": holds text that is not valid Unicode (a lone surrogate, ")
        half = ast.literal_eval(named.removesuffix(")"))
        assert head == ".tracker/evidence/x.json" and half in value and all(0xD800 <= ord(c) <= 0xDFFF for c in half)


@settings(FAST, max_examples=150)
@example(value="-p no:warnings")
@example(value="\udc80")  # half a surrogate pair: not text
@example(value="-W\n\x1b[2J\u202e")  # a line break, a terminal escape, a bidirectional override
@given(value=HOSTILE)
def test_any_altered_or_inifile_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.altered`` (options that may have turned a failure into a pass, adv F6): a non-empty string is used,
    and then the run's pass meets no gate, the reason naming the value on one line; ``provenance.inifile``: a string
    or null is used; anything else makes the file invalid, never a crash."""
    for key in ("altered", "inifile"):
        doc = run_doc("passed")
        doc["provenance"][key] = value
        store = check_store(store_root, dumps(doc))
        fine = (isinstance(value, str) and (value != "" or key == "inifile")) or (value is None and key == "inifile")
        if not fine:
            assert store.invalid and not store.runs, (key, value)
            continue
        if not store.runs:  # a string the file cannot hold as text: half a surrogate pair
            assert isinstance(value, str) and _half_pair(value) and store.invalid
            continue
        test_gate = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
        if key == "inifile":
            assert test_gate.met, test_gate
            continue
        assert not test_gate.met and " is not counted: it ran with " in test_gate.reason, test_gate
        assert test_gate.reason.isprintable()


def _half_pair(text: str) -> bool:
    try:
        json.loads(json.dumps(text)).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@settings(FAST, max_examples=150)
@given(
    value=st.one_of(
        HOSTILE,
        st.dictionaries(st.sampled_from(["tests/test_a.py", "tests", "tests/test_a.py::test_x", ""]), HOSTILE),
        st.dictionaries(st.text(max_size=20), st.text(max_size=20)),
    )
)
def test_any_outside_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.outside`` ({test file: why it is not the repository's}): an object of strings is used, and a pass of
    a test whose file it names meets no gate (its reason says why); anything else makes the file invalid."""
    doc = run_doc("passed")
    doc["provenance"]["outside"] = value
    store = check_store(store_root, dumps(doc))
    strings = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if store.runs:
        assert strings
        read = store.runs[0].provenance["outside"]  # as read back (JSON joins an escaped surrogate pair)
        test_gate = compute(PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
        named = read.get("tests/test_a.py")
        assert test_gate.met == (named is None)
        if named is not None:
            assert test_gate.reason == f"{named}: its tests are not the repository's (tracker lint)"
    else:  # not an object of strings, or one holding half a surrogate pair (not Unicode text)
        assert not strings or any(_half_pair(t) for t in (*value, *value.values()))  # type: ignore[union-attr]


DOCTEST_PLANS = [
    Plan("0001", "P", "plans/0001-p.md", None,
         (Phase("P1", "t", (), (), (TestGate("tests/test_a.py", options=("--doctest-modules", "-p", "x")),)),))
]  # fmt: skip


@settings(FAST, max_examples=150)
@example(value=["--doctest-modules", "-p x"])
@example(value=["-p x", "--doctest-modules", "--import-mode=prepend"])
@example(value=["--doctest-modules", "-p", "x"])  # the gate's spelling, not a run's: -p without its plugin
@example(value=["--doctest-modules"])
@given(
    value=st.one_of(
        HOSTILE,
        st.lists(st.sampled_from(["--doctest-modules", "-p x", "-p", "x", "--import-mode=importlib", "", "\udc80"])),
    )
)
def test_any_options_value_in_the_store(store_root: Path, value: object) -> None:
    """``provenance.options`` (the gate options a run had): a list of strings is used, and the run names the tests of
    a gate with options (``--doctest-modules``, ``-p x``) only when it holds each of them as a run spells it (``-p
    x``), else the gate, whose only run it is, is unmet saying which it lacked; anything else makes the file
    invalid, never a crash."""
    doc = run_doc("passed")
    doc["provenance"]["options"] = value
    store = check_store(store_root, dumps(doc))
    strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if not store.runs:
        assert not strings or any(_half_pair(t) for t in value)  # type: ignore[union-attr]
        return
    assert strings
    verdict = compute(DOCTEST_PLANS, store, lambda: FileIndex({}), lambda: _bench_never)["0001/P1"].verdicts[0]
    had = {"--doctest-modules", "-p x"} <= set(value)  # type: ignore[arg-type]
    assert verdict.met == had, verdict
    if not had:
        lacking = [u for u in ("--doctest-modules", "-p x") if u not in value]  # type: ignore[operator]
        assert f"ran it without {', '.join(lacking)}, and no run" in verdict.reason, verdict


@pytest.mark.slow
@settings(FAST, max_examples=5000)
@given(doc=st.one_of(mutated(lambda: run_doc("passed")), mutated(lambda: run_doc("failed")), mutated(signoff_doc)))
def test_a_mutated_store_file_deep(store_root: Path, doc: dict[str, Any]) -> None:
    check_store(store_root, dumps(doc))


# ---------------------------------------------------------------------------------------------------------------
# One time parser.


@settings(FAST, max_examples=300)
@given(
    year=st.integers(0, 10000),
    month=st.integers(0, 13),
    day=st.integers(0, 32),
    hms=st.tuples(st.integers(0, 25), st.integers(0, 61), st.integers(0, 61)),
)
def test_the_fast_path_agrees_with_datetime(year: int, month: int, day: int, hms: tuple[int, int, int]) -> None:
    from datetime import datetime

    text = f"{year:04d}-{month:02d}-{day:02d}T{hms[0]:02d}:{hms[1]:02d}:{hms[2]:02d}Z"
    try:
        datetime(year, month, day, *hms)
        valid = len(text) == 20
    except ValueError:
        valid = False
    assert (utc_time(text) == text) is valid
    assert utc_time(text) in (None, text)


@settings(FAST, max_examples=200)
@given(text=st.one_of(st.text(max_size=40), TIMES, st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat())))
def test_utc_time_never_raises(text: str) -> None:
    out = utc_time(text)
    assert out is None or (len(out) == 20 and utc_time(out) == out)


# ---------------------------------------------------------------------------------------------------------------
# Result files: tracker.store.result_files, bench/results and the store.


def _result_base() -> dict[str, Any]:
    return result(
        [case("m", {"k": 1, "impl": "cuda"}, [3.0, 4.0, 5.0]), case("m", {"k": 1, "impl": "base"}, [9.0, 9.5, 10.0])]
    )


GATES = [BenchGate(bench="m", where={"k": 1, "impl": "cuda"}, at_most=4.5, stat=s, confidence=c) for s in ("median", "mean", "p90", "min")
         for c in (None, 0.9)] + [BenchGate(bench="m", where={"k": 1, "impl": "cuda"}, baseline={"impl": "base"}, at_least=2.0)]  # fmt: skip


def check_result(path: Path, data: bytes) -> None:
    from tracker.core.bench_verdict import evaluate, matches
    from tracker.core.stats import compute_stat
    from tracker.errors import ResultFileError
    from tracker.store.result_files import load_result

    path.write_bytes(data)
    try:
        run = load_result(path)
    except ResultFileError as err:
        assert str(err).startswith(f"{path}") and err.reason and "\n" not in err.reason
        return
    for gate in GATES:
        outcome = evaluate(gate, [run])
        if outcome.met and gate.baseline is None and gate.confidence is None:  # never a false pass
            [c] = [c for c in run.cases if c.metric == "m" and matches(c.params, gate.where)]
            assert compute_stat(gate.stat, c.samples) <= 4.5


@settings(FAST, max_examples=300)
@given(doc=mutated(_result_base))
def test_a_mutated_result_file_is_used_or_rejected(
    tmp_path_factory: pytest.TempPathFactory, doc: dict[str, Any]
) -> None:
    check_result(tmp_path_factory.mktemp("r", numbered=True) / "r.json", dumps(doc))


@settings(FAST, max_examples=150)
@given(
    samples=st.lists(
        st.one_of(
            st.floats(min_value=1e300, max_value=1.7976931348623157e308), st.floats(min_value=1e-300, max_value=1e6)
        ),
        min_size=1,
        max_size=30,
    )
)
def test_huge_samples_never_overflow(tmp_path_factory: pytest.TempPathFactory, samples: list[float]) -> None:
    from tracker.core.stats import compute_stat

    for name in ("median", "mean", "p90", "min"):
        assert math.isfinite(compute_stat(name, samples))
    stats = {"n": len(samples), **{k: compute_stat(k, samples) for k in ("median", "min", "mean", "p90")}}
    doc = result(
        [
            {
                "metric": "m",
                "params": {"k": 1, "impl": "cuda"},
                "unit": "us",
                "direction": "lower",
                "samples": samples,
                "stats": stats,
            }
        ]
    )
    check_result(tmp_path_factory.mktemp("h", numbered=True) / "r.json", json.dumps(doc).encode())


@pytest.mark.slow
@settings(FAST, max_examples=3000)
@given(doc=mutated(_result_base))
def test_a_mutated_result_file_deep(tmp_path_factory: pytest.TempPathFactory, doc: dict[str, Any]) -> None:
    check_result(tmp_path_factory.mktemp("r", numbered=True) / "r.json", dumps(doc))


# ---------------------------------------------------------------------------------------------------------------
# tracker ingest through the CLI: exit 0 and a store that reads back valid, or exit 8 with path: reason.


@pytest.fixture(scope="module")
def ingest_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tracker_testutil import git, make_files

    root = tmp_path_factory.mktemp("ingest") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_files(root, {"plans/.keep": "", "tests/test_a.py": "def test_x():\n    pass\n"})
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "files")
    return root


def check_ingest(root: Path, cli: Callable[..., Any], source: Path, data: bytes) -> None:
    shutil.rmtree(root / ".tracker", ignore_errors=True)
    source.write_bytes(data)
    res = cli(root, "ingest", str(source))
    assert res.code in (0, 8), (res.code, res.err)
    if res.code == 8:
        assert (
            res.err.startswith(f"tracker: error: {source}") and res.err.count("\n") == 1 and "Traceback" not in res.err
        ), res.err
        assert not (root / EVIDENCE_DIR).exists() or not list((root / EVIDENCE_DIR).iterdir())
        return
    store = load(root, strict=False)
    assert not store.invalid, store.invalid  # what ingest accepts, the store reads


@settings(FAST, max_examples=250)
@given(doc=st.one_of(mutated(lambda: run_doc("passed")), mutated(_result_base), st.just(run_doc("passed", utc(3600)))))
def test_ingest_of_mutated_evidence(
    ingest_repo: Path, cli: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, doc: dict[str, Any]
) -> None:
    check_ingest(ingest_repo, cli, tmp_path_factory.getbasetemp() / "in.json", dumps(doc))


REPORT = {
    "$report_type": "TestReport",
    "nodeid": NODEID,
    "when": "call",
    "outcome": "passed",
    "longrepr": None,
    "duration": 0.1,
}


@st.composite
def reportlogs(draw: st.DrawFn) -> bytes:
    records: list[Any] = [{"$report_type": "SessionStart", "pytest_version": "8"}]
    for when in ("setup", "call", "teardown"):
        records.append({**REPORT, "when": when})
    records.append(
        {"$report_type": "CollectReport", "nodeid": "tests/test_b.py", "outcome": "failed", "longrepr": "boom"}
    )
    records.append({"$report_type": "SessionFinish", "exitstatus": 1})
    records = [draw(mutated(lambda r=r: dict(r))) if draw(st.booleans()) else r for r in records]
    lines = [dumps(r) for r in records]
    if draw(st.booleans()):
        lines = lines[: draw(st.integers(1, len(lines)))]
    return b"\n".join(lines) + (b"\n" if draw(st.booleans()) else b"")


@st.composite
def junits(draw: st.DrawFn) -> bytes:
    attr = st.one_of(st.text(alphabet=st.characters(codec="ascii", exclude_characters='"<&\x00'), max_size=12), TIMES,
                     st.sampled_from(["abc", "nan", "1e400", "-1", "0.5"]))  # fmt: skip
    stamp, t1, t2 = draw(attr), draw(attr), draw(attr)
    inner = draw(
        st.sampled_from(
            ["", "<failure message='x'/>", "<skipped type='pytest.xfail'/>", "<error message='failed on teardown'/>"]
        )
    )
    return (f'<testsuites><testsuite name="pytest" timestamp="{stamp}"><testcase classname="tests.test_a" name="test_x" '
            f'file="tests/test_a.py" time="{t1}">{inner}</testcase><testcase classname="tests.test_a" name="test_y" time="{t2}"/>'
            "</testsuite></testsuites>").encode()  # fmt: skip


@settings(FAST, max_examples=150)
@given(data=st.one_of(reportlogs(), junits(), st.binary(max_size=100).map(lambda b: b"<" + b)))
def test_ingest_of_hostile_reportlogs_and_junit(
    ingest_repo: Path, cli: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    check_ingest(ingest_repo, cli, tmp_path_factory.getbasetemp() / "in.log", data)


@pytest.mark.slow
@settings(FAST, max_examples=2000)
@given(
    data=st.one_of(
        reportlogs(), junits(), mutated(lambda: run_doc("passed")).map(dumps), mutated(_result_base).map(dumps)
    )
)
def test_ingest_deep(
    ingest_repo: Path, cli: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    check_ingest(ingest_repo, cli, tmp_path_factory.getbasetemp() / "in.any", data)
