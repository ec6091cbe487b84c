"""tests/browser.py, the real-browser harness for the HTML report, on small hand-written pages.

It must pass a clean self-contained page, and catch what would make a report fail in a reader's browser: a
console error, an uncaught exception, anything loaded from outside the file, an element that is not visible.
Without Chromium or Playwright it skips, except under CI, where it fails.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from browser import Browser

# The fixture real_browser; imported by pytest (not here) so that its asserts are rewritten too.
pytest_plugins = ["browser"]

REPO = Path(__file__).resolve().parents[2]

CHART = """<svg xmlns="http://www.w3.org/2000/svg" id="c1" width="320" height="160" viewBox="0 0 320 160" role="img">
<title>decode latency</title><defs><clipPath id="c1-p"><rect x="40" y="10" width="270" height="120"/></clipPath></defs>
<g clip-path="url(#c1-p)"><path d="M 40 120 L 150 80 L 300 30" style="fill: none; stroke: #1f77b4; stroke-width: 2"/></g>
<path d="M 40 60 L 310 60" style="stroke: #555; stroke-dasharray: 4 2"/>
<text x="160" y="150" style="font-size: 10px; font-family: sans-serif; text-anchor: middle">context (tokens)</text></svg>"""

TABLE = """<table id="bench"><thead><tr><th>case</th><th>value</th><th>threshold</th></tr></thead>
<tbody><tr><td>91k</td><td>1.15</td><td>1.10</td></tr></tbody></table>"""


def page(tmp_path: Path, body: str, head: str = "", name: str = "page.html") -> Path:
    path = tmp_path / name
    path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title>{head}</head>"
                    f"<body>{body}</body></html>", encoding="utf-8")  # fmt: skip
    return path


def check_png(path: Path) -> tuple[int, int]:
    """Parse the file as PNG: signature, every chunk's CRC, IHDR first, IDAT inflates, IEND last. Its size."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        chunks.append(kind)
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks
    width, height = struct.unpack(">II", data[16:24])
    assert zlib.decompress(idat)  # the image data inflates
    return width, height


def test_a_self_contained_page_with_a_chart_and_a_table_passes(real_browser: Browser, tmp_path: Path) -> None:
    shown = real_browser.open_page(
        page(tmp_path, f"<h1>Report</h1>{CHART}{TABLE}<img alt='dot' src='data:image/gif;base64,R0lGODlhAQABAAAAACw='>")
    )
    shown.assert_clean()
    assert shown.problems() == [] and shown.blocked == [] and shown.errors == []
    assert shown.requests == [shown.url]  # the file itself and nothing else (data: URLs make no request)
    (chart,) = shown.elements("svg")
    assert chart.visible and chart.tag == "svg" and chart.box[2:] == (320, 160)
    (table,) = shown.elements("table#bench")
    assert table.visible and "1.15" in table.text
    assert [c.text for c in shown.elements("#bench td")] == ["91k", "1.15", "1.10"]
    assert shown.elements("svg text")[0].text == "context (tokens)"
    assert shown.elements(".nothing-like-this") == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<script>console.error('boom: chart missing')</script>", "console error: boom: chart missing"),
        ("<script>throw new Error('kaput')</script>", "uncaught: Error: kaput"),
        ("<script>setTimeout(() => { null.x }, 0)</script>", "uncaught: TypeError: Cannot read properties of null"),
        ("<script>requestAnimationFrame(() => console.error('late'))</script>", "console error: late"),
    ],
    ids=["console.error", "throw", "after-a-timeout", "next-frame"],
)
def test_a_page_with_an_error_is_caught(real_browser: Browser, tmp_path: Path, body: str, expected: str) -> None:
    shown = real_browser.open_page(page(tmp_path, f"<p>text</p>{body}"))
    assert any(e.startswith(expected) for e in shown.errors), shown.errors
    with pytest.raises(AssertionError, match=expected.split(":")[0]):
        shown.assert_clean()


EXTERNAL = {
    "script": ("", "<script src='https://cdn.example.com/lib.js'></script>", "https://cdn.example.com/lib.js"),
    "font": ("<style>@font-face { font-family: Web; src: url(https://fonts.example.com/web.woff2); }"
             " p { font-family: Web; }</style>", "<p>styled</p>", "https://fonts.example.com/web.woff2"),
    "stylesheet": ("<link rel='stylesheet' href='http://example.org/s.css'>", "<p>x</p>", "http://example.org/s.css"),
    "image-beside-the-file": ("", "<img src='chart.png' alt='c'>", "chart.png"),
    "svg-image-href": ("", "<svg width='10' height='10'><image href='https://example.org/i.png' width='10' height='10'/></svg>",
                       "https://example.org/i.png"),
    "fetch": ("", "<script>fetch('https://api.example.com/x').catch(() => {})</script>", "https://api.example.com/x"),
    "websocket": ("", "<script>try { new WebSocket('ws://example.org/ws') } catch (e) {}</script>", "ws://example.org/ws"),
    "iframe": ("", "<iframe src='https://example.org/'></iframe>", "https://example.org/"),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(EXTERNAL))
def test_a_page_that_loads_anything_from_outside_the_file_is_caught(
    real_browser: Browser, tmp_path: Path, kind: str
) -> None:
    head, body, url = EXTERNAL[kind]
    (tmp_path / "chart.png").write_bytes(b"not really")  # exists: still not part of the file
    shown = real_browser.open_page(page(tmp_path, body, head))
    assert any(b.endswith(url) for b in shown.blocked), (shown.blocked, shown.requests)
    assert any("request outside the file" in p and url in p for p in shown.problems())
    with pytest.raises(AssertionError, match="request outside the file"):
        shown.assert_clean()


HIDDEN = {
    "none": ("<div id='x-none' style='display:none'>x</div>", "no box"),
    "ancestor-none": ("<div style='display:none'><span id='x-ancestor-none'>x</span></div>", "no box"),
    "visibility": ("<div id='x-visibility' style='visibility:hidden'>x</div>", "visibility:hidden"),
    "ancestor-visibility": ("<div style='visibility:hidden'><svg id='x-ancestor-visibility' width='50' height='50'></svg></div>",
                            "visibility:hidden"),
    "zero-size": ("<svg id='x-zero-size' width='0' height='0'></svg>", "zero size"),
    "opacity": ("<div style='opacity:0'><table id='x-opacity'><tr><td>x</td></tr></table></div>", "opacity:0 on an ancestor"),
    "off-page": ("<div id='x-off-page' style='position:absolute; left:-5000px; top:10px; width:100px'>x</div>",
                 "outside the page"),
}  # fmt: skip


def test_a_hidden_element_is_reported_hidden_with_the_reason(real_browser: Browser, tmp_path: Path) -> None:
    """Every way of hiding an element, on one page; the visible paragraph beside them stays visible."""
    shown = real_browser.open_page(page(tmp_path, "<p id='shown'>visible</p>" + "".join(h for h, _ in HIDDEN.values())))
    for kind, (_, reason) in HIDDEN.items():
        (element,) = shown.elements(f"#x-{kind}")
        assert not element.visible and element.hidden_because.startswith(reason), (kind, element)
    assert shown.elements("#shown")[0].visible
    assert [e.visible for e in shown.elements("[id^=x-]")] == [False] * len(HIDDEN)


def test_an_element_below_the_first_screen_is_visible(real_browser: Browser, tmp_path: Path) -> None:
    shown = real_browser.open_page(page(tmp_path, f"<div style='height:3000px'></div>{TABLE}"))
    (table,) = shown.elements("table")
    assert table.visible and table.box[1] > 3000  # page coordinates: the reader scrolls to it


def test_a_screenshot_is_a_valid_png_of_the_whole_page(real_browser: Browser, tmp_path: Path) -> None:
    shown = real_browser.open_page(page(tmp_path, f"{CHART}<div style='height:2000px'></div>{TABLE}"))
    png = shown.screenshot(tmp_path / "shots" / "page.png")
    width, height = check_png(png)
    assert width == 1280 and height > 2000  # the whole page, not only the 900-pixel viewport
    assert check_png(shown.screenshot(tmp_path / "top.png", full_page=False)) == (1280, 900)


def test_open_page_refuses_what_is_not_a_file(real_browser: Browser, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a file"):
        real_browser.open_page(tmp_path)
    with pytest.raises(ValueError, match="not a file"):
        real_browser.open_page(tmp_path / "missing.html")


# --- without a browser: skip here, fail under CI ------------------------------------------------------------


def run_clean_page_test(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run this file's clean-page test in a fresh pytest with ``env``; its outcome line in stdout."""
    target = f"{Path(__file__).relative_to(REPO)}::test_a_self_contained_page_with_a_chart_and_a_table_passes"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", target],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.fixture
def no_chromium_env(tmp_path: Path) -> dict[str, str]:
    """This environment with a PATH that holds no chromium (the test runs through sys.executable)."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**env, "PATH": str(empty)}


def test_without_chromium_the_browser_tests_skip_with_the_reason(
    tmp_path: Path, no_chromium_env: dict[str, str]
) -> None:
    run = run_clean_page_test(tmp_path, no_chromium_env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout
    assert "no Chromium on PATH (chromium or chromium-browser)" in run.stdout


def test_under_ci_a_missing_chromium_is_a_failure(tmp_path: Path, no_chromium_env: dict[str, str]) -> None:
    run = run_clean_page_test(tmp_path, {**no_chromium_env, "CI": "true"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 error" in run.stdout and "skipped" not in run.stdout
    assert "CI is set: CI must run them, not skip them" in run.stdout


def test_under_ci_a_missing_playwright_is_a_failure(tmp_path: Path) -> None:
    """A stand-in ``chromium`` first on PATH: the harness gets past its Chromium check (it never starts it) on a
    machine without one, where this test failed on the missing Chromium instead (issue 24)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "playwright.py").write_text("# not the package: `import playwright.sync_api` fails\n")
    (shadow / "chromium").write_text("#!/bin/sh\nexit 1\n")
    (shadow / "chromium").chmod(0o755)
    env = {
        **os.environ,
        "CI": "true",
        "PYTHONPATH": os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(shadow), os.environ.get("PATH", "")]),
    }
    run = run_clean_page_test(tmp_path, env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Playwright for Python is not importable" in run.stdout and "pip install playwright" in run.stdout


@pytest.mark.parametrize(("value", "expected"), [(None, False), ("", False), ("0", False), ("false", False),
                                                 ("no", False), ("true", True), ("1", True), ("yes", True)])  # fmt: skip
def test_in_ci_reads_the_ci_variable(monkeypatch: pytest.MonkeyPatch, value: str | None, expected: bool) -> None:
    from browser import in_ci

    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert in_ci() is expected


# --- the charts of tracker.report.charts, inlined as the report inlines them -----------------------------------------


def test_many_inlined_charts_show_in_a_browser_without_errors_or_requests(
    real_browser: Browser, tmp_path: Path
) -> None:
    """Three charts of tracker.report.charts on one page (hostile title included): each visible, nothing requested, no
    error, and their stylesheets scoped: a paragraph outside them keeps the page's stroke style."""
    from tracker.report import charts

    if not charts.available():
        pytest.skip("matplotlib (the `report` extra) not installed")
    from tests.tracker.report.test_charts import bench_chart, runs_chart

    svgs = [
        charts.render_svg(bench_chart(), id_prefix="gate-1"),
        charts.render_svg(bench_chart(title="<script>alert(1)</script> $x$ {{ 7*7 }}"), id_prefix="gate-2"),
        charts.render_svg(runs_chart(n=40, marked=(5, 30)), id_prefix="gate-3"),
    ]
    body = "".join(f"<section><h2>gate {i}</h2>{svg}</section>" for i, svg in enumerate(svgs)) + TABLE
    shown = real_browser.open_page(
        page(
            tmp_path, body + "<svg id='mine' width='20' height='20'><path id='p' d='M0 0 L20 20' stroke='black'/></svg>"
        )
    )
    shown.assert_clean()
    assert shown.requests == [shown.url]
    found = shown.elements("svg[role=img]")
    assert [e.visible for e in found] == [True, True, True], found
    assert all(e.box[2] > 300 and e.box[3] > 150 for e in found)
    assert "<script>alert(1)</script> $x$ {{ 7*7 }}" in [t.text for t in shown.elements("#gate-2 text")]
    assert (
        shown.page.evaluate("getComputedStyle(document.querySelector('#p')).strokeLinejoin") == "miter"
    )  # not matplotlib's round
    assert shown.elements("#gate-1 text")[0].visible
    check_png(shown.screenshot(tmp_path / "charts.png"))


# --- layout: what a reader at a given width sees (issue 26) ----------------------------------------------------------


def test_layout_finds_chart_text_outside_its_svg_wide_tables_and_wrapped_hashes(
    real_browser: Browser, tmp_path: Path
) -> None:
    """Each fault the report's browser test asserts away, on a page that has it, and the same page without it."""
    clipped = CHART.replace('x="160" y="150"', 'x="-30" y="150"').replace('id="c1"', 'id="c2"')
    wide = "<table id='wide'>" + "<tr>" + "<td>aaaaaaaaaaaaaaaaaaaaaaaa</td>" * 40 + "</tr></table>"
    hashes = "<table><tr><td style='width: 10px'><code class='hash'>3f2a91c 3f2a91c</code></td></tr></table>"
    style = "<style>section { width: 600px; } code.hash.ok { white-space: nowrap; }</style>"
    bad = page(tmp_path, f"<section><figure>{CHART}</figure><figure>{clipped}</figure>{wide}{hashes}</section>",
               style, "bad.html")  # fmt: skip
    found = real_browser.open_page(bad, width=1400).layout()
    assert found.charts == 2 and found.text_outside == ["c2: context (tokens)"]
    assert found.wide_tables == ["wide"] and found.tall_hashes == ["3f2a91c 3f2a91c"]
    good = page(tmp_path, f"<section><figure>{CHART}</figure><div class='scroll' style='overflow-x: auto'>{wide}</div>"
                f"{hashes.replace('hash', 'hash ok')}</section>", style, "good.html")  # fmt: skip
    fine = real_browser.open_page(good, width=1400).layout()
    assert (fine.charts, fine.text_outside, fine.wide_tables, fine.tall_hashes) == (1, [], [], [])
    assert fine.width == 1400 and fine.height > 0
