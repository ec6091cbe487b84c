"""Charts for the HTML report, as SVG text to inline into the page, drawn with matplotlib.

matplotlib is the optional extra ``report`` (``pip install '.[report]'`` in a checkout, or ``pip install
'matplotlib>=3.8'``; plan-tracker is not on the package index): nothing here imports it
at module import, :func:`available` only asks whether it could be imported, and :func:`render_svg` imports it
when a chart is drawn. Without it the report renders its tables and a one-line note instead of each chart.

The data comes first (:class:`Series`, :class:`Chart`, frozen, checked when built); the report builds them from
the evidence. Two kinds of chart cover what the report shows, both one :class:`Chart`:

- a metric against a parameter (context): numeric x, one series per shape or backend, each gate's threshold a
  :class:`Band` drawn only over the x values the gate covers (a short dash where it covers one value);
- a metric's value across runs: ``x_categorical=True``, the x values are labels (short commits) placed in the
  order of ``categories`` (else of first appearance), the thresholds drawn, the runs that regressed listed in
  ``Series.marked``.

What :func:`render_svg` promises, so that a page can inline many charts and stay self-contained:

- one ``<svg>`` element, no XML declaration or DOCTYPE, no reference outside itself (no fonts, no files, no
  URLs: text stays ``<text>``, ``svg.fonttype = "none"``), no date metadata;
- the same bytes for the same input and matplotlib version (a fixed ``svg.hashsalt``, matplotlib's defaults
  rather than the user's matplotlibrc), so golden files work;
- every element id starts with ``ID_PREFIX-`` (the root's id is ``ID_PREFIX``), and its one stylesheet applies
  only inside it: charts with different prefixes never collide on a page;
- compact: an id only where something refers to it, each inline style a class of that stylesheet, coordinates to
  a tenth of a point, no indentation, a chart of more than ``MAX_MARKERS`` points lines without dots (a
  report's charts weigh some 10 kB each, not the 19 kB each of the 1.9 MB its 105 did);
- text is data: titles and labels are drawn literally (no mathtext, no TeX), escaped for XML, and may hold
  anything (``$x$``, ``<script>``, ``{{ 7*7 }}``, control characters);
- every piece of text lies inside the ``<svg>`` box: the title wraps to two lines (cut with an ellipsis; the
  whole title is the ``<title>``), labels are cut, the legend sits below the plot, outside the data, and the
  figure is laid out by matplotlib's constrained layout and saved with a tight bounding box (its size follows
  from its text, measured by matplotlib with the font it names);
- numbers that cannot be drawn (NaN, infinities, magnitudes above 1e300, non-positive x on a log axis) are left
  out and counted in a note under the chart; a chart with nothing left to draw says "no data".

Drawing sets matplotlib's settings (process-wide) inside a ``rc_context`` and restores them: draw charts from one
thread at a time. A chart costs some 45-65 ms on a small VM; a caller drawing many may cache the SVG by the
:class:`Chart` (frozen, hashable) and matplotlib's version.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracker.errors import ExitCode, TrackerError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# matplotlib's autoscaling overflows on spans near the float limit (1e308 and -1e308 raise LinAlgError):
# a value beyond this magnitude is not drawn (a bench metric that large is a broken measurement anyway).
MAX_MAGNITUDE = 1e300
# Longer titles and labels are cut (with an ellipsis): a chart is not the place for a paragraph.
MAX_TEXT = 120
MAX_TICK_TEXT = 24
MAX_LABEL_TEXT = 64  # axis labels and legend entries
TITLE_WIDTH = 64  # characters a title line holds, at most TITLE_LINES lines
TITLE_LINES = 2
MAX_TITLE_TEXT = 2000  # the <title> (a tooltip) holds the whole title, up to this
# At most this many category labels on the x axis; with more runs every k-th is labelled.
MAX_TICK_LABELS = 20
# A chart of more points (all its series together) draws lines without a dot at each point (the marked points still
# get their cross; a point with no neighbour keeps its dot, see _shapes): a dot is some 77 bytes, so a chart's dots
# stay under 5 kB however many runs and cases it shows.
MAX_MARKERS = 60
SIZE_INCHES = (6.4, 3.2)  # the plot, its title and axes' text; the legend adds rows
LEGEND_ROW_INCHES = 0.19  # a legend row at 8 pt, with its spacing: the figure grows by as many as the legend has
# Threshold bands: a dark grey first, then colours no default series takes first; the dash tells them apart too.
_BAND_STYLES = (("0.2", "--"), ("#cf222e", ":"), ("#8250df", "-."), ("#9a6700", (0, (6, 2, 1, 2))), ("#0a6d8a", "--"))

_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# Characters XML 1.0 cannot hold (C0 controls but tab/newline/return, surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_WHITESPACE = re.compile(r"\s+")

_RC = {
    "svg.fonttype": "none",  # text stays <text>: no glyph paths, no font loaded from anywhere
    "svg.hashsalt": "tracker-charts",  # matplotlib's ids (markers, clip paths) from a fixed salt: same bytes
    "svg.image_inline": True,
    "text.usetex": False,
    "text.parse_math": False,  # "$x$" is text, not mathtext: every Text made while drawing
    "axes.formatter.use_mathtext": False,
    "axes.unicode_minus": True,
    "figure.dpi": 72,
    # One family, not matplotlib's list of ten: every <text> repeats it (about 200 bytes each, 16% of a report).
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    # Sizes set once here, not per call: the title, the axes' labels, ticks, legend.
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.grid": True,
    "grid.linewidth": 0.4,
    "grid.color": "0.85",
    "lines.linewidth": 1.5,
    "lines.markersize": 4,
    # Sixteen colours, red left for the regressed marks and the bands (a string: matplotlib parses it, and cycler,
    # its own dependency, is not imported here).
    "axes.prop_cycle": "cycler('color', ['#1f77b4', '#ff7f0e', '#2ca02c', '#17becf', '#e377c2', '#8c564b', "
    "'#bcbd22', '#7f7f7f', '#aec7e8', '#ffbb78', '#98df8a', '#9edae5', '#f7b6d2', '#c49c94', '#dbdb8d', '#c7c7c7'])",
}
_NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


class ChartsUnavailable(TrackerError):
    """matplotlib (the ``report`` extra) is not importable: charts cannot be drawn. Exit 9 if it reaches the CLI."""

    exit_code = ExitCode.MISSING_DEPENDENCY


@dataclass(frozen=True)
class Series:
    """One line of points. ``xs`` are numbers, or labels (str) on a categorical chart; ``ys`` numbers of the same
    length; ``marked`` the indices of points to flag (runs that regressed), drawn on top as red crosses."""

    label: str
    xs: tuple[float | str, ...]
    ys: tuple[float, ...]
    marked: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        xs, ys, marked = tuple(self.xs), tuple(self.ys), tuple(self.marked)
        if len(xs) != len(ys):
            raise ValueError(f"series {self.label!r}: {len(xs)} x values but {len(ys)} y values")
        object.__setattr__(self, "label", _text_field("series label", self.label))
        object.__setattr__(
            self,
            "xs",
            tuple(x if isinstance(x, str) else _number(f"series {self.label!r}: x[{i}]", x) for i, x in enumerate(xs)),
        )
        object.__setattr__(self, "ys", tuple(_number(f"series {self.label!r}: y[{i}]", y) for i, y in enumerate(ys)))
        for i in marked:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(xs):
                points = f"0..{len(xs) - 1}" if xs else "it has none"
                raise ValueError(f"series {self.label!r}: marked index {i!r} is not a point of the series ({points})")
        object.__setattr__(self, "marked", tuple(sorted(set(marked))))


@dataclass(frozen=True)
class Band:
    """A threshold drawn over the x values a gate covers: ``xs`` empty is the whole x range; on a numeric axis a
    run of neighbouring x values of the chart (its series' points, in order) is one segment, a lone value a short
    dash, so no threshold is drawn where no gate applies. ``label`` is its legend entry, as given."""

    value: float
    label: str
    xs: tuple[float | str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", _text_field("band label", self.label))
        object.__setattr__(self, "value", _number(f"band {self.label!r}: value", self.value))
        xs = tuple(self.xs)
        object.__setattr__(
            self,
            "xs",
            tuple(x if isinstance(x, str) else _number(f"band {self.label!r}: x[{i}]", x) for i, x in enumerate(xs)),
        )


@dataclass(frozen=True)
class Chart:
    """One chart: what it shows and its thresholds: ``threshold`` (one dashed line across the chart, named
    ``threshold_label``) and ``bands`` (:class:`Band`, each over the cases its gates cover).

    ``lower_is_better`` says which side of ``threshold`` passes (written into its legend entry);
    ``x_categorical`` makes the x values labels placed left to right in the order of ``categories`` (labels no
    series holds are left out), then of first appearance (commits); ``x_log`` draws a numeric x on a log scale
    (contexts that double), ``y_log`` the y axis (ratios far apart). ``marked_label`` names the marked points in
    the legend; ``note`` is one more line under the chart (what the data left out).
    """

    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    threshold: float | None = None
    threshold_label: str = "threshold"
    lower_is_better: bool = False
    x_categorical: bool = False
    x_log: bool = False
    y_log: bool = False
    marked_label: str = "regressed"
    bands: tuple[Band, ...] = ()
    categories: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("title", "x_label", "y_label", "threshold_label", "marked_label", "note"):
            object.__setattr__(self, name, _text_field(name, getattr(self, name)))
        bands = tuple(self.bands)
        if any(not isinstance(b, Band) for b in bands):
            raise ValueError(f"chart {self.title!r}: bands must be Band")
        object.__setattr__(self, "bands", bands)
        categories = tuple(self.categories)
        if any(not isinstance(c, str) for c in categories):
            raise ValueError(f"chart {self.title!r}: categories must be labels (str)")
        object.__setattr__(self, "categories", categories)
        series = tuple(self.series)
        for s in series:
            if not isinstance(s, Series):
                raise ValueError(f"chart {self.title!r}: series must be Series, got {type(s).__name__}")
            kind = "categorical" if self.x_categorical else "numeric"
            if any(isinstance(x, str) != self.x_categorical for x in s.xs):
                raise ValueError(
                    f"chart {self.title!r}: series {s.label!r} has x values that are not all {kind}"
                    f" ({'labels' if self.x_categorical else 'numbers'})"
                )
        object.__setattr__(self, "series", series)
        if self.threshold is not None:
            object.__setattr__(self, "threshold", _number(f"chart {self.title!r}: threshold", self.threshold))
        if self.x_categorical and self.x_log:
            raise ValueError(f"chart {self.title!r}: a categorical x axis cannot be logarithmic")


def available() -> bool:
    """Can charts be drawn here? True when matplotlib is importable; it is not imported to find out."""
    import importlib.util

    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):  # blocked by an import hook, or a half-imported module
        return False


def render_svg(chart: Chart, *, id_prefix: str) -> str:
    """The chart as one ``<svg>`` element (see the module docstring for what it promises).

    ``id_prefix`` (a letter, then letters, digits, ``-`` or ``_``) must differ between the charts of one page.
    Raises :class:`ChartsUnavailable` without matplotlib, ValueError for a bad prefix.
    """
    if not isinstance(id_prefix, str) or not _PREFIX.fullmatch(id_prefix):
        raise ValueError(f"id_prefix {id_prefix!r}: a letter, then letters, digits, '-' or '_'")
    matplotlib = _import_matplotlib()
    import warnings

    with matplotlib.rc_context(), warnings.catch_warnings():
        matplotlib.rcdefaults()  # not the user's matplotlibrc: the same chart everywhere
        matplotlib.rcParams.update(_RC)
        warnings.simplefilter("ignore")  # "Glyph missing from font": the text stays text, the browser draws it
        figure = _figure(chart)
        from matplotlib.backends.backend_svg import FigureCanvasSVG

        FigureCanvasSVG(figure)
        out = io.StringIO()
        # A tight box: the canvas grows to take in every piece of text (a long label, the note under the legend).
        figure.savefig(out, format="svg", metadata=_NO_METADATA, bbox_inches="tight", pad_inches=0.08)
    from tracker.report.svg_inline import inline

    return inline(out.getvalue(), id_prefix, display_text(chart.title, MAX_TITLE_TEXT))


def display_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` as a chart shows it: characters XML cannot hold replaced by U+FFFD, whitespace runs (newlines
    too) one space, stripped, cut to ``limit`` characters with an ellipsis."""
    text = _WHITESPACE.sub(" ", _NOT_XML.sub("\ufffd", text)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def title_lines(title: str) -> list[str]:
    """The title as the chart draws it: :func:`display_text`, wrapped at spaces (a longer word broken) into lines
    of at most ``TITLE_WIDTH`` characters, at most ``TITLE_LINES`` of them, the last cut with an ellipsis."""
    import textwrap

    text = display_text(title, limit=MAX_TITLE_TEXT)
    lines = textwrap.wrap(text, TITLE_WIDTH, break_on_hyphens=False) if text else []
    if len(lines) > TITLE_LINES:
        lines = lines[:TITLE_LINES]
        last = lines[-1]
        lines[-1] = (last[: TITLE_WIDTH - 1] if len(last) >= TITLE_WIDTH else last) + "…"
    return lines


def _import_matplotlib() -> Any:
    try:
        import matplotlib
        import matplotlib.backends.backend_svg
        import matplotlib.figure
    except ImportError as err:
        raise ChartsUnavailable(
            f"charts need matplotlib, which is not importable in this Python ({err}); "
            "install it: pip install 'matplotlib>=3.8' (or pip install '/path/to/the/tracker/checkout[report]')"
        ) from None
    return matplotlib


def _text_field(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected text, got {type(value).__name__}")
    return value


def _number(what: str, value: object) -> float:
    """A number (int, float, numpy's) as float, NaN and infinities kept (drawing leaves them out); anything
    else, bool included, a ValueError naming ``what``."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} is not a number: {value!r}")
    try:
        return float(value)
    except OverflowError:  # an int beyond float range: too large to draw, like inf
        return -math.inf if value < 0 else math.inf


# --- drawing -----------------------------------------------------------------------------------------------


@dataclass
class _Points:
    """One series' drawable points, in drawing order, and how many were left out."""

    xs: list[float]
    ys: list[float]
    marked_xs: list[float]
    marked_ys: list[float]
    skipped: int


def _drawable(value: float) -> bool:
    return math.isfinite(value) and abs(value) <= MAX_MAGNITUDE


def _sort_key(x: float | str) -> float:
    return x if isinstance(x, float) and not math.isnan(x) else math.inf


def _categories(chart: Chart) -> list[str]:
    """The categorical x labels: those of ``categories`` some series holds, in that order, then the others in order
    of first appearance across the series."""
    held = dict.fromkeys(x for s in chart.series for x in s.xs if isinstance(x, str))
    return [c for c in dict.fromkeys(chart.categories) if c in held] + [c for c in held if c not in chart.categories]


def _points(series: Series, chart: Chart, positions: dict[str, int]) -> _Points:
    pts = _Points([], [], [], [], 0)
    order: Sequence[int] = range(len(series.xs))
    if not chart.x_categorical:  # a line through numeric x reads left to right (NaN anywhere: not drawn)
        order = sorted(order, key=lambda i: _sort_key(series.xs[i]))
    marked = set(series.marked)
    for i in order:
        raw_x, y = series.xs[i], series.ys[i]
        x = float(positions[raw_x]) if isinstance(raw_x, str) else raw_x
        if not (_drawable(x) and _drawable(y)) or (chart.x_log and x <= 0) or (chart.y_log and y <= 0):
            pts.skipped += 1
            continue
        pts.xs.append(x)
        pts.ys.append(y)
        if i in marked:
            pts.marked_xs.append(x)
            pts.marked_ys.append(y)
    return pts


def _figure(chart: Chart) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=SIZE_INCHES, layout="constrained")  # taller once the legend's rows are known
    ax = figure.add_subplot()
    categories = _categories(chart) if chart.x_categorical else []
    positions = {label: i for i, label in enumerate(categories)}
    points = [_points(s, chart, positions) for s in chart.series]
    legend: list[tuple[Any, str]] = []
    shapes, joined = _shapes(chart, points)
    drawn = _draw_series(ax, chart, points, shapes, legend)
    x_values = sorted({x for p in points for x in p.xs})
    undrawn = _draw_bands(ax, chart, x_values, legend)
    _axes_text(ax, chart, categories)
    if not drawn:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", fontsize=14, color="0.4")
        ax.set_xticks([])
        if len(undrawn) == len(_all_bands(chart)):  # a drawn threshold keeps its scale
            ax.set_yticks([])
    note = _note_lines(_note(chart, points, undrawn, joined))
    if legend or note:
        # Below the plot, never on the data; explicit handles and labels (matplotlib leaves out a label starting "_").
        # What was left out heads it, as its title: laid out with it, so inside the figure and on nothing else.
        labels = [label for _, label in legend]
        columns = _columns(labels) if labels else 1
        rows = math.ceil(len(labels) / columns) + len(note)
        figure.set_size_inches(SIZE_INCHES[0], SIZE_INCHES[1] + LEGEND_ROW_INCHES * rows)  # the plot keeps its height
        box = figure.legend(
            [h for h, _ in legend], labels, loc="outside lower center", ncols=columns, title="\n".join(note) or None
        )
        for text in [*box.get_texts(), box.get_title()]:
            text.set_parse_math(False)
        box.get_title().set_fontsize(7)
        box.get_title().set_color("0.3")
    return figure


def _note_lines(note: str) -> list[str]:
    """The note, wrapped to lines the figure's width holds (DejaVu Sans at 7 pt: some 95 characters)."""
    import textwrap

    return textwrap.wrap(note, 95, break_on_hyphens=False) if note else []


def _columns(labels: Sequence[str]) -> int:
    """Legend columns that fit the figure's width: a column is its handle and its longest label (DejaVu Sans at
    8 pt is under 0.07 inch a character on average)."""
    width = 0.5 + 0.07 * max(len(label) for label in labels)
    return max(1, min(len(labels), int((SIZE_INCHES[0] - 0.2) // width)))


def _all_bands(chart: Chart) -> list[tuple[str, Band]]:
    """The chart's bands, each with how a note names it; its ``threshold`` first (one across the chart, its legend
    entry naming the passing side)."""
    bands = [(display_text(b.label, 40), b) for b in chart.bands]
    if chart.threshold is not None:
        side = "lower is better" if chart.lower_is_better else "higher is better"
        label = display_text(f"{chart.threshold_label} {chart.threshold:g} ({side})", MAX_LABEL_TEXT)
        bands.insert(0, (f"threshold {chart.threshold:g}", Band(chart.threshold, label)))
    return bands


def _draw_bands(ax: Axes, chart: Chart, x_values: list[float], legend: list[tuple[Any, str]]) -> list[tuple[str, Band]]:
    """Each band over the x values it covers (module docstring); the bands that could not be drawn (a value not
    finite or beyond ±1e300, or no x value of the chart among those it covers)."""
    undrawn: list[tuple[str, Band]] = []
    for i, (name, band) in enumerate(_all_bands(chart)):
        color, dash = _BAND_STYLES[i % len(_BAND_STYLES)]
        style: dict[str, Any] = {"color": color, "linestyle": dash, "linewidth": 1.4}
        if not _drawable(band.value) or (chart.y_log and band.value <= 0):
            undrawn.append((name, band))
            continue
        if not band.xs or chart.x_categorical:
            handle = ax.axhline(band.value, **style)
        else:
            segments = _segments(band, x_values, chart.x_log)
            if not segments:
                undrawn.append((name, band))
                continue
            for lo, hi in segments:
                if lo == hi:  # one value: a dash across the point, not a line across the chart
                    (handle,) = ax.plot([lo], [band.value], marker="_", markersize=18, markeredgewidth=2.2, color=color)
                else:
                    (handle,) = ax.plot([lo, hi], [band.value, band.value], **style)
        legend.append((handle, display_text(band.label, MAX_LABEL_TEXT)))
    return undrawn


def _segments(band: Band, x_values: list[float], x_log: bool) -> list[tuple[float, float]]:
    """The runs of neighbouring chart x values that ``band`` covers, as (first, last)."""
    covered = {x for x in band.xs if isinstance(x, float) and _drawable(x) and (x > 0 or not x_log)}
    out: list[tuple[float, float]] = []
    previous_in = False
    for x in x_values:
        if x in covered:
            if previous_in:
                out[-1] = (out[-1][0], x)
            else:
                out.append((x, x))
        previous_in = x in covered
    return out


def _note(chart: Chart, points: Sequence[_Points], undrawn: Sequence[tuple[str, Band]], joined: bool) -> str:
    """The line under the chart that says what was left out, or ""."""
    notes = [chart.note] if chart.note else []
    if joined:
        notes.append("lines join across the runs that did not measure a case")
    for name, band in undrawn:
        why = (
            "not finite or beyond ±1e300"
            if not _drawable(band.value)
            else "≤ 0 on the log axis"
            if band.value <= 0 and chart.y_log
            else "none of its cases has a point"
        )
        notes.append(f"{name} not drawn ({why})")
    skipped = sum(p.skipped for p in points)
    if skipped:
        why = "not finite or beyond ±1e300" + (", or x ≤ 0 on the log axis" if chart.x_log else "")
        why += ", or y ≤ 0 on the log axis" if chart.y_log else ""
        notes.append(f"{skipped} point{'s' if skipped != 1 else ''} not drawn ({why})")
    return display_text("; ".join(notes), limit=200)


def _broken(pts: _Points, categorical: bool) -> tuple[list[float], list[float], list[int]]:
    """The series' points with a NaN (no line) wherever a categorical axis skips a category between two of them (a
    run that did not measure the case: no line pretends it did), and the indices, in those lists, of the points left
    with no neighbour (a series of one point, or one between two gaps)."""
    xs: list[float] = []
    ys: list[float] = []
    for k, (x, y) in enumerate(zip(pts.xs, pts.ys, strict=True)):
        if k and categorical and abs(x - pts.xs[k - 1]) != 1:
            xs.append(math.nan)
            ys.append(math.nan)
        xs.append(x)
        ys.append(y)
    lone = [
        i
        for i in range(len(xs))
        if not math.isnan(xs[i]) and (i == 0 or math.isnan(xs[i - 1])) and (i == len(xs) - 1 or math.isnan(xs[i + 1]))
    ]
    return xs, ys, lone


def _dotted(points: Sequence[_Points]) -> bool:
    """Whether every point of the chart gets its dot: at most MAX_MARKERS points in all."""
    return sum(len(p.xs) for p in points) <= MAX_MARKERS


def _shapes(chart: Chart, points: Sequence[_Points]) -> tuple[list[tuple[list[float], list[float], list[int]]], bool]:
    """Each series' line (:func:`_broken`) and whether the lines join across gaps instead: when the chart has more
    than MAX_MARKERS points and breaking its lines would leave more than MAX_MARKERS lone points to dot (a series
    of one point still gets its dot)."""
    shapes = [_broken(pts, chart.x_categorical) for pts in points]
    if _dotted(points) or sum(len(lone) for _, _, lone in shapes) <= MAX_MARKERS:
        return shapes, False
    return [_broken(pts, False) for pts in points], True


def _draw_series(
    ax: Axes,
    chart: Chart,
    points: Sequence[_Points],
    shapes: Sequence[tuple[list[float], list[float], list[int]]],
    legend: list[tuple[Any, str]],
) -> bool:
    """Draw each series (its line in ``shapes``, :func:`_shapes`) and its marked points; True when any point was
    drawn."""
    drawn = False
    marked_shown = False
    dots = _dotted(points)
    for s, pts, (xs, ys, lone) in zip(chart.series, points, shapes, strict=True):
        if not pts.xs:
            continue
        drawn = True
        if dots:
            (line,) = ax.plot(xs, ys, marker="o")
        else:  # a point with no neighbour to draw a line to still shows, as a dot
            (line,) = ax.plot(xs, ys, marker="o" if lone else "", markevery=lone or None)
        legend.append((line, display_text(s.label, MAX_LABEL_TEXT) or "(unnamed)"))
        if pts.marked_xs:
            (marks,) = ax.plot(
                pts.marked_xs, pts.marked_ys, linestyle="none", marker="X", markersize=9, color="tab:red", zorder=3
            )
            if not marked_shown:
                legend.append((marks, display_text(chart.marked_label, MAX_LABEL_TEXT)))
                marked_shown = True
    return drawn


def _axes_text(ax: Axes, chart: Chart, categories: list[str]) -> None:
    ax.set_title("\n".join(title_lines(chart.title)), parse_math=False)
    ax.set_xlabel(display_text(chart.x_label, MAX_LABEL_TEXT), parse_math=False)
    ax.set_ylabel(display_text(chart.y_label, MAX_LABEL_TEXT), parse_math=False)
    for on, axis, scale in ((chart.x_log, ax.xaxis, ax.set_xscale), (chart.y_log, ax.yaxis, ax.set_yscale)):
        if on:
            from matplotlib.ticker import FuncFormatter, NullFormatter

            scale("log")
            # matplotlib's log labels are mathtext ("$10^{3}$"), which is off: plain numbers instead
            axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())
    if chart.x_categorical and categories:
        step = max(1, math.ceil(len(categories) / MAX_TICK_LABELS))
        shown = range(0, len(categories), step)
        ax.set_xticks(list(shown), [display_text(categories[i], MAX_TICK_TEXT) for i in shown], rotation=45, ha="right")
        ax.set_xlim(-0.5, len(categories) - 0.5)
