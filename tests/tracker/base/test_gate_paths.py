"""tracker.base.gate_paths: the one rule lint, status and verify apply to a test gate's path (it must not leave the
repository through a symlink), and its cached form, on real trees with links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base.gate_paths import OutsideCheck, TestFileCheck, gate_path, leaves_repository


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


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose ``tests/`` (a gated directory) holds links out: ``test_link.py`` (a file), ``ext`` (a
    directory), ``conf/conftest.py`` (a conftest), ``loop`` (a link to itself); and ``alias.py`` (a link inside)."""
    base = tmp_path_factory.mktemp("gated")
    outside = base / "outside"
    outside.mkdir()
    (outside / "test_x.py").write_text("")
    root = base / "repo"
    (root / "tests" / "conf" / "deep").mkdir(parents=True)
    (root / "tests" / "test_real.py").write_text("")
    (root / "tests" / "conf" / "deep" / "test_d.py").write_text("")
    (root / "tests" / "test_link.py").symlink_to(outside / "test_x.py")
    (root / "tests" / "ext").symlink_to(outside)
    (root / "tests" / "conf" / "conftest.py").symlink_to(outside / "test_x.py")
    (root / "tests" / "alias.py").symlink_to("test_real.py")
    (root / "tests" / "loop").symlink_to("loop")
    return root


def test_a_test_file_or_conftest_linked_out_inside_a_gated_directory(gated: Path) -> None:
    """The gate's own path (``tests/``) stays inside; the files pytest collects or loads under it need not."""
    check = TestFileCheck(gated)
    real = (gated / "tests/test_link.py").resolve()
    assert check("tests/test_link.py") == f"tests/test_link.py resolves to {real}, outside the repository"
    ext = (gated / "tests/ext/test_x.py").resolve()
    assert check("tests/ext/test_x.py") == f"tests/ext/test_x.py resolves to {ext}, outside the repository"
    conf = (gated / "tests/conf/conftest.py").resolve()
    want = f"tests/conf/conftest.py resolves to {conf}, outside the repository"
    assert check("tests/conf/deep/test_d.py") == want and check("tests/conf/test_c.py") == want
    assert check("tests/test_real.py") is None and check("tests/alias.py") is None  # a link inside is fine
    assert check("tests/loop/test_l.py") is None and check("tests/missing.py") is None  # not looked at: lint's
    assert OutsideCheck(gated)("tests/") is None  # what the gate-path rule alone saw


FILE_NAMES = st.sampled_from(["tests", "ext", "conf", "deep", "test_link.py", "test_x.py", "test_d.py", "alias.py",
                              "loop", "conftest.py", "..", ".", "", "\x00", "é", "a" * 300])  # fmt: skip


@settings(deadline=None, max_examples=300, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(FILE_NAMES, min_size=1, max_size=5), lead=st.sampled_from(["", "/", "./"]))
def test_the_test_file_check_never_raises_and_calls_a_file_outside_only_through_a_link(
    gated: Path, parts: list[str], lead: str
) -> None:
    """Whatever a node id's file part holds (NUL bytes, ``..``, 300-character names, an absolute path), TestFileCheck
    answers the same twice, never raises, and calls a file outside only when the file or a conftest.py above it
    resolves outside the repository, naming that path."""
    file = lead + "/".join(parts)
    check = TestFileCheck(gated)
    why = check(file)
    assert check(file) == why
    if why is not None:
        named, _, rest = why.partition(" resolves to ")
        assert rest.endswith(", outside the repository")
        real = Path(rest.removesuffix(", outside the repository"))
        assert real == (gated / named).resolve() and not real.is_relative_to(gated.resolve())
