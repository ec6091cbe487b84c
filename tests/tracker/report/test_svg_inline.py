"""tracker.report.svg_inline: matplotlib's SVG document as one compact, self-contained element (standard library only:
no matplotlib needed here; the charts it inlines are checked in test_charts.py and in a browser)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracker.report.svg_inline import inline

NS = "{http://www.w3.org/2000/svg}"
DOC = """<?xml version="1.0" encoding="utf-8" standalone="no"?>
<svg xmlns:xlink="http://www.w3.org/1999/xlink" width="466.319520pt" height="259.600307pt"
     viewBox="0 0 466.319520 259.600307" xmlns="http://www.w3.org/2000/svg" version="1.1">
 <metadata><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></metadata>
 <defs>
  <style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}</style>
 </defs>
 <g id="figure_1">
  <g id="axes_1">
   <g id="line2d_1">
    <defs>
     <path id="m1a2b" d="M 0 0  L 0 3.5  " style="stroke: #000000; stroke-width: 0.8"/>
    </defs>
    <g>
     <use xlink:href="#m1a2b" x="41.838187" y="200.729378" style="stroke: #000000; stroke-width: 0.8"/>
    </g>
   </g>
   <path d="M 35.940703 200.729378  L 460.559520 19.358438" clip-path="url(#p9f)" style="fill: none"/>
   <g id="text_1">
    <text style="font-size: 8px" x="3.14159" y="2.71828">  two  spaces  kept </text>
   </g>
  </g>
 </g>
 <defs><clipPath id="p9f"><rect x="35.940703" y="19.358438" width="424.61" height="181.37"/></clipPath></defs>
</svg>
"""


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_one_compact_element_ids_only_where_referred_to_styles_as_scoped_classes() -> None:
    out = inline(DOC, "chart3", "a <title> & more")
    assert out.startswith("<svg ") and "<?xml" not in out and "metadata" not in out and "xlink" not in out
    root = parse(out)
    assert root.attrib["id"] == "chart3" and root.attrib["role"] == "img"
    assert root.findtext(f"{NS}title") == "a <title> & more" and root[0].tag == f"{NS}title"
    ids = sorted(el.get("id") for el in root.iter() if el.get("id"))
    assert ids == ["chart3", "chart3-m1a2b", "chart3-p9f"]  # figure_1, axes_1, line2d_1, text_1: nothing refers to them
    (use,) = root.iter(f"{NS}use")
    assert use.attrib["href"] == "#chart3-m1a2b" and (use.get("x"), use.get("y")) == ("41.8", "200.7")
    (line,) = [p for p in root.iter(f"{NS}path") if p.get("clip-path")]
    assert line.attrib["clip-path"] == "url(#chart3-p9f)" and line.attrib["d"] == "M 35.9 200.7 L 460.6 19.4"
    assert [el for el in root.iter() if "style" in el.attrib] == [root]  # the root's own, set for the page
    sheet = root.find(f"{NS}defs/{NS}style")
    assert sheet is not None and sheet.text is not None
    assert sheet.text.splitlines() == [
        "#chart3 * {stroke-linejoin: round; stroke-linecap: butt}",
        "#chart3 .s0 {stroke: #000000; stroke-width: 0.8}",
        "#chart3 .s1 {fill: none}",
        "#chart3 .s2 {font-size: 8px}",
    ]
    assert use.attrib["class"] == "s0" and line.attrib["class"] == "s1"
    (text,) = root.iter(f"{NS}text")
    assert text.text == "  two  spaces  kept " and (text.get("x"), text.get("y")) == ("3.1", "2.7")
    assert not any(el.tag == f"{NS}g" and not el.attrib for el in root.iter())  # empty groups gone
    assert "\n" not in out.replace(sheet.text, "")  # no indentation between elements


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=8))
def test_coordinates_land_within_a_twentieth_of_a_point_and_no_longer_than_a_tenth(xs: list[float]) -> None:
    d = "M " + " L ".join(f"{x:.6f} 0" for x in xs)
    out = inline(DOC.replace('d="M 0 0  L 0 3.5  "', f'd="{d}"'), "c", "t")
    (marker,) = [p for p in parse(out).iter(f"{NS}path") if p.get("id") == "c-m1a2b"]
    got = [float(t) for t in marker.attrib["d"].split() if t not in ("M", "L")][::2]
    assert all(abs(g - x) <= 0.05 + 1e-6 for g, x in zip(got, xs, strict=True)), (xs, marker.attrib["d"])
    assert all(len(t.partition(".")[2]) <= 1 and not t.endswith(".0") for t in marker.attrib["d"].split())


def test_a_reference_outside_the_document_is_a_bug_of_the_drawing() -> None:
    with pytest.raises(AssertionError, match="outside the chart"):
        inline(DOC.replace('xlink:href="#m1a2b"', 'xlink:href="https://example.com/x.svg#m"'), "c", "t")


@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=60))
def test_what_a_text_element_holds_comes_out_as_it_went_in(content: str) -> None:
    from xml.sax.saxutils import escape

    doc = DOC.replace("  two  spaces  kept ", escape(content))
    (text,) = parse(inline(doc, "c", "t")).iter(f"{NS}text")
    assert (text.text or "") == content.replace("\r", "\n")
