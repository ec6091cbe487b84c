"""``tracker lint`` (tracker/commands/lint.py): what it reports, warns about, and what it costs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tracker_testutil import Calls, phase, plan_text


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
    from tracker.plans.load import load_plans

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
    from test_signoff import PLACEHOLDER_TOUCHED

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
    from tracker.plans.load import load_plans

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
