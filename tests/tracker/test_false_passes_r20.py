"""Adversarial round 20 (issue 24), against f9bc171: each finding a test that failed before its fix (N1, N2, N3, N5
and lint's folders are tested beside their modules: test_ingest, test_bench_verdict, test_hook, test_lint)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text, status_of

PLAN = plan_text(phases=phase("P1", 'test = "tests/"', paths='"calc/**"'))
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n", "tests/test_b.py": "def test_b():\n    pass\n"}
RAISES = "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef boom():\n    raise RuntimeError('x')\n"


@pytest.mark.parametrize(
    ("ignored", "pattern", "text"),
    [
        ("tests/conftest.py", "tests/conftest.py", RAISES),  # an autouse fixture that raises
        ("pytest.ini", "pytest.ini", "[pytest]\nfilterwarnings = error\n"),  # settings of every test
        ("tests/test_gen1.py", "test_gen*.py", "def test_gen():\n    assert False\n"),  # a new failing test
        ("tests/gen/test_gen2.py", "gen/", "def test_gen():\n    assert False\n"),  # in a folder git ignores
        ("tests/build/test_b.py", "build/", "def test_gen():\n    assert False\n"),  # a tracked norecursedirs
        ("tests/.hid/test_h.py", ".hid/", "def test_gen():\n    assert False\n"),  # lets pytest in (round 21)
    ],
)
def test_a_file_pytest_reads_that_git_ignores_and_that_came_after_the_run_stales_it(
    repo: Any, cli: Any, ignored: str, pattern: str, text: str
) -> None:
    """N4: a folder gate passed in verify; then a file git ignores (`.git/info/exclude`) that pytest reads appeared.
    No id of the tree names it, so status said done and verify "up to date" while `pytest tests/` failed. A run that
    read one counts no passes, so one there now came after the run: the gate is stale, and verify runs it again."""
    ini = {"pytest.ini": "[pytest]\nnorecursedirs = .git\n"} if ignored.count("/") > 1 and "gen" not in ignored else {}
    root: Path = repo({"plans/0001-demo.md": PLAN, "calc/__init__.py": "", **TESTS, **ini})
    assert cli(root, "verify").code == 0 and status_of(cli, root) == "done"
    exclude = root / ".git/info/exclude"
    exclude.write_text(exclude.read_text() + f"\n{pattern}\n")
    (root / ignored).parent.mkdir(parents=True, exist_ok=True)
    (root / ignored).write_text(text)
    assert status_of(cli, root) == "stale"
    r = cli(root, "verify")
    assert "up to date" not in r.err and r.code != 0, r.out + r.err


def test_files_git_ignores_where_pytest_never_looks_stale_nothing(repo: Any, cli: Any) -> None:
    """The rule's edges: bytecode, a dot folder, a build folder (pytest's norecursedirs), an ignored data file, and an
    ignored conftest.py in another folder than the gate's leave a done phase done."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "calc/__init__.py": "", **TESTS, "other/__init__.py": ""})
    assert cli(root, "verify").code == 0
    exclude = root / ".git/info/exclude"
    exclude.write_text(exclude.read_text() + "\n*.pyc\n.cache/\nbuild/\n*.dat\nother/conftest.py\n")
    for rel in ("tests/__pycache__/x.pyc", "tests/.cache/test_x.py", "tests/build/test_x.py", "tests/data.dat"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("def test_x():\n    assert False\n")
    (root / "other/conftest.py").write_text(RAISES)
    assert status_of(cli, root) == "done"


def test_an_ignored_package_init_on_the_way_to_a_file_gate_stales_it(repo: Any, cli: Any) -> None:
    """Round 21, 1: pytest imports `tests/__init__.py` above a file gate's file; one git ignores that appears after
    the pass (`raise RuntimeError`) errors every test, and status said done."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"', paths='"calc/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "calc/__init__.py": "", **TESTS})
    assert cli(root, "verify").code == 0 and status_of(cli, root) == "done"
    exclude = root / ".git/info/exclude"
    exclude.write_text(exclude.read_text() + "\ntests/__init__.py\n")
    (root / "tests/__init__.py").write_text("raise RuntimeError('boom')\n")
    assert status_of(cli, root) == "stale"


def test_an_ignored_link_to_a_folder_of_tests_stales_a_folder_gate(repo: Any, cli: Any, tmp_path: Path) -> None:
    """Round 21, 3: git lists an ignored link to a folder as a file (`tests/gen`, no `/`), and pytest collects
    through it."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "calc/__init__.py": "", **TESTS})
    assert cli(root, "verify").code == 0
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen/test_x.py").write_text("def test_x():\n    assert False\n")
    exclude = root / ".git/info/exclude"
    exclude.write_text(exclude.read_text() + "\ngen\n")
    (root / "tests/gen").symlink_to(tmp_path / "gen")
    assert status_of(cli, root) == "stale"


def test_what_git_ignores_and_a_run_recorded_or_never_reads_leaves_the_gate_done(repo: Any, cli: Any) -> None:
    """The rule never stales for good (round 22): an ignored helper pytest does not collect (`tests/scratch.py`), an
    ignored module the run imported (recorded with its id, hashed as before), a test's own output (`test_output.txt`),
    an ignored package folder without tests and a data folder of 2,100 files leave a gate done once verified."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "calc/__init__.py": "", **TESTS})
    exclude = root / ".git/info/exclude"
    patterns = ("tests/scratch.py", "tests/__init__.py", "tests/test_output.txt", "tests/data/", "tests/big/")
    exclude.write_text(exclude.read_text() + "\n" + "\n".join(patterns) + "\n")
    (root / "tests/scratch.py").write_text("X = 1\n")
    (root / "tests/__init__.py").write_text("")
    (root / "tests/test_output.txt").write_text("3 lines written\n")
    (root / "tests/data").mkdir()
    (root / "tests/data/__init__.py").write_text("")
    (root / "tests/big").mkdir()
    for i in range(2100):
        (root / f"tests/big/{i}.png").write_bytes(b"")
    assert cli(root, "verify").code == 0
    assert status_of(cli, root) == "done"
    assert "up to date" in cli(root, "verify").out


def test_norecursedirs_is_read_from_the_file_pytest_reads(tmp_path: Path) -> None:
    """Round 22: pytest 9's native `[tool.pytest]` table was not read, and a `pytest.ini` without a section (which
    pytest takes as its configuration all the same) was passed over for pyproject.toml's list."""
    from tracker.base.ignored_inputs import NORECURSE, norecursedirs

    assert norecursedirs(tmp_path) == (*NORECURSE, "__pycache__")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest]\nnorecursedirs = [".git"]\n')
    assert norecursedirs(tmp_path) == (".git", "__pycache__")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nnorecursedirs = ["gen", ".*"]\n')
    (tmp_path / "pytest.ini").write_text("# a comment only\n")
    assert norecursedirs(tmp_path) == (*NORECURSE, "__pycache__")
    (tmp_path / "pytest.ini").write_text("[pytest]\nnorecursedirs = .git gen\n")
    assert norecursedirs(tmp_path) == (".git", "gen", "__pycache__")
