"""Property tests of plan parsing over hostile input (issue 11): random and hostile TOML in plan and phase
blocks (deep nesting, huge numbers, wrong types, unknown keys, control characters), random Markdown around
the blocks, whole plan repositories through lint. parse_plan and lint never raise; every problem is
``path:line: message`` with a line inside the file; what validates is safe for status (globs, -m
expressions and test paths all valid) and survives the plan cache exactly."""

from __future__ import annotations

import io
import json
import math
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base.file_index import FileIndex
from tracker.base.globs import glob_problem
from tracker.base.selection import compile_marker
from tracker.commands import lint
from tracker.commands.new import toml_string
from tracker.core.model import GateVerdict, Plan, Store, TestGate
from tracker.plans.load import from_plain, to_plain
from tracker.plans.parse import MAX_TOML_DEPTH, _too_deep_line, parse_plan
from tracker.plans.schema import gate_path_problem

PATH = "plans/0001-x.md"
PROBLEM = re.compile(r"^(plans/[^:]+):(\d+): \S")

# --- strategies: TOML values, written by a small TOML writer -------------------------------------------------

KEYS = st.sampled_from(
    ["id", "title", "depends", "paths", "gate", "test", "marker", "manual", "bench", "where", "baseline", "at_least", "at_most",
     "stat", "min_samples", "hardware", "run", "confidence", "milestone", "x", "Ünï", "a.b", "", "1", "true"]
)  # fmt: skip
PLAUSIBLE = st.sampled_from(
    ["P1", "P2", "0001", "0001/P1", "0002/P9", "tests/t.py", "tests/t.py::test_a[../x]", "../x.py", "/abs.py", "~/t.py", "-p",
     "gpu", "a-b", "a and", "not (gpu or slow)", "gpu(x=1)", "*a*a*a*b", "src/**", "src/[ab", "**/*.py", "../**", "", " ",
     "median", "max", "x\x00y", "x\x7fy", "line\nbreak", "é\u2028", "```", "```plan", '"""', "'''", "[[gate]]", "#"]
)  # fmt: skip


class TooLongInt:
    """An integer literal of 4400 digits: more than Python converts (tomllib raises ValueError)."""

    def __repr__(self) -> str:
        return "TooLongInt()"


HUGE_INTS = st.sampled_from([2**63, -(2**63) - 1, 10**300, -(10**4299) + 1, TooLongInt()])
SCALARS = st.one_of(
    st.text(max_size=8),
    PLAUSIBLE,
    st.integers(),
    HUGE_INTS,
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
)


def toml_value(value: Any) -> str:
    """``value`` as a TOML value (inline tables for dicts)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, TooLongInt):
        return "1" + "0" * 4400
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_table(table: dict[str, Any], gates_as_headers: bool) -> str:
    """A block body: ``key = value`` lines, and the gates as ``[[gate]]`` tables when asked (and possible)."""
    gates = table.get("gate")
    headers = gates_as_headers and isinstance(gates, list) and gates and all(isinstance(g, dict) for g in gates)
    lines = [f"{toml_string(k)} = {toml_value(v)}" for k, v in table.items() if not (headers and k == "gate")]
    for gate in gates if headers else []:
        lines.append("[[gate]]")
        lines.extend(f"{toml_string(k)} = {toml_value(v)}" for k, v in gate.items())
    return "\n".join(lines) + "\n"


GOOD_GATE = st.one_of(
    st.fixed_dictionaries({"test": st.sampled_from(["tests/t.py", "tests/", "tests/t.py::test_a[1/..]", "../x.py", "-x", "/t.py"])},
                          optional={"marker": st.sampled_from(["gpu", "a-b", "not slow", "a and", "gpu(x=1)", " ", "(" * 60 + "a" + ")" * 60])}),
    st.fixed_dictionaries({"manual": st.text(min_size=1, max_size=10)}),
    st.fixed_dictionaries({"bench": st.sampled_from(["m.x", ""])},
                          optional={"at_least": st.floats(allow_nan=True), "at_most": st.floats(), "where": st.dictionaries(KEYS, SCALARS, max_size=3),
                                    "stat": st.sampled_from(["median", "p90", "max"]), "min_samples": st.integers(), "confidence": st.floats()}),
)  # fmt: skip
GLOBS = st.sampled_from(
    ["src/**", "**/*.py", "src/", "a/*.[ch]", "*a*a*a*a*b", "x/**/y?", "[!a]*", "src/[ab", "../x", "/abs", "a//b"]
)
HOSTILE_PHASE = st.fixed_dictionaries(
    {"id": st.one_of(st.sampled_from(["P1", "P2", "P3"]), SCALARS), "title": st.one_of(st.just("t"), SCALARS)},
    optional={
        "depends": st.one_of(
            st.lists(st.sampled_from(["P1", "P2", "P3", "0001/P1", "0002/P1", "bad dep"]), max_size=3), VALUES
        ),
        "paths": st.one_of(st.lists(PLAUSIBLE, max_size=3), VALUES),
        "gate": st.one_of(st.lists(st.one_of(GOOD_GATE, VALUES), max_size=3), VALUES),
        "extra": VALUES,
    },
)
MOSTLY_VALID_PHASE = st.fixed_dictionaries(
    {"id": st.sampled_from(["P1", "P2", "P3"]), "title": st.text(min_size=1, max_size=6)},
    optional={
        "depends": st.lists(st.sampled_from(["P1", "P2", "P3", "0001/P2"]), max_size=2),
        "paths": st.lists(GLOBS, max_size=3),
        "gate": st.lists(GOOD_GATE, max_size=4),
    },
)
PHASE_TABLE = st.one_of(MOSTLY_VALID_PHASE, HOSTILE_PHASE)
PLAN_TABLE = st.fixed_dictionaries(
    {"id": st.one_of(st.just("0001"), SCALARS), "title": st.one_of(st.just("Demo"), SCALARS)},
    optional={"milestone": st.one_of(st.text(max_size=5), SCALARS), "owner": VALUES},
)
RAW_BODY = st.text(alphabet=st.sampled_from(list("[]{}\"'#=\\.\n ,abx1\t")), max_size=60)  # mostly invalid TOML


def deep_body(depth: int, kind: str) -> str:
    if kind == "array":
        return 'id = "P1"\ntitle = "t"\nx = ' + "[" * depth + "]" * depth + "\n"
    if kind == "table":
        return 'id = "P1"\ntitle = "t"\nx = ' + "{a = " * depth + "1" + "}" * depth + "\n"
    if kind == "dotted":
        return 'id = "P1"\ntitle = "t"\n' + "a." * depth + "b = 1\n"
    return 'id = "P1"\ntitle = "t"\n' + "".join(f"[{'x.' * i}y]\n" for i in range(1, min(depth, 60)))  # table headers


DEEP = st.builds(deep_body, st.sampled_from([1, MAX_TOML_DEPTH - 1, MAX_TOML_DEPTH, MAX_TOML_DEPTH + 1, 200, 600, 3000]),
                 st.sampled_from(["array", "table", "dotted", "headers"]))  # fmt: skip

PROSE = st.sampled_from(
    ["# Title", "", "Some prose.", "- item", "  ```phase", "> ```phase", "    indented code", "```python", "```", "~~~plan", "````",
     "<div>", "<!-- tracker:begin phase:P1 -->", "<!-- tracker:end phase:P1 sum=000000000000 -->", "```plan", "| a | b |", "\t```phase"]
)  # fmt: skip


@st.composite
def plan_files(draw: st.DrawFn) -> str:
    """A plan file: random Markdown lines around a plan block and phase blocks of hostile TOML."""
    parts: list[str] = []
    blocks = ["plan"] if draw(st.booleans()) else []
    blocks += draw(
        st.lists(st.sampled_from(["plan", "phase", "phase", "phase", "raw", "deep"]), min_size=1, max_size=4)
    )
    for kind in blocks:
        parts.extend(draw(st.lists(PROSE, max_size=3)))
        if kind == "plan":
            body = toml_table(draw(PLAN_TABLE), False)
        elif kind == "phase":
            body = toml_table(draw(PHASE_TABLE), draw(st.booleans()))
        elif kind == "raw":
            body = draw(RAW_BODY) + "\n"
        else:
            body = draw(DEEP)
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        info = "plan" if kind == "plan" else "phase"
        closed = draw(st.sampled_from([True] * 7 + [False]))
        parts.append(f"{fence}{info}\n{body}{fence if closed else ''}")
    parts.extend(draw(st.lists(PROSE, max_size=2)))
    text = "\n".join(parts) + draw(st.sampled_from(["\n", "", "\n\n"]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if draw(st.booleans()) else "") + text


# --- the properties ----------------------------------------------------------------------------------------


def line_count(text: str) -> int:
    return len(text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def check_problems(problems: list[str], texts: dict[str, str]) -> None:
    """Every problem names a file and a line inside it (or is ``path: reason``)."""
    for p in problems:
        m = PROBLEM.match(p)
        assert m is not None, p
        assert m.group(1) in texts, p
        assert 1 <= int(m.group(2)) <= line_count(texts[m.group(1)]), (p, line_count(texts[m.group(1)]))


def check_safe_for_status(plan: Plan) -> None:
    """What validated is what status relies on: valid globs, -m expressions and test paths, and it survives
    the plan cache's JSON exactly."""
    for ph in plan.phases:
        assert all(glob_problem(p) is None for p in ph.paths), ph.paths
        for g in ph.gates:
            if isinstance(g, TestGate):
                assert gate_path_problem(g.test) is None, g.test
                if g.marker is not None:
                    compile_marker(g.marker)
    cached = json.loads(json.dumps(to_plain(plan)))
    restored = from_plain(cached)
    assert to_plain(restored) == to_plain(plan)


def check_status(plan: Plan) -> None:
    """A valid plan's status derives without an exception (empty store, a few files)."""
    from tracker.core.checks import cross_plan_problems
    from tracker.core.status import compute

    if cross_plan_problems([plan]):
        return
    files = {"tests/t.py": "1", "src/a.py": "2", "a" * 40: "3"}
    out = compute(
        [plan], Store(), lambda: FileIndex(files), lambda: lambda g: GateVerdict(False, "no benchmark evidence")
    )
    assert set(out) == {f"{plan.id}/{ph.id}" for ph in plan.phases}


def check_parse(text: str) -> None:
    plan, problems = parse_plan(PATH, text)
    assert plan is None or isinstance(plan, Plan)
    assert plan is not None or problems
    check_problems(problems, {PATH: text})
    if plan is not None:
        check_safe_for_status(plan)
        if not problems:
            check_status(plan)


@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(plan_files())
def test_hostile_plan_files_parse_to_problems_with_lines(text: str) -> None:
    check_parse(text)


@pytest.mark.slow
@settings(max_examples=20000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(plan_files())
def test_hostile_plan_files_parse_to_problems_with_lines_slow(text: str) -> None:
    check_parse(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`~\n\r\t #=[]{}\"'\\plnasehid0123P.\x00\x7f\u2028é")), max_size=400))
def test_arbitrary_text_parses_to_problems_with_lines(text: str) -> None:
    check_parse(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(MOSTLY_VALID_PHASE, st.booleans()), min_size=1, max_size=3))
def test_plausible_plans_are_valid_and_safe_or_problems(phases: list[tuple[dict[str, Any], bool]]) -> None:
    blocks = "".join(f"```phase\n{toml_table(table, headers)}```\n\nProse.\n\n" for table, headers in phases)
    check_parse(f'# X\n\n```plan\nid = "0001"\ntitle = "X"\n```\n\n{blocks}')


# --- the depth scan agrees with tomllib --------------------------------------------------------------------

NESTED = st.recursive(
    st.one_of(
        st.text(alphabet=st.sampled_from(list("[]{}\"'#\\\n\t ab\x7f")), max_size=6), st.integers(), st.booleans()
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="[]{}#'\" ab", max_size=4), inner, max_size=3)
    ),
    max_leaves=40,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=500, deadline=None)
@given(NESTED, st.integers(min_value=0, max_value=6), st.sampled_from(["", " # [[[[ {{{{", "\n# ]]]]"]))
def test_depth_scan_counts_exactly_what_tomllib_nests(value: Any, limit: int, comment: str) -> None:
    document = f"x = {toml_value(value)}{comment}\n"
    assert tomllib.loads(document)["x"] == value
    assert (_too_deep_line(document, limit) is None) == (depth(value) <= limit), document


def test_multiline_strings_and_escapes_are_skipped() -> None:
    documents = [
        'x = """a\\"""[[["""',
        "x = '''a'''''\ny = '[[['",
        'x = """a"""""\ny = "[[["',
        "x = 'a\\'\ny = '[[['",
        'x = "\\\\"\ny = "[{"',
    ]
    for document in documents:
        assert tomllib.loads(document) is not None, document
        assert _too_deep_line(document, 0) is None, document
    assert _too_deep_line('x = "unclosed\ny = [[[', 2) == 1  # an unclosed string ends at its line


# --- whole repositories through lint (no collection: nothing from a plan runs) ------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(plan_files(), min_size=1, max_size=3), st.sampled_from(["0001", "0002"]))
def test_lint_of_hostile_repositories_lists_problems_with_lines(texts: list[str], second: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "plans").mkdir()
        (root / "tests").mkdir()
        (root / "tests/t.py").write_text("def test_a(): pass\n")
        names = {}
        for i, text in enumerate(texts):
            rel = f"plans/{second if i == 1 else f'{i + 1:04d}'}-p{i}.md"
            (root / rel).write_bytes(text.encode("utf-8"))
            names[rel] = text
        out = io.StringIO()
        code = lint.run(root, collect=False, out=out)
        lines = out.getvalue().splitlines()
        assert code in (0, 2)
        summary = re.search(r"(plan file\(s\) OK|file\(s\))(, (\d+) warning\(s\))?$", lines[-1])
        assert summary is not None, lines[-1]
        assert int(summary.group(3) or 0) == sum(
            ": warning: " in line for line in lines[:-1]
        )  # the count says what is listed
        check_problems(lines[:-1], names)


def test_plan_cache_round_trip_of_every_field() -> None:
    text = (
        '```plan\nid = "0001"\ntitle = "X"\nmilestone = "m"\n```\n```phase\nid = "P1"\ntitle = "t"\ndepends = ["0001/P2"]\n'
        'paths = ["src/**"]\n[[gate]]\ntest = "tests/t.py"\nmarker = "a-b"\n[[gate]]\nmanual = "ok"\n[[gate]]\nbench = "m"\n'
        'where = {a = 1, b = "x", c = 1.5, d = true}\nbaseline = {a = 2}\nat_most = 3\nstat = "p90"\nmin_samples = 4\n'
        'hardware = "H200"\nrun = "python -m bench"\nconfidence = 0.9\n```\n```phase\nid = "P2"\ntitle = "u"\n```\n'
    )
    plan, problems = parse_plan(PATH, text)
    assert problems == [] and plan is not None
    assert from_plain(json.loads(json.dumps(to_plain(plan)))) == plan


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4)),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["id", "title", "path", "phases", "gates", "line", "end_line",
                                                                                                 "milestone", "depends", "paths", "depends_line", "test", "x"]),
                                                                                inner, max_size=8),
                    max_leaves=30))  # fmt: skip
def test_from_plain_of_hostile_data_raises_only_value_error(data: Any) -> None:
    try:
        plan = from_plain(data)
    except ValueError:
        return
    assert to_plain(plan) == data  # what it accepts is exactly what to_plain writes
