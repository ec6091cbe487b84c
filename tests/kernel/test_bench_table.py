"""bench/table.py: the docs' tables from a result file, every number checked against the file's samples."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import table

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
RUN = RESULTS / "verify-20261129T172522Z-vm.json"  # b2f235d, v26, all four implementations
OLDER = RESULTS / "verify-20261129T170635Z-vm.json"  # 141178f


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def middle(values: list[float]) -> float:
    """The median, written out (not statistics.median, which the module uses)."""
    ordered = sorted(values)
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def case_samples(doc: dict[str, Any], metric: str, **params: Any) -> list[float]:
    found = [
        c["samples"]
        for c in doc["cases"]
        if c["metric"] == metric and all(c["params"].get(k) == v for k, v in params.items())
    ]
    assert len(found) == 1, (metric, params)
    return found[0]


def expected_cell(doc: dict[str, Any], impl: str, batch: int, heads: int, nodes: int, ctx: int) -> tuple[float, float]:
    """(median us, fraction of floor) from the raw samples and the cost model of bench/README.md."""
    copy_tbps = middle(case_samples(doc, "ceiling.copy_tbps"))
    mma_tflops = middle(case_samples(doc, "ceiling.mma_tflops"))
    rows = batch * (ctx + nodes)
    floor_us = (
        max(rows * (1152 + 4) / (copy_tbps * 1e12), 2 * heads * nodes * rows * (576 + 512) / (mma_tflops * 1e12)) * 1e6
    )
    median = middle(case_samples(doc, "verify_attn.time_us", impl=impl, batch=batch, heads=heads, nodes=nodes, ctx=ctx))
    return median, floor_us / median


def rows_of(text: str) -> list[list[str]]:
    """The Markdown table rows (header and body) of the tool's output, cells stripped."""
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = table.main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_cells_equal_the_samples(capsys: pytest.CaptureFixture[str]) -> None:
    doc = load(RUN)
    code, out, err = run_main(capsys, str(RUN))
    assert code == 0 and err == ""
    header, *body = rows_of(out)
    assert header == [
        "B,H,T",
        "cuda, L=5.7k",
        "cuda, L=23k",
        "cuda, L=91k",
        "FlashInfer FA2 5.7k / 23k / 91k",
        "triton at 91k",
        "plain torch at 91k",
    ]
    rows = {row[0]: row for row in body}
    assert list(rows) == ["1,8,16", "1,8,64", "1,16,32", "4,8,16", "1,64,8"]  # the bench's case order
    for (b, h, t), column, ctx in (((1, 8, 16), 1, 5700), ((1, 8, 64), 3, 91000), ((4, 8, 16), 2, 23000)):
        median, fraction = expected_cell(doc, "cuda", b, h, t, ctx)
        assert rows[f"{b},{h},{t}"][column] == f"{median:,.1f} ({100 * fraction:.1f}%)"
    fa2 = [
        middle(case_samples(doc, "verify_attn.time_us", impl="flashinfer", batch=1, heads=64, nodes=8, ctx=c))
        for c in (5700, 23000, 91000)
    ]
    assert rows["1,64,8"][4] == " / ".join(f"{v:.1f}" for v in fa2)
    triton = middle(case_samples(doc, "verify_attn.time_us", impl="triton", batch=1, heads=16, nodes=32, ctx=91000))
    assert rows["1,16,32"][5] == f"{triton:,.0f}"
    torch_us = middle(case_samples(doc, "verify_attn.time_us", impl="torch", batch=4, heads=8, nodes=16, ctx=91000))
    assert rows["4,8,16"][6] == f"{torch_us:,.0f}"


def test_header_names_machine_commit_version_file_and_ceilings(capsys: pytest.CaptureFixture[str]) -> None:
    doc = load(RUN)
    _, out, _ = run_main(capsys, str(RUN))
    first = out.splitlines()[0]
    prov = doc["provenance"]
    assert first.startswith(
        f"{prov['gpu']}, commit {prov['commit'][:7]} (clean), kernel v26, "
        "`bench/results/verify-20261129T172522Z-vm.json` (2026-11-29T17:25:22Z)."
    )
    copy_tbps = middle(case_samples(doc, "ceiling.copy_tbps"))
    mma_tflops = middle(case_samples(doc, "ceiling.mma_tflops"))
    assert f"max(bytes / {copy_tbps:.2f} TB/s, FLOPs / {mma_tflops:.0f} TFLOP/s)" in first
    counts = [len(c["samples"]) for c in doc["cases"] if c["metric"] == "verify_attn.time_us"]
    assert f"Median µs of {min(counts)}-{max(counts)} timed runs a case" in first
    assert "FlashInfer FA2 runs on the prefix only" in first and "CUDA graph" in first


def test_full_layout_has_every_implementation_and_the_split_count(capsys: pytest.CaptureFixture[str]) -> None:
    doc = load(RUN)
    code, out, _ = run_main(capsys, str(RUN), "--layout", "full")
    assert code == 0
    header, *body = rows_of(out)
    assert header == ["B,H,T", "L", "cuda (splits)", "FlashInfer FA2 (prefix only)", "triton", "plain torch"]
    assert len(body) == 15
    row = next(r for r in body if r[:2] == ["1,8,16", "23000"])
    median, fraction = expected_cell(doc, "cuda", 1, 8, 16, 23000)
    splits = next(
        c["info"]["cuda_splits"]
        for c in doc["cases"]
        if c["metric"] == "verify_attn.time_us"
        and c["params"] == {"impl": "cuda", "ctx": 23000, "heads": 8, "nodes": 16, "batch": 1, "graph": True}
    )
    assert row[2] == f"{median:,.1f} ({100 * fraction:.1f}%) ({splits})"
    median, fraction = expected_cell(doc, "triton", 1, 8, 16, 23000)
    assert row[4] == f"{median:,.1f} ({100 * fraction:.1f}%)"


def test_against_gives_the_per_case_change(capsys: pytest.CaptureFixture[str]) -> None:
    doc, older = load(RUN), load(OLDER)
    code, out, _ = run_main(capsys, str(RUN), "--against", str(OLDER))
    assert code == 0
    header, *body = rows_of(out)
    assert header[:3] == ["B,H,T", "L", "cuda"]
    changes = {}
    for shape, ctx in (((1, 8, 64), 91000), ((1, 8, 16), 5700)):
        here = middle(
            case_samples(
                doc, "verify_attn.time_us", impl="cuda", batch=shape[0], heads=shape[1], nodes=shape[2], ctx=ctx
            )
        )
        there = middle(
            case_samples(
                older, "verify_attn.time_us", impl="cuda", batch=shape[0], heads=shape[1], nodes=shape[2], ctx=ctx
            )
        )
        changes[shape, ctx] = 100 * (here / there - 1)
        row = next(r for r in body if r[:2] == [",".join(map(str, shape)), str(ctx)])
        assert row[2] == f"{here:,.1f} / {there:,.1f} ({changes[shape, ctx]:+.2f}%)"
    every = [
        100 * (middle(c["samples"]) / middle(case_samples(older, c["metric"], **c["params"])) - 1)
        for c in doc["cases"]
        if c["metric"] == "verify_attn.time_us" and c["params"]["impl"] == "cuda"
    ]
    summary = next(line for line in out.splitlines() if line.startswith("- cuda: "))
    assert summary.startswith(f"- cuda: {min(every):+.2f}% to {max(every):+.2f}% over 15 cases")


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_default_is_the_newest_by_recorded_time_not_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    early, late = load(OLDER), load(RUN)
    write(tmp_path / "verify-b.json", late)
    write(tmp_path / "verify-z.json", early)  # sorts last by name, recorded first
    other = {
        "schema": "tracker-bench-result",
        "version": 1,
        "benchmark": "speed",
        "provenance": {"time": "2030-01-01T00:00:00Z"},
    }
    write(tmp_path / "speed-zz.json", other)  # another benchmark, newer: passed over
    assert table.newest_result(tmp_path) == tmp_path / "verify-b.json"
    code, out, _ = run_main(capsys, "--results", str(tmp_path))
    assert code == 0 and "verify-b.json" in out.splitlines()[0]
    late["provenance"]["time"] = early["provenance"]["time"]  # a tie: the file name decides
    write(tmp_path / "verify-b.json", late)
    assert table.newest_result(tmp_path) == tmp_path / "verify-z.json"
    late["provenance"]["time"] = "2026-11-29T18:00:00+01:00"  # 17:00Z: older than verify-z's 17:06Z
    write(tmp_path / "verify-b.json", late)
    assert table.newest_result(tmp_path) == tmp_path / "verify-z.json"


def test_the_default_directory_gives_its_newest_file(capsys: pytest.CaptureFixture[str]) -> None:
    runs = [p for p in RESULTS.glob("*.json") if load(p).get("benchmark") == "verify"]  # either naming rule
    times = {p: load(p)["provenance"]["time"] for p in runs}
    newest = max(times, key=lambda p: (times[p], p.name))
    code, out, _ = run_main(capsys)
    assert code == 0 and f"`bench/results/{newest.name}`" in out.splitlines()[0]


def test_an_unreadable_file_in_the_directory_stops_the_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(RUN, tmp_path / "verify-a.json")
    (tmp_path / "verify-b.json").write_text('{"schema": "tracker-bench-result", "version": 1,')
    code, out, err = run_main(capsys, "--results", str(tmp_path))
    assert code == 1 and out == ""
    assert err == (
        f"bench.table: {tmp_path / 'verify-b.json'}:1:49: malformed JSON: "
        "Expecting property name enclosed in double quotes\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_main(capsys, "--results", str(empty)) == (1, "", f"bench.table: {empty}: no verify result files\n")


def mutated(tmp_path: Path, change: Any) -> Path:
    doc = load(RUN)
    change(doc)
    return write(tmp_path / "bad.json", doc)


def set_sample(doc: dict[str, Any], value: Any) -> None:
    doc["cases"][4]["samples"][3] = value


def double_fractions(doc: dict[str, Any]) -> None:
    case = next(c for c in doc["cases"] if c["metric"] == "verify_attn.floor_fraction")
    case["samples"][0] *= 2


@pytest.mark.parametrize(
    "change,reason",
    [
        (lambda d: set_sample(d, -1.0), "cases[4].samples[3] is -1.0: expected a finite number > 0"),
        (lambda d: set_sample(d, "fast"), 'cases[4].samples[3]: expected an integer or a number, got "fast"'),
        (lambda d: set_sample(d, True), "cases[4].samples[3]: expected an integer or a number, got true"),
        (lambda d: d["cases"][4]["params"].update(ctx=True), "cases[4].params.ctx: expected an integer, got true"),
        (lambda d: d["cases"][4].update(samples=[]), "cases[4].samples: empty"),
        (
            lambda d: d["provenance"].update(time="2026-11-29T17:25:22"),
            "provenance.time: '2026-11-29T17:25:22' has no time zone",
        ),
        (lambda d: d["provenance"].update(time="yesterday"), "provenance.time: not an ISO 8601 time: 'yesterday'"),
        (lambda d: d.update(benchmark="speed"), 'a "speed" result, not a "verify" one'),
        (lambda d: d.update(version=2), "not a tracker-bench-result version 1 file"),
        (
            lambda d: d.update(cases=[c for c in d["cases"] if c["metric"].startswith("ceiling")]),
            "no verify_attn.time_us cases",
        ),
        (
            lambda d: d["cases"].append(copy.deepcopy(d["cases"][4])),
            "cases[122]: a second verify_attn.time_us case for impl=triton batch=1 heads=8 nodes=16 ctx=5700",
        ),
        (double_fractions, "cases[3]: floor_fraction x time_us (cases[2]) is not one floor for every run"),
    ],
)
def test_a_bad_file_gives_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, reason: str
) -> None:
    path = mutated(tmp_path, change)
    assert run_main(capsys, str(path)) == (1, "", f"bench.table: {path}: {reason}\n")


def test_hostile_bytes_and_non_regular_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        "nan.json": b'{"a": NaN}',
        "dup.json": b'{"a": 1, "a": 2}',
        "latin.json": b'{"a": "\xe9"}',
        "list.json": b"[1, 2]",
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
    }
    reasons = {
        "nan.json": "malformed JSON: NaN is not a number a result file may hold",
        "dup.json": "malformed JSON: duplicate key 'a'",
        "latin.json": "not UTF-8: invalid continuation byte at byte 7",
        "list.json": "expected a JSON object at the top, got list",
        "deep.json": "malformed JSON: maximum recursion depth exceeded",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        code, out, err = run_main(capsys, str(tmp_path / name))
        assert (code, out) == (1, "") and err.startswith(f"bench.table: {tmp_path / name}: {reasons[name]}"), err
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # nobody writes: a blocking open would hang
    # Read by the tracker's one reader (tracker.base.fileio.read_regular): its messages.
    assert run_main(capsys, str(fifo)) == (1, "", f"bench.table: {fifo}: refused: not a regular file (a FIFO)\n")
    assert run_main(capsys, str(tmp_path)) == (
        1,
        "",
        f"bench.table: {tmp_path}: refused: not a regular file (a directory)\n",
    )
    missing = tmp_path / "none.json"
    assert run_main(capsys, str(missing)) == (
        1,
        "",
        f"bench.table: {missing}: cannot read: No such file or directory\n",
    )


def test_a_partial_run_shows_what_it_measured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def cuda_short_eager(doc: dict[str, Any]) -> None:
        doc["cases"] = [
            c
            for c in doc["cases"]
            if c["metric"].startswith("ceiling") or (c["params"].get("impl") == "cuda" and c["params"]["ctx"] == 5700)
        ]
        for c in doc["cases"]:
            if "graph" in c["params"]:
                c["params"]["graph"] = False

    code, out, _ = run_main(capsys, str(mutated(tmp_path, cuda_short_eager)))
    assert code == 0 and "`eager`: timed without a CUDA graph" in out and "FlashInfer" not in out
    header, *body = rows_of(out)
    assert header == ["B,H,T", "cuda, L=5.7k"] and len(body) == 5
    assert body[0][1].endswith("%) eager")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        table.main(["--layout", "wide"])
    assert exc.value.code == 2 and "invalid choice: 'wide'" in capsys.readouterr().err


def test_runs_as_a_module_without_importing_torch() -> None:
    code = (
        "import sys, runpy; sys.argv = ['bench.table', '--layout', 'full']; "
        "exit_code = None\ntry:\n    runpy.run_module('bench.table', run_name='__main__')\n"
        "except SystemExit as e:\n    exit_code = e.code\n"
        "assert exit_code == 0, exit_code\nassert 'torch' not in sys.modules, 'torch imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    # the table of whichever verify run is newest in bench/results: every shape of it, one row each
    newest = table.load_run(table.newest_result(ROOT / "bench" / "results"))
    assert proc.stdout == table.full_table(newest) + "\n"
    assert (
        proc.stdout.count("\n| ") == len({(s, c) for _, s, c in newest.cells}) + 1
    )  # separator, one row a shape and context


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
SMALL = {
    **load(RUN),
    "cases": [
        c
        for c in load(RUN)["cases"]  # the ceilings and 24 cases: fast to write and read
        if c["metric"].startswith("ceiling")
        or (c["params"]["ctx"] == 5700 and c["params"]["nodes"] in (16, 64) and c["params"]["heads"] == 8)
    ],
}
PATHS = [
    ("provenance", "time"),
    ("provenance", "commit"),
    ("provenance", "dirty"),
    ("provenance", "gpu"),
    ("provenance", "fingerprint"),
    ("provenance", "fingerprint", "files"),
    ("provenance",),
    ("cases",),
    ("cases", 0),
    ("cases", 1, "samples"),
    ("cases", 4, "params"),
    ("cases", 4, "info"),
    ("cases", 4, "params", "impl"),
    ("cases", 2, "params", "ctx"),
    ("cases", 5, "samples"),
    ("cases", 5, "samples", 0),
    ("cases", 7, "metric"),
    ("cases", 3, "params", "graph"),
    ("benchmark",),
]


def check_hostile(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], value: Any) -> None:
    """Any value at any of PATHS: a table (exit 0) or one line `path: reason` (exit 1), never a traceback."""
    doc = copy.deepcopy(SMALL)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    file = write(tmp_path / "h.json", doc)
    for args in (
        [str(file)],
        [str(file), "--layout", "full"],
        [str(RUN), "--against", str(file)],
        [str(file), "--against", str(OLDER)],
    ):
        code, out, err = run_main(capsys, *args)
        assert code in (0, 1)
        assert (out != "" and err == "") if code == 0 else (out == "" and err.count("\n") == 1 and ": " in err)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=JSON)
def test_any_value_anywhere_gives_a_table_or_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], value: Any
) -> None:
    check_hostile(tmp_path, capsys, path, value)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=JSON)
def test_any_value_anywhere_gives_a_table_or_one_line_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], value: Any
) -> None:
    check_hostile(tmp_path, capsys, path, value)


def test_against_a_run_of_other_contexts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    short = write(tmp_path / "short.json", SMALL)
    long_only = mutated(
        tmp_path,
        lambda d: d.update(
            cases=[c for c in d["cases"] if c["metric"].startswith("ceiling") or c["params"]["ctx"] == 91000]
        ),
    )
    assert run_main(capsys, str(short), "--against", str(long_only)) == (
        1,
        "",
        f"bench.table: {short}: no case in common with {long_only}\n",
    )
    code, out, _ = run_main(capsys, str(RUN), "--against", str(short))
    assert code == 0 and len(rows_of(out)) == 1 + 3  # the header and the three common shapes at 5.7k


@pytest.mark.parametrize("doc", ["kernel/README.md", "bench/README.md"])
def test_the_docs_tables_of_the_run_of_record_are_generated_by_the_tracker(doc: str) -> None:
    """No table of the run of record is pasted by hand: each is a `results` block of the verify benchmark whose region
    the tracker writes, and the doc holds what the tracker renders from the result files now (`tracker check` fails
    otherwise). `python -m bench.table` stays the developer's tool (its tests above)."""
    from tracker.plans.regions import region_spans
    from tracker.report.doc_files import declared_docs, pending_docs
    from tracker.report.doc_tables import parse_tables

    text = (ROOT / doc).read_text(encoding="utf-8")
    assert doc in declared_docs(ROOT), f"pyproject.toml's [tool.tracker] docs does not name {doc}"
    specs, problems = parse_tables(doc, text)
    assert problems == [] and specs and {s.benchmark for s in specs} == {"verify"}
    lines = text.splitlines()
    section = next(i for i, line in enumerate(lines) if line.lstrip("#").strip() == "The run of record")
    inside = {i for begin, end in region_spans(text, doc) for i in range(begin, end + 1)}
    pasted = [i + 1 for i, line in enumerate(lines) if i > section and line.startswith("|") and i not in inside]
    assert pasted == [], f"{doc}: table lines outside a generated region (pasted by hand?) at lines {pasted}"
    assert doc not in [d.path for d, _ in pending_docs(ROOT)], f"{doc}: its tables are out of date: run tracker update"
