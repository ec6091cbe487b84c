"""Charts drawn once: the SVG of each chart a report drew, kept in the command's cache (``report-charts``) under the
chart's data, so that the next report with the same chart inlines the same bytes without matplotlib drawing it again
(a chart costs ~50 ms; a milestone report has up to two dozen).

The cache's key is the tracker's code identity and matplotlib's (a new drawing code or matplotlib draws again); an
entry's key is the sha256 of the chart's data and its id prefix (:class:`tracker.report.charts.Chart` is frozen data:
its ``repr`` is the data). An entry that is not an SVG of that prefix is drawn again. The entries used by this
command come first, then earlier ones, at most :data:`MAX_CHARTS` (the reports of several milestones share it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracker.base.cache import cache_key, code_identity, library_key
from tracker.base.hashing import sha256_hex

if TYPE_CHECKING:
    from tracker.base.cache import Cache

NAME = "report-charts"
_HANDLER = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)  # an event handler attribute (onload=...)
MAX_CHARTS = 400


class ChartCache:
    """SVG text by chart, read from ``cache`` (None: no cache, every chart drawn) and put back by :meth:`keep`."""

    def __init__(self, cache: Cache | None) -> None:
        self.cache = cache
        self.key = cache_key(NAME, code_identity(), library_key("matplotlib")) if cache is not None else ""
        found: Any = cache.read(NAME, self.key) if cache is not None else None
        self.old: dict[str, Any] = found if isinstance(found, dict) else {}
        self.used: dict[str, str] = {}
        self.drawn = 0

    def svg(self, chart: object, id_prefix: str, draw: Callable[[], str]) -> str:
        """The SVG of ``chart`` with ``id_prefix``: the cached one, else ``draw()``'s."""
        entry = sha256_hex(repr((chart, id_prefix)).encode("utf-8", "surrogateescape"))
        hit = self.used.get(entry) or self.old.get(entry)
        if not (isinstance(hit, str) and _drawn_with(hit, id_prefix)):
            hit = draw()
            self.drawn += 1
        self.used[entry] = hit
        return hit

    def keep(self) -> None:
        """Put the charts used, then earlier ones, into the command's cache (written when the command ends)."""
        if self.cache is None or not self.used or (self.drawn == 0 and self.used.keys() <= self.old.keys()):
            return
        kept = dict(self.used)
        for entry, text in self.old.items():
            if len(kept) >= MAX_CHARTS:
                break
            kept.setdefault(entry, text)
        self.cache.put(NAME, self.key, kept)


def _drawn_with(text: str, id_prefix: str) -> bool:
    """Is ``text`` one SVG element drawn with ``id_prefix`` and nothing active in it (what render_svg promises)?"""
    head = text[:400]
    lowered = text.lower()
    return (
        text.startswith("<svg ")
        and f'id="{id_prefix}"' in head
        and text.rstrip().endswith("</svg>")
        and "<script" not in lowered
        and "javascript:" not in lowered
        and "<foreignobject" not in lowered
        and _HANDLER.search(text) is None
    )
