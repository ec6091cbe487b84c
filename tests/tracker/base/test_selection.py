"""Which tests a gate selects: pytest arguments and -m expressions over node ids."""

from __future__ import annotations

import pytest

from tracker.base.selection import marker_matches, selects


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
    with pytest.raises(ValueError, match="invalid -m expression"):
        marker_matches(expr, ["gpu"])


# --- -m expressions: pytest's grammar, pytest's verdicts (issue 11, item 7) ---------------------------------

import subprocess  # noqa: E402
import sys  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tracker.base.selection import MAX_MARKER_DEPTH, compile_marker  # noqa: E402

try:
    from _pytest.mark.expression import Expression
except ImportError:  # pragma: no cover - a pytest without it: the agreement properties skip
    Expression = None  # type: ignore[assignment,misc]


@pytest.mark.parametrize(
    ("expr", "markers", "hit"),
    [
        ("a-b", ["a-b"], True),  # one identifier for pytest, not "a" minus "b"
        ("a-b", ["a", "b"], False),
        ("x.y or a/b", ["a/b"], True),
        ("p[1] and not c:d", ["p[1]"], True),
        ("é", ["é"], True),
        ("True", [], False),  # a marker named True, as in pytest
        ("orx and nota", ["orx", "nota"], True),
        ("not not gpu", ["gpu"], True),
        ("\tgpu ", ["gpu"], True),
    ],
)
def test_identifiers_as_pytest_reads_them(expr: str, markers: list[str], hit: bool) -> None:
    assert marker_matches(expr, markers) is hit


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("a and", "column 6: expected not or left parenthesis or identifier; got end of input"),
        ("a b", "column 3: expected end of input; got 'b'"),
        ("(a", "column 3: expected right parenthesis; got end of input"),
        ("gpu(arch=90)", "column 4: keyword arguments (gpu(...)) are not supported"),
        ("a\nb", "column 2: unexpected character '\\n'"),
        ("'a", "column 1: closing quote ' is missing"),
        (
            "(" * (MAX_MARKER_DEPTH + 1) + "a" + ")" * (MAX_MARKER_DEPTH + 1),
            f"nested more than {MAX_MARKER_DEPTH} levels deep",
        ),
        ("not " * (MAX_MARKER_DEPTH + 1) + "a", f"nested more than {MAX_MARKER_DEPTH} levels deep"),
    ],
)
def test_invalid_expressions_say_where(expr: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"^invalid -m expression ") as err:
        marker_matches(expr, [])
    assert message in str(err.value)


def test_long_chains_need_no_recursion() -> None:
    expr = " and ".join(["a"] * 20000)  # a flat chain: evaluated without one frame per term
    assert marker_matches(expr, ["a"]) and not marker_matches(expr.replace("a", "b", 1), ["a"])
    assert marker_matches(" or ".join(["x"] * 20000) + " or a", ["a"])


_TOKENS = st.sampled_from(
    ["a", "b", "gpu", "a-b", "x.y", "p[1]", "c:d", "é", "True", "or", "and", "not", "(", ")", " ", "\t", "=", ",", "'s'",
     '"', "'", "\n", "!", "1", "-", "orx", "x(k=1)", "x(", "\\"]
)  # fmt: skip


def _pytest_verdict(expr: str, markers: set[str]) -> bool | str:
    """pytest's own answer: matches or not, "invalid", or "kwargs" (accepted only with keyword arguments)."""
    try:
        compiled = Expression.compile(expr)
    except SyntaxError:
        return "invalid"
    used_kwargs = []

    def matcher(name: str, /, **kwargs: object) -> bool:
        used_kwargs.append(bool(kwargs))
        return name in markers and not kwargs

    result = compiled.evaluate(matcher)
    return "kwargs" if "(" in expr and any(used_kwargs) else result


def _check_agreement(expr: str, markers: set[str]) -> None:
    want = _pytest_verdict(expr, markers)
    try:
        got: bool | str = marker_matches(expr, sorted(markers))
    except ValueError:
        got = "refused"
    if want in ("invalid", "kwargs"):
        assert got == "refused", (expr, want)
    elif got == "refused":  # pytest accepts it: only nesting beyond the documented bound may be refused
        assert expr.count("(") + expr.count("not") > MAX_MARKER_DEPTH, expr
    else:
        assert got is want, (expr, markers)


@pytest.mark.skipif(Expression is None, reason="_pytest.mark.expression not importable")
@settings(max_examples=1500, deadline=None)
@given(
    st.lists(_TOKENS, max_size=14).map("".join),
    st.sets(st.sampled_from(["a", "b", "gpu", "a-b", "x.y", "p[1]", "c:d", "é", "True", "orx"])),
)
def test_agrees_with_pytest_on_every_expression(expr: str, markers: set[str]) -> None:
    _check_agreement(expr, markers)


@pytest.mark.skipif(Expression is None, reason="_pytest.mark.expression not importable")
@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=20), st.sets(st.text(max_size=3), max_size=3))
def test_agrees_with_pytest_on_any_text(expr: str, markers: set[str]) -> None:
    _check_agreement(expr, markers)


@pytest.mark.slow
@pytest.mark.skipif(Expression is None, reason="_pytest.mark.expression not importable")
@settings(max_examples=30000, deadline=None)
@given(
    st.lists(_TOKENS, max_size=30).map("".join),
    st.sets(st.sampled_from(["a", "b", "gpu", "a-b", "x.y", "p[1]", "c:d", "é", "True", "orx"])),
)
def test_agrees_with_pytest_slow(expr: str, markers: set[str]) -> None:
    _check_agreement(expr, markers)


def test_real_pytest_m_selects_what_marker_matches_selects(tmp_path) -> None:
    """`pytest -m` itself, on marks named like the identifiers above: same selection, same refusals."""
    (tmp_path / "test_m.py").write_text(
        "import pytest\n\n"
        "@getattr(pytest.mark, 'a-b')\ndef test_ab(): pass\n\n"
        "@pytest.mark.a\ndef test_a(): pass\n\n"
        "def test_none(): pass\n"
    )
    marks = {"test_ab": ["a-b"], "test_a": ["a"], "test_none": []}
    for expr in ("a-b", "a", "not a-b", "a-b or a", "not (a or a-b)"):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-m", expr, "test_m.py"],
            cwd=tmp_path, capture_output=True, text=True,
        )  # fmt: skip
        chosen = {line.split("::")[1] for line in proc.stdout.splitlines() if "::" in line}
        assert chosen == {name for name, m in marks.items() if marker_matches(expr, m)}, (expr, proc.stdout)
    for expr in ("a and", "a b", "(a"):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-m", expr, "test_m.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 4, (expr, proc.stdout + proc.stderr)  # pytest: usage error
        with pytest.raises(ValueError):
            compile_marker(expr)


# --- NodeIndex: what selects() would pick, without testing every node id (issue 24: lint at 5,000 gates) --------

_PARTS = st.sampled_from(["t", "tests", "a.py", "t.py", "x", "", ".", ".."])
_ARGS = (
    st.lists(_PARTS, min_size=0, max_size=4)
    .map("/".join)
    .flatmap(
        lambda file: st.sampled_from(["", "::test_a", "::test_a[1]", "::T::test_a", "::test", "/"]).map(
            lambda rest: file + rest
        )
    )
)
_NODEIDS = (
    st.lists(_PARTS, min_size=1, max_size=4)
    .map("/".join)
    .flatmap(
        lambda file: st.sampled_from(["", "::test_a", "::test_a[1]", "::test_ab", "::T::test_a", "::T"]).map(
            lambda rest: file + rest
        )
    )
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_NODEIDS, max_size=12), _ARGS)
def test_node_index_selects_what_selects_selects(nodeids: list[str], arg: str) -> None:
    from tracker.base.selection import NodeIndex

    index = NodeIndex(nodeids)
    assert sorted(index.selected(arg)) == [i for i, n in enumerate(nodeids) if selects(arg, n)]


def test_node_index_looks_at_the_selected_node_ids_only() -> None:
    from tracker.base.selection import NodeIndex

    nodeids = [f"tests/t{i % 50}.py::test_{i}" for i in range(5000)] + ["tests/t7.py", "tests"]
    index = NodeIndex(nodeids)
    assert sorted(index.selected("tests/t7.py::test_7")) == [7, 5000, 5001]  # the file's and directory's errors
    assert sorted(index.selected("tests/t7.py"))[:3] == [7, 57, 107] and len(list(index.selected("tests/t7.py"))) == 102
    assert index.looked <= 2 * 102 + 20, index.looked  # candidates by prefix, never all 5,002


def test_pytest_s_toml_configuration_files_are_inputs_of_a_test_gate() -> None:
    """adversarial review G3: pytest 9 reads pytest.toml and .pytest.toml first; a committed one that ignored a
    failing test, then removed, left the phase done (not stale): they are configuration files of every gate."""
    from tracker.base.selection import config_paths

    paths = config_paths("tests/test_a.py")
    for name in ("pytest.toml", ".pytest.toml", "tests/pytest.toml", "tests/.pytest.toml", "pytest.ini", "tox.ini"):
        assert name in paths, paths
