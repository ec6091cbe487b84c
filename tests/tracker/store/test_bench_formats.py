"""Hostile pytest-benchmark and asv files (tracker/store/bench_formats.py, through the command's document builder):
every file is either turned into a result file the validator accepts or refused with ``path: reason``; never
another exception, never a case without raw samples, never a non-finite number."""

from __future__ import annotations

import copy
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import pytest
from evidence_repo import git, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base.contract import Clock
from tracker.commands.ingest import commit_files
from tracker.commands.ingest_bench import result_document
from tracker.errors import UsageError
from tracker.store.bench_formats import ASV, PYTEST_BENCHMARK, kind_of, load_json
from tracker.store.ingest import IngestError
from tracker.store.result_schema import parse_result

NOW = int(time.time()) + 1  # the seeds' run time: after the fixture repository's commit, not in the future
HOSTILE_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    global NOW
    made = make_repo(
        tmp_path_factory.mktemp("bf") / "repo",
        {"tests/test_parse.py": "def test_parse(): pass\n", "src/parse.py": "X = 1\n"},
    )
    # The seeds ran after this commit was made (ingest refuses a run dated before its commit, less 5 minutes): on a
    # busy machine the module's first test may start minutes after its import.
    NOW = int(time.time()) + 1
    return made


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def pb_doc(commit: str) -> dict[str, Any]:
    """A pytest-benchmark --benchmark-json document of the shape pytest-benchmark 5 writes (the e2e test makes real
    ones; this one is the seed the properties mutate)."""
    bench = {
        "group": None,
        "name": "test_parse[8]",
        "fullname": "tests/test_parse.py::test_parse[8]",
        "params": {"size": 8},
        "param": "8",
        "extra_info": {},
        "options": {"disable_gc": False},
        "stats": {"min": 1e-6, "max": 3e-6, "mean": 2e-6, "rounds": 3, "iterations": 1, "data": [1e-6, 2e-6, 3e-6]},
    }
    return {
        "machine_info": {"node": "box", "python_version": "3.11.7", "cpu": {"brand_raw": "Some CPU"}},
        "commit_info": {"id": commit, "dirty": False, "time": None},
        "benchmarks": [bench],
        "datetime": time.strftime("%Y-%m-%dT%H:%M:%S.123456+00:00", time.gmtime(NOW)),
        "version": "5.3.1",
    }


def asv_doc(commit: str) -> dict[str, Any]:
    """An asv 0.6 result document of the shape ``asv run --record-samples`` writes (-Infinity included)."""
    columns = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b", "samples"]
    row = [
        [0.001, 0.002, None],
        [["1", "2", "3"]],
        "abc",
        NOW * 1000,
        1.3,
        [-math.inf, -math.inf, -math.inf],
        [math.inf, math.inf, math.inf],
        [[0.001, 0.0011], [0.002, 0.0021], None],
    ]
    return {
        "commit_hash": commit,
        "env_name": "existing-py",
        "date": 1000,  # the commit's date, in asv: never read as the run's
        "params": {"machine": "testbox"},
        "python": "3.11",
        "requirements": {},
        "env_vars": {},
        "result_columns": columns,
        "results": {"bench_parse.time_parse": row},
        "durations": {},
        "version": 2,
    }


def build(repo: Path, path: Path, data: bytes, measure: list[str] | None = None) -> dict[str, Any]:
    """The result document ``tracker ingest`` would write for ``data`` (at ``path``), or IngestError/UsageError."""
    doc = load_json(path, data)
    kind = kind_of(doc)
    if kind is None:
        raise IngestError(f"{path}: not a pytest-benchmark or asv file")
    assert isinstance(doc, dict)
    clock = Clock()
    result, _ = result_document(
        repo, path, doc, kind, measure or ["src/**", "tests/**"], None, clock, lambda c: commit_files(repo, c)
    )
    return result


def accepted_or_refused(repo: Path, path: Path, data: bytes, *siblings: Path) -> dict[str, Any] | None:
    """The property: a result document the validator accepts, with finite raw samples only, or a refusal naming the
    file (or the sibling file that is wrong). Any other exception fails the test."""
    try:
        result = build(repo, path, data)
    except (IngestError, UsageError) as err:
        assert str(err).startswith((str(path), *map(str, siblings), "--measure")), err
        return None
    encoded = json.dumps(result, allow_nan=False, ensure_ascii=False).encode("utf-8")
    parse_result(encoded, path)  # what is written reads back
    for case in result["cases"]:
        assert case["samples"] and all(math.isfinite(x) and x > 0 for x in case["samples"])
    return result


def test_the_seeds_are_read(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "pb.json"
    pb = accepted_or_refused(repo, path, json.dumps(pb_doc(head(repo))).encode())
    assert pb is not None and pb["cases"][0]["params"] == {"size": 8}
    assert pb["cases"][0]["metric"] == "tests/test_parse.py::test_parse"
    assert pb["cases"][0]["info"] == {"cpu": "Some CPU", "iterations": 1}
    asv_path = asv_tree(tmp_path)
    result = accepted_or_refused(repo, asv_path, json.dumps(asv_doc(head(repo))).encode())
    assert result is not None
    assert [c["params"] for c in result["cases"]] == [{"param1": 1}, {"param1": 2}]  # the null point is skipped
    # started_at (asv's date is the commit's)
    assert result["provenance"]["time"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW))


def asv_tree(tmp_path: Path, machine: object = None) -> Path:
    folder = tmp_path / "results" / "testbox"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "machine.json").write_text(
        json.dumps({"machine": "testbox", "version": 1} if machine is None else machine)
    )
    return folder / "abc-existing-py.json"


# Values a hostile file may hold where a tool writes something else.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["\udc80", "1e400", "nan", "", "::", "[8]", "f" * 40])
)
VALUES = st.recursive(
    SCALARS, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=12
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indexes) into a JSON value."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths_of(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths_of(v, (*prefix, i))
    return out


def mutate(doc: dict[str, Any], where: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    if not where:
        return doc
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    return doc


@HOSTILE_SETTINGS
@given(data=st.data(), value=VALUES, which=st.sampled_from([PYTEST_BENCHMARK, ASV]))
def test_a_value_of_any_shape_anywhere_is_read_or_refused(
    repo: Path, tmp_path: Path, data: st.DataObject, value: Any, which: str
) -> None:
    seed = pb_doc(head(repo)) if which == PYTEST_BENCHMARK else asv_doc(head(repo))
    where = data.draw(st.sampled_from(paths_of(seed)[1:]))
    doc = mutate(seed, where, value)
    path = tmp_path / "pb.json" if which == PYTEST_BENCHMARK else asv_tree(tmp_path)
    accepted_or_refused(repo, path, json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass"))
    (tmp_path / "results" / "benchmarks.json").unlink(missing_ok=True)


@HOSTILE_SETTINGS
@given(cut=st.integers(min_value=0), which=st.sampled_from([PYTEST_BENCHMARK, ASV]))
def test_a_truncated_file_is_refused(repo: Path, tmp_path: Path, cut: int, which: str) -> None:
    seed = pb_doc(head(repo)) if which == PYTEST_BENCHMARK else asv_doc(head(repo))
    data = json.dumps(seed, allow_nan=True).encode()
    data = data[: cut % len(data)]
    path = tmp_path / "pb.json" if which == PYTEST_BENCHMARK else asv_tree(tmp_path)
    with pytest.raises(IngestError) as err:
        build(repo, path, data)
    assert str(err.value).startswith(str(path))


@pytest.mark.parametrize("which", [PYTEST_BENCHMARK, ASV])
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a": 1, "a": 2}', "duplicate key"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("\xff\xfe", "not UTF-8"),
    ],
)
def test_hostile_bytes_are_refused(repo: Path, tmp_path: Path, which: str, text: str, why: str) -> None:
    path = tmp_path / "pb.json" if which == PYTEST_BENCHMARK else asv_tree(tmp_path)
    with pytest.raises(IngestError) as err:
        build(repo, path, text.encode("latin-1"))
    assert str(err.value).startswith(str(path)) and why in str(err.value)


def test_a_duplicate_key_deep_in_a_real_shape_is_refused(repo: Path, tmp_path: Path) -> None:
    text = json.dumps(pb_doc(head(repo))).replace('"size": 8', '"size": 8, "size": 9')
    with pytest.raises(IngestError, match="duplicate key"):
        build(repo, tmp_path / "pb.json", text.encode())


def test_a_number_too_large_for_a_float_is_refused(repo: Path, tmp_path: Path) -> None:
    text = json.dumps(pb_doc(head(repo))).replace("[1e-06, 2e-06, 3e-06]", "[1e-06, 1e999999]")
    assert "1e999999" in text
    with pytest.raises(IngestError, match=r"stats.data\[1\] is inf"):
        build(repo, tmp_path / "pb.json", text.encode())


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d["benchmarks"][0]["stats"].pop("data"), "no raw samples"),
        (lambda d: d["benchmarks"][0]["stats"].update(data=[]), "is empty"),
        (lambda d: d["benchmarks"][0]["stats"].update(data=[1.0, float("nan")]), "finite number"),
        (lambda d: d["benchmarks"][0]["stats"].update(data=[1.0, 0.0]), "finite number > 0"),
        (lambda d: d["commit_info"].update(dirty=True), "uncommitted changes"),
        (lambda d: d["commit_info"].update(dirty="no"), "commit_info.dirty"),
        (lambda d: d["commit_info"].pop("dirty"), "no dirty flag"),
        (lambda d: d["commit_info"].update(id="unknown"), "names no commit"),
        (lambda d: d["commit_info"].update(id="a" * 40), "not a commit of this repository"),
        (lambda d: d.update(datetime="2026-12-01T10:00:00"), "not an ISO-8601 time"),
        (lambda d: d.update(datetime="2999-01-01T00:00:00Z"), "in the future"),
        (lambda d: d.update(datetime="2020-01-01T00:00:00Z"), "before commit"),
        (lambda d: d["benchmarks"][0].update(param="9"), "does not end with its param"),
        (lambda d: d["benchmarks"][0]["params"].update(size=float("inf")), "not a finite number"),
        (lambda d: d["benchmarks"][0]["params"].update(size=10**40), "too large"),
        (lambda d: d["benchmarks"].append(copy.deepcopy(d["benchmarks"][0])), "repeats cases[0]"),
        (lambda d: d["machine_info"].update(node="\udc80"), "surrogate"),
    ],
)
def test_what_a_pytest_benchmark_file_may_not_say(repo: Path, tmp_path: Path, change: Any, why: str) -> None:
    doc = pb_doc(head(repo))
    change(doc)
    path = tmp_path / "pb.json"
    with pytest.raises(IngestError) as err:
        build(repo, path, json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass"))
    assert str(err.value).startswith(str(path)) and why in str(err.value), err.value


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d["results"]["bench_parse.time_parse"][7].__setitem__(0, None), "no raw samples"),
        (lambda d: d["results"]["bench_parse.time_parse"].pop(7), "no raw samples"),
        (lambda d: d["results"]["bench_parse.time_parse"][0].append(0.1), "4 results for 3"),
        (lambda d: d.update(version=True), "asv result version"),
        (lambda d: d.update(commit_hash="abc"), "not a full git commit id"),
        (lambda d: d["results"]["bench_parse.time_parse"].__setitem__(3, -1), "milliseconds"),
        (lambda d: d["results"]["bench_parse.time_parse"].__setitem__(3, None), "records no started_at"),
        (lambda d: d["results"]["bench_parse.time_parse"].__setitem__(3, 32503680000000), "in the future"),
        (lambda d: d["results"]["bench_parse.time_parse"].__setitem__(3, 1577836800000), "before commit"),
        (lambda d: d["results"]["bench_parse.time_parse"][7][0].append(math.inf), "finite number"),
        (lambda d: d["results"]["bench_parse.time_parse"][0].__setitem__(2, 0.1), "no raw samples"),
        (lambda d: d["results"].update({"bench_parse.time_parse": None}), "expected a list of columns"),
        (lambda d: d["results"].clear(), "no benchmark with a result"),
    ],
)
def test_what_an_asv_file_may_not_say(repo: Path, tmp_path: Path, change: Any, why: str) -> None:
    doc = asv_doc(head(repo))
    change(doc)
    path = asv_tree(tmp_path)
    with pytest.raises(IngestError) as err:
        build(repo, path, json.dumps(doc, allow_nan=True).encode())
    assert str(err.value).startswith(str(path)) and why in str(err.value), err.value


def test_asv_points_without_a_result_are_skipped_and_said(repo: Path, tmp_path: Path) -> None:
    doc = asv_doc(head(repo))
    row = doc["results"]["bench_parse.time_parse"]
    row[0], row[7] = [0.001, math.nan, None], [[0.001, 0.0011], None, None]
    path = asv_tree(tmp_path)
    assert load_json(path, json.dumps(doc, allow_nan=True).encode())  # NaN and -Infinity read (used values checked)
    from tracker.store.bench_formats import asv

    run = asv(path, doc)
    assert [c["params"] for c in run.cases] == [{"param1": 1}]
    assert run.notes == [
        "bench_parse.time_parse: 1 of 3 parameter combination(s) skipped (null result: failed or skipped)",
        "bench_parse.time_parse: 1 of 3 parameter combination(s) skipped (asv skipped them: NaN)",
    ]


def test_asv_machine_json_must_be_there_and_regular(repo: Path, tmp_path: Path) -> None:
    data = json.dumps(asv_doc(head(repo))).encode()
    path = asv_tree(tmp_path)
    (path.parent / "machine.json").unlink()
    with pytest.raises(IngestError, match=r"no machine\.json beside it"):
        build(repo, path, data)
    os.mkfifo(path.parent / "machine.json")  # never waited on
    with pytest.raises(IngestError, match=r"machine\.json"):
        build(repo, path, data)
    (path.parent / "machine.json").unlink()
    (path.parent / "machine.json").symlink_to("/dev/zero")
    with pytest.raises(IngestError, match=r"machine\.json"):
        build(repo, path, data)
    (path.parent / "machine.json").unlink()
    asv_tree(tmp_path, {"machine": "otherbox"})
    with pytest.raises(IngestError, match="names machine 'otherbox'"):
        build(repo, path, data)


def test_asv_parameters_are_typed_from_their_repr(repo: Path, tmp_path: Path) -> None:
    doc = asv_doc(head(repo))
    row = doc["results"]["bench_parse.time_parse"]
    row[0], row[7] = [0.1] * 6, [[0.1, 0.2]] * 6
    row[1] = [["1", "1.5", "True", "'x'", "None", "<function f at 0x1>"]]
    path = asv_tree(tmp_path)
    (path.parent.parent / "benchmarks.json").write_text(
        json.dumps({"bench_parse.time_parse": {"param_names": ["n"], "type": "time", "unit": "seconds"}})
    )
    result = build(repo, path, json.dumps(doc).encode())
    assert [c["params"]["n"] for c in result["cases"]] == [1, 1.5, True, "x", "None", "<function f at 0x1>"]
    assert [type(c["params"]["n"]) for c in result["cases"]] == [int, float, bool, str, str, str]


def test_a_commit_given_by_hand_is_never_called_clean(repo: Path, tmp_path: Path) -> None:
    doc = pb_doc("unversioned")  # what pytest-benchmark writes outside a git checkout, with dirty: false
    path = tmp_path / "pb.json"
    loaded = load_json(path, json.dumps(doc).encode())
    assert isinstance(loaded, dict)
    result, _ = result_document(
        repo, path, loaded, PYTEST_BENCHMARK, ["src/**"], head(repo)[:10], Clock(), lambda c: commit_files(repo, c)
    )
    assert result["provenance"]["commit"] == head(repo) and result["provenance"]["dirty"] is None
    assert pb_doc(head(repo))["commit_info"]["dirty"] is False
    assert build(repo, path, json.dumps(pb_doc(head(repo))).encode())["provenance"]["dirty"] is False


def test_measured_files_come_from_the_commit_and_must_exist(repo: Path, tmp_path: Path) -> None:
    data = json.dumps(pb_doc(head(repo))).encode()
    result = build(repo, tmp_path / "pb.json", data, measure=["src/**"])
    assert list(result["provenance"]["fingerprint"]["files"]) == ["src/parse.py"]
    with pytest.raises(UsageError, match="no file of commit"):
        build(repo, tmp_path / "pb.json", data, measure=["nothing/**"])


@HOSTILE_SETTINGS
@given(
    machine=VALUES, meta=VALUES, raw=st.sampled_from(["", "{", '{"machine": "testbox", "machine": "x"}', "[" * 50_000])
)
def test_hostile_sibling_files_of_asv_are_read_or_refused(
    repo: Path, tmp_path: Path, machine: Any, meta: Any, raw: str
) -> None:
    path = asv_tree(tmp_path, {"machine": "testbox", "cpu": machine})
    benchmarks = path.parent.parent / "benchmarks.json"
    benchmarks.write_text(json.dumps({"bench_parse.time_parse": meta}, allow_nan=True))
    data = json.dumps(asv_doc(head(repo)), allow_nan=True).encode()
    accepted_or_refused(repo, path, data, benchmarks)
    benchmarks.write_text(json.dumps(meta, allow_nan=True))
    accepted_or_refused(repo, path, data, benchmarks)
    benchmarks.unlink()
    (path.parent / "machine.json").write_text(raw)
    with pytest.raises(IngestError) as err:
        build(repo, path, data)
    assert str(err.value).startswith(str(path.parent / "machine.json")), err.value


def test_asv_parameter_names_of_another_version_of_the_benchmark_are_not_used(repo: Path, tmp_path: Path) -> None:
    """asv rewrites results/benchmarks.json for the benchmark suite of its latest run; a result file of an older run
    keeps, in its ``version`` column, the version of the benchmark that measured it (asv publish and compare drop a
    result whose version is not the benchmark's). Here the benchmark's axes were swapped since (size, threads) ->
    (threads, size), both taking 1 and 2: read with today's names, the point measured at size=1, threads=2 is
    labelled size=2, threads=1, and a gate on size=2, threads=1 reads the smaller problem's time."""
    doc = asv_doc(head(repo))
    row = doc["results"]["bench_parse.time_parse"]
    row[0] = [0.001, 0.002, 0.003, 0.004]
    row[1] = [["1", "2"], ["1", "2"]]  # measured as (size, threads)
    row[2] = "version-of-size-threads"
    row[7] = [[0.001, 0.0011], [0.002, 0.0021], [0.003, 0.0031], [0.004, 0.0041]]
    path = asv_tree(tmp_path)
    (path.parent.parent / "benchmarks.json").write_text(
        json.dumps(
            {
                "bench_parse.time_parse": {
                    "param_names": ["threads", "size"],  # today's benchmark
                    "params": [["1", "2"], ["1", "2"]],
                    "type": "time",
                    "unit": "seconds",
                    "version": "version-of-threads-size",
                }
            }
        )
    )
    try:
        result = build(repo, path, json.dumps(doc).encode())
    except IngestError:
        return  # refused: fine
    measured = {(1, 2): 0.002}  # (size, threads) -> its samples' first value, as measured
    for c in result["cases"]:
        p = c["params"]
        if {"size", "threads"} <= p.keys() and c["samples"][0] == 0.002:
            assert (p["size"], p["threads"]) in measured, f"size=1, threads=2 measured, labelled {p}"


def test_a_measured_file_whose_name_is_not_utf8_is_no_traceback(tmp_path: Path) -> None:
    """The commit's tree may hold a file whose name is not UTF-8 (git allows any bytes): matched by the measured globs
    it reaches set_fingerprint as a lone surrogate, and ingest dies with a UnicodeEncodeError traceback."""
    root = make_repo(tmp_path / "repo", {"tests/test_parse.py": "def test_parse(): pass\n", "src/parse.py": "X = 1\n"})
    with open(os.path.join(os.fsencode(root / "src"), b"caf\xe9.py"), "w") as f:  # Latin-1, as an old tool wrote it
        f.write("Y = 2\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a file name in Latin-1")
    doc = pb_doc(head(root))
    doc["datetime"] = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() + 1))
    accepted_or_refused(root, tmp_path / "pb.json", json.dumps(doc).encode())


def test_an_asv_result_reached_through_a_symlink_is_judged_by_its_real_folder(repo: Path, tmp_path: Path) -> None:
    """machine.json must name the folder a result file lies in: a link to it from another machine's folder (whose
    machine.json names that machine) would be stored as measured on a machine it never ran on."""
    real = asv_tree(tmp_path)
    real.write_text(json.dumps(asv_doc(head(repo))))
    other = tmp_path / "results" / "otherbox"
    other.mkdir()
    (other / "machine.json").write_text(json.dumps({"machine": "otherbox", "version": 1}))
    link = other / real.name
    link.symlink_to(real)
    result = build(repo, link, real.read_bytes())
    assert result["provenance"]["host"] == "testbox"


def test_a_relative_asv_path_from_inside_its_folder_is_read(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tracker ingest x.json`` run inside results/<machine>/: the path's parent is ``.``, whose name is ''; the
    folder (and benchmarks.json one up) come from where the file really lies."""
    path = asv_tree(tmp_path)
    doc = asv_doc(head(repo))
    path.write_text(json.dumps(doc))
    (path.parent.parent / "benchmarks.json").write_text(
        json.dumps(
            {"bench_parse.time_parse": {"param_names": ["n"], "type": "time", "unit": "seconds", "version": "abc"}}
        )
    )
    monkeypatch.chdir(path.parent)
    result = build(repo, Path(path.name), path.read_bytes())
    assert result["provenance"]["host"] == "testbox"
    assert [c["params"] for c in result["cases"]] == [{"n": 1}, {"n": 2}]
