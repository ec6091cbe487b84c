"""Hostile plan files for property tests: strategies of TOML keys, values and whole plan blocks (deep nesting, huge
integers, hostile globs and paths), and the checks every reported problem must pass (``path:line: message``, the
line inside the file). Shared by the parser's and lint's tests."""

from __future__ import annotations

import math
import re
from typing import Any

from hypothesis import strategies as st

from tracker.commands.new import toml_string
from tracker.plans.parse import MAX_TOML_DEPTH

PROBLEM = re.compile(r"^(plans/[^:]+):(\d+): \S")


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


HOSTILE_GLOBS = st.sampled_from(
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
        "paths": st.lists(HOSTILE_GLOBS, max_size=3),
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


DEEP_BODIES = st.builds(deep_body, st.sampled_from([1, MAX_TOML_DEPTH - 1, MAX_TOML_DEPTH, MAX_TOML_DEPTH + 1, 200, 600, 3000]),
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
            body = draw(DEEP_BODIES)
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        info = "plan" if kind == "plan" else "phase"
        closed = draw(st.sampled_from([True] * 7 + [False]))
        parts.append(f"{fence}{info}\n{body}{fence if closed else ''}")
    parts.extend(draw(st.lists(PROSE, max_size=2)))
    text = "\n".join(parts) + draw(st.sampled_from(["\n", "", "\n\n"]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if draw(st.booleans()) else "") + text


def line_count(text: str) -> int:
    return len(text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def check_problems(problems: list[str], texts: dict[str, str]) -> None:
    """Every problem names a file and a line inside it (or is ``path: reason``)."""
    for p in problems:
        m = PROBLEM.match(p)
        assert m is not None, p
        assert m.group(1) in texts, p
        assert 1 <= int(m.group(2)) <= line_count(texts[m.group(1)]), (p, line_count(texts[m.group(1)]))


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0
