"""What a pass stood on changed: modes, links, bytecode, submodules, files git ignores or does not watch, edits during the run and partial runs on new code stale the phase."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import git, phase, plan_text, record, status_of

from tracker.commands.common import pytest_command, pytest_env


def one_gate(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line(cli: Any, root: Path) -> str:
    out = cli(root, "status").out
    return next(line for line in out.splitlines() if line.strip().startswith("P1 "))


def test_a_fifo_where_a_covered_file_was_neither_hangs_nor_passes(repo: Any, cli: Any) -> None:
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": "def test_a():\n    pass\n"})
    assert cli(root, "verify").code == 0
    (root / "src/m.py").unlink()
    os.mkfifo(root / "src/m.py")
    proc = subprocess.run(
        [sys.executable, "-m", "tracker", "status"], cwd=root, capture_output=True, text=True, timeout=60, check=False
    )
    line = next(x for x in proc.stdout.splitlines() if x.strip().startswith("P1 "))
    assert " stale " in line and "src/m.py" in line, proc.stdout


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_git_was_told_not_to_watch_still_stales_the_phase(repo: Any, cli: Any, flag: str) -> None:
    test = "import sys\nsys.path.insert(0, 'src')\nimport m\n\ndef test_a():\n    assert m.x == 1\n"
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test})
    assert cli(root, "verify").code == 0
    git(root, "update-index", flag, "src/m.py")
    (root / "src/m.py").write_text("x = 2\n")
    line = status_line(cli, root)
    assert " stale " in line and "src/m.py" in line, line
    r = cli(root, "verify")
    assert r.code == 1, r.out


def test_a_recorded_plain_run_never_runs_bytecode_older_than_the_source(repo: Any, cli: Any) -> None:
    # An edit that keeps the file's size and modification time (inside one second, `cp -p`, `rsync -t`): Python
    # trusts the __pycache__ entry of the old code; the recorded run must not.
    test = "import sys\nsys.path.insert(0, 'src')\nfrom m import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    root = one_gate(
        repo, "tests/test_a.py", {"src/m.py": "def add(a, b):\n    return a + b\n", "tests/test_a.py": test}
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_a.py", *args]
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)

    assert pytest_run().returncode == 0  # writes src/__pycache__/m.*.pyc
    source = root / "src/m.py"
    st = source.stat()
    source.write_text("def add(a, b):\n    return a - b\n")  # same size
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    git(root, "commit", "-qam", "break")
    recorded = pytest_run("--tracker-record")
    assert recorded.returncode == 1, recorded.stdout
    assert " done " not in status_line(cli, root)


TWO = "def test_a():\n    pass\n\ndef test_b():\n    assert False, 'b fails'\n"


def one_gate_r6(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**", "tests/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line_r6(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 "))


def plain(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=root, env={**base, **(env or {})}, capture_output=True, text=True, check=False)


def test_a_test_added_since_the_run_that_named_the_gates_tests_makes_it_stale(repo: Any, cli: Any) -> None:
    # Normal work, no malice: verify, add a failing test to the gate's file, run only the old test.
    root = one_gate_r6(repo, "tests/test_a.py", {"tests/test_a.py": "def test_a():\n    pass\n"})
    assert cli(root, "verify").code == 0
    (root / "tests/test_a.py").write_text(TWO.replace("test_b", "test_new_feature"))
    git(root, "commit", "-qam", "a new test")
    assert plain(root, "tests/test_a.py::test_a", "--tracker-record").returncode == 0
    line = status_line_r6(cli, root)
    assert " done " not in line, line
    assert cli(root, "verify").code == 1  # and verify runs it: the new test fails


def test_bytecode_read_before_the_recorder_moved_the_caches_is_named(repo: Any, cli: Any) -> None:
    # A -p plugin in the ini's addopts imports the repository's code before any hook of the recorder runs.
    files = {
        "pytest.ini": "[pytest]\naddopts = -p mypkg.fixtures\n",
        "mypkg/__init__.py": "",
        "mypkg/fixtures.py": "from mypkg import core\n",
        "mypkg/core.py": "def add(a, b):\n    return a + b\n",
        "tests/test_a.py": "from mypkg import core\n\ndef test_add():\n    assert core.add(2, 2) == 4\n",
    }
    root = one_gate_r6(repo, "tests/test_a.py", files)
    assert plain(root, "tests/test_a.py", env={"PYTHONPATH": str(root)}).returncode == 0  # writes mypkg/__pycache__
    core = root / "mypkg/core.py"
    st = core.stat()
    core.write_text("def add(a, b):\n    return a - b\n")  # same size, its time restored: Python trusts the cache
    os.utime(core, ns=(st.st_atime_ns, st.st_mtime_ns))
    git(root, "commit", "-qam", "break")
    plain(root, "tests/test_a.py", "--tracker-record", env={"PYTHONPATH": str(root)})
    assert " done " not in status_line_r6(cli, root)


def p1(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 ")).split()[1]


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


RUNS_R10 = "import subprocess\n\n\ndef test_run():\n    assert subprocess.run(['./bin/run.sh']).returncode == 0\n"


def script_repo(repo: Any, gate: str = "tests/test_run.py") -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{gate}"', paths='"bin/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "bin/run.sh": "#!/bin/sh\nexit 0\n", "tests/test_run.py": RUNS_R10})
    (root / "bin/run.sh").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "executable")
    return root


IMPL = "def answer():\n    return {}\n"


USES = "import sys\nsys.path.insert(0, 'src')\nimport {}\n\n\ndef test_answer():\n    assert {}.answer() == 42\n"


def same_times(*paths: Path) -> None:
    for path in paths:
        os.utime(path, (1767225600, 1767225600))  # one second, as one checkout writes them


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


def test_a_folder_behind_a_link_renamed_into_place_never_runs_the_old_bytecode(
    repo: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F6: pkg -> impl; the bytecode cache was judged by the link's own times, so an impl/ renamed into place with
    files of the same size and second ran the old .pyc."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    plan = plan_text(phases=phase("P1", 'test = "tests/test_pkg.py"', paths='"pkg", "impl/**"'))
    test = "import os\nimport sys\n\nsys.path.insert(0, os.getcwd())\nfrom pkg.mod import answer\n\n\n"
    files = {
        "impl/__init__.py": "",
        "impl/mod.py": "def answer():\n    return 42\n",
        "alt/__init__.py": "",
        "alt/mod.py": "def answer():\n    return 41\n",
        "tests/test_pkg.py": test + "def test_answer():\n    assert answer() == 42\n",
        ".gitignore": "alt/\n",
    }
    root: Path = repo({"plans/0001-demo.md": plan, **files}, commit=False)
    for name in ("impl/mod.py", "alt/mod.py"):
        os.utime(root / name, (1767225600, 1767225600))
    (root / "pkg").symlink_to("impl")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "42")
    assert cli(root, "verify").code == 0
    (root / "impl").rename(root / "old")
    (root / "alt").rename(root / "impl")
    git(root, "commit", "-qam", "41")
    assert cli(root, "verify").code == 1


def one_gate_r12(repo: Any, test: str, **files: str) -> Path:
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**", "mod.py"'))
    return repo(
        {"plans/0001-demo.md": plan, "tests/test_x.py": test, **{k.replace("__", "/"): v for k, v in files.items()}}
    )


def test_a_file_edited_while_the_run_ran_leaves_its_passes_uncounted(repo: Any, cli: Any) -> None:
    """F9: the run's file ids are read at its start; an edit saved mid-run (taken back after) ran other code. Here a
    test makes the edit itself."""
    test = (
        "from pathlib import Path\n\n\ndef test_a_edit():\n"
        "    Path('mod.py').write_text('def answer():\\n    return 42\\n')\n\n\n"
        "def test_b_answer():\n    import mod\n\n    assert mod.answer() == 42\n"
    )
    root = one_gate_r12(repo, test, **{"mod.py": "def answer():\n    return 41\n"})
    r = cli(root, "verify")
    assert "files changed while it ran: mod.py" in r.out, r.out
    git(root, "checkout", "-q", "mod.py")
    assert status_of(cli, root) != "done"


def test_a_file_edited_and_put_back_while_the_run_ran_leaves_its_passes_uncounted(repo: Any, cli: Any) -> None:
    """C1: a file saved with other code mid-run and put back before the run ended has its start's content id at the
    end; its inode change time moved. Here the tests make the edit and take it back themselves."""
    test = (
        "from pathlib import Path\n\n\ndef test_a_edit():\n"
        "    Path('mod.py').write_text('def answer():\\n    return 42\\n')\n\n\n"
        "def test_b_answer():\n    import mod\n\n    assert mod.answer() == 42\n\n\n"
        "def test_c_put_back():\n    Path('mod.py').write_text('def answer():\\n    return 41\\n')\n"
    )
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": test, "mod.py": "def answer():\n    return 41\n"})
    r = cli(root, "verify")
    assert "files changed while it ran: mod.py" in r.out, r.out
    assert (root / "mod.py").read_text() == "def answer():\n    return 41\n"
    assert status_of(cli, root) != "done"


def test_a_file_a_conftest_rewrites_before_the_session_starts_is_seen(repo: Any, cli: Any) -> None:
    """F9: a conftest.py rewrote a tracked file in pytest_configure, before the recorder read the tree."""
    conftest = (
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n"
        "import mod  # noqa: E402\n\n\ndef pytest_configure(config):\n"
        "    Path(mod.__file__).write_text('def answer():\\n    return 41\\n')\n"
    )
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"**"'))
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "mod.py": "def answer():\n    return 42\n",
            "tests/conftest.py": conftest,
            "tests/test_x.py": "import mod\n\n\ndef test_a():\n    assert mod.answer() == 42\n",
        }
    )
    r = cli(root, "verify")
    assert "files changed while it ran: mod.py" in r.out, r.out
    assert status_of(cli, root) != "done"


def test_a_test_file_git_ignores_counts_no_pass(repo: Any, cli: Any) -> None:
    """A7: tests/test_gen.py is in .gitignore: it has no file id, so editing it to fail never made the folder gate
    stale. A run that ran such a file counts none of its passes."""
    plan = plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"'))
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            ".gitignore": "tests/test_gen.py\n__pycache__/\n.tracker/cache/\n.tracker/lock\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        }
    )
    (root / "tests" / "test_gen.py").write_text("def test_gen():\n    pass\n")
    assert record(root, "tests") == 0
    r = cli(root, "status", "--json")
    assert status_of(cli, root) != "done" and "test files git ignores (tests/test_gen.py)" in r.out, r.out


@pytest.mark.parametrize("copy", ["stale", "same"])
def test_the_repository_s_module_imported_from_an_outdated_copy_passes_nothing(
    repo: Any, cli: Any, tmp_path: Path, copy: str
) -> None:
    """F5: a src layout installed non-editable (here: its copy on PYTHONPATH, as site-packages would hold it); the
    tree's add() is broken, the tests import the old copy and pass. A copy of the same bytes ran the tree's code."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"src/**", "tests/**"'))
    broken = "def add(a, b):\n    return a - b\n"
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "src/calc/__init__.py": "",
            "src/calc/core.py": broken,
            "tests/test_core.py": "from calc.core import add\n\n\ndef test_add():\n    assert add(2, 2) == 4 or True\n",
        }
    )
    site = tmp_path / "site" / "calc"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("")
    (site / "core.py").write_text("def add(a, b):\n    return a + b\n" if copy == "stale" else broken)
    assert record(root, "tests/test_core.py", env={"PYTHONPATH": str(tmp_path / "site")}) == 0
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    altered = json.loads(evidence.read_text())["provenance"].get("altered", "")
    if copy == "stale":
        assert f"calc.core from {site / 'core.py'}" in altered
        assert status_of(cli, root) != "done"
    else:
        assert "copies that differ" not in altered
        assert status_of(cli, root) == "done"


BROKEN = "def add(a, b):\n    return a - b\n"


TEST_CORE = "from calc.core import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def _install(site: Path, core: str, name: str, url: str | None) -> None:
    """What a non-editable ``pip install`` of a ``python/calc`` layout leaves in ``site``: the package and its
    dist-info (METADATA, RECORD and, for a local folder, PEP 610's direct_url.json); ``url`` "egg": what a legacy
    ``setup.py install`` leaves (an .egg-info with PKG-INFO and installed-files.txt)."""
    (site / "calc").mkdir(parents=True)
    (site / "calc/__init__.py").write_text("")
    (site / "calc/core.py").write_text(core)
    if url == "egg-folder":  # the egg folder itself goes on the path (its modules inside it)
        egg = site
        (egg / "EGG-INFO").mkdir()
        (egg / "EGG-INFO/PKG-INFO").write_text(f"Metadata-Version: 1.0\nName: {name}\nVersion: 0.1\n\n")
        return
    if url == "egg":
        egg = site / f"{name}-0.1-py3.11.egg-info"
        egg.mkdir()
        (egg / "PKG-INFO").write_text(f"Metadata-Version: 1.0\nName: {name}\nVersion: 0.1\n\n")
        (egg / "installed-files.txt").write_text("../calc/__init__.py\n../calc/core.py\nPKG-INFO\n")
        return
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n\n")
    (info / "RECORD").write_text(f"calc/__init__.py,,\ncalc/core.py,,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    if url is not None:
        (info / "direct_url.json").write_text(json.dumps({"url": url, "dir_info": {}}))


SETTINGS_TEST = "from calc.settings import LIMIT\n\n\ndef test_limit():\n    assert LIMIT == 10\n"


def _ignored_settings_repo(repo: Any) -> Path:
    """One test gate whose tests import calc/settings.py, which git ignores."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"calc/**", "tests/**"'))
    return Path(
        repo(
            {
                "plans/0001-demo.md": plan,
                ".gitignore": "calc/settings.py\n.tracker/\n",
                "calc/__init__.py": "",
                "calc/settings.py": "LIMIT = 10\n",
                "tests/test_core.py": SETTINGS_TEST,
            }
        )
    )


@pytest.fixture(scope="module")
def passed_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose one test gate passed, recorded with no module git ignores."""
    import subprocess

    root = tmp_path_factory.mktemp("hostile") / "repo"
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"calc/**", "tests/**"'))
    for rel, text in {
        "plans/0001-demo.md": plan,
        ".gitignore": ".tracker/\n",
        "calc/__init__.py": "",
        "calc/settings.py": "LIMIT = 10\n",
        "tests/test_core.py": SETTINGS_TEST,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        subprocess.run(["git", *cmd], cwd=root, check=True)
    assert record(root, "tests/test_core.py") == 0
    return root


@pytest.mark.parametrize(
    ("installed_as", "altered"),
    [
        ("from-this-folder", True),  # direct_url.json names the repository
        ("same-project-elsewhere", True),  # another checkout of the project (its name is pyproject's)
        ("a-wheel-built-here", True),  # round 18: `pip install dist/*.whl` (direct_url names the wheel)
        ("egg-info", True),  # round 18: a legacy `setup.py install`
        ("egg-folder", True),  # round 19: an .egg folder on the path
        ("snapshot", True),  # round 19: a stale install equal to a snapshot elsewhere in the tree, not the source
        ("same-bytes", False),  # a fresh install: the same code ran
        ("another-project", False),  # someone else's calc: not the repository's module
    ],
)
def test_a_stale_install_of_any_layout_is_seen(
    repo: Any, cli: Any, tmp_path: Path, installed_as: str, altered: bool
) -> None:
    """A1: round 16's F5 saw a stale install only of root and ``src/`` layouts. Triton's ``python/NAME``, ``lib/``
    and ``package_dir`` remaps: the tree's add() is broken, the tests import the installed old copy and pass."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"python/**", "tests/**"'))
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "pyproject.toml": '[project]\nname = "Calc_Tools"\nversion = "0.1"\n',
            "python/calc/__init__.py": "",
            "python/calc/core.py": BROKEN,
            "tests/test_core.py": TEST_CORE,
        }
    )
    site = tmp_path / ("site.egg" if installed_as == "egg-folder" else "site")
    good = "def add(a, b):\n    return a + b\n"
    if installed_as == "snapshot":  # a committed old copy elsewhere in the tree, the same bytes as the stale install
        (root / "benchmarks/v0_1/calc").mkdir(parents=True)
        (root / "benchmarks/v0_1/calc/core.py").write_text(good)
    name, url = {
        "from-this-folder": ("something", root.as_uri()),
        "same-project-elsewhere": ("calc.tools", (tmp_path / "elsewhere").as_uri()),
        "same-bytes": ("calc-tools", root.as_uri()),
        "another-project": ("calc", "file:///opt/calc"),
        "a-wheel-built-here": ("something", (root / "dist/calc-0.1-py3-none-any.whl").as_uri()),
        "egg-info": ("Calc-Tools", "egg"),
        "egg-folder": ("calc_tools", "egg-folder"),
        "snapshot": ("calc-tools", root.as_uri()),
    }[installed_as]
    _install(site, BROKEN if installed_as == "same-bytes" else good, name, url)
    code = record(root, "tests/test_core.py", env={"PYTHONPATH": str(site)})
    assert code == (1 if installed_as == "same-bytes" else 0)
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    said = json.loads(evidence.read_text())["provenance"].get("altered", "")
    assert (f"calc.core from {site / 'calc/core.py'}" in said) is altered, said
    if installed_as != "same-bytes":
        assert (status_of(cli, root) == "done") is not altered


def test_an_edit_to_a_module_git_ignores_stales_the_gate(repo: Any, cli: Any) -> None:
    """F2: the tests import calc/settings.py, which git ignores (generated, or local): no id of the tree names it, so
    an edit to it never made the gate stale, and a run of the edited code fails."""
    root = _ignored_settings_repo(repo)
    assert record(root, "tests/test_core.py") == 0
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    assert list(json.loads(evidence.read_text())["provenance"]["ignored_modules"]) == ["calc/settings.py"]
    assert status_of(cli, root) == "done"
    (root / "calc/settings.py").write_text("LIMIT = 11\n")
    assert status_of(cli, root) == "stale"
    assert "calc/settings.py" in cli(root, "status").out
    (root / "calc/settings.py").write_text("LIMIT = 10\n")  # the same bytes again: the same code
    assert status_of(cli, root) == "done"
    (root / "calc/settings.py").unlink()
    assert status_of(cli, root) == "stale"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(
        st.one_of(
            st.sampled_from(
                [
                    "../outside.py",
                    "/etc/passwd",
                    "calc/./settings.py",
                    "calc//settings.py",
                    "",
                    ".",
                    "calc/settings.py",
                    "calc",
                    "calc/settings.py/",
                    "\x00",
                    "a" * 5000,
                ]
            ),
            st.text(min_size=1, max_size=30),
        ),
        st.sampled_from(["0" * 40, "f" * 40, "not-a-blob", "", "0" * 64]),
        max_size=4,
    )
)
def test_hostile_ignored_modules_never_crash_and_never_pass(
    passed_repo: Path, cli: Any, modules: dict[str, str]
) -> None:
    """Evidence naming ignored modules outside the tree, no path at all, or ids that are none: a clear problem or a
    stale phase, never a traceback, never a pass (no id given is any file's)."""
    [evidence] = (passed_repo / ".tracker/evidence").glob("*.json")
    doc = json.loads(evidence.read_text())
    doc["provenance"]["ignored_modules"] = modules
    evidence.write_text(json.dumps(doc))
    r = cli(passed_repo, "status")
    assert "Traceback" not in r.out + r.err
    line = next(x for x in r.out.splitlines() if x.strip().startswith("P1 "))
    assert (line.split()[1] == "done") is (not modules), r.out + r.err


def test_verify_runs_a_gate_again_when_a_module_git_ignores_changed(repo: Any, cli: Any) -> None:
    """Round 18, F2a: status said stale after an edit to calc/settings.py (git ignores it), but verify's incremental
    check found the gate "up to date with its evidence", did not run it, and said the phase was done: the tests now
    fail."""
    root = _ignored_settings_repo(repo)
    assert cli(root, "verify").code == 0
    assert "up to date" in cli(root, "verify").out  # nothing changed: not run again
    (root / "calc/settings.py").write_text("LIMIT = 11\n")
    r = cli(root, "verify")
    assert "up to date" not in r.out and r.code != 0, r.out
    assert status_of(cli, root) != "done"


def test_a_module_through_a_link_out_of_the_repository_counts_no_pass(repo: Any, cli: Any, tmp_path: Path) -> None:
    """Round 18, F2b: a tracked calc/settings.py is a link to a file outside the repository; the tree's id is the
    link's text, so an edit of the file it leads to was never seen (status and verify stayed done)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "settings.py").write_text("LIMIT = 10\n")
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"calc/**", "tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "calc/__init__.py": "", "tests/test_core.py": SETTINGS_TEST})
    (root / "calc/settings.py").symlink_to(outside / "settings.py")
    assert record(root, "tests/test_core.py") == 0
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    said = json.loads(evidence.read_text())["provenance"].get("altered", "")
    assert f"modules imported through links out of the repository (calc.settings -> {outside / 'settings.py'})" in said
    assert status_of(cli, root) != "done"


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


LIB = "X = 1\n"


TEST_A = "import sys\nsys.path.insert(0, 'src')\nimport lib\n\n\ndef test_a():\n    assert lib.X == 1\n"


TEST_B = "def test_b():\n    pass\n"


IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"


def record_partial(root: Path, *args: str) -> None:
    """A real ``pytest --tracker-record`` run of ``args``, as a user runs it by hand."""
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", *args, "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def p1_partial(root: Path, cli: Callable[..., Any]) -> dict[str, Any]:
    res = cli(root, "status", "--json")
    assert res.code == 0, res.err
    phase_data: dict[str, Any] = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_data


def partly_rerun(repo: Callable[..., Path], cli: Callable[..., Any]) -> Path:
    """Verified at the first commit; the code changes so that test_a fails; only test_b is recorded again."""
    plan = plan_text("0001", phase("P1", 'test = "tests/"', paths='"src/**"'))
    root = repo(
        {
            "plans/0001-a.md": plan,
            "src/lib.py": LIB,
            "tests/test_a.py": TEST_A,
            "tests/test_b.py": TEST_B,
            ".gitignore": IGNORE,
        }
    )
    assert cli(root, "verify").code == 0
    assert p1_partial(root, cli)["status"] == "done"
    (root / "src/lib.py").write_text("X = 2\n")
    git(root, "commit", "-qam", "X = 2: test_a fails now")
    assert p1_partial(root, cli)["status"] == "stale"
    record_partial(root, "tests/test_b.py")
    return root


def test_a_partial_run_on_new_code_does_not_make_the_tests_it_skipped_fresh(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = partly_rerun(repo, cli)
    for _ in ("cold", "warm: from the status index"):
        status = p1_partial(root, cli)
        # test_a's only pass saw X = 1: the phase's evidence does not support "done" on X = 2.
        assert status["status"] == "stale", status
        assert status["changed"] == ["src/lib.py"]


def test_verify_and_status_agree_on_a_comment_only_edit(repo: Any, cli: Any) -> None:
    """A comment edit is no change (issue 31): status says done, and verify judged freshness on the tree's bare ids,
    so it re-ran the gate status called done (the two disagreed on what is up to date)."""
    root = _ignored_settings_repo(repo)
    (root / "calc/__init__.py").write_text("X = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "code")
    assert cli(root, "verify", "0001/P1").code == 0
    (root / "calc/__init__.py").write_text("X = 1  # a comment a reviewer asked for\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a comment")
    assert status_of(cli, root) == "done"
    again = cli(root, "verify", "0001/P1")
    assert again.code == 0 and "up to date with their evidence, not re-run" in again.out + again.err
    (root / "calc/__init__.py").write_text("X = 2  # a comment a reviewer asked for\n")  # code: re-run
    git(root, "add", "-A")
    git(root, "commit", "-qm", "code again")
    assert "not re-run" not in (run := cli(root, "verify", "0001/P1")).out + run.err


def test_a_file_whose_name_is_not_utf8_is_left_out_of_the_record_and_its_phase_stays_stale(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Every recorded run lists the tree's file ids; a name that is not UTF-8 made the whole evidence file invalid
    ("holds text that is not valid Unicode"), so no run in such a repository counted, and sign-off failed to encode.
    Now the name is left out with a warning: the phase whose paths cover it finds it added since (stale, never
    done), and a phase that does not is done."""
    import os

    test = 'test = "tests/test_a.py"'
    plan = plan_text("0001", phase("P1", test, paths='"src/**"') + phase("P2", test, paths='"lib/**"'))
    root = repo({"plans/0001-a.md": plan, "tests/test_a.py": "def test_a():\n    pass\n", "lib/x.py": "x = 1\n"})
    (root / "src").mkdir()
    (root / os.fsdecode(b"src/caf\xe9.py")).write_text("y = 2\n")
    res = cli(root, "verify")
    assert res.code in (0, 1), res.out + res.err
    assert "file(s) whose name is not UTF-8 left out of the record (src/caf\\xe9.py)" in res.out + res.err
    status = {line.split()[0]: line.split()[1] for line in cli(root, "status").out.splitlines()[1:] if line.strip()}
    assert status["P2"] == "done" and status["P1"] != "done", status
    assert "invalid" not in cli(root, "check").out


def test_a_file_whose_name_is_not_utf8_deleted_after_the_run_never_makes_its_phase_done(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Round 11: left out of the record, the file's deletion after the run was no change, and the phase covering it
    went done although its test now failed (it counted the files). Recorded escaped with an id no file has, it is
    a change whatever happens to it."""
    import os

    test = 'test = "tests/test_a.py"'
    counted = "import pathlib\n\ndef test_a():\n    assert len(list(pathlib.Path('src').glob('*.dat'))) == 1\n"
    root = repo({"plans/0001-a.md": plan_text("0001", phase("P1", test, paths='"src/**"')), "tests/test_a.py": counted})
    (root / "src").mkdir()
    odd = root / os.fsdecode(b"src/plugin\xff.dat")
    odd.write_text("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "odd")
    assert cli(root, "verify").code in (0, 1)
    assert cli(root, "status").out.split("\n")[1].split()[1] != "done"
    odd.unlink()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "gone")
    assert cli(root, "status").out.split("\n")[1].split()[1] != "done"
