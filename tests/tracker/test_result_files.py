"""Result files: valid ones load exactly; every kind of bad one is rejected with ``path: reason``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resultfiles import blob, case, result, write

from tracker.base.contract import blob_id
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
    root = Path(__file__).resolve().parents[2]
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
    root = Path(__file__).resolve().parents[2]
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
