"""matplotlib's SVG document made one self-contained, compact element for an HTML page (:func:`inline`; the
charts' module, :mod:`tracker.report.charts`, says what a chart promises). Standard library only: it reads and
rewrites XML, it draws nothing.

- ids prefixed (``PREFIX-…``), every reference rewritten to match, and an id kept only where something refers to
  it (matplotlib names every group);
- the stylesheet scoped to the chart (``#PREFIX …``), each inline style one of its classes;
- the metadata dropped, coordinates rounded to a tenth of a point (0.13 px at 96 dpi), whitespace between elements
  and groups without attributes dropped (nothing inside a ``<text>`` is touched), a ``<title>`` first for screen
  readers and tooltips.
"""

from __future__ import annotations

import re
from typing import Any

_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_URL_REF = re.compile(r"url\(#([^)]*)\)")
_GEOMETRY = ("d", "x", "y", "transform", "width", "height", "viewBox")
_DECIMALS = re.compile(r"\d+\.\d{2,}")
_WHITESPACE = re.compile(r"\s+")

ROOT_STYLE = "max-width: 100%; height: auto"  # the root <svg>'s style: the chart stays in its box on the page


def inline(svg: str, prefix: str, title: str) -> str:
    """matplotlib's SVG document ``svg`` as one self-contained element for an HTML page (the module docstring), its
    root's id ``prefix``, ``title`` (as given: the caller cleans it) its ``<title>``. A reference to anything outside
    the document is a bug of the drawing: AssertionError."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg)
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    # The ids something refers to (a clip path, a marker's shape): matplotlib names every group, and the others
    # only weigh (a third of a report's bytes were ids and indentation).
    used = {m for el in root.iter() for v in el.attrib.values() for m in _URL_REF.findall(v)}
    used |= {v[1:] for el in root.iter() for k, v in el.attrib.items() if k in (_XLINK_HREF, "href") and v[:1] == "#"}
    in_text = {id(t) for el in root.iter() if el.tag == f"{{{_SVG_NS}}}text" for t in el.iter() if t is not el}
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == f"{{{_SVG_NS}}}metadata":
                parent.remove(child)
    for el in root.iter():
        el.tag = el.tag.removeprefix(f"{{{_SVG_NS}}}")  # serialized with a plain xmlns, not ns0: prefixes
        if el.get("id") and el.get("id") not in used:
            del el.attrib["id"]
        for name in _GEOMETRY:
            if name in el.attrib:  # a tenth of a point is finer than a pixel at 2x; six decimals only weigh
                el.set(name, _DECIMALS.sub(_tenth, _WHITESPACE.sub(" ", el.attrib[name])))
        _rewrite_refs(el, prefix, ids)
        if el.tag == "style" and el.text:
            el.text = _scope_css(el.text, prefix)
        if id(el) not in in_text:  # whitespace between elements means nothing outside a <text>
            if el.tag != "text":  # a <text>'s own content is text, whitespace too
                el.text = None if el.text is not None and not el.text.strip() else el.text
            el.tail = None if el.tail is not None and not el.tail.strip() else el.tail
    _flatten(root)
    _classes(root, prefix)
    root.set("xmlns", _SVG_NS)
    root.set("id", prefix)
    root.set("role", "img")
    root.set("style", ROOT_STYLE)
    label = ET.Element("title")
    label.text = title
    root.insert(0, label)
    return ET.tostring(root, encoding="unicode")


def _tenth(m: re.Match[str]) -> str:
    """A coordinate of two or more decimals rounded to one, its trailing zero dropped (``12.96`` -> ``13``)."""
    return f"{float(m.group()):.1f}".removesuffix(".0")


def _classes(root: Any, prefix: str) -> None:
    """Each distinct inline style (matplotlib writes one on every element, the same few hundreds of times) a class
    of the chart's stylesheet, scoped to it: ``#prefix .s3`` outranks the sheet's ``#prefix *`` as the inline
    style did."""
    import xml.etree.ElementTree as ET

    names: dict[str, str] = {}
    for el in root.iter():
        style = el.attrib.pop("style", None)
        if style is not None:
            el.set("class", " ".join(filter(None, (el.get("class"), names.setdefault(style, f"s{len(names)}")))))
    if not names:
        return
    sheet = next((el for el in root.iter() if el.tag == "style"), None)
    if sheet is None:  # matplotlib writes one; should a version not, the chart brings its own
        defs = ET.Element("defs")
        sheet = ET.SubElement(defs, "style")
        root.insert(0, defs)
    sheet.text = (sheet.text or "") + "".join(f"\n#{prefix} .{name} {{{style}}}" for style, name in names.items())


def _flatten(parent: Any) -> None:
    """A ``<g>`` without attributes (an id no one refers to, dropped) does nothing: its children take its place."""
    children = []
    for child in list(parent):
        _flatten(child)
        if child.tag == "g" and not child.attrib and not (child.text or "").strip():
            children.extend(child)
        else:
            children.append(child)
    parent[:] = children


def _rewrite_refs(el: Any, prefix: str, ids: set[str | None]) -> None:
    old_id = el.get("id")
    if old_id:
        el.set("id", f"{prefix}-{old_id}")
    href = el.attrib.pop(_XLINK_HREF, None) or el.get("href")
    if href is not None:  # SVG 2's plain href: no xlink namespace to declare on the page
        target = href[1:] if href.startswith("#") else None
        if target not in ids:
            raise AssertionError(f"matplotlib wrote a reference outside the chart: {href!r}")
        el.set("href", f"#{prefix}-{target}")

    def prefixed(match: re.Match[str]) -> str:
        return f"url(#{prefix}-{match.group(1)})" if match.group(1) in ids else match.group(0)

    for name, value in list(el.attrib.items()):
        if "url(#" in value:  # clip-path="url(#p...)", hatch fills
            el.set(name, _URL_REF.sub(prefixed, value))


def _scope_css(css: str, prefix: str) -> str:
    """Each selector of matplotlib's stylesheet (``*{stroke-linejoin: round; ...}``) confined to this chart:
    inline in HTML, an SVG <style> applies to the whole page."""

    def scoped(match: re.Match[str]) -> str:
        selectors = ", ".join(f"#{prefix} {sel.strip()}" for sel in match.group(2).split(","))
        return f"{match.group(1)}{selectors} {{"

    return re.sub(r"(^|\})\s*([^{}]+?)\s*\{", scoped, css)
