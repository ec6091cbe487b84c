"""Runs that count for nothing, walked through a real repository: options, plugins, configuration, working directories, debuggers and forked children that could turn a failure into a pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text, record, status_of

from tracker.core.model import TestGate, gate_hash


def one_gate(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line(cli: Any, root: Path) -> str:
    out = cli(root, "status").out
    return next(line for line in out.splitlines() if line.strip().startswith("P1 "))


LOGS = (
    "import logging\n\n"
    "def test_no_errors_logged(caplog):\n"
    "    logging.getLogger('app').error('db connection lost')\n"
    "    assert not caplog.records\n"
)


# fails only through pytest's log handler (a bad format call), which -p no:logging removes
BADLOG = "import logging\n\ndef test_log_call():\n    logging.getLogger('a').warning('%d', 'x')\n"


WARNS = "import warnings\n\ndef test_no_deprecated_calls():\n    warnings.warn('old_api', DeprecationWarning)\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_tests_forked_child_that_goes_on_with_the_session_writes_no_evidence(repo: Any, cli: Any) -> None:
    # The child forgets os._exit: it finishes its copy of the session later, where its test "passed".
    test = (
        "import os, time\n"
        "def test_worker():\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(1.0)\n"
        "        return\n"
        "    assert False, 'worker never reported'\n"
    )
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test})
    r = cli(root, "verify")
    assert r.code == 1 and "worker never reported" in r.out, r.out
    import time

    time.sleep(2.5)  # the child's session has ended by now
    assert " done " not in status_line(cli, root)
    assert cli(root, "verify").code == 1


@pytest.mark.parametrize(
    ("args", "test", "ini"),
    [
        (["-o", "addopts="], WARNS, "[pytest]\naddopts = -W error::DeprecationWarning\n"),
        (["--log-level=CRITICAL"], LOGS, ""),
        (["-o", "log_level=CRITICAL"], LOGS, ""),
        (["--log-disable=app"], LOGS, ""),
        (["-p", "no:logging"], BADLOG, ""),
    ],
    ids=["-o addopts=", "--log-level", "-o log_level", "--log-disable", "-p no:logging"],
)
def test_an_option_that_turns_a_failure_into_a_pass_meets_nothing(
    repo: Any, cli: Any, args: list[str], test: str, ini: str
) -> None:
    files = {"tests/test_a.py": test, **({"pytest.ini": ini} if ini else {})}
    root = one_gate(repo, "tests/test_a.py", files)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_a.py"]
    assert subprocess.run(plain, cwd=root, env=env, capture_output=True, check=False).returncode == 1
    assert cli(root, "verify").code == 1  # a run of all of the gate, as the repository configures it: it fails
    r = cli(root, "verify", *(f"--pytest-arg={a}" for a in args))
    assert r.code != 0 or " done " not in status_line(cli, root), r.out
    recorded = subprocess.run(
        [*plain, *args, "--tracker-record"], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    assert " done " not in status_line(cli, root), recorded.stdout


def test_an_ini_setting_of_a_plugin_not_loaded_meets_nothing(repo: Any, cli: Any) -> None:
    # pytest-timeout's `timeout = 1` fails a slow test where the plugin loads; with autoloading off (or the plugin
    # not installed) the test passes: a pass that is not the repository's.
    test = "import time\n\ndef test_fast_enough():\n    time.sleep(1.5)\n"
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test, "pytest.ini": "[pytest]\ntimeout = 1\n"})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tracker.pytest_plugin", "tests/test_a.py", "--tracker-record"]
    subprocess.run(cmd, cwd=root, env={**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, capture_output=True, check=False)
    evidence = sorted((root / ".tracker/evidence").glob("*.json"))
    assert evidence and "ini settings no loaded plugin reads (timeout)" in evidence[-1].read_text()
    assert " done " not in status_line(cli, root)


TWO = "def test_a():\n    pass\n\ndef test_b():\n    assert False, 'b fails'\n"


FLIP = (
    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n"
    "    report = outcome.get_result()\n"
    "    report.outcome = 'passed'\n"
)


def one_gate_r6(repo: Any, test: str, files: dict[str, str]) -> Path:
    plan = plan_text(phases=phase("P1", f'test = "{test}"', paths='"src/**", "tests/**"'))
    return repo({"plans/0001-demo.md": plan, "src/m.py": "x = 1\n", **files})


def status_line_r6(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 "))


def plain(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=root, env={**base, **(env or {})}, capture_output=True, text=True, check=False)


def test_a_plain_run_claiming_to_be_verifys_neither_hides_a_plugin_nor_stands_for_the_whole_gate(
    repo: Any, cli: Any, tmp_path: Path
) -> None:
    root = one_gate_r6(repo, "tests/test_a.py", {"tests/test_a.py": TWO})
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "flip.py").write_text(FLIP)
    gates = tmp_path / "gates.json"
    gates.write_text(json.dumps({"0001/P1#1": gate_hash(TestGate("tests/test_a.py"))}))
    flipped = plain(
        root, "tests/test_a.py", "-p", "flip", f"--tracker-gates={gates}", "--tracker-record",
        env={"PYTHONPATH": str(plugins)},
    )  # fmt: skip
    assert flipped.returncode == 0, flipped.stdout  # the plugin made both pass
    assert " done " not in status_line_r6(cli, root)
    for f in (root / ".tracker/evidence").glob("*.json"):
        f.unlink()
    partial = plain(root, "tests/test_a.py::test_a", f"--tracker-gates={gates}", "--tracker-record")
    assert partial.returncode == 0, partial.stdout
    assert " done " not in status_line_r6(cli, root)


def test_verify_refuses_a_debugger_and_another_import_mode(repo: Any, cli: Any) -> None:
    root = one_gate_r6(repo, "tests/test_a.py", {"tests/test_a.py": TWO})
    for arg in ("--trace", "--pdb", "--import-mode=importlib", "--capture=no"):
        r = cli(root, "verify", f"--pytest-arg={arg}")
        assert r.code == 3 and "may turn a failing test into a pass" in r.err, (arg, r.out, r.err)
    assert " done " not in status_line_r6(cli, root)


def test_a_git_ignored_pytest_configuration_makes_a_run_count_for_nothing(repo: Any, cli: Any) -> None:
    warns = "import warnings\n\ndef test_w():\n    warnings.warn('old', DeprecationWarning)\n"
    root = one_gate_r6(
        repo,
        "tests/test_a.py",
        {"tests/test_a.py": warns, "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'},
    )
    assert cli(root, "verify").code == 1
    with (root / ".git/info/exclude").open("a") as f:
        f.write(".pytest.ini\n")
    (root / ".pytest.ini").write_text("[pytest]\n")
    cli(root, "verify", "--force")
    (root / ".pytest.ini").unlink()
    assert " done " not in status_line_r6(cli, root)
    [newest] = sorted((root / ".tracker/evidence").glob("*.json"))[-1:]
    assert "configuration git ignores (.pytest.ini)" in newest.read_text()


WARNS_R8 = "import warnings\n\ndef f():\n    warnings.warn('old path', DeprecationWarning)\n    return 1\n"


TEST = "import sys\nsys.path.insert(0, 'src')\nimport mod\n\ndef test_w():\n    assert mod.f() == 1\n"


def warned_repo(repo: Any) -> Path:
    plan = plan_text(phases=phase("P1", 'test = "tests/test_w.py"', paths='"src/**"'))
    pyproject = '[project]\nname = "x"\nversion = "0"\n[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "pyproject.toml": pyproject,
            "src/mod.py": WARNS_R8,
            "tests/test_w.py": TEST,
            "-pno:warnings/.keep": "",  # a path of that name: argparse then takes the option for a file
        }
    )
    return root


def p1(cli: Any, root: Path) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 ")).split()[1]


FAILS = "def test_bad():\n    assert 0\n\n\ndef test_good():\n    pass\n"


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


def test_a_module_the_repository_provides_below_its_root_is_its_own(repo: Any, cli: Any) -> None:
    """F2: only the root was checked for modules the tracker had loaded; tests/secrets.py (the test folder is put
    first on sys.path) and src/markdown_it/ (pythonpath = src) ran the tracker's copies in the forked child."""
    import secrets  # noqa: F401

    import markdown_it  # noqa: F401 - loaded in this process, which verify forks

    plan = plan_text(phases=phase("P1", 'test = "tests/test_mod.py"', paths='"src/**", "tests/**"'))
    test = (
        "def test_secrets():\n    import secrets\n    assert secrets.compare_digest('a', 'b')\n\n\n"
        "def test_markdown():\n    from markdown_it import MarkdownIt\n    assert MarkdownIt().render('x') == 'own'\n"
    )
    files = {
        "plans/0001-demo.md": plan,
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "tests/secrets.py": "def compare_digest(a, b):\n    return True\n",
        "src/markdown_it/__init__.py": "class MarkdownIt:\n    def render(self, text):\n        return 'own'\n",
        "tests/test_mod.py": test,
    }
    root: Path = repo(files)
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    assert subprocess.run(plain, cwd=root, capture_output=True).returncode == 0
    r = cli(root, "verify")
    assert r.code == 0, r.out + r.err


def test_a_repository_tracker_plugin_of_the_tracker_s_name_is_refused_not_dropped(repo: Any, tmp_path: Path) -> None:
    """F7: the repository's own tracker/pytest_plugin.py (loaded by its conftest) was silently left out of verify's run,
    the tracker's plugin registered under that name first: its leak check never failed the test."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**", "tracker/**"'))
    plugin = (
        "import pytest\n\nfrom tracker import registry\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_call(item):\n    yield\n    if registry.OPEN:\n        registry.OPEN.clear()\n"
        "        raise AssertionError('leaked')\n"
    )
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "tracker/__init__.py": "",
            "tracker/registry.py": "OPEN = []\n",
            "tracker/pytest_plugin.py": plugin,
            "conftest.py": 'pytest_plugins = ["tracker.pytest_plugin"]\n',
            "tests/test_x.py": "from tracker import registry\n\n\ndef test_leaks():\n    registry.OPEN.append('socket')\n",
        }
    )
    cmd = [sys.executable, "-m", "tracker", "verify", "--root", str(root)]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "tracker/pytest_plugin.py has the name of the tracker's own pytest plugin" in r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_a_run_with_a_collection_option_the_gate_lacks_is_not_a_run_of_the_gate_alone(repo: Any, cli: Any) -> None:
    """A6: --doctest-modules collected a doctest that reset the state between the gate's tests."""
    plan = plan_text(phases=phase("P1", 'test = "tests/"', paths='"tests/**"'))
    files = {
        "plans/0001-demo.md": plan,
        "tests/__init__.py": "",
        "tests/state.py": "SEEN = []\n",
        "tests/test_1.py": "from tests import state\n\n\ndef test_a():\n    state.SEEN.append(1)\n",
        "tests/test_2.py": (
            'from tests import state\n\n\ndef reset():\n    """Forget.\n\n    >>> reset()\n    """\n'
            "    state.SEEN.clear()\n\n\ndef test_b():\n    assert state.SEEN == []\n"
        ),
    }
    root: Path = repo(files)
    assert cli(root, "verify").code == 1
    assert record(root, "tests/", "--doctest-modules") == 0
    assert status_of(cli, root) == "planned"


def test_a_run_started_in_another_directory_is_not_a_run_of_the_gate_alone(repo: Any, cli: Any) -> None:
    """A4: `cd tools; pytest ../tests/test_x.py` passed a test that fails at the root (it reads a file relative to the
    working directory, which `python -m pytest` also puts first on sys.path), and retired its failure there."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))
    body = "from pathlib import Path\n\n\ndef test_x():\n    assert not Path('flag').exists()\n"
    root: Path = repo(
        {"plans/0001-demo.md": plan, "pytest.ini": "[pytest]\n", "flag": "", "tools/keep": "", "tests/test_x.py": body}
    )
    assert record(root, "tests/test_x.py") == 1
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "../tests/test_x.py", "--tracker-record"]
    assert subprocess.run(cmd, cwd=root / "tools", capture_output=True).returncode == 0
    evidence = sorted((root / ".tracker" / "evidence").glob("*.json"))
    assert len(evidence) == 2 and '"cwd": "tools"' in evidence[-1].read_text()
    assert status_of(cli, root) == "planned"


def test_a_pass_from_another_working_directory_counts_for_nothing(repo: Any, cli: Any) -> None:
    """F10: `cd tools; python -m pytest ../tests/test_x.py` passed a test that fails at the root, with no failure
    recorded before: the A4 rule covered only retiring one."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))
    body = "from pathlib import Path\n\n\ndef test_x():\n    assert not Path('flag').exists()\n"
    root: Path = repo(
        {"plans/0001-demo.md": plan, "pytest.ini": "[pytest]\n", "flag": "", "tools/keep": "", "tests/test_x.py": body}
    )
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "../tests/test_x.py", "--tracker-record"]
    assert subprocess.run(cmd, cwd=root / "tools", capture_output=True).returncode == 0
    r = cli(root, "status", "--json")
    assert status_of(cli, root) == "planned" and "the working directory tools (not the rootdir)" in r.out, r.out


PLAN = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))


def test_options_declared_by_the_environment_are_only_those_a_gate_may_carry(repo: Any, cli: Any) -> None:
    """A5: TRACKER_GATE_OPTIONS (verify's, but anyone's to set) declared `-W ignore` as the gate's own, so a run
    that ignored the warning the ini makes an error recorded nothing altered."""
    ini = "[pytest]\nfilterwarnings =\n    error\n"
    body = "import warnings\n\n\ndef test_w():\n    warnings.warn('no')\n"
    root: Path = repo({"plans/0001-demo.md": PLAN, "pytest.ini": ini, "tests/test_x.py": body})
    gates = root / "gates.json"
    gates.write_text("{}")
    env = {"TRACKER_GATE_OPTIONS": json.dumps(["-W", "ignore"])}
    assert record(root, "tests/test_x.py", "-W", "ignore", f"--tracker-gates={gates}", env=env) == 0
    assert status_of(cli, root) != "done"


def test_configuration_in_a_folder_above_the_repository_is_not_the_repository_s(
    repo: Any, cli: Any, tmp_path: Path
) -> None:
    """F1: the repository has no pytest configuration; a workspace above it has an ini and a conftest.py giving a
    fixture. pytest there used both (the ini's folder is the conftest cutoff): the pass is the workspace's, a clone
    fails `pytest tests/test_x.py` (fixture 'settings' not found)."""
    body = 'def test_a(settings):\n    assert settings["debug"] is False\n'
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": body})
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(
        'import pytest\n\n\n@pytest.fixture\ndef settings():\n    return {"debug": False}\n'
    )
    r = cli(root, "verify")
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    altered = json.loads(evidence.read_text())["provenance"].get("altered", "")
    assert f"configuration outside the repository ({tmp_path / 'pytest.ini'})" in altered, r.out
    assert f"configuration outside the repository ({tmp_path / 'conftest.py'})" in altered
    assert status_of(cli, root) != "done"


EVIL = (
    "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.outcome = 'passed'\n    return report\n"
)


def test_a_plugin_declared_as_the_gates_options_counts_only_for_gates_that_load_it(repo: Any, cli: Any) -> None:
    """A5b (round 14): TRACKER_GATE_OPTIONS (verify's, anyone's to set) declared `-p evil` as the gates' own, so the
    plugin's load was not counted; evil turns every failure into a pass, and a gate without `-p evil` met."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_x.py"\noptions = ["-p", "evil"]', paths='"tests/**"')
    )
    body = "def test_a():\n    assert 1 == 2\n"
    root: Path = repo({"plans/0001-demo.md": plan, "evil.py": EVIL, "tests/test_x.py": body})
    gates = root / "gates.json"
    gates.write_text("{}")
    env = {"TRACKER_GATE_OPTIONS": json.dumps(["-p", "evil"]), "PYTHONPATH": str(root)}
    assert record(root, "tests/test_x.py", "-p", "evil", f"--tracker-gates={gates}", env=env) == 0
    assert status_of(cli, root, "P1") != "done"
    out = cli(root, "show", "0001/P1").out
    assert "plugins the gate's options do not load (-p evil)" in out, out
    assert status_of(cli, root, "P2") == "done"  # the gate that loads it is defined with it (its plugin is the repo's)
