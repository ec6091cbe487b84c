"""Adversarial round 12 (issue 24): each finding a test that failed before its fix. The rule they share: a failure
stands until a run of its gate alone passes the test (tracker.core.testgate.TestIndex._alone), and verify runs an unmet
gate alone when it ran it beside others."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tracker_testutil import git, phase, plan_text, record, status_of


def one_gate(repo: Any, test: str, **files: str) -> Path:
    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**", "mod.py"'))
    return repo(
        {"plans/0001-demo.md": plan, "tests/test_x.py": test, **{k.replace("__", "/"): v for k, v in files.items()}}
    )


def test_a_test_that_passes_only_after_another_is_not_met_by_running_that_one_first(repo: Any, cli: Any) -> None:
    """F1: b runs first in its file and passes only after a: its failure was retired by ``pytest ::a ::b``."""
    test = "STATE = []\n\n\ndef test_b():\n    assert STATE == ['a']\n\n\ndef test_a():\n    STATE.append('a')\n"
    root = one_gate(repo, test)
    assert cli(root, "verify").code == 1
    assert record(root, "tests/test_x.py::test_a", "tests/test_x.py::test_b") == 0
    assert status_of(cli, root) == "planned"
    assert cli(root, "verify").code == 1


def test_a_test_that_fails_alone_is_not_met_by_verify_running_it_beside_another_gate(repo: Any, cli: Any) -> None:
    """F2: verify ran every gate in one session, where another gate's test set the state this one needs; pytest on
    the gate alone fails. verify now runs such an unmet gate alone."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/test_1.py"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_2.py"', paths='"tests/**"')
    )
    files = {
        "plans/0001-demo.md": plan,
        "tests/__init__.py": "",
        "tests/state.py": "SEEN = []\n",
        "tests/test_1.py": "from tests import state\n\n\ndef test_setup_state():\n    state.SEEN.append(1)\n",
        "tests/test_2.py": "from tests import state\n\n\ndef test_needs_state():\n    assert state.SEEN == [1]\n",
    }
    root: Path = repo(files)
    assert record(root, "tests/test_2.py") == 1
    r = cli(root, "verify", "--force")
    assert r.code == 1 and "running 1 unmet gate(s) alone" in r.out, r.out + r.err
    assert (status_of(cli, root, "P1"), status_of(cli, root, "P2")) == ("done", "planned")


def test_a_run_that_skipped_a_test_the_failure_ran_after_never_retires_it(repo: Any, cli: Any) -> None:
    """F5: a skipped in the passing run (its backend missing) left nothing behind for b."""
    test = (
        "import os\n\nimport pytest\n\nSTATE = []\n\n\n"
        "@pytest.mark.skipif(bool(os.environ.get('NO_A')), reason='needs the A backend')\n"
        "def test_a():\n    STATE.append('dirty')\n\n\ndef test_b():\n    assert not STATE\n"
    )
    root = one_gate(repo, test)
    assert cli(root, "verify").code == 1
    assert record(root, "tests/test_x.py", env={"NO_A": "1"}) == 0
    assert status_of(cli, root) == "planned"


def test_a_module_imported_beside_the_gate_never_retires_its_failure_but_its_own_gate_alone_is_met(
    repo: Any, cli: Any
) -> None:
    """F8: test_z sets decimal's precision at import, so pytest on tests/ fails test_b; P2's run of test_b.py alone
    passed it and retired the failure for P1's gate too."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_b.py"', paths='"tests/test_b.py"')
    )
    files = {
        "plans/0001-demo.md": plan,
        "tests/test_b.py": "import decimal\n\n\ndef test_default_precision():\n    assert decimal.getcontext().prec == 28\n",
        "tests/test_z.py": (
            "import decimal\n\ndecimal.getcontext().prec = 5\n\n\n"
            "def test_rounding():\n    assert str(decimal.Decimal(1) / 3) == '0.33333'\n"
        ),
    }
    root: Path = repo(files)
    assert cli(root, "verify", "0001/P1").code == 1
    assert cli(root, "verify", "0001/P2").code == 0
    assert (status_of(cli, root, "P1"), status_of(cli, root, "P2")) == ("planned", "done")
    r = cli(root, "verify", "--force")  # both gates in one session: P2 fails there (pytest's failure there too)
    assert r.code == 1 and "alone" not in r.out and status_of(cli, root, "P2") == "regressed", r.out
    assert cli(root, "verify", "0001/P2").code == 0 and status_of(cli, root, "P2") == "done"


def test_an_ingested_pass_never_retires_a_failure(repo: Any, cli: Any, tmp_path: Path) -> None:
    """F4: an ingested reportlog is judged without its order; it records no arguments either, so it is never a run of
    the gate alone."""
    test = "STATE = []\n\n\ndef test_a():\n    STATE.append(1)\n\n\ndef test_b():\n    assert not STATE\n"
    root = one_gate(repo, test)
    assert cli(root, "verify").code == 1
    log = tmp_path / "rl.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_x.py::test_b",
        "tests/test_x.py::test_a",
    ]
    assert subprocess.run([*cmd, f"--report-log={log}"], cwd=root, capture_output=True).returncode == 0
    assert cli(root, "ingest", str(log)).code == 0
    assert status_of(cli, root) == "planned"


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


def test_a_file_edited_while_the_run_ran_leaves_its_passes_uncounted(repo: Any, cli: Any) -> None:
    """F9: the run's file ids are read at its start; an edit saved mid-run (taken back after) ran other code. Here a
    test makes the edit itself."""
    test = (
        "from pathlib import Path\n\n\ndef test_a_edit():\n"
        "    Path('mod.py').write_text('def answer():\\n    return 42\\n')\n\n\n"
        "def test_b_answer():\n    import mod\n\n    assert mod.answer() == 42\n"
    )
    root = one_gate(repo, test, **{"mod.py": "def answer():\n    return 41\n"})
    r = cli(root, "verify")
    assert "files changed while it ran: mod.py" in r.out, r.out
    git(root, "checkout", "-q", "mod.py")
    assert status_of(cli, root) != "done"
