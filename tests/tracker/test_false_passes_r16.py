"""Adversarial round 16 (issue 24), against b3d92f7: each finding a test that failed before its fix (F1, F3, F4, F6;
F5; F2, a module git ignores that the tested code imports, is open: marking such a run altered also voided every
setuptools-scm ``_version.py`` and conda prefix inside a repository, issue 24's note)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import SKIPPABLE, phase, plan_text, record, set_newest_provenance, status_of

PLAN = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))


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


TEARDOWN_SKIP = (
    "import os\n\nimport pytest\n\n\n@pytest.fixture\ndef server():\n    yield 'srv'\n"
    "    pytest.skip('no server to clean up')\n\n\ndef test_a(server):\n"
    "    assert os.environ.get('DB_URL'), 'DB_URL must be set'\n"
)


@pytest.mark.parametrize("order", ["as pytest writes it", "skip first"])
def test_a_junit_testcase_that_failed_then_skipped_in_teardown_is_a_failure(
    repo: Any, cli: Any, tmp_path: Path, order: str
) -> None:
    """F3: pytest writes <failure> then <skipped> for a test whose call failed and whose fixture skipped in its
    teardown; the last child won, the failure read as a skip, and the older pass kept the gate met."""
    import os
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    plan = plan_text(phases=phase("P1", 'test = "tests/test_x.py::test_a"', paths='"tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "tests/test_x.py": TEARDOWN_SKIP})
    record(root, "tests/test_x.py", env={"DB_URL": "sqlite://"})
    assert status_of(cli, root) == "done"
    xml = tmp_path / "ci.xml"
    env = {k: v for k, v in os.environ.items() if k != "DB_URL"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_x.py", f"--junitxml={xml}"]
    assert subprocess.run(cmd, cwd=root, capture_output=True, env=env).returncode == 1
    tree = ET.parse(xml)
    [case] = tree.iter("testcase")
    assert [c.tag for c in case] == ["failure", "skipped"]  # pytest's own shape
    if order == "skip first":
        failure = case[0]
        case.remove(failure)
        case.append(failure)
        tree.write(xml)
    r = cli(root, "ingest", "--host", "ci", str(xml))
    assert r.code == 0, r.out + r.err
    stored = max((root / ".tracker/evidence").glob("*-ci-*.json"))
    assert [t["outcome"] for t in json.loads(stored.read_text())["tests"]] == ["failed"]


def test_a_host_name_alone_is_no_other_machine(repo: Any, cli: Any) -> None:
    """F4: two CI runners of the same hardware (hosts ci-fast and ci-slow): the fast job's run of all skipped test_b
    (an environment variable), the slow job passed b alone; the skip was taken for another machine's, and the file
    gate met though its tests never passed together (`pytest tests/test_x.py` fails)."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": SKIPPABLE})
    assert record(root, "tests/test_x.py", env={"FAST": "1"}) == 0
    set_newest_provenance(root, "host", "ci-fast")
    assert record(root, "tests/test_x.py::test_b") == 0
    set_newest_provenance(root, "host", "ci-slow")
    assert status_of(cli, root) != "done"


def test_a_time_said_to_be_better_higher_is_refused(tmp_path: Path) -> None:
    """F6: `direction: higher` on a time turned a 2x slowdown into a 2x speedup that met a ratio gate."""
    from resultfiles import case, result, write

    from tracker.store.result_files import ResultFileError, load_result

    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0, 101.0], direction="higher")])
    path = write(tmp_path / "r.json", doc)
    with pytest.raises(ResultFileError, match=r"direction is 'higher' for a time \(us\): less time is better"):
        load_result(path)


def test_a_refused_result_file_says_so_in_check(repo: Any, cli: Any) -> None:
    """The same file in a repository: `tracker check` names it (exit 1), no verdict rests on it."""
    from resultfiles import case, result

    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0, 101.0], direction="higher")])
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": "def test_a():\n    pass\n",
                       "bench/results/r.json": json.dumps(doc)})  # fmt: skip
    r = cli(root, "check")
    assert r.code == 1 and "direction is 'higher' for a time (us)" in r.out + r.err


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
