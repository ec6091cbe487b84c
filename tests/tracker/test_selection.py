"""Which tests a gate selects: pytest arguments and -m expressions over node ids."""

from __future__ import annotations

import pytest

from tracker.selection import marker_matches, selects


@pytest.mark.parametrize(
    ("arg", "nodeid", "hit"),
    [
        ("tests/k/test_v.py::test_a", "tests/k/test_v.py::test_a", True),
        ("tests/k/test_v.py::test_a", "tests/k/test_v.py::test_a[1-2]", True),
        ("tests/k/test_v.py::test_a", "tests/k/test_v.py::test_ab", False),
        ("tests/k/test_v.py::TestX", "tests/k/test_v.py::TestX::test_a", True),
        ("tests/k/test_v.py", "tests/k/test_v.py::test_a", True),
        ("tests/k/", "tests/k/test_v.py::test_a", True),
        ("./tests/k", "tests/k/test_v.py::test_a", True),
        ("tests/k", "tests/kernel/test_v.py::test_a", False),
        ("tests/k/test_v.py::test_a", "tests/k/test_v.py", True),  # a collection error of the file
        (".", "anything.py::t", True),
    ],
)
def test_selects(arg: str, nodeid: str, hit: bool) -> None:
    assert selects(arg, nodeid) is hit


@pytest.mark.parametrize(
    ("expr", "markers", "hit"),
    [
        (None, [], True),
        ("gpu", ["gpu"], True),
        ("gpu", [], False),
        ("not gpu", [], True),
        ("gpu and not slow", ["gpu", "slow"], False),
        ("(gpu or slow) and not flaky", ["slow"], True),
    ],
)
def test_marker_expressions(expr: str | None, markers: list[str], hit: bool) -> None:
    assert marker_matches(expr, markers) is hit


@pytest.mark.parametrize("expr", ["gpu and", "gpu(", "__import__('os')", "gpu; x", "1 == 1"])
def test_bad_marker_expressions_are_errors(expr: str) -> None:
    with pytest.raises(ValueError, match="invalid marker expression"):
        marker_matches(expr, ["gpu"])
