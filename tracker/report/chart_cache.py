"""Charts drawn once: the SVG of each chart a report drew, kept in the command's cache (``report-charts``) under the
chart's data, so that the next report with the same chart inlines the same bytes without matplotlib drawing it again
(a chart costs ~50 ms; a milestone report has up to two dozen).

The cache's key is the tracker's code identity and matplotlib's (a new drawing code or matplotlib draws again); an
entry's key is the sha256 of the chart's data and its id prefix (:class:`tracker.report.charts.Chart` is frozen data:
its ``repr`` is the data). An entry that is not an inert SVG of that prefix is drawn again: one well-formed element,
of the SVG elements matplotlib draws only, with no comment, CDATA, event handler, reference outside itself (``href``
or ``url()`` other than ``#PREFIX-...``), CSS escape or at-rule, stylesheet selector outside ``#PREFIX``, or root
style other than render_svg's (what a tampered entry would need to run a script, load anything into the page or
restyle the page around it). The entries used by this command come first, then earlier ones, at most
:data:`MAX_CHARTS` (the reports of several milestones share it).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracker.base.cache import BoundedMemo, cache_key, code_identity, library_key
from tracker.base.hashing import sha256_hex
from tracker.report.svg_inline import ROOT_STYLE

if TYPE_CHECKING:
    from tracker.base.cache import Cache

NAME = "report-charts"
_SVG = "{http://www.w3.org/2000/svg}"
# The elements an inline chart may hold: what render_svg writes, and their inert kin (no a, image, foreignObject,
# script, set, animate...: anything that links, loads or runs).
_DRAWN = ("svg", "title", "desc", "defs", "style", "g", "path", "use", "clipPath", "rect", "text", "tspan")
_SHAPES = ("circle", "ellipse", "line", "polyline", "polygon", "linearGradient", "radialGradient", "stop", "pattern")
_ELEMENTS = frozenset((*_DRAWN, *_SHAPES, "mask", "marker", "symbol"))
_ATTRIBUTE = re.compile(r"[A-Za-z][A-Za-z0-9-]*")  # no namespace (xlink:, xml:base), no odd name
_CALL = re.compile(r"([A-Za-z0-9_-]*)\s*\(\s*")  # a CSS or transform function, up to its argument
_CALLS = frozenset({"url", "rotate", "translate", "scale", "matrix", "skewx", "skewy", "rgb", "rgba"})
MAX_CHARTS = 400


class ChartCache:
    """SVG text by chart, read from ``cache`` (None: no cache, every chart drawn) and put back by :meth:`keep`."""

    def __init__(self, cache: Cache | None) -> None:
        key = cache_key(NAME, code_identity(), library_key("matplotlib")) if cache is not None else ""
        self.memo = BoundedMemo(cache, NAME, key, MAX_CHARTS)
        self.drawn = 0

    def svg(self, chart: object, id_prefix: str, draw: Callable[[], str]) -> str:
        """The SVG of ``chart`` with ``id_prefix``: the cached one, else ``draw()``'s."""
        entry = sha256_hex(repr((chart, id_prefix)).encode("utf-8", "surrogateescape"))
        hit: Any = self.memo.get(entry)
        if not (isinstance(hit, str) and _drawn_with(hit, id_prefix)):
            hit = draw()
            self.drawn += 1
            self.memo[entry] = hit
        return str(hit)

    def keep(self) -> None:
        """Put the charts used, then earlier ones, into the command's cache (written when the command ends)."""
        self.memo.keep()


def _drawn_with(text: str, id_prefix: str) -> bool:
    """Is ``text`` one SVG element drawn with ``id_prefix`` and nothing active or external in it (what render_svg
    promises)? Judged on the parsed element (entities decoded as a browser decodes them), by what may be there."""
    if not (text.startswith("<svg ") and text.rstrip().endswith("</svg>")):
        return False
    if "<!" in text or "<?" in text or "xmlns:" in text:  # comments, CDATA (parsed apart in HTML), DTDs, prefixes
        return False
    try:
        root = ET.fromstring(text)
    except (ET.ParseError, ValueError):
        return False
    if root.tag != f"{_SVG}svg" or root.get("id") != id_prefix or root.get("style") != ROOT_STYLE:
        return False  # (a root styled otherwise could leave its box: position: fixed over the digest)
    for el in root.iter():
        if not (isinstance(el.tag, str) and el.tag.startswith(_SVG) and el.tag[len(_SVG) :] in _ELEMENTS):
            return False
        for name, value in el.attrib.items():
            if not _ATTRIBUTE.fullmatch(name) or name.lower().startswith("on"):
                return False
            if name == "href" and not value.startswith(f"#{id_prefix}-"):
                return False  # (another chart's element, or anything outside the page)
            if not _inert_css(value, id_prefix):
                return False
        if el.tag == f"{_SVG}style" and not _scoped_css("".join(el.itertext()), id_prefix):
            return False
        if el.tag in (f"{_SVG}title", f"{_SVG}desc") and len(el):
            return False  # HTML parses their content as HTML (integration points): text only
    return True


def _scoped_css(css: str, id_prefix: str) -> bool:
    """Is ``css`` inert rules whose every selector stays inside the chart (``#PREFIX`` and its descendants, as
    charts._scope_css writes them)? Inline, an SVG <style> applies to the whole page: ``body``, a sibling (``~``,
    ``+``) or the digest's badges restyled would make the page say what its data does not."""
    if not _inert_css(css, id_prefix):
        return False
    inside = re.compile(rf"#{re.escape(id_prefix)}(\s+(\*|[A-Za-z][\w-]*|[.#][A-Za-z_][\w-]*))*")
    rules = re.findall(r"([^{}]*)\{[^{}]*\}", css)
    if re.sub(r"[^{}]*\{[^{}]*\}", "", css).strip():
        return False  # text outside a rule, or a nested block
    return all(inside.fullmatch(sel.strip()) for rule in rules for sel in rule.split(","))


def _inert_css(value: str, id_prefix: str) -> bool:
    """No CSS escape, at-rule or function that could load or run anything: ``url(#PREFIX-...)`` (this chart's own
    clip paths) and transforms only."""
    if "\\" in value or "@" in value or "javascript" in value.lower():
        return False
    for m in _CALL.finditer(value):
        name = m.group(1).lower()
        if name not in _CALLS or (name == "url" and not value.startswith(f"#{id_prefix}-", m.end())):
            return False
    return True
