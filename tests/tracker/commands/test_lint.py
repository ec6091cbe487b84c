"""``tracker lint`` (tracker/commands/lint.py): what it reports, warns about, and what it costs."""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_plans import (
    check_problems,
    plan_files,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import Calls, make_files, phase, plan_text

from tracker.base.file_index import FileIndex
from tracker.base.globs import glob_problem
from tracker.commands import lint
from tracker.core.model import Plan, Store, TestGate, TestRun
from tracker.plans.load import load_plans
from tracker.plans.parse import parse_plan


def _many_gates_repo(repo: Callable[..., Path], n: int) -> Path:
    gates = [f'test = "tests/test_many.py::test_{i}"' for i in range(n)]
    tests = "".join(f"def test_{i}():\n    pass\n" for i in range(n))
    return repo(
        {"plans/0001-demo.md": plan_text(phases=phase("P1", *gates, paths='"tests/**"')), "tests/test_many.py": tests}
    )


def test_gate_problems_cost_linear_work_in_the_gates(repo: Callable[..., Path]) -> None:
    # issue 24: every gate tested every collected test (5,000 gates: lint took 20 s, 25 million selects() calls).
    # Work is counted, not timed (CPU seconds compared under load flake): every call gate_problems makes in this
    # process, Python or built-in, but pytest's collection (a child process; _collect's pipe reads vary run to
    # run): 4.1x at 4x the gates; testing every pair made it 15.7x (5.1M calls at 1,600 gates).
    from tracker.commands import lint

    def work(n: int) -> int:
        root = _many_gates_repo(repo, n)
        plans = load_plans(root)[1]
        with Calls(skip=(lint._collect,)) as calls:
            assert lint.gate_problems(root, plans) == []
        return calls.count

    small, large = work(400), work(1600)
    assert large / small < 6, f"4x the gates made {large / small:.1f}x the calls ({small} -> {large}; linear: 4x)"


LATER = plan_text(
    phases=phase(
        "P1",
        'test = "tests/test_later.py"',
        'test = "tests/test_a.py::test_later"',
        'test = "tests/test_a.py"\nmarker = "gpu"',
        'test = "tests/test_a.py::test_now"',
        paths='"tests/**"',
    )
)


def test_tests_not_written_yet_are_warnings_and_their_phase_stays_planned(repo, cli) -> None:
    # issue 24: planning ahead of the code failed lint (exit 2)
    root = repo({"plans/0001-demo.md": LATER, "tests/test_a.py": "def test_now():\n    pass\n"})
    r = cli(root, "lint")
    later = "not written yet? the gate stays unmet until"
    assert (r.code, r.out.splitlines()) == (
        0,
        [
            f"plans/0001-demo.md:12: warning: phase P1 gate 1: no such test file or directory: tests/test_later.py ({later} it is)",
            f"plans/0001-demo.md:14: warning: phase P1 gate 2: 'tests/test_a.py::test_later' collects no tests ({later} it does)",
            f"plans/0001-demo.md:16: warning: phase P1 gate 3: 'tests/test_a.py' with -m 'gpu' collects no tests ({later} it does)",
            "1 plan file(s) OK, 3 warning(s)",
        ],
    )  # fmt: skip
    assert cli(root, "lint", "--no-collect").out.splitlines()[0].startswith("plans/0001-demo.md:12: warning: ")
    assert "P1  planned" in cli(root, "status").out
    (root / "tests/test_a.py").write_text("import no_such_module\n")  # a test file that breaks is still a problem
    r = cli(root, "lint")
    assert r.code == 2 and "phase P1 gate 2: collection error in tests/test_a.py: ModuleNotFoundError" in r.out


def test_a_file_with_problems_shows_its_warnings_too(repo, cli) -> None:
    # issue 24: a file's warnings were hidden while it had an error
    phases = (
        '```phase\nid = "P1"\ntitle = "One"\npaths = ["srcc/**"]\nowner = "me"\n[[gate]]\nmanual = "ok"\n```\n\n'
        '```phase\nid = "P2"\ntitle = "Two"\n```\n\n'
        '```phase\nid = "P3"\ntitle = "Three"\n[[gate]]\nbench = "m"\n```\n'
    )
    root = repo({"plans/0001-demo.md": plan_text(phases=phases), "src/a.py": "A = 1\n"})
    r = cli(root, "lint", "--no-collect")
    assert (r.code, r.out.splitlines()) == (
        2,
        [
            "plans/0001-demo.md:17: warning: phase P2 has no gates: it can never be done",
            "plans/0001-demo.md:11: warning: phase P1: paths glob 'srcc/**' matches no file",
            "plans/0001-demo.md:12: phase P1: unknown key 'owner'",
            "plans/0001-demo.md:25: phase P3 gate 1: exactly one of 'at_least' or 'at_most' is required",
            "2 problem(s) in 1 file(s), 2 warning(s)",
        ],
    )  # P3's only gate is invalid: a problem already, not "no gates"


def test_the_untouched_template_is_a_problem_until_its_placeholder_gate_is_edited(repo, cli) -> None:
    # issue 24: `tracker new` output passed lint and its placeholder gate could be signed off
    root = repo({"a.py": "A = 1\n"})
    assert cli(root, "new", "Parser rewrite").code == 0
    r = cli(root, "lint")
    assert r.code == 2
    assert r.out.splitlines()[-2:] == [
        "plans/0001-parser-rewrite.md:21: phase P1 gate 1: still the template's placeholder gate: edit it to say what "
        "a reviewer must confirm (or make it a test or bench gate)",
        "1 problem(s) in 1 file(s)",
    ]
    path = root / "plans/0001-parser-rewrite.md"
    path.write_text(path.read_text().replace("Describe what a reviewer must confirm before this phase counts as done",
                                             "The grammar reviewed by the language owner"))  # fmt: skip
    assert cli(root, "lint").code == 0


def test_the_placeholder_gate_touched_but_not_edited_is_still_a_problem(repo, cli) -> None:
    """Adversarial review L1: a period added to the placeholder got past lint (an exact-text match); the check now
    compares words (case, spacing, punctuation and markup aside)."""
    from tests.tracker.commands.test_signoff import PLACEHOLDER_TOUCHED
    from tracker.core.checks import TEMPLATE_MANUAL

    root = repo({"a.py": "A = 1\n"})
    assert cli(root, "new", "Parser rewrite").code == 0
    path = root / "plans/0001-parser-rewrite.md"
    template = path.read_text()
    for touched in PLACEHOLDER_TOUCHED:
        path.write_text(template.replace(TEMPLATE_MANUAL, touched))
        r = cli(root, "lint", "--no-collect")
        assert r.code == 2 and "still the template's placeholder gate" in r.out, (touched, r.out)
    path.write_text(template.replace(TEMPLATE_MANUAL, "Describe the grammar to the language owner, who confirms it"))
    assert cli(root, "lint", "--no-collect").code == 0


DOCTESTED = 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n'


def test_a_doctest_gate_is_collected_with_its_options(repo, cli) -> None:
    """Issue 30: lint exited 2 on a doctest gate (no way to give pytest --doctest-modules). Its collection uses the
    gate's options: the module's doctest is found, no "collects no tests" warning."""
    gates = phase("P1", 'test = "src/mod.py"\noptions = ["--doctest-modules"]', 'test = "src/mod.py::mod.add"')
    root = repo({"plans/0001-demo.md": plan_text(phases=gates), "src/mod.py": DOCTESTED})
    r = cli(root, "lint")
    assert r.code == 0, r.out + r.err
    # The second gate names the doctest without the option: pytest does not collect it then.
    assert r.out.splitlines()[0].startswith("plans/0001-demo.md:14: warning: phase P1 gate 2: 'src/mod.py::mod.add'")
    assert "gate 1" not in r.out, r.out


NARROWING_OPTIONS = [
    (["--ignore=tests"], "'--ignore=tests'"),
    (["-p", "no:doctest"], "'-p no:doctest'"),
    (["-k", "add"], "'-k'"),
    (["-o", "python_files=*.py"], "'-o'"),
    (["--doctest-glob"], "'--doctest-glob'"),
    (["-p"], "'-p'"),
]


@pytest.mark.parametrize(("options", "named"), NARROWING_OPTIONS, ids=[" ".join(o) for o, _ in NARROWING_OPTIONS])
def test_a_gate_option_that_could_narrow_collection_is_a_plan_problem(repo, cli, options, named) -> None:
    """Only options that add to collection or configure it the same on every run: a gate that --ignore'd part of
    its own tests would be met on the rest."""
    text = f'test = "src/mod.py"\noptions = {json.dumps(options)}'
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", text)), "src/mod.py": DOCTESTED})
    r = cli(root, "lint")
    assert r.code == 2, r.out + r.err
    [problem] = [line for line in r.out.splitlines() if "options" in line]
    assert problem.startswith(f"plans/0001-demo.md:13: phase P1 gate 1: options: {named}"), r.out
    assert cli(root, "verify").code == 2


def test_many_test_files_of_one_folder_are_collected_through_it(repo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 20: pytest collects a folder's files again for each argument in it, so lint of 1,000 file gates took
    44 s (5,000: still collecting after 12 minutes). A folder whose every test file is a gate's is one argument; a
    file pytest's python_files skips there (`check_x.py`) is collected on its own, and errors still name their gate."""
    from tracker.commands import lint

    gates = [f'test = "tests/many/test_{i}.py"' for i in range(12)] + ['test = "tests/many/check_x.py"']
    files = {f"tests/many/test_{i}.py": f"def test_{i}():\n    pass\n" for i in range(12)}
    files |= {"tests/many/check_x.py": "def test_me():\n    pass\n", "tests/many/test_7.py": "import nope\n"}
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", *gates, paths='"tests/**"')), **files})
    calls: list[list[str]] = []
    real = lint._collect
    monkeypatch.setattr(
        lint, "_collect", lambda r, paths, options=(): calls.append(list(paths)) or real(r, paths, options)
    )
    problems = lint.gate_problems(root, load_plans(root)[1])
    assert calls == [["tests/many"], ["tests/many/check_x.py"]]
    assert len(problems) == 1 and "gate 8: collection error in tests/many/test_7.py: ModuleNotFoundError" in problems[0]
    r = cli(root, "lint")
    assert r.code == 2 and "warning" not in r.out, r.out


def test_a_folder_with_subfolders_is_never_folded(tmp_path: Path) -> None:
    """Round 21, 9: collecting a folder loads the conftest.py files of its subfolders, which a gate's own run of its
    file never loads (one that puts its folder on sys.path made a failing import collect): lint said OK."""
    from tracker.commands.lint import FOLD_AT, _folded

    files = [f"tests/test_{i}.py" for i in range(FOLD_AT)]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("def test_x():\n    pass\n")
    assert _folded(tmp_path, files) == (["tests"], set(files))
    (tmp_path / "tests/aaa").mkdir()
    (tmp_path / "tests/aaa/conftest.py").write_text("")
    assert _folded(tmp_path, files) == (sorted(files), set())


def gate_of(cli: Callable[..., Any], root: Path) -> tuple[str, dict[str, Any]]:
    """(status of plan 0001's first phase, its first gate) from ``status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.out + res.err
    phase_json = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_json["status"], phase_json["gates"][0]


NESTED_PLAN = (plan_text("0001", phase("P1", 'manual = "reviewed"'))
               + "  ```phase\nid = \"P2\"\ntitle = \"indented, still top level\"\n[[gate]]\nmanual = \"ok\"\n```\n\n"
               + "Steps:\n\n1. first\n\n   ```phase\n   id = \"P3\"\n   title = \"in a list item\"\n   [[gate]]\n   manual = \"ok\"\n   ```\n\n"
               + "> ```phase\n> id = \"P4\"\n> title = \"in a quote\"\n> ```\n\n"
               + "- > ~~~~plan\n  > id = \"0002\"\n  > ~~~~\n")  # fmt: skip


MD_PIECES = st.sampled_from(
    ["- ", "* ", "+ ", "1. ", "2) ", "> ", " ", "  ", "   ", "    ", "\t", "", "text", "\n", "\n\n"]
)


FENCES = st.sampled_from(
    ["```phase", "~~~plan", "````phase x", "```plan", "``` phase", "~~~~ plan", "```phase\n```", "```"]
)


@st.composite
def markdown(draw: st.DrawFn) -> str:
    """Lines of list markers, quotes, indentation and text around plan/phase fences, nested in any order."""
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        prefix = "".join(draw(st.lists(MD_PIECES, max_size=6)))
        lines.append(prefix + (draw(FENCES) if draw(st.booleans()) else draw(st.sampled_from(["id = 1", "", "x"]))))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


PATHS_PLAN = plan_text("0001", phase("P1", 'manual = "reviewed"', paths='"src", "tests/", "srcc/**", "src/*.py"')
                       + '```phase\nid = "P2"\ntitle = "t"\npaths = [\n  "docs/**",\n  "lib",\n]\n[[gate]]\nmanual = "ok"\n```\n')  # fmt: skip


GLOB_CHARS = st.one_of(
    st.text(alphabet=st.sampled_from("ab/*?.[]!-_ \\'\"é"), min_size=1, max_size=12),
    st.sampled_from(["ok", "t", "P1", "gate", "manual", "[[gate]]", "a = 1"]),
)  # what other lines hold


@st.composite
def phase_with_paths(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A plan text whose phase P1 has a ``paths`` array of valid globs (quotes and backslashes included), written
    on one line or spread over several, with prose and another phase around it."""

    globs = [g for g in draw(st.lists(GLOB_CHARS, min_size=1, max_size=5, unique=True)) if glob_problem(g) is None]
    sep = draw(st.sampled_from([", ", ",\n  ", " ,\n"]))
    items = sep.join(json.dumps(g, ensure_ascii=draw(st.booleans())) for g in globs)
    body = f'```phase\nid = "P1"\ntitle = "t"\n# paths = ["decoy"]\npaths = [{items}]\n[[gate]]\nmanual = "ok"\n```\n'
    before = draw(st.sampled_from(["", 'prose with paths = ["x"]\n\n', phase("P0", 'manual = "m"', paths='"a/**"')]))
    return plan_text("0001", before + body), globs


def test_lint_warns_about_a_phase_block_inside_a_list_or_quote(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Only top-level fences are read: a phase inside a list item or a quote was silently missing, lint said OK."""
    root = repo({"plans/0001-x.md": NESTED_PLAN})
    lines = NESTED_PLAN.split("\n")
    where = [
        i + 1
        for i, line in enumerate(lines)
        if re.search(r"(```|~~~~)(phase|plan)", line) and not line.startswith(("```", "  ```"))
    ]
    res = cli(root, "lint")
    assert res.code == 0, res.out + res.err
    assert res.out.splitlines() == [
        f"plans/0001-x.md:{where[0]}: warning: a phase block inside a list or quote is prose, not read (move it to the top level)",
        f"plans/0001-x.md:{where[1]}: warning: a phase block inside a list or quote is prose, not read (move it to the top level)",
        f"plans/0001-x.md:{where[2]}: warning: a plan block inside a list or quote is prose, not read (move it to the top level)",
        "1 plan file(s) OK, 3 warning(s)",
    ]
    doc = json.loads(cli(root, "status", "--json").out)
    assert [p["id"] for p in doc["plans"][0]["phases"]] == ["P1", "P2"]


def test_lint_says_nothing_of_top_level_blocks(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    root = repo(
        {
            "plans/0001-x.md": "\ufeff"
            + plan_text("0001", phase("P1", 'manual = "reviewed"'))
            + '- a list\n\n```phase\nid = "P2"\ntitle = "t"\n[[gate]]\nmanual = "ok"\n```\n'
        }
    )
    res = cli(root, "lint")
    assert (res.code, res.out) == (0, "1 plan file(s) OK\n"), res.out + res.err


@settings(max_examples=400, deadline=None)
@given(text=markdown())
def test_the_prefilter_never_skips_a_file_with_a_nested_block(text: str) -> None:
    """lint parses a plan file for nested blocks only when MAYBE_NESTED finds a line that may open one."""
    from tracker.commands.lint import MAYBE_NESTED
    from tracker.plans.parse import nested_blocks

    if nested_blocks(text):
        assert MAYBE_NESTED.search(text) is not None


@pytest.mark.slow
@settings(max_examples=20000, deadline=None)
@given(text=markdown())
def test_the_prefilter_never_skips_a_file_with_a_nested_block_deep(text: str) -> None:
    test_the_prefilter_never_skips_a_file_with_a_nested_block.hypothesis.inner_test(text)  # type: ignore[attr-defined]


def test_lint_warns_about_a_paths_glob_that_matches_no_file(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """``paths = ["src"]`` matches a file named src, not the directory: the phase never went stale, lint said OK."""
    root = repo({"plans/0001-x.md": PATHS_PLAN, "src/a.py": "x = 1\n", "tests/test_a.py": "def test_a(): pass\n",
                 "docs/x.md": "d\n"})  # fmt: skip
    (root / "lib").mkdir()
    (root / "lib" / "new.py").write_text("untracked, not ignored: status fingerprints it\n")
    lines = PATHS_PLAN.split("\n")
    p1, lib = lines.index('paths = ["src", "tests/", "srcc/**", "src/*.py"]') + 1, lines.index('  "lib",') + 1
    res = cli(root, "lint")
    assert res.code == 0, res.out + res.err
    assert res.out.splitlines() == [
        f"plans/0001-x.md:{p1}: warning: phase P1: paths glob 'src' matches no file (did you mean 'src/'?)",
        f"plans/0001-x.md:{p1}: warning: phase P1: paths glob 'srcc/**' matches no file",
        f"plans/0001-x.md:{lib}: warning: phase P2: paths glob 'lib' matches no file (did you mean 'lib/'?)",
        "1 plan file(s) OK, 3 warning(s)",
    ]
    doc = json.loads(cli(root, "lint", "--json").out)
    assert [(w["line"], w["message"]) for w in doc["warnings"]][:1] == [
        (p1, "warning: phase P1: paths glob 'src' matches no file (did you mean 'src/'?)")
    ]


def test_a_paths_glob_that_matches_no_file_never_makes_its_phase_stale(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Why the warning matters: with ``paths = ["src"]`` a signed-off phase stays done whatever src/ becomes."""
    root = repo({"plans/0001-x.md": plan_text("0001", phase("P1", 'manual = "reviewed"', paths='"src"')), "src/a.py": "x = 1\n",
                 ".gitignore": ".tracker/cache/\n.tracker/lock\n"})  # fmt: skip
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "read it").code == 0, "signoff"
    (root / "src/a.py").write_text("x = 2\n")
    assert gate_of(cli, root)[0] == "done"
    assert "paths glob 'src' matches no file (did you mean 'src/'?)" in cli(root, "lint").out


@settings(max_examples=300, deadline=None)
@given(case=phase_with_paths())
def test_an_unmatched_glob_is_warned_about_inside_its_phase(case: tuple[str, list[str]]) -> None:
    from tracker.commands.lint import _glob_line

    text, globs = case
    plan, problems = parse_plan("plans/0001-x.md", text)
    assert plan is not None and not problems, problems
    ph = next(p for p in plan.phases if p.id == "P1")
    lines = text.split("\n")
    for glob in globs:
        line = _glob_line(text, ph, glob)
        # A line of the phase's ``paths`` array (its own, where written without escapes): never the comment above.
        paths_line = next(i + 1 for i in range(ph.line, ph.end_line) if lines[i].startswith("paths = ["))
        assert paths_line <= line < ph.end_line and not lines[line - 1].startswith("[[gate]]")
        if line != paths_line:
            assert f'"{glob}"' in lines[line - 1] or f"'{glob}'" in lines[line - 1]


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(case=phase_with_paths())
def test_an_unmatched_glob_is_warned_about_inside_its_phase_deep(case: tuple[str, list[str]]) -> None:
    test_an_unmatched_glob_is_warned_about_inside_its_phase.hypothesis.inner_test(case)  # type: ignore[attr-defined]


def lint_of(root: Path, as_json: bool = False, collect: bool = False) -> tuple[int, str]:
    import io

    from tracker.commands import lint as cmd

    out = io.StringIO()
    return cmd.run(root, collect, out=out, as_json=as_json), out.getvalue()


TREE = ["tests/a.py", "tests/sub/b.py", "tests/sub/c_test.py", "tests/x/y/z.py", "tests/[a].py"]


GLOBS = [
    "tests/**",
    "tests/*.py",
    "tests/sub/",
    "tests/s?b/*",
    "src/**",
    "tests/[ab].py",
    "**/*.py",
    "tests/**/z.py",
    "tests/[[]a].py",
    "tests/x/*",
    "*",
]


def test_lint_warns_about_a_phase_without_gates_and_test_files_outside_paths(repo: Callable[..., Path]) -> None:
    plan = plan_text("0001",
        phase("P1", 'test = "tests/test_a.py::test_x"', 'test = "tests/unit"', 'test = "src/t_in.py"', paths='"src/**"')
        + phase("P2")
        + phase("P3", 'test = "tests/test_a.py"')  # no paths: nothing can make it stale, no warning
        + phase("P4", 'test = "tests/unit/"', paths='"tests/unit/**", "src/**"'))  # fmt: skip
    root = repo({
        "plans/0001-x.md": plan, "src/a.py": "", "src/t_in.py": "def test_in():\n    pass\n",
        "tests/test_a.py": "def test_x():\n    pass\n", "tests/unit/test_b.py": "def test_b():\n    pass\n",
        "tests/unit/conftest.py": "", "tests/unit/venv/lib.py": "", "tests/unit/data.txt": "",
    })  # fmt: skip
    lines = plan.splitlines()
    p2 = lines.index('id = "P2"')  # its fence is the line before, 1-based: p2
    code, out = lint_of(root)
    assert code == 0, out
    # A gate's own test files are inputs of its evidence whatever the phase's paths (adv G6): no warning for them.
    assert out.splitlines() == [
        f"plans/0001-x.md:{p2}: warning: phase P2 has no gates: it can never be done",
        "1 plan file(s) OK, 1 warning(s)",
    ]
    code, text = lint_of(root, as_json=True)
    doc = json.loads(text)
    assert code == 0 and (doc["ok"], doc["files"], doc["problems"]) == (True, 1, [])
    assert [(w["path"], w["line"], w["message"].split(":")[0]) for w in doc["warnings"]] == [
        ("plans/0001-x.md", p2, "warning"),
    ]
    assert [w["text"] for w in doc["warnings"]] == out.splitlines()[:1]


def test_lint_json_lists_problems_and_exits_2(repo: Callable[..., Path]) -> None:

    root = repo(
        {"plans/0001-x.md": plan_text("0001", phase("P1", 'manual = "a"', depends='"P9"')), "plans/notes.md": "prose\n"}
    )
    os.mkfifo(root / "plans/0002-fifo.md")
    code, text = lint_of(root, as_json=True)
    doc = json.loads(text)
    assert code == 2 and doc["ok"] is False and doc["files"] == 2
    by_path = {(p["path"], p["line"]) for p in doc["problems"]}
    assert by_path == {("plans/0001-x.md", 11), ("plans/0002-fifo.md", None)}  # the depends line; the whole file
    assert [w["path"] for w in doc["warnings"]] == ["plans/notes.md"] and doc["warnings"][0]["line"] is None


def test_lint_does_not_warn_about_gates_an_invalid_phase_lost(repo: Callable[..., Path]) -> None:
    root = repo({"plans/0001-x.md": plan_text("0001", phase("P1", "test = 3"))})
    code, out = lint_of(root)
    assert code == 2 and "warning" not in out


@settings(max_examples=60, deadline=None)
@given(
    tree=st.lists(st.sampled_from(TREE), min_size=1, unique=True),
    paths=st.lists(st.sampled_from(GLOBS), min_size=1, max_size=3, unique=True),
    arg=st.sampled_from(["tests", "."]),
)
def test_lint_warns_about_exactly_the_test_files_whose_edit_status_would_not_see(
    tree: list[str],
    paths: list[str],
    arg: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tracker.commands.lint import phase_warnings
    from tracker.core.model import ManualGate, Phase, gate_hash
    from tracker.core.status import compute
    from tracker.plans.load import PlanFile

    root = tmp_path_factory.mktemp("tree")
    make_files(root, dict.fromkeys(tree, ""))
    ph = Phase("P1", "t", (), tuple(paths), (TestGate(arg), ManualGate("m")), line=1)
    plan = Plan("0001", "T", "plans/0001-t.md", None, (ph,))
    warned = phase_warnings(root, [PlanFile(plan.path, "", plan, [])])
    then = dict.fromkeys(tree, "1" * 40)
    run = TestRun(
        ".tracker/evidence/r.json",
        {"time": "2026-01-01T00:00:00Z", "host": "h", "args": [arg]},  # a run of all of the gate (adv F3)
        {},
        then,
        [{"nodeid": "tests/a.py::t", "outcome": "passed", "markers": []}],
    )
    signed = {
        "gate_key": "0001/P1#2",
        "gate_hash": gate_hash(ph.gates[1]),
        "by": "x",
        "why": "y",
        "time": "2026-01-01T00:00:00Z",
        "files": then,
    }
    store = Store(runs=[run], signoffs=[(".tracker/evidence/s.json", signed)])
    unseen = []  # test files whose edit leaves the done phase done
    for f in tree:
        now = {**then, f: "2" * 40}
        status = compute([plan], store, lambda now=now: FileIndex(now), lambda: None)["0001/P1"].status.value
        assert status in ("done", "stale")
        unseen += [f] if status == "done" else []
    assert (warned == []) == (not unseen)
    if unseen:
        assert len(warned) == 1 and f" {len(unseen)} test file(s) under {arg} are outside" in warned[0], (
            warned,
            unseen,
        )


MARKED = {
    "tests/test_m.py": "import pytest\n\n@getattr(pytest.mark, 'a-b')\ndef test_ab(): pass\n\ndef test_plain(): pass\n"
}


BAD_MARKER = plan_text(phases=phase("P1", 'test = "tests/test_m.py"', 'test = "tests/test_m.py"\nmarker = "a and"'))


BAD_MARKER_PROBLEM = (
    "plans/0001-demo.md:15: phase P1 gate 2: invalid -m expression 'a and': column 6: "
    "expected not or left parenthesis or identifier; got end of input"
)


def test_lint_names_an_invalid_marker_with_its_line(repo, cli) -> None:
    root = repo({"plans/0001-demo.md": BAD_MARKER, **MARKED})
    for args in (["lint"], ["lint", "--no-collect"]):
        r = cli(root, *args)
        assert (r.code, r.out) == (2, BAD_MARKER_PROBLEM + "\n1 problem(s) in 1 file(s)\n")


def test_node_ids_with_dots_and_slashes_in_parameters_still_work(repo, cli) -> None:
    tests = "import pytest\n\n@pytest.mark.parametrize('p', ['../x', '/abs'])\ndef test_p(p): pass\n"
    gates = ('test = "tests/test_p.py::test_p[../x]"', 'test = "./tests/../tests/test_p.py::test_p[/abs]"')
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", *gates)), "tests/test_p.py": tests})
    r = cli(root, "lint")
    assert (r.code, r.out) == (0, "1 plan file(s) OK\n")


def test_lint_refuses_a_test_path_symlinked_out_of_the_repository(repo, cli, tmp_path: Path) -> None:
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil/test_e.py").write_text("def test_e(): pass\n")
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/ext/test_e.py"'))})
    (root / "tests").mkdir()
    (root / "tests/ext").symlink_to(tmp_path / "evil")
    r = cli(root, "lint", "--no-collect")
    assert r.code == 2
    assert r.out == (
        f"plans/0001-demo.md:11: phase P1 gate 1: test path 'tests/ext/test_e.py' resolves to {tmp_path / 'evil/test_e.py'}, outside the repository\n"
        "1 problem(s) in 1 file(s)\n"
    )


def test_lint_reports_test_paths_it_cannot_look_at(repo, cli) -> None:
    long_name = "tests/" + "a" * 300 + ".py"
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", f'test = "{long_name}"')),
            "tests/test_a.py": "def test_a(): pass\n",
        }
    )
    r = cli(root, "lint", "--no-collect")
    assert (r.code, r.out) == (
        2,
        f"plans/0001-demo.md:11: phase P1 gate 1: cannot look at test path '{long_name}': File name too long\n1 problem(s) in 1 file(s)\n",
    )


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
