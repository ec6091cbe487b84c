"""Result files: valid ones load exactly; every kind of bad one is rejected with ``path: reason``."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_evidence import FAST, dumps, mutated
from hypothesis import given, settings
from hypothesis import strategies as st
from resultfiles import blob, case, result, write
from tracker_testutil import git, phase, plan_text

from tracker.base.contract import blob_id
from tracker.core.model import BenchGate
from tracker.core.stats import compute_stat
from tracker.errors import ResultFileError
from tracker.store.result_files import VALIDATOR, load_result, load_results, results_json_schema
from tracker.store.result_schema import parse_result

METRIC = "verify_attn.time_us"


def good() -> dict[str, Any]:
    return result([case(METRIC, {"impl": "cuda", "ctx": 91000, "heads": 8}, [41.2, 40.9, 41.0])])


def test_valid_file_loads_with_exact_param_types(tmp_path: Path) -> None:
    path = write(tmp_path / "r.json", good())
    loaded = load_result(path)
    params = loaded.cases[0].params
    assert params == {"impl": "cuda", "ctx": 91000, "heads": 8}
    assert type(params["ctx"]) is int
    assert (loaded.gpu, loaded.host, loaded.commit, loaded.dirty) == (
        "NVIDIA H200",
        "gpu-box",
        "3f2a91c" + "0" * 33,
        False,
    )
    assert loaded.time.isoformat() == "2026-11-29T11:02:03+00:00"
    assert loaded.cases[0].samples == (41.2, 40.9, 41.0)


def test_blob_id_matches_git(tmp_path: Path) -> None:
    data = b"some kernel\r\nbytes \xff\n"
    (tmp_path / "f").write_bytes(data)
    out = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True, check=True)
    assert blob_id(data) == out.stdout.strip() == blob(data)


def test_writer_stats_rounded_to_two_decimals_are_accepted(tmp_path: Path) -> None:
    doc = good()
    doc["cases"][0]["stats"]["mean"] = 41.03  # true mean 41.0333...
    assert load_result(write(tmp_path / "r.json", doc)).cases[0].samples == (41.2, 40.9, 41.0)


def test_nearest_rank_p90_is_accepted(tmp_path: Path) -> None:
    doc = result([case(METRIC, {"impl": "cuda"}, [float(i) for i in range(1, 11)])])
    doc["cases"][0]["stats"]["p90"] = 9.0  # nearest rank; interpolated would be 9.1
    load_result(write(tmp_path / "r.json", doc))


def mutate(doc: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    node: Any = doc
    keys = [int(k) if k.isdigit() else k for k in dotted.split(".")]
    for k in keys[:-1]:
        node = node[k]
    if value is KeyError:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("dotted", "value", "reason"),
    [
        ("schema", "something-else", "not a benchmark result file (schema='something-else'"),
        ("version", 2, "unsupported version 2 (this tracker reads version 1)"),
        ("cases.0.stats.n", 4, "cases[0]: stats.n is 4 but there are 3 samples"),
        ("cases.0.stats.median", 45.0, "cases[0]: stats.median is 45.0 but the samples give 41"),
        ("cases.0.stats.p90", 50.0, "cases[0]: stats.p90 is 50.0 but the samples put it in"),
        ("cases.0.samples", [], "cases[0].samples: List should have at least 1 item"),
        ("cases.0.samples", [41.2, "40.9", 41.0], "cases[0].samples[1]: Input should be a valid number"),
        ("cases.0.direction", "up", "cases[0].direction: Input should be 'lower' or 'higher'"),
        ("cases.0.params.ctx", [1], "cases[0].params.ctx"),
        ("cases.0.info", {"seeds": [1, 2]}, "cases[0].info.seeds"),
        ("cases.0.info", "seed 1", "cases[0].info: Input should be a valid dictionary"),
        ("cases.0.extra", 1, "cases[0].extra: Extra inputs are not permitted"),
        ("provenance.gpu", 3, "provenance.gpu: Input should be a valid string"),
        (
            "provenance.time",
            "yesterday",
            "provenance.time: 'yesterday' is not an ISO-8601 time with a time zone (and a real date)",
        ),
        (
            "provenance.time",
            "2026-11-29T11:02:03",
            "provenance.time: '2026-11-29T11:02:03' is not an ISO-8601 time with a time zone (and a real date)",
        ),
        (
            "provenance.time",
            "2026-02-30T11:02:03Z",
            "provenance.time: '2026-02-30T11:02:03Z' is not an ISO-8601 time with a time zone (and a real date)",
        ),
        ("provenance.time", 1764000000, "provenance.time: Input should be a valid string"),
        ("provenance.commit", "abc", "provenance.commit: String should match pattern"),
        ("provenance.fingerprint.digest", "0" * 64, "provenance.fingerprint: digest is not the sha256"),
        ("provenance.host", KeyError, "provenance.host: Field required"),
        ("cases.0.samples", [0.0, 0.0, 0.0], "cases[0]: samples[0] is 0.0 us: a time must be > 0"),
        ("cases.0.samples", [41.0, -5.0, 41.0], "cases[0]: samples[1] is -5.0 us: a time must be > 0"),
    ],
)
def test_invalid_files_rejected_with_path_and_reason(tmp_path: Path, dotted: str, value: Any, reason: str) -> None:
    path = write(tmp_path / "bad.json", mutate(good(), dotted, value))
    with pytest.raises(ResultFileError) as err:
        load_result(path)
    assert str(err.value).startswith(f"{path}: {reason}"), str(err.value)


def test_duplicate_cases_rejected(tmp_path: Path) -> None:
    doc = good()
    doc["cases"].append(dict(doc["cases"][0]))
    with pytest.raises(ResultFileError, match=r"cases\[1\] repeats cases\[0\]"):
        load_result(write(tmp_path / "r.json", doc))


def test_info_is_kept_out_of_a_cases_identity(tmp_path: Path) -> None:
    """Run conditions (seeds, split counts) validate, never become params, and never make two cases distinct."""
    doc = good()
    doc["cases"][0]["info"] = {"seeds": "12,34", "cuda_splits": 16}
    loaded = load_result(write(tmp_path / "r.json", doc))
    assert loaded.cases[0].params == {"impl": "cuda", "ctx": 91000, "heads": 8}
    other = dict(doc["cases"][0], info={"seeds": "56"})
    doc["cases"].append(other)
    with pytest.raises(ResultFileError, match=r"cases\[1\] repeats cases\[0\]"):
        load_result(write(tmp_path / "r2.json", doc))


def test_int_and_string_params_are_different_cases(tmp_path: Path) -> None:
    doc = good()
    doc["cases"].append(case(METRIC, {"impl": "cuda", "ctx": "91000", "heads": 8}, [1.0]))
    assert len(load_result(write(tmp_path / "r.json", doc)).cases) == 2


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty file"),
        ('{"schema": "tracker-bench-result", "version": 1, "cases": [', "truncated JSON (ends at line 1)"),
        ('{"a": 1,, "b": 2}', "malformed JSON: Expecting property name"),
        ('{"a": NaN}', "non-finite number NaN"),
        ('{"a": Infinity}', "non-finite number Infinity"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ("[1, 2]", "expected a JSON object, got list"),
    ],
)
def test_malformed_json(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ResultFileError) as err:
        load_result(path)
    assert reason in str(err.value) and str(err.value).startswith(str(path))


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "schema": "x",\n  oops\n}\n', encoding="utf-8")
    with pytest.raises(ResultFileError) as err:
        load_result(path)
    assert str(err.value).startswith(f"{path}:3:3: malformed JSON")


def test_every_truncation_is_rejected_never_half_read(tmp_path: Path) -> None:
    text = json.dumps(good(), indent=1)
    path = tmp_path / "t.json"
    for cut in range(1, len(text) - 1, 7):
        path.write_text(text[:cut], encoding="utf-8")
        with pytest.raises(ResultFileError):
            load_result(path)


def test_non_utf8_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ResultFileError, match="not UTF-8"):
        load_result(path)
    with pytest.raises(ResultFileError, match="No such file"):
        load_result(tmp_path / "missing.json")


def test_load_results_separates_good_from_bad(tmp_path: Path) -> None:
    ok = write(tmp_path / "ok.json", good())
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    loaded, errors = load_results([ok, bad])
    assert [r.path for r in loaded] == [str(ok)]
    assert [e.path for e in errors] == [str(bad)]


def test_verdicts_are_cached_by_content_and_validator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from tracker.base.cache import VALIDATION_LIBRARIES, Cache, cache_key, library_key
    from tracker.store import result_schema
    from tracker.store.result_files import CHECKS

    cache = Cache(tmp_path)
    ok = write(tmp_path / "ok.json", good())
    bad = write(tmp_path / "bad.json", mutate(good(), "version", 2))
    load_result(ok, cache)
    with pytest.raises(ResultFileError):
        load_result(bad, cache)
    cache.write()  # the command's end
    doc = json.loads((tmp_path / f".tracker/cache/{CHECKS}.json").read_text())
    assert doc["key"] == cache_key(CHECKS, VALIDATOR, library_key(*VALIDATION_LIBRARIES))  # and pydantic's identity
    sha = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (ok, bad)}
    assert doc["data"] == {sha[ok]: "", sha[bad]: "version: unsupported version 2 (this tracker reads version 1)"} or (
        doc["data"][sha[ok]] == "" and "unsupported version 2" in doc["data"][sha[bad]]
    )
    # A cached bad verdict is replayed with the file's own path, without revalidating.
    monkeypatch.setattr(result_schema, "parse_result", None)  # calling it would fail
    copy = tmp_path / "copy.json"
    copy.write_bytes(bad.read_bytes())
    with pytest.raises(ResultFileError, match=r"copy.json: unsupported version 2"):
        load_result(copy, Cache(tmp_path))
    monkeypatch.undo()
    # Changed bytes are validated afresh.
    ok.write_text(ok.read_text().replace('"gpu-box"', '"other-box"'))
    assert load_result(ok, Cache(tmp_path)).host == "other-box"


def test_warm_load_does_not_import_pydantic(tmp_path: Path) -> None:
    path = write(tmp_path / "r.json", good())
    code = (
        "import sys; from pathlib import Path; from tracker.base.cache import Cache; from tracker.store.result_files import load_result; "
        f"c = Cache(Path({str(tmp_path)!r})); load_result({str(path)!r}, c); c.write(); "
        "cold = 'pydantic' in sys.modules; print(cold)"
    )
    root = Path(__file__).resolve().parents[3]
    cold = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert (cold.stdout.strip(), warm.stdout.strip()) == ("True", "False")


def test_json_schema_describes_the_file() -> None:
    schema = results_json_schema()
    assert schema["$id"] == "tracker-bench-result/v1"
    assert {"schema", "version", "benchmark", "provenance", "cases"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False
    json.dumps(schema)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False), min_size=1, max_size=40))
def test_stats_written_by_a_correct_writer_always_agree(samples: list[float]) -> None:
    doc = result([case(METRIC, {"impl": "cuda"}, samples)])
    loaded = parse_result(json.dumps(doc).encode())
    assert compute_stat("median", loaded.cases[0].samples) == pytest.approx(doc["cases"][0]["stats"]["median"])


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    try:
        parse_result(data, "x.json")
    except ResultFileError as err:
        assert str(err).startswith("x.json")


def test_stat_definitions() -> None:
    s = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert [compute_stat(n, s) for n in ("median", "min", "mean")] == [3.0, 1.0, 3.0]
    assert compute_stat("p90", s) == pytest.approx(4.6)
    with pytest.raises(ValueError, match="unknown statistic 'max'"):
        compute_stat("max", s)


def test_zero_is_a_valid_sample_of_a_metric_that_is_not_a_time(tmp_path: Path) -> None:
    doc = result([case("verify_attn.floor_fraction", {"impl": "cuda"}, [0.0, 0.5], "fraction", "higher")])
    assert load_result(write(tmp_path / "r.json", doc)).cases[0].samples == (0.0, 0.5)


def test_bench_results_in_the_repository_still_validate() -> None:
    root = Path(__file__).resolve().parents[3]
    files = sorted((root / "bench/results").glob("*.json"))
    assert files
    for path in files:
        parse_result(path.read_bytes(), path)  # raises with path: reason


# --- one reader of the store's result copies; result files named by the contract -----------------------------------


def test_the_store_s_result_copies_are_the_ones_its_reader_finds(tmp_path: Path) -> None:
    """Was: the store was read a second time by byte-sniffing for ``"tracker-bench-result"``, which missed a copy
    whose schema is written with a JSON escape (the store's reader, and so status, counts it)."""
    from tracker.store import evidence
    from tracker.store.result_files import repo_result_files

    root = tmp_path / "repo"
    text = json.dumps(good(), indent=1).replace('"tracker-bench-result"', '"tracker-bench-resul\\u0074"')
    (root / ".tracker/evidence").mkdir(parents=True)
    (root / ".tracker/evidence/escaped.json").write_text(text)
    (root / ".tracker/evidence/broken.json").write_text("{")
    write(root / "bench/results/b.json", good())
    store = evidence.load(root, strict=False, results=False)
    assert [rel for rel, _ in store.bench] == [".tracker/evidence/escaped.json"]
    assert repo_result_files(root) == [root / ".tracker/evidence/escaped.json", root / "bench/results/b.json"]
    assert repo_result_files(root, [rel for rel, _ in store.bench]) == repo_result_files(root)


def test_written_result_files_are_named_by_the_contract(tmp_path: Path) -> None:
    """Was: write_result had its own rule (dots kept, ``_`` for other characters); now tracker.base.contract's."""
    import re

    from tracker.store.result_files import write_result

    doc = good()
    doc["provenance"]["host"] = "gpu.box:1"
    doc["benchmark"] = "tracker.speed"
    path = write_result(doc, tmp_path / "out")
    assert re.fullmatch(r"\d{8}T\d{12}Z-gpu-box-1-tracker-speed-[0-9a-f]{6}\.json", path.name), path.name
    assert [p.name for p in (tmp_path / "out").iterdir()] == [path.name]  # no temp file left


def test_result_new_refuses_a_results_folder_linked_out_of_the_repository(repo, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    plan = '# Demo\n\n```plan\nid = "0001"\ntitle = "Demo"\n```\n'
    root = repo({"plans/0001-demo.md": plan, "src/app.py": "x = 1\n"})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "bench").mkdir()
    (root / "bench/results").symlink_to(outside)  # its files would be refused as results: none is written there
    r = cli(root, "result", "new", "latency", "--metric", "app.latency_ms", "--unit", "ms", "--direction", "lower",
            "--sample", "3.0", "--measure", "src/*.py")  # fmt: skip
    assert r.code == 8 and "outside the repository" in r.err and "Traceback" not in r.err, r.err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "args"),
    [
        ("BENCHMARK", [b"lat\xff"]),
        ("--metric", [b"lat", b"--metric", b"m\xff"]),
        ("--unit", [b"lat", b"--unit", b"m\xffs"]),
        ("--direction", [b"lat", b"--direction", b"lower\xff"]),
        ("--param", [b"lat", b"--param", b"k=\xff"]),
        ("--gpu", [b"lat", b"--gpu", b"\xff"]),
        ("--command", [b"lat", b"--command", b"run \xff"]),
    ],
)
def test_result_new_text_that_is_not_utf8_is_a_usage_error_naming_its_option(
    repo,  # type: ignore[no-untyped-def]
    option: str,
    args: list[bytes],
) -> None:
    """A command line's bytes that are not UTF-8 cannot go into a result file: exit 3 naming the option (the
    message said only "a text holds half a surrogate pair"), nothing written."""
    from evidence_repo import CHECKOUT

    root = repo({"src/app.py": "x = 1\n"})
    given = {b"--metric": b"m", b"--unit": b"ms", b"--direction": b"lower", b"--sample": b"3.0"}
    for flag, value in given.items():
        if flag not in args:
            args = [*args, flag, value]
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"tracker", b"result", b"new", *args, b"--measure", b"src/*.py"],
        cwd=root,
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(CHECKOUT)},
    )
    bad = next(a for a in args if b"\xff" in a).decode("utf-8", "surrogateescape")
    assert (proc.returncode, proc.stderr) == (3, f"tracker: error: {option}: not valid UTF-8 text ({bad!a})\n".encode())
    assert not (root / "bench/results").exists()


def test_a_time_said_to_be_better_higher_is_refused(tmp_path: Path) -> None:
    """F6: `direction: higher` on a time turned a 2x slowdown into a 2x speedup that met a ratio gate."""
    from resultfiles import case, result, write

    from tracker.store.result_files import ResultFileError, load_result

    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0, 101.0], direction="higher")])
    path = write(tmp_path / "r.json", doc)
    with pytest.raises(ResultFileError, match=r"direction is 'higher' for a time \(us\): less time is better"):
        load_result(path)


IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.log\n"


SPEED = 'bench = "app.latency_ms"\nwhere = { size = 1000 }\nat_most = 50.0\nmin_samples = 3'


@pytest.fixture
def app(repo: Callable[..., Path]) -> Path:
    plan = plan_text("0001", phase("P1", SPEED, paths='"src/**"'))
    return repo(
        {"plans/0001-a.md": plan, "src/app.py": "def f():\n    return 1\n", "README.md": "app\n", ".gitignore": IGNORE}
    )


def statuses(cli: Callable[..., Any], root: Path) -> list[tuple[str, bool, str]]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return [
        (ph["status"], g["met"], g["reason"])
        for p in json.loads(res.out)["plans"]
        for ph in p["phases"]
        for g in ph["gates"]
    ]


def latency(samples: list[float], size: int = 1000) -> dict[str, Any]:
    return {
        "metric": "app.latency_ms",
        "params": {"size": size},
        "unit": "ms",
        "direction": "lower",
        "samples": samples,
    }


def test_a_result_written_by_the_helper_validates_and_drives_a_bench_gate(app: Path, cli: Callable[..., Any]) -> None:
    from resultfiles import blob

    from tracker.store.result_files import load_result, new_result, write_result

    doc = new_result(app, "latency", [latency([41.0, 40.0, 42.0])], ["src/**"], command="python measure.py", gpu=None)
    path = write_result(doc, app / "bench/results")
    run = load_result(path)  # the tracker's own validator accepts it
    assert run.files == {"src/app.py": blob(b"def f():\n    return 1\n")} and run.dirty is False
    assert run.commit == git(app, "rev-parse", "HEAD").strip()
    # The digest rule, computed independently of the tracker: sha256 over sorted "path NUL blob LF" lines.
    lines = "".join(f"{p}\0{b}\n" for p, b in sorted(run.files.items()))
    assert doc["provenance"]["fingerprint"]["digest"] == hashlib.sha256(lines.encode()).hexdigest()
    assert doc["cases"][0]["stats"] == {"n": 3, "median": 41.0, "min": 40.0, "mean": 41.0, "p90": 41.8}
    assert statuses(cli, app) == [
        (
            "done",
            True,
            f"41.0 ms (95% upper bound 42.0 ms) ≤ 50.0 ms (median of 3, size=1000, no GPU, src@{run.commit[:7]})",
        )
    ]
    # A slower run later: the newest run decides, and the phase that was done has regressed.
    write_result(new_result(app, "latency", [latency([70.0, 71.0, 69.0])], ["src/**"]), app / "bench/results")
    status, met, reason = statuses(cli, app)[0]
    assert (status, met) == ("regressed", False) and reason.startswith("70.0 ms (95% lower bound 69.0 ms) > 50.0 ms"), (
        reason
    )
    # The measured code changes: a met gate's phase goes stale.
    write_result(new_result(app, "latency", [latency([30.0, 31.0, 29.0])], ["src/**"]), app / "bench/results")
    assert statuses(cli, app)[0][:2] == ("done", True)
    (app / "src/app.py").write_text("def f():\n    return 2\n")
    assert statuses(cli, app)[0][0] == "stale"


def test_the_helper_refuses_what_the_validator_would_refuse(app: Path) -> None:
    from tracker.store.result_files import new_result

    bad = [
        ([latency([])], "cases[0].samples: expected a non-empty list of numbers"),
        ([latency([1.0, float("nan")])], "cases[0].samples[1]: nan is not a finite number"),
        ([latency([1.0, True])], "cases[0].samples[1]: True is not a finite number"),
        ([latency([0.0])], "cases[0]: samples[0] is 0.0 ms: a time must be > 0"),
        ([{**latency([1.0]), "direction": "down"}], "cases[0].direction: "),
        ([{**latency([1.0]), "stats": {}}], "cases[0]: unknown key 'stats'"),
        ([latency([1.0]), latency([2.0])], "cases[1] repeats cases[0]"),
        ([{**latency([1.0]), "params": {"size": [1]}}], "cases[0].params.size"),
    ]
    for cases, said in bad:
        with pytest.raises(ValueError, match=re.escape(said)):
            new_result(app, "latency", cases, ["src/**"])
    with pytest.raises(ValueError, match="measured: no file of the working tree matches nothing/\\*\\*"):
        new_result(app, "latency", [latency([1.0])], ["nothing/**"])


TEST_A = "def test_x():\n    assert True\n"


PLAN = plan_text(
    "0001", phase("P1", 'test = "tests/test_a.py"') + phase("P2", 'bench = "m"\nwhere = { k = 1 }\nat_most = 5')
)


FILES = {"plans/0001-a.md": PLAN, "tests/test_a.py": TEST_A, "conftest.py": "",
         ".gitignore": ".tracker/cache/\n.tracker/lock\n__pycache__/\n"}  # fmt: skip


STORE = ".tracker/evidence"


def utc(offset_s: float = 0.0) -> str:
    """This machine's time plus ``offset_s``, in the store's shape."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


def put(root: Path, name: str, doc: object) -> Path:
    """Write ``doc`` (JSON, or bytes as they are) into the evidence store."""
    path = root / STORE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


def gates(cli: Callable[..., Any], root: Path) -> list[tuple[bool, str]]:
    """(met, reason) of every gate, from ``tracker status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    return [(g["met"], g["reason"]) for p in json.loads(res.out)["plans"] for ph in p["phases"] for g in ph["gates"]]


def test_a_result_rejected_for_its_future_time_is_not_cached(tmp_path: Path) -> None:
    from tracker.base.cache import Cache
    from tracker.base.contract import Clock
    from tracker.errors import ResultFileError
    from tracker.store.result_files import load_result

    path = write(tmp_path / "r.json", result([case("m", {"k": 1}, [1.0])], time=utc(3600)))
    cache = Cache(tmp_path)
    with pytest.raises(ResultFileError, match="is in the future") as err:
        load_result(path, cache)
    assert not err.value.lasting
    cache.write()
    checks = json.loads((tmp_path / ".tracker/cache/result-checks.json").read_text())["data"]
    assert list(checks.values()) == [""]  # valid bytes: only the time is early
    assert load_result(path, Cache(tmp_path), clock=Clock(time.time() + 7200)).host == "gpu-box"


@pytest.mark.parametrize(("where", "reason"), [("samples", "cases[0].samples[1]: Input should be a finite number"),
                                               ("params", "cases[0].params.k"), ("info", "cases[0].info.k"),
                                               ("stats", "cases[0].stats.mean: Input should be a finite number")])  # fmt: skip
def test_non_finite_values_are_rejected_with_a_reason(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path, where: str, reason: str
) -> None:
    root = repo(FILES)
    text = json.dumps(result([case("m", {"k": 1}, [1.0, 2.0])]))
    if where == "samples":
        text = text.replace('"samples": [1.0, 2.0]', '"samples": [1.0, 1e400]')
    elif where == "params":
        text = text.replace('"params": {"k": 1}', '"params": {"k": 1e400}')
    elif where == "info":
        text = text.replace('"params": {"k": 1}', '"params": {"k": 1}, "info": {"k": -1e400}')
    else:
        text = text.replace('"mean": 1.5', '"mean": 1e400')
    (tmp_path / "r.json").write_text(text)
    res = cli(root, "ingest", str(tmp_path / "r.json"))
    assert res.code == 8 and f"r.json: {reason}" in res.err, res.err


def test_result_versions_the_code_does_not_know(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo(FILES)
    for version in (99, True, 1.0, "1"):
        doc = {**result([case("m", {"k": 1}, [1.0])]), "version": version}
        res = cli(root, "ingest", str(write(tmp_path / "r.json", doc)))
        assert res.code == 8 and f"unsupported version {version!r} (this tracker reads version 1)" in res.err, res.err
        put(root, "r.json", doc)
        assert gates(cli, root)[1] == (
            False,
            f"invalid evidence file, fix or remove it: .tracker/evidence/r.json: unsupported tracker-bench-result version {version!r} (this tracker reads version 1)",
        )


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


@pytest.mark.slow
@settings(FAST, max_examples=3000)
@given(doc=mutated(_result_base))
def test_a_mutated_result_file_deep(tmp_path_factory: pytest.TempPathFactory, doc: dict[str, Any]) -> None:
    check_result(tmp_path_factory.mktemp("r", numbered=True) / "r.json", dumps(doc))
