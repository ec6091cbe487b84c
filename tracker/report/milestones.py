"""Milestone reports in ``plans/reports/<milestone>.md`` and ``.html``: where each lives (:func:`report_path`),
the period the one there records (:func:`read_point`), the command that writes it (:func:`command_line`) and which
are not what ``tracker report`` renders now (:func:`reports_out_of_date`, what ``tracker check`` asks).

Which reports exist is what the folder holds, not a setting: a report file there is kept current, one the repository
does not want is deleted. ``tracker check`` fails (exit 1) on each report that is not what ``tracker report`` renders
now, naming the file and the command that regenerates it. Each records its period: a milestone report made without
``--since`` starts where the one in ``plans/reports/`` ended when newer evidence exists, and covers the same period
again when not, so rendering it twice on the same repository gives the same bytes.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tracker.errors import FileError, TrackerError, UsageError
from tracker.report.data import Period, Report, Scope
from tracker.report.period import NOTHING, Recorded, parse_point, parse_recorded
from tracker.report.report_text import FORMATS

REPORTS_DIR = Path("plans") / "reports"
_SLUG_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_CHARTS = re.compile(r"<!-- tracker:charts -->.*?<!-- /tracker:charts -->", re.DOTALL)


def slug(milestone: str) -> str:
    """A milestone's file name stem: the name itself when it is a plain file name, else a readable form and a
    short hash of the name (two milestones never share a file)."""
    if _SLUG_OK.fullmatch(milestone) and len(milestone) <= 80:
        return milestone
    import hashlib

    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", milestone).strip("-.")[:60] or "milestone"
    return f"{readable}-{hashlib.sha1(milestone.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def report_path(milestone: str, fmt: str) -> Path:
    """Where a milestone's report lives, relative to the repository root."""
    return REPORTS_DIR / f"{slug(milestone)}.{fmt}"


def read_point(root: Path, milestone: str) -> Period | None:
    """The period the milestone's report in ``plans/reports/`` records (its Markdown, else its HTML), or None."""
    from tracker.base.fileio import read_text

    for fmt in FORMATS:
        path = root / report_path(milestone, fmt)
        if not path.is_file():
            continue
        try:
            found = parse_point(read_text(path, root=root))
        except FileError:
            continue
        if found is not None and found[0].kind == "milestone" and found[0].name == milestone:
            return found[1]
    return None


def read_recorded(root: Path, milestone: str) -> Recorded:
    """The statuses the milestone's report in ``plans/reports/`` records beside its period (:func:`read_point`'s
    file), or none."""
    from tracker.base.fileio import read_text

    for fmt in FORMATS:
        path = root / report_path(milestone, fmt)
        if not path.is_file():
            continue
        try:
            text = read_text(path, root=root)
        except FileError:
            continue
        found = parse_point(text)
        if found is not None and found[0].kind == "milestone" and found[0].name == milestone:
            return parse_recorded(text)
    return NOTHING


def command_line(milestone: str, fmt: str) -> str:
    """The command that writes a milestone's report in ``plans/reports/``."""
    path = report_path(milestone, fmt).as_posix()
    return f"tracker report --milestone {shlex.quote(milestone)} --format {fmt} --out {shlex.quote(path)}"


def comparable(text: str) -> str:
    """A report's text with its charts area reduced to its markers: the charts depend on the matplotlib installed
    (and whether it is), the data they draw is in the tables and the recorded period."""
    return _CHARTS.sub("<!-- tracker:charts --><!-- /tracker:charts -->", text)


def reports_out_of_date(root: Path) -> list[str]:
    """``path: out of date (run: tracker report ...)`` for each milestone report in ``plans/reports/`` that is not
    what ``tracker report`` renders now (charts aside: :func:`comparable`); a report whose milestone no plan
    declares any more says so. Empty when every report is current or there is none. For ``tracker check``."""
    from tracker.base.cache import command_cache
    from tracker.base.fileio import read_text

    folder = root / REPORTS_DIR
    if not folder.is_dir():
        return []
    found: list[tuple[str, str, str, str]] = []  # (path, format, milestone, text)
    unreadable: list[tuple[str, str, str]] = []  # (path, format, file name stem): no report point that reads
    for path in sorted(folder.iterdir()):
        fmt = path.suffix.lstrip(".")
        if fmt not in FORMATS or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        try:
            text = read_text(path, root=root)
        except FileError as err:
            found.append((rel, fmt, "", f"\0{err}"))
            continue
        point = parse_point(text)
        if point is not None and point[0].kind == "milestone" and point[0].name is not None:
            found.append((rel, fmt, point[0].name, text))
        else:
            unreadable.append((rel, fmt, path.stem))
    from tracker.git.log import UnknownRef
    from tracker.report.assemble import assemble, open_view
    from tracker.report.report_text import render

    out: list[str] = []
    reports: dict[str, Report] = {}
    with command_cache(root) as cache:
        if unreadable:
            # A file named as a milestone's report whose first lines no longer say what it reports (edited by
            # hand): a problem. Other files in the folder (notes, images) are none of this rule's business.
            from tracker.plans.load import load_plans

            try:
                _, plans = load_plans(root, cache=cache)
            except TrackerError:
                plans = []  # check reports the invalid plan files itself
            stems = {slug(p.milestone): p.milestone for p in plans if p.milestone}
            for rel, fmt, stem in unreadable:
                if stem in stems:
                    milestone = stems[stem]
                    out.append(f"{rel}: not a report tracker can read (run: {command_line(milestone, fmt)})")
        for rel, fmt, milestone, text in found:
            if text.startswith("\0"):
                out.append(f"{rel}: cannot be read: {text[1:]}")
                continue
            if REPORTS_DIR.joinpath(Path(rel).name).as_posix() != report_path(milestone, fmt).as_posix():
                continue  # a report kept elsewhere under another name: not one this rule owns
            try:
                if milestone not in reports:
                    scope, previous = Scope("milestone", milestone), read_point(root, milestone)
                    prior = read_recorded(root, milestone)
                    reports[milestone] = assemble(root, open_view(root, cache), scope, previous=previous, prior=prior)
                now = render(root, reports[milestone], fmt, charts=False)
            except UnknownRef as err:  # a UsageError too: its record line names a commit this repository lacks
                out.append(f"{rel}: cannot be rendered: its record line's period starts at {err}")
                continue
            except UsageError:
                out.append(f"{rel}: milestone {milestone!r} is declared by no plan (delete the report)")
                continue
            except TrackerError as err:
                out.append(f"{rel}: cannot be rendered: {err}")
                continue
            if comparable(now) != comparable(text):
                out.append(f"{rel}: out of date (run: {command_line(milestone, fmt)})")
    return sorted(out)
