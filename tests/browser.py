"""A real browser for the tests of HTML output: the system Chromium, driven headless by Playwright for Python.

The HTML report promises one self-contained file that a browser shows without errors. This module opens such a
file and says what happened, so that a test can assert it:

    def test_report(real_browser, tmp_path):
        page = real_browser.open_page(tmp_path / "report.html")
        page.assert_clean()                      # no console error, no uncaught exception, no request out
        assert all(e.visible for e in page.elements("svg"))
        page.screenshot(tmp_path / "report.png")

Every request the page makes goes through a route: the page file itself and ``data:`` URLs are served, anything
else (a script or font from the network, another local file, a fetch, a WebSocket) is refused and listed in
``blocked``; a page that needs any of it is not self-contained. Chromium also gets no name resolution
(``--host-resolver-rules``), so nothing leaves the machine even if a request slipped past the route.

Playwright drives the Chromium already installed (``chromium`` on PATH: Debian's package), never a downloaded
one (no ``playwright install``). The ``real_browser`` fixture skips, with the reason, where Chromium or Playwright
is missing; where the environment variable ``CI`` is set (not empty, ``0`` or ``false``) it fails instead: CI
must run the browser tests, never skip them. Use it with ``pytest_plugins = ["browser"]`` in a test module or a
conftest.py (tests/ is on sys.path: tests/conftest.py lives there).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

BROWSER_NAMES = ("chromium", "chromium-browser")
# --no-sandbox: Chromium's sandbox refuses to start as root (containers, CI); the page is our own file.
LAUNCH_ARGS = ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1280, "height": 900}
TIMEOUT_MS = 20_000

# One pass over the matched elements: what a reader would see of each. "why" is empty for a visible element,
# else the first reason it is not (an ancestor's display:none leaves it without a box, visibility and opacity
# are checked up the tree, a box entirely left of or above the page cannot be scrolled to).
_DESCRIBE = """
(els) => els.map((el) => {
  const r = el.getBoundingClientRect();
  const box = [r.x + window.scrollX, r.y + window.scrollY, r.width, r.height];
  let why = "";
  const style = getComputedStyle(el);
  if (el.getClientRects().length === 0) why = "no box (display:none here or on an ancestor)";
  else if (style.visibility !== "visible") why = "visibility:" + style.visibility;
  else if (r.width <= 0 || r.height <= 0) why = `zero size (${r.width}x${r.height})`;
  else if (box[0] + r.width <= 0 || box[1] + r.height <= 0) why = "outside the page (left of or above it)";
  else {
    for (let e = el; e; e = e.parentElement) {
      if (parseFloat(getComputedStyle(e).opacity) === 0) { why = "opacity:0" + (e === el ? "" : " on an ancestor"); break; }
    }
  }
  const text = (el.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 200);
  return {tag: el.tagName.toLowerCase(), text, box, why};
})
"""


# One pass over the page's layout, as a reader at this width sees it: its height, each chart's <text> whose box runs
# outside its <svg>'s (a clipped title, a legend off the edge), each table wider than its card (the <section> it is
# in; a table in a scrolling box is as wide as the box), each commit hash (code.hash) set on more than one line.
_LAYOUT = """
() => {
  const near = (a, b) => a <= b + 0.5;
  const inside = (r, s) => near(s.left, r.left) && near(r.right, s.right) && near(s.top, r.top) && near(r.bottom, s.bottom);
  const out = {height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
               charts: 0, text_outside: [], wide_tables: [], tall_hashes: []};
  for (const svg of document.querySelectorAll("figure svg")) {
    out.charts++;
    const s = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (r.width > 0 && !inside(r, s)) out.text_outside.push(`${svg.id}: ${t.textContent.slice(0, 80)}`);
    }
  }
  for (const t of document.querySelectorAll("table")) {
    const card = t.closest("section");
    const box = (t.closest(".scroll") || t).getBoundingClientRect();
    if (card && !near(box.right, card.getBoundingClientRect().right)) out.wide_tables.push(t.id || t.className || "table");
  }
  for (const c of document.querySelectorAll("code.hash")) {
    if (c.getClientRects().length > 1) out.tall_hashes.push(c.textContent);
  }
  return out;
}
"""


@dataclass(frozen=True)
class Layout:
    """What :meth:`PageResult.layout` measured: the page's height and width (px), the charts (``figure svg``), and
    what breaks the layout: chart texts outside their SVG (``id: text``), tables wider than their card, hashes
    (``code.hash``) wrapped onto a second line."""

    height: int
    width: int
    charts: int
    text_outside: list[str]
    wide_tables: list[str]
    tall_hashes: list[str]


class BrowserUnavailable(Exception):
    """No usable Chromium or Playwright here; the message says what is missing and how to install it."""


@dataclass(frozen=True)
class ConsoleMessage:
    """One message the page wrote to the console (``kind``: error, warning, log, ...) and where from."""

    kind: str
    text: str
    where: str


@dataclass(frozen=True)
class Element:
    """One element matched by a selector: its tag, text (first 200 characters, whitespace collapsed), its box
    in page coordinates ``(x, y, width, height)``, and ``hidden_because`` ("" when visible)."""

    selector: str
    index: int
    tag: str
    text: str
    box: tuple[float, float, float, float]
    hidden_because: str

    @property
    def visible(self) -> bool:
        """A non-zero box on the page, not display:none, visibility:hidden or opacity:0 (here or above)."""
        return not self.hidden_because


@dataclass
class PageResult:
    """A page opened in Chromium, still open: what happened while it loaded, and queries on it."""

    path: Path
    url: str
    page: Any = field(repr=False)
    console: list[ConsoleMessage] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)  # uncaught exceptions, with their messages
    requests: list[str] = field(default_factory=list)  # every request, the page file's own included
    blocked: list[str] = field(default_factory=list)  # requests refused: not the page file, not data:
    failed: list[tuple[str, str]] = field(default_factory=list)  # (URL, reason) for each request that failed

    @property
    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions, as text."""
        return [f"console error: {m.text} ({m.where})" for m in self.console if m.kind == "error"] + [
            f"uncaught: {e}" for e in self.page_errors
        ]

    def problems(self) -> list[str]:
        """Everything that makes the page fail a self-contained, error-free check; empty when clean."""
        refused = [f"request outside the file: {url}" for url in self.blocked]
        other_failures = [f"request failed: {url}: {why}" for url, why in self.failed if url not in self.blocked]
        return self.errors + refused + other_failures

    def assert_clean(self) -> None:
        """Fail (AssertionError) with every problem listed, if there is any."""
        problems = self.problems()
        assert not problems, f"{self.path}: " + "; ".join(problems)

    def elements(self, selector: str) -> list[Element]:
        """Every element that matches the CSS ``selector``, in document order, with its visibility."""
        described = self.page.eval_on_selector_all(selector, _DESCRIBE)
        return [
            Element(selector, i, d["tag"], d["text"], tuple(d["box"]), d["why"])  # type: ignore[arg-type]
            for i, d in enumerate(described)
        ]

    def layout(self) -> Layout:
        """The page's layout at its viewport's width (see :class:`Layout`)."""
        return Layout(**self.page.evaluate(_LAYOUT))

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        """A PNG of the page (the whole page, not only the viewport, unless ``full_page=False``) at ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=full_page, type="png", animations="disabled")
        return path

    def close(self) -> None:
        self.page.context.close()


class Browser:
    """One launched Chromium; :meth:`open_page` gives each page its own context (no shared state)."""

    def __init__(self) -> None:
        executable = chromium_path()
        if executable is None:
            raise BrowserUnavailable(
                f"no Chromium on PATH ({' or '.join(BROWSER_NAMES)}): install it (Debian: apt-get install chromium)"
            )
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as err:
            raise BrowserUnavailable(
                f"Playwright for Python is not importable ({err}): pip install playwright "
                "(it drives the system Chromium; no `playwright install` needed)"
            ) from None
        self._playwright = sync_playwright().start()
        try:
            self._browser = self._playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        except Exception as err:
            self._playwright.stop()
            raise BrowserUnavailable(f"{executable} did not start under Playwright: {err}") from None
        self.version = self._browser.version
        self._pages: list[PageResult] = []

    def open_page(self, html_path: Path, *, settle_ms: int = 50, width: int | None = None) -> PageResult:
        """Open ``html_path`` (a local file) and wait for its load event, its fonts and two animation frames
        (plus ``settle_ms``): errors thrown later than that are not waited for. ``width``: the viewport's width in
        px (default :data:`VIEWPORT`'s)."""
        path = Path(html_path).resolve()
        if not path.is_file():
            raise ValueError(f"{html_path}: not a file")
        url = path.as_uri()
        viewport = VIEWPORT if width is None else {**VIEWPORT, "width": width}
        context = self._browser.new_context(viewport=viewport, service_workers="block", java_script_enabled=True)
        context.set_default_timeout(TIMEOUT_MS)
        result = PageResult(path, url, context.new_page())
        self._pages.append(result)
        _watch(result)
        result.page.goto(url, wait_until="load")
        result.page.evaluate(
            "() => document.fonts.ready.then(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))))"
        )
        result.page.wait_for_timeout(settle_ms)
        return result

    def close(self) -> None:
        for page in self._pages:
            try:
                page.close()
            except Exception:  # already closed with its context
                pass
        self._browser.close()
        self._playwright.stop()


def _watch(result: PageResult) -> None:
    """Record console messages, uncaught exceptions and requests; route every request through the rule."""
    page = result.page

    def on_console(message: Any) -> None:
        loc = message.location or {}
        where = f"{loc.get('url', '')}:{loc.get('lineNumber', '')}" if loc.get("url") else ""
        result.console.append(ConsoleMessage(message.type, message.text, where))

    def route(handle: Any) -> None:
        url = handle.request.url
        if _allowed(url, result.url):
            handle.continue_()
        else:
            result.blocked.append(url)
            handle.abort("blockedbyclient")

    def route_socket(socket: Any) -> None:
        result.blocked.append(socket.url)
        socket.close()

    page.on("console", on_console)
    page.on("pageerror", lambda err: result.page_errors.append(f"{err.name}: {err.message}" if err.name else str(err)))
    page.on("request", lambda request: result.requests.append(request.url))
    page.on("requestfailed", lambda request: result.failed.append((request.url, str(request.failure))))
    page.route("**/*", route)
    if hasattr(page, "route_web_socket"):  # Playwright 1.48+: a WebSocket bypasses page.route
        page.route_web_socket("**/*", route_socket)


def _allowed(url: str, page_url: str) -> bool:
    return url.split("#")[0] == page_url or url.startswith("data:")


def chromium_path() -> str | None:
    """The system Chromium's executable, from PATH; None when there is none."""
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def in_ci() -> bool:
    """Is this a CI run (``CI`` set, and not empty, ``0``, ``false`` or ``no``)?"""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def real_browser() -> Iterator[Browser]:
    """A launched Chromium for the session. Skips with the reason where none is usable; fails under CI."""
    try:
        browser = Browser()
    except BrowserUnavailable as err:
        if in_ci():
            pytest.fail(f"browser tests cannot run: {err} (CI is set: CI must run them, not skip them)", pytrace=False)
        pytest.skip(f"browser tests need Chromium and Playwright: {err}")
    try:
        yield browser
    finally:
        browser.close()
