"""tracker.report.charts: SVG charts for the HTML report, drawn by matplotlib (the optional `report` extra).

What the report relies on: one inlinable <svg> element with nothing external, the same bytes for the same
input (goldens), ids that never collide between charts of one page, text drawn literally whatever it holds,
numbers that cannot be drawn left out (counted) instead of crashing, and a clear error without matplotlib.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tracker.report import charts
from tracker.report.charts import Band, Chart, ChartsUnavailable, Series, display_text, render_svg, title_lines

REPO = Path(__file__).resolve().parents[3]
SVG = "{http://www.w3.org/2000/svg}"
# Every element matplotlib's SVG backend writes for these charts, plus the <title> we add. No <script>,
# <foreignObject>, <a>, <image>, <font>: a tag outside this set is a hole in the page.
ALLOWED_TAGS = {"svg", "title", "defs", "style", "g", "path", "use", "text", "clipPath", "rect"}
HOSTILE = [
    "$\\frac{1}{2}$ and $x^2$",
    "<script>alert(1)</script>",
    "{{ 7*7 }} {% if x %}y{% endif %}",
    "a & b &amp; c",
    "\"double\" 'single' `back`",
    "_leading underscore",
    "]]> <![CDATA[ x ]]>",
    "\x00\x01\x1f\ufffe control \ud800 surrogate",
    "line one\nline two\r\n\ttab",
    "",
    "x" * 5000,
    "日本語 😀 \u202e right-to-left",
]

needs_matplotlib = pytest.mark.skipif(not charts.available(), reason="matplotlib (the `report` extra) not installed")


def bench_chart(title: str = "decode latency", **kw: object) -> Chart:
    """The first chart kind: a metric against context with the gate's threshold."""
    series = (
        Series("cuda", (1024, 4096, 16384, 91000), (0.8, 1.1, 2.0, 6.5)),
        Series("triton", (1024, 4096, 16384, 91000), (0.9, 1.4, 2.6, 8.9)),
    )
    fields: dict[str, object] = dict(x_label="context (tokens)", y_label="ms", series=series, threshold=8.0,
                                     threshold_label="max", lower_is_better=True, x_log=True)  # fmt: skip
    fields.update(kw)
    return Chart(title, **fields)  # type: ignore[arg-type]


def runs_chart(n: int = 12, marked: tuple[int, ...] = (3, 7)) -> Chart:
    """The second chart kind: a gate's value across runs, commits as categories, regressions marked."""
    commits = tuple(f"{i:07x}" for i in range(n))
    values = tuple(1.0 + 0.02 * i for i in range(n))
    return Chart("speedup over FA2 at 91k", "commit", "speedup", (Series("H200", commits, values, marked),),
                 threshold=1.1, threshold_label="min", x_categorical=True)  # fmt: skip


def parse(svg: str) -> ET.Element:
    """The SVG as an element tree; fails the test if it is not one well-formed element."""
    assert svg.startswith("<svg "), svg[:80]  # no XML declaration, no DOCTYPE: inlinable in HTML
    assert svg.endswith("</svg>")
    return ET.fromstring(svg)


def tag(el: ET.Element) -> str:
    return el.tag.removeprefix(SVG)


def texts(root: ET.Element) -> list[str]:
    """The text content of every <text> element (what a reader sees)."""
    return ["".join(el.itertext()) for el in root.iter(f"{SVG}text")]


def commit_labels(shown: list[str]) -> list[str]:
    return [t for t in shown if len(t) == 7 and all(ch in "0123456789abcdef" for ch in t)]


def ids(root: ET.Element) -> list[str]:
    return [el.attrib["id"] for el in root.iter() if "id" in el.attrib]


def check_self_contained(svg: str, prefix: str) -> ET.Element:
    """The structural promises: known tags only, no event handlers, every reference internal and prefixed."""
    root = parse(svg)
    assert root.attrib["id"] == prefix
    all_ids = ids(root)
    assert len(all_ids) == len(set(all_ids)), "duplicate ids inside one chart"
    assert all(i == prefix or i.startswith(prefix + "-") for i in all_ids)
    for el in root.iter():
        assert tag(el) in ALLOWED_TAGS, tag(el)
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), name
            if name.endswith("href"):
                assert value.startswith(f"#{prefix}-") and value[1:] in all_ids, value
            if "url(" in value:
                refs = value.split("url(")[1:]
                assert all(r.startswith(f"#{prefix}-") for r in refs), value
    style = [el.text or "" for el in root.iter(f"{SVG}style")]
    rules = [line for css in style for line in css.strip().splitlines()]
    assert rules and all(rule.startswith(f"#{prefix} ") for rule in rules), style  # every rule scoped to this chart
    assert "@font-face" not in svg and "@import" not in svg
    # Compact (issue 26): an id only where something refers to it, styles as classes of the sheet, 0.01 pt.
    referred = {v[1:] for el in root.iter() for k, v in el.attrib.items() if k.endswith("href")}
    referred |= {r.split(")")[0][1:] for el in root.iter() for v in el.attrib.values() for r in v.split("url(")[1:]}
    assert set(all_ids) - referred == {prefix}
    assert [el for el in root.iter() if "style" in el.attrib] == [root]
    classes = {c for el in root.iter() for c in el.get("class", "").split()}
    assert all(any(rule.startswith(f"#{prefix} .{c} {{") for rule in rules) for c in classes), classes
    assert not any(re.search(r"\.\d{3}", el.get("d", "")) for el in root.iter())
    return root


# --- without matplotlib ---------------------------------------------------------------------------------

BLOCKERS = {
    "sys.modules": "import sys; sys.modules['matplotlib'] = None",
    "meta path hook": textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == 'matplotlib' or name.startswith('matplotlib.'):
                    raise ImportError('blocked: ' + name)
                return None
        sys.meta_path.insert(0, Block())
    """),
}


@pytest.mark.parametrize("how", sorted(BLOCKERS))
def test_without_matplotlib_available_is_false_and_render_says_install_the_extra(how: str) -> None:
    code = BLOCKERS[how] + textwrap.dedent("""
        from tracker.report import charts
        print(charts.available())
        try:
            charts.render_svg(charts.Chart('t', 'x', 'y', ()), id_prefix='c')
        except charts.ChartsUnavailable as err:
            print(int(err.exit_code), err)
    """)
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    first, second = run.stdout.splitlines()
    assert first == "False"
    assert second.startswith("9 charts need matplotlib")
    assert "pip install 'matplotlib>=3.8'" in second and "plan-tracker[" not in second  # not on the package index


def test_importing_charts_and_asking_available_does_not_import_matplotlib() -> None:
    code = "import sys; from tracker.report import charts; charts.available(); print('matplotlib' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


def test_charts_unavailable_is_a_tracker_error_with_exit_9() -> None:
    from tracker.errors import ExitCode, TrackerError

    assert issubclass(ChartsUnavailable, TrackerError)
    assert ChartsUnavailable.exit_code == ExitCode.MISSING_DEPENDENCY


# --- the data is checked when built ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Series("s", (1, 2), (1.0,)), "2 x values but 1 y values"),
        (lambda: Series("s", (1,), ("1.0",)), "y[0] is not a number: '1.0'"),
        (lambda: Series("s", (1,), (None,)), "y[0] is not a number: None"),
        (lambda: Series("s", (1,), (True,)), "y[0] is not a number: True"),
        (lambda: Series("s", (None,), (1,)), "x[0] is not a number: None"),
        (lambda: Series("s", (1,), (1,), marked=(1,)), "marked index 1 is not a point of the series (0..0)"),
        (lambda: Series("s", (), (), marked=(0,)), "marked index 0 is not a point of the series (it has none)"),
        (lambda: Series("s", (1,), (1,), marked=(-1,)), "marked index -1"),
        (lambda: Series(3, (1,), (1,)), "series label: expected text, got int"),  # type: ignore[arg-type]
        (lambda: Chart("t", "x", "y", (Series("s", ("abc",), (1,)),)), "x values that are not all numeric"),
        (lambda: Chart("t", "x", "y", (Series("s", (1,), (1,)),), x_categorical=True), "not all categorical"),
        (lambda: Chart("t", "x", "y", (), x_categorical=True, x_log=True), "categorical x axis cannot be logarithmic"),
        (lambda: Chart("t", "x", "y", ((1, 2),)), "series must be Series, got tuple"),  # type: ignore[arg-type]
        (lambda: Chart("t", "x", "y", (), threshold="8"), "chart 't': threshold is not a number: '8'"),  # type: ignore[arg-type]
        (lambda: Chart(None, "x", "y", ()), "title: expected text, got NoneType"),  # type: ignore[arg-type]
    ],
)
def test_bad_chart_data_is_a_clear_value_error(build: object, message: str) -> None:
    with pytest.raises(ValueError) as err:
        build()  # type: ignore[operator]
    assert message in str(err.value)


def test_lists_become_tuples_and_marked_is_sorted_unique() -> None:
    s = Series("s", [3, 1], [1, 2], marked=[1, 0, 1])  # type: ignore[arg-type]
    assert s.xs == (3.0, 1.0) and s.ys == (1.0, 2.0) and s.marked == (0, 1)
    assert hash(Chart("t", "x", "y", [s])) == hash(Chart("t", "x", "y", (s,)))  # type: ignore[arg-type]


def test_numpy_numbers_are_numbers() -> None:
    np = pytest.importorskip("numpy")
    s = Series("s", (np.int64(3), np.float32(0.5)), (np.float64(1.5), np.int8(2)))
    assert s.xs == (3.0, 0.5) and s.ys == (1.5, 2.0) and all(type(v) is float for v in (*s.xs, *s.ys))


def test_an_int_too_large_for_a_float_is_kept_as_infinity_then_not_drawn() -> None:
    assert Series("s", (1,), (10**400,)).ys == (math.inf,)


@pytest.mark.parametrize("prefix", ["", "1chart", "a b", 'a"b', "a.b", "a:b", "é", None])
def test_a_bad_id_prefix_is_refused(prefix: object) -> None:
    with pytest.raises(ValueError, match="id_prefix"):
        render_svg(bench_chart(), id_prefix=prefix)  # type: ignore[arg-type]


def test_display_text_is_one_cut_line_of_xml_characters() -> None:
    assert display_text("a\n\tb\r\n  c ") == "a b c"
    assert display_text("\x00x\ud800") == "\ufffdx\ufffd"
    assert display_text("y" * 500) == "y" * 119 + "…"
    assert display_text("abcdef", limit=4) == "abc…"


# --- structure ----------------------------------------------------------------------------------------------


@needs_matplotlib
@pytest.mark.parametrize("make", [bench_chart, runs_chart], ids=["metric-vs-context", "value-across-runs"])
def test_each_chart_kind_is_one_self_contained_svg_element(make: object) -> None:
    svg = render_svg(make(), id_prefix="chart-1")  # type: ignore[operator]
    root = check_self_contained(svg, "chart-1")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<metadata" not in svg
    assert "xlink" not in svg  # plain SVG 2 href: nothing to declare on the page
    assert root.attrib["role"] == "img"
    assert root.find(f"{SVG}title") is not None
    assert root.iter(f"{SVG}text")  # svg.fonttype none: text is text, no glyph outlines
    assert not any("glyph" in i.lower() or i.startswith("chart-1-DejaVu") for i in ids(root))


@needs_matplotlib
def test_metric_vs_context_shows_the_series_the_threshold_and_plain_log_ticks() -> None:
    root = parse(render_svg(bench_chart(), id_prefix="c"))
    shown = texts(root)
    assert {"decode latency", "context (tokens)", "ms", "cuda", "triton", "max 8 (lower is better)"} <= set(shown)
    assert "1000" in shown and "10000" in shown  # log ticks as numbers, not mathtext "$10^{3}$"
    assert not any("$" in t or "mathdefault" in t for t in shown)
    assert "regressed" not in shown  # nothing marked, no legend entry for it


@needs_matplotlib
def test_value_across_runs_labels_commits_in_order_and_marks_regressions() -> None:
    root = parse(render_svg(runs_chart(n=5, marked=(2,)), id_prefix="c"))
    shown = texts(root)
    assert commit_labels(shown) == [f"{i:07x}" for i in range(5)]
    assert "regressed" in shown and "min 1.1 (higher is better)" in shown


@needs_matplotlib
def test_many_runs_label_at_most_twenty_commits_and_repeated_commits_share_a_place() -> None:
    many = parse(render_svg(runs_chart(n=200, marked=tuple(range(0, 200, 7))), id_prefix="c"))
    assert len(commit_labels(texts(many))) == charts.MAX_TICK_LABELS
    again = Series("H200", ("aaaaaaa", "bbbbbbb", "aaaaaaa"), (1.0, 2.0, 3.0))
    root = parse(render_svg(Chart("t", "commit", "v", (again,), x_categorical=True), id_prefix="c"))
    assert [t for t in texts(root) if t in ("aaaaaaa", "bbbbbbb")] == ["aaaaaaa", "bbbbbbb"]


def marker_uses(svg: str, shape: str) -> int:
    """The points drawn with a marker whose path's ``d`` starts with ``shape`` (a regex): its ``<use>`` elements."""
    ids = {m[1] for m in re.finditer(rf'<path id="([^"]+)" d="{shape}', svg)}
    return sum(m[1] in ids for m in re.finditer(r'<use [^>]*href="#([^"]+)"', svg))


def dots(svg: str) -> int:
    """The points drawn as dots: uses of the circle marker (a path of Bézier curves; ticks and crosses are lines)."""
    return marker_uses(svg, r"M [^\"]* C ")


def crosses(svg: str) -> int:
    """The marked points: uses of the X marker (the one marker path of twelve straight segments)."""
    return marker_uses(svg, r'(?:[ML] [-\d. ]+ ){12}z "')


@needs_matplotlib
def test_a_chart_of_many_points_draws_lines_without_dots_and_still_crosses_the_marked_ones() -> None:
    """Dots only while the whole chart has at most MAX_MARKERS points (each dot is some 77 bytes): four series of
    15 runs get theirs, four of 16 runs none, and the marked points keep their crosses either way."""
    for runs, dotted in ((15, True), (16, False)):
        commits = tuple(f"{i:07x}" for i in range(runs))
        series = tuple(Series(f"case {k}", commits, tuple(1.0 + k + 0.01 * i for i in range(runs)), (2, 5))
                       for k in range(4))  # fmt: skip
        svg = render_svg(Chart("t", "commit", "v", series, x_categorical=True), id_prefix="c")
        assert 4 * runs == charts.MAX_MARKERS + (0 if dotted else 4)
        assert dots(svg) == (4 * runs + 4 if dotted else 0)  # the legend shows each series' marker once
        assert crosses(svg) == 4 * 2 + 1  # and the crosses' legend entry


@needs_matplotlib
def test_without_dots_a_lone_point_still_shows_and_no_line_crosses_a_run_that_did_not_measure_its_case() -> None:
    """Past MAX_MARKERS a line has no dots, but a series of one point (a case first measured on the newest run, a
    gate fixing the axis) and a point between two gaps get one each; a categorical series that skips a run breaks
    its line there."""
    runs = tuple(f"{i:07x}" for i in range(20))
    full = tuple(Series(f"case {k}", runs, tuple(1.0 + k + 0.01 * i for i in range(20))) for k in range(4))
    lone = Series("new", runs[-1:], (9.0,))
    gappy = Series("gappy", (runs[0], runs[1], runs[3], runs[6], runs[7]), (6.0, 6.1, 6.2, 6.3, 6.4))
    svg = render_svg(Chart("t", "commit", "v", (*full, lone, gappy), x_categorical=True), id_prefix="c")
    assert dots(svg) == 2 + 2  # the lone point and runs[3]'s, and the two series' legend entries
    path = re.compile(r'<path d="(M [^"]*)" clip-path="url\(#c-[^"]+\)" class="(s\d+)"')
    pieces = [d.count("M ") for d, _ in path.findall(svg)]
    assert 3 in pieces  # gappy: three pieces ([0, 1], [3], [6, 7]), where one line crossed the two gaps
    numeric = bench_chart(series=(*bench_chart().series, Series("one ctx", (5700,), (3.0,))))
    few = render_svg(numeric, id_prefix="n")
    assert dots(few) == 4 + 4 + 1 + 3  # few points: every point dotted (9), and each legend entry (3)


@needs_matplotlib
def test_past_sixty_lone_points_the_lines_join_across_gaps_and_the_note_says_so() -> None:
    """Dotting every lone point of a very gappy chart would cost a dot each: past MAX_MARKERS of them the lines join
    across the gaps (no NaN breaks) and the note under the chart says so; a one-point series keeps its dot."""
    runs = tuple(f"{i:07x}" for i in range(20))
    gappy = tuple(Series(f"case {k}", runs[k % 2 :: 2], tuple(1.0 + k for _ in range(10))) for k in range(8))
    lone = Series("new", runs[-1:], (9.0,))
    svg = render_svg(Chart("t", "commit", "v", (*gappy, lone), x_categorical=True, categories=runs), id_prefix="c")
    assert "lines join across the runs that did not measure a case" in " ".join(texts(parse(svg)))
    assert dots(svg) == 1 + 1  # the lone series' point and its legend entry
    few = render_svg(
        Chart("t", "commit", "v", gappy[:6], x_categorical=True, categories=runs), id_prefix="c"
    )  # 60 lone
    assert "lines join" not in " ".join(texts(parse(few))) and dots(few) == 60 + 6


@needs_matplotlib
def test_an_empty_chart_says_no_data() -> None:
    for chart in (Chart("nothing yet", "x", "y", ()), bench_chart(series=(Series("s", (), ()),))):
        assert "no data" in texts(parse(render_svg(chart, id_prefix="c")))


@needs_matplotlib
def test_undrawable_points_are_counted_under_the_chart() -> None:
    series = Series("s", (1, 2, 3, 4, -5), (1.0, math.nan, math.inf, 1e308, 2.0))
    chart = bench_chart(series=(series,), threshold=math.inf)
    shown = texts(parse(render_svg(chart, id_prefix="c")))
    first = next(i for i, t in enumerate(shown) if "not drawn" in t)
    note = " ".join(shown[first : first + 2])  # wrapped to the figure's width: two lines
    assert note == ("threshold inf not drawn (not finite or beyond ±1e300); "
                    "4 points not drawn (not finite or beyond ±1e300, or x ≤ 0 on the log axis)")  # fmt: skip


# --- determinism ------------------------------------------------------------------------------------------


@needs_matplotlib
def test_the_same_chart_gives_the_same_bytes() -> None:
    assert render_svg(bench_chart(), id_prefix="c") == render_svg(bench_chart(), id_prefix="c")
    assert render_svg(runs_chart(), id_prefix="r") == render_svg(runs_chart(), id_prefix="r")


@needs_matplotlib
def test_the_same_bytes_in_a_fresh_process_whatever_the_users_matplotlibrc_says(tmp_path: Path) -> None:
    """A fresh interpreter (another hash seed) with a matplotlibrc that changes fonts, line widths and the
    date-in-metadata behaviour still writes the bytes this process wrote: goldens hold on any machine with
    this matplotlib version."""
    config = tmp_path / "mplconfig"
    config.mkdir()
    (config / "matplotlibrc").write_text(
        "font.family: serif\nlines.linewidth: 7\naxes.grid: False\nsvg.hashsalt: other\nsvg.fonttype: path\n"
        "axes.prop_cycle: cycler('color', ['k'])\ntext.parse_math: True\n"
    )
    code = "import sys, test_charts as t; sys.stdout.write(t.render_svg(t.bench_chart(), id_prefix='c'))"
    env = {**os.environ, "MPLCONFIGDIR": str(config), "PYTHONHASHSEED": "12345", "SOURCE_DATE_EPOCH": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), str(REPO)])
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert run.stdout == render_svg(bench_chart(), id_prefix="c")


@needs_matplotlib
def test_rendering_leaves_matplotlibs_global_settings_as_they_were() -> None:
    import matplotlib

    before = dict(matplotlib.rcParams)
    render_svg(runs_chart(), id_prefix="c")
    assert dict(matplotlib.rcParams) == before


# --- ids across charts --------------------------------------------------------------------------------------


@needs_matplotlib
def test_two_charts_on_one_page_share_no_id() -> None:
    first = check_self_contained(render_svg(bench_chart(), id_prefix="gate-a"), "gate-a")
    second = check_self_contained(render_svg(bench_chart(), id_prefix="gate-b"), "gate-b")
    other = check_self_contained(render_svg(runs_chart(), id_prefix="gate-c"), "gate-c")
    together = ids(first) + ids(second) + ids(other)
    assert len(together) == len(set(together))
    clip_ids = [i for i in together if i.split("-")[-1].startswith("p")]
    assert len(clip_ids) >= 3  # matplotlib's clip paths (p<hash>, the same hash for the same axes) prefixed too


# --- hostile text -------------------------------------------------------------------------------------------


@needs_matplotlib
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_is_drawn_literally(text: str) -> None:
    chart = Chart(text, text, text, (Series(text, ("c1", text), (1.0, 2.0)),), threshold=1.5,
                  threshold_label=text, x_categorical=True, marked_label=text)  # fmt: skip
    svg = render_svg(chart, id_prefix="h")
    root = check_self_contained(svg, "h")
    shown = texts(root)
    # as given, cleaned, cut to a label's length; empty text draws nothing
    assert display_text(text, charts.MAX_LABEL_TEXT) in shown or not display_text(text)
    assert all(line in shown for line in title_lines(text))  # the title wrapped (two lines at most), its lines drawn
    assert (root.findtext(f"{SVG}title") or "") == display_text(text, charts.MAX_TITLE_TEXT)  # the whole of it
    assert "<script" not in svg and "49" not in "".join(shown)  # nothing evaluated, nothing executable


def hostile_text_check(title: str, x_label: str, y_label: str, label: str) -> None:
    chart = Chart(title, x_label, y_label, (Series(label, (1, 2), (3.0, 4.0)),), threshold=3.5,
                  threshold_label=label)  # fmt: skip
    root = check_self_contained(render_svg(chart, id_prefix="p"), "p")
    shown = texts(root)
    assert all(line in shown for line in title_lines(title))
    assert len(title_lines(title)) <= charts.TITLE_LINES
    assert all(len(line) <= charts.TITLE_WIDTH for line in title_lines(title))
    for expected in (x_label, y_label):
        if display_text(expected):
            assert display_text(expected, charts.MAX_LABEL_TEXT) in shown


text_ = st.text(st.characters(codec=None), max_size=300)


@needs_matplotlib
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_, text_, text_, text_)
@example("$x$", "<b>", "{{ 7*7 }}", "_x")
@example("\ud800", "\x00", "&amp;", "$\\frac{")
def test_any_text_in_titles_and_labels_comes_out_literally(title: str, x_label: str, y_label: str, label: str) -> None:
    hostile_text_check(title, x_label, y_label, label)


@needs_matplotlib
@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_, text_, text_, text_)
def test_any_text_in_titles_and_labels_comes_out_literally_deep(
    title: str, x_label: str, y_label: str, label: str
) -> None:
    hostile_text_check(title, x_label, y_label, label)


# --- hostile numbers ----------------------------------------------------------------------------------------

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 1.7976931348623157e308, 5e-324, 1e300, -1e300, 1e-300]),
    st.integers(min_value=-(10**400), max_value=10**400),
)


@st.composite
def hostile_charts(draw: st.DrawFn) -> Chart:
    categorical = draw(st.booleans())
    series = []
    for k in range(draw(st.integers(0, 3))):
        n = draw(st.integers(0, 200))
        if categorical:
            xs: list[float | str] = draw(st.lists(st.sampled_from(["a", "b", "c", "d" * 40]), min_size=n, max_size=n))
        else:
            xs = draw(st.lists(numbers, min_size=n, max_size=n))
        ys = draw(st.lists(numbers, min_size=n, max_size=n))
        marked = draw(st.lists(st.integers(0, n - 1), max_size=5)) if n else []
        series.append(Series(f"s{k}", tuple(xs), tuple(ys), tuple(marked)))
    threshold = draw(st.one_of(st.none(), numbers))
    return Chart("t", "x", "y", tuple(series), threshold=threshold, x_categorical=categorical,
                 x_log=not categorical and draw(st.booleans()))  # fmt: skip


def hostile_numbers_check(chart: Chart) -> None:
    root = check_self_contained(render_svg(chart, id_prefix="n"), "n")
    shown = texts(root)

    def drawable(x: float | str, y: float) -> bool:
        x_ok = isinstance(x, str) or (math.isfinite(x) and abs(x) <= 1e300 and (x > 0 or not chart.x_log))
        return x_ok and math.isfinite(y) and abs(y) <= 1e300

    points = [(x, y) for s in chart.series for x, y in zip(s.xs, s.ys, strict=True)]
    drawn = sum(drawable(x, y) for x, y in points)
    assert ("no data" in shown) == (drawn == 0)
    skipped = len(points) - drawn
    note = " ".join(shown)  # the note's lines, wrapped at spaces, read back as one
    assert (f"{skipped} point{'s' if skipped != 1 else ''} not drawn" in note) == (skipped > 0)


@needs_matplotlib
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_charts())
def test_any_numbers_give_a_chart_never_a_crash(chart: Chart) -> None:
    hostile_numbers_check(chart)


@needs_matplotlib
@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_charts())
def test_any_numbers_give_a_chart_never_a_crash_deep(chart: Chart) -> None:
    hostile_numbers_check(chart)


def test_no_message_installs_plan_tracker_from_the_package_index() -> None:
    """plan-tracker is not on the package index: `pip install 'plan-tracker[report]'` fails for every user. What the
    tracker prints (and its docs) name what works: matplotlib itself, or a path to a checkout with the extra."""
    import re

    from tracker.report.report_text import CHARTS_NOTE

    wrong = re.compile(r"pip install\s+['\"]?plan-tracker\b")
    files = [*REPO.glob("tracker/**/*.py"), *REPO.glob("templates/*"), REPO / "README.md", *REPO.glob("docs/*.md")]
    hits = [f"{p.relative_to(REPO)}:{n}" for p in files if p.is_file()
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if wrong.search(line)]  # fmt: skip
    assert hits == []
    assert "pip install 'matplotlib>=3.8'" in CHARTS_NOTE and "[report]" in CHARTS_NOTE


# --- threshold bands, titles, order (issue 26) ---------------------------------------------------------------


def test_a_band_covers_runs_of_neighbouring_chart_values_and_a_lone_value_is_a_dash() -> None:
    values = [1024.0, 4096.0, 16384.0, 91000.0]
    band = Band(2.0, "P7 gate 1: ≥ 2", (4096.0, 16384.0, 91000.0))
    assert charts._segments(band, values, x_log=True) == [(4096.0, 91000.0)]
    gap = Band(2.0, "gates at two ends", (1024.0, 91000.0))  # the value between is not covered: two dashes
    assert charts._segments(gap, values, x_log=True) == [(1024.0, 1024.0), (91000.0, 91000.0)]
    assert charts._segments(Band(2.0, "elsewhere", (5.0,)), values, x_log=True) == []
    assert charts._segments(Band(2.0, "neg", (-1.0, 1024.0)), [-1.0, *values], x_log=True) == [(1024.0, 1024.0)]


def test_bad_band_data_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="band 'b': value is not a number"):
        Band("1", "b")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="band 'b': x\\[0\\] is not a number"):
        Band(1.0, "b", (None,))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bands must be Band"):
        Chart("t", "x", "y", (), bands=(1.0,))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="categories must be labels"):
        Chart("t", "x", "y", (), categories=(1,))  # type: ignore[arg-type]


@needs_matplotlib
def test_bands_are_named_in_the_legend_and_one_that_covers_no_point_is_noted() -> None:
    chart = bench_chart(
        threshold=None,
        bands=(Band(8.0, "0002/P6 gates 1-4: ≤ 8", (91000.0,)), Band(2.0, "0002/P7 gate 2: ≤ 2", (77.0,))),
    )
    shown = texts(parse(render_svg(chart, id_prefix="c")))
    assert "0002/P6 gates 1-4: ≤ 8" in shown and "0002/P7 gate 2: ≤ 2" not in shown  # not drawn: not in the legend
    assert [t for t in shown if "not drawn" in t] == ["0002/P7 gate 2: ≤ 2 not drawn (none of its cases has a point)"]


@pytest.mark.parametrize(
    ("title", "lines"),
    [
        ("short", ["short"]),
        ("", []),
        ("word " * 40, ["word " * 12 + "word", "word " * 12 + "wor…"]),
        ("word " * 20 + "end", ["word " * 12 + "word", "word " * 7 + "end"]),
        ("x" * 500, ["x" * 64, "x" * 63 + "…"]),
        ("a\nb\x00c", ["a b\ufffdc"]),
    ],
    ids=["short", "empty", "words", "two-lines", "one-long-word", "controls"],
)
def test_a_title_wraps_into_two_lines_at_most_cut_with_an_ellipsis(title: str, lines: list[str]) -> None:
    got = title_lines(title)
    assert got == lines
    assert all(len(line) <= charts.TITLE_WIDTH for line in got)


@needs_matplotlib
def test_categories_give_the_order_of_the_runs_whatever_series_comes_first() -> None:
    late = Series("late case", ("c", "d"), (1.0, 2.0))
    early = Series("early case", ("a", "b", "c"), (1.0, 2.0, 3.0))
    chart = Chart("t", "run", "v", (late, early), x_categorical=True, categories=("a", "b", "c", "d", "unused"))
    assert charts._categories(chart) == ["a", "b", "c", "d"]
    shown = texts(parse(render_svg(chart, id_prefix="c")))
    assert [t for t in shown if t in "abcd" and len(t) == 1] == ["a", "b", "c", "d"]


@needs_matplotlib
def test_a_log_y_axis_has_plain_numbers_and_counts_values_it_cannot_draw() -> None:
    chart = Chart("ratios", "ctx", "×", (Series("s", (1, 2, 3), (1.1, 30.0, -1.0)),), y_log=True)
    shown = texts(parse(render_svg(chart, id_prefix="c")))
    assert "10" in shown and not any("$" in t for t in shown)
    assert "1 point not drawn (not finite or beyond ±1e300, or y ≤ 0 on the log axis)" in " ".join(shown)


@needs_matplotlib
def test_a_long_legend_makes_the_figure_taller_and_never_sits_on_the_data() -> None:
    many = tuple(Series(f"heads={i} nodes=16 batch=1 vs flashinfer", (1, 2), (1.0, 2.0 + i)) for i in range(16))
    few = parse(render_svg(Chart("t", "x", "y", many[:1]), id_prefix="c"))
    tall = parse(render_svg(Chart("t", "x", "y", many), id_prefix="c"))
    assert float(tall.attrib["height"].removesuffix("pt")) > float(few.attrib["height"].removesuffix("pt")) + 100
