"""``tracker.report.templating``: a repository's report templates (``.tracker/templates/``) are code from a branch, run by
``tracker check`` and ``tracker report``; they render in jinja2's sandbox, bounded in time, memory and output, and
only from regular files inside the repository. A hostile one is exit 8 naming it (``path:line: what``), never a
traceback, a hang, a file read from outside the repository or a command run."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
import report_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.commands import report
from tracker.errors import TrackerError, exit_code_for
from tracker.report import templating

TEMPLATE = ".tracker/templates/report.md.j2"


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("templating") / "repo")


@pytest.fixture
def own_repo(fixture_repo: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(fixture_repo, root, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    (root / ".tracker/templates").mkdir(parents=True)
    return root


def put(root: Path, text: str, name: str = "report.md.j2") -> None:
    (root / ".tracker/templates" / name).write_text(text, encoding="utf-8")


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds small enough for a test to reach them fast."""
    monkeypatch.setattr(templating, "RENDER_SECONDS", 1.0)


# --- the sandbox ----------------------------------------------------------------------------------------------------

ESCAPES = [
    "{{ cycler.__init__.__globals__.os.system('touch PWNED') }}",
    "{{ joiner.__init__.__globals__['os'].system('touch PWNED') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ report.__class__.__init__.__globals__ }}",
    "{{ lipsum.__globals__['os'].system('touch PWNED') }}",
    "{% set x = report.plans.append(1) %}",  # the sandbox is immutable: no method that changes the data
]


@pytest.mark.parametrize("template", ESCAPES)
def test_a_template_cannot_reach_python(cli, own_repo: Path, monkeypatch: pytest.MonkeyPatch, template: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(own_repo)  # where a command the template ran would leave its file
    put(own_repo, "{{ point }}\nline two\n" + template + "\n")
    result = cli(own_repo, "report")
    assert result.code == 8, (result.out, result.err)
    assert result.err.startswith(f"tracker: error: {TEMPLATE}:3: "), result.err
    assert "Traceback" not in result.err and result.out == ""
    assert not (own_repo / "PWNED").exists()


# --- bounds ---------------------------------------------------------------------------------------------------------

BOMBS = [
    ("{% for i in range(10**12) %}x{% endfor %}", "range"),
    ("{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}", "seconds"),
    ("{% for a in range(99999) %}{{ 'x' * 99999 }}{% endfor %}", "characters of output"),
    ("{{ 'x' * 10**12 }}", "too large"),
    ("{{ [1] * 10**12 }}", "too large"),
    ("{{ 10 ** (10 ** 9) }}", "too large"),
    ("{{ 7 ** (7 ** (7 ** 7)) }}", "too large"),
    ("{% set n = namespace(v=3) %}{% for i in range(40) %}{% set n.v = n.v * n.v %}{% endfor %}", "too large"),
    ("{% set n = namespace(s='x') %}{% for i in range(64) %}{% set n.s = n.s ~ n.s %}{% endfor %}", "too large"),
    ("{% set n = namespace(s='x') %}{% for i in range(64) %}{% set n.s = n.s + n.s %}{% endfor %}", "too large"),
    ("{{ 'x'.ljust(10**12) }}", "too large"),
    ("{{ 'x' | center(10**12) }}", "too large"),
    ("{{ 'x' | indent(10**12, first=true) }}", "too large"),
    ("{{ ('x' * 100000).replace('', 'x' * 100000) }}", "too large"),
    ("{{ ('x' * 100000) | replace('', 'x' * 100000) }}", "too large"),
    ("{{ '%*d' | format(10**12, 1) }}", "too large"),
    ("{{ lipsum(10**9) }}", "too large"),
]


@pytest.mark.parametrize(("template", "says"), BOMBS)
def test_a_template_is_bounded_in_time_memory_and_output(  # type: ignore[no-untyped-def]
    cli, own_repo: Path, quick: None, template: str, says: str
) -> None:
    put(own_repo, "{{ point }}\n" + template + "\n")
    started = time.monotonic()
    result = cli(own_repo, "report")
    # A hang guard, not a speed test: each bomb stops at a bound, RENDER_SECONDS (1 s here) at the latest (~1.1 s at
    # worst on a loaded 2-core VM), so 30 s (over 25x that) fails only where no bound fires.
    assert time.monotonic() - started < 30
    assert result.code == 8, (result.out[:200], result.err)
    assert result.err.startswith(f"tracker: error: {TEMPLATE}:2: "), result.err
    assert says in result.err and "Traceback" not in result.err and result.out == ""


def test_check_names_a_hostile_milestone_template_and_goes_on(cli, own_repo: Path, quick: None) -> None:  # type: ignore[no-untyped-def]
    assert cli(own_repo, "report", "--milestone", "v1", "--out", str(own_repo / "plans/reports/v1.md")).code == 0
    put(own_repo, "{{ point }}\n{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}\n")
    started = time.monotonic()
    result = cli(own_repo, "check")
    assert time.monotonic() - started < 30  # a hang guard (~1.5 s with its 1 s render limit; the loop: hours)
    assert result.code == 1 and f"plans/reports/v1.md: cannot be rendered: {TEMPLATE}:2: " in result.out + result.err


# One C call the sandbox cannot see into: comparing, or JSON-encoding, a list that shares itself 1,000 times a level
# (10**12 elements from 4,000 items). In the process the watchdog's signal waits for the call to return (hours);
# the render's child process is killed at the deadline, and cannot grow past its address-space limit.
def _nested(n: int) -> str:
    inner = ["0", *(f"{v}{n}" for v in "abc")]
    return "".join(f"{{% set {v}{n} = [{w}] * 1000 %}}" for v, w in zip("abcd", inner, strict=True))


NESTED = _nested(1) + _nested(2)


@pytest.mark.parametrize(
    ("template", "seconds", "says"),
    [
        (NESTED + "{{ d1 == d2 }}", 1.0, "still rendering after 1 seconds (the limit)"),
        (NESTED + "{{ [d1, d2] | sort }}", 1.0, "still rendering after 1 seconds (the limit)"),
        (NESTED + "{{ (d1 | tojson) | length }}", 20.0, "grew the process by more than 16 MiB (the limit)"),
    ],
    ids=["compare", "sort", "tojson"],
)
def test_a_template_stuck_in_one_c_call_is_stopped_at_the_bound(  # type: ignore[no-untyped-def]
    cli, own_repo: Path, monkeypatch: pytest.MonkeyPatch, template: str, seconds: float, says: str
) -> None:
    monkeypatch.setattr(templating, "RENDER_SECONDS", seconds)
    monkeypatch.setattr(templating, "RENDER_MEMORY", 16 << 20)  # JSON grows at ~25 MB/s: the memory bound first
    put(own_repo, "{{ point }}\n" + template + "\n")
    started = time.monotonic()
    result = cli(own_repo, "report")
    # A hang guard, not a speed test: the child is killed 1 s past its 1 s limit, or stops at 16 MiB in about 1 s.
    assert time.monotonic() - started < 30
    assert result.code == 8, (result.out[:200], result.err)
    assert result.err.startswith(f"tracker: error: {TEMPLATE}"), result.err
    assert says in result.err and "Traceback" not in result.err and result.out == "", result.err


def test_expandtabs_is_bounded_by_what_it_makes(cli, own_repo: Path) -> None:  # type: ignore[no-untyped-def]
    """``expandtabs(N)`` makes up to N characters per tab: 250 tabs at 16,000,000 is 4 GB, refused before it is made."""
    put(own_repo, "{{ point }}\n{{ ('\\t' * 250).expandtabs(16000000) | length }}\n")
    result = cli(own_repo, "report")
    assert result.code == 8, (result.out[:200], result.err)
    assert result.err.startswith(f"tracker: error: {TEMPLATE}:2: too large: "), result.err


def test_check_names_a_template_stuck_in_one_c_call_and_goes_on(cli, own_repo: Path, quick: None) -> None:  # type: ignore[no-untyped-def]
    assert cli(own_repo, "report", "--milestone", "v1", "--out", str(own_repo / "plans/reports/v1.md")).code == 0
    put(own_repo, "{{ point }}\n" + NESTED + "{{ d1 == d2 }}\n")
    started = time.monotonic()
    result = cli(own_repo, "check")
    assert time.monotonic() - started < 30  # a hang guard (~2 s with its 1 s render limit; in process: hours)
    assert result.code == 1, (result.out, result.err)
    assert f"plans/reports/v1.md: cannot be rendered: {TEMPLATE}: still rendering after 1 seconds" in result.out


def test_a_bounded_template_that_stays_in_bounds_renders(own_repo: Path) -> None:
    put(own_repo, "{{ point }}\n{% for p in report.plans %}{{ p.id }} {{ 'ab' * 3 }} {{ 2 ** 10 }}\n{% endfor %}")
    text = _text(own_repo)
    assert text.splitlines()[1:] == ["0001 ababab 1024", "0002 ababab 1024"]


# --- where templates are read from ----------------------------------------------------------------------------------


def test_a_template_symlinked_out_of_the_repository_is_refused(cli, own_repo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret\n", encoding="utf-8")
    (own_repo / TEMPLATE).symlink_to(secret)
    result = cli(own_repo, "report")
    assert result.code == 8 and "the secret" not in result.out + result.err
    assert result.err.startswith(f"tracker: error: {TEMPLATE}: refused: it resolves to "), result.err
    assert "outside the repository" in result.err


def test_a_templates_folder_symlinked_out_of_the_repository_is_refused(cli, own_repo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.md.j2").write_text("the secret\n", encoding="utf-8")
    shutil.rmtree(own_repo / ".tracker/templates")
    (own_repo / ".tracker/templates").symlink_to(outside)
    result = cli(own_repo, "report")
    assert result.code == 8 and "the secret" not in result.out + result.err
    assert "outside the repository" in result.err, result.err


def test_a_template_that_is_not_a_regular_file_is_refused(cli, own_repo: Path) -> None:  # type: ignore[no-untyped-def]
    os.mkfifo(own_repo / TEMPLATE)  # reading it would block forever
    result = cli(own_repo, "report")
    assert result.code == 8 and result.err.startswith(f"tracker: error: {TEMPLATE}: refused: not a regular file")


def test_a_symlink_inside_the_repository_is_followed(own_repo: Path) -> None:
    (own_repo / "docs").mkdir(exist_ok=True)
    (own_repo / "docs/ours.j2").write_text("{{ point }}\nours\n", encoding="utf-8")
    (own_repo / TEMPLATE).symlink_to(own_repo / "docs/ours.j2")
    assert _text(own_repo).splitlines()[1] == "ours"


# --- properties -----------------------------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "x",
        "{{ point }}",
        "{{ report.plans | length }}",
        "{% for i in range(N) %}",
        "{% endfor %}",
        "{{ 'ab' * N }}",
        "{{ N ** N }}",
        "{{ 'a'.ljust(N) }}",
        "{{ 'a' | center(N) }}",
        "{{ report.__class__ }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ ''.__class__.__mro__ }}",
        "{{ lipsum(N) }}",
        "{% set n = namespace(s='ab') %}",
        "{% set n.s = n.s ~ n.s %}",
        "{{ n.s | length }}",
        "{{ 1 // 0 }}",
        "{% include 'report.md.j2' %}",
        "{{ report.plans[0].title }}",
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(st.tuples(_PIECES, st.sampled_from(["3", "99999", "10**12", "2**64"])), max_size=8),
)
def test_any_template_renders_or_is_refused_by_name(own_repo: Path, quick: None, pieces: list[tuple[str, str]]) -> None:
    put(own_repo, "\n".join(piece.replace("N", n) for piece, n in pieces) + "\n")
    started = time.monotonic()
    try:
        report.run(own_repo, out=_Sink())
    except TrackerError as err:
        assert exit_code_for(err) == 8 and str(err).startswith(".tracker/templates/"), str(err)
    assert time.monotonic() - started < 20  # a hang guard: at most ~1 s an example (its 1 s render limit)


class _Sink:
    def write(self, text: str) -> int:
        assert len(text) <= templating.MAX_OUTPUT
        return len(text)

    def flush(self) -> None:
        pass


def _text(root: Path) -> str:
    import io

    buf = io.StringIO()
    assert report.run(root, out=buf) == 0
    return buf.getvalue()


# --- |md: plan text in the Markdown report ---------------------------------------------------------------------------

_MD_TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.lists(
    st.sampled_from(
        [
            "![p](http://e.x/p.png)",
            "[l](http://e.x)",
            "<http://e.x>",
            "<b>",
            "&amp;",
            "*e*",
            "_u_",
            "`c`",
            "``",
            "|",
            "\\",
            "\\|",
            "~~s~~",
            "$m$",
            ">",
            "\n",
            "x",
            " ",
        ]
    ),
    max_size=8,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_MD_TEXT)
def test_md_text_is_inert_and_stays_one_cell(text: str) -> None:
    from markdown_it import MarkdownIt

    cell = templating.md(text)
    tokens = (
        MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(f"| a | b |\n| --- | --- |\n| x | {cell} |\n")
    )
    kinds = [t.type for t in tokens]
    assert kinds.count("td_open") == 2, (text, cell)  # the row keeps its two cells
    inline = {c.type for t in tokens if t.children for c in t.children}
    assert not {"link_open", "image", "html_inline", "em_open", "strong_open", "s_open"} & inline, (text, cell)


@pytest.mark.parametrize(
    "template",
    [
        "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}",
        "{% if 1 %}" * 3000 + "x" + "{% endif %}" * 3000,
        "{{ " + "-" * 100000 + "1 }}",
        "{{ " + "[" * 3000 + "]" * 3000 + " }}",
    ],
    ids=["parentheses", "ifs", "minus", "lists"],
)
def test_a_template_nested_too_deeply_to_compile_is_named(cli, own_repo: Path, template: str) -> None:  # type: ignore[no-untyped-def]
    put(own_repo, "{{ point }}\n" + template + "\n")
    result = cli(own_repo, "report")
    assert result.code == 8, (result.out[:200], result.err[-500:])
    assert result.err == f"tracker: error: {TEMPLATE}: nested too deeply to compile (Python's recursion limit)\n"
