"""Adversarial round 8 (issue 24): each finding a test that failed before its fix. The comment rule's findings
(F1-F6, F8, F11) are in test_comments.py, a file added under a result's globs (F10) in test_bench_walk.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import git, phase, plan_text

WARNS = "import warnings\n\ndef f():\n    warnings.warn('old path', DeprecationWarning)\n    return 1\n"
TEST = "import sys\nsys.path.insert(0, 'src')\nimport mod\n\ndef test_w():\n    assert mod.f() == 1\n"


def warned_repo(repo: Any) -> Path:
    plan = plan_text(phases=phase("P1", 'test = "tests/test_w.py"', paths='"src/**"'))
    pyproject = '[project]\nname = "x"\nversion = "0"\n[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "pyproject.toml": pyproject,
            "src/mod.py": WARNS,
            "tests/test_w.py": TEST,
            "-pno:warnings/.keep": "",  # a path of that name: argparse then takes the option for a file
        }
    )
    return root


def p1(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 ")).split()[1]


def test_a_plugin_blocked_after_a_double_dash_is_seen(repo: Any, cli: Any) -> None:
    """F9: pytest's early scan reads ``-pno:warnings`` anywhere, after ``--`` too; argparse took it for a file, so the
    recorder and verify's check let a run without the warnings plugin (filterwarnings = error undone) pass."""
    root = warned_repo(repo)
    assert cli(root, "verify").code == 1  # the warning is an error: the test fails
    r = cli(root, "verify", "--pytest-arg=--", "--pytest-arg=-pno:warnings")
    assert r.code == 3 and "-p no:warnings" in r.err, r.out + r.err
    assert p1(cli, root) != "done"
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_w.py", "--tracker-record"]
    run = subprocess.run([*cmd, "--", "-pno:warnings"], cwd=root, env=base, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout  # the plugin blocked: the warning is no error, the test passes
    assert p1(cli, root) != "done"


RUNS = "import subprocess\n\ndef test_run():\n    assert subprocess.run(['./src/run.sh']).returncode == 0\n"


def test_a_mode_change_stales_the_phase(repo: Any, cli: Any) -> None:
    """F7: fingerprints held blob ids only, so ``chmod -x`` of a script a test executes (committed or not) left the
    phase done while the test failed with PermissionError; incremental verify said there was nothing to run."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_run.py"', paths='"src/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "src/run.sh": "#!/bin/sh\nexit 0\n", "tests/test_run.py": RUNS})
    (root / "src/run.sh").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "executable")
    assert cli(root, "verify").code == 0 and p1(cli, root) == "done"
    (root / "src/run.sh").chmod(0o644)
    assert p1(cli, root) == "stale"
    git(root, "commit", "-qam", "not executable")
    assert p1(cli, root) == "stale"
    assert cli(root, "verify").code == 1  # incremental verify re-runs it: PermissionError


def test_a_link_turned_into_a_file_of_its_bytes_stales_the_phase(repo: Any, cli: Any) -> None:
    """F6's other half: a link's blob is the name it points to, so a plain file holding that name had the same id."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"', paths='"src/**"'))
    test = "import sys\nsys.path.insert(0, 'src')\nimport m\n\ndef test_a():\n    assert m.X == 1\n"
    root: Path = repo({"plans/0001-demo.md": plan, "src/impl.py": "X = 1\n", "tests/test_a.py": test})
    (root / "src/m.py").symlink_to("impl.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "link")
    assert cli(root, "verify").code == 0 and p1(cli, root) == "done"
    (root / "src/m.py").unlink()
    (root / "src/m.py").write_bytes(b"impl.py")  # the link's own blob, as a plain file: an AttributeError at import
    assert p1(cli, root) == "stale"
    git(root, "commit", "-qam", "a file now")
    assert p1(cli, root) == "stale"


FAILS = "def test_bad():\n    assert 0\n\n\ndef test_good():\n    pass\n"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("--deselect=tests/test_a.py::test_bad\n", 1),  # the gate's set is what pytest collected: test_bad fails
        ("-o\npython_functions=test_good\n", 3),
        ("-p\nno:python\n", 3),
        ("--tracker-record=elsewhere\n", 3),  # verify's own option, given again: it left no evidence (exit 6)
    ],
)
def test_an_argsfile_is_read_as_pytest_reads_it(repo: Any, cli: Any, content: str, code: int) -> None:
    """pytest expands ``@FILE`` arguments itself: verify's checks read the options pytest parsed, so a file of
    arguments narrows nothing that the same arguments given directly could not (adversarial round 9 left it)."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"', paths='"src/**"'))
    files = {"plans/0001-demo.md": plan, "tests/test_a.py": FAILS, "src/x.py": "X = 1\n", "args.txt": content}
    root: Path = repo(files)
    assert cli(root, "verify").code == 1
    r = cli(root, "verify", "--pytest-arg=@args.txt")
    assert r.code == code, r.out + r.err
    if code == 3:
        assert "nothing ran" in r.err or "refused" in r.err, r.err
    assert p1(cli, root) == "planned"  # the gate failed (it was never met)
    assert not (root / "elsewhere").exists()
