"""tracker.gate_paths: the one rule lint, status and verify apply to a test gate's path (it must not leave the
repository through a symlink), and its cached form, on real trees with links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.gate_paths import OutsideCheck, gate_path, leaves_repository


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with links in and out: ``out`` (a directory outside), ``out.py`` (a file outside), ``alias``
    (a directory inside), ``loop`` (a link to itself), ``dangling`` (to nothing)."""
    base = tmp_path_factory.mktemp("gate_paths")
    outside = base / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "test_o.py").write_text("")
    root = base / "repo"
    (root / "tests" / "in").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("")
    (root / "tests" / "out").symlink_to(outside)
    (root / "tests" / "out.py").symlink_to(outside / "test_o.py")
    (root / "tests" / "alias").symlink_to("in")
    (root / "tests" / "loop").symlink_to("loop")
    (root / "tests" / "dangling").symlink_to(base / "nowhere")
    return root


def test_the_rule(tree: Path) -> None:
    assert leaves_repository(tree, "tests/test_a.py") is None
    assert leaves_repository(tree, "tests/alias") is None  # a link that stays inside
    assert leaves_repository(tree, "tests/missing.py") is None  # missing: another problem (lint says so)
    out = (tree / "tests/out").resolve()
    assert leaves_repository(tree, "tests/out") == f"test path 'tests/out' resolves to {out}, outside the repository"
    assert leaves_repository(tree, "tests/out/sub") is not None and leaves_repository(tree, "tests/out.py") is not None
    check = OutsideCheck(tree)
    assert check("tests/out/test_o.py::test_x[a/b::c]") == leaves_repository(tree, "tests/out/test_o.py")
    assert check("tests/") is None and check("") is None and check("tests/loop") is None


NAMES = st.sampled_from(["tests", "out", "out.py", "alias", "in", "loop", "dangling", "test_a.py", "sub", "test_o.py",
                         ".", "x", "\x00", "é", "a" * 300])  # fmt: skip


@settings(deadline=None, max_examples=300, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(NAMES, min_size=1, max_size=5), tail=st.sampled_from(["", "/", "::t", "::t[x/../y]"]))
def test_the_cached_check_agrees_with_the_rule_and_never_raises(tree: Path, parts: list[str], tail: str) -> None:
    """Whatever a gate's test string holds, OutsideCheck answers what leaves_repository does (None where the path
    cannot be looked at: a NUL byte, a loop, a name too long), asked twice or once."""
    test = "/".join(parts) + tail
    path = gate_path(test)
    try:
        want = leaves_repository(tree, path)
    except (OSError, RuntimeError, ValueError):
        want = None
    check = OutsideCheck(tree)
    assert check(test) == want and check(test) == want
    if want is not None:
        assert any(os.path.islink(tree / "/".join(path.split("/")[: i + 1])) for i in range(len(path.split("/"))))
