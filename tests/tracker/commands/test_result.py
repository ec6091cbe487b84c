"""``tracker result new`` (tracker/commands/result.py): result files a bench gate reads, refused input, measured globs."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import phase, plan_text


def gate_of(cli: Callable[..., Any], root: Path) -> tuple[str, dict[str, Any]]:
    """(status of plan 0001's first phase, its first gate) from ``status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.out + res.err
    phase_json = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_json["status"], phase_json["gates"][0]


BENCH_GATE = 'bench = "app.latency_ms"\nwhere = { size = 1000 }\nat_most = 5.0'


ONE_CASE = (
    "--metric",
    "app.latency_ms",
    "--unit",
    "ms",
    "--direction",
    "lower",
    "--param",
    "size=1000",
    "--sample",
    "3,3.5",
)


def bench_repo(repo: Callable[..., Path]) -> Path:
    return repo({"plans/0001-x.md": plan_text("0001", phase("P1", BENCH_GATE, paths='"src/**"')), "src/app.py": "x = 1\n",
                 "bench/harness.py": "run = 1\n", ".gitignore": ".tracker/cache/\n.tracker/lock\n"})  # fmt: skip


def test_result_new_refuses_a_measure_glob_that_matches_no_file(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Only the union of the globs had to match: ``--measure src`` beside a matching glob recorded the file it
    matched, and a typo was silently dropped."""
    root = bench_repo(repo)
    res = cli(
        root,
        "result",
        "new",
        "latency",
        *ONE_CASE,
        "--measure",
        "src",
        "--measure",
        "bench/*.py",
        "--measure",
        "srcc/**",
    )
    assert res.code == 3, res.out + res.err
    assert res.err == ("tracker: error: --measure 'src': no file of the working tree matches it (did you mean 'src/'?); "
                       "--measure 'srcc/**': no file of the working tree matches it\n")  # fmt: skip
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "../src/**")
    assert res.code == 3 and "--measure: glob '../src/**' has a '.' or '..' segment" in res.err, res.err
    assert not (root / "bench" / "results").exists()


def test_result_new_refuses_a_measured_file_whose_name_is_not_utf8(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """A result file is UTF-8 JSON: a measured file named in other bytes cannot be in its fingerprint, and left out it
    would change unseen. It was a codec error ("surrogates not allowed"); now the file is named, exit 3, nothing
    written (as ``tracker ingest`` of a benchmark result says it)."""
    root = bench_repo(repo)
    (root / os.fsdecode(b"src/caf\xe9.py")).write_text("y = 2\n")
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "src/**")
    assert res.code == 3, res.out + res.err
    assert res.err == (
        "tracker: error: --measure: 1 matched file(s) whose name is not UTF-8 (src/caf\\xe9.py): a result file "
        "(UTF-8 JSON) cannot name it, and leaving it out of the fingerprint would let it change unseen; rename it, "
        "or narrow the globs\n"
    )
    assert not (root / "bench" / "results").exists()
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "src/app.py")
    assert res.code == 0, res.out + res.err


def test_result_new_warns_when_no_measured_file_is_under_the_gated_phases_paths(repo: Callable[..., Path],
                                                                                 cli: Callable[..., Any]) -> None:  # fmt: skip
    """A result measuring only the harness meets P1's gate, and editing src/ (P1's paths) never makes it stale."""
    root = bench_repo(repo)
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "bench/harness.py")
    assert res.code == 0 and res.out.startswith("wrote bench/results/"), res.out + res.err
    assert res.err == ("tracker: warning: phase 0001/P1 gates app.latency_ms, but no measured file is under its paths (src/**): "
                       "editing its code will never make this result stale\n")  # fmt: skip
    (root / "src/app.py").write_text("x = 2\n")
    assert gate_of(cli, root)[0] == "done"  # what the warning is about
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "src/**", "--measure", "bench/harness.py")
    assert (res.code, res.err) == (0, ""), res.out + res.err
    (root / "src/app.py").write_text("x = 3\n")
    assert gate_of(cli, root)[0] == "stale"


def test_result_new_writes_a_result_file_a_bench_gate_reads(repo, cli) -> None:
    gate = 'bench = "app.latency_ms"\nwhere = { size = 1000 }\nat_most = 5.0'
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", gate, paths='"src/**"')), "src/app.py": "x = 1\n"})
    r = cli(root, "result", "new", "latency", "--metric", "app.latency_ms", "--unit", "ms", "--direction", "lower",
            "--param", "size=1000", "--sample", "3.0,3.5", "--sample", "4", "--json")  # fmt: skip
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["cases"] == 1 and doc["measured"] == ["src/app.py"] and doc["path"].startswith("bench/results/")
    assert (root / doc["path"]).is_file()
    assert json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["status"] == "done"
    r = cli(root, "result", "new", "latency")
    assert r.code == 3 and r.err.startswith("tracker: error: no cases: give --cases FILE")
    cases = root / "cases.csv"
    cases.write_text("metric,unit,direction,size,sample\napp.latency_ms,ms,lower,1000,9\n")
    r = cli(root, "result", "new", "latency", "--cases", str(cases), "--out", str(root / "elsewhere"))
    assert r.code == 0 and r.out.startswith("wrote elsewhere/") and len(list((root / "elsewhere").glob("*.json"))) == 1


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


def run_new(root: Path, *args: Any, **kw: Any) -> tuple[int, str]:
    from tracker.commands.result import run_new as command

    out = io.StringIO()
    return command(root, *args, out=out, **kw), out.getvalue()


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**400), max_value=10**400), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.just("\ud800"), st.just(1e308),
)  # fmt: skip


VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


CASES = st.lists(
    st.fixed_dictionaries(
        {"metric": st.one_of(st.text(max_size=10), VALUES), "params": st.one_of(st.dictionaries(st.text(max_size=5), SCALARS, max_size=3), VALUES),
         "unit": st.sampled_from(["ms", "us", "x", "", 3]), "direction": st.sampled_from(["lower", "higher", "down", None]),
         "samples": st.one_of(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), SCALARS), max_size=6), VALUES)},
        optional={"info": VALUES, "stats": VALUES},
    ),
    max_size=3,
)  # fmt: skip


NEARLY_VALID = st.lists(
    st.fixed_dictionaries(
        {"metric": st.text(min_size=1, max_size=8), "params": st.dictionaries(st.text(max_size=5), SCALARS, max_size=3),
         "unit": st.sampled_from(["ms", "x", "items/s"]), "direction": st.sampled_from(["lower", "higher"]),
         "samples": st.lists(st.floats(min_value=-1e308, max_value=1e308) | st.integers(-(10**20), 10**20), min_size=1, max_size=8)},
        optional={"info": st.dictionaries(st.text(max_size=5), SCALARS, max_size=2)},
    ),
    max_size=3,
)  # fmt: skip


def hostile_cases_hold(root: Path, cases: list[dict[str, Any]]) -> None:
    from tracker.store.result_files import load_result, new_result, write_result

    try:
        doc = new_result(root, "b", cases, ["src/**"], command="c")
    except ValueError:
        return
    path = write_result(doc, root.parent / "out")
    try:
        assert load_result(path).benchmark == "b"
    finally:
        path.unlink()


CSV_TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.lists(st.sampled_from(["metric", "unit", "direction", "sample", "size", "info.x", "app.latency_ms", "ms", "lower",
                                       "1", "1e999", "-0", "nan", '"a,b"', "", "true", "9" * 5000, "\r", '"']), max_size=6), max_size=6)
    .map(lambda rows: "\n".join(",".join(r) for r in rows)),
)  # fmt: skip


def test_result_new_from_csv_json_and_flags_meets_the_gate_with_typed_params(
    app: Path, cli: Callable[..., Any]
) -> None:
    csv_file = app.parent / "m.csv"
    csv_file.write_text(
        "metric,unit,direction,size,info.seed,sample\n"
        + "".join(f"app.latency_ms,ms,lower,{size},7,{value}\n" for size in (10, 1000) for value in (40.0, 41.0, 42.0))
    )
    code, out = run_new(app, "latency", str(csv_file))  # measured files: the paths of the phase gating app.latency_ms
    assert code == 0 and out.startswith("wrote bench/results/2") and ": 2 case(s), 1 measured file(s), " in out, out
    written = json.loads(next((app / "bench/results").glob("*.json")).read_text())
    assert [c["params"] for c in written["cases"]] == [
        {"size": 10},
        {"size": 1000},
    ]  # integers: `where = { size = 1000 }` matches
    assert written["cases"][0]["info"] == {"seed": 7} and written["cases"][0]["samples"] == [40.0, 41.0, 42.0]
    assert statuses(cli, app)[0][:2] == ("done", True)

    json_file = app.parent / "m.json"
    json_file.write_text(json.dumps({"cases": [latency([80.0, 81.0, 82.0])]}))
    assert run_new(app, "latency", str(json_file), measure=["src/app.py"])[0] == 0
    assert statuses(cli, app)[0][:2] == ("regressed", False)

    code, out = run_new(app, "latency", metric="app.latency_ms", unit="ms", direction="lower", params=["size=1000"],
                        samples=["30", "31,32"], gpu="NVIDIA H200", as_json=True)  # fmt: skip
    summary = json.loads(out)
    assert code == 0 and summary["cases"] == 1 and summary["measured"] == ["src/app.py"] and summary["dirty"] is False
    assert statuses(cli, app)[0][:2] == ("done", True)


@pytest.mark.parametrize(
    ("content", "kw", "error", "said"),
    [
        (None, {}, "UsageError", "no cases: give --cases FILE"),
        ("[]", {"metric": "m"}, "UsageError", "--cases or --metric/--unit/--direction/--param/--sample, not both"),
        (
            None,
            {"metric": "app.latency_ms", "unit": "ms", "direction": "lower", "params": ["size"], "samples": ["1"]},
            "UsageError",
            "--param 'size': expected KEY=VALUE",
        ),
        (
            None,
            {"metric": "app.latency_ms", "unit": "ms", "direction": "lower", "samples": ["fast"]},
            "UsageError",
            "--sample 'fast': not a number",
        ),
        (None, {"metric": "app.latency_ms", "unit": "ms", "direction": "lower"}, "UsageError", "--sample is needed"),
        (
            None,
            {"metric": "app.latency_ms", "unit": "ms", "direction": "down", "samples": ["1"]},
            "UsageError",
            "cases[0].direction: ",
        ),
        (
            "metric,unit,sample\napp.latency_ms,ms,1\n",
            {},
            "FileError",
            "cases.txt:1: the header names no direction column",
        ),
        (
            "metric,unit,direction,sample\napp.latency_ms,ms,lower,fast\n",
            {},
            "FileError",
            "cases.txt:2: sample 'fast' is not a number",
        ),
        (
            "metric,unit,direction,sample\napp.latency_ms,ms,lower\n",
            {},
            "FileError",
            "cases.txt:2: 3 values for 4 columns",
        ),
        (
            '[{"metric": "app.latency_ms", "params": {}, "unit": "ms", "direction": "lower", "samples": [NaN]}]',
            {},
            "FileError",
            "cases.txt: ",
        ),
        (
            '[{"metric": "app.latency_ms", "params": {}, "unit": "ms", "direction": "lower", "samples": [-1]}]',
            {},
            "FileError",
            "cases.txt: cases[0]: samples[0] is -1.0 ms: a time must be > 0",
        ),
        ('{"cases": 3}', {}, "FileError", "cases.txt: expected a JSON list of cases"),
        ("[" * 100000, {}, "FileError", "cases.txt: "),
        (
            '[{"metric": "other.metric", "params": {}, "unit": "ms", "direction": "lower", "samples": [1]}]',
            {},
            "UsageError",
            "--measure: name the files the benchmark measured",
        ),
    ],
)
def test_result_new_refuses_bad_input_with_a_clear_message_and_writes_nothing(
    app: Path, content: str | None, kw: dict[str, Any], error: str, said: str
) -> None:
    from tracker import errors

    cases = None
    if content is not None:
        cases = app.parent / "cases.txt"
        cases.write_text(content)
    with pytest.raises(getattr(errors, error)) as info:
        run_new(app, "latency", None if cases is None else str(cases), **kw)
    assert said in str(info.value)
    assert not (app / "bench/results").exists()


def test_result_new_reads_no_fifo(app: Path) -> None:
    from tracker.errors import FileError

    fifo = app.parent / "cases.fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match=re.escape("cases.fifo: ")):
        run_new(app, "latency", str(fifo))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=CASES | NEARLY_VALID)
def test_property_the_writer_returns_valid_documents_or_says_why(app: Path, cases: list[dict[str, Any]]) -> None:
    hostile_cases_hold(app, cases)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=CASES | NEARLY_VALID)
def test_property_the_writer_returns_valid_documents_or_says_why_deep(app: Path, cases: list[dict[str, Any]]) -> None:
    hostile_cases_hold(app, cases)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=CSV_TEXT)
def test_property_a_cases_file_is_cases_or_a_file_error(tmp_path: Path, text: str) -> None:
    from tracker.commands.result import read_cases
    from tracker.errors import FileError

    path = tmp_path / "cases.csv"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        cases = read_cases(str(path))
    except FileError as err:
        assert str(err).startswith(str(path))
        return
    assert isinstance(cases, list)
