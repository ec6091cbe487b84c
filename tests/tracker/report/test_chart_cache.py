"""Charts drawn once (tracker.report.chart_cache): a cached SVG is the drawn one byte for byte, a cache entry that is
not an inert SVG of its chart is drawn again, and the cache stays bounded."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import report_fixture
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.base.cache import Cache
from tracker.commands import report
from tracker.report import chart_cache
from tracker.report.chart_cache import NAME, ChartCache
from tracker.report.svg_inline import ROOT_STYLE


def svg_of(prefix: str, body: str = "") -> str:
    return (
        f'<svg width="1pt" xmlns="http://www.w3.org/2000/svg" id="{prefix}" role="img" style="{ROOT_STYLE}">'
        f"<g>{body}</g></svg>"
    )


def cache_in(tmp_path: Path) -> Cache:
    (tmp_path / ".tracker" / "cache").mkdir(parents=True, exist_ok=True)
    return Cache(tmp_path)


def test_a_chart_is_drawn_once_across_commands(tmp_path: Path) -> None:
    calls: list[str] = []

    def draw(prefix: str) -> str:
        calls.append(prefix)
        return svg_of(prefix)

    first = cache_in(tmp_path)
    charts = ChartCache(first)
    assert charts.svg(("a", 1.0), "chart1", lambda: draw("chart1")) == svg_of("chart1")
    assert charts.svg(("a", 1.0), "chart1", lambda: draw("chart1")) == svg_of("chart1")  # same command: once
    charts.keep()
    first.write()
    again = ChartCache(Cache(tmp_path))
    assert again.svg(("a", 1.0), "chart1", lambda: draw("chart1")) == svg_of("chart1")
    assert again.svg(("a", 2.0), "chart1", lambda: draw("chart1")) == svg_of("chart1")  # other data: drawn
    assert again.svg(("a", 1.0), "chart2", lambda: draw("chart2")) == svg_of("chart2")  # other prefix: drawn
    assert calls == ["chart1", "chart1", "chart2"] and again.drawn == 2


def test_without_a_cache_every_chart_is_drawn() -> None:
    charts = ChartCache(None)
    for i in range(3):
        charts.svg(i, "c", lambda: svg_of("c"))
    charts.svg(0, "c", lambda: svg_of("c"))  # the same chart again in one command: drawn once
    assert charts.drawn == 3
    charts.keep()  # nothing to keep, nothing raised


def test_the_cache_keeps_the_charts_used_first_and_stays_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chart_cache, "MAX_CHARTS", 5)
    cache = cache_in(tmp_path)
    charts = ChartCache(cache)
    for i in range(8):
        charts.svg(i, f"c{i}", lambda i=i: svg_of(f"c{i}"))  # type: ignore[misc]
    charts.keep()
    cache.write()
    kept = json.loads((tmp_path / ".tracker" / "cache" / f"{NAME}.json").read_text())["data"]
    assert len(kept) == 8  # the charts this command used are all kept, whatever the bound
    later = ChartCache(Cache(tmp_path))
    later.svg("new", "n", lambda: svg_of("n"))
    later.keep()
    assert len(later.memo.cache.read(NAME, later.memo.key)) == 5  # type: ignore[union-attr]


hostile = st.one_of(
    st.none(),
    st.integers(),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
    st.text(max_size=60),
    st.sampled_from(
        [
            svg_of("chart1", "<script>alert(1)</script>"),
            svg_of("chart1", '<a href="javascript:alert(1)">x</a>'),
            svg_of("chart1", "<foreignObject><div>x</div></foreignObject>"),
            svg_of("chart1").replace("<g>", '<g onload="alert(1)">'),
            svg_of("chart1").replace("<g>", "<g ONMOUSEOVER = 'x'>"),
            svg_of("other"),
            svg_of("chart1")[:-6],
            "<div>" + svg_of("chart1"),
        ]
    ),
)


@settings(max_examples=150, deadline=None)
@given(entry=hostile)
def test_a_tampered_entry_is_drawn_again_never_inlined(entry: object, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("cache")
    cache = cache_in(root)
    charts = ChartCache(cache)
    charts.svg("x", "chart1", lambda: svg_of("chart1"))
    entry_key = next(iter(charts.memo.used))
    path = root / ".tracker" / "cache" / f"{NAME}.json"
    path.write_text(json.dumps({"key": charts.memo.key, "data": {entry_key: entry}}))
    again = ChartCache(Cache(root))
    assert again.svg("x", "chart1", lambda: svg_of("chart1")) == svg_of("chart1")
    assert again.drawn == 1


def test_a_report_from_cached_charts_is_the_drawn_report(tmp_path: Path) -> None:
    from tracker.report import charts

    if not charts.available():
        pytest.skip("the charts need the [report] extra (matplotlib)")
    root = report_fixture.build(tmp_path / "repo")

    def html() -> bytes:
        out = tmp_path / "r.html"
        assert report.run(root, fmt="html", out_path=out, out=io.StringIO()) == 0
        return out.read_bytes()

    drawn = html()
    stored = root / ".tracker" / "cache" / f"{NAME}.json"
    assert stored.is_file() and json.loads(stored.read_text())["data"]
    before = stored.stat().st_mtime_ns, stored.read_bytes()
    assert html() == drawn  # from the cache
    assert (stored.stat().st_mtime_ns, stored.read_bytes()) == before  # nothing drawn: every entry passed the check
    doc = json.loads(stored.read_text())
    doc["data"] = {k: svg_of("chart1", "<script>x</script>") for k in doc["data"]}
    stored.write_text(json.dumps(doc))
    assert html() == drawn  # tampered: drawn again, the same bytes


# What the HTML parser makes of an entry, not what a substring search sees: each of these would run a script or load
# something from elsewhere once inlined (an event handler after ``/`` or a quote, an entity inside ``javascript:``,
# an external href, CSS that imports, an element after the SVG's end, CDATA that HTML reads as a bogus comment).
escapes = [
    svg_of("chart1", '<image href="https://example.com/pixel.png" width="1" height="1"/>'),
    svg_of("chart1", '<use href="https://example.com/s.svg#x"/>'),
    svg_of("chart1", '<use href="#chart2-m1"/><rect clip-path="url(#chart2-p1)"/>'),  # another chart's elements
    svg_of("chart1", '<animate/onbegin="alert(1)" attributeName="x" dur="1s"/>'),
    svg_of("chart1", '<g id="x"onmouseover="alert(1)"></g>'),
    svg_of("chart1", '<a href="javascript&#58;alert(1)"><text>x</text></a>'),
    svg_of("chart1", '<a><set attributeName="href" to="javascr&#105;pt:alert(1)"/><text>x</text></a>'),
    svg_of("chart1", "<style>@import url(https://example.com/x.css);</style>"),
    svg_of("chart1", '<rect style="fill: url(https://example.com/x.svg#p)"/>'),
    svg_of("chart1", '<rect style="fill: u\\72l(https://example.com/x.svg#p)"/>'),
    svg_of("chart1") + '<iframe src="https://example.com/"></iframe><svg></svg>',
    svg_of("chart1") + '<meta http-equiv="refresh" content="0;url=https://example.com/"><svg></svg>',
    svg_of("chart1", '<title><![CDATA[><img src="https://example.com/p.png">]]></title>'),
    svg_of("chart1", "<desc><svg><style>#chart1 * {fill: red}</style></svg></desc>"),  # HTML content in <desc>
    # No script, nothing loaded, but the page made to say what its data does not: an inline SVG's <style> applies
    # to the whole page, and a root that leaves its box lies over the digest.
    svg_of("chart1", "<style>#chart1 * {stroke: red} .badge.regressed {display: none}</style>"),
    svg_of("chart1", "<style>#chart1 ~ figcaption, body {color: white}</style>"),
    svg_of("chart1", "<style>#chart1 * {fill: red}} #digest-table td {font-size: 0}</style>"),
    svg_of("chart1").replace(ROOT_STYLE, "position: fixed; top: 0; left: 0; width: 100%; z-index: 9"),
]


@pytest.mark.parametrize("entry", escapes)
def test_an_entry_that_would_run_or_load_anything_is_drawn_again(entry: str, tmp_path: Path) -> None:
    cache = cache_in(tmp_path)
    charts = ChartCache(cache)
    charts.svg("x", "chart1", lambda: svg_of("chart1"))
    entry_key = next(iter(charts.memo.used))
    path = tmp_path / ".tracker" / "cache" / f"{NAME}.json"
    path.write_text(json.dumps({"key": charts.memo.key, "data": {entry_key: entry}}))
    again = ChartCache(Cache(tmp_path))
    assert again.svg("x", "chart1", lambda: svg_of("chart1")) == svg_of("chart1")
    assert again.drawn == 1


def test_a_drawn_chart_with_hostile_text_is_kept_not_drawn_every_time() -> None:
    from tracker.report import charts

    if not charts.available():
        pytest.skip("the charts need the [report] extra (matplotlib)")
    text = "@import url(https://x) \\ javascript: <script> onload=1 $x$ {{ 7*7 }} & ]]> <!-- ?>"
    chart = charts.Chart(
        title=text,
        x_label=text,
        y_label=text,
        series=(charts.Series(text, (1.0, 2.0), (3.0, 4.0)), charts.Series("b", (1.0, 2.0), (2.0, 5.0), (1,))),
        threshold=3.5,
        threshold_label=text,
        marked_label=text,
    )
    svg = charts.render_svg(chart, id_prefix="chart7")
    assert chart_cache._drawn_with(svg, "chart7")
    categorical = charts.Chart(text, "run", "v", (charts.Series(text, ("abc", text), (1.0, 2.0)),), x_categorical=True)
    assert chart_cache._drawn_with(charts.render_svg(categorical, id_prefix="c-2"), "c-2")
