"""Generated results tables in docs: block validation at its line, the pure render (golden), the newest-file rule,
hostile blocks and hostile results, and `tracker update` / `update --check` / `check` on real repositories."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from resultfiles import case, result
from tracker_testutil import git

from tracker.core.model import ResultCase, ResultRun
from tracker.plans.regions import checksum
from tracker.report.doc_tables import DocTableError, TableSpec, build, cell_text, doc_regions, markdown, parse_tables

# --- pure: blocks and render --------------------------------------------------------------------------------------


def run(
    cases: list[ResultCase],
    *,
    path: str = "bench/results/a.json",
    time: str = "2026-11-29T11:02:03",
    benchmark: str = "verify",
    gpu: str | None = "NVIDIA H200",
    host: str = "gpu-box",
    commit: str | None = "3f2a91c" + "0" * 33,
    dirty: bool | None = False,
) -> ResultRun:
    when = datetime.fromisoformat(time).replace(tzinfo=UTC)
    return ResultRun(path, "0" * 64, benchmark, when, host, gpu, commit, dirty, {}, tuple(cases))


def rc(metric: str, samples: list[float], unit: str = "us", **params: Any) -> ResultCase:
    return ResultCase(metric, params, unit, "lower", tuple(samples))


KERNEL = [
    rc("t", [10.0, 12.0, 11.0], impl="cuda", ctx=100, b=1),
    rc("t", [20.0, 20.0], impl="triton", ctx=100, b=1),
    rc("t", [30.0], impl="cuda", ctx=100, b=4),
    rc("t", [5.0], impl="cuda", ctx=50, b=1),
    rc("f", [0.25, 0.5, 0.125], unit="1", impl="cuda", ctx=100, b=1),
]


def spec_of(toml: str, path: str = "doc.md") -> TableSpec:
    specs, problems = parse_tables(path, f"# Doc\n\n```results\n{toml}\n```\n")
    assert problems == [] and len(specs) == 1
    return specs[0]


GOLDEN_BLOCK = """benchmark = "verify"
metric = "t"
rows = ["ctx", "b"]
columns = "impl"
values = { ctx = [100, 50] }
labels = { b = "B", triton = "Triton <3" }
second = { metric = "f", percent = true }"""


def test_golden_table_with_columns_labels_and_a_second_metric() -> None:
    body = markdown(build(spec_of(GOLDEN_BLOCK), [run(KERNEL)]))
    assert body == (
        "\n"
        "From `bench/results/a.json`: verify at commit 3f2a91c (clean) on gpu-box (NVIDIA H200), 2026-11-29T11:02:03Z. "
        "The median of `t` in us (1-3 samples a case); in parentheses, the median of `f` in percent.\n"
        "\n"
        "| ctx | B | cuda | Triton \\<3 |\n"
        "| --- | --- | --- | --- |\n"
        "| 100 | 1 | 11.0 (25.0%) | 20.0 |\n"
        "| 100 | 4 | 30.0 | - |\n"
        "| 50 | 1 | 5.00 | - |\n"
    )


def test_golden_table_without_columns_fixed_digits_and_another_stat() -> None:
    spec = spec_of(
        'benchmark = "verify"\nmetric = "t"\nwhere = { impl = "cuda" }\nrows = ["b", "ctx"]\nstat = "min"\ndigits = 2'
    )
    table = build(spec, [run(KERNEL, dirty=True, gpu=None, commit=None)])
    assert markdown(table) == (
        "\n"
        "From `bench/results/a.json`: verify at an unknown commit (dirty) on gpu-box, 2026-11-29T11:02:03Z. "
        "The min of `t` in us (1-3 samples a case).\n"
        "\n"
        "| b | ctx | t |\n"
        "| --- | --- | --- |\n"
        "| 1 | 100 | 10.00 |\n"
        "| 4 | 100 | 30.00 |\n"
        "| 1 | 50 | 5.00 |\n"
    )


def test_rows_keep_the_run_s_order_grouped_by_listed_values() -> None:
    cases = [rc("t", [1.0], s=s, ctx=c) for c in (9, 3) for s in ("z", "a", "m")]
    table = build(
        spec_of('benchmark = "verify"\nmetric = "t"\nrows = ["s", "ctx"]\nvalues = { ctx = [3, 9] }'), [run(cases)]
    )
    assert [row[:2] for row in table.rows] == [["z", "3"], ["a", "3"], ["m", "3"], ["z", "9"], ["a", "9"], ["m", "9"]]


def test_a_case_without_a_row_parameter_shows_an_empty_cell_and_strings_that_read_as_numbers_are_quoted() -> None:
    cases = [rc("t", [1.0], repo="own"), rc("t", [2.0], repo="history", n=10), rc("t", [3.0], repo="x", n="10")]
    table = build(spec_of('benchmark = "verify"\nmetric = "t"\nrows = ["repo", "n"]'), [run(cases)])
    assert [row[:2] for row in table.rows] == [["own", ""], ["history", "10"], ["x", '"10"']]


# --- the newest-file rule -----------------------------------------------------------------------------------------


def newest(spec: TableSpec, runs: list[ResultRun]) -> str | None:
    table = build(spec, runs)
    return None if table.run is None else table.run.path


def test_the_newest_run_holding_every_listed_value_is_shown() -> None:
    spec = spec_of(
        'benchmark = "verify"\nmetric = "t"\nrows = ["b", "ctx"]\ncolumns = "impl"\nvalues = { ctx = [50, 100] }'
    )
    whole = run(KERNEL, path="r/whole.json", time="2026-01-01T00:00:00")
    partial = run(KERNEL[:3], path="r/partial.json", time="2026-02-01T00:00:00")  # no ctx=50: a part of the cases
    other = run(KERNEL, path="r/other.json", time="2026-03-01T00:00:00", benchmark="speed")
    assert newest(spec, [whole, partial, other]) == "r/whole.json"
    later = whole._replace(path="r/later.json", time=partial.time)
    assert newest(spec, [whole, partial, later, other]) == "r/later.json"
    tie = whole._replace(path="r/a-tie.json", time=partial.time)  # same time: the path decides, as for bench gates
    assert newest(spec, [later, tie]) == "r/later.json" and newest(spec, [tie, later]) == "r/later.json"
    on_a100 = spec_of(
        'benchmark = "verify"\nmetric = "t"\nrows = ["b"]\nhardware = "a100"\nwhere = { ctx = 100, impl = "cuda" }'
    )
    assert newest(on_a100, [whole, later]) is None
    assert newest(on_a100, [whole, later._replace(gpu="NVIDIA A100-SXM4")]) == "r/later.json"


def test_no_run_or_an_invalid_result_file_says_so_instead_of_a_table() -> None:
    spec = spec_of(
        'benchmark = "verify"\nmetric = "t"\nrows = ["b"]\nwhere = { impl = "cuda" }\nvalues = { b = [1, 2] }'
    )
    assert markdown(build(spec, [run(KERNEL)])) == (
        "\n*No result file holds this table's cases yet* (benchmark `verify`, metric `t`, where `impl=cuda`, "
        "b in `1, 2`).\n"
    )
    body = markdown(build(spec, [run(KERNEL)], ["bench/results/x.json: malformed JSON <b>"]))
    assert (
        body
        == "\n*Not rendered*: invalid result file, fix or remove it: bench/results/x.json: malformed JSON \\<b\\>\n"
    )


def test_two_cases_in_one_cell_are_a_problem_at_the_block_s_line() -> None:
    spec = spec_of('benchmark = "verify"\nmetric = "t"\nrows = ["b"]\nwhere = { impl = "cuda" }')
    with pytest.raises(DocTableError) as err:
        doc_regions([spec], [run(KERNEL)])
    assert str(err.value) == (
        "doc.md:3: results block: two t cases of bench/results/a.json fall in one cell (impl=cuda ctx=50 b=1; "
        "impl=cuda ctx=100 b=1): add 'ctx' to rows, columns or where"
    )
    assert err.value.exit_code == 2


# --- validation at the key's line ---------------------------------------------------------------------------------

BASE = {"benchmark": '"verify"', "metric": '"t"', "rows": '["b"]'}


def block_with(**keys: str | None) -> str:
    merged = {**BASE, **keys}
    return "\n".join(f"{k} = {v}" for k, v in merged.items() if v is not None)


@pytest.mark.parametrize(
    "keys,line,message",
    [
        ({"benchmark": None}, 3, "missing required key 'benchmark'"),
        ({"benchmark": '""'}, 4, "benchmark: String should have at least 1 character"),
        ({"metric": "3"}, 5, "metric: Input should be a valid string"),
        ({"where": "{ ctx = nan }"}, 7, "where.ctx = nan: not a finite number (no result's parameter equals it)"),
        ({"where": "{ ctx = [1] }"}, 7, "where.ctx.str: Input should be a valid string"),
        ({"hardware": '""'}, 7, "hardware: String should have at least 1 character"),
        ({"rows": "[]"}, 6, "rows: List should have at least 1 item after validation, not 0"),
        ({"rows": '"b"'}, 6, "rows: Input should be a valid list"),
        ({"rows": '["b", "b"]'}, 6, "parameter 'b' is named twice in rows and columns"),
        ({"columns": '"b"'}, 7, "parameter 'b' is named twice in rows and columns"),
        ({"where": "{ b = 1 }"}, 6, "parameter 'b' is fixed by 'where': it cannot be laid out in rows or columns"),
        ({"values": "{ x = [1] }"}, 7, "values.x: 'x' is not a parameter of rows or columns"),
        ({"values": "{ b = [1, 1] }"}, 7, "values.b: 1 is listed twice"),
        ({"values": "{ b = [inf] }"}, 7, "values.b: inf is not a finite number (no parameter equals it)"),
        ({"values": "{ b = [] }"}, 7, "values.b: List should have at least 1 item after validation, not 0"),
        ({"labels": "{ b = 1 }"}, 7, "labels.b: Input should be a valid string"),
        ({"stat": '"max"'}, 7, "stat: Input should be 'median', 'min', 'mean' or 'p90'"),
        ({"digits": "7"}, 7, "digits: Input should be less than or equal to 6"),
        ({"digits": "1.5"}, 7, "digits: Input should be a valid integer"),
        ({"second": '{ metric = "t" }'}, 7, "second.metric: 't' is the table's own metric"),
        ({"second": '{ metric = "f", pct = true }'}, 7, "unknown key 'second.pct'"),
        ({"second": "{ percent = true }"}, 7, "missing required key 'second.metric'"),
        ({"colums": '"impl"'}, 7, "unknown key 'colums'"),
    ],
)
def test_every_key_s_problem_is_reported_at_its_line(keys: dict[str, str | None], line: int, message: str) -> None:
    specs, problems = parse_tables("docs/x.md", f"# X\n\n```results\n{block_with(**keys)}\n```\n")
    assert specs == [] and problems[0] == f"docs/x.md:{line}: results block: {message}"
    assert all(p.startswith(f"docs/x.md:{line}: results block: ") for p in problems)  # a union: one per member


@pytest.mark.parametrize(
    "body,expected",
    [
        ("benchmark = ", "docs/x.md:4: invalid TOML in results block: Invalid value"),
        ("a = " + "[" * 40 + "]" * 40, "docs/x.md:4: results block nests arrays or tables more than 32 levels deep"),
        ("a = " + "9" * 5000, "docs/x.md:4: invalid TOML in results block: Exceeds the limit (4300 digits)"),
    ],
)
def test_bad_toml_is_a_problem_at_its_line(body: str, expected: str) -> None:
    specs, problems = parse_tables("docs/x.md", f"# X\n\n```results\n{body}\n```\n")
    assert specs == [] and len(problems) == 1 and problems[0].startswith(expected)


def test_an_unclosed_block_and_blocks_in_code_lists_or_quotes() -> None:
    text = "```results\nbenchmark = 1\n"
    assert parse_tables("d.md", text) == ([], ["d.md:1: results block is not closed"])
    prose = "````md\n```results\nx = 1\n```\n````\n\n- ```results\n  x = 1\n  ```\n\n> ```results\n> x = 1\n> ```\n"
    assert parse_tables("d.md", prose) == ([], [])  # examples, never read


# --- hostile input ------------------------------------------------------------------------------------------------

MD = MarkdownIt("commonmark").enable("table")
TEXT = st.text(st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ["a|b", "x\ny", "<script>alert(1)</script>", "[l](javascript:x)", "`", "\\|", "&amp;", "*e*", "$x$", "\u202e", ""]
)
SCALAR = (
    TEXT
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
)


def assert_inert_table(body: str, columns: int, rows: int) -> None:
    """The body parses as a caption paragraph and one table of ``columns`` x ``rows``; nothing of the data became
    HTML, a link or an image."""
    tokens = MD.parse(body)
    kinds = [t.type for t in tokens]
    assert kinds.count("table_open") == 1 and "html_block" not in kinds
    inline = [c.type for t in tokens if t.children for c in t.children]
    assert not {"html_inline", "link_open", "image"} & set(inline)
    head = kinds.index("thead_open")
    header = kinds[head : kinds.index("thead_close")].count("th_open")
    body_rows = kinds.count("tr_open") - 1
    cells = kinds.count("td_open")
    assert (header, body_rows, cells) == (columns, rows, columns * rows)
    html = MD.render(body)
    assert "<script" not in html and "javascript:" not in html.replace("javascript:x)", "")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    params=st.lists(st.dictionaries(st.sampled_from(["r", "c", "x"]), SCALAR, min_size=2), min_size=1, max_size=6),
    samples=st.lists(
        st.floats(allow_nan=True, allow_infinity=True) | st.floats(min_value=1e300, max_value=1.7e308),
        min_size=1,
        max_size=50,
    ),
    host=TEXT,
    path=TEXT,
    label=TEXT,
)
def test_hostile_params_and_values_give_an_inert_table_or_a_problem(
    params: list[dict[str, Any]], samples: list[float], host: str, path: str, label: str
) -> None:
    cases = [rc("t", samples, unit="u|<i>", **p) for p in params]
    runs = [run(cases, host=host, path=path or "p", gpu=label)]
    spec = spec_of('benchmark = "verify"\nmetric = "t"\nrows = ["r"]\ncolumns = "c"')._replace(labels={"r": label})
    try:
        table = build(spec, runs)
    except DocTableError as err:
        assert "fall in one cell" in str(err)
        return
    if table.run is None:  # no case has the two parameters of the layout's metric
        return
    body = markdown(table)
    assert "\r" not in body and all(line.isprintable() for line in body.split("\n"))
    assert_inert_table(body.split("\n", 3)[3], len(table.header), len(table.rows))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_cell_text_is_one_cell_of_literal_text(text: str) -> None:
    table = f"| a |\n| --- |\n| {cell_text(text)} |\n"
    tokens = MD.parse(table)
    assert [t.type for t in tokens].count("td_open") == 1
    inline = next(t for t in tokens if t.type == "inline" and t.map and t.map[0] == 2)
    assert [c.type for c in inline.children or []] in ([], ["text"])


KEYS = st.sampled_from(["benchmark", "metric", "where", "hardware", "rows", "columns", "values", "labels", "stat",
                        "digits", "second", "second.metric", "x", "rows.a"])  # fmt: skip
TOML_VALUE = st.recursive(
    st.sampled_from(['"verify"', '"t"', "1", "-0", "nan", "inf", "1e999", "9" * 4400, "true", '"\\u202e<b>|"', "'a'"])
    | st.builds(json.dumps, st.text(max_size=10)),
    lambda inner: (
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
        | st.dictionaries(st.sampled_from(["b", "metric", "percent", "ctx"]), inner, max_size=3).map(
            lambda d: "{ " + ", ".join(f"{k} = {v}" for k, v in d.items()) + " }"
        )
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.tuples(KEYS, TOML_VALUE), max_size=8), depth=st.integers(0, 60), junk=TEXT)
def test_hostile_blocks_give_specs_or_located_problems_never_a_traceback(
    lines: list[tuple[str, str]], depth: int, junk: str
) -> None:
    toml = "\n".join(f"{k} = {v}" for k, v in lines)
    toml += f"\nz = {'[' * depth}{']' * depth}" if depth else ""
    toml += f"\n{junk}".replace("```", "")
    specs, problems = parse_tables("d.md", f"```results\n{toml}\n```\n")
    assert bool(specs) != bool(problems)
    assert all(p.startswith("d.md:") and p.split(":")[1].isdigit() for p in problems)
    if specs:
        body = markdown(build(specs[0], [run(KERNEL)]))
        assert "\n\n" in body or body.startswith("\n*")


# --- the CLI on real repositories ---------------------------------------------------------------------------------

PYPROJECT = '[project]\nname = "x"\n\n[tool.tracker]\ndocs = ["README.md", "docs/bench.md"]\n'
BLOCK = '```results\nbenchmark = "verify"\nmetric = "verify_attn.time_us"\nrows = ["ctx"]\ncolumns = "impl"\n```\n'
README = "# X\r\n\r\nIntro\r\n\r\n" + BLOCK.replace("\n", "\r\n") + "Tail with no newline"
DOC = "\ufeff# Bench\n\n" + BLOCK + "<img src=x.png>\n"


def result_json(samples: float, time: str = "2026-11-29T11:02:03Z", **kw: Any) -> str:
    cases = [
        case("verify_attn.time_us", {"impl": impl, "ctx": ctx}, [samples * k, samples * k + 1])
        for impl, k in (("cuda", 1), ("triton", 10))
        for ctx in (1000, 2000)
    ]
    return json.dumps(result(cases, time=time, **kw))


@pytest.fixture
def docs_repo(repo: Any) -> Path:
    root: Path = repo({"pyproject.toml": PYPROJECT, "README.md": README, "docs/bench.md": DOC})
    head = git(root, "rev-parse", "HEAD").strip()
    (root / "bench/results").mkdir(parents=True)
    (root / "bench/results/r1.json").write_text(result_json(10.0, commit=head))
    return root


def text(path: Path) -> str:
    """A file's text exactly (``read_text`` would turn CRLF into LF)."""
    return path.read_bytes().decode("utf-8")


def test_update_writes_the_tables_keeping_every_byte_around_them(docs_repo: Path, cli: Any) -> None:
    res = cli(docs_repo, "update")
    assert (res.code, res.out) == (0, "updated 0 plan file(s)\nupdated 2 doc(s): README.md, docs/bench.md\n"), res.err
    readme, doc = text(docs_repo / "README.md"), text(docs_repo / "docs/bench.md")
    body = (
        f"\nFrom `bench/results/r1.json`: verify at commit {git(docs_repo, 'rev-parse', 'HEAD')[:7]} (clean) on gpu-box (NVIDIA H200), 2026-11-29T11:02:03Z."
        " The median of `verify_attn.time_us` in us (2 samples a case).\n\n| ctx | cuda | triton |\n| --- | --- | --- |\n"
        "| 1000 | 10.5 | 100 |\n| 2000 | 10.5 | 100 |\n"
    )
    region = f"<!-- tracker:begin results:1 -->\n{body}\n<!-- tracker:end results:1 sum={checksum(body)} -->\n"
    assert readme == README.replace("Tail", region.replace("\n", "\r\n") + "\r\nTail")
    assert doc == DOC.replace("<img", region + "\n<img")
    assert cli(docs_repo, "update").out == "updated 0 plan file(s)\nupdated 0 doc(s)\n"
    assert cli(docs_repo, "update", "--check").out == "plan files and docs are up to date\n"
    assert cli(docs_repo, "check").out == "tracker check: no regressions, plan files and docs up to date\n"


def test_a_newer_run_makes_check_and_update_check_fail_with_a_diff(docs_repo: Path, cli: Any) -> None:
    cli(docs_repo, "update")
    head = git(docs_repo, "rev-parse", "HEAD").strip()
    (docs_repo / "bench/results/r2.json").write_text(result_json(20.0, time="2026-11-30T00:00:00Z", commit=head))
    older = result_json(30.0, time="2026-11-28T00:00:00Z", commit=head)
    (docs_repo / "bench/results/r0.json").write_text(older)
    res = cli(docs_repo, "update", "--check")
    assert res.code == 1 and "\n-| 1000 | 10.5 | 100 |\r\n" in res.out and "\n+| 1000 | 20.5 | 200 |\n" in res.out
    assert res.out.endswith("2 doc(s) out of date: README.md, docs/bench.md (run `tracker update`)\n")
    check = cli(docs_repo, "check", "--json")
    problems = json.loads(check.out)["problems"]
    assert check.code == 1 and [(p["kind"], p["path"]) for p in problems] == [
        ("out-of-date", "README.md"),
        ("out-of-date", "docs/bench.md"),
    ]
    assert cli(docs_repo, "update", "--diff").out.count("+| 2000 | 20.5 | 200 |") == 2
    assert "`bench/results/r2.json`" in (docs_repo / "README.md").read_text()
    assert cli(docs_repo, "check").code == 0


def test_a_hand_edited_table_is_refused_until_forced(docs_repo: Path, cli: Any) -> None:
    cli(docs_repo, "update")
    path = docs_repo / "docs/bench.md"
    path.write_text(path.read_text().replace("| 1000 | 10.5 |", "| 1000 | 9.0 |"))
    edited = path.read_bytes()
    res = cli(docs_repo, "update")
    assert res.code == 4 and "docs/bench.md:9: generated region 'results:1' was edited by hand" in res.err
    assert path.read_bytes() == edited
    check = cli(docs_repo, "check")
    assert check.code == 1 and "docs/bench.md:9: generated region 'results:1' was edited by hand" in check.out
    assert cli(docs_repo, "update", "--check").code == 4
    assert cli(docs_repo, "update", "--force").code == 0 and "| 1000 | 10.5 |" in path.read_text()


def test_plan_arguments_leave_the_docs_alone(repo: Any, cli: Any) -> None:
    from tracker_testutil import phase, plan_text

    root = repo({"pyproject.toml": PYPROJECT, "README.md": README, "docs/bench.md": DOC,
                 "plans/0001-demo.md": plan_text(phases=phase("P1", 'manual = "ok"'))})  # fmt: skip
    res = cli(root, "update", "0001")
    assert res.out == "updated 1 plan file(s): plans/0001-demo.md\n" and text(root / "README.md") == README


def test_an_invalid_block_is_exit_2_at_its_line_and_nothing_is_written(docs_repo: Path, cli: Any) -> None:
    (docs_repo / "docs/bench.md").write_text(DOC.replace('rows = ["ctx"]', 'rows = "ctx"'))
    res = cli(docs_repo, "update")
    assert res.code == 2 and "docs/bench.md:6: results block: rows: Input should be a valid list" in res.err
    assert text(docs_repo / "README.md") == README and cli(docs_repo, "check").code == 2


@pytest.mark.parametrize(
    "config,message",
    [
        ('[tool.tracker]\ndocs = "README.md"\n', "pyproject.toml:2: [tool.tracker] docs: expected a list of paths"),
        ('[tool.tracker]\ndocs = ["../x.md"]\n', "pyproject.toml:2: [tool.tracker] docs: '../x.md' has an empty, '.'"),
        ('[tool.tracker]\ndocs = ["/etc/x.md"]\n', "'/etc/x.md' is not a relative POSIX path"),
        ('[tool.tracker]\ndocs = ["a.md", "a.md"]\n', "'a.md' is listed twice"),
        ('[tool.tracker]\ndocs = ["plans/0001-x.md"]\n', "'plans/0001-x.md' is a plan file"),
        ('[tool.tracker]\ndoc = ["a.md"]\n', "pyproject.toml:1: [tool.tracker]: unknown key 'doc' (known: docs)"),
        ("[tool]\ntracker = 3\n", "pyproject.toml:1: [tool.tracker] must be a table"),
        ("[tool.tracker\n", "pyproject.toml:1: invalid TOML: "),
    ],
)
def test_a_bad_docs_setting_is_a_usage_error(repo: Any, cli: Any, config: str, message: str) -> None:
    root = repo({"pyproject.toml": config, "README.md": README})
    for args in (["update"], ["update", "--check"], ["check"]):
        res = cli(root, *args)
        assert res.code == 3 and message in res.err, (args, res.err)
    assert text(root / "README.md") == README


def test_no_tool_tracker_table_means_no_docs(repo: Any, cli: Any) -> None:
    root = repo({"pyproject.toml": '[project]\nname = "x"\n', "README.md": README})
    assert cli(root, "update").out == "updated 0 plan file(s)\n" and text(root / "README.md") == README


@pytest.mark.parametrize("kind", ["symlink out", "fifo", "directory", "missing"])
def test_a_doc_that_is_not_a_regular_file_inside_the_repository_is_refused(
    docs_repo: Path, cli: Any, tmp_path: Path, kind: str
) -> None:
    doc = docs_repo / "docs/bench.md"
    doc.unlink()
    outside = tmp_path / "outside.md"
    outside.write_text(DOC)
    if kind == "symlink out":
        doc.symlink_to(outside)
        reason = f"docs/bench.md: refused: it resolves to {outside}, outside the repository"
    elif kind == "fifo":
        os.mkfifo(doc)
        reason = "docs/bench.md: refused: not a regular file (a FIFO)"
    elif kind == "directory":
        doc.mkdir()
        reason = "docs/bench.md: refused: not a regular file (a directory)"
    else:
        reason = "docs/bench.md: cannot read: No such file or directory"
    for args in (["update"], ["update", "--check"], ["check"]):
        res = cli(docs_repo, *args)
        assert res.code == 8 and reason in res.err, (args, res.err)
    assert text(docs_repo / "README.md") == README and outside.read_text() == DOC
    git(docs_repo, "status", "--short")  # the repository is still one


def test_a_doc_linked_inside_the_repository_is_written_through_its_link(docs_repo: Path, cli: Any) -> None:
    (docs_repo / "docs/bench.md").rename(docs_repo / "docs/real.md")
    (docs_repo / "docs/bench.md").symlink_to("real.md")
    assert cli(docs_repo, "update").code == 0
    assert (docs_repo / "docs/bench.md").is_symlink() and "tracker:begin results:1" in (
        docs_repo / "docs/real.md"
    ).read_text()


def test_a_warm_check_reads_no_result_file_and_a_new_one_is_still_seen(
    docs_repo: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tracker.store.bench_evaluator

    monkeypatch.setattr("tracker.store.statusindex.SETTLED_NS", -(10**18))  # every file counts as settled at once
    assert cli(docs_repo, "update").code == 0 and cli(docs_repo, "update", "--check").code == 0
    real = tracker.store.bench_evaluator.RepoResults

    def unread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a warm check read the result files")

    monkeypatch.setattr(tracker.store.bench_evaluator, "RepoResults", unread)
    assert cli(docs_repo, "update", "--check").out == "plan files and docs are up to date\n"
    monkeypatch.setattr(tracker.store.bench_evaluator, "RepoResults", real)
    head = git(docs_repo, "rev-parse", "HEAD").strip()
    (docs_repo / "bench/results/r2.json").write_text(result_json(20.0, time="2026-11-30T00:00:00Z", commit=head))
    assert cli(docs_repo, "update", "--check").code == 1 and cli(docs_repo, "check").code == 1
