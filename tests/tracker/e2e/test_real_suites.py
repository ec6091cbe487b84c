"""Issue 30: a fixture suite in the style of more-itertools (unittest ``TestCase`` classes with ``subTest`` loops,
doctests through ``--doctest-modules``) and markdown-it-py (pytest-regressions data files, ``xfail_strict``,
platform skips, pytest-xdist). For each way of breaking it, ``tracker verify`` says what pytest's own exit status
says: the phase is done exactly when plain pytest passes, serially and under ``-n 2``, and an unmet gate names the
test that broke (under an explicit ``--dist load`` a passing folder gate split over the workers is unmet, saying so).

A skip or an xfail the gate does not allow (``skips_allowed``, ``xfails_allowed``) is the one place the two differ by
design (pytest passes, the gate stays unmet: docs/reference.md, Status rules); it is not among these mutations.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text

from tracker.commands.common import pytest_command, pytest_env

if not os.environ.get("CI"):  # in CI they are installed (the test extra): a missing one fails there, never skips
    pytest.importorskip("pytest_regressions", reason="pytest-regressions is in the test extra: pip install '.[test]'")
    pytest.importorskip("xdist", reason="pytest-xdist is in the test extra: pip install '.[test]'")

ITOOLS = '''def chunked(items, n):
    """Split ``items`` into lists of ``n``, the last one shorter.

    >>> chunked([1, 2, 3], 2)
    [[1, 2], [3]]
    >>> chunked([], 3)
    []
    """
    return [list(items[i : i + n]) for i in range(0, len(items), n)]
'''

UNIT = """import unittest

from src.itools import chunked


class ChunkedTests(unittest.TestCase):
    def test_sizes(self):
        for n in range(1, 5):
            with self.subTest(n=n):
                self.assertEqual(sum(map(len, chunked(list(range(7)), n))), 7)

    def test_last_is_shorter(self):
        for n, last in ((2, 1), (3, 1), (4, 3)):
            with self.subTest(n=n):
                self.assertEqual(len(chunked(list(range(7)), n)[-1]), last)
"""

RENDER = """from src.itools import chunked


def test_render(data_regression):
    data_regression.check({"chunks": chunked(list(range(5)), 2)})
"""

RENDER_DATA = "chunks:\n- - 0\n  - 1\n- - 2\n  - 3\n- - 4\n"

PLATFORM = """import sys

import pytest


@pytest.mark.skipif(sys.platform != "win32", reason="win32 only")
def test_windows_paths():
    assert "\\\\" in r"a\\b"


def test_everywhere():
    assert True


@pytest.mark.xfail(reason="known: chunked has no fill value", strict=True)
def test_fill_value():
    from src.itools import chunked

    assert chunked([1, 2, 3], 2)[-1] == [3, None]
"""

GATES = (
    'test = "tests/"\nskips_allowed = ["win32 only"]\nxfails_allowed = ["known: "]',
    'test = "src/itools.py"\noptions = ["--doctest-modules"]',
)

SUITE = {
    "plans/0001-suite.md": plan_text(phases=phase("P1", *GATES, paths='"src/**"')),
    "pyproject.toml": "[tool.pytest.ini_options]\nxfail_strict = true\n",
    "conftest.py": "",
    "src/__init__.py": "",
    "src/itools.py": ITOOLS,
    # No tests/__init__.py: verify forks its pytest from the process that runs it, here this suite, whose own
    # ``tests`` package (imported by tests/kernel) would shadow the fixture's: ``No module named 'tests.test_unit'``.
    "tests/test_unit.py": UNIT,
    "tests/test_render.py": RENDER,
    "tests/test_render/test_render.yml": RENDER_DATA,
    "tests/test_platform.py": PLATFORM,
}

# Each mutation: the files it changes, and what an unmet gate's line names (None: pytest passes).
MUTATIONS: dict[str, tuple[dict[str, str], str | None]] = {
    "none": ({}, None),
    "a subtest fails": ({"tests/test_unit.py": UNIT.replace("(4, 3)", "(4, 2)")}, "test_last_is_shorter"),
    "a doctest fails": ({"src/itools.py": ITOOLS.replace("[[1, 2], [3]]", "[[1, 2], [4]]")}, "itools.chunked"),
    "a regression file differs": (
        {"tests/test_render/test_render.yml": RENDER_DATA.replace("- 4", "- 5")},
        "test_render",
    ),
    "a strict xfail passes": (
        {"tests/test_platform.py": PLATFORM.replace("== [3, None]", "== [3]")},
        "test_fill_value",
    ),
    "the code breaks": ({"src/itools.py": ITOOLS.replace("i : i + n", "i : i + n - 1 or None")}, "failed"),
}


def plain_pytest(root: Path, *args: str) -> int:
    """pytest's own exit status over the gates, run as a user runs it (both gates' selections)."""
    codes = []
    for selection in (["tests/"], ["--doctest-modules", "src/itools.py"]):
        cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", *args, *selection]
        codes.append(subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, check=False).returncode)
    return max(codes)


XDIST_RUNS = {"serial": (), "xdist": ("-n", "2"), "xdist-load": ("-n", "2", "--dist", "load")}


@pytest.mark.parametrize("run", sorted(XDIST_RUNS))
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_verify_agrees_with_pytest_on_a_real_style_suite(
    repo: Callable[..., Path], cli: Callable[..., Any], mutation: str, run: str
) -> None:
    """Serially and under plain ``-n 2`` (the tracker schedules by gate: the folder gate's tests in one worker) the
    phase is done exactly when pytest passes. An explicit ``--dist load`` is xdist's own distribution."""
    changes, named = MUTATIONS[mutation]
    root = repo({**SUITE, **changes})
    extra = XDIST_RUNS[run]
    expected = plain_pytest(root, *extra)
    assert expected in (0, 1), expected  # the fixture itself collects and runs
    r = cli(root, "verify", *(f"--pytest-arg={a}" for a in extra))
    if run == "xdist-load" and expected == 0:
        # The folder's tests ran in two processes: not as `pytest tests/` runs them (round 14, F1). Unmet, saying so.
        assert r.code == 1 and "split over 2 xdist workers" in r.out, (mutation, r.out, r.err)
        return
    assert (r.code == 0) == (expected == 0), (mutation, expected, r.out, r.err)
    status = cli(root, "status").out
    assert ("done" in status.splitlines()[1]) == (expected == 0), status
    if named is None:
        assert "met   0001/P1#1 tests/: 4 passed, 1 skipped as allowed, 1 xfailed as allowed" in r.out, r.out
    else:
        unmet = [line for line in r.out.splitlines() if line.startswith("UNMET")]
        assert unmet and any(named in line for line in unmet), (mutation, r.out)
