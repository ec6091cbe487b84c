"""Adversarial round 10 (issue 24): each finding a test that failed before its fix. The C dialect's digit
separator (F7) is in test_comments.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import git, phase, plan_text, status_of

RUNS = "import subprocess\n\n\ndef test_run():\n    assert subprocess.run(['./bin/run.sh']).returncode == 0\n"


def script_repo(repo: Any, gate: str = "tests/test_run.py") -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{gate}"', paths='"bin/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "bin/run.sh": "#!/bin/sh\nexit 0\n", "tests/test_run.py": RUNS})
    (root / "bin/run.sh").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "executable")
    return root


def test_a_chmod_stales_the_phase_where_git_ignores_modes(repo: Any, cli: Any) -> None:
    """F1: with ``core.fileMode=false`` (WSL, network file systems) git status never reports a chmod, so the
    executable's id kept its mode and the phase stayed done while the test failed."""
    root = script_repo(repo)
    git(root, "config", "core.fileMode", "false")
    assert cli(root, "verify").code == 0 and status_of(cli, root) == "done"
    (root / "bin/run.sh").chmod(0o644)
    assert status_of(cli, root) == "stale"
    assert cli(root, "verify").code == 1


def test_an_ingested_run_knows_the_modes_of_its_commit(repo: Any, cli: Any, tmp_path: Path) -> None:
    """F5: ingest took a commit's ids from ``git ls-tree`` without the mode, so a JUnit run at the executable's
    commit matched a later commit where the same bytes no longer run."""
    root = script_repo(repo, gate="tests/test_run.py::test_run")
    junit = tmp_path / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "tests"]
    assert subprocess.run(cmd, cwd=root, capture_output=True).returncode == 0
    (root / "bin/run.sh").chmod(0o644)
    git(root, "commit", "-qam", "no longer executable")
    assert cli(root, "ingest", "--commit", "HEAD~1", str(junit)).code == 0
    assert status_of(cli, root) != "done"


IMPL = "def answer():\n    return {}\n"
USES = "import sys\nsys.path.insert(0, 'src')\nimport {}\n\n\ndef test_answer():\n    assert {}.answer() == 42\n"


def same_times(*paths: Path) -> None:
    for path in paths:
        os.utime(path, (1767225600, 1767225600))  # one second, as one checkout writes them


def test_a_link_pointed_elsewhere_never_runs_the_old_bytecode(
    repo: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F6: Python trusts a .pyc while its source keeps its size and modification second; verify's cache was pruned
    by the followed file's inode change, so a link repointed to a file of the same size and second ran the old
    code and the phase was done."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    plan = plan_text(phases=phase("P1", 'test = "tests/test_impl.py"', paths='"src/**"'))
    files = {"src/good.py": IMPL.format(42), "src/bad.py": IMPL.format(41), "tests/test_impl.py": USES.format(*"mm")}
    root: Path = repo({"plans/0001-demo.md": plan, **files}, commit=False)
    same_times(root / "src/good.py", root / "src/bad.py")
    (root / "src/m.py").symlink_to("good.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "good")
    assert cli(root, "verify").code == 0
    (root / "src/m.py").unlink()
    (root / "src/m.py").symlink_to("bad.py")
    git(root, "commit", "-qam", "bad")
    assert cli(root, "verify").code == 1 and status_of(cli, root) != "done"


def test_a_folder_renamed_into_place_never_runs_the_old_bytecode(
    repo: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F6b: a rename keeps each file's inode times, so a package swapped in by ``mv`` kept the old one's .pyc."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    plan = plan_text(phases=phase("P1", 'test = "tests/test_pkg.py"', paths='"pkg/**"'))
    test = "import os\nimport sys\nsys.path.insert(0, os.getcwd())\nfrom pkg.mod import answer\n\n\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": IMPL.format(42),
        "alt/__init__.py": "",
        "alt/mod.py": IMPL.format(41),
        "tests/test_pkg.py": test + "def test_answer():\n    assert answer() == 42\n",
        ".gitignore": "alt/\n",
    }
    root: Path = repo({"plans/0001-demo.md": plan, **files}, commit=False)
    same_times(root / "pkg/mod.py", root / "alt/mod.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "42")
    assert cli(root, "verify").code == 0
    (root / "pkg").rename(root / "old")
    (root / "alt").rename(root / "pkg")
    git(root, "commit", "-qam", "41")
    assert cli(root, "verify").code == 1 and status_of(cli, root) != "done"


def test_the_repository_s_own_module_is_the_one_its_tests_import(repo: Any, cli: Any) -> None:
    """F4: verify forks its own process, which had imported ``secrets`` (and pydantic, markdown_it, ...) from the
    interpreter's libraries; a fresh ``python -m pytest`` imports the repository's ``secrets.py`` (``sys.path[0]``).
    Such a repository's tests now run in a new interpreter, as pytest alone would run them."""
    import secrets  # noqa: F401 - loaded in this process, which verify forks

    plan = plan_text(phases=phase("P1", 'test = "tests/test_s.py"', paths='"secrets.py"'))
    test = "import secrets\n\n\ndef test_s():\n    assert secrets.token_hex() == 'the repository'\n"
    files = {"secrets.py": "def token_hex(n=None):\n    return 'the repository'\n", "tests/test_s.py": test}
    root: Path = repo({"plans/0001-demo.md": plan, **files})
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    assert subprocess.run(plain, cwd=root, capture_output=True).returncode == 0
    r = cli(root, "verify")
    assert r.code == 0 and status_of(cli, root) == "done", r.out + r.err


def test_verify_collects_each_test_file_once(repo: Any, cli: Any, tmp_path: Path) -> None:
    """pytest collects a file given on the command line by collecting its folder again for each such file: verify's
    run of gates on 4 files of one folder made 16 file nodes (quadratic: ~190 ms of CPU at 1,000 gates). Each
    folder's first report now serves the files after it (tracker.plugin.collection.DirectoryReports)."""
    log = tmp_path / "collected.txt"
    conftest = (
        f"def pytest_collect_file(file_path, parent):\n    open({str(log)!r}, 'a').write(file_path.name + '\\n')\n"
    )
    gates = [f'test = "tests/test_{i}.py"' for i in range(4)]
    plan = plan_text(phases=phase("P1", *gates, paths='"tests/**"'))
    tests = {f"tests/test_{i}.py": f"def test_{i}():\n    pass\n" for i in range(4)}
    root: Path = repo({"plans/0001-demo.md": plan, "conftest.py": conftest, **tests})
    assert cli(root, "verify").code == 0
    seen = log.read_text().split()
    assert sorted(n for n in seen if n.startswith("test_")) == [f"test_{i}.py" for i in range(4)], seen


def library(tmp_path: Path) -> Path:
    """A library repository whose v1 answers 41, v2 42 and v3 0."""
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    for tag, answer in (("v1", 41), ("v2", 42), ("v3", 0)):
        (lib / "lib.py").write_text(IMPL.format(answer))
        git(lib, "add", "-A")
        git(lib, "commit", "-qm", tag)
        git(lib, "tag", tag)
    return lib


@pytest.mark.parametrize("ignore", [False, True])
def test_a_submodule_s_checkout_and_changes_stale_the_phase(repo: Any, cli: Any, tmp_path: Path, ignore: bool) -> None:
    """F2: git status reports a submodule at another commit than recorded; read as a file it dropped out of the
    fingerprint, so moving it on (or editing it) staled nothing. F3: with ``ignore = all`` in .gitmodules git status
    never reported it at all."""
    lib = library(tmp_path)
    plan = plan_text(phases=phase("P1", 'test = "tests/test_lib.py"', paths='"vendor/lib"'))
    test = "import sys\nsys.path.insert(0, 'vendor/lib')\nfrom lib import answer\n\n\ndef test_answer():\n"
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_lib.py": test + "    assert answer() == 42\n"})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(root / "vendor/lib", "checkout", "-q", "v1")
    if ignore:
        git(root, "config", "-f", ".gitmodules", "submodule.vendor/lib.ignore", "all")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the library at v1")
    git(root / "vendor/lib", "checkout", "-q", "v2")  # working on the library: v2 passes
    assert cli(root, "verify").code == 0 and status_of(cli, root) == "done"
    git(root / "vendor/lib", "checkout", "-q", "v3")  # v3 breaks it
    assert status_of(cli, root) == "stale"
    git(root / "vendor/lib", "checkout", "-q", "v2")
    assert status_of(cli, root) == "done"
    (root / "vendor/lib/lib.py").write_text(IMPL.format(0))  # an edit inside it
    assert status_of(cli, root) == "stale"


STATE = "STATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\ndef test_b():\n    assert STATE == [], 'test_a left state'\n"


@pytest.mark.parametrize("narrow", [["-k", "test_b"], ["--deselect", "tests/test_state.py::test_a"]])
def test_a_failure_stands_until_it_passes_with_the_tests_it_failed_with(repo: Any, cli: Any, narrow: list[str]) -> None:
    """F8: each test's newest outcome counted, so a test that fails only after another ran (state left behind)
    passed under ``-k`` or a ``--deselect`` of that other, and the gate was met while pytest on the gate failed."""
    plan = plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_state.py": STATE})
    assert cli(root, "verify").code == 1
    r = cli(root, "verify", "--force", *(f"--pytest-arg={a}" for a in narrow))
    assert r.code == 1 and status_of(cli, root) != "done", r.out + r.err
    (root / "tests/test_state.py").write_text(STATE.replace("STATE.append(1)", "pass"))  # the fix
    git(root, "commit", "-qam", "test_a leaves nothing")
    assert cli(root, "verify").code == 0 and status_of(cli, root) == "done"  # together now: the failure is retired
