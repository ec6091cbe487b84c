"""Helpers for the tracker tests: real git repositories and plan text builders.

A plain module, not conftest.py: with several conftest.py files in the tree, ``from conftest import``
would find whichever was imported last.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` and return its stdout."""
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def make_files(root: Path, files: dict[str, str]) -> None:
    """Write ``{relative path: text}`` under ``root`` (cog's make_files), bytes exactly as given."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def status_of(cli: Callable[..., Any], root: Path, phase_id: str = "P1", *scope: str) -> str:
    """The status ``tracker status [SCOPE]`` shows for phase ``phase_id`` (the ``cli`` fixture's run)."""
    lines = cli(root, "status", *scope).out.splitlines()
    return str(next(x for x in lines if x.strip().startswith(f"{phase_id} ")).split()[1])


def record(root: Path, *args: str, env: dict[str, str] | None = None) -> int:
    """Exit status of ``python -m pytest -q ARGS --tracker-record`` run in ``root`` (``env`` added to ours)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "--tracker-record"]
    return subprocess.run(cmd, cwd=root, capture_output=True, env={**os.environ, **(env or {})}).returncode


# test_b passes alone, fails after test_a, and skips where FAST is set: a file gate of both met only by runs apart
SKIPPABLE = (
    "import os\n\nimport pytest\n\nSTATE = []\n\n\ndef test_a():\n    STATE.append('dirty')\n\n\n"
    "@pytest.mark.skipif(bool(os.environ.get('FAST')), reason='slow')\ndef test_b():\n    assert not STATE\n"
)


def set_newest_provenance(root: Path, key: str, value: Any) -> None:
    """Set ``provenance[key]`` of the newest evidence file of ``root`` (another machine's run, as recorded there)."""
    import json

    newest = max((root / ".tracker/evidence").glob("*.json"))
    doc = json.loads(newest.read_text())
    doc["provenance"][key] = value
    newest.write_text(json.dumps(doc))


def plan_text(plan_id: str = "0001", phases: str = "", title: str = "Demo") -> str:
    """A plan file's text with the given phase blocks appended."""
    return f'# {title}\n\n```plan\nid = "{plan_id}"\ntitle = "{title}"\n```\n\n{phases}'


def phase(pid: str, *gates: str, depends: str = "", paths: str = "") -> str:
    """A phase block; ``gates`` are TOML bodies of [[gate]] tables."""
    head = f'```phase\nid = "{pid}"\ntitle = "Phase {pid}"\n'
    head += f"depends = [{depends}]\n" if depends else ""
    head += f"paths = [{paths}]\n" if paths else ""
    return head + "".join(f"[[gate]]\n{g}\n" for g in gates) + "```\n\n"


class Calls:
    """Counts the function calls made while it is entered (``with Calls() as calls: ...; calls.count``), Python
    and built-in ones, through ``sys.setprofile``: a deterministic measure of work for a complexity claim. A test
    compares the count at n and 4n, where comparing CPU seconds failed on a loaded machine (speed figures live in
    bench/plan_tracker/speed.py, not in tests). ``of`` narrows it to calls of those Python functions (however they were
    imported); calls made under ``skip`` functions are not counted (a subprocess's pipe reads vary run to run)."""

    def __init__(self, *of: Callable[..., Any], skip: tuple[Callable[..., Any], ...] = ()) -> None:
        self.codes = {inspect.unwrap(f).__code__ for f in of}
        self.skip = {inspect.unwrap(f).__code__ for f in skip}
        self.count = 0
        self._skipping: FrameType | None = None
        self._before: Any = None

    def _profile(self, frame: FrameType, event: str, _arg: object) -> None:
        if self._skipping is not None:
            if event == "return" and frame is self._skipping:
                self._skipping = None
            return
        code: CodeType = frame.f_code
        if event == "call" and code in self.skip:
            self._skipping = frame
        elif event == "call":
            self.count += not self.codes or code in self.codes
        elif event == "c_call":
            self.count += not self.codes

    def __enter__(self) -> Calls:
        self._before = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(self._before)


@contextlib.contextmanager
def glob_steps() -> Iterator[dict[str, int]]:
    """Counts a compiled glob's steps while the block runs: one ``_masks`` a character consumed, one ``_closure``
    at the start and after a character that reaches a wildcard. Each ``_closure`` grows a set of at most one state
    per pattern token, so a match costs at most (characters + 1) x (tokens + 1) bit operations: counting the steps
    proves the bound on any machine, where a wall-clock limit failed under load (0.35 s against 0.2)."""
    from tracker.base.globs import Glob

    counts = {"masks": 0, "closure": 0}
    masks, closure = Glob._masks, Glob._closure

    def counting_masks(self: Glob, ch: str) -> tuple[int, int]:
        counts["masks"] += 1
        return masks(self, ch)

    def counting_closure(self: Glob, states: int) -> int:
        counts["closure"] += 1
        return closure(self, states)

    Glob._masks, Glob._closure = counting_masks, counting_closure  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        Glob._masks, Glob._closure = masks, closure  # type: ignore[method-assign]


# unittest subTest loops and pytest's own ``subtests`` fixture (issue 30): one failing subtest among passing ones,
# two failing, a skipped one, all passing. pytest reports each subtest apart, then the test itself as passed.
# SUBTEST_OUTCOMES: what a run of it as tests/test_sub.py records (the plugin and the reportlog reader alike), with
# pytest 9's own subtests and with pytest-subtests on pytest 8.
SUBTESTS = """
import unittest


class TestLoop(unittest.TestCase):
    def test_loop(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)


class TestSkip(unittest.TestCase):
    def test_skip(self):
        for i in range(2):
            with self.subTest(i=i):
                if i == 1:
                    self.skipTest("win32 only")


class TestOk(unittest.TestCase):
    def test_ok(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 3)


def test_native(subtests):
    for i in range(4):
        with subtests.test("even", i=i):
            assert i % 2 == 0
"""
SUBTEST_OUTCOMES = {
    "tests/test_sub.py::TestLoop::test_loop": ("failed", "subtest (i=1) failed: AssertionError: 1 == 1"),
    "tests/test_sub.py::TestSkip::test_skip": ("skipped", "subtest (i=1) skipped: win32 only"),
    "tests/test_sub.py::TestOk::test_ok": ("passed", ""),
    "tests/test_sub.py::test_native": ("failed", "2 subtests failed, the first [even] (i=1): assert (1 % 2) == 0"),
}
