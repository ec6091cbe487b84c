"""A report rendered: the report's data (:mod:`tracker.report.data`) through the repository's (or the packaged)
``report.<fmt>.j2`` template, with the filters the templates use and its charts drawn where matplotlib is installed."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracker.report.data import Report
from tracker.report.families import ReportChart
from tracker.report.period import point_comment

if TYPE_CHECKING:
    from markupsafe import Markup

    from tracker.base.cache import Cache

FORMATS = ("md", "html")
MAX_SUBJECT = 72  # characters (git's own convention for a subject) of a commit's subject under a phase (subject_line)
MAX_PATHS_SHOWN = 3  # of the files a commit changed in a phase's paths, the rest counted
# Control characters other than tab, line feed, form feed and carriage return: dropped from a rendered report wherever
# they came from (plan text, a commit subject, a machine name), as |md drops them from Markdown cells; in HTML
# they are parse errors, in a terminal escape sequences.
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
# plan-tracker is not on the package index: name what installs (matplotlib itself, or the checkout's extra).
CHARTS_NOTE = (
    "Charts need matplotlib, which is not installed here: pip install 'matplotlib>=3.8' "
    "(or pip install '/path/to/the/tracker/checkout[report]')."
)


def render(root: Path, report: Report, fmt: str, *, charts: bool = True, cache: Cache | None = None) -> str:
    """``report`` through the repository's (or the packaged) ``report.<fmt>.j2``. ``charts``: draw the charts
    (HTML, when matplotlib is importable); else one line stands where they would be. ``cache``: the command's, where
    the charts' SVG is kept (:mod:`tracker.report.chart_cache`; None: every chart drawn)."""
    from markupsafe import Markup

    from tracker.core.bench_verdict import fmt_num, fmt_params
    from tracker.report import charts as charting
    from tracker.report import templating
    from tracker.report.chart_cache import ChartCache

    draw = charts and fmt == "html" and charting.available()
    drawn = ChartCache(cache if draw else None)

    def svg(chart: ReportChart) -> Markup:
        text = drawn.svg(chart.chart, chart.id, lambda: charting.render_svg(chart.chart, id_prefix=chart.id))
        return Markup(text)

    def num(x: float | None) -> str:
        return "—" if x is None else fmt_num(x)

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:+.1%}".replace("-", "−")

    def params(p: dict[str, Any] | None) -> str:
        return fmt_params(p) if p else "—"

    def short(commit: str | None) -> str:
        return (commit or "—")[:7]

    def counts(by_status: dict[str, int]) -> str:
        return ", ".join(f"{n} {s}" for s, n in by_status.items()) or "no phase"

    def some_paths(paths: Sequence[str]) -> str | Markup:
        """The first MAX_PATHS_SHOWN paths (:func:`path_text`), each a code span (Markdown, outside any table) or
        ``<code>`` (HTML), so that no file name can read as several ("src/a, b (+7 more)" is one file), then how
        many more."""
        from markupsafe import Markup

        from tracker.report.doc_tables import code_span

        more = f" (+{len(paths) - MAX_PATHS_SHOWN} more)" if len(paths) > MAX_PATHS_SHOWN else ""
        shown = [path_text(p) for p in paths[:MAX_PATHS_SHOWN]]
        if fmt == "html":
            return Markup(", ").join(Markup("<code>%s</code>") % p for p in shown) + more
        return ", ".join(code_span(p) for p in shown) + more

    filters: dict[str, Callable[..., Any]] = {
        "num": num,
        "pct": pct,
        "params": params,
        "short": short,
        "counts": counts,
        "svg": svg,
        "code_spans": _code_spans,
        "subject_line": subject_line,
        "some_paths": some_paths,
    }
    env = templating.environment(root, filters)
    text = templating.render(
        env,
        f"report.{fmt}.j2",
        root,
        report=report,
        point=Markup(point_comment(report)),
        charts_drawn=draw,
        charts_note=CHARTS_NOTE if charts and not charting.available() else "Charts not drawn.",
    )
    drawn.keep()
    return _CONTROL.sub("", text)


NO_SUBJECT = "(no subject)"
MAX_PATH = 100  # characters of a file name shown; a longer one keeps its start and its end, "…" between


def subject_line(subject: str, limit: int = MAX_SUBJECT, empty: str = NO_SUBJECT) -> str:
    """A commit's subject (or its author's name) as a report lists it under each phase: at most ``limit``
    characters as they are shown, cut at a word with "…" (a long subject, repeated under every phase whose paths
    the commit touched, made most of a report's bytes; ``--json`` keeps it whole).

    Measured as shown (:func:`tracker.report.graphemes.shown`), so that nothing the reader cannot see pushes what
    they should see past the cut ("All gates pass" + 60 invisible characters + " NOT" read "All gates pass…"):
    the characters a report drops go first, an invisible cluster counts for nothing and is left out, a run of
    blanks counts as the one space it is shown as, and the cut falls between grapheme clusters, never inside one
    (an accent, an emoji sequence, a flag, a Hangul syllable, an Indic conjunct). A blank one reads ``empty``."""
    from tracker.report.graphemes import shown
    from tracker.report.md_filters import drop_controls

    clusters = shown(drop_controls(subject))
    if not clusters:
        return empty
    if len(clusters) <= limit:
        return "".join(clusters)
    cut = clusters[: limit - 1]
    space = max((i for i, c in enumerate(cut) if c == " "), default=-1)
    return "".join(cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def path_text(path: str) -> str:
    """A file name as a report lists it: what does not show as itself escaped (:func:`tracker.report.graphemes.
    escaped`), and a name longer than :data:`MAX_PATH` as its start, "…", and its end (where the file's own name is)."""
    from tracker.report.graphemes import escaped, path_units

    text = escaped(path).replace("…", "\\u2026")  # "…" shown only where a name is cut
    if len(text) <= MAX_PATH:
        return text
    # Cut between escapes and grapheme clusters, never inside one ("\\u20", half a flag, an accent without its letter).
    tokens = path_units(text)
    head: list[str] = []
    tail: list[str] = []
    for room, side, order in ((40, head, tokens), (MAX_PATH - 41, tail, tokens[::-1])):
        used = 0
        for token in order:
            if used + len(token) > room:
                break
            side.append(token)
            used += len(token)
    return "".join(head) + "…" + "".join(reversed(tail))


def _code_spans(text: object) -> Markup:
    """Text with its backtick code spans as ``<code>`` (HTML), every piece escaped. A span is a run of backticks, some
    text, and a run of exactly as many (CommonMark's rule); a run that closes nothing, or one that would enclose
    nothing (``````), stays as the backticks it is."""
    from markupsafe import Markup, escape

    from tracker.report.md_filters import CODE_SPAN

    source = str(text)
    out: list[Markup] = []
    done = 0
    for m in CODE_SPAN.finditer(source):
        out += [escape(source[done : m.start()]), Markup("<code>%s</code>") % m.group(2)]
        done = m.end()
    return Markup("").join([*out, escape(source[done:])])
