"""Generated figures inside prose: the declaration's words, the figure from the newest run holding its cases (one,
a ratio, a range, a percentage), hand edits refused, hostile declarations located, and `tracker update` / `check` on
real repositories."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resultfiles import case, result
from tracker_testutil import git

from tracker.core.model import ResultCase, ResultRun
from tracker.errors import RegionEditedError, TrackerError
from tracker.report.doc_figures import NO_RESULT, checksum, find_figures, rewrite_figures
from tracker.report.doc_tables import DocTableError


def run(
    cases: list[ResultCase],
    *,
    path: str = "bench/results/a.json",
    time: str = "2026-11-29T11:02:03",
    host: str = "gpu-box",
    gpu: str | None = "NVIDIA H200",
) -> ResultRun:
    when = datetime.fromisoformat(time).replace(tzinfo=UTC)
    return ResultRun(path, "0" * 64, "verify", when, host, gpu, "3f2a91c" + "0" * 33, False, {}, tuple(cases))


def rc(metric: str, samples: list[float], unit: str = "us", **params: Any) -> ResultCase:
    return ResultCase(metric, params, unit, "lower", tuple(samples))


KERNEL = [
    rc("t", [10.0, 12.0, 11.0], impl="cuda", ctx=100, b=1),
    rc("t", [110.0], impl="triton", ctx=100, b=1),
    rc("t", [30.0], impl="cuda", ctx=200, b=1),
    rc("t", [600.0], impl="triton", ctx=200, b=1),
    rc("f", [0.25, 0.5, 0.125], unit="1", impl="cuda", ctx=100, b=1),
]


def fig(decl: str, body: str = "") -> str:  # a word before the marker: one that starts a line is refused
    return f"It takes <!-- figure {decl} -->{body}<!-- /figure --> here."


def one(decl: str, runs: list[Any] | None = None) -> str:
    """The figure's text as update writes it."""
    out = rewrite_figures("doc.md", fig(decl), [run(KERNEL)] if runs is None else runs)
    _head, rest = out.split("-->", 1)
    body, closer = rest.split("<!-- /figure ", 1)
    assert closer == f"{checksum(body)} --> here."
    return body


def test_one_figure_a_ratio_a_range_and_a_percentage() -> None:
    assert one("metric=t impl=cuda ctx=100 b=1") == "11.0 us"
    assert one("metric=t impl=cuda ctx=100 digits=2") == "11.00 us"
    assert one("metric=t impl=cuda ctx=100 stat=min unit=µs") == "10.0 µs"
    assert one('metric=t impl=cuda ctx=100 unit=""') == "11.0"
    assert one("metric=t impl=triton ctx=100 over.impl=cuda") == "10.0x"
    assert one("metric=t impl=triton over.impl=cuda range digits=1") == "10.0-20.0x"
    assert one("metric=t impl=cuda ctx=[100,200] range") == "11.0-30.0 us"
    assert one("metric=f impl=cuda percent digits=1") == "25.0%"
    assert one("metric=t impl=cuda ctx=100 over.impl=triton percent digits=0") == "10%"
    assert one("metric=t impl=triton ctx=100 over.impl=cuda change digits=0") == "900%"
    assert one("metric=t impl=cuda over.impl=triton change range digits=1") == "-95.0 to -90.0%"


def test_the_newest_run_that_holds_the_cases_and_may_speak_speaks() -> None:
    old = run(KERNEL, path="bench/results/old.json", time="2026-11-01T00:00:00", host="a")
    new = run([rc("t", [50.0], impl="cuda", ctx=100, b=1)], path="bench/results/new.json", host="b", gpu="NVIDIA RTX")
    assert one("metric=t impl=cuda ctx=100", [old, new]) == "50.0 us"
    assert one("metric=t impl=cuda ctx=100 machine=a", [old, new]) == "11.0 us"
    assert one("metric=t impl=cuda ctx=100 machine=H200", [old, new]) == "11.0 us"
    assert one("metric=t impl=cuda ctx=100 file=bench/results/old.json", [old, new]) == "11.0 us"
    assert one("metric=t impl=cuda ctx=100 commit=3f2a", [old, new]) == "50.0 us"
    assert one("metric=t impl=cuda ctx=[100,200] range", [old, new]) == "11.0-30.0 us"  # new lacks ctx=200
    assert one("metric=t impl=triton ctx=100 over.impl=cuda", [old, new]) == "10.0x"  # new lacks triton
    assert one("metric=nope", [old, new]) == NO_RESULT
    assert one("metric=t ctx=100 graph=true", [old, new]) == NO_RESULT  # type-exact: no case has graph


def test_a_commit_prefix_two_runs_share_is_a_problem_not_the_newer_run() -> None:
    old = run(KERNEL, path="bench/results/old.json", time="2026-11-01T00:00:00")._replace(commit="3f2a" + "1" * 36)
    new = run([rc("t", [50.0], impl="cuda", ctx=100, b=1)], path="bench/results/new.json")._replace(
        commit="3f2a" + "2" * 36
    )
    with pytest.raises(DocTableError, match=r"figure: commit 3f2a is a prefix of 2 runs' commits"):
        rewrite_figures("doc.md", fig("metric=t impl=cuda ctx=100 commit=3f2a"), [old, new])
    assert one("metric=t impl=cuda ctx=100 commit=3f2a1", [old, new]) == "11.0 us"


def test_an_invalid_result_file_leaves_every_figure_unrendered() -> None:
    out = rewrite_figures("doc.md", fig("metric=t impl=cuda ctx=100"), [run(KERNEL)], ["bench/results/x.json: bad"])
    assert "(not rendered: an invalid result file, see tracker check)<!-- /figure" in out


def test_up_to_date_figures_are_left_byte_for_byte_even_rewrapped() -> None:
    text = rewrite_figures("doc.md", "# D\r\n\r\n" + fig("metric=t impl=cuda\r\n ctx=100") + "\r\n", [run(KERNEL)])
    assert rewrite_figures("doc.md", text, [run(KERNEL)]) == text
    wrapped = text.replace("11.0 us", "11.0\r\nus")
    assert rewrite_figures("doc.md", wrapped, [run(KERNEL)]) == wrapped  # an editor's re-wrap is not an edit
    newer = run([rc("t", [9.0], impl="cuda", ctx=100)], path="bench/results/z.json", time="2026-12-01T00:00:00")
    again = rewrite_figures("doc.md", text, [run(KERNEL), newer])
    assert again == text.replace("11.0 us", "9.00 us").replace(checksum("11.0 us"), checksum("9.00 us"))


def test_a_hand_edited_figure_is_refused_unless_forced() -> None:
    text = rewrite_figures("doc.md", "# D\n\n" + fig("metric=t impl=cuda ctx=100"), [run(KERNEL)])
    edited = text.replace("11.0 us", "10.0 us")
    with pytest.raises(RegionEditedError, match=r"^doc\.md:3: figure edited by hand \(checksum mismatch\)"):
        rewrite_figures("doc.md", edited, [run(KERNEL)])
    assert rewrite_figures("doc.md", edited, [run(KERNEL)], force=True) == text


def test_markers_in_code_are_text() -> None:
    text = (
        "Write `<!-- figure metric=t -->` or ``a ` <!-- /figure --> b``.\n\n"
        "```markdown\n<!-- figure metric=t --><!-- /figure -->\n```\n\n    <!-- /figure -->\n"
    )
    assert find_figures("doc.md", text) == ([], [])
    assert rewrite_figures("doc.md", text, [run(KERNEL)]) == text


@pytest.mark.parametrize(
    "before",
    ["Escape it as \\` in prose;", "Note <!-- a ` here --> then", "See <https://x.org/`> and", 'A <a title="`"> tag'],
)
def test_a_backtick_markdown_reads_as_no_code_span_hides_no_figure(before: str) -> None:
    # GitHub shows the figure (its markers are HTML comments, not code): a figure the scan skipped would never be
    # rendered again, and check would call it current however stale
    from markdown_it import MarkdownIt

    text = f"{before} {fig('metric=t impl=cuda ctx=100')} and `x`.\n"
    assert "<!-- /figure -->" in MarkdownIt("commonmark").render(text)  # HTML, not code
    assert f"-->11.0 us<!-- /figure {checksum('11.0 us')} -->" in rewrite_figures("doc.md", text, [run(KERNEL)])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a\n\n<!-- figure metric=t", "doc.md:3: figure: the opening comment is not closed by --> in its paragraph"),
        ("<!-- figure metric=t -->11", "doc.md:1: figure: no end marker <!-- /figure --> in its paragraph"),
        ("<!-- figure metric=t -->1\n\n<!-- /figure -->", "doc.md:1: figure: no end marker"),
        ("<!-- figure metric=t --><!-- figure metric=t --><!-- /figure -->", "figure: a figure marker inside a figure"),
        ("x <!-- /figure -->", "doc.md:1: figure: an end marker without its figure"),
        ("<!-- figure metric=t\n\nctx=1 --><!-- /figure -->", "doc.md:1: figure: the opening comment is not closed"),
        ("<!-- figure ctx=1 --><!-- /figure -->", "figure: metric=... is required"),
        ("<!-- figure metric=t stat=max --><!-- /figure -->", "figure: stat must be one of median, min, mean, p90"),
        ("<!-- figure metric=t digits=99 --><!-- /figure -->", "figure: digits must be a whole number from 0 to 9"),
        ("<!-- figure metric=t metric=u --><!-- /figure -->", "figure: 'metric' is given twice"),
        ("<!-- figure metric=t ctx --><!-- /figure -->", "figure: 'ctx' has no value"),
        ("<!-- figure metric=t range=1 --><!-- /figure -->", "figure: 'range' is a flag"),
        ("<!-- figure metric=t ctx=[] --><!-- /figure -->", "ctx: cannot read the value '[]' (an empty list)"),
        ("<!-- figure metric=t ctx=1e999 --><!-- /figure -->", "figure: ctx: '1e999' is not a finite number"),
        ("<!-- figure metric=t ctx=" + "9" * 5000 + " --><!-- /figure -->", "ctx: cannot read the value"),
        ('<!-- figure metric=t x="\\q" --><!-- /figure -->', "figure: x: cannot read the value"),
        (
            "<!-- figure metric=t file=../x.json --><!-- /figure -->",
            "file '../x.json' has an empty, '.' or '..' segment",
        ),
        ("<!-- figure metric=t file=/etc/passwd --><!-- /figure -->", "file '/etc/passwd' is not a relative POSIX"),
        ("<!-- figure metric=t commit=xyz --><!-- /figure -->", "figure: commit must be 4 to 40 hex digits"),
        ("<!-- figure metric=t over.=1 --><!-- /figure -->", "figure: over. needs a parameter name"),
        ("<!-- figure metric=t impl=cuda change --><!-- /figure -->", "figure: change needs over.PARAM=value"),
        ("x <!-- figure metric=a--b --><!-- /figure -->", "figure: the opening comment may not hold '--'"),
        ("x <!-- figure metric=t over.impl=a---><!-- /figure -->", "may not hold '--' or end with '-'"),
        ("x\n  <!-- figure metric=t --><!-- /figure -->", "doc.md:2: figure: the opening comment starts a line"),
        ("x <!-- figure metric=t -->1\n<!-- /figure -->", "doc.md:1: figure: the end marker starts a line"),
        ('<!-- figure metric=t x="y --><!-- /figure -->', "figure: cannot read 'x=\"y'"),
        (
            "<!-- figure metric=t impl=cuda --><!-- /figure -->",
            "doc.md:1: figure: 2 cases of bench/results/a.json match (impl=cuda ctx=100 b=1; impl=cuda ctx=200 b=1): name ctx",
        ),
        ("<!-- figure metric=t file=bench/results/b.json --><!-- /figure -->", "is not a result file of this reposit"),
    ],
)
def test_a_bad_declaration_is_a_problem_at_its_line_and_nothing_is_rewritten(text: str, message: str) -> None:
    with pytest.raises(DocTableError) as err:
        rewrite_figures(
            "doc.md",
            "x " + text + "\n\nand <!-- figure metric=t impl=cuda ctx=100 --><!-- /figure -->\n",
            [run(KERNEL)],
        )
    assert any(message in p for p in err.value.problems), err.value.problems


def test_a_ratio_over_zero_is_a_problem_not_inf() -> None:
    zero = run([rc("t", [1.0], impl="a"), rc("t", [0.0], impl="b")])
    with pytest.raises(DocTableError, match=r"doc.md:1: figure: the median of the case it is divided by"):
        rewrite_figures("doc.md", fig("metric=t impl=a over.impl=b"), [zero])


def test_a_ratio_never_divides_a_case_by_itself_or_by_a_case_in_other_units() -> None:
    # without impl=triton, the cuda cases over impl=cuda were 1.00x: "Triton is 1.00-20.0x slower"
    assert one("metric=t over.impl=cuda range digits=1") == "10.0-20.0x"
    with pytest.raises(DocTableError, match=r"figure: over.impl names the figure's own impl"):
        rewrite_figures("doc.md", fig("metric=t ctx=100 impl=cuda over.impl=cuda"), [run(KERNEL)])
    with pytest.raises(DocTableError, match=r"figure: over.impl names the figure's own impl"):
        rewrite_figures("doc.md", fig("metric=t impl=[cuda,triton] over.impl=cuda range"), [run(KERNEL)])
    mixed = run([rc("t", [1.0], unit="ms", impl="a"), rc("t", [1.0], unit="us", impl="b")])
    assert one("metric=t impl=a over.impl=b", [mixed]) == NO_RESULT  # 1 ms over 1 us is not 1.00x


def test_a_figure_too_large_to_write_is_a_problem_not_inf() -> None:
    big = run([rc("t", [1e307], impl="a"), rc("t", [1.0], impl="b")])
    for decl in ("metric=t impl=a over.impl=b change", "metric=t impl=a percent"):
        with pytest.raises(DocTableError, match=r"doc.md:1: figure: the figure of bench/results/a.json is too large"):
            rewrite_figures("doc.md", fig(decl), [big])


@pytest.mark.parametrize("filler", ["`a` ", "<!-- c --> ", "<!-- figure ", "x\n"])
def test_a_long_paragraph_is_scanned_in_linear_time(filler: str) -> None:
    # one search to the paragraph's end per backtick or marker was quadratic: 320 KB of code spans took 36 s
    import time

    text = "x " + fig("metric=t impl=cuda ctx=100") + " " + filler * 100_000
    began = time.perf_counter()
    figures, _ = find_figures("doc.md", text)
    assert len(figures) == 1 and time.perf_counter() - began < 5


# --- hostile input ---------------------------------------------------------------------------------------------------

PIECES = st.sampled_from(
    ["<!-- figure ", "<!-- /figure -->", "<!-- /figure 0123abcd -->", "-->", "<!--", "`", "``", "\n", "\n\n", "\r\n",
     "```", "    ", "metric=t ", "impl=cuda ", "ctx=[100,200] ", "range ", "over.impl=triton ", "percent ", "digits=",
     '"', "[", "]", "=", "1e308 ", "-1e308 ", "9" * 400, "\ufeff", "\u202e", "\x00", "\udcff", "é", "file=../../x ",
     "file=bench/results/a.json ", "unit=\"<b>|\" ", "stat=p90 ", "> ", "- "]
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=30), huge=st.floats(allow_nan=True))
def test_hostile_text_gives_figures_or_located_problems_never_a_traceback(parts: list[str], huge: float) -> None:
    text = "".join(parts)
    runs = [run([*KERNEL, rc("t", [huge if huge == huge else 1.0, 1e308], impl="huge", ctx=100)])]
    try:
        out = rewrite_figures("doc.md", text, runs)
    except (DocTableError, RegionEditedError) as err:
        problems = err.problems if isinstance(err, DocTableError) else str(err).split("\n")
        assert problems and all(p.startswith("doc.md:") and ": figure" in p for p in problems), problems
        return
    assert rewrite_figures("doc.md", out, runs) == out  # stable
    figures, _ = find_figures("doc.md", text)
    kept = 0
    for f in figures:  # every byte outside the figures' bodies and end markers is kept, in order
        assert out.find(text[kept : f.body[0]]) >= 0
        kept = f.end
    assert out.endswith(text[kept:])
    for f in find_figures("doc.md", out)[0]:
        body = out[f.body[0] : f.body[1]]
        assert len(body) < 200 and "<" not in body.replace("\\<", "") and "\n" not in body


KEYS = st.one_of(
    st.sampled_from(["metric", "stat", "digits", "unit", "file", "commit", "machine", "benchmark", "impl", "ctx",
                     "b", "over.impl", "over.ctx", "range", "percent", "change", "over."]),
    st.from_regex(r"[A-Za-z_][\w.-]{0,12}", fullmatch=True),
)  # fmt: skip
VALUES = st.one_of(
    st.integers(-(10**300), 10**300).map(str),
    st.integers(1, 6000).map(lambda n: "9" * n),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["t", "cuda", "triton", "100", "[100,200]", "[]", "[1,", '"a b"', '"\\u202e"', "true", "../../x.json",
                     "bench/results/a.json", "median", "p90", "-1", "99", '"-->"', '"<b>"']),
    st.text(max_size=10).map(json.dumps),
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.tuples(KEYS, st.one_of(st.none(), VALUES)), max_size=8))
def test_hostile_declarations_give_a_figure_or_a_located_problem(words: list[tuple[str, str | None]]) -> None:
    decl = " ".join(k if v is None else f"{k}={v}" for k, v in words)
    text = f"# D\n\nIt is {fig(decl)}\n"
    try:
        out = rewrite_figures("doc.md", text, [run(KERNEL)])
    except DocTableError as err:
        assert err.problems and all(p.startswith("doc.md:3: figure") for p in err.problems), err.problems
        return
    assert out.startswith("# D\n\nIt is It takes <!-- figure ") and out.endswith(" here.\n")
    assert rewrite_figures("doc.md", out, [run(KERNEL)]) == out


# --- real repositories -----------------------------------------------------------------------------------------------

PYPROJECT = '[project]\nname = "x"\n\n[tool.tracker]\ndocs = ["README.md"]\n'
README = (
    "# X\n\nCUDA takes <!-- figure metric=verify_attn.time_us impl=cuda ctx=1000 --><!-- /figure --> at 1k;\n"
    "Triton is <!-- figure metric=verify_attn.time_us impl=triton over.impl=cuda range digits=1 --><!-- /figure -->\n"
    "slower.\n"
)


def result_json(samples: float, time: str = "2026-11-29T11:02:03Z", **kw: Any) -> str:
    cases = [
        case("verify_attn.time_us", {"impl": impl, "ctx": ctx}, [samples * k * ctx / 1000, samples * k * ctx / 1000])
        for impl, k in (("cuda", 1), ("triton", 10))
        for ctx in (1000, 2000)
    ]
    return json.dumps(result(cases, time=time, **kw))


@pytest.fixture
def fig_repo(repo: Any) -> Path:
    root: Path = repo({"pyproject.toml": PYPROJECT, "README.md": README})
    head = git(root, "rev-parse", "HEAD").strip()
    (root / "bench/results").mkdir(parents=True)
    (root / "bench/results/r1.json").write_text(result_json(10.0, commit=head))
    return root


def test_update_writes_figures_check_fails_at_the_line_when_stale_or_edited(fig_repo: Path, cli: Any) -> None:
    res = cli(fig_repo, "update")
    assert (res.code, res.out) == (0, "updated 0 plan file(s)\nupdated 1 doc(s): README.md\n"), res.err
    readme = (fig_repo / "README.md").read_text()
    assert "CUDA takes <!-- figure" in readme and f"-->10.0 us<!-- /figure {checksum('10.0 us')} --> at 1k" in readme
    assert f"-->10.0x<!-- /figure {checksum('10.0x')} -->\nslower." in readme
    assert cli(fig_repo, "check").code == 0
    head = git(fig_repo, "rev-parse", "HEAD").strip()
    (fig_repo / "bench/results/r2.json").write_text(result_json(20.0, time="2026-11-30T00:00:00Z", commit=head))
    check = cli(fig_repo, "check")
    assert check.code == 1 and "README.md:3: generated results tables or figures out of date" in check.out, check.out
    assert cli(fig_repo, "update").code == 0 and "-->20.0 us<!-- /figure" in (fig_repo / "README.md").read_text()
    path = fig_repo / "README.md"
    path.write_text(path.read_text().replace("20.0 us", "19.0 us"))
    edited = path.read_bytes()
    for args in (["update"], ["check"]):
        res = cli(fig_repo, *args)
        assert "README.md:3: figure edited by hand (checksum mismatch)" in res.out + res.err, (args, res.out, res.err)
    assert path.read_bytes() == edited
    assert cli(fig_repo, "update", "--force").code == 0 and "-->20.0 us<!--" in path.read_text()


def test_a_bad_declaration_is_exit_2_and_nothing_is_written(fig_repo: Path, cli: Any) -> None:
    (fig_repo / "README.md").write_text(README.replace("range digits=1", "range digits=x"))
    before = (fig_repo / "README.md").read_bytes()
    res = cli(fig_repo, "update")
    assert res.code == 2 and "README.md:4: figure: digits must be a whole number from 0 to 9" in res.err, res.err
    assert (fig_repo / "README.md").read_bytes() == before and "Traceback" not in res.err


def test_a_result_file_outside_the_repository_is_never_read(fig_repo: Path, cli: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(result_json(99.0, time="2026-12-30T00:00:00Z"))
    (fig_repo / "bench/results/link.json").symlink_to(outside)
    doc = README.replace("impl=cuda ctx=1000", "impl=cuda ctx=1000 file=bench/results/link.json")
    (fig_repo / "README.md").write_text(doc)
    res = cli(fig_repo, "update")
    assert "99.0" not in (fig_repo / "README.md").read_text() and "Traceback" not in res.err
    # the link is refused as a result file (as for tables and gates): every figure says so, none shows its value
    assert res.code == 0 and "-->(not rendered: an invalid result file" in (fig_repo / "README.md").read_text()
    assert "bench/results/link.json" in cli(fig_repo, "check").out
    (fig_repo / "bench/results/link.json").unlink()
    (fig_repo / "README.md").write_text(README.replace("impl=cuda ctx=1000", f"impl=cuda file=../{outside.name}"))
    res = cli(fig_repo, "update")
    assert res.code == 2 and "README.md:3: figure: file '../outside.json' has an empty, '.' or '..' segment" in res.err


def test_a_doc_that_is_not_utf8_is_refused_unread(fig_repo: Path, cli: Any) -> None:
    (fig_repo / "README.md").write_bytes(README.encode() + b"\xff\xfe<!-- /figure -->\n")
    for args in (["update"], ["check"]):
        res = cli(fig_repo, *args)
        assert res.code == 8 and "README.md:" in res.err and "Traceback" not in res.err, res.err


def test_errors_are_tracker_errors() -> None:
    assert issubclass(DocTableError, TrackerError) and issubclass(RegionEditedError, TrackerError)
    assert os.sep == "/"


def test_a_crlf_doc_keeps_every_byte_outside_its_figures(fig_repo: Path, cli: Any) -> None:
    path = fig_repo / "README.md"
    path.write_bytes(README.replace("\n", "\r\n").encode() + b"Tail \xc2\xb5s\r\n")
    before = path.read_bytes()
    assert cli(fig_repo, "update").code == 0
    after = path.read_bytes()
    assert after.count(b"\r\n") == before.count(b"\r\n") and b"\n" not in after.replace(b"\r\n", b"")
    assert after.startswith(before[: before.index(b"-->") + 3]) and after.endswith(b"slower.\r\nTail \xc2\xb5s\r\n")
    assert cli(fig_repo, "check").code == 0
