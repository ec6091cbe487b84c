"""Parser: valid plans, every problem with its exact path:line message, and arbitrary Markdown."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest
from hostile_plans import (
    MOSTLY_VALID_PHASE,
    check_problems,
    depth,
    plan_files,
    toml_table,
    toml_value,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import Calls, phase, plan_text

from tracker.base.file_index import FileIndex
from tracker.base.globs import glob_problem
from tracker.base.selection import compile_marker
from tracker.core.model import BenchGate, GateVerdict, ManualGate, Plan, Store, TestGate
from tracker.plans.load import from_plain, to_plain
from tracker.plans.parse import _too_deep_line, fenced_blocks, parse_plan
from tracker.plans.schema import gate_path_problem

GOOD = """# Kernel

```plan
id = "0002"
title = "sm_120 verify kernel"
milestone = "verify-kernel"
```

Prose with a ```phase fence inside a list is not a phase:

- item

  ```phase
  id = "NOPE"
  ```

```phase
id = "P1"
title = "Verify kernel matches the fp32 oracle"
depends = ["P0", "0001/P3"]
paths = ["kernel/csrc/**", "kernel/verify.py"]

[[gate]]
test = "tests/kernel/test_verify.py::test_matches_reference"
[[gate]]
test = "tests/kernel/"
marker = "gpu"
[[gate]]
manual = "Reviewed by the kernel owner"
[[gate]]
bench = "verify_attn.time_us"
where = { impl = "cuda", ctx = 91000, heads = 8, nodes = 64, batch = 1 }
baseline = { impl = "triton" }
at_least = 1.8
stat = "median"
min_samples = 10
hardware = "H200"
run = "python -m bench verify --cases long"
confidence = 0.95
```
"""


def test_parses_the_documented_format() -> None:
    plan, problems = parse_plan("plans/0002-kernel.md", GOOD)
    assert problems == []
    assert plan is not None
    assert (plan.id, plan.title, plan.milestone, plan.line, plan.end_line) == (
        "0002",
        "sm_120 verify kernel",
        "verify-kernel",
        3,
        7,
    )
    [p1] = plan.phases
    assert (p1.id, p1.depends, p1.paths, p1.line, p1.end_line) == (
        "P1",
        ("P0", "0001/P3"),
        ("kernel/csrc/**", "kernel/verify.py"),
        17,
        40,
    )
    t1, t2, m, b = p1.gates
    assert t1 == TestGate("tests/kernel/test_verify.py::test_matches_reference", None, 23)
    assert t2 == TestGate("tests/kernel/", "gpu", 25)
    assert m == ManualGate("Reviewed by the kernel owner", 28)
    assert isinstance(b, BenchGate) and b.line == 30
    assert (b.where["ctx"], b.baseline, b.at_least, b.at_most, b.min_samples, b.confidence) == (
        91000,
        {"impl": "triton"},
        1.8,
        None,
        10,
        0.95,
    )


def problems_of(text: str, path: str = "plans/0001-x.md") -> list[str]:
    return parse_plan(path, text)[1]


HEAD = '```plan\nid = "0001"\ntitle = "X"\n```\n'


def test_no_plan_block() -> None:
    assert problems_of("# nothing\n") == ["plans/0001-x.md:1: no ```plan block (a plan file needs exactly one)"]


def test_second_plan_block_and_unclosed_fence() -> None:
    assert problems_of(HEAD + HEAD + '```phase\nid = "P1"\ntitle = "t"\n') == [
        "plans/0001-x.md:5: second ```plan block (first at line 1)",
        "plans/0001-x.md:9: phase block is not closed",
    ]


def test_toml_error_line_is_the_file_line() -> None:
    text = HEAD + '\n```phase\nid = "P1"\ntitle = \n```\n'
    assert problems_of(text) == ["plans/0001-x.md:8: invalid TOML in phase block: Invalid value"]


def test_unknown_and_missing_keys_with_their_lines() -> None:
    text = HEAD + '```phase\nid = "P1"\ntitl = "x"\n[[gate]]\ntest = "a"\nmarkr = "gpu"\n```\n'
    assert problems_of(text) == [
        "plans/0001-x.md:5: phase P1: missing required key 'title'",
        "plans/0001-x.md:7: phase P1: unknown key 'titl' (did you mean 'title'?)",
        "plans/0001-x.md:10: phase P1 gate 1: unknown key 'markr' (did you mean 'marker'?)",
    ]


def test_plan_block_validation() -> None:
    text = '```plan\nid = "12"\ntitle = 3\nowner = "me"\n```\n'
    assert problems_of(text) == [
        "plans/0001-x.md:2: plan: id: String should match pattern '^[0-9]{4}$'",
        "plans/0001-x.md:3: plan: title: Input should be a valid string",
        "plans/0001-x.md:4: plan: unknown key 'owner'",
    ]


def test_plan_id_must_match_file_name() -> None:
    assert problems_of(HEAD, "plans/0007-x.md") == [
        "plans/0007-x.md:2: plan id '0001' does not match the file name (expected 0001-slug.md)"
    ]


def test_gate_kind_problems() -> None:
    text = (
        HEAD + '```phase\nid = "P1"\ntitle = "t"\n[[gate]]\nmarker = "gpu"\n[[gate]]\ntest = "a"\nmanual = "b"\n```\n'
    )
    assert problems_of(text) == [
        "plans/0001-x.md:8: phase P1 gate 1: a gate needs exactly one of 'test', 'manual', 'bench' (found none)",
        "plans/0001-x.md:10: phase P1 gate 2: a gate needs exactly one of 'test', 'manual', 'bench' (found 'test', 'manual')",
    ]


def test_bench_gate_rules() -> None:
    gate = '[[gate]]\nbench = "m"\nat_least = 1\nat_most = 2\n[[gate]]\nbench = "m"\nat_least = 1\nstat = "max"\nsamples = 3\n'
    text = HEAD + f'```phase\nid = "P1"\ntitle = "t"\n{gate}```\n'
    assert problems_of(text) == [
        "plans/0001-x.md:8: phase P1 gate 1: exactly one of 'at_least' or 'at_most' is required",
        "plans/0001-x.md:15: phase P1 gate 2: stat: Input should be 'median', 'min', 'mean' or 'p90'",
        "plans/0001-x.md:16: phase P1 gate 2: unknown key 'samples' (did you mean 'min_samples'?)",
    ]


def test_skips_allowed_rules() -> None:
    """Issue 30: ``skips_allowed`` is a list of non-empty reasons, on a file, directory or marker gate only (a test
    a gate names by id must pass: a skip never does)."""
    gates = (
        '[[gate]]\ntest = "tests/"\nskips_allowed = ["win32 only", "could not import"]\n'
        '[[gate]]\ntest = "tests/"\nskips_allowed = "win32 only"\n'
        '[[gate]]\ntest = "tests/"\nskips_allowed = [""]\n'
        '[[gate]]\ntest = "tests/a.py::test_x"\nskips_allowed = ["win32 only"]\n'
        '[[gate]]\nmanual = "m"\nskips_allowed = ["x"]\n'
    )
    text = HEAD + f'```phase\nid = "P1"\ntitle = "t"\n{gates}```\n'
    plan, problems = parse_plan("plans/0001-x.md", text)
    assert problems == [
        "plans/0001-x.md:13: phase P1 gate 2: skips_allowed: Input should be a valid list",
        "plans/0001-x.md:16: phase P1 gate 3: skips_allowed[0]: String should have at least 1 character",
        "plans/0001-x.md:19: phase P1 gate 4: skips_allowed: a gate naming one test by id allows no skip "
        "(a skip never passes it): name its file or directory",
        "plans/0001-x.md:22: phase P1 gate 5: unknown key 'skips_allowed'",
    ]
    assert plan is not None
    assert plan.phases[0].gates[0] == TestGate("tests/", line=8, skips_allowed=("win32 only", "could not import"))
    assert plan.phases[0].gates[0].definition == {"test": "tests/", "skips_allowed": ["win32 only", "could not import"]}
    assert TestGate("tests/").definition == {"test": "tests/"}  # a gate without it keeps its hash


_TOML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(value=_TOML_VALUES, test=st.sampled_from(["tests/", "tests/a.py::t", "tests/a.py"]))
def test_any_skips_allowed_value_is_a_gate_or_a_problem_at_its_line(value: object, test: str) -> None:
    """Issue 30: whatever TOML value ``skips_allowed`` holds, the parser keeps the gate (a list of non-empty strings,
    on a gate that does not name one test) or says ``path:line: ...`` at the key's line: never a crash."""
    import json

    toml_value = json.dumps(value, ensure_ascii=True) if value is not None else '"x"'
    if value is None:
        value = "x"
    text = HEAD + f'```phase\nid = "P1"\ntitle = "t"\n[[gate]]\ntest = "{test}"\nskips_allowed = {toml_value}\n```\n'
    try:
        import tomllib

        tomllib.loads(f"v = {toml_value}")
    except tomllib.TOMLDecodeError:
        return  # mixed-type arrays of nulls etc. are not TOML; not this test's subject
    plan, problems = parse_plan("plans/0001-x.md", text)
    ok = isinstance(value, list) and all(isinstance(v, str) and v for v in value) and (not value or "::" not in test)
    if ok:
        assert problems == [] and plan is not None
        assert plan.phases[0].gates[0] == TestGate(test, line=8, skips_allowed=tuple(value))  # type: ignore[arg-type]
    else:
        assert problems and all(p.startswith("plans/0001-x.md:10: phase P1 gate 1: skips_allowed") for p in problems)


def test_unknown_keys_name_the_closest_known_key() -> None:
    # issue 24: no "did you mean" for a misspelt key
    plan = '```plan\nid = "0001"\ntitel = "X"\nmilestne = "m"\n```\n'
    gates = '[[gate]]\ntset = "tests/t.py"\n[[gate]]\nmanual = "ok"\nby = "me"\n[[gate]]\nbench = "m"\nat_lest = 1\n'
    text = plan + f'```phase\nid = "P1"\ntitle = "t"\ndepend = ["P0"]\npath = ["a/"]\n{gates}```\n'
    assert problems_of(text) == [
        "plans/0001-x.md:1: plan: missing required key 'title'",
        "plans/0001-x.md:3: plan: unknown key 'titel' (did you mean 'title'?)",
        "plans/0001-x.md:4: plan: unknown key 'milestne' (did you mean 'milestone'?)",
        "plans/0001-x.md:9: phase P1: unknown key 'depend' (did you mean 'depends'?)",
        "plans/0001-x.md:10: phase P1: unknown key 'path' (did you mean 'paths'?)",
        "plans/0001-x.md:11: phase P1 gate 1: a gate needs exactly one of 'test', 'manual', 'bench' (found none)",
        "plans/0001-x.md:12: phase P1 gate 1: unknown key 'tset' (did you mean 'test'?)",
        "plans/0001-x.md:15: phase P1 gate 2: unknown key 'by'",
        "plans/0001-x.md:18: phase P1 gate 3: unknown key 'at_lest' (did you mean 'at_least'?)",
    ]


def test_unknown_key_in_a_gate_without_a_kind() -> None:
    text = HEAD + '```phase\nid = "P1"\ntitle = "t"\n[[gate]]\nfrobnicate = 1\n```\n'
    assert problems_of(text) == [
        "plans/0001-x.md:8: phase P1 gate 1: a gate needs exactly one of 'test', 'manual', 'bench' (found none)",
        "plans/0001-x.md:9: phase P1 gate 1: unknown key 'frobnicate'",
    ]


def test_invalid_gates_keep_the_real_numbers_and_lines_of_the_others() -> None:
    gates = '[[gate]]\nbench = "m"\nat_least = 1\nat_most = 2\n[[gate]]\nmanual = "ok"\n[[gate]]\ntest = "tests/t.py"\n'
    plan, problems = parse_plan("plans/0001-x.md", HEAD + f'```phase\nid = "P1"\ntitle = "t"\n{gates}```\n')
    assert problems == ["plans/0001-x.md:8: phase P1 gate 1: exactly one of 'at_least' or 'at_most' is required"]
    assert plan is not None
    assert plan.phases[0].gates == (ManualGate("ok", 12), TestGate("tests/t.py", None, 14))


def test_a_plan_with_problems_keeps_what_validated() -> None:
    # lint checks dependencies, cycles and gates of these phases too
    bad_plan = '```plan\nid = "0001"\ntitle = "X"\nowner = "me"\n```\n'
    block = (
        '```phase\nid = "P1"\ntitl = "t"\ndepends = ["P2", "0002/x y", "0002/P3"]\n[[gate]]\ntest = "tests/t.py"\n```\n'
    )
    plan, problems = parse_plan("plans/0001-x.md", bad_plan + block)
    assert problems == [
        "plans/0001-x.md:4: plan: unknown key 'owner'",
        "plans/0001-x.md:6: phase P1: missing required key 'title'",
        "plans/0001-x.md:9: phase P1: depends[1]: String should match pattern '^([0-9]{4}/)?[A-Za-z][A-Za-z0-9_.-]*$'",
        "plans/0001-x.md:8: phase P1: unknown key 'titl' (did you mean 'title'?)",
    ]
    assert plan is not None and (plan.id, plan.title) == ("0001", "X")
    [p1] = plan.phases
    assert (p1.id, p1.title, p1.depends, p1.gates) == ("P1", "", ("P2", "0002/P3"), (TestGate("tests/t.py", None, 10),))
    # without a usable plan block, the file name's number stands in for the plan id
    plan, problems = parse_plan("plans/0007-x.md", "# no plan\n\n" + block)
    assert problems[0] == "plans/0007-x.md:1: no ```plan block (a plan file needs exactly one)"
    assert plan is not None and (plan.id, [p.id for p in plan.phases]) == ("0007", ["P1"])
    assert parse_plan("plans/x.md", '```plan\nid = "1"\ntitle = "X"\n```\n')[0] is None


def test_duplicate_phase_ids() -> None:
    block = '```phase\nid = "P1"\ntitle = "t"\n```\n'
    assert problems_of(HEAD + block + block) == ["plans/0001-x.md:10: duplicate phase id 'P1' (first at line 5)"]


def test_crlf_and_bom_line_numbers() -> None:
    text = "\ufeff" + (HEAD + '```phase\nid = "P1"\ntitle = \n```\n').replace("\n", "\r\n")
    assert problems_of(text) == ["plans/0001-x.md:7: invalid TOML in phase block: Invalid value"]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`~ \t\n\r#=[]\"'{}>-*plantphaseid0123P\u2028\x00é")), max_size=300))
def test_arbitrary_markdown_never_crashes(text: str) -> None:
    plan, problems = parse_plan("plans/0001-x.md", text)
    assert plan is not None or problems
    for p in problems:
        assert p.startswith("plans/0001-x.md:")
        assert int(p.split(":")[1]) >= 1


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_any_unicode_never_crashes(text: str) -> None:
    parse_plan("plans/0001-x.md", text)
    fenced_blocks(text)


def _many_gates(n: int) -> str:
    """A phase of ``n`` test gates, every second one with an unknown key (a problem located at its line)."""
    gates = "".join(f'[[gate]]\ntest = "tests/t.py::test_{i}"\n' + ("typo = 1\n" if i % 2 else "") for i in range(n))
    return HEAD + f'```phase\nid = "P1"\ntitle = "t"\n{gates}```\n'


def test_gate_lines_cost_linear_work_in_the_gates_of_a_phase() -> None:
    # issue 24: each gate's line rescanned the whole block (5,000 gates: cold status 13.7 s, lint 20 s). Work is
    # counted, not timed (CPU seconds compared under load flake): every call parse_plan makes, Python or built-in
    # (tomllib's, the line scans' regex matches), 4.0x at 4x the gates; the rescans made it 14x (10.5M calls).
    def work(n: int) -> int:
        text = _many_gates(n)
        with Calls() as calls:
            plan, problems = parse_plan("plans/0001-x.md", text)
        assert plan is not None and len(plan.phases[0].gates) == n - n // 2 and len(problems) == n // 2
        return calls.count

    work(3)  # the regexes compiled (re's cache), as they are for any plan after the first
    small, large = work(500), work(2000)
    assert large / small < 6, f"4x the gates made {large / small:.1f}x the calls ({small} -> {large}; linear: 4x)"
    plan, problems = parse_plan("plans/0001-x.md", _many_gates(3))
    assert plan is not None and [g.line for g in plan.phases[0].gates] == [8, 13]
    assert problems == ["plans/0001-x.md:12: phase P1 gate 2: unknown key 'typo'"]


def test_non_finite_bench_gate_values_are_plan_problems_at_their_line() -> None:
    """NaN equals nothing, itself included: a ``where = { id = nan }`` gate could never be met, and the parsed plan
    was not equal to itself (the parse cache round trip, found by test_props_parse's property)."""
    from tracker.plans.parse import parse_plan

    gate = 'bench = "m.x"\nat_least = nan\nwhere = { id = nan, b = 1.5 }\nbaseline = { c = -inf }'
    text = plan_text("0001", phase("P1", gate) + phase("P2", 'bench = "m.x"\nat_most = inf'))
    lines = text.split("\n")
    at = {
        key: lines.index(next(line for line in lines if line.startswith(key))) + 1
        for key in ("at_least", "where", "baseline", "at_most")
    }
    assert parse_plan("plans/0001-x.md", text)[1] == [
        f"plans/0001-x.md:{at['where']}: phase P1 gate 1: where.id = nan: not a finite number (no result's parameter equals it)",
        f"plans/0001-x.md:{at['baseline']}: phase P1 gate 1: baseline.c = -inf: not a finite number (no result's parameter equals it)",
        f"plans/0001-x.md:{at['at_least']}: phase P1 gate 1: at_least: Input should be a finite number",
        f"plans/0001-x.md:{at['at_most']}: phase P2 gate 1: at_most: Input should be a finite number",
    ]


MARKED = {
    "tests/test_m.py": "import pytest\n\n@getattr(pytest.mark, 'a-b')\ndef test_ab(): pass\n\ndef test_plain(): pass\n"
}


BAD_MARKER = plan_text(phases=phase("P1", 'test = "tests/test_m.py"', 'test = "tests/test_m.py"\nmarker = "a and"'))


BAD_MARKER_PROBLEM = (
    "plans/0001-demo.md:15: phase P1 gate 2: invalid -m expression 'a and': column 6: "
    "expected not or left parenthesis or identifier; got end of input"
)


DEEP = "[" * 500 + "]" * 500


@pytest.mark.parametrize("command", [["status"], ["update"], ["check"], ["verify"], ["next"], ["gc", "--dry-run"]])
def test_an_invalid_marker_is_a_plan_problem_for_every_command(repo, cli, command: list[str]) -> None:
    root = repo({"plans/0001-demo.md": BAD_MARKER, **MARKED})
    r = cli(root, *command)
    assert (r.code, r.err) == (
        2,
        BAD_MARKER_PROBLEM + "\ntracker: error: 1 problem(s) in plan files (see `tracker lint`)\n",
    )


def test_bad_globs_are_plan_problems_at_their_line(repo, cli) -> None:
    text = plan_text(
        phases=phase("P1", 'manual = "ok"', paths='"src/**", "/etc/**"')
        + phase("P2", 'manual = "ok"', paths='"../up/*.py"')
        + phase("P3", 'manual = "ok"', paths='"src/[ab.py"')
    )
    root = repo({"plans/0001-demo.md": text})
    expected = [
        "plans/0001-demo.md:11: phase P1: glob '/etc/**' is absolute: globs are relative to the repository root",
        "plans/0001-demo.md:19: phase P2: glob '../up/*.py' has a '.' or '..' segment: globs are relative to the repository root and stay inside it",
        "plans/0001-demo.md:27: phase P3: glob 'src/[ab.py': unterminated [ at column 5 (write [[] for a literal '[')",
    ]
    r = cli(root, "lint")
    warning = "plans/0001-demo.md:11: warning: phase P1: paths glob 'src/**' matches no file"  # shown beside errors
    assert (r.code, r.out.splitlines()) == (2, [warning, *expected, "3 problem(s) in 1 file(s), 1 warning(s)"])
    for command in ("status", "update", "check"):
        r = cli(root, command)
        assert (r.code, r.err.splitlines()[:-1]) == (2, expected), command


@pytest.mark.parametrize(
    ("block", "line", "problem"),
    [
        (phase("P1", 'manual = "ok"').replace('title = "Phase P1"\n', f'title = "Phase P1"\nx = {DEEP}\n'), 11,
         "phase block nests arrays or tables more than 32 levels deep"),
        ('```phase\nid = "P1"\ntitle = "t"\n[[gate]]\nmanual = "ok"\nwhere = ' + "{a = " * 500 + "1" + "}" * 500 + "\n```\n", 13,
         "phase block nests arrays or tables more than 32 levels deep"),
        ('```phase\nid = "P1"\ntitle = "t"\n' + "a." * 3000 + "b = 1\n```\n", 11,
         "phase block nests arrays or tables more than 32 levels deep"),
        ('```phase\nid = "P1"\ntitle = "t"\nx = ' + "9" * 5000 + "\n```\n", 11,
         "invalid TOML in phase block: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; "
         "use sys.set_int_max_str_digits() to increase the limit"),
    ],
)  # fmt: skip
def test_deep_toml_is_a_plan_problem_for_every_command(repo, cli, block: str, line: int, problem: str) -> None:
    root = repo({"plans/0001-demo.md": plan_text(phases=block)})
    expected = f"plans/0001-demo.md:{line}: {problem}"
    r = cli(root, "lint")
    assert (r.code, r.out) == (2, f"{expected}\n1 problem(s) in 1 file(s)\n")
    for command in (["status"], ["update"], ["check"], ["gc", "--dry-run"], ["next"]):
        r = cli(root, *command)
        assert (r.code, r.err.splitlines()[0]) == (2, expected), command


def test_deep_toml_in_the_plan_block() -> None:
    from tracker.plans.parse import parse_plan

    text = f'```plan\nid = "0001"\ntitle = "X"\nmilestone = {DEEP}\n```\n'
    _plan, problems = parse_plan("plans/0001-x.md", text)
    assert problems == ["plans/0001-x.md:4: plan block nests arrays or tables more than 32 levels deep"]


def test_brackets_inside_strings_and_comments_are_not_nesting() -> None:
    from tracker.plans.parse import parse_plan

    body = 'id = "P1"\ntitle = "' + "[" * 100 + '"  # ' + "{" * 100 + "\n"
    body += "x = '''\n" + "[" * 100 + "\n'''\n" + 'y = """\\"""' + "[" * 100 + '"""\n'
    _plan, problems = parse_plan(
        "plans/0001-x.md", '```plan\nid = "0001"\ntitle = "X"\n```\n```phase\n' + body + "```\n"
    )
    assert [p for p in problems if "deep" in p] == []
    assert any("unknown key 'x'" in p for p in problems)  # it did reach validation


@pytest.mark.parametrize(
    ("test", "problem"),
    [
        (
            "../outside/test_x.py",
            "test path '../outside/test_x.py' is outside the repository (a test gate runs only the repository's own tests)",
        ),
        (
            "tests/../../x/test_x.py::test_a",
            "test path 'tests/../../x/test_x.py' is outside the repository (a test gate runs only the repository's own tests)",
        ),
        (
            "/tmp/test_x.py",
            "test path '/tmp/test_x.py' is outside the repository (a test gate runs only the repository's own tests)",
        ),
        (
            "~/test_x.py",
            "test path '~/test_x.py' is outside the repository (a test gate runs only the repository's own tests)",
        ),
        ("-pevil", "test '-pevil' starts with '-': a test gate names a path or node id, not a pytest option"),
    ],
)
def test_test_gates_outside_the_repository_are_plan_problems(repo, cli, test: str, problem: str) -> None:
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", f'test = "{test}"')),
            "tests/test_a.py": "def test_a(): pass\n",
        }
    )
    expected = f"plans/0001-demo.md:12: phase P1 gate 1: {problem}"
    r = cli(root, "lint")
    assert (r.code, r.out) == (2, f"{expected}\n1 problem(s) in 1 file(s)\n")
    for command in ("status", "verify", "update"):
        r = cli(root, command)
        assert (r.code, r.err.splitlines()[0]) == (2, expected), command


PATH = "plans/0001-x.md"


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


NESTED = st.recursive(
    st.one_of(
        st.text(alphabet=st.sampled_from(list("[]{}\"'#\\\n\t ab\x7f")), max_size=6), st.integers(), st.booleans()
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="[]{}#'\" ab", max_size=4), inner, max_size=3)
    ),
    max_leaves=40,
)


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
